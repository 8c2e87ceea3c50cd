package model

import (
	"math"
	"sync/atomic"

	"github.com/specd-dev/specd/internal/libm"
	"github.com/specd-dev/specd/kvsync"
	"github.com/specd-dev/specd/tensor"
)

// attnWorkers computes one layer's attention for a batch on the threads of
// the tensor pool (tensor.Pool.Parallel), which are otherwise idle while
// attention runs. Work items are (KV head, run of tokens); each (token,
// query head) result is computed by the same code whichever thread takes
// it, so results do not depend on the thread count.
//
// With an F16 cache an item reads its keys and values once per block for
// all its queries (the query heads of its KV head, for each of its tokens
// of one sequence): per block of attnBlock positions, while they sit in the
// L1 cache, every query scores the keys it sees (dotRowsF16, the rows
// independent so their reductions overlap), finds its running maximum and
// each position's exponent in scalar code, takes the exponentials four at
// a time (expfs), then accumulates the values and the sum (madRowsF16, the
// accumulator held in registers across positions). Every query keeps its
// own maximum, sum and accumulator across blocks and sees exactly the
// operations of attnF16 in its order; TestAttnWorkersOneByOne checks it
// bit for bit.
type attnWorkers struct {
	pool    *tensor.Pool
	job     attnJob
	scratch []attnScratch // per pool thread
}

// attnScratch is one thread's buffers; an item has up to attnChunk*group
// queries.
type attnScratch struct {
	qh, acc []float32 // (attnChunk*group, headDim) half-rounded queries; accumulators
	m, s    []float32 // (attnChunk*group) running maximum and sum
	ws, ms  []float32 // (attnBlock) scores, exponents, then exponentials; flags (0: the maximum rose)
}

// attnBlock is the most positions an item takes at a time: their keys and
// values (8 KiB each at head size 64) stay in the L1 cache while every
// query of the item reads them.
const attnBlock = 64

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

func newAttnWorkers(pool *tensor.Pool, c *Config) *attnWorkers {
	w := &attnWorkers{pool: pool, scratch: make([]attnScratch, pool.Threads())}
	hd, nq := c.HeadDim, attnChunk*(c.Heads/c.KVHeads)
	for i := range w.scratch {
		sc := &w.scratch[i]
		sc.qh, sc.acc = make([]float32, nq*hd), make([]float32, nq*hd)
		sc.m, sc.s = make([]float32, nq), make([]float32, nq)
		sc.ws, sc.ms = make([]float32, attnBlock), make([]float32, attnBlock)
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
		if !f32 {
			// Runs of tokens of one sequence share their keys and values.
			for t := t0; t < t1; {
				u := t + 1
				for u < t1 && j.b.Seq[u] == j.b.Seq[t] {
					u++
				}
				w.itemF16(sc, g, t, u)
				t = u
			}
			continue
		}
		for t := t0; t < t1; t++ {
			seq := int(j.b.Seq[t])
			lo, hi := j.span(t)
			kc, vc := j.kv.Head32(j.l, seq, g)
			for h := g * group; h < (g+1)*group; h++ {
				qt := j.q[t*qDim+h*hd : t*qDim+(h+1)*hd]
				out := j.att[t*qDim+h*hd : t*qDim+(h+1)*hd]
				attnF32(out, qt, kc[lo*hd:], vc[lo*hd:], hi-lo, j.scale, sc.acc)
			}
		}
	}
}

// span is the range [lo, hi) of cache indices that token t attends to.
func (j *attnJob) span(t int) (lo, hi int) {
	seq, pos := int(j.b.Seq[t]), int(j.b.Pos[t])
	return j.kv.Index(seq, j.kv.Visible(pos)), j.kv.Index(seq, pos) + 1
}

// itemF16 computes the attention of tokens [t0, t1) of one sequence for the
// query heads of KV head g, from an F16 cache (see attnWorkers).
func (w *attnWorkers) itemF16(sc *attnScratch, g, t0, t1 int) {
	j := &w.job
	hd, group := j.hd, j.heads/j.kvHeads
	qDim := j.heads * hd
	kc, vc := j.kv.Head16(j.l, int(j.b.Seq[t0]), g)
	nq := (t1 - t0) * group
	first, end := math.MaxInt, 0
	for t := t0; t < t1; t++ {
		lo, hi := j.span(t)
		first, end = min(first, lo), max(end, hi)
		for h := range group {
			qi := (t-t0)*group + h
			qt := j.q[t*qDim+(g*group+h)*hd : t*qDim+(g*group+h+1)*hd]
			qh, acc := sc.qh[qi*hd:(qi+1)*hd], sc.acc[qi*hd:(qi+1)*hd]
			for i, x := range qt {
				// roundF16, its common case inlined
				if u := math.Float32bits(x); isNormalHalf(u) {
					qh[i] = roundNormalHalf(u)
				} else {
					qh[i] = roundF16Rare(x)
				}
				acc[i] = 0
			}
			sc.m[qi], sc.s[qi] = float32(math.Inf(-1)), 0
		}
	}
	// Blocks of equal size (at most attnBlock): no short block at the end.
	blocks := (end - first + attnBlock - 1) / attnBlock
	size := (end - first + blocks - 1) / max(blocks, 1)
	for p0 := first; p0 < end; p0 += size {
		nb := min(size, end-p0)
		for t := t0; t < t1; t++ {
			lo, hi := j.span(t)
			a, b := max(lo, p0)-p0, min(hi, p0+nb)-p0
			if a >= b {
				continue
			}
			kb, vb := kc[(p0+a)*hd:(p0+b)*hd], vc[(p0+a)*hd:(p0+b)*hd]
			ws, ms := sc.ws[:b-a], sc.ms[:b-a]
			for h := range group {
				qi := (t-t0)*group + h
				dotRowsF16(ws, kb, sc.qh[qi*hd:(qi+1)*hd])
				// The online softmax: the running maximum and each
				// position's exponent first (flag 0 where the maximum
				// rises), then all the exponentials, then the values and
				// the sum.
				m := sc.m[qi]
				for i, dot := range ws {
					x := float32(dot * j.scale) // rounded: m-x and x-m must not fuse (FMA-fusing targets)
					if x > m {
						ws[i], ms[i] = m-x, 0
						m = x
					} else {
						ws[i], ms[i] = x-m, 1
					}
				}
				sc.m[qi] = m
				expfs(ws)
				sc.s[qi] = madRowsF16(sc.acc[qi*hd:(qi+1)*hd], vb, ws, ms, sc.s[qi])
			}
		}
	}
	for qi := range nq {
		t, h := t0+qi/group, g*group+qi%group
		inv := float32(0)
		if s := sc.s[qi]; s != 0 {
			inv = 1 / s
		}
		out := j.att[t*qDim+h*hd : t*qDim+(h+1)*hd]
		for i, a := range sc.acc[qi*hd : (qi+1)*hd] {
			out[i] = a * inv
		}
	}
}

// startAttnWorkers gives st its attention workers, one scratch per pool
// thread.
func (st *State) startAttnWorkers() {
	st.attn = newAttnWorkers(st.pool, &st.m.Config)
}

// dotRowsF16Generic sets out[r] to dotAttnF16 of key row r of k (rows of
// len(q) halves) and q: each row's vector part, then the tails of four
// rows at a time (dotRowsTailF16).
func dotRowsF16Generic(out []float32, k []uint16, q []float32) {
	d := len(q)
	np := attnVecPart(d)
	for r := range out {
		switch kr := k[r*d : r*d+np]; {
		case np == 0:
			out[r] = 0
		case ggmlLanes == 16:
			out[r] = dot64F16(kr, q[:np])
		default:
			out[r] = dot32F16(kr, q[:np])
		}
	}
	if np < d {
		dotRowsTailF16(out, k, q, np)
	}
}

// dotRowsTailF16 finishes dotAttnF16 for rows whose first np elements are
// summed in out: the remaining products added in float64, in order, as
// dotAttnF16 does. Four rows go at a time, their four addition chains
// independent (each still in its row's order), so that the CPU overlaps
// their latencies.
func dotRowsTailF16(out []float32, k []uint16, q []float32, np int) {
	d := len(q)
	qt := q[np:d]
	n := len(qt)
	r := 0
	for ; r+4 <= len(out); r += 4 {
		k0 := k[r*d+np : r*d+np+n]
		k1 := k[(r+1)*d+np : (r+1)*d+np+n]
		k2 := k[(r+2)*d+np : (r+2)*d+np+n]
		k3 := k[(r+3)*d+np : (r+3)*d+np+n]
		s0, s1, s2, s3 := float64(out[r]), float64(out[r+1]), float64(out[r+2]), float64(out[r+3])
		for i, x := range qt {
			s0 += float64(tensor.F16ToF32(k0[i]) * x)
			s1 += float64(tensor.F16ToF32(k1[i]) * x)
			s2 += float64(tensor.F16ToF32(k2[i]) * x)
			s3 += float64(tensor.F16ToF32(k3[i]) * x)
		}
		out[r], out[r+1], out[r+2], out[r+3] = float32(s0), float32(s1), float32(s2), float32(s3)
	}
	for ; r < len(out); r++ {
		kr := k[r*d+np : r*d+np+n]
		sum := float64(out[r])
		for i, x := range qt {
			sum += float64(tensor.F16ToF32(kr[i]) * x)
		}
		out[r] = float32(sum)
	}
}

// madRowsF16Generic accumulates the value rows of v (stride halves apart,
// len(acc) used) into acc and the softmax sum s as attnF16 does, given per
// row p the exponential e[p] and flag[p] (0 where the row raised the
// maximum): then acc is rescaled by e[p] (ggml_vec_scale_f16), the value's
// weight is 1 and S = S*e[p] + 1; else the weight is e[p] and S = S*1 + e[p].
// The value is added with ggml_vec_mad_f16. It returns s.
func madRowsF16Generic(acc []float32, v []uint16, e, flag []float32, stride int, s float32) float32 {
	d := len(acc)
	flag = flag[:len(e)]
	for p, x := range e {
		w := x
		if flag[p] == 0 {
			scaleHalfGeneric(acc, x)
			w = 1
			s = fma32(s, x, 1)
		} else {
			s = fma32(s, 1, x)
		}
		madHalfF16Generic(acc, v[p*stride:p*stride+d], w)
	}
	return s
}

// expfs sets x[i] = expf(x[i]): libm's vector form, four lanes at a time
// where the CPU has them (the kernel set in use; package tensor selects
// it), every result expf's.
func expfs(x []float32) { libm.Expfs(x) }
