//go:build !amd64 || noasm

package tensor

// hasAVX2FMA is false where the assembly kernels are not built; the pure-Go
// kernels are used.
const hasAVX2FMA = false

// spinPause waits briefly in a spin loop (a no-op without assembly).
func spinPause(n int) {}
