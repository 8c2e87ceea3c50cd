package draft

// Cost-aware draft length (Policy.Auto). Each step of each sequence takes
// the k in [0, K] with the highest predicted throughput
//
//	rate(k) = (G + E(k)) / (T(k) + D(k) − min(h·D(k), T(k)) + X(k))
//
// where E(k) = 1 + Σ_{j≤k} Π_{m≤j} p_m is the tokens the step commits
// (p_m: the sequence's acceptance at draft position m given the earlier
// ones were accepted, Positions), T(k) the time of the target pass that
// verifies the block (the other sequences' blocks in it: Costs, by tokens
// and sequences), D(k) = O + k·d the draft time of the pass's blocks (O the
// other sequences', d a draft token's), h the measured fraction of draft
// time that overlap with verification hides (or, where the next block is
// pre-drafted while this one is verified, the chance that the pre-draft is
// used, if larger: Step.Ahead), and G the tokens the other
// sequences in the pass commit (in the round, where passes take turns: the
// steps' measured time spans their passes too); X(k) is the measured time of the
// sequences' whole steps at k beyond the rest of the denominator
// (Step.Extra), so that a k whose real steps are slower than plain's
// real steps stops being chosen. k = 0 is plain decoding; a k > 0 is taken
// only when it beats it by Margin (and kept while it is within Hold of
// it, once taken), counting what the drafter must first
// read to draft at all (Step.Catchup) as spread over the steps that the
// speculation can last. After choosing 0 a sequence probes a small k now
// and then (more often the closer speculation is to paying), so that its
// acceptance estimates follow the text, but only while enough of its
// tokens are left for what a probe finds to pay (Step.Left), and where a
// block accepted in full would beat plain decoding at the measured costs
// (else nothing a probe finds could change the choice). Until the
// pipeline has seen ExploreBlocks blocks, its acceptance estimates are a
// guess: a choice of 0 then explores instead (Step.Explore), so that a
// pair whose drafts pay is found out in its first steps, not after
// rare probes, unless even a draft that is always right could not pay at
// the measured costs. A probe's measured cost beyond a steady step's
// (Step.ProbeExtra) spaces the probes out; pipelines on one cost table
// start from the acceptance the ones before them saw (Costs.SaveAcceptance).

import (
	"math"
	"sync"
)

// Auto policy constants.
const (
	// Margin is the predicted gain over plain decoding (k = 0) below which
	// the auto policy does not start speculating.
	Margin = 0.05
	// Hold is the predicted loss against plain decoding within which a
	// sequence that speculates goes on speculating: its estimates move with
	// every block (a rejection or two take P(1) from 0.9 to under 0.85), and
	// once it decodes plainly only a probe, ProbeMin to ProbeMax steps
	// later, can bring it back, so a dip in the estimates must not end a
	// speculation that pays.
	Hold = 0.025
	// ProbeBudget is the share of throughput probes may cost: after a
	// choice of 0, the next probe comes after loss/ProbeBudget steps (loss:
	// the predicted fraction of a plain step's rate the probe gives up,
	// and its catch-up, Step.Catchup, in plain steps), but no sooner than
	// ProbeMin and no later than ProbeMax steps (times the backoff). A
	// probe is made only when at least its interval of steps remains after
	// it (Step.Left): on a shorter rest of the request what it finds cannot
	// repay the probe and the catch-up before it.
	ProbeBudget        = 0.01
	ProbeMin, ProbeMax = 8, 64
	// ProbeK is the largest k a probe drafts.
	ProbeK = 2
	// ExploreBlocks is the draft blocks (of any sequence, at position 1)
	// a pipeline explores with, each a probe's, before it trusts its
	// acceptance estimates (Step.Explore).
	ExploreBlocks = 8
	// ProbeBackoff: each probe in a row after which the policy still
	// decodes plainly doubles the next interval, up to 2^ProbeBackoff
	// times, unless the probe's every draft token was accepted, which
	// resets it (Positions.Update). (A model draft must have read every
	// token before a probe, so probing costs a draft token's work per
	// token, however rare.)
	ProbeBackoff = 2
	// LapseProbes is the probes, ProbeMin steps apart, that a sequence
	// makes after its speculation ends (Positions.Lapsed) before its probes
	// follow ProbeBudget and back off.
	LapseProbes = 3

	posDecay = 0.95 // per observation of a position, per sequence
	// relaxDecay is the weight a sequence's own counts keep at each step
	// it decodes plainly (Positions.Relax).
	relaxDecay = 0.95
	// priorMin and priorWeight bound the observations' worth of the prior
	// a sequence starts from (Positions): the pipeline's blocks seen at
	// the position (its decaying count), within these.
	priorMin, priorWeight = 3, 8
	priorP                = 0.5 // the acceptance assumed where nothing is known
	// pipeWeight is the observations' worth of priorP in a pipeline-wide
	// estimate (NewPrior): little, so that what exploration finds
	// (ExploreBlocks blocks) outweighs it.
	pipeWeight = 1
)

// Positions estimates a sequence's acceptance per draft position: P(j) is
// the chance that draft token j (from 1) is accepted when tokens 1..j−1
// were, from exponentially decaying counts (decayed at each observation of
// that position) and a prior that decays with them. The prior of
// position 1 is the pipeline's estimate (Init), worth as many observations
// as the pipeline's own estimate of the position rests on, between
// priorMin and priorWeight: a well-founded one is not overturned by a
// sequence's first rejection, a guess (exploring) gives way to the
// sequence's first blocks;
// that of a deeper position is the sequence's own estimate of the position
// before, times the ratio of the pipeline's estimates of the two, so that
// positions a sequence has not drafted to lately follow the ones it has.
// It also holds the sequence's probe schedule. The zero value tracks no
// positions: call Init.
type Positions struct {
	acc, seen []float64 // own decaying counts
	pw        []float64 // the prior's remaining weight
	q         []float64 // the pipeline's estimates when the sequence began
	decay     float64
	zeros     int // steps in a row the policy chose k = 0 (no probe)
	interval  int // the probe interval Choose last set; 0 while speculating or no probe can pay
	left      int // Step.Left at the last Choose (0: no bound)
	backoff   int // probes in a row that did not lead to speculating (capped)
	probed    bool
	spec      bool // the last choice was a k > 0 that beat plain decoding (Hold)
	lapsed    int  // probes left at ProbeMin intervals after speculating (Lapsed)
	hit       bool // the last probe's block was accepted in full
}

// Init sizes p for draft positions 1..k (it allocates only when k grows
// past what p held) and starts it from prior's estimates, each worth the
// observations prior's rests on, within [priorMin, priorWeight] (0.5
// everywhere, worth priorMin, when prior is nil).
func (p *Positions) Init(k int, prior *Positions) { p.init(k, prior, posDecay, priorWeight) }

// NewPrior returns a pipeline-wide estimate over k positions: every
// sequence's blocks update it (decaying by 0.99 per observation), and new
// sequences start from it (Init). It is not safe for concurrent use.
func NewPrior(k int) *Positions {
	p := &Positions{}
	p.init(k, nil, 0.99, pipeWeight)
	return p
}

func (p *Positions) init(k int, prior *Positions, decay, weight float64) {
	if cap(p.acc) < k {
		p.acc, p.seen, p.pw, p.q = make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k)
	}
	p.acc, p.seen, p.pw, p.q = p.acc[:k], p.seen[:k], p.pw[:k], p.q[:k]
	p.decay, p.zeros, p.interval, p.left, p.backoff = decay, 0, 0, 0, 0
	p.probed, p.hit, p.spec, p.lapsed = false, false, false, 0
	v := priorP
	for j := range p.acc {
		var w float64
		v, p.q[j], w = prior.startAt(j, v, weight)
		p.acc[j], p.seen[j], p.pw[j] = 0, 0, w
	}
}

// startAt is what a sequence starting from p takes at position j+1
// (from 0), given p's estimate v of position j (priorP for j = 0): the
// estimate of position j+1 to carry on with, the sequence's prior there
// (within [1e-3, 1]) and its weight, the observations p's estimate
// rests on within [priorMin, weight] (priorP and min(weight, priorMin)
// from a nil p).
func (p *Positions) startAt(j int, v, weight float64) (next, q, w float64) {
	if p == nil {
		return priorP, priorP, min(weight, priorMin)
	}
	if j < len(p.acc) {
		v = p.at(j, v)
	}
	return v, min(max(v, 1e-3), 1), min(max(p.Seen(j+1), priorMin), weight)
}

// Relax ages p by a step decoding plainly: its own counts lose
// relaxDecay of their weight, its prior regains it, up to what Init gives
// (within priorMin and priorWeight by what pipe's estimate rests on), and
// the prior becomes pipe's estimate now (pipe: the pipeline's, NewPrior;
// nil keeps p's). A sequence whose estimates dipped (a rejection or two
// take P(1) from 0.9 to under 0.85) and that stopped speculating so comes
// back, over some 1/(1−relaxDecay) plain steps, to where a new sequence
// would start; what it sees itself, once probes or speculation resume,
// counts as before.
func (p *Positions) Relax(pipe *Positions) {
	v := priorP
	for j := range p.acc {
		p.acc[j] *= relaxDecay
		p.seen[j] *= relaxDecay
		var q, w float64
		v, q, w = pipe.startAt(j, v, priorWeight)
		if pipe != nil {
			p.q[j] = q
		}
		p.pw[j] += (w - p.pw[j]) * (1 - relaxDecay)
	}
}

// CopyFrom sets p's estimates of positions 1..min(p.Len(), q.Len()) to
// q's (counts, prior weights and prior); the other positions and p's
// probe schedule are left as they are.
func (p *Positions) CopyFrom(q *Positions) {
	n := min(len(p.acc), len(q.acc))
	copy(p.acc[:n], q.acc)
	copy(p.seen[:n], q.seen)
	copy(p.pw[:n], q.pw)
	copy(p.q[:n], q.q)
}

// Len is the number of positions p tracks.
func (p *Positions) Len() int { return len(p.acc) }

// Seen is the decaying count of blocks that examined draft position j ≥ 1
// (0 past Len).
func (p *Positions) Seen(j int) float64 {
	if j < 1 || j > len(p.seen) {
		return 0
	}
	return p.seen[j-1]
}

// ProbeDue is the number of steps after the next before the policy probes,
// as its last choice of k = 0 scheduled it (negative while it speculates,
// while no probe could pay, or when the sequence will have ended or be
// too near its end by then: Step.Left): the time a model drafter has to
// catch up on the tokens committed meanwhile, off the critical path.
func (p *Positions) ProbeDue() int {
	if p.interval == 0 {
		return -1
	}
	due := max(p.interval-p.zeros-1, 0)
	if p.left > 0 && !probeFits(p.left-due-1, p.interval) {
		return -1
	}
	return due
}

// Lapsed reports whether the sequence decodes plainly after speculating,
// and fewer than LapseProbes probes since have failed to bring it back:
// it probes every ProbeMin steps then, as a dip of its estimates (not of
// its acceptance) ends speculation too, and each probe is one more
// block to judge by (a draft model kept fed meanwhile makes them cheap).
func (p *Positions) Lapsed() bool { return p.lapsed > 0 }

// probeFits reports whether a probe made with left steps to go (itself
// included) leaves at least interval steps after it.
func probeFits(left, interval int) bool { return left-1 >= interval }

// Update records a block of k draft tokens of which the first a were
// accepted: positions 1..a passed, position a+1 (if a < k) failed, later
// ones were not examined. Positions past Len are ignored. A probe's
// block accepted in full resets the probes' backoff (ProbeBackoff).
func (p *Positions) Update(k, a int) {
	for j := 0; j < min(a, len(p.acc)); j++ {
		p.acc[j] = p.decay*p.acc[j] + 1
		p.seen[j] = p.decay*p.seen[j] + 1
		p.pw[j] *= p.decay
	}
	if a < k && a < len(p.acc) {
		p.acc[a] *= p.decay
		p.seen[a] = p.decay*p.seen[a] + 1
		p.pw[a] *= p.decay
	}
	// A probe accepted in full: the acceptance may have risen, so the
	// next probe comes at the probes' own cost (no backoff).
	p.hit = p.probed && k > 0 && a == k
}

// P is the estimated acceptance of draft position j ≥ 1 given the
// positions before it were accepted (past Len: that of position Len).
func (p *Positions) P(j int) float64 {
	v := priorP
	for i := 0; i < min(j, len(p.acc)); i++ {
		v = p.at(i, v)
	}
	return v
}

// at is the estimate of position i+1 given prev, that of position i.
func (p *Positions) at(i int, prev float64) float64 {
	prior := p.q[0] // position 1: the pipeline's; deeper: the one before, reshaped
	if i > 0 {
		prior = min(prev*p.q[i]/p.q[i-1], 1)
	}
	return (p.acc[i] + p.pw[i]*prior) / (p.seen[i] + p.pw[i])
}

// All is the estimated chance that draft tokens 1..n are all accepted:
// the product of P(1)..P(n).
func (p *Positions) All(n int) float64 {
	all, v := 1.0, priorP
	for j := 0; j < n; j++ {
		if j < len(p.acc) {
			v = p.at(j, v)
		}
		all *= v
	}
	return all
}

// Expected is E(k), the tokens a step with k draft tokens commits: the
// accepted ones and the target's own.
func (p *Positions) Expected(k int) float64 {
	e, run, v := 1.0, 1.0, priorP
	for j := 0; j < k; j++ {
		if j < len(p.acc) {
			v = p.at(j, v)
		}
		run *= v
		e += run
	}
	return e
}

// Others are the other sequences verified in the same target pass, and
// for Gain those of the whole round where passes take turns.
type Others struct {
	// Gain is the tokens the other sequences commit per step: those of
	// every sequence whose passes a step's measured time (Extra) spans,
	// the round's where passes take turns, so that the other passes' time
	// does not make a longer block look cheap against this pass's tokens
	// alone.
	Gain  float64
	Draft float64 // their draft time per step
}

// Step is what the auto policy knows of a sequence's next step. Times are
// in seconds (or any one unit).
type Step struct {
	// Seqs is the number of sequences in the pass (this one included; 0
	// counts as 1): a probe costs the pass a share that Rate dilutes by
	// them, so its interval is scaled back up.
	Seqs float64
	// Pass[k], for k = 0 .. the largest k allowed, is the time of the
	// target pass that would verify this sequence's block of k draft
	// tokens together with the other sequences' blocks (Costs.Fill).
	Pass []float64
	// Draft is the time to draft one token.
	Draft float64
	// Hidden is h in [0, 1]: the fraction of draft time that overlap with
	// verification hides (at most the verification's time is hidden).
	Hidden float64
	// Catchup is the time the drafter needs to read the tokens committed
	// since it last drafted for this sequence, before it can propose: a
	// model draft must have read every token, so a probe after plain
	// steps costs it as well (ProbeBudget), and so does a k > 0 chosen
	// after them, where Choose spreads it over the steps the speculation
	// can last (at most ProbeMax, and the steps left over E(k)).
	Catchup float64
	// Behind is the time the drafter spends reading the tokens committed
	// since it last drafted for this sequence, whether it reads them at a
	// probe (Catchup) or ahead of it while the target verifies: what a
	// probe costs the draft model, counted in its loss. Less than Catchup
	// counts as Catchup.
	Behind float64
	// ProbeExtra is the measured time a probe step (a speculative step
	// after plain ones) takes beyond a steady step at its k
	// (Costs.ProbeExtra): the catch-up it really waited for and what a
	// drafter left idle costs when it starts again, which a probe's loss
	// counts where it exceeds Catchup and Behind.
	ProbeExtra float64
	// Left is the most steps the sequence can still take, this one
	// included (the tokens it still wants, within its context); 0: no
	// bound.
	Left int
	// Explore: the pipeline's acceptance estimates rest on fewer than
	// ExploreBlocks blocks, so a choice of 0 drafts a probe's tokens
	// instead (a Choice.Probe that changes no probe schedule), wherever
	// the sequence is: what it finds serves every sequence after it. It
	// does so only while a block whose every token is accepted would pay
	// at the measured costs: where none would, there is nothing to find.
	Explore bool
	// Extra[k] is the measured time a step with k draft tokens takes
	// beyond what Pass, Draft and Hidden predict for it (Costs.StepExtra:
	// the pipeline's own work around the pass and the draft, and what
	// their calibration misses), so that the choice follows the steps'
	// real times; nil, or k past its end: none. Rate does not let it
	// predict a step under half of Time's.
	Extra []float64
	// Ahead[k] is the share of the draft time of a step with k draft
	// tokens that drafting ahead hides: a pre-draft of the next block runs
	// while this one is verified, and is used when every draft token is
	// accepted, so in steady decoding at k it is the chance of that, where
	// a pre-draft runs at k (and 0 elsewhere). Time takes the larger of it
	// and Hidden. nil, or k past its end: none.
	Ahead  []float64
	Others Others
}

// Time is the predicted time of the step with k draft tokens from the
// cost model alone (Pass, Draft, Hidden, Ahead; without Extra and Catchup);
// k must index s.Pass.
func (s *Step) Time(k int) float64 {
	d := s.Others.Draft + float64(k)*s.Draft
	t := s.Pass[k]
	h := s.Hidden
	if k < len(s.Ahead) {
		h = max(h, s.Ahead[k])
	}
	h = min(max(h, 0), 1)
	return t + d - min(h*d, t)
}

// Choice is the auto policy's decision for one step.
type Choice struct {
	K       int
	Speedup float64 // predicted rate(K) / rate(0)
	Probe   bool    // K is a probe after choices of 0, or exploration (Step.Explore), not the best k
}

// Rate is rate(k) of the package comment for a sequence with acceptance
// estimates pos (predicted tokens committed per unit of time by the pass's
// sequences); k must index s.Pass.
func Rate(pos *Positions, s *Step, k int) float64 {
	return (s.Others.Gain + pos.Expected(k)) / s.Measured(k)
}

// Measured is the predicted time of the step with k draft tokens that Rate
// divides by: Time(k) corrected by Extra[k], but not below half of Time(k)
// (nor 1e-12); k must index s.Pass.
func (s *Step) Measured(k int) float64 {
	t := s.Time(k)
	if k < len(s.Extra) {
		t = max(t+s.Extra[k], t/2)
	}
	return max(t, 1e-12)
}

// canPay reports whether a block of some k in [1, kmax] draft tokens, every
// one of them accepted, would beat plain decoding (rate r0) by Margin at
// the step's measured costs: when none would, no acceptance that
// exploring could find makes speculation pay.
func canPay(s *Step, r0 float64, kmax int) bool {
	for k := 1; k <= kmax; k++ {
		if (s.Others.Gain+float64(k+1))/s.Measured(k) >= r0*(1+Margin) {
			return true
		}
	}
	return false
}

// Choose returns the draft length for the next step: the k in
// [0, min(K, len(s.Pass)−1)] with the highest Rate, 0 unless the best k > 0
// beats it by Margin (a k > 0 paying for s.Catchup, spread over the steps
// it can last), or a probe when the sequence has chosen 0 long enough and
// enough steps are left and a block accepted in full would pay (see
// ProbeBudget; a probe's loss is counted for the whole pass, s.Seqs
// sequences, with s.Behind; ProbeBackoff). It records the choice in pos's probe
// schedule. It does not allocate.
func (p Policy) Choose(pos *Positions, s *Step) Choice {
	kmax := min(p.K, len(s.Pass)-1)
	if kmax <= 0 {
		return Choice{Speedup: 1}
	}
	r0 := Rate(pos, s, 0)
	best, bestK := 0.0, 0 // the best k > 0
	probe, probeK := 0.0, 1
	for k := 1; k <= kmax; k++ {
		r := Rate(pos, s, k)
		if k <= ProbeK && r > probe { // a probe's catch-up is its loss's
			probe, probeK = r, k
		}
		if c := s.Catchup; c > 0 { // read once, then drafting steps follow
			e := s.Others.Gain + pos.Expected(k)
			steps := float64(ProbeMax)
			if s.Left > 0 {
				steps = min(steps, max(float64(s.Left)/pos.Expected(k), 1))
			}
			r = e / (e/r + c/steps)
		}
		if r > best {
			best, bestK = r, k
		}
	}
	need := r0 * (1 + Margin)
	if pos.spec {
		need = r0 * (1 - Hold)
	}
	if bestK > 0 && best >= need {
		pos.zeros, pos.interval, pos.backoff, pos.probed, pos.spec, pos.lapsed = 0, 0, 0, false, true, 0
		return Choice{K: bestK, Speedup: best / r0}
	}
	if pos.spec {
		pos.lapsed = LapseProbes
	}
	pos.spec = false
	pays := canPay(s, r0, kmax)
	if s.Explore && pays {
		return Choice{K: probeK, Speedup: probe / r0, Probe: true}
	}
	if pos.probed { // the last probe did not make speculation pay
		switch {
		case pos.lapsed > 0:
			pos.lapsed--
		case pos.hit: // but its every token was accepted
			pos.backoff = 0
		default:
			pos.backoff = min(pos.backoff+1, ProbeBackoff)
		}
		pos.probed, pos.hit = false, false
	}
	// The probe's loss: the throughput its step gives up (for the whole
	// pass) and the catch-up it needs, in plain steps of this sequence.
	loss := max(0, 1-probe/r0)*max(s.Seqs, 1) + max(s.Catchup, s.Behind, s.ProbeExtra)*r0/max(s.Others.Gain+pos.Expected(0), 1)
	pos.interval = min(max(int(math.Ceil(loss/ProbeBudget)), ProbeMin), ProbeMax) << pos.backoff
	if pos.lapsed > 0 {
		pos.interval = ProbeMin
	}
	pos.left = s.Left
	pos.zeros++
	if !pays {
		// Not even a block whose every token is accepted would pay at the
		// measured costs (in a batch whose pass a draft token costs more
		// than it yields, say): nothing a probe could find would change
		// the choice, so none is made or scheduled (ProbeDue: none) until
		// the costs change.
		pos.interval = 0
		return Choice{Speedup: 1}
	}
	if pos.zeros >= pos.interval && (s.Left <= 0 || probeFits(s.Left, pos.interval)) {
		pos.zeros, pos.probed = 0, true
		return Choice{K: probeK, Speedup: probe / r0, Probe: true}
	}
	return Choice{Speedup: 1}
}

// Costs is the measured cost of target passes on one backend. A pass of
// N tokens over b sequences whose tokens attend to W positions in all (a
// token at position p attends to p+1: the attention's work) is predicted
// to take
//
//	level · cell(N, b) · (prior(N) + attn·W)
//
// where prior(N) (an N-token pass at the start of a sequence) and attn
// (the time per position attended) come from calibration (Calibrate),
// level is the decaying mean of observed/predicted-by-the-prior over the
// plain passes run (one token a sequence: it follows the machine's load),
// and cell(N, b) the decaying
// mean of observed/(level·prior) over the passes of that shape, trusted as
// it gathers observations (its first ones count against cellPrior
// observations of 1). An observation is first clipped to within clipOut
// of the prediction, so that a pass whose thread was descheduled does not
// decide alone. Methods are safe for concurrent use and do not allocate.
type Costs struct {
	mu         sync.Mutex
	maxTok     int
	maxSeqs    int
	prior      []float64 // prior[n-1]: n-token pass, one sequence, from position 0, without its attention
	attn       float64
	calibrated bool
	level      float64
	levelW     float64
	cell, w    []float64 // [(seqs-1)*maxTok + n-1]
	draft      float64   // the Drafter's time per token drafted (ObserveDraft)
	draftW     float64
	// a whole step's measured time beyond the model's (ObserveStep):
	// per k (index k), and over every k > 0
	extra, extraW    []float64
	extraSpec, specW float64
	// a probe step's measured time beyond a steady step's (ObserveProbe)
	probe, probeW float64
	// the acceptance the pipelines on the table saw (SaveAcceptance); nil
	// until one saves it
	accept *Positions
}

const (
	costRate   = 0.05 // the weight of a new observation once a mean has enough
	cellPrior  = 8    // observations' worth of "the prior's shape is right"
	clipOut    = 2.5  // observations are clipped to within this factor of the prediction
	levelFloor = 1e-12
)

// NewCosts returns a table for passes of up to maxTokens tokens and
// maxSeqs sequences. Until Calibrate, its prior is that an n-token pass
// costs (n+1)/2 one-token passes and attention nothing, in units of one
// such pass until a pass has been observed.
func NewCosts(maxTokens, maxSeqs int) *Costs {
	maxTokens, maxSeqs = max(maxTokens, 1), max(maxSeqs, 1)
	c := &Costs{maxTok: maxTokens, maxSeqs: maxSeqs, level: 1,
		prior: make([]float64, maxTokens), cell: make([]float64, maxTokens*maxSeqs), w: make([]float64, maxTokens*maxSeqs),
		extra: make([]float64, maxTokens), extraW: make([]float64, maxTokens)}
	for n := range c.prior {
		c.prior[n] = float64(n+2) / 2
	}
	return c
}

// MaxTokens and MaxSeqs are the table's bounds.
func (c *Costs) MaxTokens() int { return c.maxTok }
func (c *Costs) MaxSeqs() int   { return c.maxSeqs }

// Work is the attention work of a block of n tokens from position pos:
// Σ_{j<n} (pos+j+1) positions attended.
func Work(pos, n int) float64 {
	return float64(n)*float64(pos+1) + float64(n)*float64(n-1)/2
}

// Calibrate sets the prior: pass[n-1] is the measured time of an n-token
// pass of one sequence from position 0 (so its work is Work(0, n)), 0
// where not measured (interpolated linearly between measured sizes,
// extrapolated from the last two); pass[0] must be measured. attn is the
// time per position attended. The level and the cells start afresh.
func (c *Costs) Calibrate(pass []float64, attn float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	attn = max(attn, 0)
	val := func(n int) float64 { // the measured time without its attention, or 0
		if n >= len(pass) || !(pass[n] > 0) {
			return 0
		}
		return max(pass[n]-attn*Work(0, n+1), pass[n]/4)
	}
	known := -1 // the last measured index
	for n := 0; n < c.maxTok; n++ {
		if v := val(n); v > 0 {
			for m := known + 1; m < n && known >= 0; m++ { // fill the gap
				f := float64(m-known) / float64(n-known)
				c.prior[m] = c.prior[known] + f*(v-c.prior[known])
			}
			c.prior[n], known = v, n
		}
	}
	if known < 0 {
		return
	}
	// Beyond the last measured size: the slope of the last two measured
	// points (or proportional to n with one).
	prev := -1
	for m := known - 1; m >= 0; m-- {
		if val(m) > 0 {
			prev = m
			break
		}
	}
	for n := known + 1; n < c.maxTok; n++ {
		if prev < 0 {
			c.prior[n] = c.prior[known] * float64(n+1) / float64(known+1)
		} else {
			slope := max(0, (c.prior[known]-c.prior[prev])/float64(known-prev))
			c.prior[n] = c.prior[known] + slope*float64(n-known)
		}
	}
	c.attn = attn
	c.level, c.levelW, c.calibrated = 1, 1, true
	clear(c.cell)
	clear(c.w)
}

// Calibrated reports whether Calibrate has set the prior.
func (c *Costs) Calibrated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calibrated
}

// ObservePass records a target pass of tokens tokens over seqs sequences,
// whose attention work (Work summed over its blocks) was work, that took
// t.
func (c *Costs) ObservePass(tokens, seqs int, work, t float64) {
	if tokens < 1 || !(t > 0) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	base := c.base(tokens, work)
	if c.levelW == 0 { // the first observation without calibration sets the unit
		c.level = t / base
	}
	if c.levelW >= 2 {
		p := c.pass(tokens, seqs, work)
		t = min(max(t, p/clipOut), p*clipOut)
	}
	// Only a plain pass (a token a sequence) teaches the level, or the
	// first ones without calibration: a (k+1)-token shape slower than the
	// prior's is its cell's to learn, and where a sequence speculates for
	// many steps (or a benchmark runs fixed k) those passes alone would
	// otherwise carry its misfit into every other prediction, the plain
	// pass's that speculation is weighed against included.
	if tokens <= max(seqs, 1) || !c.calibrated && c.levelW < 2 {
		c.level = max(ema(c.level, t/base, &c.levelW), levelFloor)
	}
	if tokens > c.maxTok {
		return
	}
	i := (min(max(seqs, 1), c.maxSeqs)-1)*c.maxTok + tokens - 1
	c.cell[i] = ema(c.cell[i], t/(base*c.level), &c.w[i])
}

// ema moves mean towards x: a plain mean while *w is small, a decaying
// one (weight costRate) after.
func ema(mean, x float64, w *float64) float64 {
	*w++
	return mean + (x-mean)*max(1 / *w, costRate)
}

// shape is cell i's correction, shrunk towards 1 while it has few
// observations. c.mu is held.
func (c *Costs) shape(i int) float64 {
	return (c.w[i]*c.cell[i] + cellPrior) / (c.w[i] + cellPrior)
}

// base is the calibrated time of an n-token pass with attention work
// work, the prior extrapolated linearly past the table. c.mu is held.
func (c *Costs) base(n int, work float64) float64 {
	m := c.maxTok
	t := c.prior[min(n, m)-1]
	if n > m {
		slope := c.prior[m-1]
		if m >= 2 {
			slope -= c.prior[m-2]
		}
		t += max(slope, 0) * float64(n-m)
	}
	return t + c.attn*max(work, 0)
}

// ObserveDraft records that the drafter of the pipelines sharing the
// table (their Drafter, one per engine) took t per token drafted, over a
// step that drafted after another that did, so that a pipeline built
// later starts from it instead of a guess (Policy.Cost).
func (c *Costs) ObserveDraft(t float64) {
	if !(t > 0) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.draft = ema(c.draft, t, &c.draftW)
}

// ObserveStep records that a whole step of a sequence with k draft
// tokens, from one choice of its draft length to the next, took extra
// beyond what the cost model predicted for it (Step.Time), which was
// predicted: what the pipeline spends around the pass and the draft, and
// what calibration under load got wrong. The observation is clipped to
// within [−predicted/2, 2·max(predicted, the mean so far)], so that one
// descheduled step does not decide alone; k past the table is ignored.
// The other k's observations weigh stepForget less each time, so that
// StepExtra's estimate for a k not taken for long shrinks back (a k > 0's
// towards plain steps', k = 0's towards the cost model's), and is
// measured again once the policy picks it.
func (c *Costs) ObserveStep(k int, extra, predicted float64) {
	if k < 0 || k >= c.maxTok || !(predicted > 0) || math.IsNaN(extra) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	extra = min(max(extra, -predicted/2), 2*max(predicted, c.extra[k]))
	for j := range c.extraW {
		if j != k {
			c.extraW[j] *= stepForget
		}
	}
	c.extra[k] = ema(c.extra[k], extra, &c.extraW[k])
	if k > 0 {
		c.extraSpec = ema(c.extraSpec, extra, &c.specW)
	} else {
		c.specW *= stepForget
	}
}

// stepForget is the weight an ObserveStep keeps of the other k's
// observations; stepPrior the observations' worth of "the cost model is
// right" that StepExtra's estimates are shrunk by.
const (
	stepForget = 0.995
	stepPrior  = 4
)

// StepExtra fills dst[k] with the decaying mean of ObserveStep's extra
// times for k (Step.Extra), shrunk while it has few recent observations:
// k = 0's towards 0, the mean over every k > 0 towards k = 0's (the
// pipeline's work around a step that plain steps show, which a
// speculative step does too), a k > 0's towards that mean, which a k > 0
// not yet observed takes.
func (c *Costs) StepExtra(dst []float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	base := 0.0
	if c.extraW[0] > 0 {
		base = c.extra[0] * c.extraW[0] / (c.extraW[0] + stepPrior)
	}
	spec := (c.extraSpec*c.specW + base*stepPrior) / (c.specW + stepPrior)
	for k := range dst {
		switch {
		case k == 0:
			dst[k] = base
		case k < c.maxTok && c.extraW[k] > 0:
			dst[k] = (c.extra[k]*c.extraW[k] + spec*stepPrior) / (c.extraW[k] + stepPrior)
		default:
			dst[k] = spec
		}
	}
}

// ObserveProbe records that a probe step (a speculative step after plain
// ones, which reads the tokens committed since its drafter last drafted)
// took extra beyond the steady step at its k that was predicted
// (Step.Measured), clipped to within [−predicted/2, 4·predicted].
func (c *Costs) ObserveProbe(extra, predicted float64) {
	if !(predicted > 0) || math.IsNaN(extra) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.probe = ema(c.probe, min(max(extra, -predicted/2), 4*predicted), &c.probeW)
}

// ProbeExtra is the decaying mean of ObserveProbe's extra times, shrunk
// towards 0 while it has few observations (Step.ProbeExtra); never
// negative.
func (c *Costs) ProbeExtra() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return max(c.probe*c.probeW/(c.probeW+stepPrior), 0)
}

// SaveAcceptance keeps a copy of a pipeline's acceptance estimates (its
// draft.NewPrior, over every sequence's blocks) for the pipelines built
// on the table after it, which start from it (LoadAcceptance) instead of
// exploring again what the pair's drafts are worth.
func (c *Costs) SaveAcceptance(p *Positions) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.accept == nil || c.accept.Len() < p.Len() {
		c.accept = NewPrior(p.Len())
	}
	c.accept.CopyFrom(p)
}

// LoadAcceptance sets p's estimates to the last SaveAcceptance's, where
// there was one (else it leaves p as it is).
func (c *Costs) LoadAcceptance(p *Positions) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.accept != nil {
		p.CopyFrom(c.accept)
	}
}

// Draft is the decaying mean of ObserveDraft's times, 0 before the first.
func (c *Costs) Draft() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.draft
}

// Pass is the predicted time of a pass of tokens tokens over seqs
// sequences with attention work work.
func (c *Costs) Pass(tokens, seqs int, work float64) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pass(tokens, seqs, work)
}

func (c *Costs) pass(tokens, seqs int, work float64) float64 {
	tokens = max(tokens, 1)
	t := c.base(tokens, work) * c.level
	if tokens <= c.maxTok {
		t *= c.shape((min(max(seqs, 1), c.maxSeqs)-1)*c.maxTok + tokens - 1)
	}
	return t
}

// Fill sets dst[k], for every k of dst, to the predicted time of a pass
// over seqs sequences that verifies a block of k+1 tokens from position
// pos together with baseTokens tokens of other sequences whose attention
// work is baseWork: Step.Pass.
func (c *Costs) Fill(dst []float64, seqs, baseTokens int, baseWork float64, pos int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range dst {
		dst[k] = c.pass(baseTokens+k+1, seqs, baseWork+Work(pos, k+1))
	}
}
