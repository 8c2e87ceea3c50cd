package tensor

import (
	"math/rand/v2"
	"testing"
)

// TestMatMulWideNoAllocs checks that rows wider than the multi-token
// kernels' fixed tables (an FFN down projection of a 7B-class model,
// 18944 columns), and the K-quant multi-token kernels called through their
// table, make no allocation per MatMul once warm, for every token count a
// verification pass uses.
func TestMatMulWideNoAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const rows = 16
	p := NewPool(2)
	defer p.Close()
	for _, c := range []struct {
		typ  Type
		cols int
	}{{Q8_0, 18944}, {Q4_0, 18944}, {F16, 18944}, {Q4_K, 18944}, {Q4_K, 1536}, {Q6_K, 1536},
		{Q4_1, 18944}, {Q5_0, 18944}, {Q5_1, 18944}, {IQ4_NL, 18944},
		{Q2_K, 18944}, {Q3_K, 18944}, {Q5_K, 18944}, {IQ4_XS, 18944}} {
		typ, cols := c.typ, c.cols
		m := randMatrix(t, r, typ, rows, cols)
		x := randFloats(r, 9*cols, 1)
		out := make([]float32, 9*rows)
		for _, n := range []int{1, 2, 5, 9} {
			p.MatMul(out, m, x, n) // warm up the pool's scratch
			if a := testing.AllocsPerRun(10, func() { p.MatMul(out, m, x, n) }); a != 0 {
				t.Errorf("%v, %d columns, %d tokens: %v allocations per MatMul", typ, cols, n, a)
			}
		}
	}
}
