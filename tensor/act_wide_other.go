//go:build !amd64 || noasm

package tensor

// f16Act is the activation type of F16 weights: F16 for the pure-Go kernels.
var f16Act = F16
