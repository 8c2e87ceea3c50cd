//go:build amd64 && !noasm

package tensor

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestQ32VNNI checks the VNNI kernels of Q4_1, Q5_0, Q5_1 and IQ4_NL
// against the AVX2 ones on the same activations, bit for bit (all promise
// the Go reference's arithmetic), over row counts that leave lone rows, 1
// to 17 tokens, unaligned strides, guard bytes, and weights of arbitrary
// bytes.
func TestQ32VNNI(t *testing.T) {
	if !hasVNNI {
		t.Skip("no AVX-512 VNNI on this CPU")
	}
	r := rand.New(rand.NewPCG(55, 56))
	for _, c := range []struct {
		typ, act, vact Type
		dot, ref       VecDot
		avx2, v        gemv
		conv           func(dst, src []byte, nb int)
	}{
		{Q4_1, Q8_1, q8_1VNNI, dotQ4_1, dotQ4_1Generic, gemvQ4_1, gemvQ4_1V, q8_1VNNIFromQ8_1},
		{Q5_0, Q8_0, q8LanesVNNI, dotQ5_0, dotQ5_0Generic, gemvQ5_0, gemvQ5_0V, q8LanesVNNIFromQ8_0},
		{Q5_1, Q8_1, q8_1VNNI, dotQ5_1, dotQ5_1Generic, gemvQ5_1, gemvQ5_1V, q8_1VNNIFromQ8_1},
		{IQ4_NL, Q8_0, q8VNNI128, dotIQ4_NL, dotIQ4_NLGeneric, gemvIQ4_NL, gemvIQ4_NLV,
			func(dst, src []byte, nb int) { q8VNNIFromQ8_0(dst, src, nb, 7) }},
	} {
		bs, as, vs := c.typ.TypeSize(), c.act.TypeSize(), c.vact.TypeSize()
		for _, cols := range []int{32, 96, 544, 32 * 515} {
			for _, rows := range []int{1, 7, 8, 9, 17, 24} {
				for _, ntok := range []int{1, 2, 3, 4, 5, 8, 9, 17} {
					if cols > 1024 && (rows > 9 || ntok > 5) {
						continue // the wide case (an FFN of a 7B-class model) at small shapes only
					}
					name := fmt.Sprintf("%v cols=%d rows=%d ntok=%d", c.typ, cols, rows, ntok)
					nb := cols / qk
					wrb := nb * bs
					ws, xs, xvs, os := wrb+3, nb*as+1, nb*vs+5, rows+1
					w := make([]byte, (rows-1)*ws+wrb+64)
					for i := range w {
						w[i] = 0xff
					}
					for i := range rows {
						row := w[i*ws : i*ws+wrb]
						if (i+ntok)%3 == 0 { // arbitrary quant bytes, small scales
							for j := range row {
								row[j] = byte(r.Uint32())
							}
							for b := range nb {
								binary.LittleEndian.PutUint16(row[b*bs:], F32ToF16(1.0/64))
								if c.act == Q8_1 {
									binary.LittleEndian.PutUint16(row[b*bs+2:], F32ToF16(-0.25))
								}
							}
							continue
						}
						if err := QuantizeRow(row, c.typ, randFloats(r, cols, 0.05)); err != nil {
							t.Fatal(err)
						}
					}
					x := make([]byte, ntok*xs)
					xv := make([]byte, (ntok-1)*xvs+nb*vs+64)
					for i := range xv {
						xv[i] = 0xff
					}
					for i := range ntok {
						actQuants[c.act](x[i*xs:i*xs+nb*as], randFloats(r, cols, 1))
						c.conv(xv[i*xvs:], x[i*xs:], nb)
					}
					out := make([]float32, (ntok-1)*os+rows+1)
					out[len(out)-1] = 13
					c.v(w, ws, rows, xv, xvs, ntok, cols, out, os)
					if out[len(out)-1] != 13 {
						t.Fatalf("%s: wrote past its outputs", name)
					}
					avx2 := make([]float32, len(out))
					c.avx2(w, ws, rows, x, xs, ntok, cols, avx2, os)
					for ti := range ntok {
						for ri := range rows {
							wr, xr := w[ri*ws:ri*ws+wrb], x[ti*xs:ti*xs+nb*as]
							got, want := out[ti*os+ri], c.dot(wr, xr, cols)
							if math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("%s: out[%d,%d] = %g, AVX2 dot %g", name, ti, ri, got, want)
							}
							if g := avx2[ti*os+ri]; math.Float32bits(g) != math.Float32bits(want) {
								t.Fatalf("%s: AVX2 gemv out[%d,%d] = %g, AVX2 dot %g", name, ti, ri, g, want)
							}
							if ref := c.ref(wr, xr, cols); math.Float32bits(ref) != math.Float32bits(want) {
								t.Fatalf("%s: [%d,%d] AVX2 dot %g, reference %g", name, ti, ri, want, ref)
							}
						}
					}
				}
			}
		}
	}
}

// TestQ32VNNIQuantizers checks the q8_1VNNI and q8LanesVNNI converters
// against the Q8_1 and Q8_0 references followed by the layout conversions,
// byte for byte, with guard bytes after the row.
func TestQ32VNNIQuantizers(t *testing.T) {
	if !hasVNNI {
		t.Skip("no AVX-512 VNNI on this CPU")
	}
	r := rand.New(rand.NewPCG(57, 58))
	for trial := range 300 {
		nb := 1 + trial%9
		src := awkwardActs(r, nb, trial, trial%4)
		for _, c := range []struct {
			vact, act Type
			conv      func(dst, src []byte, nb int)
			ref       ActQuant
		}{
			{q8_1VNNI, Q8_1, q8_1VNNIFromQ8_1, quantizeQ8_1ActGeneric},
			{q8LanesVNNI, Q8_0, q8LanesVNNIFromQ8_0, quantizeQ8_0ActGeneric},
		} {
			vs := c.vact.TypeSize()
			q := make([]byte, nb*c.act.TypeSize())
			c.ref(q, src)
			want := make([]byte, nb*vs+7)
			got := make([]byte, nb*vs+7)
			for i := nb * vs; i < len(got); i++ {
				want[i], got[i] = 0xa5, 0xa5
			}
			c.conv(want, q, nb)
			actQuants[c.vact](got, src)
			if !bytes.Equal(got, want) {
				t.Fatalf("trial %d, %v: activations differ from the reference:\n got %v\nwant %v", trial, c.vact, got, want)
			}
		}
	}
}

// BenchmarkQ32Forms compares the AVX2 and (where the CPU has them) VNNI
// forms of the Q4_1, Q5_0, Q5_1 and IQ4_NL kernels on the 1536×512 matrix
// of BenchmarkMatMul at one thread, for the token counts of decoding and
// verification, in CPU time.
func BenchmarkQ32Forms(b *testing.B) {
	defer setVNNI(useVNNI)
	r := rand.New(rand.NewPCG(59, 60))
	p := NewPool(1)
	defer p.Close()
	for _, typ := range []Type{Q4_1, Q5_0, Q5_1, IQ4_NL} {
		m := randMatrix(b, r, typ, 1536, 512)
		for _, n := range []int{1, 2, 4, 5, 8} {
			benchVNNIForms(b, p, m, randFloats(r, n*512, 1), n)
		}
	}
}

// TestQ32FormsRegistered checks which activation type each form of the
// four types registers, after init and after setVNNI flips the form.
func TestQ32FormsRegistered(t *testing.T) {
	defer setVNNI(useVNNI)
	avx2 := map[Type]Type{Q4_1: Q8_1, Q5_0: Q8_0, Q5_1: Q8_1, IQ4_NL: Q8_0}
	vnni := map[Type]Type{Q4_1: q8_1VNNI, Q5_0: q8LanesVNNI, Q5_1: q8_1VNNI, IQ4_NL: q8VNNI128}
	for _, v := range []bool{useVNNI, false, true} {
		setVNNI(v)
		for typ, act := range avx2 {
			if useVNNI {
				act = vnni[typ]
			}
			if a, ok := ActType(typ); !ok || a != act || (hasAVX2FMA && gemvs[typ] == nil) {
				t.Errorf("useVNNI %v: %v takes %v (kernel %v, gemv %v), want %v", useVNNI, typ, a, ok, gemvs[typ] != nil, act)
			}
		}
	}
}
