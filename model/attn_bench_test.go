package model

import (
	"fmt"
	"math"
	"testing"

	"github.com/specd-dev/specd/kvsync"
	"github.com/specd-dev/specd/tensor"
)

// attnBenchCase is the attention of one forward pass of the benchmark
// model (8 layers, 8 query heads, 4 KV heads, head size 64, F16 cache) for
// n consecutive tokens of one sequence after ctx positions of context.
type attnBenchCase struct {
	w      *attnWorkers
	kv     *kvsync.Cache
	b      Batch
	q, att []float32
	c      Config
	scale  float32
}

func newAttnBenchCase(tb testing.TB, pool *tensor.Pool, ctx, n int) *attnBenchCase {
	c := Config{Layers: 8, Heads: 8, KVHeads: 4, HeadDim: 64}
	kv, err := kvsync.New(kvsync.Config{Layers: c.Layers, KVHeads: c.KVHeads, HeadDim: c.HeadDim, Seqs: 1, MaxPos: ctx + n})
	if err != nil {
		tb.Fatal(err)
	}
	x := xorshift(uint64(ctx*31 + n))
	rnd := func() float32 { return float32(int64(x.next()%2001)-1000) / 500 }
	for l := range c.Layers {
		for h := range c.KVHeads {
			k, v := kv.Head16(l, 0, h)
			for i := range k {
				k[i], v[i] = tensor.F32ToF16(rnd()), tensor.F32ToF16(rnd())
			}
		}
	}
	a := &attnBenchCase{w: newAttnWorkers(pool, &c), kv: kv, c: c, scale: 1 / float32(math.Sqrt(float64(c.HeadDim)))}
	a.q, a.att = make([]float32, n*c.Heads*c.HeadDim), make([]float32, n*c.Heads*c.HeadDim)
	for i := range a.q {
		a.q[i] = rnd()
	}
	for i := range n {
		a.b.Add(1, int32(ctx+i), 0, true)
	}
	return a
}

// pass computes every layer's attention once.
func (a *attnBenchCase) pass() {
	for l := range a.c.Layers {
		a.w.run(l, &a.b, a.kv, a.q, a.att, &a.c, a.scale)
	}
}

// BenchmarkAttnPass measures the attention of a whole forward pass of the
// benchmark model (8 layers) on one thread: ns/op is per pass, cpu-ns/op
// the process's CPU time per pass (steadier on a shared machine).
func BenchmarkAttnPass(b *testing.B) {
	for _, ctx := range []int{64, 512} {
		for _, n := range []int{1, 5} {
			b.Run(fmt.Sprintf("ctx=%d/tokens=%d", ctx, n), func(b *testing.B) {
				pool := tensor.NewPool(1)
				defer pool.Close()
				a := newAttnBenchCase(b, pool, ctx, n)
				cpu0 := cpuTime()
				for b.Loop() {
					a.pass()
				}
				if cpu := cpuTime() - cpu0; cpu > 0 {
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}
