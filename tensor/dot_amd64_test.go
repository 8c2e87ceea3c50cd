//go:build amd64 && !noasm

package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchVNNIForms runs p.MatMul of m on the n tokens of x in
// the AVX2 and then (where the CPU has it) the VNNI form, one sub-benchmark
// TYPE/n=N/vnni=V each, reporting CPU time.
func benchVNNIForms(b *testing.B, p *Pool, m *Matrix, x []float32, n int) {
	out := make([]float32, n*m.Rows)
	for _, v := range []bool{false, true} {
		if v && !hasVNNI {
			continue
		}
		b.Run(fmt.Sprintf("%v/n=%d/vnni=%v", m.Type, n, v), func(b *testing.B) {
			setVNNI(v)
			b.SetBytes(int64(len(m.Data)))
			c0 := cpuNanos()
			for b.Loop() {
				p.MatMul(out, m, x, n)
			}
			reportCPU(b, c0, len(m.Data))
		})
	}
}

// BenchmarkVNNI compares the AVX-512 forms of the gemv kernels (useVNNI: the
// VNNI Q4_0 and Q8_0 kernels on their activation layout, eight tokens per
// pass for Q4_0, Q8_0, F32 and F16) with the AVX2 ones on the 1536×512
// matrix of BenchmarkMatMul, in CPU time.
func BenchmarkVNNI(b *testing.B) {
	if !hasVNNI {
		b.Skip("no AVX-512 VNNI on this CPU")
	}
	defer setVNNI(useVNNI)
	r := rand.New(rand.NewPCG(39, 40))
	for _, typ := range []Type{Q4_0, Q8_0, F32, F16} {
		m := randMatrix(b, r, typ, 1536, 512)
		p := NewPool(1)
		for _, n := range []int{1, 5} {
			benchVNNIForms(b, p, m, randFloats(r, n*512, 1), n)
		}
		p.Close()
	}
}
