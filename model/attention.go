package model

import (
	"sync/atomic"

	"github.com/specd-dev/specd/kvsync"
	"github.com/specd-dev/specd/tensor"
)

// attnWorkers computes one layer's attention for a batch on the threads of
// the tensor pool (tensor.Pool.Parallel), which are otherwise idle while
// attention runs. Work items are (KV head, run of tokens); each (token,
// query head) result is computed by the same code whichever thread takes
// it, so results do not depend on the thread count.
type attnWorkers struct {
	pool    *tensor.Pool
	job     attnJob
	scratch []attnScratch // per pool thread
}

// attnScratch is one thread's buffers.
type attnScratch struct {
	qh, acc []float32 // (headDim)
}

// attnJob describes the layer being computed; set by run and cleared after
// the threads finish.
type attnJob struct {
	l                  int
	b                  *Batch
	kv                 *kvsync.Cache
	q, att             []float32
	heads, kvHeads, hd int
	scale              float32
	chunk, chunks      int // tokens per item, items per KV head
	items              int
	next               atomic.Int64
}

// attnChunk is the number of tokens per work item: small enough to share
// a decode batch of a few sequences among threads, large enough to keep
// the hand-out cheap.
const attnChunk = 8

func newAttnWorkers(pool *tensor.Pool, headDim int) *attnWorkers {
	w := &attnWorkers{pool: pool, scratch: make([]attnScratch, pool.Threads())}
	for i := range w.scratch {
		w.scratch[i].qh = make([]float32, headDim)
		w.scratch[i].acc = make([]float32, headDim)
	}
	return w
}

// run computes att for every token of b in layer l.
func (w *attnWorkers) run(l int, b *Batch, kv *kvsync.Cache, q, att []float32, c *Config, scale float32) {
	n := len(b.Tokens)
	j := &w.job
	j.l, j.b, j.kv, j.q, j.att = l, b, kv, q, att
	j.heads, j.kvHeads, j.hd, j.scale = c.Heads, c.KVHeads, c.HeadDim, scale
	j.chunk = attnChunk
	j.chunks = (n + attnChunk - 1) / attnChunk
	j.items = c.KVHeads * j.chunks
	j.next.Store(0)
	w.pool.Parallel(w, j.items)
	j.b, j.kv, j.q, j.att = nil, nil, nil, nil
}

// Run takes items as pool thread thread until none are left.
func (w *attnWorkers) Run(thread int) { w.work(&w.scratch[thread]) }

// work takes items until none are left.
func (w *attnWorkers) work(sc *attnScratch) {
	j := &w.job
	n := len(j.b.Tokens)
	hd, group := j.hd, j.heads/j.kvHeads
	qDim := j.heads * hd
	f32 := j.kv.IsF32()
	for {
		i := int(j.next.Add(1)) - 1
		if i >= j.items {
			return
		}
		g := i / j.chunks
		t0 := (i % j.chunks) * j.chunk
		t1 := min(t0+j.chunk, n)
		for t := t0; t < t1; t++ {
			seq, npos := int(j.b.Seq[t]), int(j.b.Pos[t])+1
			for h := g * group; h < (g+1)*group; h++ {
				qt := j.q[t*qDim+h*hd : t*qDim+(h+1)*hd]
				out := j.att[t*qDim+h*hd : t*qDim+(h+1)*hd]
				if f32 {
					kc, vc := j.kv.Head32(j.l, seq, g)
					attnF32(out, qt, kc, vc, npos, j.scale, sc.acc)
				} else {
					kc, vc := j.kv.Head16(j.l, seq, g)
					attnF16(out, qt, kc, vc, npos, j.scale, sc.qh, sc.acc)
				}
			}
		}
	}
}

// startAttnWorkers gives st its attention workers, one scratch per pool
// thread.
func (st *State) startAttnWorkers() {
	st.attn = newAttnWorkers(st.pool, st.m.Config.HeadDim)
}
