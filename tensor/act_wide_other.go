//go:build !(amd64 || arm64) || noasm

package tensor

// bf16Act is the activation type of BF16 weights: BF16 for the pure-Go
// kernels.
var bf16Act = BF16
