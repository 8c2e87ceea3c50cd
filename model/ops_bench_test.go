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
