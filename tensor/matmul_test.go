package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func randMatrix(t testing.TB, r *rand.Rand, typ Type, rows, cols int) *Matrix {
	t.Helper()
	rb := RowSize(typ, cols)
	m := &Matrix{Type: typ, Rows: rows, Cols: cols, Data: make([]byte, rows*rb)}
	for i := range rows {
		if err := QuantizeRow(m.Data[i*rb:(i+1)*rb], typ, randFloats(r, cols, 0.05)); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	return m
}

var matmulTypes = []Type{F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL}

// TestMatMulBatchInvariant checks that every output equals the single dot
// product of its row and token, for n in 1..9 and 1..3 threads, bit for bit;
// Q8_0 in both of its summation orders.
func TestMatMulBatchInvariant(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	pools := []*Pool{NewPool(1), NewPool(2), NewPool(3)}
	defer func() {
		for _, p := range pools {
			p.Close()
		}
	}()
	for _, typ := range matmulTypes {
		checkBatchInvariant(t, r, pools, typ)
	}
	defer SetQ8_0Order(q8Order)
	SetQ8_0Order(Q8_0Lanes)
	checkBatchInvariant(t, r, pools, Q8_0)
}

func checkBatchInvariant(t *testing.T, r *rand.Rand, pools []*Pool, typ Type) {
	t.Helper()
	const rows, maxN = 37, 9
	cols := 96
	if typ.BlockSize() == 1 {
		cols = 100 // a float tail after the 32-element steps
	}
	m := randMatrix(t, r, typ, rows, cols)
	x := randFloats(r, maxN*cols, 1)
	k, _ := kernelFor(typ)
	aRow := RowSize(k.act, cols)
	want := make([]float32, maxN*rows)
	for tok := range maxN {
		a := make([]byte, aRow)
		actQuants[k.act](a, x[tok*cols:(tok+1)*cols])
		for row := range rows {
			want[tok*rows+row] = k.dot(m.Row(row), a, cols)
		}
	}
	for _, p := range pools {
		for n := 1; n <= maxN; n++ {
			// Each batch starts at a different token so tokens move
			// between batch positions.
			start := (n * 5) % (maxN - n + 1)
			out := make([]float32, n*rows+3)
			out[n*rows], out[n*rows+1], out[n*rows+2] = 7, 7, 7
			p.MatMul(out, m, x[start*cols:(start+n)*cols], n)
			for i := range n * rows {
				if math.Float32bits(out[i]) != math.Float32bits(want[start*rows+i]) {
					t.Fatalf("%v (Q8_0 order %d) threads=%d n=%d: out[%d] = %g, single dot %g", typ, q8Order, p.Threads(), n, i, out[i], want[start*rows+i])
				}
			}
			if out[n*rows] != 7 || out[n*rows+2] != 7 {
				t.Fatalf("%v threads=%d n=%d: wrote past the output", typ, p.Threads(), n)
			}
		}
	}
}

func TestMatMulPrepared(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	p := NewPool(2)
	defer p.Close()
	for _, typ := range matmulTypes {
		m := randMatrix(t, r, typ, 20, 64)
		x := randFloats(r, 3*64, 1)
		want := make([]float32, 3*20)
		p.MatMul(want, m, x, 3)
		act, _ := ActType(typ)
		a := PrepareActivations(nil, act, x, 64, 3)
		got := make([]float32, 3*20)
		p.MatMulPrepared(got, m, a, 3)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%v: prepared out[%d] = %g, MatMul %g", typ, i, got[i], want[i])
			}
		}
	}
}

func TestMatMulNoAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, threads := range []int{1, 2} {
		p := NewPool(threads)
		for _, typ := range matmulTypes {
			m := randMatrix(t, r, typ, 64, 128)
			x := randFloats(r, 4*128, 1)
			out := make([]float32, 4*64)
			p.MatMul(out, m, x, 4) // warm-up grows the scratch
			if a := testing.AllocsPerRun(20, func() { p.MatMul(out, m, x, 4) }); a != 0 {
				t.Errorf("%v threads=%d: %v allocations per MatMul", typ, threads, a)
			}
		}
		p.Close()
	}
}

func TestMatrixCheck(t *testing.T) {
	for _, c := range []struct {
		m    Matrix
		want bool
	}{
		{Matrix{Type: Q8_0, Rows: 2, Cols: 32, Data: make([]byte, 68)}, true},
		{Matrix{Type: Q8_0, Rows: 2, Cols: 33, Data: make([]byte, 68)}, false},
		{Matrix{Type: Q8_0, Rows: 2, Cols: 32, Data: make([]byte, 67)}, false},
		{Matrix{Type: Q8_1, Rows: 2, Cols: 32, Data: make([]byte, 72)}, false}, // activation-only
		{Matrix{Type: F32, Rows: 0, Cols: 32}, false},
	} {
		if err := c.m.Check(); (err == nil) != c.want {
			t.Errorf("%v %d×%d with %d bytes: Check() = %v", c.m.Type, c.m.Rows, c.m.Cols, len(c.m.Data), err)
		}
	}
}

func TestPoolCloseTwice(t *testing.T) {
	p := NewPool(3)
	p.Close()
	p.Close()
}

// BenchmarkMatMul streams a 1536×512 matrix (an FFN projection of the
// 58M-parameter reference model) for 1 and 5 tokens; the bytes per second
// are weight bytes, so n=5 close to n=1 means verifying k+1 tokens costs
// little more than decoding one.
func BenchmarkMatMul(b *testing.B) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, typ := range matmulTypes {
		m := randMatrix(b, r, typ, 1536, 512)
		benchMatMulPools(b, m, func(n int) []float32 { return randFloats(r, n*512, 1) })
	}
}

// benchMatMulPools runs MatMul on m with pools of one and two threads and
// batches of one and five tokens, xs(n) giving the n tokens' activations,
// as sub-benchmarks named type/threads=T/n=N.
func benchMatMulPools(b *testing.B, m *Matrix, xs func(n int) []float32) {
	for _, threads := range []int{1, 2} {
		p := NewPool(threads)
		for _, n := range []int{1, 5} {
			x := xs(n)
			out := make([]float32, n*m.Rows)
			b.Run(fmt.Sprintf("%v/threads=%d/n=%d", m.Type, threads, n), func(b *testing.B) {
				b.SetBytes(int64(len(m.Data)))
				c0 := cpuNanos()
				for b.Loop() {
					p.MatMul(out, m, x, n)
				}
				reportCPU(b, c0, len(m.Data))
			})
		}
		p.Close()
	}
}

// reportCPU adds the CPU time per operation since c0 and the weight bytes
// streamed per CPU-second: on a busy machine these track the kernel's cost
// where wall time does not.
func reportCPU(b *testing.B, c0 int64, bytes int) {
	c := cpuNanos() - c0
	if c <= 0 || b.N == 0 {
		return
	}
	b.ReportMetric(float64(c)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(bytes)*float64(b.N)/float64(c), "GB/cpu-s")
}

// streamCopies returns copies of m (at least two) totalling about 128 MiB,
// four times the last-level cache: cycling through them, as benchStream
// does, streams the weights from memory as a decode step through a model's
// layers does.
func streamCopies(m *Matrix) []Matrix {
	copies := max(2, (128<<20)/len(m.Data))
	data := make([]byte, copies*len(m.Data))
	ms := make([]Matrix, copies)
	for i := range ms {
		copy(data[i*len(m.Data):], m.Data)
		ms[i] = *m
		ms[i].Data = data[i*len(m.Data) : (i+1)*len(m.Data)]
	}
	return ms
}

// benchStream times one n-token MatMul per iteration on p, through the
// matrices of ms in turn, and reports CPU time and weight bytes per
// CPU-second.
func benchStream(b *testing.B, p *Pool, ms []Matrix, x []float32, n int, out []float32) {
	b.SetBytes(int64(len(ms[0].Data)))
	c0 := cpuNanos()
	i := 0
	for b.Loop() {
		p.MatMul(out, &ms[i], x, n)
		if i++; i == len(ms) {
			i = 0
		}
	}
	reportCPU(b, c0, len(ms[0].Data))
}

// BenchmarkPoolOverhead measures a MatMul too small to be worth splitting
// except for the cost of waking and joining the helpers.
func BenchmarkPoolOverhead(b *testing.B) {
	r := rand.New(rand.NewPCG(19, 20))
	m := randMatrix(b, r, Q8_0, 64, 64)
	x := randFloats(r, 64, 1)
	out := make([]float32, 64)
	for _, threads := range []int{1, 2} {
		p := NewPool(threads)
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			c0 := cpuNanos()
			for b.Loop() {
				p.MatMul(out, m, x, 1)
			}
			reportCPU(b, c0, len(m.Data))
		})
		p.Close()
	}
}

// BenchmarkMatMulStream is BenchmarkMatMul with the weights streamed from
// memory: it cycles through copies of the matrix totalling 128 MiB, four
// times the last-level cache, as a decode step does through a model's
// layers. This is the regime in which "n=5 costs about as much as n=1"
// should hold.
func BenchmarkMatMulStream(b *testing.B) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, typ := range matmulTypes {
		ms := streamCopies(randMatrix(b, r, typ, 1536, 512))
		for _, threads := range []int{1, 2} {
			p := NewPool(threads)
			for _, n := range []int{1, 5} {
				x := randFloats(r, n*512, 1)
				out := make([]float32, n*1536)
				b.Run(fmt.Sprintf("%v/threads=%d/n=%d", typ, threads, n), func(b *testing.B) {
					benchStream(b, p, ms, x, n, out)
				})
			}
			p.Close()
		}
	}
}

// TestPoolsConcurrent runs two pools at once from two goroutines (as the
// draft and the target do) on a shared matrix and checks every result.
func TestPoolsConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	m := randMatrix(t, r, Q8_0, 96, 64)
	x := randFloats(r, 3*64, 1)
	want := make([]float32, 3*96)
	ref := NewPool(1)
	ref.MatMul(want, m, x, 3)
	ref.Close()

	errs := make(chan error, 2)
	for g := range 2 {
		go func() {
			p := NewPool(2)
			defer p.Close()
			out := make([]float32, 3*96)
			for it := range 200 {
				clear(out)
				p.MatMul(out, m, x, 3)
				for i := range out {
					if out[i] != want[i] {
						errs <- fmt.Errorf("goroutine %d, iteration %d: out[%d] = %g, want %g", g, it, i, out[i], want[i])
						return
					}
				}
			}
			errs <- nil
		}()
	}
	timeout := time.After(30 * time.Second)
	for range 2 {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatal(err)
			}
		case <-timeout:
			t.Fatal("pools did not finish within 30 s")
		}
	}
}
