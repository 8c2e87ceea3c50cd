//go:build !(amd64 || arm64) || noasm

package tensor

// registerQ0Kernels registers the Q8_0 (in q8Order) and Q4_0 kernels,
// which without assembly take ggml's Q8_0 activations.
func registerQ0Kernels() {
	if q8Order == Q8_0Lanes {
		registerKernel(Q8_0, Q8_0, dotQ8_0Lanes)
	} else {
		registerKernel(Q8_0, Q8_0, dotQ8_0)
	}
	registerKernel(Q4_0, Q8_0, dotQ4_0)
}
