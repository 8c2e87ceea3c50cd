//go:build amd64 && !noasm

package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestIQ4_NLVNNI checks the VNNI IQ4_NL kernel against the AVX2 one on the
// same activations, bit for bit (both promise dotIQ4_NLGeneric's
// arithmetic), over row counts that leave lone rows, 1 to 17 tokens,
// unaligned strides, guard bytes, and weights of arbitrary bytes.
func TestIQ4_NLVNNI(t *testing.T) {
	if !hasVNNI {
		t.Skip("no AVX-512 VNNI on this CPU")
	}
	r := rand.New(rand.NewPCG(55, 56))
	for _, cols := range []int{32, 96, 544, 32 * 515} {
		for _, rows := range []int{1, 7, 8, 9, 17, 24} {
			for _, ntok := range []int{1, 2, 3, 4, 5, 8, 9, 17} {
				if cols > 1024 && (rows > 9 || ntok > 5) {
					continue
				}
				name := fmt.Sprintf("cols=%d rows=%d ntok=%d", cols, rows, ntok)
				nb := cols / qk
				wrb := nb * iq4nlSize
				ws, xs, xvs, os := wrb+3, nb*q8_0Size+1, nb*q8VNNISize+5, rows+1
				w := make([]byte, (rows-1)*ws+wrb+64)
				for i := range w {
					w[i] = 0xff
				}
				for i := range rows {
					row := w[i*ws : i*ws+wrb]
					if (i+ntok)%3 == 0 { // arbitrary quant bytes, scale 1/64
						for j := range row {
							row[j] = byte(r.Uint32())
						}
						for b := range nb {
							binary.LittleEndian.PutUint16(row[b*iq4nlSize:], F32ToF16(1.0/64))
						}
						continue
					}
					if err := QuantizeRow(row, IQ4_NL, randFloats(r, cols, 0.05)); err != nil {
						t.Fatal(err)
					}
				}
				x := make([]byte, ntok*xs)
				xv := make([]byte, (ntok-1)*xvs+nb*q8VNNISize+64)
				for i := range xv {
					xv[i] = 0xff
				}
				for i := range ntok {
					quantizeQ8_0Act(x[i*xs:], randFloats(r, cols, 1))
					q8VNNIFromQ8_0(xv[i*xvs:], x[i*xs:], nb, 7)
				}
				out := make([]float32, (ntok-1)*os+rows+1)
				out[len(out)-1] = 13
				gemvIQ4_NLV(w, ws, rows, xv, xvs, ntok, cols, out, os)
				if out[len(out)-1] != 13 {
					t.Fatalf("%s: wrote past its outputs", name)
				}
				avx2 := make([]float32, len(out))
				gemvIQ4_NLAsm(w, ws, rows, x, xs, ntok, cols, avx2, os)
				for ti := range ntok {
					for ri := range rows {
						wr, xr := w[ri*ws:ri*ws+wrb], x[ti*xs:ti*xs+nb*q8_0Size]
						got, want := out[ti*os+ri], dotIQ4_NL(wr, xr, cols)
						if math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("%s: out[%d,%d] = %g, AVX2 dot %g", name, ti, ri, got, want)
						}
						if g := avx2[ti*os+ri]; math.Float32bits(g) != math.Float32bits(want) {
							t.Fatalf("%s: AVX2 gemv out[%d,%d] = %g, AVX2 dot %g", name, ti, ri, g, want)
						}
						if ref := dotIQ4_NLGeneric(wr, xr, cols); math.Float32bits(ref) != math.Float32bits(want) {
							t.Fatalf("%s: [%d,%d] AVX2 dot %g, reference %g", name, ti, ri, want, ref)
						}
					}
				}
			}
		}
	}
}
