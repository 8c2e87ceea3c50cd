package stages

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/graph"
)

// draftStage returns the body of the draft stage, the graph.Loop that
// merges new sequences (fresh) and sequences coming back from accept
// (loop): it drafts k tokens for each and sends it to verify (emit), and
// retires finished ones, freeing their slots. It owns the drafter; the
// graph keeps the count of sequences in flight (the stage's Live).
func (p *Pipeline) draftStage(fresh, loop *graph.Pipe[*seq]) func(ctx context.Context, st *graph.Stage, s *seq, isFresh bool, emit func(*seq) error) error {
	pre := make([]preDraft, p.cfg.Slots) // per slot, owned by this stage
	// A pre-draft stops as soon as a sequence comes back from verification
	// or a new one arrives: it must not delay real work.
	stopPre := func() bool { return loop.Len() > 0 || fresh.Len() > 0 }
	return func(ctx context.Context, st *graph.Stage, s *seq, isFresh bool, emit func(*seq) error) error {
		if isFresh {
			pre[s.slot].valid, pre[s.slot].fedTo, pre[s.slot].draftedTo = false, 0, 0
			if s.pol.Auto && p.auto != nil {
				s.auto.Init(s.pol.K, p.auto.prior)
			}
			if s.drafter != nil && !s.done {
				if err := s.drafter.Reset(s.slot); err != nil {
					s.fail(fmt.Errorf("stages: draft reset: %w", err))
				}
			}
			if s.done {
				// Failed before decoding: accept publishes its final
				// chunk and sends it back here to free the slot.
				return emit(s)
			}
		} else if s.done {
			// Finished: retired (not emitted), the slot becomes free for
			// intake.
			pre[s.slot].valid = false
			p.setDrafting(s, false, st)
			if p.auto != nil {
				p.costs.SaveAcceptance(p.auto.prior) // for the pipelines after this one
			}
			p.slots.Release(s.slot)
			return nil
		} else if p.auto != nil {
			p.auto.returned(s)
		}
		var err error
		pr := &pre[s.slot]
		auto := p.auto != nil && s.pol.Auto && s.drafter != nil
		var hid0, d0 time.Duration
		steady := s.step.k > 0 // the drafter has only this step's tokens to catch up on
		if auto {
			hid0, d0 = p.overlap.both(), p.draftNow()
		}
		busy := p.serialize(func() {
			p.overlap.enter(0)
			err = p.draft(s, pr, st)
			p.overlap.leave(0)
		})
		st.AddBusy(busy)
		if auto {
			p.auto.drafted(p.costs, p.drafterIndex(s), len(s.block.Draft), steady, p.draftNow()-d0, p.overlap.both()-hid0, busy, p.verifyWall.Load())
		}
		if err != nil {
			s.fail(err) // this request ends with the drafter's error; verify passes it on
		}
		// Remember what step n+1 would start from if step n is accepted in
		// full; s belongs to verify once sent.
		k := len(s.block.Draft)
		p.setDrafting(s, k > 0, st)
		// A pre-draft feeds the draft cache up to position n+2k-1.
		canPre := p.cfg.PreDraft && s.drafter != nil && !s.done && k > 0 && p.canPreDraft(s, k)
		if canPre {
			pr.base = len(s.tokens)
			pr.tokens = append(append(pr.tokens[:0], s.tokens...), s.block.Draft...)
			pr.req.Slot, pr.req.Sampler, pr.req.K, pr.req.Stop, pr.req.PMin = s.slot, s.dreq.Sampler, k+1, stopPre, s.req.PMin
			pr.drafter = s.drafter
			// Sampling: the guess of the token the target draws after an
			// accepted block takes the number that draw will use, its
			// (k+1)-th after the block's k acceptance tests (verify.
			// AcceptSample), read now, before verify owns the sampler.
			pr.req.Coupled = false
			if pk, ok := s.block.Sampler.(backend.Peeker); ok {
				pr.req.Coupled, pr.req.U = true, pk.PeekFloat(k+1)
			}
		}
		// An auto step without draft tokens leaves the draft model idle
		// while the target verifies: when a probe is near, feed it the
		// committed tokens then, so that the probe does not begin with a
		// long catch-up. Committed tokens never change, and accept only
		// appends past them, so reading them while s is verify's is safe.
		var feeder draft.Feeder
		var committed []int32
		if s.step.k > 0 {
			pr.fedTo, pr.draftedTo = len(s.tokens), len(s.tokens) // drafting caught the cache up
		} else if due := s.auto.ProbeDue(); auto && !s.done && p.feedsAhead(s, due) {
			if f, ok := s.drafter.(draft.Feeder); ok {
				feeder, committed = f, s.tokens
			}
		}
		slot := s.slot
		if err := emit(s); err != nil {
			return err
		}
		// Every sequence in flight is now past this stage. Feed while no
		// other is waiting for it, a few tokens at a time, so that it
		// never holds up a sequence that a verification pass could take.
		for fr := &pre[slot]; feeder != nil && fr.fedTo < len(committed) && !stopPre(); {
			m := min(len(committed), fr.fedTo+feedChunk)
			d0 := p.draftNow()
			st.AddBusy(p.serialize(func() {
				p.overlap.enter(0)
				err = feeder.Feed(slot, committed[:m])
				p.overlap.leave(0)
			}))
			if err != nil {
				break // left to the next real draft to meet, if it lasts
			}
			p.auto.feed.add((p.draftNow()-d0).Seconds()/float64(m-fr.fedTo), autoRate)
			fr.fedTo = m
		}
		if canPre && !stopPre() {
			st.AddBusy(p.serialize(func() {
				p.overlap.enter(0)
				err = p.preDraft(pr)
				p.overlap.leave(0)
			}))
			if err != nil {
				// The sequence is verify's now: drop the guess, and let the
				// next real draft meet the drafter's error, if it lasts.
				pr.valid = false
			}
		}
		return nil
	}
}

// setDrafting records whether s's block in flight has draft tokens in
// the pipeline's count of such sequences (Pipeline.drafting); only the
// draft stage st calls it: as soon as it has chosen a k > 0 for s, before
// the drafter runs, then with the block's draft length before it sends
// s on, and as it retires it. A sequence that starts drafting wakes
// verify, which may be waiting for every sequence in flight (s among
// them) and now verifies those that are ready instead, while s drafts (a
// probe's catch-up after plain steps can take tens of milliseconds).
func (p *Pipeline) setDrafting(s *seq, on bool, st *graph.Stage) {
	if on == s.drafting {
		return
	}
	s.drafting = on
	if on {
		p.drafting.Add(1)
		st.Wake()
	} else {
		p.drafting.Add(-1)
	}
}

// canPreDraft reports whether a block of k draft tokens of s leaves room
// for a pre-draft of the next one (in its request and its context) and
// is likely enough to be used (Config.PreDraftMin, preDraftChance).
func (p *Pipeline) canPreDraft(s *seq, k int) bool {
	return s.gen+k+2 < s.req.MaxTokens && len(s.tokens)+2*k+1 < p.cfg.MaxPos &&
		(p.cfg.PreDraftMin <= 0 || p.preDraftChance(s, k) >= p.cfg.PreDraftMin)
}

// preDraftChance is the estimated chance that a pre-draft made while a
// block of k draft tokens of s is verified is used: that all k are
// accepted and the bonus token is the draft's next one. Under the auto
// policy it is the product of the sequence's per-position estimates
// (draft.Positions, which a new sequence starts from the pipeline's), the
// ones its choice of k rests on; else α^(k+1) from its recent per-token
// acceptance.
func (p *Pipeline) preDraftChance(s *seq, k int) float64 {
	if !s.pol.Auto || p.auto == nil || s.auto.Len() == 0 {
		return math.Pow(s.policy.Alpha(), float64(k+1))
	}
	return s.auto.All(k + 1)
}

// feedAhead is how many steps before its next probe an auto sequence
// decoding plainly starts feeding its draft model the tokens committed
// since it last drafted, feedChunk the most tokens fed in one pass.
const feedAhead, feedChunk = 3, 2

// feedsAhead reports whether an auto sequence s decoding plainly, its
// next probe due steps away (draft.Positions.ProbeDue; negative: none),
// has its draft model fed the committed tokens during this step's
// verification. Near a probe it does (feedAhead). One that dropped to
// plain decoding from speculating (draft.Positions.Lapsed) and decodes
// alone, on cores of its own, does at every step while Lapsed: its draft
// model is otherwise idle, a chunk of feedChunk tokens fits in a pass, so
// it never falls behind by more than a step's tokens. Feeding only just
// ahead of a probe cannot catch up on a long plain stretch (a step commits
// a token and feeds at most feedChunk), so the probe, and the return to
// speculating, would begin with reading what was committed since: 60
// plain tokens cost the 58M reference draft about 90 ms, fifteen plain
// steps. A sequence that never speculated, or whose probes since have not
// paid, is not fed along: its draft model would work at every step for
// nothing.
func (p *Pipeline) feedsAhead(s *seq, due int) bool {
	if due < 0 {
		return false
	}
	return due <= feedAhead || p.feedsAlong(s)
}

// feedsAlong reports whether s, decoding plainly, has its draft model fed
// at every step (feedsAhead).
func (p *Pipeline) feedsAlong(s *seq) bool {
	return s.auto.Lapsed() && !p.cfg.SharedCores && p.cfg.Slots-p.slots.Free() == 1
}

// preDraft is a speculative draft of step n+1 (see Config.PreDraft).
type preDraft struct {
	valid bool
	fedTo int // committed tokens the slot's draft cache was last caught up on (auto)
	// committed tokens when the slot's sequence last drafted (auto: what
	// feeding ahead of a probe reads counts as the probe's cost)
	draftedTo int
	base      int     // committed tokens when step n was drafted
	tokens    []int32 // those tokens and step n's draft
	req       draft.Request
	drafter   draft.Drafter
}

// preDraft drafts up to k+1 tokens after step n's draft: a guess of the
// bonus token and then step n+1's draft. It stops early when other work
// arrives (Request.Stop); the next draft uses what it made and drafts the
// rest.
func (p *Pipeline) preDraft(pr *preDraft) error {
	pr.req.Tokens = pr.tokens
	if err := pr.drafter.Draft(&pr.req); err != nil {
		return fmt.Errorf("stages: pre-draft: %w", err)
	}
	pr.valid = len(pr.req.Out) > 0
	p.metrics.preDraft(false)
	return nil
}

// draft fills s.block for the next verification: from the pre-draft pr
// if it guessed right (as far as it got), the rest by drafting; st is
// the draft stage (setDrafting).
func (p *Pipeline) draft(s *seq, pr *preDraft, st *graph.Stage) error {
	n := len(s.tokens)
	b := &s.block
	b.Pos, b.Last = int32(n-1), s.tokens[n-1]
	b.Draft, b.Q = b.Draft[:0], nil
	d := s.drafter
	if d == nil {
		s.recordChoice(0, draft.Choice{Speedup: 1}, false)
		return nil
	}
	var k int
	if s.pol.Auto && p.auto != nil {
		kmax := s.pol.K
		if s.req.K > 0 {
			kmax = min(kmax, s.req.K)
		}
		kmax = max(0, min(kmax, s.req.MaxTokens-s.gen-1, p.cfg.MaxPos-n-1))
		c := p.choose(s, kmax, pr.fedTo, pr.draftedTo)
		k = c.K
		s.recordChoice(k, c, true)
	} else {
		k = s.pol.Next(&s.policy)
		if s.req.K > 0 {
			k = min(k, s.req.K)
		}
		// Do not draft past the tokens still wanted or the cache.
		k = min(k, s.req.MaxTokens-s.gen-1, p.cfg.MaxPos-n-1)
		s.recordChoice(max(k, 0), draft.Choice{}, false)
	}
	if k > 0 {
		p.setDrafting(s, true, st)
	}
	hit := false
	if pr.valid {
		pr.valid = false
		pk := len(pr.tokens) - pr.base
		// Step n was accepted in full and the bonus token guessed: the
		// draft cache holds what drafting would feed, and the pre-draft's
		// further tokens are this step's first proposals.
		hit = n == pr.base+pk+1 && slices.Equal(s.tokens[pr.base:n-1], pr.tokens[pr.base:]) && s.tokens[n-1] == pr.req.Out[0]
		if hit {
			p.metrics.preDraft(true)
		}
	}
	if !hit {
		// The draft cache keeps only the accepted prefix (kvsync rule).
		if err := d.Accept(s.slot, n); err != nil {
			return fmt.Errorf("stages: draft rollback: %w", err)
		}
	}
	if k <= 0 {
		return nil
	}
	kk := 0 // proposals taken from the pre-draft
	if hit {
		kk = min(len(pr.req.Out)-1, k)
		b.Draft = append(b.Draft, pr.req.Out[1:1+kk]...)
		if pr.req.Q != nil && kk > 0 {
			// Copied: the next pre-draft reuses pr's buffer while this
			// block is being verified.
			v := p.cfg.Target.Vocab()
			s.dreq.Q = append(s.dreq.Q[:0], pr.req.Q[v:(1+kk)*v]...)
			b.Q = s.dreq.Q
		}
		if kk == k {
			return nil
		}
	}
	r := &s.dreq
	if kk > 0 {
		// Continue the pre-draft: its proposals are fed like committed
		// tokens (the cache holds all but the last already).
		r = &s.ext
		r.Tokens = append(append(r.Tokens[:0], s.tokens...), b.Draft...)
	} else {
		r.Tokens = s.tokens
	}
	r.K = k - kk
	if err := d.Draft(r); err != nil {
		return fmt.Errorf("stages: draft: %w", err)
	}
	b.Draft = append(b.Draft, r.Out...)
	switch {
	case r.Q == nil: // greedy proposals
	case kk == 0:
		b.Q = r.Q
	default:
		s.dreq.Q = append(s.dreq.Q, r.Q...)
		b.Q = s.dreq.Q
	}
	return nil
}
