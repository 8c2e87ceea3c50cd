//go:build amd64 && !noasm

package tensor

// spinPause executes n (≥ 1) PAUSE instructions: the polite way to wait a
// few dozen nanoseconds in a spin loop.
func spinPause(n int)
