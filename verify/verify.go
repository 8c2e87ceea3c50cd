// Package verify checks draft tokens against the target model: one batched
// forward pass over the k_i+1 positions of each of B sequences (ragged
// blocks, each with its own draft length and position), then the greedy or
// the exact speculative-sampling acceptance rule per block, then an O(1)
// rollback of the target's KV cache to the committed tokens.
//
// The target's forward pass is behind backend.Backend, so an accelerator can
// replace the pure-Go CPU implementation.
package verify

import (
	"errors"
	"fmt"

	"github.com/specd-dev/specd/backend"
)

// Errors returned by Verify.
var (
	ErrBatchTooLarge = errors.New("verify: blocks exceed the backend's batch size")
	ErrBadBlock      = errors.New("verify: invalid block")
)

// Block is one sequence's verification request and, after Verify, its
// result.
type Block struct {
	Seq   int32   // KV slot of the sequence
	Pos   int32   // position of Last: the number of committed tokens − 1
	Last  int32   // the last committed token, not yet in the target cache
	Draft []int32 // draft tokens d1..dk (k may be 0)
	// Q holds the draft's filtered distributions, len(Draft) rows of Vocab
	// values, for sampling; nil means q is one-hot on each draft token.
	Q []float32
	// Sampler selects exact speculative sampling; nil selects greedy.
	Sampler backend.Sampler

	// Results.
	Accepted int     // draft tokens accepted, 0..k
	Tokens   []int32 // Draft[:Accepted] then the correction or bonus token
}

// Verifier verifies blocks on a backend. It preallocates everything for
// MaxBatch tokens; Verify does not allocate.
type Verifier struct {
	be     backend.Backend
	vocab  int
	batch  backend.Batch
	logits []float32
	p, r   []float32
}

// New returns a Verifier for be.
func New(be backend.Backend) *Verifier {
	n, v := be.MaxBatch(), be.Vocab()
	return &Verifier{
		be:     be,
		vocab:  v,
		batch:  backend.NewBatch(n),
		logits: make([]float32, n*v),
		p:      make([]float32, v),
		r:      make([]float32, v),
	}
}

// Backend returns the verifier's backend.
func (v *Verifier) Backend() backend.Backend { return v.be }

// Verify runs one forward pass over all blocks, applies each block's
// acceptance rule, fills Accepted and Tokens (reusing its capacity; give
// it k+1 to avoid allocation) and rolls the target cache of every slot
// back to its committed tokens minus the last, Pos+1+Accepted positions:
// the target's half of the KV rule (package stages), so that the next
// block of the slot starts at the new last committed token.
func (v *Verifier) Verify(blocks []*Block) error {
	total := 0
	for _, b := range blocks {
		if b.Pos < 0 || int(b.Pos) > v.be.Len(int(b.Seq)) {
			return fmt.Errorf("%w: slot %d position %d with %d cached", ErrBadBlock, b.Seq, b.Pos, v.be.Len(int(b.Seq)))
		}
		if b.Q != nil && len(b.Q) < len(b.Draft)*v.vocab {
			return fmt.Errorf("%w: slot %d: %d draft probabilities for %d tokens", ErrBadBlock, b.Seq, len(b.Q), len(b.Draft))
		}
		for _, t := range b.Draft {
			if t < 0 || int(t) >= v.vocab {
				return fmt.Errorf("%w: slot %d: draft token %d outside vocabulary %d", ErrBadBlock, b.Seq, t, v.vocab)
			}
		}
		total += len(b.Draft) + 1
	}
	if total > v.be.MaxBatch() {
		return fmt.Errorf("%w: %d tokens, max %d", ErrBatchTooLarge, total, v.be.MaxBatch())
	}
	v.batch.Reset()
	for _, b := range blocks {
		// Anything the cache holds from Pos on is stale (a rejected draft
		// left by a caller that did not roll back); drop it.
		if v.be.Len(int(b.Seq)) > int(b.Pos) {
			if err := v.be.Rollback(int(b.Seq), int(b.Pos)); err != nil {
				return err
			}
		}
		v.batch.Add(b.Last, b.Pos, b.Seq, true)
		for i, t := range b.Draft {
			v.batch.Add(t, b.Pos+1+int32(i), b.Seq, true)
		}
	}
	if err := v.be.Forward(&v.batch, v.logits[:total*v.vocab]); err != nil {
		return err
	}
	off := 0
	for _, b := range blocks {
		k := len(b.Draft)
		lg := v.logits[off*v.vocab : (off+k+1)*v.vocab]
		off += k + 1
		var next int32
		if b.Sampler == nil {
			b.Accepted, next = AcceptGreedy(b.Draft, lg, v.vocab)
		} else {
			b.Accepted, next = AcceptSample(b.Draft, lg, b.Q, v.vocab, b.Sampler, v.p, v.r)
		}
		b.Tokens = append(b.Tokens[:0], b.Draft[:b.Accepted]...)
		b.Tokens = append(b.Tokens, next)
		if err := v.be.Rollback(int(b.Seq), int(b.Pos)+1+b.Accepted); err != nil {
			return err
		}
	}
	return nil
}
