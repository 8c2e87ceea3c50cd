//go:build !(amd64 || arm64) || noasm

package tensor

// Without assembly (other architectures, noasm builds) the Q2_K, Q3_K and
// IQ4_XS × Q8_K kernels registered with MatMul are the reference loops
// (dotQ2KR: Q2_K in the Q2KRepacked order), with no gemv (Q5_K:
// dot_k_generic.go).
func dotQ2K(w, x []byte, n int) float32   { return dotQ2KRef(w, x, n) }
func dotQ2KR(w, x []byte, n int) float32  { return dotQ2KRepackedRef(w, x, n) }
func dotQ3K(w, x []byte, n int) float32   { return dotQ3KRef(w, x, n) }
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
// for this machine: Q2KLanes, its order without AVX-512 (without assembly
// specd does not detect CPU features).
func LlamaCppQ2KOrder() Q2KOrder { return Q2KLanes }
