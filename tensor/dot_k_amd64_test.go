//go:build amd64 && !noasm

package tensor

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
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

// BenchmarkKQuantForms compares the gemv forms (vnni=true: the VNNI
// T-token kernels, where the CPU has them; vnni=false: the AVX2 ones, for
// Q4_K and Q6_K T-token kernels too, for the other types four tokens plus
// single-token passes) on the reference model's 1536×512 and 512×1536 Q4_K
// and Q6_K matrices (and 1536×512 of Q2_K, Q3_K, Q5_K and IQ4_XS), one
// thread, in CPU time.
func BenchmarkKQuantForms(b *testing.B) {
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
				if v && !hasVNNI {
					continue
				}
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

// TestGeneratedAVX2KernelsVEX checks that the generated kernels meant for
// AVX2 (the T-token Q4_K and Q6_K forms, the Q5_0/Q4_1/Q5_1 lanes forms)
// use no register that only AVX-512 has: avo's allocator may hand out
// Y16-Y31, and an EVEX-encoded instruction would then run on an AVX-512
// machine and fault on an AVX2 one.
func TestGeneratedAVX2KernelsVEX(t *testing.T) {
	avx2 := regexp.MustCompile(`AVX2W?$|Rows[N4]$`)
	evex := regexp.MustCompile(`\b([XYZ](1[6-9]|2[0-9]|3[01])|Z[0-9]+|K[1-7])\b`)
	n := 0
	for _, file := range []string{"dotk_amd64.s", "dotq32_lanes_amd64.s"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		fn := ""
		for i, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "TEXT ·"); ok {
				fn = name[:strings.IndexByte(name, '(')]
				if avx2.MatchString(fn) {
					n++
				}
				continue
			}
			code, _, _ := strings.Cut(line, "//")
			if avx2.MatchString(fn) && evex.MatchString(code) {
				t.Errorf("%s:%d: %s uses an AVX-512 register: %s", file, i+1, fn, strings.TrimSpace(code))
			}
		}
	}
	if n < 20 {
		t.Fatalf("found %d AVX2 kernels in the generated files, want at least 20", n)
	}
}
