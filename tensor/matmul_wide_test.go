package tensor

import (
	"math/rand/v2"
	"testing"
)

// TestMatMulWideNoAllocs checks that rows wider than the multi-token
// kernels' fixed tables (an FFN down projection of a 7B-class model,
// 18944 columns) still make no allocation per MatMul once warm, for every
// token count a verification pass uses.
func TestMatMulWideNoAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const rows, cols = 16, 18944
	p := NewPool(2)
	defer p.Close()
	for _, typ := range []Type{Q8_0, Q4_0, F16} {
		m := randMatrix(t, r, typ, rows, cols)
		x := randFloats(r, 9*cols, 1)
		out := make([]float32, 9*rows)
		for _, n := range []int{1, 2, 5, 9} {
			p.MatMul(out, m, x, n) // warm up the pool's scratch
			if a := testing.AllocsPerRun(10, func() { p.MatMul(out, m, x, n) }); a != 0 {
				t.Errorf("%v, %d tokens: %v allocations per MatMul", typ, n, a)
			}
		}
	}
}
