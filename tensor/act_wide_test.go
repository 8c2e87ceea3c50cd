package tensor

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// Where F16 weights take widened activations, the shared kernel tests
// (dotPairs: reference accuracy, fast against reference, the gemv checks,
// fuzzing, benchmarks) run F16's kernel on them, against the widened
// reference.
func init() {
	if f16Act != f16Wide {
		return
	}
	for i, p := range dotPairs {
		if p.weight == F16 {
			dotPairs[i] = dotPair{F16, f16Wide, func() VecDot { return dotF16 }, func() VecDot { return dotF16WideGeneric }}
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

// TestF16WideConverter checks the widening converter in use against the
// reference loop byte for byte (NaN payloads included), over odd lengths
// with guard bytes, and the reference against its definition: F16ToF32 of
// the half F32ToF16Hw gives, which is F16ToF32(F32ToF16(x)) for every
// non-NaN x.
func TestF16WideConverter(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 100, 512, 1037} {
		src := specialFloats(r, n)
		got := make([]byte, 4*n+8)
		want := make([]byte, 4*n+8)
		for i := range got {
			got[i], want[i] = 0xa5, 0xa5
		}
		quantizeF16Wide(got[:4*n], src)
		quantizeF16WideGeneric(want[:4*n], src)
		for i, v := range src {
			g := binary.LittleEndian.Uint32(got[4*i:])
			w := binary.LittleEndian.Uint32(want[4*i:])
			if g != w {
				t.Fatalf("n=%d: widened %#08x = %#08x, reference %#08x", n, math.Float32bits(v), g, w)
			}
			def := F16ToF32(F32ToF16Hw(v))
			if w != math.Float32bits(def) {
				t.Fatalf("n=%d: reference widened %#08x = %#08x, F16ToF32(F32ToF16Hw) %#08x", n, math.Float32bits(v), w, math.Float32bits(def))
			}
			if v == v && w != math.Float32bits(F16ToF32(F32ToF16(v))) {
				t.Fatalf("n=%d: widened %g = %#08x, F16ToF32(F32ToF16) %g", n, v, w, F16ToF32(F32ToF16(v)))
			}
		}
		for i := 4 * n; i < len(got); i++ {
			if got[i] != 0xa5 {
				t.Fatalf("n=%d: converter wrote past the end", n)
			}
		}
	}
}

// TestF16WideDotMatchesF16 checks that widening the activations changes no
// result: the F16 reference dot on halves and the widened reference (and
// the F16 kernel in use, whichever activations it takes) on the same values
// agree bit for bit, including tails, subnormal and huge activations.
func TestF16WideDotMatchesF16(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	for _, n := range []int{1, 5, 31, 32, 33, 64, 100, 512, 1536} {
		for trial := range 4 {
			src := randFloats(r, n, 1)
			if trial >= 2 {
				for i := range src {
					switch r.IntN(6) {
					case 0:
						src[i] *= 1e-6 // half subnormals
					case 1:
						src[i] *= 3e4 // large halves; products stay finite
					}
				}
			}
			if trial == 3 {
				src[r.IntN(n)] = float32(math.Inf(1)) // an Inf activation
			}
			w := quantized(t, F16, randFloats(r, n, 0.05), trial)
			half := activations(F16, src, 1)
			wide := activations(f16Wide, src, 3)
			want := dotF16Generic(w, half, n)
			if got := dotF16WideGeneric(w, wide, n); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("n=%d trial=%d: widened reference %g (%#08x), F16 reference %g (%#08x)",
					n, trial, got, math.Float32bits(got), want, math.Float32bits(want))
			}
			x := half
			if f16Act == f16Wide {
				x = wide
			}
			got := dotF16(w, x, n)
			if d := math.Abs(float64(got) - float64(want)); !(d <= 1e-6*math.Abs(float64(want))) && !(math.IsInf(float64(want), 0) && got == want) && !(math.IsNaN(float64(want)) && math.IsNaN(float64(got))) {
				t.Fatalf("n=%d trial=%d: F16 kernel %g, reference %g", n, trial, got, want)
			}
		}
	}
}

// TestF16ActType checks that F16 weights take the widened activations
// exactly where the assembly kernels run, and that MatMul's conversion then
// produces them.
func TestF16ActType(t *testing.T) {
	at, ok := ActType(F16)
	if !ok || at != f16Act {
		t.Fatalf("ActType(F16) = %v, %v; want %v", at, ok, f16Act)
	}
	if f16Wide.Supported() || RowSize(f16Wide, 3) != 12 {
		t.Fatalf("%v: supported %v, 3 elements take %d bytes", f16Wide, f16Wide.Supported(), RowSize(f16Wide, 3))
	}
	x := []float32{1.0 / 3, -70000, 1e-7}
	a := PrepareActivations(nil, at, x, 3, 1)
	want := make([]byte, RowSize(at, 3))
	actQuants[at](want, x)
	if string(a) != string(want) {
		t.Fatalf("PrepareActivations(%v) = %x, want %x", at, a, want)
	}
}
