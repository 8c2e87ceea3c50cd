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
		quantizeF16(want16, src[:n])
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
