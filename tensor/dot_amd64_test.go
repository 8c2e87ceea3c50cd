//go:build amd64 && !noasm

package tensor

import "testing"

// TestVNNIAndAVX2Forms runs the multi-row kernel checks and the MatMul
// invariance test with the VNNI kernels both on and off, so that both forms
// are tested on a machine that has VNNI (and agree with each other, since
// both must match the single dot and the reference bit for bit).
func TestVNNIAndAVX2Forms(t *testing.T) {
	if !hasVNNI {
		t.Skip("no AVX-512 VNNI on this CPU: only the AVX2 forms run")
	}
	defer func(v bool) { useVNNI = v }(useVNNI)
	for _, v := range []bool{false, true} {
		useVNNI = v
		checkGemvKernels(t)
		TestMatMulBatchInvariant(t)
		TestMatMulNoAllocs(t)
	}
}
