package model

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/specd-dev/specd/kvsync"
)

// attnWorkers computes one layer's attention for a batch on the calling
// goroutine and helpers (as many as the tensor pool has, which are idle
// while attention runs). Work items are (KV head, run of tokens); each
// (token, query head) result is computed by the same code whichever
// goroutine takes it, so results do not depend on the thread count.
//
// The helpers hold no reference to the State: a cleanup registered on the
// State stops them when it becomes unreachable, so States need no Close.
type attnWorkers struct {
	wake    []chan struct{} // one per helper; closed to stop it
	wg      sync.WaitGroup
	job     attnJob
	scratch []attnScratch // [0] is the caller's
}

// attnScratch is one goroutine's buffers.
type attnScratch struct {
	qh, acc []float32 // (headDim)
}

// attnJob describes the layer being computed; set by run before waking the
// helpers and cleared after they finish.
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

func newAttnWorkers(helpers, headDim int) *attnWorkers {
	w := &attnWorkers{wake: make([]chan struct{}, helpers), scratch: make([]attnScratch, helpers+1)}
	for i := range w.scratch {
		w.scratch[i].qh = make([]float32, headDim)
		w.scratch[i].acc = make([]float32, headDim)
	}
	for i := range w.wake {
		w.wake[i] = make(chan struct{})
		go w.helper(w.wake[i], &w.scratch[i+1])
	}
	return w
}

// stop ends the helpers.
func (w *attnWorkers) stop() {
	for _, c := range w.wake {
		close(c)
	}
}

func (w *attnWorkers) helper(wake <-chan struct{}, sc *attnScratch) {
	for range wake {
		w.work(sc)
		w.wg.Done()
	}
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
	helpers := min(len(w.wake), j.items-1)
	w.wg.Add(helpers)
	for _, c := range w.wake[:helpers] {
		c <- struct{}{}
	}
	w.work(&w.scratch[0])
	w.wg.Wait()
	j.b, j.kv, j.q, j.att = nil, nil, nil, nil
}

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

// startAttnWorkers gives st its attention workers, with one helper per
// extra pool thread, stopped by a cleanup when st is collected.
func (st *State) startAttnWorkers() {
	st.attn = newAttnWorkers(st.pool.Threads()-1, st.m.Config.HeadDim)
	if len(st.attn.wake) > 0 {
		runtime.AddCleanup(st, func(w *attnWorkers) { w.stop() }, st.attn)
	}
}
