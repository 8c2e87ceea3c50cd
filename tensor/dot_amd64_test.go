//go:build amd64 && !noasm

package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

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

// BenchmarkVNNI compares the AVX-512 forms of the gemv kernels (useVNNI: VNNI for Q4_0,
// eight tokens per pass for Q4_0, Q8_0, F32 and F16) with the AVX2 ones
// on the 1536×512 matrix of BenchmarkMatMul, in CPU time.
func BenchmarkVNNI(b *testing.B) {
	if !hasVNNI {
		b.Skip("no AVX-512 VNNI on this CPU")
	}
	defer func(v bool) { useVNNI = v }(useVNNI)
	r := rand.New(rand.NewPCG(39, 40))
	for _, typ := range []Type{Q4_0, Q8_0, F32, F16} {
		m := randMatrix(b, r, typ, 1536, 512)
		p := NewPool(1)
		for _, n := range []int{1, 5} {
			x := randFloats(r, n*512, 1)
			out := make([]float32, n*1536)
			for _, v := range []bool{false, true} {
				b.Run(fmt.Sprintf("%v/n=%d/vnni=%v", typ, n, v), func(b *testing.B) {
					useVNNI = v
					b.SetBytes(int64(len(m.Data)))
					c0 := cpuNanos()
					for b.Loop() {
						p.MatMul(out, m, x, n)
					}
					reportCPU(b, c0, len(m.Data))
				})
			}
		}
		p.Close()
	}
}
