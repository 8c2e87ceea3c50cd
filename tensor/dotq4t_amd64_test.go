//go:build amd64 && !noasm

package tensor

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ4_0TransposedKernel checks the AVX2 Q4_0 kernel on q8VNNI
// activations (gemvQ4_0T) against dotQ4_0Generic on the Q8_0 activations
// they were laid out from, bit for bit, over odd strides, row and token
// counts, with guard values after the outputs; and the AVX2 converter into
// that layout against quantizeQ8_0ActGeneric then q8VNNIFromQ8_0.
func TestQ4_0TransposedKernel(t *testing.T) {
	if !hasAVX2FMA {
		t.Skip("no AVX2 kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(71, 72))
	for _, cols := range []int{32, 96, 544} {
		nb := cols / qk
		for _, rows := range []int{1, 7, 8, 9, 17} {
			for _, ntok := range []int{1, 2, 3, 5, 8, 9} {
				name := fmt.Sprintf("cols=%d rows=%d ntok=%d", cols, rows, ntok)
				wrb := RowSize(Q4_0, cols)
				ws, xs, xvs, os := wrb+3, nb*q8_0Size+1, nb*q8VNNISize+5, rows+1
				w := make([]byte, (rows-1)*ws+wrb+64)
				for i := range w {
					w[i] = 0xff
				}
				for i := range rows {
					if err := QuantizeRow(w[i*ws:i*ws+wrb], Q4_0, randFloats(r, cols, 0.05)); err != nil {
						t.Fatal(err)
					}
				}
				x := make([]byte, (ntok-1)*xs+nb*q8_0Size)
				xv := make([]byte, (ntok-1)*xvs+nb*q8VNNISize+64)
				for i := range xv {
					xv[i] = 0xee
				}
				for i := range ntok {
					f := randFloats(r, cols, 1)
					quantizeQ8_0ActGeneric(x[i*xs:i*xs+nb*q8_0Size], f)
					want := make([]byte, nb*q8VNNISize)
					q8VNNIFromQ8_0(want, x[i*xs:], nb, 3)
					got := xv[i*xvs : i*xvs+nb*q8VNNISize]
					quantizeQ8VNNIActAVX2(got, f)
					if !bytes.Equal(got, want) {
						t.Fatalf("%s: quantizeQ8VNNIActAVX2 of token %d differs from q8VNNIFromQ8_0", name, i)
					}
				}
				out := make([]float32, (ntok-1)*os+rows+1)
				out[len(out)-1] = 13
				gemvQ4_0T(w, ws, rows, xv, xvs, ntok, cols, out, os)
				for ti := range ntok {
					for ri := range rows {
						want := dotQ4_0Generic(w[ri*ws:], x[ti*xs:], cols)
						if got := out[ti*os+ri]; math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("%s: out[%d,%d] = %g, dotQ4_0Generic %g", name, ti, ri, got, want)
						}
					}
				}
				if out[len(out)-1] != 13 {
					t.Fatalf("%s: wrote past the outputs", name)
				}
				if one := dotQ4_0T(w, xv, cols); math.Float32bits(one) != math.Float32bits(out[0]) {
					t.Fatalf("%s: dotQ4_0T %g, gemv %g", name, one, out[0])
				}
			}
		}
	}
}
