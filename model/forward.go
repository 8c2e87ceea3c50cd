package model

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/specd-dev/specd/kvsync"
	"github.com/specd-dev/specd/tensor"
)

// ErrBatch is wrapped by every error Forward returns for a malformed batch.
var ErrBatch = errors.New("model: bad batch")

// State holds the run-state buffers of forward passes of up to maxBatch
// tokens. It is used by one goroutine at a time; several States may share a
// Model. All buffers are allocated by NewState (and a small per-slot table on
// the first call with a given cache), so Forward does not allocate.
type State struct {
	m        *Model
	pool     *tensor.Pool
	maxBatch int

	thetaScale float32 // base^(-2/headDim)
	kqScale    float32 // 1/sqrt(headDim)

	x   []float32 // (maxBatch, dim) residual stream
	xb  []float32 // (maxBatch, dim) normed input of a matmul
	xb2 []float32 // (maxBatch, dim) output of attn_output / ffn_down
	q   []float32 // (maxBatch, heads*headDim)
	k   []float32 // (maxBatch, kvHeads*headDim)
	v   []float32 // (maxBatch, kvHeads*headDim)
	att []float32 // (maxBatch, heads*headDim) attention output
	hb  []float32 // (maxBatch, ffn) gate, then silu(gate)*up
	hb2 []float32 // (maxBatch, ffn) up
	cs  []float32 // (maxBatch, headDim) RoPE (cos, sin) pairs per token

	attn *attnWorkers // attention on the pool's threads, with their scratch

	seqEnd []int  // (cache slots) scratch for batch validation
	seqLo  []int  // (cache slots) first position of each sequence in the batch, -1 if absent
	act    []byte // activations converted once for matrices sharing an input

	prof *Profile // nil: Forward times nothing
}

// Op is a stage of Forward that a Profile times.
type Op int

// The stages of Forward, summed over layers.
const (
	OpEmbed     Op = iota // token embeddings and RoPE angles
	OpNorm                // RMS norms: attention, feed-forward and final
	OpQKV                 // Q, K, V projections (and biases)
	OpRoPEKV              // RoPE of q and k, and k, v into the KV cache
	OpAttention           // causal attention over the cache
	OpAttnOut             // attn_output projection and the residual add
	OpGateUp              // ffn_gate and ffn_up projections
	OpSwiGLU              // silu(gate) * up
	OpDown                // ffn_down projection and the residual add
	OpOutput              // output head (logits)
	NumOps
)

var opNames = [NumOps]string{"embed", "norms", "Q K V projections", "RoPE + KV write", "attention", "attn_output", "ffn gate + up", "SwiGLU", "ffn_down", "output head"}

func (o Op) String() string {
	if o < 0 || o >= NumOps {
		return fmt.Sprintf("op %d", int(o))
	}
	return opNames[o]
}

// Profile accumulates the wall time of each Op over the Forward calls of
// the State it is set on.
type Profile [NumOps]time.Duration

// SetProfile makes Forward add the time of each of its stages to p (nil:
// time nothing, the default; off, it costs a nil check per stage).
func (st *State) SetProfile(p *Profile) { st.prof = p }

// lap adds the time since *t to op and restarts *t, if profiling.
func (st *State) lap(op Op, t *time.Time) {
	if st.prof == nil {
		return
	}
	now := time.Now()
	st.prof[op] += now.Sub(*t)
	*t = now
}

// NewState allocates run-state buffers for batches of up to maxBatch tokens
// (at least 1), computing matrix products on pool. A nil pool means a
// single-threaded pool owned by the State.
func (m *Model) NewState(maxBatch int, pool *tensor.Pool) *State {
	if maxBatch < 1 {
		maxBatch = 1
	}
	if pool == nil {
		pool = tensor.NewPool(1)
	}
	c := m.Config
	qDim, kvDim := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	f := func(n int) []float32 { return make([]float32, maxBatch*n) }
	st := &State{
		m:          m,
		pool:       pool,
		maxBatch:   maxBatch,
		thetaScale: ropeThetaScale(c.RopeBase, c.HeadDim),
		kqScale:    1 / float32(math.Sqrt(float64(c.HeadDim))),
		x:          f(c.Dim),
		xb:         f(max(c.Dim, qDim)),
		xb2:        f(c.Dim),
		q:          f(qDim),
		k:          f(kvDim),
		v:          f(kvDim),
		att:        f(qDim),
		hb:         f(c.FFN),
		hb2:        f(c.FFN),
		cs:         f(c.HeadDim),
	}
	st.startAttnWorkers()
	return st
}

// MaxBatch is the largest batch Forward accepts.
func (st *State) MaxBatch() int { return st.maxBatch }

// Model returns the model the state runs.
func (st *State) Model() *Model { return st.m }

// Forward runs the model on batch b with cache kv. For every token it writes
// the token's keys and values at (Seq, Pos) of kv, attends causally over
// positions [0, Pos] of its own sequence, and, for each token with Logits
// set, writes Vocab logits into logits, in batch order (logits must hold at
// least b.NumLogits()*Vocab values). A token's position must not exceed its
// sequence's length in kv extended by the earlier tokens of the batch (no
// gaps), and a (sequence, position) pair may appear once. Afterwards each
// sequence's length is max(its length, largest position + 1). With a
// sliding-window cache a token attends to the window's positions only, and
// the cache slides forward as positions run past its size.
//
// The result for each token is bit-identical whatever else is in the batch
// and whatever the pool's thread count. Forward does not allocate.
func (st *State) Forward(b *Batch, kv *kvsync.Cache, logits []float32) error {
	nl, err := st.validate(b, kv, logits)
	if err != nil {
		return err
	}
	n := len(b.Tokens)
	c := st.m.Config
	w := &st.m.w
	dim, hd, ffn := c.Dim, c.HeadDim, c.FFN
	qDim, kvDim := c.Heads*hd, c.KVHeads*hd
	mode := st.m.arch.rope
	f32 := kv.IsF32()
	var t0 time.Time
	if st.prof != nil {
		t0 = time.Now()
	}

	// Token embeddings and the RoPE angles of each position.
	emb := w.tokEmbd
	rs := tensor.RowSize(emb.Type, dim)
	for t := range n {
		tok := int(b.Tokens[t])
		tensor.DequantizeRow(st.x[t*dim:(t+1)*dim], emb.Type, emb.Data[tok*rs:(tok+1)*rs])
		ropeAngles(st.cs[t*hd:(t+1)*hd], b.Pos[t], st.thetaScale)
	}
	st.lap(OpEmbed, &t0)

	for l := range w.layers {
		lw := &w.layers[l]

		// Attention: xb = rmsnorm(x) * attn_norm; q, k, v = W·xb (+ bias).
		for t := range n {
			rmsnorm(st.xb[t*dim:(t+1)*dim], st.x[t*dim:(t+1)*dim], lw.attnNorm, c.NormEps)
		}
		st.lap(OpNorm, &t0)
		st.project(st.xb, n, st.q, lw.wq, st.k, lw.wk, st.v, lw.wv)
		if lw.bq != nil {
			for t := range n {
				addTo(st.q[t*qDim:(t+1)*qDim], lw.bq)
				addTo(st.k[t*kvDim:(t+1)*kvDim], lw.bk)
				addTo(st.v[t*kvDim:(t+1)*kvDim], lw.bv)
			}
		}
		st.lap(OpQKV, &t0)

		// RoPE on q and k, then k and v into the cache at (seq, pos).
		for t := range n {
			cs := st.cs[t*hd : (t+1)*hd]
			for h := range c.Heads {
				rope(st.q[t*qDim+h*hd:t*qDim+(h+1)*hd], cs, mode)
			}
			seq, pos := int(b.Seq[t]), int(b.Pos[t])
			for g := range c.KVHeads {
				kt := st.k[t*kvDim+g*hd : t*kvDim+(g+1)*hd]
				vt := st.v[t*kvDim+g*hd : t*kvDim+(g+1)*hd]
				rope(kt, cs, mode)
				i := kv.Index(seq, pos)
				if f32 {
					kc, vc := kv.Head32(l, seq, g)
					copy(kc[i*hd:(i+1)*hd], kt)
					copy(vc[i*hd:(i+1)*hd], vt)
				} else {
					kc, vc := kv.Head16(l, seq, g)
					tensor.F32ToF16s(kc[i*hd:(i+1)*hd], kt)
					tensor.F32ToF16s(vc[i*hd:(i+1)*hd], vt)
				}
			}
		}

		st.lap(OpRoPEKV, &t0)

		// Causal attention of each token and query head over its sequence,
		// shared among the pool's threads.
		st.attn.run(l, b, kv, st.q, st.att, &c, st.kqScale)
		st.lap(OpAttention, &t0)

		// After the last layer's attention only the rows that want logits
		// matter (their keys and values are written): keep those, in order.
		rows := n
		if l == len(w.layers)-1 && nl < n {
			j := 0
			for t := range n {
				if b.Logits[t] {
					copy(st.x[j*dim:(j+1)*dim], st.x[t*dim:(t+1)*dim])
					copy(st.att[j*qDim:(j+1)*qDim], st.att[t*qDim:(t+1)*qDim])
					j++
				}
			}
			rows = nl
			if rows == 0 {
				break
			}
		}
		st.pool.MatMul(st.xb2, lw.wo, st.att, rows)
		addTo(st.x[:rows*dim], st.xb2[:rows*dim])
		st.lap(OpAttnOut, &t0)

		// Feed-forward: x += down · (silu(gate·xb) * up·xb), xb = rmsnorm(x).
		for t := range rows {
			rmsnorm(st.xb[t*dim:(t+1)*dim], st.x[t*dim:(t+1)*dim], lw.ffnNorm, c.NormEps)
		}
		st.lap(OpNorm, &t0)
		st.project(st.xb, rows, st.hb, lw.gate, st.hb2, lw.up, nil, nil)
		st.lap(OpGateUp, &t0)
		for t := range rows {
			swiglu(st.hb[t*ffn:(t+1)*ffn], st.hb2[t*ffn:(t+1)*ffn])
		}
		st.lap(OpSwiGLU, &t0)
		st.pool.MatMul(st.xb2, lw.down, st.hb, rows)
		addTo(st.x[:rows*dim], st.xb2[:rows*dim])
		st.lap(OpDown, &t0)
	}

	// Final norm and output projection: the first nl rows of x are the
	// tokens that want logits, in batch order.
	if nl > 0 {
		for j := range nl {
			rmsnorm(st.xb[j*dim:(j+1)*dim], st.x[j*dim:(j+1)*dim], w.outNorm, c.NormEps)
		}
		st.lap(OpNorm, &t0)
		st.pool.MatMul(logits[:nl*c.Vocab], w.output, st.xb, nl)
		st.lap(OpOutput, &t0)
	}

	for t := range n {
		seq, end := int(b.Seq[t]), int(b.Pos[t])+1
		if end > kv.Len(seq) {
			kv.SetLen(seq, end) // cannot fail: validated above
		}
	}
	return nil
}

// project multiplies the n rows of x by two or three matrices (m3 may be
// nil) of the same input width, converting the activations once when the
// matrices share a weight type (Q, K, V; gate and up).
func (st *State) project(x []float32, n int, o1 []float32, m1 *tensor.Matrix, o2 []float32, m2 *tensor.Matrix, o3 []float32, m3 *tensor.Matrix) {
	at, _ := tensor.ActType(m1.Type)
	if at == tensor.F32 || m2.Type != m1.Type || (m3 != nil && m3.Type != m1.Type) {
		st.pool.MatMul(o1, m1, x, n)
		st.pool.MatMul(o2, m2, x, n)
		if m3 != nil {
			st.pool.MatMul(o3, m3, x, n)
		}
		return
	}
	st.act = tensor.PrepareActivations(st.act, at, x, m1.Cols, n)
	st.pool.MatMulPrepared(o1, m1, st.act, n)
	st.pool.MatMulPrepared(o2, m2, st.act, n)
	if m3 != nil {
		st.pool.MatMulPrepared(o3, m3, st.act, n)
	}
}

// validate checks b against the state, the model and kv, and returns the
// number of tokens that want logits. It allocates only on error (and for
// the per-slot table the first time a cache with more slots is seen).
func (st *State) validate(b *Batch, kv *kvsync.Cache, logits []float32) (int, error) {
	n := len(b.Tokens)
	if n == 0 {
		return 0, fmt.Errorf("%w: empty", ErrBatch)
	}
	if n > st.maxBatch {
		return 0, fmt.Errorf("%w: %d tokens exceed the state's maximum batch of %d", ErrBatch, n, st.maxBatch)
	}
	if len(b.Pos) != n || len(b.Seq) != n || len(b.Logits) != n {
		return 0, fmt.Errorf("%w: %d tokens but %d positions, %d sequence ids, %d logits flags", ErrBatch, n, len(b.Pos), len(b.Seq), len(b.Logits))
	}
	if kv == nil {
		return 0, fmt.Errorf("%w: nil cache", ErrBatch)
	}
	c := st.m.Config
	kc := kv.Config()
	if kc.Layers != c.Layers || kc.KVHeads != c.KVHeads || kc.HeadDim != c.HeadDim {
		return 0, fmt.Errorf("%w: cache shaped for %d layers × %d KV heads × %d, model has %d × %d × %d",
			ErrBatch, kc.Layers, kc.KVHeads, kc.HeadDim, c.Layers, c.KVHeads, c.HeadDim)
	}
	if len(st.seqEnd) < kc.Seqs {
		st.seqEnd, st.seqLo = make([]int, kc.Seqs), make([]int, kc.Seqs)
	}
	for s := range kc.Seqs {
		st.seqEnd[s], st.seqLo[s] = kv.Len(s), -1
	}
	nl := 0
	for t := range n {
		tok, pos, seq := b.Tokens[t], int(b.Pos[t]), int(b.Seq[t])
		if tok < 0 || int(tok) >= c.Vocab {
			return 0, fmt.Errorf("%w: token %d: id %d outside the vocabulary [0, %d)", ErrBatch, t, tok, c.Vocab)
		}
		if seq < 0 || seq >= kc.Seqs {
			return 0, fmt.Errorf("%w: token %d: sequence %d outside the cache's %d slots", ErrBatch, t, seq, kc.Seqs)
		}
		if pos < 0 || (kc.Window == 0 && pos >= kc.MaxPos) {
			return 0, fmt.Errorf("%w: token %d: position %d outside the cache's %d positions", ErrBatch, t, pos, kc.MaxPos)
		}
		if pos > st.seqEnd[seq] {
			return 0, fmt.Errorf("%w: token %d: position %d of sequence %d leaves a gap (sequence has %d positions)", ErrBatch, t, pos, seq, st.seqEnd[seq])
		}
		st.seqEnd[seq] = max(st.seqEnd[seq], pos+1)
		if lo := st.seqLo[seq]; lo < 0 || pos < lo {
			st.seqLo[seq] = pos
		}
		for u := range t {
			if int(b.Seq[u]) == seq && int(b.Pos[u]) == pos {
				return 0, fmt.Errorf("%w: tokens %d and %d both at position %d of sequence %d", ErrBatch, u, t, pos, seq)
			}
		}
		if b.Logits[t] {
			nl++
		}
	}
	if len(logits) < nl*c.Vocab {
		return 0, fmt.Errorf("%w: logits buffer of %d values, need %d for %d tokens", ErrBatch, len(logits), nl*c.Vocab, nl)
	}
	// Room for the new positions (a sliding window moves here).
	for s := range kc.Seqs {
		if lo := st.seqLo[s]; lo >= 0 {
			if err := kv.Reserve(s, lo, st.seqEnd[s]); err != nil {
				return 0, fmt.Errorf("%w: sequence %d: %w", ErrBatch, s, err)
			}
		}
	}
	return nl, nil
}
