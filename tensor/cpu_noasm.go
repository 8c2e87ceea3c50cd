//go:build !amd64 || noasm

package tensor

// hasAVX2FMA is false where the assembly kernels are not built; the pure-Go
// kernels are used.
const hasAVX2FMA = false
