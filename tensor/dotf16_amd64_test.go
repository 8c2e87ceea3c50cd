//go:build amd64 && !noasm

package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkF16Pass times one F16 MatMul per iteration at one thread for the
// token counts speculative verification uses, with the weights streamed
// from memory (copies cycled through, 128 MiB in all): the output
// projection's shape (32000×512) and a layer's (1536×512), and with a
// 256×512 matrix kept in cache (the arithmetic alone).
func BenchmarkF16Pass(b *testing.B) {
	r := rand.New(rand.NewPCG(71, 72))
	p := NewPool(1)
	defer p.Close()
	for _, shape := range [][2]int{{32000, 512}, {1536, 512}, {256, 512}} {
		m := randMatrix(b, r, F16, shape[0], shape[1])
		ms := []Matrix{*m} // the 256-row matrix stays in cache
		if m.Rows != 256 {
			ms = streamCopies(m)
		}
		for _, n := range []int{1, 2, 3, 5} {
			x := randFloats(r, n*m.Cols, 1)
			out := make([]float32, n*m.Rows)
			b.Run(fmt.Sprintf("%dx%d/n=%d", m.Rows, m.Cols, n), func(b *testing.B) {
				benchStream(b, p, ms, x, n, out)
			})
		}
	}
}

// TestF16RowKernels checks the two- and three-token kernels (one row at a
// time, and rows in pairs where the CPU has the AVX-512 form) and the
// paired one-, four- and five-token kernels against the
// Go reference (dotF16Generic) bit for bit at row lengths up to the model
// sizes, with strides that leave gaps and guard values around and between
// the outputs.
func TestF16RowKernels(t *testing.T) {
	type form struct {
		name  string
		pairs bool // rows in pairs: an even row count
		ntoks []int
	}
	forms := []form{{"f16Rows23", false, []int{2, 3}}, {"f16Rows2x1", true, []int{1}}}
	if hasVNNI {
		forms = append(forms, form{"f16Rows2x23", true, []int{2, 3}}, form{"f16Rows2x45", true, []int{4, 5}})
	} else {
		t.Logf("f16Rows2x23, f16Rows2x45: not run, the AVX-512 kernel set is not in use (KernelSet %s)", KernelSet())
	}
	r := rand.New(rand.NewPCG(73, 74))
	for _, f := range forms {
		rowCounts := []int{1, 2, 7, 33, 34}
		if f.pairs {
			rowCounts = []int{2, 34}
		}
		for _, n := range []int{32, 96, 544, 1536} {
			for _, rows := range rowCounts {
				for _, ntok := range f.ntoks {
					checkF16RowKernels(t, r, n, rows, ntok, f.pairs)
				}
			}
		}
	}
}

func checkF16RowKernels(t *testing.T, r *rand.Rand, n, rows, ntok int, pairs bool) {
	wrb := 2 * n
	ws, xs, os := wrb+10, wrb+6, rows+5
	w := make([]byte, (rows-1)*ws+wrb)
	x := make([]byte, (ntok-1)*xs+wrb)
	for i := range rows {
		if err := QuantizeRow(w[i*ws:i*ws+wrb], F16, randFloats(r, n, 0.05)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range ntok {
		quantizeF16ActGeneric(x[i*xs:i*xs+wrb], randFloats(r, n, 1))
	}
	out := make([]float32, 1+(ntok-1)*os+rows+1)
	for i := range out {
		out[i] = 13
	}
	if ntok == 1 {
		f16Rows2x1(&w[0], ws, rows, &x[0], n, &out[1])
	} else if pairs && ntok > 3 {
		f16Rows2x45(&w[0], ws, rows, &x[0], xs, ntok, n, &out[1], os)
	} else if pairs {
		f16Rows2x23(&w[0], ws, rows, &x[0], xs, ntok, n, &out[1], os)
	} else {
		f16Rows23(&w[0], ws, rows, &x[0], xs, ntok, n, &out[1], os)
	}
	for ti := range ntok {
		for ri := range rows {
			want := dotF16Generic(w[ri*ws:], x[ti*xs:], n)
			if got := out[1+ti*os+ri]; math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("n=%d rows=%d ntok=%d pairs=%v: out[%d,%d] = %g, reference %g", n, rows, ntok, pairs, ti, ri, got, want)
			}
		}
	}
	for i, v := range out {
		if k := i - 1; k < 0 || k%os >= rows || k/os >= ntok {
			if v != 13 {
				t.Fatalf("n=%d rows=%d ntok=%d pairs=%v: wrote out[%d] outside the outputs", n, rows, ntok, pairs, i)
			}
		}
	}
}
