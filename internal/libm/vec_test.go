package libm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// vecInputs returns n inputs for the vector forms: ordinary values over
// Expf's range and past it both ways, and the special cases (±0, ±Inf,
// NaN, the overflow and underflow thresholds and their neighbours).
func vecInputs(r *rand.Rand, n int) []float32 {
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), 0x1.62e42ep6, math.Nextafter32(0x1.62e42ep6, 100), -0x1.9fe368p6,
		math.Nextafter32(-0x1.9fe368p6, -200), 88, -88, -104, 1e-30, -1e-30}
	x := make([]float32, n)
	for i := range x {
		switch r.IntN(8) {
		case 0:
			x[i] = special[r.IntN(len(special))]
		case 1:
			x[i] = float32(r.NormFloat64() * 200)
		default:
			x[i] = float32(r.Float64()*60 - 50)
		}
	}
	return x
}

// sameBits: identical, or both NaN.
func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// TestVec checks Expfs, ExpSum and DivAll against their scalar loops bit
// for bit (the sum too) over lengths 0 to 40 at every offset of a buffer
// whose elements around the range must stay untouched, with the assembly
// forms and without them.
func TestVec(t *testing.T) {
	defer SetVector(Vector())
	r := rand.New(rand.NewPCG(7, 8))
	const guard = float32(-12345.5)
	for _, on := range []bool{true, false} {
		SetVector(on)
		for n := 0; n <= 40; n++ {
			for off := 0; off < 4; off++ {
				in := vecInputs(r, n)
				temp := float32(0.1 + r.Float64()*2)
				m := float32(r.Float64()*40 - 20)
				buf := func() []float32 {
					b := make([]float32, off+n+5)
					for i := range b {
						b[i] = guard
					}
					return b
				}
				checkGuards := func(what string, b []float32) {
					t.Helper()
					for i, v := range b {
						if (i < off || i >= off+n) && v != guard {
							t.Fatalf("vector %v, %s n=%d off=%d: element %d outside the range written (%v)", on, what, n, off, i, v)
						}
					}
				}

				got := buf()
				copy(got[off:], in)
				Expfs(got[off : off+n])
				for i, v := range in {
					if w := Expf(v); !sameBits(got[off+i], w) {
						t.Fatalf("vector %v: Expfs(%#08x) = %#08x, Expf %#08x", on, math.Float32bits(v), math.Float32bits(got[off+i]), math.Float32bits(w))
					}
				}
				checkGuards("Expfs", got)

				got = buf()
				sum := ExpSum(got[off:off+n], in, temp, m)
				var want float32
				for i, v := range in {
					e := Expf(v/temp - m)
					want += e
					if !sameBits(got[off+i], e) {
						t.Fatalf("vector %v: ExpSum element %d (x %v, temp %v, m %v) = %#08x, want %#08x", on, i, v, temp, m, math.Float32bits(got[off+i]), math.Float32bits(e))
					}
				}
				if !sameBits(sum, want) {
					t.Fatalf("vector %v, n=%d: ExpSum's sum %#08x, the ordered sum %#08x", on, n, math.Float32bits(sum), math.Float32bits(want))
				}
				checkGuards("ExpSum", got)

				got = buf()
				copy(got[off:], in)
				d := float32(r.NormFloat64() * 3)
				DivAll(got[off:off+n], d)
				for i, v := range in {
					if w := v / d; !sameBits(got[off+i], w) {
						t.Fatalf("vector %v: DivAll(%v, %v) = %v, want %v", on, v, d, got[off+i], w)
					}
				}
				checkGuards("DivAll", got)
			}
		}
	}
}

// TestExpSumOrder: the sum is added in order, one element at a time. A
// large first term and small ones after it give a different float32 sum
// in any other order (pairwise, or four lanes summed apart).
func TestExpSumOrder(t *testing.T) {
	x := make([]float32, 64)
	x[0] = 0 // e^0 = 1, then 63 terms of about 2^-25 each, every one lost after the 1
	for i := 1; i < len(x); i++ {
		x[i] = -17.3
	}
	var want float32
	for _, v := range x {
		want += Expf(v)
	}
	var lanes [4]float32 // the lane-parallel order, to show the test can tell
	for i, v := range x {
		lanes[i%4] += Expf(v)
	}
	if other := (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]); other == want {
		t.Fatalf("the inputs do not tell the orders apart: both %v", want)
	}
	if got := ExpSum(make([]float32, len(x)), x, 1, 0); got != want {
		t.Errorf("ExpSum = %v, the ordered sum %v", got, want)
	}
}
