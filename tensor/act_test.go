package tensor

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// TestActQuantizers checks the activation converters in use against the
// reference loops byte for byte, over scales from tiny to huge, blocks with
// zeros and exact ties, and odd lengths for F16.
func TestActQuantizers(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	for trial := range 200 {
		nb := 1 + trial%7
		src := randFloats(r, 32*nb+5, math.Ldexp(1, trial%40-20))
		switch trial % 5 {
		case 1: // an all-zero block
			clear(src[:32])
		case 2: // exact halves of the step: ties must go to even
			for i := range 32 {
				src[i] = float32(i-16) / 2
			}
			src[0] = 127
		case 3: // subnormal and huge values
			src[3] = 1e-40
			src[4] = -3e38
		}
		got := make([]byte, 34*nb+3)
		want := make([]byte, 34*nb+3)
		quantizeQ8_0Act(got, src[:32*nb])
		quantizeQ8_0ActGeneric(want, src[:32*nb])
		if !bytes.Equal(got, want) {
			t.Fatalf("trial %d: Q8_0 activations differ from the reference:\n got %v\nwant %v", trial, got, want)
		}
		n := len(src) - trial%5
		got16 := make([]byte, 2*n+2)
		want16 := make([]byte, 2*n+2)
		quantizeF16Act(got16, src[:n])
		quantizeF16ActGeneric(want16, src[:n])
		if !bytes.Equal(got16, want16) {
			t.Fatalf("trial %d: F16 activations differ from the reference", trial)
		}
	}
}

// BenchmarkQuantizeQ8_0Act converts a 512-wide activation row.
func BenchmarkQuantizeQ8_0Act(b *testing.B) {
	src := randFloats(rand.New(rand.NewPCG(35, 36)), 512, 1)
	dst := make([]byte, 16*34)
	for _, impl := range []struct {
		name string
		f    ActQuant
	}{{"fast", quantizeQ8_0Act}, {"generic", quantizeQ8_0ActGeneric}} {
		b.Run(impl.name, func(b *testing.B) {
			b.SetBytes(4 * 512)
			for b.Loop() {
				impl.f(dst, src)
			}
		})
	}
}

// TestF32ToF16s checks the bulk converter against F32ToF16Hw on random bit
// patterns (NaNs included) over odd lengths, and F32ToF16Hw against
// F32ToF16 away from NaNs.
func TestF32ToF16s(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	src := make([]float32, 1037)
	for i := range src {
		src[i] = math.Float32frombits(r.Uint32())
	}
	src[5] = float32(math.NaN())
	src[6] = math.Float32frombits(0xffbfffff) // negative signalling NaN
	for _, n := range []int{0, 1, 7, 8, 9, 100, len(src)} {
		dst := make([]uint16, n+1)
		dst[n] = 0xbeef
		F32ToF16s(dst, src[:n])
		for i, v := range src[:n] {
			if want := F32ToF16Hw(v); dst[i] != want {
				t.Fatalf("n=%d: F32ToF16s(%#08x) = %#04x, want %#04x", n, math.Float32bits(v), dst[i], want)
			}
		}
		if dst[n] != 0xbeef {
			t.Fatalf("n=%d: wrote past the end", n)
		}
	}
	for _, v := range src {
		if v == v && F32ToF16Hw(v) != F32ToF16(v) {
			t.Fatalf("F32ToF16Hw(%g) = %#04x, F32ToF16 %#04x", v, F32ToF16Hw(v), F32ToF16(v))
		}
	}
	if got := F32ToF16Hw(math.Float32frombits(0xffbfffff)); got != 0xffff {
		t.Errorf("F32ToF16Hw(sNaN 0xffbfffff) = %#04x, want 0xffff", got)
	}
}
