package tensor

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// Where F16 and BF16 weights take widened activations, the shared kernel
// tests (dotPairs: reference accuracy, fast against reference, the gemv
// checks, fuzzing, benchmarks) run their kernels on them, against the
// widened references.
func init() {
	for i, p := range dotPairs {
		switch {
		case p.weight == F16 && f16Act == f16Wide:
			dotPairs[i] = dotPair{F16, f16Wide, func() VecDot { return dotF16 }, func() VecDot { return dotF16WideGeneric }}
		case p.weight == BF16 && bf16Act == bf16Wide:
			dotPairs[i] = dotPair{BF16, bf16Wide, func() VecDot { return dotBF16 }, func() VecDot { return dotBF16WideGeneric }}
		}
	}
}

// specialFloats returns n floats mixing ordinary values with the cases a
// half conversion treats specially: values that round to half subnormals,
// float32 subnormals, overflow to Inf, Inf, NaNs with payloads, signed
// zeros, and exact ties between halves.
func specialFloats(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		switch r.IntN(12) {
		case 0:
			v[i] = math.Float32frombits(r.Uint32()) // any bit pattern, NaNs included
		case 1:
			v[i] = float32(r.NormFloat64() * 1e-6) // half subnormal range
		case 2:
			v[i] = math.Float32frombits(r.Uint32() & 0x807fffff) // float32 subnormal
		case 3:
			v[i] = float32(r.NormFloat64() * 7e4) // near and past the half maximum
		case 4:
			v[i] = float32(math.Inf(1 - 2*r.IntN(2)))
		case 5:
			v[i] = math.Float32frombits(0x7f800001 | r.Uint32()&0x807fffff) // NaN
		case 6:
			v[i] = math.Float32frombits(r.Uint32() & 0x80000000) // ±0
		case 7:
			// Halfway between two halves (a tie: rounds to even).
			h := uint16(r.IntN(0x7bff))
			a, b := F16ToF32(h), F16ToF32(h+1)
			v[i] = float32((float64(a) + float64(b)) / 2)
		default:
			v[i] = float32(r.NormFloat64())
		}
	}
	return v
}

// TestWideConverters checks the widening converters in use against the
// reference loops byte for byte (NaN payloads included), over odd lengths
// with guard bytes, and the references against their definitions: F16ToF32
// of the half F32ToF16Hw gives (which is F16ToF32(F32ToF16(x)) for every
// non-NaN x), and BF16ToF32 of F32ToBF16.
func TestWideConverters(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, c := range []struct {
		act       Type
		fast, ref ActQuant
		def       func(float32) float32
	}{
		{f16Wide, quantizeF16Wide, quantizeF16WideGeneric, func(v float32) float32 { return F16ToF32(F32ToF16Hw(v)) }},
		{bf16Wide, quantizeBF16Wide, quantizeBF16WideGeneric, func(v float32) float32 { return BF16ToF32(F32ToBF16(v)) }},
	} {
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 100, 512, 1037} {
			src := specialFloats(r, n)
			got := make([]byte, 4*n+8)
			want := make([]byte, 4*n+8)
			for i := range got {
				got[i], want[i] = 0xa5, 0xa5
			}
			c.fast(got[:4*n], src)
			c.ref(want[:4*n], src)
			for i, v := range src {
				g := binary.LittleEndian.Uint32(got[4*i:])
				w := binary.LittleEndian.Uint32(want[4*i:])
				if g != w {
					t.Fatalf("%v n=%d: widened %#08x = %#08x, reference %#08x", c.act, n, math.Float32bits(v), g, w)
				}
				if d := math.Float32bits(c.def(v)); w != d {
					t.Fatalf("%v n=%d: reference widened %#08x = %#08x, by definition %#08x", c.act, n, math.Float32bits(v), w, d)
				}
				if c.act == f16Wide && v == v && w != math.Float32bits(F16ToF32(F32ToF16(v))) {
					t.Fatalf("n=%d: widened %g = %#08x, F16ToF32(F32ToF16) %g", n, v, w, F16ToF32(F32ToF16(v)))
				}
			}
			for i := 4 * n; i < len(got); i++ {
				if got[i] != 0xa5 {
					t.Fatalf("%v n=%d: converter wrote past the end", c.act, n)
				}
			}
		}
	}
}

// TestWideDotsMatchNarrow checks that widening the activations changes no
// result: the F16 (BF16) reference dot on halves (bfloat16s) and the
// widened reference on the same values agree bit for bit, including tails,
// subnormal and huge activations, and the kernel in use (whichever
// activations it takes) agrees with them.
func TestWideDotsMatchNarrow(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	for _, c := range []struct {
		weight, narrow, wide, act Type
		ref, wideRef, fast        VecDot
		huge                      float32
	}{
		{F16, F16, f16Wide, f16Act, dotF16Generic, dotF16WideGeneric, dotF16, 3e4},
		{BF16, BF16, bf16Wide, bf16Act, dotBF16Generic, dotBF16WideGeneric, dotBF16, 1e30},
	} {
		for _, n := range []int{1, 5, 31, 32, 33, 64, 100, 512, 1536} {
			for trial := range 4 {
				src := randFloats(r, n, 1)
				if trial >= 2 {
					for i := range src {
						switch r.IntN(6) {
						case 0:
							src[i] *= 1e-6 // half subnormals
						case 1:
							src[i] *= c.huge // large values; products stay finite
						}
					}
				}
				if trial == 3 {
					src[r.IntN(n)] = float32(math.Inf(1)) // an Inf activation
				}
				w := quantized(t, c.weight, randFloats(r, n, 0.05), trial)
				narrow := activations(c.narrow, src, 1)
				wide := activations(c.wide, src, 3)
				want := c.ref(w, narrow, n)
				if got := c.wideRef(w, wide, n); math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("%v n=%d trial=%d: widened reference %g (%#08x), reference %g (%#08x)",
						c.weight, n, trial, got, math.Float32bits(got), want, math.Float32bits(want))
				}
				x := narrow
				if c.act == c.wide {
					x = wide
				}
				got := c.fast(w, x, n)
				if d := math.Abs(float64(got) - float64(want)); !(d <= 1e-6*math.Abs(float64(want))) &&
					!(math.IsInf(float64(want), 0) && got == want) && !(math.IsNaN(float64(want)) && math.IsNaN(float64(got))) {
					t.Fatalf("%v n=%d trial=%d: kernel %g, reference %g", c.weight, n, trial, got, want)
				}
			}
		}
	}
}

// TestWideActTypes checks that F16 and BF16 weights take the widened
// activations exactly where the assembly kernels run, and that MatMul's
// conversion then produces them.
func TestWideActTypes(t *testing.T) {
	for _, c := range []struct{ weight, act Type }{{F16, f16Act}, {BF16, bf16Act}} {
		at, ok := ActType(c.weight)
		if !ok || at != c.act {
			t.Fatalf("ActType(%v) = %v, %v; want %v", c.weight, at, ok, c.act)
		}
		if at.Supported() != (at == c.weight) || RowSize(at, 3) != 3*RowSize(at, 1) {
			t.Fatalf("%v: supported %v, 3 elements take %d bytes", at, at.Supported(), RowSize(at, 3))
		}
		x := []float32{1.0 / 3, -70000, 1e-7}
		a := PrepareActivations(nil, at, x, 3, 1)
		want := make([]byte, RowSize(at, 3))
		actQuants[at](want, x)
		if string(a) != string(want) {
			t.Fatalf("PrepareActivations(%v) = %x, want %x", at, a, want)
		}
	}
	for _, w := range []Type{f16Wide, bf16Wide} {
		if w.Supported() || RowSize(w, 3) != 12 {
			t.Fatalf("%v: supported %v, 3 elements take %d bytes", w, w.Supported(), RowSize(w, 3))
		}
	}
}
