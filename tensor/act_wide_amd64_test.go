//go:build amd64 && !noasm

package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFloatGemvAllTokenCounts checks the float multi-row kernels against
// the single dot bit for bit for every token count from 1 to 10 and small
// odd and even row counts, so that every split between the one-pass,
// four-token and single-token kernels is covered, with strides
// that leave gaps, guard values past the outputs, and both kernel forms
// where the CPU has the AVX-512 ones.
func TestFloatGemvAllTokenCounts(t *testing.T) {
	defer setVNNI(useVNNI)
	r := rand.New(rand.NewPCG(65, 66))
	for _, v := range []bool{false, true} {
		setVNNI(v)
		for _, typ := range []Type{F32, F16, BF16} {
			g := gemvs[typ]
			if g == nil {
				t.Skipf("%v: no multi-row kernel on this CPU", typ)
			}
			k, _ := kernelFor(typ)
			for _, cols := range []int{64, 100} {
				for _, rows := range []int{1, 2, 3, 4, 5, 8, 9} {
					for ntok := 1; ntok <= 10; ntok++ {
						wrb, xrb := RowSize(typ, cols), RowSize(k.act, cols)
						ws, xs, os := wrb+6, xrb+4, rows+3
						w := make([]byte, (rows-1)*ws+wrb)
						x := make([]byte, (ntok-1)*xs+xrb)
						for i := range rows {
							if err := QuantizeRow(w[i*ws:i*ws+wrb], typ, randFloats(r, cols, 0.05)); err != nil {
								t.Fatal(err)
							}
						}
						for i := range ntok {
							actQuants[k.act](x[i*xs:i*xs+xrb], randFloats(r, cols, 1))
						}
						out := make([]float32, (ntok-1)*os+rows+1)
						for i := range out {
							out[i] = 13
						}
						g(w, ws, rows, x, xs, ntok, cols, out, os)
						for ti := range ntok {
							for ri := range rows {
								want := k.dot(w[ri*ws:ri*ws+wrb], x[ti*xs:ti*xs+xrb], cols)
								if got := out[ti*os+ri]; math.Float32bits(got) != math.Float32bits(want) {
									t.Fatalf("%v vnni=%v cols=%d rows=%d ntok=%d: out[%d,%d] = %g, single dot %g",
										typ, useVNNI, cols, rows, ntok, ti, ri, got, want)
								}
							}
							for i := rows; i < os && ti*os+i < len(out); i++ {
								if out[ti*os+i] != 13 {
									t.Fatalf("%v rows=%d ntok=%d: wrote out[%d,%d] past the rows", typ, rows, ntok, ti, i)
								}
							}
						}
					}
				}
			}
		}
	}
}
