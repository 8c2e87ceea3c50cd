package stages

// The auto draft-length policy's measurements (draft.Policy.Auto): verify
// times every pass into Config.Costs (by tokens and sequences) and keeps the
// mean sequences per pass; the draft stage times every draft step, the
// share of it that overlapped verification, and the size, yield and draft
// time of the blocks coming back, and asks draft.Policy.Choose for each
// step's k. Everything here is preallocated: a step costs a few float
// operations and the Costs lock.

import (
	"fmt"
	"math"
	"time"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/verify"
)

// Clock is where the auto policy's cost measurements read the time:
// Target around each verification pass (and calibration pass), Draft
// around each draft step, Step around each sequence's whole step (from
// one choice of its draft length to the next: what the policy's
// predictions are corrected by, draft.Step.Extra). Each returns a
// monotonic reading; a nil one reads the wall clock, but a nil Step
// reads the sum of Target and Draft where either is set. Tests give
// synthetic clocks that fake backends advance by a given cost per pass,
// so the policy sees a known cost model.
type Clock struct {
	Target, Draft, Step func() time.Duration
}

// mean is a decaying mean: a plain mean of the first 1/rate values, then
// an exponential one.
type mean struct{ v, w float64 }

func (m *mean) add(x, rate float64) {
	m.w++
	m.v += (x - m.v) * max(1/m.w, rate)
}

// autoState is what the draft stage knows for the auto policy. Only the
// draft stage touches it.
type autoState struct {
	prior *draft.Positions // every sequence's blocks; new sequences start from it
	pass  []float64        // Step.Pass
	extra []float64        // Step.Extra
	ahead []float64        // Step.Ahead
	step  draft.Step
	// per-token draft time: the pipeline's Drafter [0], prompt lookup [1]
	dcost [2]mean
	// decaying sums (seconds) for the overlap: draft time that overlapped
	// verification, draft time, verification time
	hidden, draftT, verifyT float64
	lastVerify              int64
	// per block, over all sequences: tokens in the pass (k+1), their
	// attention work, tokens committed, draft time
	tokens, work, gain, blockDraft mean
	// per token a model drafter is fed (draft.Feeder)
	feed mean
}

// autoRate is the weight of a new value in the auto policy's decaying
// means of blocks and draft costs; autoDecay the per-step decay of the
// overlap sums.
const (
	autoRate  = 0.05
	autoDecay = 0.98
)

func newAutoState(k int) *autoState {
	return &autoState{prior: draft.NewPrior(k), pass: make([]float64, k+1), extra: make([]float64, k+1), ahead: make([]float64, k+1)}
}

// targetNow and draftNow read the Clock.
func (p *Pipeline) targetNow() time.Duration {
	if c := p.cfg.Clock; c != nil && c.Target != nil {
		return c.Target()
	}
	return time.Since(p.epoch)
}

func (p *Pipeline) draftNow() time.Duration {
	if c := p.cfg.Clock; c != nil && c.Draft != nil {
		return c.Draft()
	}
	return time.Since(p.epoch)
}

func (p *Pipeline) stepNow() time.Duration {
	c := p.cfg.Clock
	switch {
	case c == nil || c.Target == nil && c.Draft == nil && c.Step == nil:
		return time.Since(p.epoch)
	case c.Step != nil:
		return c.Step()
	}
	var t time.Duration
	if c.Target != nil {
		t += c.Target()
	}
	if c.Draft != nil {
		t += c.Draft()
	}
	return t
}

// stepTiming is what the auto policy predicted for a sequence's step in
// flight, to compare with the step's measured time at the next choice.
type stepTiming struct {
	have bool // a steady step's, to be measured
	spec bool // the step drafts
	k    int
	at   time.Duration // the Clock's Step reading at the choice
	pred float64       // Step.Time(k)
	full float64       // Step.Measured(k): with the steady steps' extra time
	// prefill passes run by then: a step with another's prefill in it
	// is not measured
	prefills int64
}

// seqsPerPass is the decaying mean of the sequences in a verification
// pass (verify keeps it).
func (p *Pipeline) seqsPerPass() float64 {
	v := math.Float64frombits(p.passSeqs.Load())
	return max(v, 1)
}

// observePass records a verification pass of blocks for the auto policy;
// verify calls it (its own goroutine owns passMean).
func (p *Pipeline) observePass(blocks []*verify.Block, tokens int, d, wall time.Duration) {
	work := 0.0
	for _, b := range blocks {
		work += draft.Work(int(b.Pos), len(b.Draft)+1)
	}
	seqs := len(blocks)
	p.costs.ObservePass(tokens, seqs, work, d.Seconds())
	p.passMean.add(float64(seqs), autoRate)
	p.passSeqs.Store(math.Float64bits(p.passMean.v))
	p.verifyWall.Add(int64(wall))
}

// drafterIndex is 0 for the pipeline's Drafter, 1 for prompt lookup.
func (p *Pipeline) drafterIndex(s *seq) int {
	if s.drafter != nil && s.drafter == p.cfg.NGram && s.drafter != p.cfg.Drafter {
		return 1
	}
	return 0
}

// returned records the block of s that has just come back from verify.
func (a *autoState) returned(s *seq) {
	k := len(s.block.Draft)
	a.prior.Update(k, s.block.Accepted)
	a.tokens.add(float64(k+1), autoRate)
	a.work.add(draft.Work(int(s.block.Pos), k+1), autoRate)
	a.gain.add(float64(s.block.Accepted+1), autoRate)
}

// drafted records a draft step that proposed k tokens in d (the Clock's
// Draft time) with drafter i, of which hidden (wall) overlapped
// verification out of wall; verifyWall is the verification time so far.
// Only a steady step (the one before drafted too) teaches the cost of a
// draft token: after plain steps a model drafter first feeds every token
// committed since, which speculating every step would not.
func (a *autoState) drafted(c *draft.Costs, i, k int, steady bool, d, hidden, wall time.Duration, verifyWall int64) {
	a.blockDraft.add(d.Seconds(), autoRate)
	if k > 0 && steady {
		a.dcost[i].add(d.Seconds()/float64(k), autoRate)
		if i == 0 {
			c.ObserveDraft(d.Seconds() / float64(k))
		}
	}
	a.hidden = autoDecay*a.hidden + hidden.Seconds()
	a.draftT = autoDecay*a.draftT + wall.Seconds()
	a.verifyT = autoDecay*a.verifyT + time.Duration(verifyWall-a.lastVerify).Seconds()
	a.lastVerify = verifyWall
}

// choose is the auto policy's k for the next step of s, at most kmax;
// fedTo is how many of its committed tokens its drafter has read,
// draftedTo how many it had read when it last drafted. The time since
// s's last choice, its whole step, is recorded against what was
// predicted for it (Costs.ObserveStep), and what steps at each k took
// beyond their predictions corrects this choice's (Step.Extra).
func (p *Pipeline) choose(s *seq, kmax, fedTo, draftedTo int) draft.Choice {
	a := p.auto
	now := p.stepNow()
	t := &s.autoStep
	prefills := p.prefills.Load()
	if t.prefills == prefills {
		switch {
		case t.have:
			p.costs.ObserveStep(t.k, (now-t.at).Seconds()-t.pred, t.pred)
		case t.spec: // a speculative step after plain ones: a probe's cost
			p.costs.ObserveProbe((now-t.at).Seconds()-t.full, t.full)
		}
	}
	prevSpec := t.spec
	t.have, t.spec = false, false
	if kmax <= 0 {
		return draft.Choice{Speedup: 1}
	}
	b := p.seqsPerPass()
	o := b - 1 // the other sequences in a pass
	// The sequences decoding: where more of them hold slots than a pass
	// verifies, the passes take turns, and a step's measured time
	// (Step.Extra) spans the other passes of its round too, so the tokens
	// those commit count in the step's gain (else their time would dilute
	// what a longer block costs, against the step's tokens alone).
	live := max(float64(p.cfg.Slots-p.slots.Free()), b)
	base, work := int(math.Round(o)), 0.0
	if a.tokens.w > 0 {
		base, work = int(math.Round(o*a.tokens.v)), o*a.work.v
	}
	pass := a.pass[:kmax+1]
	p.costs.Fill(pass, int(math.Round(b)), base, work, len(s.tokens)-1)
	st := &a.step
	st.Pass, st.Seqs = pass, b
	i := p.drafterIndex(s)
	switch {
	case a.dcost[i].w > 0:
		st.Draft = a.dcost[i].v
	case i == 0 && p.costs.Draft() > 0: // measured by earlier pipelines on the table
		st.Draft = p.costs.Draft()
	case i == 0: // the prior: c one-token passes at this position
		st.Draft = s.pol.Cost * p.costs.Pass(1, 1, draft.Work(len(s.tokens)-1, 1))
	default:
		st.Draft = 0
	}
	st.Hidden = 0
	if m := min(a.draftT, a.verifyT); m > 0 && !p.cfg.SharedCores {
		st.Hidden = min(a.hidden/m, 1)
	}
	st.Catchup, st.Behind = 0, 0
	if _, ok := s.drafter.(draft.Feeder); ok { // a drafter with a cache
		per := 0.5 * st.Draft // the prior: a token read in a batch, half a proposal
		if a.feed.w > 0 {
			per = a.feed.v
		}
		st.Catchup = float64(max(len(s.tokens)-1-fedTo, 0)) * per * (1 - st.Hidden)
		st.Behind = float64(max(len(s.tokens)-1-draftedTo, 0)) * per * (1 - st.Hidden)
		if p.feedsAlong(s) { // fed at every plain step, probe or not
			st.Behind = st.Catchup
		}
	}
	// The steps left: at most the tokens still wanted, within the context.
	st.Left = max(min(s.req.MaxTokens-s.gen, p.cfg.MaxPos-len(s.tokens)), 1)
	gain := 1.0
	if a.gain.w > 0 {
		gain = a.gain.v
	}
	st.Others = draft.Others{Gain: (live - 1) * gain, Draft: o * a.blockDraft.v}
	st.Extra = a.extra[:kmax+1]
	p.costs.StepExtra(st.Extra)
	st.Ahead = p.ahead(s, live, a.ahead[:kmax+1])
	st.ProbeExtra = p.costs.ProbeExtra()
	st.Explore = a.prior.Seen(1) < draft.ExploreBlocks
	c := s.pol.Choose(&s.auto, st)
	if c.K == 0 {
		s.auto.Relax(a.prior)
	}
	// Only steady steps teach: a k > 0 after one (not the first after
	// plain steps, with its catch-up: a probe is never steady, an
	// exploring step after another is), a 0 that does not feed the draft
	// model (feedsAhead: what that costs is the probe's), neither with
	// another sequence's prefill in it.
	steady := prevSpec
	if c.K == 0 {
		steady = !p.feedsAhead(s, s.auto.ProbeDue())
	}
	s.autoStep = stepTiming{have: steady, k: c.K, at: now, pred: st.Time(c.K), full: st.Measured(c.K), prefills: prefills}
	s.autoStep.spec = c.K > 0
	return c
}

// ahead fills dst[k] with the share of a step's draft time that
// pre-drafting hides in steady decoding at k (Step.Ahead) while s decodes
// alone: the chance that the next block's pre-draft, made while this one
// is verified, is used (preDraftChance), for each k at which the draft
// stage pre-drafts (canPreDraft); 0 elsewhere.
// Where the draft's threads share the target's cores a pre-draft slows
// the pass instead, and where other sequences decode beside s the draft
// stage spends the pass drafting for them (measured: Hidden), so there it
// is 0 for every k. It returns dst.
func (p *Pipeline) ahead(s *seq, live float64, dst []float64) []float64 {
	clear(dst)
	if !p.cfg.PreDraft || p.cfg.SharedCores || live > 1 {
		return dst
	}
	for k := 1; k < len(dst); k++ {
		if p.canPreDraft(s, k) {
			dst[k] = p.preDraftChance(s, k)
		}
	}
	return dst
}

// calibrate times target passes on slot 0 into the Costs prior: every
// size from 1 to K+2 tokens, then sizes 1.25 times apart up to the table's
// largest, from position 0, in calibRounds rounds over all sizes (so that
// other work on the machine disturbs them alike; larger sizes in half of
// them), keeping the fastest of each, each timed after a pass of the same
// size; then passes of 1, 2 and 3 tokens deeper in the slot, whose extra
// time is the attention's; then it empties the slot again. It costs about
// 10(K+2) + 40 passes, and 4 for each size beyond.
func (p *Pipeline) calibrate() error {
	be := p.cfg.Target
	maxN := min(be.MaxBatch(), p.costs.MaxTokens(), p.cfg.MaxPos)
	var sizes []int
	for n := 1; n <= maxN; {
		sizes = append(sizes, n)
		if n < p.cfg.Policy.K+2 || n == maxN {
			n++
		} else {
			n = min(max(n+1, n*5/4), maxN)
		}
	}
	v := be.Vocab()
	lg := make([]float32, maxN*v)
	best := make([]float64, maxN)
	b := backend.NewBatch(maxN)
	p.device.Lock()
	defer p.device.Unlock()
	// pass times a pass of n tokens from position pos, the cache of slot 0
	// cut back to pos first; with fill, it only feeds them (no logits).
	pass := func(pos, n int, fill bool) (float64, error) {
		if err := be.Rollback(0, pos); err != nil {
			return 0, fmt.Errorf("stages: calibration: %w", err)
		}
		b.Reset()
		for i := 0; i < n; i++ {
			b.Add(int32((pos+i+1)%v), int32(pos+i), 0, !fill)
		}
		t0 := p.targetNow()
		if err := be.Forward(&b, lg[:n*v]); err != nil {
			return 0, fmt.Errorf("stages: calibration: %w", err)
		}
		return max((p.targetNow() - t0).Seconds(), 1e-9), nil
	}
	// timed is the faster of two passes of n tokens from pos: the first
	// warms the caches up for passes of that size, as decoding at one k
	// does (a pass after a larger one can take twice as long).
	timed := func(pos, n int) (float64, error) {
		if _, err := pass(pos, n, false); err != nil {
			return 0, err
		}
		return pass(pos, n, false)
	}
	dense := p.cfg.Policy.K + 2
	for r := 0; r < calibRounds; r++ {
		for _, n := range sizes {
			if n > dense && r >= calibRounds/2 {
				continue // large passes: fewer rounds
			}
			d, err := timed(0, n)
			if err != nil {
				return err
			}
			if best[n-1] == 0 || d < best[n-1] {
				best[n-1] = d
			}
		}
	}
	// The attention: the same passes from position deep.
	attn := 0.0
	if deep := min(calibDepth, p.cfg.MaxPos-maxN-1); deep >= 16 {
		for have := 0; have < deep; have += maxN {
			if _, err := pass(have, min(maxN, deep-have), true); err != nil {
				return err
			}
		}
		var extra, work float64
		for _, n := range []int{1, 2, 3} {
			if n > maxN {
				break
			}
			deepest := 0.0
			for r := 0; r < calibRounds/2+1; r++ {
				d, err := timed(deep, n)
				if err != nil {
					return err
				}
				if deepest == 0 || d < deepest {
					deepest = d
				}
			}
			extra += deepest - best[n-1]
			work += draft.Work(deep, n) - draft.Work(0, n)
		}
		attn = max(extra/work, 0)
	}
	if err := be.Rollback(0, 0); err != nil {
		return fmt.Errorf("stages: calibration: %w", err)
	}
	p.costs.Calibrate(best, attn)
	return nil
}

// calibDepth is the position calibration measures attention's cost at.
const calibDepth = 128

// calibRounds is the timed rounds of calibration for the passes of up to
// K+2 tokens, which the decisions between short blocks depend on and
// which, short, a busy machine disturbs most (larger and deeper ones get
// about half as many).
const calibRounds = 5

// recordChoice counts the draft length chosen for s's step (the policy's
// after the request's and the context's caps) in its stats.
func (s *seq) recordChoice(k int, c draft.Choice, auto bool) {
	s.step = stepChoice{k: k, auto: auto, probe: c.Probe, speedup: c.Speedup}
	st := &s.stats
	if k < len(st.KChosen) {
		st.KChosen[k]++
	}
	if auto {
		st.AutoSteps++
		st.PredictedSum += c.Speedup
		if c.Probe {
			st.Probes++
		}
	}
}

// stepChoice is the draft length chosen for a sequence's step, as the
// metrics record it.
type stepChoice struct {
	k           int
	auto, probe bool
	speedup     float64
}
