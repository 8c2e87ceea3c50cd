//go:build amd64 && !noasm

package tensor

// The Q2_K, Q3_K, Q5_K and IQ4_XS × Q8_K kernels registered with MatMul.

func dotQ2K(w, x []byte, n int) float32   { return dotQ2KRef(w, x, n) }
func dotQ3K(w, x []byte, n int) float32   { return dotQ3KRef(w, x, n) }
func dotQ5K(w, x []byte, n int) float32   { return dotQ5KRef(w, x, n) }
func dotIQ4XS(w, x []byte, n int) float32 { return dotIQ4XSRef(w, x, n) }
