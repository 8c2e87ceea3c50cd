package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestDotRowsF32(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for _, d := range []int{1, 31, 32, 64, 80, 128} {
		for _, rows := range []int{1, 2, 7} {
			q := randFloats(r, d, 1)
			k := randFloats(r, rows*d+5, 1)
			out := make([]float32, rows+1)
			out[rows] = 9
			DotRowsF32(out[:rows], k, q)
			ref := make([]float32, rows)
			dotRowsF32Generic(ref, k[:rows*d], q)
			for p := range rows {
				// Independent check against float64, and against the
				// reference loop (which the kernel matches bit for bit up
				// to the reference's emulated FMA).
				var want, mag float64
				for i := range d {
					want += float64(k[p*d+i]) * float64(q[i])
					mag += math.Abs(float64(k[p*d+i]) * float64(q[i]))
				}
				if math.Abs(float64(out[p])-want) > 1e-6*mag {
					t.Fatalf("d=%d row %d: %g, float64 %g", d, p, out[p], want)
				}
				if out[p] != ref[p] {
					t.Errorf("d=%d row %d: %g, reference loop %g", d, p, out[p], ref[p])
				}
			}
			if out[rows] != 9 {
				t.Fatalf("d=%d: wrote past the output", d)
			}
		}
	}
}

func TestAxpyAndScale(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 64, 100} {
		x := randFloats(r, n+3, 1)
		y0 := randFloats(r, n, 1)
		for i := range y0 {
			y0[i] = roundHalf(y0[i])
		}
		a := float32(r.NormFloat64())

		y := append([]float32(nil), y0...)
		AxpyF32(y, x, a)
		for i := range y {
			if want := fma32(x[i], a, y0[i]); y[i] != want {
				t.Fatalf("AxpyF32 n=%d: y[%d] = %g, want %g", n, i, y[i], want)
			}
		}

		y = append([]float32(nil), y0...)
		AxpyRoundF16(y, x, a)
		for i := range y {
			want := roundHalf(y0[i] + float32(x[i]*a))
			if i < n&^31 {
				want = roundHalf(fma32(x[i], a, y0[i]))
			}
			if y[i] != want {
				t.Fatalf("AxpyRoundF16 n=%d: y[%d] = %g, want %g", n, i, y[i], want)
			}
			if F16ToF32(F32ToF16(y[i])) != y[i] {
				t.Fatalf("AxpyRoundF16 n=%d: y[%d] = %g is not a half", n, i, y[i])
			}
		}

		y = append([]float32(nil), y0...)
		ScaleRoundF16(y, a)
		for i := range y {
			if want := roundHalf(float32(y0[i] * a)); y[i] != want {
				t.Fatalf("ScaleRoundF16 n=%d: y[%d] = %g, want %g", n, i, y[i], want)
			}
		}
	}
	// Rounding edge cases through the fast path: ties, overflow, subnormals.
	y := make([]float32, 32)
	src := []float32{1 + 1.0/2048, 1 + 3.0/2048, 65519, 65520, 1e-8, 3e-8, -2.98e-8, 70000}
	copy(y, src)
	ScaleRoundF16(y, 1)
	for i, v := range src {
		if want := F16ToF32(F32ToF16(v)); y[i] != want {
			t.Errorf("ScaleRoundF16(%g) = %g, want %g", v, y[i], want)
		}
	}
}

// BenchmarkDotRowsF32 scores 256 cached keys of one 64-wide head.
func BenchmarkDotRowsF32(b *testing.B) {
	r := rand.New(rand.NewPCG(31, 32))
	q := randFloats(r, 64, 1)
	k := randFloats(r, 256*64, 1)
	out := make([]float32, 256)
	for _, impl := range []struct {
		name string
		f    func(out, k, q []float32)
	}{{"fast", DotRowsF32}, {"generic", dotRowsF32Generic}} {
		b.Run(impl.name, func(b *testing.B) {
			b.SetBytes(int64(4 * len(k)))
			c0 := cpuNanos()
			for b.Loop() {
				impl.f(out, k, q)
			}
			reportCPU(b, c0, 4*len(k))
		})
	}
}
