//go:build amd64 && !noasm

package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestRepackQ4_0AVX2 checks the AVX2 kernels of interleaved Q4_0
// (gemvQ4_0x8T) against dotQ4_0Generic on the row-major rows and the Q8_0
// activations the q8VNNI ones were laid out from, bit for bit, over 1 to
// 17 tokens (passes of eight and of one), odd activation and output
// strides, with guard values after the outputs; on quantized floats and on
// extreme quants (nibbles 0 and 15 against -128 and 127, the int16 sums'
// bound).
func TestRepackQ4_0AVX2(t *testing.T) {
	if !hasAVX2FMA {
		t.Skip("no AVX2 kernels on this CPU or build")
	}
	r := rand.New(rand.NewPCG(81, 82))
	for _, extreme := range []bool{false, true} {
		for _, cols := range []int{32, 96, 544} {
			nb := cols / qk
			for _, rows := range []int{8, 16, 72} {
				for _, ntok := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 17} {
					name := fmt.Sprintf("extreme=%v cols=%d rows=%d ntok=%d", extreme, cols, rows, ntok)
					rb := RowSize(Q4_0, cols)
					w := make([]byte, rows*rb)
					xs, xvs, os := nb*q8_0Size, nb*q8VNNISize+5, rows+3
					x := make([]byte, ntok*xs)
					if extreme {
						q4Extreme(r, w, nb*rows)
						q8Extreme(r, x, nb*ntok)
					} else {
						for i := range rows {
							if err := QuantizeRow(w[i*rb:(i+1)*rb], Q4_0, randFloats(r, cols, 0.05)); err != nil {
								t.Fatal(err)
							}
						}
						for i := range ntok {
							quantizeQ8_0ActGeneric(x[i*xs:(i+1)*xs], randFloats(r, cols, 1))
						}
					}
					xv := make([]byte, (ntok-1)*xvs+nb*q8VNNISize)
					for i := range ntok {
						q8VNNIFromQ8_0(xv[i*xvs:], x[i*xs:], nb, 3)
					}
					p := make([]byte, len(w))
					interleave8(p, w, Q4_0, rows, cols, false)
					out := make([]float32, (ntok-1)*os+rows+1)
					for i := range out {
						out[i] = float32(math.NaN())
					}
					gemvQ4_0x8T(p, rb, rows, xv, xvs, ntok, cols, out, os)
					for ti := range ntok {
						for ri := range rows {
							want := dotQ4_0Generic(w[ri*rb:], x[ti*xs:], cols)
							if got := out[ti*os+ri]; math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("%s: out[%d,%d] = %g, dotQ4_0Generic %g", name, ti, ri, got, want)
							}
						}
						for i := ti*os + rows; i < min(len(out), (ti+1)*os); i++ {
							if !math.IsNaN(float64(out[i])) {
								t.Fatalf("%s: wrote out[%d], between the outputs", name, i)
							}
						}
					}
				}
			}
		}
	}
}

// q4Extreme fills the n Q4_0 blocks at w with scales near 1 and nibbles
// 0 or 15.
func q4Extreme(r *rand.Rand, w []byte, n int) {
	for i := range n {
		b := w[i*q4_0Size : (i+1)*q4_0Size]
		binary.LittleEndian.PutUint16(b, F32ToF16(float32(0.5+r.Float64())))
		for j := 2; j < q4_0Size; j++ {
			b[j] = []byte{0x00, 0x0f, 0xf0, 0xff}[r.IntN(4)]
		}
	}
}

// q8Extreme fills the n Q8_0 blocks at x with scales near 1 and quants
// -128 or 127.
func q8Extreme(r *rand.Rand, x []byte, n int) {
	for i := range n {
		b := x[i*q8_0Size : (i+1)*q8_0Size]
		binary.LittleEndian.PutUint16(b, F32ToF16(float32(0.5+r.Float64())))
		for j := 2; j < q8_0Size; j++ {
			b[j] = []byte{0x80, 0x7f}[r.IntN(2)]
		}
	}
}

// TestRepackForms: a matrix interleaved under one kernel form gives MatMul
// the row-major matrix's outputs, bit for bit, under every form (setVNNI
// changes the kernels, not the layout Repack wrote).
func TestRepackForms(t *testing.T) {
	forms, restore := kernelForms()
	defer restore()
	r := rand.New(rand.NewPCG(83, 84))
	pool := NewPool(2)
	defer pool.Close()
	for _, typ := range []Type{Q4_0, Q8_0} {
		m := randMatrix(t, r, typ, 72, 896)
		for _, from := range forms {
			from.set()
			p := Repack(m)
			for _, to := range forms {
				to.set()
				for _, n := range []int{1, 5, 9} {
					x := randFloats(r, n*m.Cols, 1)
					a, b := make([]float32, n*m.Rows), make([]float32, n*m.Rows)
					pool.MatMul(a, m, x, n)
					pool.MatMul(b, p, x, n)
					for i := range a {
						if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
							t.Fatalf("%v as %v, repacked under %s, run under %s, n=%d: out[%d] = %v, row-major %v",
								typ, p.Type, from.name, to.name, n, i, b[i], a[i])
						}
					}
				}
			}
		}
	}
}
