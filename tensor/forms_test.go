package tensor

import (
	"bytes"
	"math"
	"testing"
)

// kernelForm is one set of kernels the tests can select (kernelForms, one
// file per build): the AVX2 and AVX-512 VNNI forms on amd64, the NEON and
// the SDOT/FMLAL forms on arm64, the one pure-Go form elsewhere.
type kernelForm struct {
	name string
	set  func()
}

// TestKernelForms runs the fast-against-reference checks under every
// kernel form this build and CPU have, so that one run tests them all;
// since each must match the reference bit for bit, they also agree with
// each other. The other tests run the form in use.
func TestKernelForms(t *testing.T) {
	forms, restore := kernelForms()
	defer restore()
	if len(forms) < 2 {
		t.Skipf("one kernel form (%s) on this build and CPU: the other tests cover it", forms[0].name)
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			f.set()
			TestDotFastMatchesReference(t)
			checkGemvKernels(t)
			TestQ8_0ExtremeQuants(t)
			TestDotKFastMatchesReference(t)
			checkKQuantGemv(t)
			TestKQuantGemvExtremeQuants(t)
			TestKQuantMatMul(t)
			TestMatMulBatchInvariant(t)
			TestMatMulNoAllocs(t)
			TestKQuantNoAllocs(t)
			TestActQuantizers(t)
			TestQ8_0ActSpecialValues(t)
		})
	}
}

// TestQ8_0ExtremeQuants checks the Q8_0 kernels in use (the gemv, in both
// orders) on blocks of extreme quants (±127, and -128 in the weights,
// which llama.cpp's quantizer never writes but a file may hold), where an
// int16 or int8 intermediate would saturate or wrap. Scales are 1 and the
// sums are integers below 2^24, so every result is exact and must equal
// the exact integer dot.
func TestQ8_0ExtremeQuants(t *testing.T) {
	defer SetQ8_0Order(q8Order)
	const cols, rows, ntok = 512, 9, 5
	nb := cols / qk
	one := F32ToF16(1)
	wv := []int8{127, -127, -128, 127, -128, 0}
	xv := []int8{127, -127, 127, -127, 1}
	w := make([]byte, rows*nb*q8_0Size)
	x := make([]byte, ntok*nb*q8_0Size)
	fill := func(b []byte, i int, vals []int8, k int) {
		blk := b[i*q8_0Size : (i+1)*q8_0Size]
		blk[0], blk[1] = byte(one), byte(one>>8)
		for j := range qk {
			blk[2+j] = byte(vals[(k+j/8)%len(vals)])
		}
	}
	for i := range rows * nb {
		fill(w, i, wv, i%3)
	}
	for i := range ntok * nb {
		fill(x, i, xv, i%2)
	}
	for _, order := range []Q8_0Order{Q8_0Rows, Q8_0Lanes} {
		SetQ8_0Order(order)
		k, _ := kernelFor(Q8_0)
		arb := RowSize(k.act, cols)
		xa := make([]byte, ntok*arb)
		fromQ8_0Act(k.act, xa, x, ntok*nb)
		out := make([]float32, ntok*rows)
		if k.gemv != nil {
			k.gemv(w, nb*q8_0Size, rows, xa, arb, ntok, cols, out, rows)
		} else {
			for ti := range ntok {
				for r := range rows {
					out[ti*rows+r] = k.dot(w[r*nb*q8_0Size:(r+1)*nb*q8_0Size], xa[ti*arb:(ti+1)*arb], cols)
				}
			}
		}
		for ti := range ntok {
			for r := range rows {
				var want int64
				for j := range cols {
					b, k := j/qk, 2+j%qk
					want += int64(int8(w[(r*nb+b)*q8_0Size+k])) * int64(int8(x[(ti*nb+b)*q8_0Size+k]))
				}
				if got := out[ti*rows+r]; got != float32(want) {
					t.Fatalf("order=%d act=%v: out[%d,%d] = %g, exact dot %d", order, k.act, ti, r, got, want)
				}
			}
		}
	}
}

// TestQ8_0ActSpecialValues checks the Q8_0 activation converter in use
// against the reference on blocks the random tests never make: infinities,
// a largest magnitude so small that 127/amax overflows (zeros then become
// -128, as cvtps2dq's indefinite does), and, where the converter promises
// NaNs too (q8ActNaNExact), NaNs.
func TestQ8_0ActSpecialValues(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	block := func(vals ...float32) []float32 {
		b := make([]float32, qk)
		for i := range b {
			b[i] = vals[i%len(vals)] * float32(1+i%5)
		}
		return b
	}
	cases := map[string][]float32{
		"inf":      block(1, inf, -2),
		"neginf":   block(-inf, 3),
		"tiny":     block(1e-39, 0, -2e-39),
		"subnorm":  block(1e-45, 0),
		"zero":     block(0),
		"negzero":  block(float32(math.Copysign(0, -1))),
		"huge":     block(3e38, -1e38, 1),
		"ties":     block(0.5, -1.5, 2.5, 127),
		"maxfirst": block(-7, 7, 3),
	}
	if q8ActNaNExact {
		cases["nan"] = block(1, nan, -3)
		cases["allnan"] = block(nan)
		cases["naninf"] = block(nan, inf)
		cases["payload"] = block(math.Float32frombits(0xffc12345), 2)
	}
	for name, src := range cases {
		src = append(src, block(0.25, -1)...) // and an ordinary block after it
		got := make([]byte, 2*q8_0Size+3)
		want := make([]byte, 2*q8_0Size+3)
		quantizeQ8_0Act(got, src)
		quantizeQ8_0ActGeneric(want, src)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: Q8_0 activations differ from the reference:\n got %v\nwant %v", name, got, want)
		}
	}
}
