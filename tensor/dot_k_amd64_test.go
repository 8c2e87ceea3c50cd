//go:build amd64 && !noasm

package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func kBenchGemv(b *testing.B, bs int, g gemv, gen func(*rand.Rand, int) []byte, rows, ntok int) {
	const nb = 2 // 512 columns, as the reference model
	r := rand.New(rand.NewPCG(9, 10))
	w := make([]byte, 0, rows*nb*bs)
	for range rows {
		w = append(w, gen(r, nb)...)
	}
	x := make([]byte, 0, ntok*nb*q8KBytes)
	for range ntok {
		x = append(x, kRandQ8K(r, nb)...)
	}
	out := make([]float32, rows*ntok)
	b.SetBytes(int64(len(w)))
	c0 := cpuNanos()
	for b.Loop() {
		g(w, nb*bs, rows, x, nb*q8KBytes, ntok, nb*qkK, out, rows)
	}
	reportCPU(b, c0, len(w))
}

// The gemv benchmarks run 64 rows of 512 columns against ntok tokens and
// report weight bytes per call.
func BenchmarkGemvQ4_K(b *testing.B) {
	for _, n := range []int{1, 3, 4, 7} {
		b.Run(fmt.Sprintf("ntok=%d", n), func(b *testing.B) { kBenchGemv(b, q4KBytes, gemvQ4K, kRandQ4K, 64, n) })
	}
}

func BenchmarkGemvQ6_K(b *testing.B) {
	for _, n := range []int{1, 3, 4, 7} {
		b.Run(fmt.Sprintf("ntok=%d", n), func(b *testing.B) { kBenchGemv(b, q6KBytes, gemvQ6K, kRandQ6K, 64, n) })
	}
}

// BenchmarkKQuantForms compares the gemv forms (vnni=true: the T-token
// kernels; vnni=false: four tokens plus single-token passes) on the
// reference model's 1536×512 and 512×1536 Q4_K and Q6_K matrices (and
// 1536×512 of Q2_K, Q3_K, Q5_K and IQ4_XS), one thread, in CPU time.
func BenchmarkKQuantForms(b *testing.B) {
	if !hasVNNI {
		b.Skip("no AVX-512 VNNI on this CPU")
	}
	defer setVNNI(useVNNI)
	r := rand.New(rand.NewPCG(41, 42))
	p := NewPool(1)
	defer p.Close()
	for _, c := range []struct {
		typ        Type
		rows, cols int
		gen        func(*rand.Rand, int) []byte
	}{{Q4_K, 1536, 512, kRandQ4K}, {Q4_K, 512, 1536, kRandQ4K}, {Q6_K, 1536, 512, kRandQ6K}, {Q6_K, 512, 1536, kRandQ6K},
		{Q2_K, 1536, 512, k2Types[0].gen}, {Q3_K, 1536, 512, k2Types[1].gen}, {Q5_K, 1536, 512, k2Types[2].gen},
		{IQ4_XS, 1536, 512, k2Types[3].gen}} {
		m := &Matrix{Type: c.typ, Rows: c.rows, Cols: c.cols, Data: c.gen(r, c.rows*c.cols/qkK)}
		for _, n := range []int{1, 2, 3, 4, 5, 8, 9} {
			x := kRandFloats(r, n*c.cols)
			out := make([]float32, n*c.rows)
			for _, v := range []bool{false, true} {
				b.Run(fmt.Sprintf("%v/%dx%d/n=%d/vnni=%v", c.typ, c.rows, c.cols, n, v), func(b *testing.B) {
					setVNNI(v)
					b.SetBytes(int64(len(m.Data)))
					c0 := cpuNanos()
					for b.Loop() {
						p.MatMul(out, m, x, n)
					}
					reportCPU(b, c0, len(m.Data))
				})
			}
		}
	}
}

// BenchmarkKQuantFormsAVX2 compares, with the AVX2 kernels (VNNI off), the
// T-token Q4_K and Q6_K kernels (t=true) with the four- and five-token
// kernels and single-token passes they replace (t=false), on the reference
// model's matrices, one thread, in CPU time.
func BenchmarkKQuantFormsAVX2(b *testing.B) {
	defer setVNNI(useVNNI)
	defer func(v bool) { useKTAVX2 = v }(useKTAVX2)
	setVNNI(false)
	r := rand.New(rand.NewPCG(41, 42))
	p := NewPool(1)
	defer p.Close()
	for _, c := range []struct {
		typ        Type
		rows, cols int
		gen        func(*rand.Rand, int) []byte
	}{{Q4_K, 1536, 512, kRandQ4K}, {Q4_K, 512, 1536, kRandQ4K}, {Q6_K, 1536, 512, kRandQ6K}, {Q6_K, 512, 1536, kRandQ6K}} {
		m := &Matrix{Type: c.typ, Rows: c.rows, Cols: c.cols, Data: c.gen(r, c.rows*c.cols/qkK)}
		for _, n := range []int{2, 3, 5, 8} {
			x := kRandFloats(r, n*c.cols)
			out := make([]float32, n*c.rows)
			for _, t := range []bool{false, true} {
				b.Run(fmt.Sprintf("%v/%dx%d/n=%d/t=%v", c.typ, c.rows, c.cols, n, t), func(b *testing.B) {
					useKTAVX2 = t
					b.SetBytes(int64(len(m.Data)))
					c0 := cpuNanos()
					for b.Loop() {
						p.MatMul(out, m, x, n)
					}
					reportCPU(b, c0, len(m.Data))
				})
			}
		}
	}
}
