//go:build amd64 && !noasm

package tensor

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// fromQ8_0Act converts nb ggml Q8_0 activation blocks at src into dst in
// activation type act's layout (Q8_0, q8VNNI or q8VNNI128).
func fromQ8_0Act(act Type, dst, src []byte, nb int) {
	switch act {
	case q8VNNI:
		q8VNNIFromQ8_0(dst, src, nb, 3)
	case q8VNNI128:
		q8VNNIFromQ8_0(dst, src, nb, 7)
	default:
		copy(dst[:nb*q8_0Size], src)
	}
}

// TestQ8VNNIQuantizer checks the q8VNNI conversion against the Q8_0
// reference quantizer followed by q8VNNIFromQ8_0, byte for byte, over
// scales from tiny to huge, zero blocks, exact ties and extreme quants,
// with guard bytes after the row.
func TestQ8VNNIQuantizer(t *testing.T) {
	if !hasVNNI {
		t.Skip("no AVX-512 VNNI on this CPU")
	}
	r := rand.New(rand.NewPCG(41, 42))
	for trial := range 300 {
		nb := 1 + trial%9
		src := awkwardActs(r, nb, trial, trial%5)
		if trial%5 == 4 { // every quant ±127 or -128-free extremes in one block
			for i := range 32 {
				src[i] = float32(1 - 2*(i/4%2))
			}
		}
		q8 := make([]byte, nb*q8_0Size)
		quantizeQ8_0ActGeneric(q8, src)
		want := make([]byte, nb*q8VNNISize+7)
		got := make([]byte, nb*q8VNNISize+7)
		for i := nb * q8VNNISize; i < len(got); i++ {
			want[i], got[i] = 0xa5, 0xa5
		}
		for _, c := range []struct {
			shift int
			quant ActQuant
		}{{3, quantizeQ8VNNIAct}, {7, quantizeQ8VNNI128Act}} {
			q8VNNIFromQ8_0(want, q8, nb, c.shift)
			c.quant(got, src)
			if !bytes.Equal(got, want) {
				t.Fatalf("trial %d, offset shift %d: q8VNNI activations differ from the reference:\n got %v\nwant %v", trial, c.shift, got, want)
			}
		}
	}
}

// TestQ0VNNIKernels checks the VNNI Q8_0 and Q4_0 kernels against the AVX2
// ones on the same activations (bit for bit: both promise llama.cpp's
// arithmetic) and against the pure-Go references, over row counts that
// leave lone Q4_0 rows, 1 to 17 tokens, unaligned strides, and guard bytes.
func TestQ0VNNIKernels(t *testing.T) {
	if !hasVNNI {
		t.Skip("no AVX-512 VNNI on this CPU")
	}
	r := rand.New(rand.NewPCG(43, 44))
	for _, c := range []struct {
		typ       Type
		shift     int
		avx2, ref func(w, x []byte, n int) float32
		v         gemv
	}{
		{Q8_0, 7, dotQ8_0, dotQ8_0Generic, gemvQ8_0V},
		{Q4_0, 3, dotQ4_0, dotQ4_0Generic, gemvQ4_0V},
	} {
		for _, cols := range []int{32, 96, 544, 32 * 515} {
			for _, rows := range []int{1, 7, 8, 9, 17, 24} {
				for _, ntok := range []int{1, 2, 3, 5, 8, 9, 17} {
					if cols > 1024 && (rows > 9 || ntok > 5) {
						continue // the wide case (an FFN of a 7B-class model) once
					}
					name := fmt.Sprintf("%v cols=%d rows=%d ntok=%d", c.typ, cols, rows, ntok)
					nb := cols / qk
					wrb := RowSize(c.typ, cols)
					ws, xs, xvs, os := wrb+3, nb*q8_0Size+1, nb*q8VNNISize+5, rows+1
					w := make([]byte, (rows-1)*ws+wrb+64)
					for i := range w {
						w[i] = 0xff
					}
					for i := range rows {
						if err := QuantizeRow(w[i*ws:i*ws+wrb], c.typ, randFloats(r, cols, 0.05)); err != nil {
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
						q8VNNIFromQ8_0(xv[i*xvs:], x[i*xs:], nb, c.shift)
					}
					out := make([]float32, (ntok-1)*os+rows+1)
					out[len(out)-1] = 13
					c.v(w, ws, rows, xv, xvs, ntok, cols, out, os)
					if out[len(out)-1] != 13 {
						t.Fatalf("%s: wrote past its outputs", name)
					}
					exact := 0
					for ti := range ntok {
						for ri := range rows {
							wr, xr := w[ri*ws:ri*ws+wrb], x[ti*xs:ti*xs+nb*q8_0Size]
							got := out[ti*os+ri]
							if want := c.avx2(wr, xr, cols); math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("%s: out[%d,%d] = %g, AVX2 kernel %g", name, ti, ri, got, want)
							}
							want := c.ref(wr, xr, cols)
							_, mag := exactDot(c.typ, Q8_0, wr, xr, cols)
							if d := math.Abs(float64(got) - float64(want)); !(d <= 1e-6*mag) {
								t.Fatalf("%s: out[%d,%d] = %g, reference %g", name, ti, ri, got, want)
							}
							if got == want {
								exact++
							}
						}
					}
					if exact < rows*ntok*19/20 {
						t.Errorf("%s: %d/%d bit-identical to the reference", name, exact, rows*ntok)
					}
				}
			}
		}
	}
}

// BenchmarkQ0Pass times one Q8_0 or Q4_0 MatMul per iteration at one
// thread for one and five tokens (speculative verification), with the
// weights streamed from memory (copies cycled through, 128 MiB in all):
// the output projection's shape (32000×512) and a layer's (1536×512).
func BenchmarkQ0Pass(b *testing.B) {
	r := rand.New(rand.NewPCG(75, 76))
	p := NewPool(1)
	defer p.Close()
	for _, typ := range []Type{Q8_0, Q4_0} {
		for _, shape := range [][2]int{{32000, 512}, {1536, 512}} {
			ms := streamCopies(randMatrix(b, r, typ, shape[0], shape[1]))
			for _, n := range []int{1, 5} {
				x := randFloats(r, n*shape[1], 1)
				out := make([]float32, n*shape[0])
				b.Run(fmt.Sprintf("%v/%dx%d/n=%d", typ, shape[0], shape[1], n), func(b *testing.B) {
					benchStream(b, p, ms, x, n, out)
				})
			}
		}
	}
}
