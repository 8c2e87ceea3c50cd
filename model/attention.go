package model

import (
	"math"
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
	sc, ms  []float32 // (attnBlock) scores, then weights; rescale factors
}

// attnBlock is the number of positions attnF16Blocked scores before it
// accumulates their values: its keys and values (16 KiB each at head size
// 64) stay in the L1 cache between the passes.
const attnBlock = 128

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
		w.scratch[i].sc = make([]float32, attnBlock)
		w.scratch[i].ms = make([]float32, attnBlock)
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
					attnF16Blocked(out, qt, kc, vc, npos, j.scale, sc)
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

// attnF16Blocked is attnF16 with its position loop split into three passes
// over blocks of attnBlock positions: every key's score (dotRowsF16, the
// rows independent, so their reductions overlap), then the online softmax
// in scalar code, recording per position the factor ms by which the
// accumulator is rescaled (1: not at all) and the weight vs of the value,
// then the values (madRowsF16, the accumulator held in registers across
// positions). Each output element sees the same operations in the same
// order as in attnF16 (scaling by exactly 1 leaves a half unchanged, so
// skipping it is exact); TestAttnBlocked checks it bit for bit.
func attnF16Blocked(out, q []float32, k, v []uint16, npos int, scale float32, sc *attnScratch) {
	d := len(q)
	qh, acc := sc.qh[:d], sc.acc[:d]
	for i, x := range q {
		qh[i] = roundF16(x)
		acc[i] = 0
	}
	m := float32(math.Inf(-1))
	var s float32
	for p0 := 0; p0 < npos; p0 += attnBlock {
		nb := min(attnBlock, npos-p0)
		ws, ms := sc.sc[:nb], sc.ms[:nb]
		dotRowsF16(ws, k[p0*d:(p0+nb)*d], qh)
		for i, dot := range ws {
			x := dot * scale
			f, w := float32(1), float32(1)
			if x > m {
				f = expf(m - x)
				m = x
			} else {
				w = expf(x - m)
			}
			ws[i], ms[i] = w, f
			s = fma32(s, f, w) // S = S*ms + vs
		}
		madRowsF16(acc, v[p0*d:(p0+nb)*d], ws, ms)
	}
	inv := float32(0)
	if s != 0 {
		inv = 1 / s
	}
	out = out[:d]
	for i, a := range acc {
		out[i] = a * inv
	}
}

// dotRowsF16Generic sets out[r] to dotAttnF16 of key row r of k (rows of
// len(q) halves) and q.
func dotRowsF16Generic(out []float32, k []uint16, q []float32) {
	d := len(q)
	for r := range out {
		out[r] = dotAttnF16(k[r*d:(r+1)*d], q)
	}
}

// dotRowsTailF16 finishes dotAttnF16 for rows whose first np elements are
// summed in out: the remaining products added in float64.
func dotRowsTailF16(out []float32, k []uint16, q []float32, np int) {
	d := len(q)
	for r, dot := range out {
		kr := k[r*d : (r+1)*d]
		sum := float64(dot)
		for i := np; i < d; i++ {
			sum += float64(tensor.F16ToF32(kr[i]) * q[i])
		}
		out[r] = float32(sum)
	}
}

// madRowsF16Generic accumulates the value rows of v (stride halves apart,
// len(acc) used) into acc as attnF16 does: per row p, acc rescaled by
// ms[p] unless it is 1, then ggml_vec_mad_f16 with weight vs[p].
func madRowsF16Generic(acc []float32, v []uint16, vs, ms []float32, stride int) {
	d := len(acc)
	ms = ms[:len(vs)]
	for p, w := range vs {
		if ms[p] != 1 {
			scaleHalfGeneric(acc, ms[p])
		}
		madHalfF16Generic(acc, v[p*stride:p*stride+d], w)
	}
}
