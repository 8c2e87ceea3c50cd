package model

import (
	"testing"

	"github.com/specd-dev/specd/tensor"
)

func BenchmarkAttnF16(b *testing.B) {
	const d, npos = 64, 65
	k, v := make([]uint16, npos*d), make([]uint16, npos*d)
	for i := range k {
		k[i] = tensor.F32ToF16(float32(i%17) * 0.03)
		v[i] = tensor.F32ToF16(float32(i%13) * 0.05)
	}
	q, out, qh, acc := make([]float32, d), make([]float32, d), make([]float32, d), make([]float32, d)
	for i := range q {
		q[i] = float32(i%5) * 0.1
	}
	for b.Loop() {
		attnF16(out, q, k, v, npos, 0.125, qh, acc)
	}
}

// BenchmarkSwiglu times SwiGLU over one FFN width of the 58M reference
// model (1536), through swiglu (its vector kernel where the CPU has one)
// and through the scalar swigluGeneric.
func BenchmarkSwiglu(b *testing.B) {
	const n = 1536
	g0, u := make([]float32, n), make([]float32, n)
	for i := range g0 {
		g0[i] = float32(i%97)*0.07 - 3
		u[i] = float32(i%31)*0.05 - 0.7
	}
	g := make([]float32, n)
	for _, c := range []struct {
		name string
		f    func(g, u []float32)
	}{{"kernel", swiglu}, {"generic", swigluGeneric}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(2 * 4 * n)
			for b.Loop() {
				copy(g, g0)
				c.f(g, u)
			}
		})
	}
}
