//go:build !nollamacpp && ((linux && !android) || darwin || (android && cgo)) && (amd64 || arm64)

package llamacpp

import (
	"fmt"
	"unsafe"

	"github.com/specd-dev/specd/backend"
)

// Backend is a backend.Backend on one llama_context of a Model: a sequence
// with its own KV cells per slot. Like every backend.Backend it is used by
// one goroutine at a time; Close may be called once that use has ended.
type Backend struct {
	m        *Model
	fn       *funcs
	ctx, mem uintptr
	vocab    int
	maxBatch int
	seqs     int
	maxPos   int

	// The llama_batch Forward fills, allocated by the library
	// (llama_batch_init), and Go views of its arrays.
	batch  llamaBatch
	tok    []int32
	pos    []int32
	nSeqID []int32
	seqID  []*int32
	out    []int8

	// Per-slot scratch of Forward: lowest and highest position in the
	// batch, and the number of tokens.
	lo, hi, cnt []int32

	closed bool
}

var _ backend.Backend = (*Backend)(nil)

// NewBackend creates a context of m sized by p.
func (m *Model) NewBackend(p ContextParams) (*Backend, error) {
	switch {
	case p.Seqs < 1 || p.Seqs > 256:
		return nil, fmt.Errorf("%w: %d sequences: must be in [1, 256]", ErrContext, p.Seqs)
	case p.MaxPos < 1 || p.MaxBatch < 1:
		return nil, fmt.Errorf("%w: %d positions, batch %d: both must be at least 1", ErrContext, p.MaxPos, p.MaxBatch)
	case p.Threads < 0:
		return nil, fmt.Errorf("%w: %d threads", ErrContext, p.Threads)
	case int64(p.Seqs)*int64(p.MaxPos) > 1<<31-1 || p.MaxBatch > 1<<20:
		return nil, fmt.Errorf("%w: %d sequences of %d positions, batch %d: too large", ErrContext, p.Seqs, p.MaxPos, p.MaxBatch)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	fn := &m.lib.fn
	cp := fn.contextDefaultParams()
	// Each sequence gets its own KV stream (kv_unified off) of n_ctx /
	// n_seq_max cells, which llama.cpp rounds up to a multiple of 256.
	cp.nCtx = uint32(p.Seqs * p.MaxPos)
	cp.nSeqMax = uint32(p.Seqs)
	cp.nBatch, cp.nUbatch = uint32(p.MaxBatch), uint32(p.MaxBatch) // one pass per Forward
	cp.nOutputsMax, cp.nOutputsMaxPerSeq = 0, 0                    // logits for every token that asks
	cp.kvUnified = false
	if p.Threads > 0 {
		cp.nThreads, cp.nThreadsBatch = int32(p.Threads), int32(p.Threads)
	}
	if p.F32Cache {
		cp.typeK, cp.typeV = ggmlTypeF32, ggmlTypeF32
	}
	mark := logMark()
	ctx := fn.initFromModel(m.ptr, cp)
	if ctx == 0 {
		return nil, fmt.Errorf("%w: %d sequences of %d positions, batch %d%s", ErrContext, p.Seqs, p.MaxPos, p.MaxBatch, logTail(mark))
	}
	seqMax, perSeq, nBatch := fn.nSeqMax(ctx), fn.nCtxSeq(ctx), fn.nBatch(ctx)
	if int(seqMax) != p.Seqs || int(perSeq) < p.MaxPos || int(nBatch) < p.MaxBatch {
		fn.free(ctx)
		return nil, fmt.Errorf("%w: asked for %d sequences of %d positions and batches of %d, got %d of %d and %d",
			ErrContext, p.Seqs, p.MaxPos, p.MaxBatch, seqMax, perSeq, nBatch)
	}
	lb := fn.batchInit(int32(p.MaxBatch), 0, 1)
	if lb.token == nil || lb.pos == nil || lb.nSeqID == nil || lb.seqID == nil || lb.logits == nil {
		fn.free(ctx)
		return nil, fmt.Errorf("%w: llama_batch_init(%d) failed", ErrContext, p.MaxBatch)
	}
	b := &Backend{
		m: m, fn: fn, ctx: ctx, mem: fn.getMemory(ctx),
		vocab: m.vocab, maxBatch: p.MaxBatch, seqs: p.Seqs, maxPos: p.MaxPos,
		batch:  lb,
		tok:    unsafe.Slice(lb.token, p.MaxBatch),
		pos:    unsafe.Slice(lb.pos, p.MaxBatch),
		nSeqID: unsafe.Slice(lb.nSeqID, p.MaxBatch),
		seqID:  unsafe.Slice(lb.seqID, p.MaxBatch),
		out:    unsafe.Slice(lb.logits, p.MaxBatch),
		lo:     make([]int32, p.Seqs), hi: make([]int32, p.Seqs), cnt: make([]int32, p.Seqs),
	}
	for i := range b.nSeqID {
		b.nSeqID[i] = 1
	}
	m.backends[b] = struct{}{}
	return b, nil
}

// Vocab implements backend.Backend.
func (b *Backend) Vocab() int { return b.vocab }

// MaxBatch implements backend.Backend.
func (b *Backend) MaxBatch() int { return b.maxBatch }

// Slots is the number of sequence slots.
func (b *Backend) Slots() int { return b.seqs }

// Forward implements backend.Backend: one llama_decode over the whole
// batch. The tokens of one slot must have consecutive positions starting
// at most at Len; whatever the slot holds from there on is removed first.
// It does not allocate.
func (b *Backend) Forward(bt *backend.Batch, logits []float32) error {
	n := bt.Len()
	switch {
	case b.closed:
		return ErrClosed
	case len(bt.Pos) != n || len(bt.Seq) != n || len(bt.Logits) != n:
		return fmt.Errorf("%w: %d tokens, %d positions, %d slots, %d logit flags", ErrBatch, n, len(bt.Pos), len(bt.Seq), len(bt.Logits))
	case n == 0:
		return nil
	case n > b.maxBatch:
		return fmt.Errorf("%w: %d tokens, at most %d", ErrBatch, n, b.maxBatch)
	}
	for s := range b.cnt {
		b.cnt[s] = 0
	}
	nl := 0
	for i := range n {
		t, p, s := bt.Tokens[i], bt.Pos[i], bt.Seq[i]
		switch {
		case t < 0 || int(t) >= b.vocab:
			return fmt.Errorf("%w: token %d outside the vocabulary of %d", ErrBatch, t, b.vocab)
		case s < 0 || int(s) >= b.seqs:
			return fmt.Errorf("%w: slot %d of %d", ErrBatch, s, b.seqs)
		case p < 0 || int(p) >= b.maxPos:
			return fmt.Errorf("%w: slot %d position %d outside [0, %d)", ErrBatch, s, p, b.maxPos)
		}
		if b.cnt[s] == 0 || p < b.lo[s] {
			b.lo[s] = p
		}
		if b.cnt[s] == 0 || p > b.hi[s] {
			b.hi[s] = p
		}
		b.cnt[s]++
		if bt.Logits[i] {
			nl++
		}
	}
	if len(logits) < nl*b.vocab {
		return fmt.Errorf("%w: %d logits for %d tokens of %d", ErrBatch, len(logits), nl, b.vocab)
	}
	for s, c := range b.cnt {
		if c == 0 {
			continue
		}
		if have := b.Len(s); int(b.lo[s]) > have {
			return fmt.Errorf("%w: slot %d position %d with %d held", ErrBatch, s, b.lo[s], have)
		}
		if b.hi[s]-b.lo[s]+1 != c {
			return fmt.Errorf("%w: slot %d: %d tokens at positions %d..%d, not consecutive", ErrBatch, s, c, b.lo[s], b.hi[s])
		}
	}
	// The batch is valid: drop what each slot holds from its first position.
	for s, c := range b.cnt {
		if c > 0 && int(b.lo[s]) < b.Len(s) {
			if err := b.Rollback(s, int(b.lo[s])); err != nil {
				return err
			}
		}
	}
	for i := range n {
		b.tok[i], b.pos[i] = bt.Tokens[i], bt.Pos[i]
		*b.seqID[i] = bt.Seq[i]
		b.out[i] = 0
		if bt.Logits[i] {
			b.out[i] = 1
		}
	}
	b.batch.nTokens = int32(n)
	mark := logMark()
	if rc := b.fn.decode(b.ctx, b.batch); rc != 0 {
		return fmt.Errorf("%w: %d tokens: %s%s", ErrDecode, n, decodeStatus(rc), logTail(mark))
	}
	j := 0
	for i := range n {
		if !bt.Logits[i] {
			continue
		}
		p := b.fn.getLogitsIth(b.ctx, int32(i))
		if p == nil {
			return fmt.Errorf("%w: no logits for batch token %d%s", ErrDecode, i, logTail(mark))
		}
		copy(logits[j*b.vocab:(j+1)*b.vocab], unsafe.Slice(p, b.vocab))
		j++
	}
	return nil
}

// decodeStatus explains a llama_decode result.
func decodeStatus(rc int32) string {
	switch {
	case rc == 1:
		return "1, no KV slot for the batch"
	case rc == 2:
		return "2, aborted"
	case rc == -1:
		return "-1, invalid batch"
	case rc < -1:
		return fmt.Sprintf("%d, fatal error", rc)
	}
	return fmt.Sprintf("%d", rc)
}

// Len implements backend.Backend: llama_memory_seq_pos_max + 1 (0 for a
// slot out of range or a closed backend).
func (b *Backend) Len(seq int) int {
	if b.closed || seq < 0 || seq >= b.seqs {
		return 0
	}
	return int(b.fn.memorySeqPosMax(b.mem, int32(seq))) + 1
}

// Rollback implements backend.Backend with llama_memory_seq_rm(seq, n,
// -1), and checks that the slot then holds exactly n positions.
func (b *Backend) Rollback(seq, n int) error {
	if b.closed {
		return ErrClosed
	}
	if seq < 0 || seq >= b.seqs {
		return fmt.Errorf("%w: slot %d of %d", ErrRollback, seq, b.seqs)
	}
	have := b.Len(seq)
	switch {
	case n < 0 || n > have:
		return fmt.Errorf("%w: slot %d: keep %d of %d positions", ErrRollback, seq, n, have)
	case n == have:
		return nil
	}
	if !b.fn.memorySeqRm(b.mem, int32(seq), int32(n), -1) {
		return fmt.Errorf("%w: llama_memory_seq_rm(slot %d, %d, -1) refused", ErrRollback, seq, n)
	}
	if got := b.Len(seq); got != n {
		return fmt.Errorf("%w: slot %d holds %d positions after keeping %d", ErrRollback, seq, got, n)
	}
	return nil
}

// Close frees the context. Closing twice does nothing.
func (b *Backend) Close() error {
	b.m.mu.Lock()
	_, open := b.m.backends[b]
	delete(b.m.backends, b)
	b.m.mu.Unlock()
	if open {
		b.close()
	}
	return nil
}

// close frees the batch and the context.
func (b *Backend) close() {
	if b.closed {
		return
	}
	b.closed = true
	b.fn.batchFree(b.batch)
	b.fn.free(b.ctx)
}
