package tensor

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// Where BF16 weights take widened activations, the shared kernel tests
// (dotPairs: reference accuracy, fast against reference, the gemv checks,
// fuzzing, benchmarks) run BF16's kernel on them, against the widened
// reference.
func init() {
	for i, p := range dotPairs {
		if p.weight == BF16 && bf16Act == bf16Wide {
			dotPairs[i] = dotPair{BF16, bf16Wide, func() VecDot { return dotBF16 }, func() VecDot { return dotBF16WideGeneric }, Q8_0Rows}
		}
	}
}

// specialFloats returns n floats mixing ordinary values with the cases a
// bfloat16 rounding treats specially: float32 subnormals, values that
// round up to Inf, Inf, NaNs with payloads (signalling ones included),
// signed zeros, and exact ties between bfloat16s.
func specialFloats(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		switch r.IntN(10) {
		case 0:
			v[i] = math.Float32frombits(r.Uint32()) // any bit pattern, NaNs included
		case 1:
			v[i] = math.Float32frombits(r.Uint32() & 0x807fffff) // float32 subnormal
		case 2:
			v[i] = math.Float32frombits(0x7f7f8000 | r.Uint32()&0x80007fff) // rounds to ±Inf or the maximum
		case 3:
			v[i] = float32(math.Inf(1 - 2*r.IntN(2)))
		case 4:
			v[i] = math.Float32frombits(0x7f800001 | r.Uint32()&0x807fffff) // NaN
		case 5:
			v[i] = math.Float32frombits(r.Uint32() & 0x80000000) // ±0
		case 6:
			v[i] = math.Float32frombits(r.Uint32()&0xffff0000 | 0x8000) // a tie: rounds to even
		default:
			v[i] = float32(r.NormFloat64())
		}
	}
	return v
}

// TestBF16WideConverter checks the widening converter in use against the
// reference loop byte for byte (NaN payloads included), over odd lengths
// with guard bytes, and the reference against its definition,
// BF16ToF32(F32ToBF16(x)).
func TestBF16WideConverter(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 100, 512, 1037} {
		src := specialFloats(r, n)
		got := make([]byte, 4*n+8)
		want := make([]byte, 4*n+8)
		for i := range got {
			got[i], want[i] = 0xa5, 0xa5
		}
		quantizeBF16Wide(got[:4*n], src)
		quantizeBF16WideGeneric(want[:4*n], src)
		for i, v := range src {
			g := binary.LittleEndian.Uint32(got[4*i:])
			w := binary.LittleEndian.Uint32(want[4*i:])
			if g != w {
				t.Fatalf("n=%d: widened %#08x = %#08x, reference %#08x", n, math.Float32bits(v), g, w)
			}
			if d := math.Float32bits(BF16ToF32(F32ToBF16(v))); w != d {
				t.Fatalf("n=%d: reference widened %#08x = %#08x, BF16ToF32(F32ToBF16) %#08x", n, math.Float32bits(v), w, d)
			}
		}
		for i := 4 * n; i < len(got); i++ {
			if got[i] != 0xa5 {
				t.Fatalf("n=%d: converter wrote past the end", n)
			}
		}
	}
}

// TestBF16WideDotMatchesBF16 checks that widening the activations changes
// no result: the BF16 reference dot on bfloat16s and the widened reference
// on the same values agree bit for bit, including tails, tiny and huge
// activations, and the kernel in use (whichever activations it takes)
// agrees with them.
func TestBF16WideDotMatchesBF16(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	for _, n := range []int{1, 5, 31, 32, 33, 64, 100, 512, 1536} {
		for trial := range 4 {
			src := randFloats(r, n, 1)
			if trial >= 2 {
				for i := range src {
					switch r.IntN(6) {
					case 0:
						src[i] *= 1e-38 // float32 subnormals
					case 1:
						src[i] *= 1e30 // large values; products stay finite
					}
				}
			}
			if trial == 3 {
				src[r.IntN(n)] = float32(math.Inf(1)) // an Inf activation
			}
			w := quantized(t, BF16, randFloats(r, n, 0.05), trial)
			narrow := activations(BF16, src, 1)
			wide := activations(bf16Wide, src, 3)
			want := dotBF16Generic(w, narrow, n)
			if got := dotBF16WideGeneric(w, wide, n); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("n=%d trial=%d: widened reference %g (%#08x), reference %g (%#08x)",
					n, trial, got, math.Float32bits(got), want, math.Float32bits(want))
			}
			x := narrow
			if bf16Act == bf16Wide {
				x = wide
			}
			got := dotBF16(w, x, n)
			if math.Float32bits(got) != math.Float32bits(want) && !(math.IsNaN(float64(want)) && math.IsNaN(float64(got))) {
				t.Fatalf("n=%d trial=%d: kernel %g, reference %g", n, trial, got, want)
			}
		}
	}
}

// TestBF16ActType checks that BF16 weights take the widened activations
// exactly where the assembly kernels run, that MatMul's conversion then
// produces them, and that the internal type is no weight type.
func TestBF16ActType(t *testing.T) {
	at, ok := ActType(BF16)
	if !ok || at != bf16Act {
		t.Fatalf("ActType(BF16) = %v, %v; want %v", at, ok, bf16Act)
	}
	x := []float32{1.0 / 3, -70000, 1e-40}
	a := PrepareActivations(nil, at, x, 3, 1)
	want := make([]byte, RowSize(at, 3))
	actQuants[at](want, x)
	if string(a) != string(want) {
		t.Fatalf("PrepareActivations(%v) = %x, want %x", at, a, want)
	}
	if bf16Wide.Supported() || RowSize(bf16Wide, 3) != 12 || CanMatMul(bf16Wide) {
		t.Fatalf("%v: supported %v, matmul %v, 3 elements take %d bytes", bf16Wide, bf16Wide.Supported(), CanMatMul(bf16Wide), RowSize(bf16Wide, 3))
	}
}
