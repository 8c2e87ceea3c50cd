//go:build !(amd64 || arm64) || noasm

package tensor

// dotQ4K is the Q4_K × Q8_K kernel registered with MatMul; without
// assembly it is the reference loop.
func dotQ4K(w, x []byte, n int) float32 { return dotQ4KRef(w, x, n) }

// dotQ6K is the Q6_K × Q8_K kernel registered with MatMul; without
// assembly it is the reference loop.
func dotQ6K(w, x []byte, n int) float32 { return dotQ6KRef(w, x, n) }

// quantizeQ8K is the registered float32 → Q8_K converter; without assembly
// it is the reference loop.
func quantizeQ8K(dst []byte, src []float32) { quantizeRowQ8K(dst, src) }

// dotQ2K, dotQ3K, dotQ5K and dotIQ4XS are the Q2_K, Q3_K, Q5_K and IQ4_XS
// × Q8_K kernels registered with MatMul (dotQ2KR: Q2_K in the Q2KRepacked
// order); without assembly they are the reference loops.
func dotQ2K(w, x []byte, n int) float32   { return dotQ2KRef(w, x, n) }
func dotQ2KR(w, x []byte, n int) float32  { return dotQ2KRepackedRef(w, x, n) }
func dotQ3K(w, x []byte, n int) float32   { return dotQ3KRef(w, x, n) }
func dotQ5K(w, x []byte, n int) float32   { return dotQ5KRef(w, x, n) }
func dotIQ4XS(w, x []byte, n int) float32 { return dotIQ4XSRef(w, x, n) }

// registerQ2K registers the Q2_K kernel of q2Order.
func registerQ2K() {
	if q2Order == Q2KRepacked {
		registerKernel(Q2_K, Q8_K, dotQ2KR)
	} else {
		registerKernel(Q2_K, Q8_K, dotQ2K)
	}
}

// LlamaCppQ2KOrder returns the Q2_K order of a llama.cpp CPU backend built
// for this machine; without assembly specd does not detect CPU features and
// answers Q2KLanes, llama.cpp's order without AVX-512.
func LlamaCppQ2KOrder() Q2KOrder { return Q2KLanes }
