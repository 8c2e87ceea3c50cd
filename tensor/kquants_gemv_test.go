package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestKQuantGemv runs the Q4_K and Q6_K gemv kernels in use over strided
// weight, activation and output rows (gaps filled with guard values) and
// checks every output against the single-row reference, bit for bit, and
// that no gap was written (TestKernelForms runs it in every form).
func TestKQuantGemv(t *testing.T) { checkKQuantGemv(t) }

// q2KLanesGemv is the Q2_K gemv registered in the Q2KLanes order (nil
// where there is none).
func q2KLanesGemv() gemv {
	if q2Order != Q2KLanes {
		defer SetQ2KOrder(q2Order)
		SetQ2KOrder(Q2KLanes)
	}
	return gemvs[Q2_K]
}

func checkKQuantGemv(t *testing.T) {
	t.Helper()
	r := rand.New(rand.NewPCG(13, 14))
	for _, c := range []struct {
		name string
		bs   int
		gemv gemv
		ref  VecDot
		gen  func(*rand.Rand, int) []byte
	}{
		{"Q4_K", q4KBytes, gemvs[Q4_K], dotQ4KRef, kRandQ4K},
		{"Q6_K", q6KBytes, gemvs[Q6_K], dotQ6KRef, kRandQ6K},
		{"Q5_K", q5KBytes, gemvs[Q5_K], dotQ5KRef, k2Types[2].gen},
		{"Q3_K", q3KBytes, gemvs[Q3_K], dotQ3KRef, k2Types[1].gen},
		{"Q2_K", q2KBytes, q2KLanesGemv(), dotQ2KRef, k2Types[0].gen},
		{"IQ4_XS", iq4XSBytes, gemvs[IQ4_XS], dotIQ4XSRef, k2Types[3].gen},
	} {
		if c.gemv == nil {
			t.Logf("%s: no gemv kernel in this build", c.name)
			continue
		}
		for _, nb := range []int{1, 2, 3, 4, kGemvWideNB, kGemvWideNB + 1} {
			for _, rows := range []int{1, 2, 5, 9} {
				for ntok := 1; ntok <= 17; ntok++ {
					if nb > 4 && (rows != 5 || ntok%4 != 1 && ntok != 2 && ntok != 3 && ntok != 6) {
						continue // at and past the Q4_K T-token kernels' tables' limit: a few cases
					}
					for _, isRaw := range []bool{false, true} {
						name := fmt.Sprintf("%s nb=%d rows=%d ntok=%d raw=%v", c.name, nb, rows, ntok, isRaw)
						checkKGemvStrided(t, r, name, c.gemv, c.ref, c.gen, c.bs, nb, rows, ntok, isRaw)
					}
				}
			}
		}
	}
}

// checkKGemvStrided runs g on rows weight rows of nb blocks of bs bytes
// (from gen, or arbitrary bytes where raw) and ntok Q8_K activation rows
// (from kRandQ8K, or arbitrary), all at strides that leave gaps, and fails
// t, naming the case what, unless every output equals ref's dot bit for
// bit and no output gap was written.
func checkKGemvStrided(t *testing.T, r *rand.Rand, what string, g gemv, ref VecDot, gen func(*rand.Rand, int) []byte, bs, nb, rows, ntok int, raw bool) {
	t.Helper()
	arbitrary := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return b
	}
	wrb, xrb := nb*bs, nb*q8KBytes
	ws, xs, os := wrb+3, xrb+5, rows+2
	w := arbitrary(ws*rows + 7)
	x := arbitrary(xs*ntok + 9)
	if !raw {
		for i := range rows {
			copy(w[i*ws:], gen(r, nb))
		}
		for i := range ntok {
			copy(x[i*xs:], kRandQ8K(r, nb))
		}
	}
	out := make([]float32, os*ntok)
	for i := range out {
		out[i] = -7
	}
	g(w, ws, rows, x, xs, ntok, nb*qkK, out, os)
	for tok := range ntok {
		for row := range rows {
			want := ref(w[row*ws:row*ws+wrb], x[tok*xs:tok*xs+xrb], nb*qkK)
			if got := out[tok*os+row]; !kSameBits(got, want) {
				t.Fatalf("%s: out[tok %d, row %d] = %v, single-row %v", what, tok, row, got, want)
			}
		}
		for i := rows; i < os; i++ {
			if out[tok*os+i] != -7 {
				t.Fatalf("%s: wrote the output gap at token %d, %d", what, tok, i)
			}
		}
	}
}

// kExtremeActs returns ntok rows of nb Q8_K blocks whose quants are all
// −128, or all 127 in every third block, where the pair sums the
// multi-token kernels pack into 16 bits are largest; the scales are small
// and random, the bsums arbitrary.
func kExtremeActs(r *rand.Rand, nb, ntok int) []byte {
	x := make([]byte, ntok*nb*q8KBytes)
	for i := range x {
		x[i] = byte(r.IntN(256))
	}
	for tok := range ntok {
		for b := range nb {
			blk := x[(tok*nb+b)*q8KBytes:]
			q := byte(0x80)
			if (tok+b)%3 == 2 {
				q = 127
			}
			for i := q8KQs; i < q8KQs+qkK; i++ {
				blk[i] = q
			}
			binary.LittleEndian.PutUint32(blk, math.Float32bits(float32(r.IntN(100)+1)/4096))
		}
	}
	return x
}

// checkKGemvTokens runs g on rows rows of w (nb blocks of bs bytes each)
// and the first 1, 2, … ntok token rows of the Q8_K activations x, and
// fails t, naming the case what, unless every output equals ref's dot bit
// for bit.
func checkKGemvTokens(t *testing.T, what string, g gemv, ref VecDot, w []byte, bs, rows int, x []byte, nb, ntok int) {
	t.Helper()
	out := make([]float32, rows*ntok)
	for n := 1; n <= ntok; n++ {
		g(w, nb*bs, rows, x, nb*q8KBytes, n, nb*qkK, out, rows)
		for tok := range n {
			for row := range rows {
				want := ref(w[row*nb*bs:(row+1)*nb*bs], x[tok*nb*q8KBytes:(tok+1)*nb*q8KBytes], nb*qkK)
				if got := out[tok*rows+row]; !kSameBits(got, want) {
					t.Fatalf("%s n=%d: out[tok %d, row %d] = %v, reference %v", what, n, tok, row, got, want)
				}
			}
		}
	}
}

// TestKQuantGemvExtremeQuants runs the gemv kernels on weights whose quants
// are all at their maximum (Q4_K nibbles 15, Q6_K values 63) against
// activations of all -128 or all 127, where the four-element sums the
// multi-token kernels pack into 16 bits are largest (|sum| up to 32256 for
// Q6_K); scales, mins and bsums are random. Every output must match the
// reference dot bit for bit (TestKernelForms runs it in every form).
func TestKQuantGemvExtremeQuants(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	const nb, rows, ntok = 2, 11, 9
	for _, c := range []struct {
		name   string
		bs     int
		gemv   gemv
		ref    VecDot
		q0, q1 int // the quant bytes' range in a block
		d0, d1 int // f16 scale offsets (d1 < 0: none)
	}{
		{"Q4_K", q4KBytes, gemvs[Q4_K], dotQ4KRef, q4KQs, q4KBytes, 0, 2},
		{"Q6_K", q6KBytes, gemvs[Q6_K], dotQ6KRef, 0, q6KScales, q6KD, -1},
		{"Q5_K", q5KBytes, gemvs[Q5_K], dotQ5KRef, q5KQh, q5KBytes, 0, 2},
		{"Q3_K", q3KBytes, gemvs[Q3_K], dotQ3KRef, 0, q3KScales, q3KD, -1},
		{"Q2_K", q2KBytes, q2KLanesGemv(), dotQ2KRef, q2KQs, q2KD, q2KD, q2KD + 2},
		{"IQ4_XS", iq4XSBytes, gemvs[IQ4_XS], dotIQ4XSRef, iq4XSQs, iq4XSBytes, 0, -1},
	} {
		if c.gemv == nil {
			t.Logf("%s: no gemv kernel in this build", c.name)
			continue
		}
		w := make([]byte, rows*nb*c.bs)
		for i := range w {
			w[i] = byte(r.IntN(256))
		}
		for b := 0; b < rows*nb; b++ {
			blk := w[b*c.bs : (b+1)*c.bs]
			for i := c.q0; i < c.q1; i++ {
				blk[i] = 0xff
			}
			binary.LittleEndian.PutUint16(blk[c.d0:], F32ToF16(float32(r.IntN(100)+1)/64))
			if c.d1 >= 0 {
				binary.LittleEndian.PutUint16(blk[c.d1:], F32ToF16(float32(r.IntN(100)+1)/64))
			}
		}
		checkKGemvTokens(t, c.name, c.gemv, c.ref, w, c.bs, rows, kExtremeActs(r, nb, ntok), nb, ntok)
	}
}
