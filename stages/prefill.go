package stages

import (
	"context"
	"fmt"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/verify"
)

// fail ends s with err (a request error, not a pipeline error).
func (s *seq) fail(err error) {
	if !s.done {
		s.done, s.reason, s.err = true, "error", err
	}
}

func (p *Pipeline) tokenize(s *seq) {
	r := &s.req
	if s.ctx.Err() != nil {
		s.fail(context.Cause(s.ctx)) // cancelled while waiting for a slot
		return
	}
	if err := p.chooseDrafter(s); err != nil {
		s.fail(err)
		return
	}
	ids := r.PromptIDs
	if len(ids) == 0 {
		if r.Prompt == "" {
			s.fail(fmt.Errorf("%w %q: empty prompt", ErrRequest, r.ID))
			return
		}
		if p.cfg.Tokenizer == nil {
			s.fail(fmt.Errorf("%w %q: text prompt but no tokenizer", ErrRequest, r.ID))
			return
		}
		var err error
		if ids, err = p.cfg.Tokenizer.Encode(r.Prompt); err != nil {
			s.fail(fmt.Errorf("%w %q: %v", ErrRequest, r.ID, err))
			return
		}
		if len(ids) == 0 {
			s.fail(fmt.Errorf("%w %q: prompt has no tokens", ErrRequest, r.ID))
			return
		}
	}
	vocab := p.cfg.Target.Vocab()
	for _, t := range ids {
		if t < 0 || int(t) >= vocab {
			s.fail(fmt.Errorf("%w %q: prompt token %d outside vocabulary %d", ErrRequest, r.ID, t, vocab))
			return
		}
	}
	if r.MaxTokens <= 0 {
		s.fail(fmt.Errorf("%w %q: max tokens %d", ErrRequest, r.ID, r.MaxTokens))
		return
	}
	// The limit of plain decoding (Plain): every prompt that fits the
	// positions is served. The draft stage shrinks k near the end of the
	// context to what the block and the draft cache can hold (k = 0, a
	// plain step, at the last positions), so no room for k is reserved.
	k := p.cfg.Policy.K
	if len(ids) > p.cfg.MaxPos {
		s.fail(fmt.Errorf("%w %q: prompt of %d tokens does not fit %d positions", ErrRequest, r.ID, len(ids), p.cfg.MaxPos))
		return
	}
	// Everything a step needs is allocated here, once per request.
	s.tokens = make([]int32, 0, len(ids)+r.MaxTokens+k+1)
	s.tokens = append(s.tokens, ids...)
	s.nPrompt = len(ids)
	s.dreq = draft.Request{Slot: s.slot, K: k, Out: make([]int32, 0, k), PMin: r.PMin}
	s.ext = draft.Request{Slot: s.slot, Out: make([]int32, 0, k), Tokens: make([]int32, 0, cap(s.tokens)), PMin: r.PMin}
	s.block = verify.Block{Seq: int32(s.slot), Draft: make([]int32, 0, k), Tokens: make([]int32, 0, k+1)}
	if r.Params.Temp > 0 {
		if p.cfg.NewSampler == nil {
			s.fail(fmt.Errorf("%w %q: sampling requested but not configured", ErrRequest, r.ID))
			return
		}
		s.block.Sampler = p.cfg.NewSampler(r.Params, 0)
		s.dreq.Sampler = p.cfg.NewSampler(r.Params, 1) // the draft's own random stream
		s.ext.Sampler = s.dreq.Sampler
		if k > 0 {
			s.dreq.Q = make([]float32, 0, k*vocab)
			s.ext.Q = make([]float32, 0, k*vocab)
		}
	}
}

// chooseDrafter sets the drafter and draft-length policy of s from the
// pipeline's and the request's overrides.
func (p *Pipeline) chooseDrafter(s *seq) error {
	r := &s.req
	s.pol, s.drafter = p.cfg.Policy, p.cfg.Drafter
	if r.Adaptive != nil {
		s.pol.Adaptive, s.pol.Auto = *r.Adaptive, false
	}
	if r.Auto != nil {
		switch {
		case *r.Auto && r.Adaptive != nil && *r.Adaptive:
			return fmt.Errorf("%w %q: auto and adaptive draft lengths exclude each other", ErrRequest, r.ID)
		case *r.Auto && p.auto == nil:
			return fmt.Errorf("%w %q: auto draft length: this pipeline does not choose draft lengths by cost (its policy is fixed or adaptive)", ErrRequest, r.ID)
		case *r.Auto:
			s.pol.Auto, s.pol.Adaptive = true, false
		default:
			s.pol.Auto = false
		}
	}
	switch r.Draft {
	case DraftDefault:
	case DraftModel:
		if p.cfg.Drafter == nil {
			return fmt.Errorf("%w %q: draft %q: this pipeline has no draft model", ErrRequest, r.ID, r.Draft)
		}
	case DraftNGram:
		if p.cfg.NGram == nil || p.cfg.Policy.K == 0 {
			return fmt.Errorf("%w %q: draft %q: this pipeline has no prompt-lookup drafter", ErrRequest, r.ID, r.Draft)
		}
		s.drafter = p.cfg.NGram
	case DraftNone:
		s.drafter = nil
	default:
		return fmt.Errorf("%w %q: unknown draft %q", ErrRequest, r.ID, r.Draft)
	}
	if s.drafter == nil {
		s.pol.K = 0
	}
	return nil
}

// prefill writes the target KV of all prompt tokens but the last, which
// opens the first verification block.
func (p *Pipeline) prefill(s *seq) {
	if s.done {
		return
	}
	be := p.cfg.Target
	p.device.Lock()
	err := be.Rollback(s.slot, 0)
	p.device.Unlock()
	if err != nil {
		s.fail(err)
		return
	}
	// One chunk per turn on the device, so that a long prompt does not
	// hold up the verification of sequences already decoding.
	chunk := min(be.MaxBatch(), prefillChunk)
	var b backend.Batch
	for have := 0; have < s.nPrompt-1; {
		if s.ctx.Err() != nil {
			s.fail(context.Cause(s.ctx)) // cancelled during a long prompt
			return
		}
		b.Reset()
		end := min(s.nPrompt-1, have+chunk)
		for i := have; i < end; i++ {
			b.Add(s.tokens[i], int32(i), int32(s.slot), false)
		}
		p.device.Lock()
		err := be.Forward(&b, nil)
		p.device.Unlock()
		p.prefills.Add(1)
		if err != nil {
			s.fail(fmt.Errorf("stages: prefill: %w", err))
			return
		}
		have = end
	}
}

// prefillChunk is the most prompt tokens prefill runs in one pass.
const prefillChunk = 64
