//go:build !amd64 || noasm

package tensor

// spinPause waits briefly in a spin loop (a no-op without assembly).
func spinPause(n int) {}
