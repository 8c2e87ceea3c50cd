package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// ggmlF16ToF32 and ggmlF32ToF16 transcribe the float tricks of
// ggml_compute_fp16_to_fp32 / ggml_compute_fp32_to_fp16, as an independent
// oracle for the bit-level conversions.
func ggmlF16ToF32(h uint16) float32 {
	w := uint32(h) << 16
	sign := w & 0x80000000
	twoW := w + w
	const expOffset = 0xE0 << 23
	normalized := math.Float32frombits((twoW>>4)+expOffset) * float32(math.Ldexp(1, -112))
	const magicMask = 126 << 23
	denormalized := math.Float32frombits((twoW>>17)|magicMask) - 0.5
	var r uint32
	if twoW < 1<<27 {
		r = math.Float32bits(denormalized)
	} else {
		r = math.Float32bits(normalized)
	}
	return math.Float32frombits(sign | r)
}

func ggmlF32ToF16(f float32) uint16 {
	scaleToInf := float32(math.Ldexp(1, 112))
	scaleToZero := float32(math.Ldexp(1, -110))
	base := float32(float32(abs32(f)*scaleToInf) * scaleToZero)
	w := math.Float32bits(f)
	shl1 := w + w
	sign := w & 0x80000000
	bias := shl1 & 0xFF000000
	if bias < 0x71000000 {
		bias = 0x71000000
	}
	base = math.Float32frombits((bias>>1)+0x07800000) + base
	bits := math.Float32bits(base)
	expBits := (bits >> 13) & 0x7C00
	manBits := bits & 0x0FFF
	nonsign := expBits + manBits
	if shl1 > 0xFF000000 {
		nonsign = 0x7E00
	}
	return uint16(sign>>16) | uint16(nonsign)
}

func TestF16Exhaustive(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		f := F16ToF32(h)
		if g := ggmlF16ToF32(h); math.Float32bits(f) != math.Float32bits(g) {
			t.Fatalf("F16ToF32(%#04x) = %#08x, ggml gives %#08x", h, math.Float32bits(f), math.Float32bits(g))
		}
		back := F32ToF16(f)
		want := h
		if h&0x7fff > 0x7c00 { // NaN: ggml returns the canonical quiet NaN
			want = h&0x8000 | 0x7e00
		}
		if back != want {
			t.Fatalf("F32ToF16(F16ToF32(%#04x)) = %#04x, want %#04x", h, back, want)
		}
		// Neighbours and midpoints exercise rounding at every half.
		bits := math.Float32bits(f)
		for _, d := range []int32{-2, -1, 1, 2, 0x1000, -0x1000, 0xfff, 0x1001} {
			v := math.Float32frombits(uint32(int32(bits) + d))
			if got, want := F32ToF16(v), ggmlF32ToF16(v); got != want {
				t.Fatalf("F32ToF16(%g [%#08x]) = %#04x, ggml gives %#04x", v, math.Float32bits(v), got, want)
			}
		}
	}
}

// TestF32ToF16All checks F32ToF16 against ggml's rounding and F32ToF16Hw
// against the F16C rule (ggml's for numbers; for a NaN the sign, 0x7e00 and
// the payload's top 9 bits) on every float32 bit pattern (a minute or so
// of CPU, in four parallel parts); with -short on every 509th, a sample
// that still reaches every exponent.
func TestF32ToF16All(t *testing.T) {
	step := uint64(1)
	if testing.Short() {
		step = 509
		t.Logf("-short: every %dth of the 2^32 inputs", step)
	}
	const parts = 4
	for p := range uint64(parts) {
		t.Run(fmt.Sprintf("part%d", p), func(t *testing.T) {
			t.Parallel()
			for i := p << 30; i < (p+1)<<30; i += step {
				u := uint32(i)
				v := math.Float32frombits(u)
				want := ggmlF32ToF16(v)
				if got := F32ToF16(v); got != want {
					t.Fatalf("F32ToF16(%g [%#08x]) = %#04x, ggml gives %#04x", v, u, got, want)
				}
				if u&0x7fffffff > 0x7f800000 {
					want = uint16(u>>16)&0x8000 | 0x7e00 | uint16(u>>13)&0x1ff
				}
				if got := F32ToF16Hw(v); got != want {
					t.Fatalf("F32ToF16Hw(%g [%#08x]) = %#04x, want %#04x", v, u, got, want)
				}
			}
		})
	}
}

func TestF32ToF16Random(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		v := math.Float32frombits(r.Uint32())
		if got, want := F32ToF16(v), ggmlF32ToF16(v); got != want {
			t.Fatalf("F32ToF16(%g [%#08x]) = %#04x, ggml gives %#04x", v, math.Float32bits(v), got, want)
		}
	}
	for _, c := range []struct {
		f float32
		h uint16
	}{
		{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65520, 0x7c00}, {65519.996, 0x7bff},
		{float32(math.Inf(-1)), 0xfc00}, {float32(math.Ldexp(1, -24)), 1}, {float32(math.Ldexp(1, -25)), 0},
		{float32(math.Ldexp(3, -26)), 1}, {float32(math.Ldexp(3, -25)), 2}, {float32(math.NaN()), 0x7e00},
	} {
		if got := F32ToF16(c.f); got != c.h {
			t.Errorf("F32ToF16(%g) = %#04x, want %#04x", c.f, got, c.h)
		}
	}
}

func TestBF16Exhaustive(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		f := BF16ToF32(h)
		if math.Float32bits(f) != uint32(h)<<16 {
			t.Fatalf("BF16ToF32(%#04x) = %#08x", h, math.Float32bits(f))
		}
		want := h
		if h&0x7fff > 0x7f80 {
			want = h | 64
		}
		if got := F32ToBF16(f); got != want {
			t.Fatalf("F32ToBF16(BF16ToF32(%#04x)) = %#04x, want %#04x", h, got, want)
		}
	}
	for _, c := range []struct {
		bits uint32
		h    uint16
	}{
		{0x3f808000, 0x3f80}, // tie, even stays
		{0x3f818000, 0x3f82}, // tie, odd rounds up
		{0x3f808001, 0x3f81}, // above half
		{0x7f7fffff, 0x7f80}, // max float rounds to Inf
		{0x7f800001, 0x7fc0}, // signalling NaN made quiet
		{0xffc00001, 0xffc0},
	} {
		if got := F32ToBF16(math.Float32frombits(c.bits)); got != c.h {
			t.Errorf("F32ToBF16(%#08x) = %#04x, want %#04x", c.bits, got, c.h)
		}
	}
}

func TestF16ToF32sBulk(t *testing.T) {
	src := make([]uint16, 1<<16+13)
	for i := range src {
		src[i] = uint16(i * 7919)
	}
	for _, off := range []int{0, 1, 3} {
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 31, 33, 1000, len(src) - off} {
			s := src[off : off+n]
			dst := make([]float32, n+4)
			for i := n; i < len(dst); i++ {
				dst[i] = 42
			}
			F16ToF32s(dst, s)
			for i, h := range s {
				if math.Float32bits(dst[i]) != math.Float32bits(F16ToF32(h)) {
					t.Fatalf("off %d n %d: dst[%d] = %g, want %g", off, n, i, dst[i], F16ToF32(h))
				}
			}
			for i := n; i < len(dst); i++ {
				if dst[i] != 42 {
					t.Fatalf("off %d n %d: wrote past the end at %d", off, n, i)
				}
			}
		}
	}
}
