package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/model"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/stages"
)

// Request is one request's measurement in one run.
type Request struct {
	Prompt    int     // index into the runner's prompts
	Tokens    []int32 // generated
	Blocks    []Block // one per chunk, but those Cut
	Cut       int     // blocks cut short by the length limit (left out of Blocks)
	Generated int
	TTFT      time.Duration   // admission to first token (stages.RequestStats.TTFT)
	TTFS      time.Duration   // admission to the first sentence end in the text; 0: none (or no text)
	Gaps      []time.Duration // between consecutive chunks (vLLM's inter-token latencies)
	TPOT      time.Duration   // mean time per output token after the first (RequestStats.ITL)
	Duration  time.Duration   // admission to final chunk
}

// Sample is what one run of one configuration measured.
type Sample struct {
	Wall                                        time.Duration
	Generated                                   int
	DraftBusy, VerifyBusy, PrefillBusy, Overlap time.Duration
	Passes, PassTokens                          int
	// CPU is the process's CPU time during the run (0 where not
	// measured): on a shared machine CPU/Wall shows how much of its
	// threads' time the run actually got.
	CPU time.Duration
	// KChosen[k] counts the blocks whose draft length was k
	// (stages.Snapshot.KChosen); AutoSteps of them were chosen by the
	// auto policy, Probes of those were probes after choices of 0, and
	// PredictedSum sums the policy's predicted speedups.
	KChosen      []int
	AutoSteps    int
	Probes       int
	PredictedSum float64
	Requests     []Request
	Timeline     *Timeline // when asked for
}

// CPUTokS is tokens per CPU-second of the process (0 if not measured):
// less disturbed by other work on the machine than TokS, but blind to
// what running draft and verify at once gains.
func (s Sample) CPUTokS() float64 {
	if s.CPU <= 0 {
		return 0
	}
	return float64(s.Generated) / s.CPU.Seconds()
}

// TokS is the run's throughput: tokens generated per second of wall time.
func (s Sample) TokS() float64 {
	if s.Wall <= 0 {
		return 0
	}
	return float64(s.Generated) / s.Wall.Seconds()
}

// Costs are the measured forward-pass costs behind the theory: the
// target's 1-token pass, the draft's, their ratio c, and the target's
// (k+1)-token passes.
type Costs struct {
	Threads int           `json:"threads"`
	Target1 time.Duration `json:"target_1_ns"`
	Draft1  time.Duration `json:"draft_1_ns"` // 0 without a draft model
	C       Num           `json:"c"`          // Draft1 / Target1
	Pass    []PassCost    `json:"pass"`
}

// PassCost is the cost of the target's (k+1)-token verification pass.
type PassCost struct {
	K    int           `json:"k"`
	Cost time.Duration `json:"cost_ns"`
	R    Num           `json:"r"` // Cost / Target1
}

// R returns the relative (k+1)-pass cost r for k (NaN if not measured).
func (c Costs) R(k int) float64 {
	for _, p := range c.Pass {
		if p.K == k {
			return float64(p.R)
		}
	}
	return nan
}

// Runner runs configurations. Sweep calls it from one goroutine.
type Runner interface {
	// Run decodes the runner's prompts once in configuration p and
	// returns what it measured, with a Timeline if timeline is set.
	Run(ctx context.Context, p Point, timeline bool) (Sample, error)
	// Costs measures the forward-pass costs for threads target threads
	// and the draft lengths ks.
	Costs(ctx context.Context, threads int, ks []int) (Costs, error)
	// Prompts are the prompts every run decodes.
	Prompts() []Prompt
}

// EngineRunner runs configurations through stages pipelines built by an
// engine: one pipeline per run, every prompt submitted at once, Batch of
// them decoded together (continuous batching), N tokens each (no stop at
// end of generation, so every configuration does the same work).
type EngineRunner struct {
	e         *engine.Engine
	base      engine.Options
	prompts   []Prompt
	ids       [][]int32
	n         int
	seed      uint64
	synthetic []float64
	maxPos    int
	maxPrompt int
	c         map[int]float64 // measured c per target thread count (Costs), for adaptive k
}

// RunnerOptions configure an EngineRunner.
type RunnerOptions struct {
	// Base is the pipeline options every configuration starts from (the
	// engine's, with the user's --draft-threads, --pre-draft …); a
	// Point sets K, PMin, Adaptive and the threads.
	Base    engine.Options
	Prompts []Prompt
	N       int    // tokens generated per request
	Seed    uint64 // sampling seed of request i is Seed+i
	// Synthetic, if not empty, accepts draft token j with probability
	// Synthetic[min(j, len-1)] whatever the draft proposed (synthetic).
	Synthetic []float64
	MaxK      int // the largest draft length the runner will be asked for
}

// ErrRunner reports a runner that cannot run what it was given.
var ErrRunner = errors.New("bench: runner")

// NewEngineRunner tokenizes the prompts (text needs the target's
// tokenizer) and checks that they fit the target's context with N
// tokens and a draft block.
func NewEngineRunner(e *engine.Engine, o RunnerOptions) (*EngineRunner, error) {
	if o.N < 1 {
		return nil, fmt.Errorf("%w: -n %d: must be at least 1", ErrRunner, o.N)
	}
	if len(o.Prompts) == 0 {
		return nil, fmt.Errorf("%w: no prompts", ErrRunner)
	}
	for _, r := range o.Synthetic {
		if !(r >= 0 && r <= 1) {
			return nil, fmt.Errorf("%w: synthetic acceptance %g not in [0, 1]", ErrRunner, r)
		}
	}
	r := &EngineRunner{e: e, base: o.Base, prompts: o.Prompts, n: o.N, seed: o.Seed, synthetic: o.Synthetic, c: map[int]float64{}}
	for _, p := range o.Prompts {
		ids := p.IDs
		if len(ids) == 0 {
			if _, err := e.Tokenizer(); err != nil {
				return nil, fmt.Errorf("%w: prompt %s is text but %v (give prompts as ids)", ErrPrompts, p.ID, err)
			}
			var err error
			if ids, err = e.Encode(p.Text, true); err != nil {
				return nil, fmt.Errorf("%w: prompt %s: %v", ErrPrompts, p.ID, err)
			}
		}
		if _, err := e.PromptIDs(joinIDs(ids), false); err != nil {
			return nil, fmt.Errorf("%w: prompt %s: %v", ErrPrompts, p.ID, err)
		}
		r.ids = append(r.ids, ids)
		r.maxPrompt = max(r.maxPrompt, len(ids))
	}
	r.maxPos = r.maxPrompt + o.N + o.MaxK + 2
	if r.maxPos > e.CtxLen() {
		return nil, fmt.Errorf("%w: the longest prompt (%d tokens), -n %d and k %d need %d positions, the target has %d",
			ErrPrompts, r.maxPrompt, o.N, o.MaxK, r.maxPos, e.CtxLen())
	}
	return r, nil
}

func joinIDs(ids []int32) string {
	b := make([]byte, 0, 6*len(ids))
	for i, t := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, "%d", t)
	}
	return string(b)
}

// Prompts returns the runner's prompts.
func (r *EngineRunner) Prompts() []Prompt { return r.prompts }

// Costs measures the target's 1-token and (k+1)-token passes and the
// draft's 1-token pass at the middle of a typical request, interleaved:
// each of 16 rounds (after 2 warm-up rounds) runs every pass once, and
// each pass's cost is its least over the rounds, so a stretch of
// contention on a shared machine slows every size alike instead of one.
// Later adaptive configurations on threads threads choose k with the
// measured c.
func (r *EngineRunner) Costs(ctx context.Context, threads int, ks []int) (Costs, error) {
	e := r.e
	sizes := []int{1}
	for _, k := range ks {
		if !slices.Contains(sizes, k+1) {
			sizes = append(sizes, k+1)
		}
	}
	nmax := slices.Max(sizes)
	pos := min(r.maxPrompt+r.n/2, e.CtxLen()-nmax-1)
	type pass struct {
		be    backend.Backend
		n     int
		lg    []float32
		b     backend.Batch
		best  time.Duration
		draft bool
	}
	newPass := func(m *model.Model, th, n int, draft bool) (*pass, error) {
		be, err := e.Backend(m, 1, pos+n+1, max(n, nmax), 0, th)
		if err != nil {
			return nil, err
		}
		// Fill the cache up to pos so attention spans a realistic length.
		fill := backend.NewBatch(nmax)
		for p := 0; p < pos; p += nmax {
			fill.Reset()
			for i := p; i < min(p+nmax, pos); i++ {
				fill.Add(1, int32(i), 0, false)
			}
			if err := be.Forward(&fill, nil); err != nil {
				return nil, err
			}
		}
		ps := &pass{be: be, n: n, lg: make([]float32, n*m.Config.Vocab), b: backend.NewBatch(n), best: -1, draft: draft}
		for i := 0; i < n; i++ {
			ps.b.Add(int32(1+i), int32(pos+i), 0, true)
		}
		return ps, nil
	}
	var passes []*pass
	for _, n := range sizes {
		ps, err := newPass(e.Target, threads, n, false)
		if err != nil {
			return Costs{}, err
		}
		passes = append(passes, ps)
	}
	if e.Draft != nil {
		ps, err := newPass(e.Draft, max(r.base.DraftThreads, 1), 1, true)
		if err != nil {
			return Costs{}, err
		}
		passes = append(passes, ps)
	}
	const rounds, warm = 16, 2
	for round := 0; round < rounds+warm; round++ {
		if err := ctx.Err(); err != nil {
			return Costs{}, err
		}
		for _, ps := range passes {
			if err := ps.be.Rollback(0, pos); err != nil {
				return Costs{}, err
			}
			t0 := time.Now()
			if err := ps.be.Forward(&ps.b, ps.lg); err != nil {
				return Costs{}, err
			}
			if d := time.Since(t0); round >= warm && (ps.best < 0 || d < ps.best) {
				ps.best = d
			}
		}
	}
	c := Costs{Threads: threads}
	for _, ps := range passes {
		switch {
		case ps.draft:
			c.Draft1 = ps.best
		case ps.n == 1:
			c.Target1 = ps.best
		}
	}
	if c.Draft1 > 0 {
		c.C = Num(c.Draft1.Seconds() / c.Target1.Seconds())
		r.c[threads] = float64(c.C)
	}
	for _, k := range ks {
		for _, ps := range passes {
			if !ps.draft && ps.n == k+1 {
				c.Pass = append(c.Pass, PassCost{K: k, Cost: ps.best, R: Num(ps.best.Seconds() / c.Target1.Seconds())})
			}
		}
	}
	return c, nil
}

// Run decodes every prompt once in configuration p.
func (r *EngineRunner) Run(ctx context.Context, p Point, timeline bool) (Sample, error) {
	o := r.base
	o.Threads, o.VerifyThreads = p.Threads, p.Threads
	o.K, o.PMin, o.Adaptive, o.Auto = max(p.K, 1), p.PMin, p.Adaptive, p.Auto
	if c, ok := r.c[p.Threads]; ok && p.Adaptive {
		o.DraftCost = c
	}
	mode := stages.DraftDefault
	switch {
	case p.Draft == DraftNone:
		o.Draft = engine.DraftNone
	case p.Draft == DraftNGram && o.Draft != engine.DraftNGram:
		mode = stages.DraftNGram // the engine's draft is a model: ask for prompt lookup per request
	case p.Draft == DraftModel && (o.Draft == engine.DraftNGram || !o.Speculative()):
		return Sample{}, fmt.Errorf("%w: %s: the engine has no draft model (-d)", ErrRunner, p)
	}
	cfg, err := r.e.PipelineConfigWith(o, p.Batch, r.maxPos, r.maxPrompt)
	if err != nil {
		return Sample{}, err
	}
	cfg.Stop = nil // fixed lengths: every configuration does the same work
	if mode == stages.DraftNGram {
		cfg.NGram = draft.NewNGram()
	}
	if len(r.synthetic) > 0 && p.Draft != DraftNone {
		cfg.Target = newSynthetic(cfg.Target, r.synthetic, r.seed)
	}
	var tl *Timeline
	var trec, drec *recorder
	t0 := time.Now()
	if timeline {
		tl = &Timeline{Point: p}
		trec, drec = newRecorder(t0, 1<<14), newRecorder(t0, 1<<14)
		cfg.Target = &timedBackend{Backend: cfg.Target, rec: trec}
		if cfg.Drafter != nil {
			cfg.Drafter = &timedDrafter{Drafter: cfg.Drafter, rec: drec}
		}
		if cfg.NGram != nil {
			cfg.NGram = &timedDrafter{Drafter: cfg.NGram, rec: drec}
		}
	}
	pl, err := stages.New(cfg)
	if err != nil {
		return Sample{}, err
	}
	reqs := make([]stages.Request, len(r.ids))
	for i, ids := range r.ids {
		reqs[i] = stages.Request{ID: fmt.Sprint(i), PromptIDs: ids, MaxTokens: r.n, Draft: mode,
			Params: sample.Params{Temp: float32(p.Temp), Seed: r.seed + uint64(i)}}
	}
	cpu0 := processCPU()
	res, err := collect(ctx, pl, reqs, t0)
	if err != nil {
		return Sample{}, err
	}
	cpu := processCPU() - cpu0
	m := pl.Metrics().Snapshot()
	s := Sample{Wall: m.Wall, Generated: m.Generated, DraftBusy: m.DraftBusy, VerifyBusy: m.VerifyBusy,
		PrefillBusy: m.PrefillBusy, Overlap: m.Overlap, Passes: m.Passes, PassTokens: m.PassTokens, CPU: cpu,
		KChosen: m.KChosen, AutoSteps: m.AutoSteps, Probes: m.Probes, PredictedSum: m.PredictedSum}
	for i := range res {
		res[i].Prompt = i
		s.Requests = append(s.Requests, res[i].Request)
	}
	if tl != nil {
		tl.Intervals = append(slices.Clone(trec.buf), drec.buf...)
		slices.SortStableFunc(tl.Intervals, func(a, b Interval) int { return int(a.Start - b.Start) })
		tl.Wall = m.Wall
		tl.First, tl.Last = res[0].firstAt, res[0].lastAt
		s.Timeline = tl
	}
	return s, nil
}

// collected is a Request with the arrival times of its chunks.
type collected struct {
	Request
	firstAt, lastAt time.Duration // since t0
	sentenceAt      time.Duration // since t0, the chunk that ended the first sentence
	text            []byte
	sentence        bool
	err             error
}

// collect runs p over reqs (all queued at once) and gathers each request's
// chunks as they arrive. A request that fails fails the run.
func collect(ctx context.Context, p *stages.Pipeline, reqs []stages.Request, t0 time.Time) ([]collected, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := make(chan stages.Request, len(reqs))
	for _, r := range reqs {
		in <- r
	}
	close(in)
	out := make(chan stages.Chunk, 256)
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, in, out) }() // joined below: collect returns after reading done
	idx := make(map[string]int, len(reqs))
	for i, r := range reqs {
		idx[r.ID] = i
	}
	res := make([]collected, len(reqs))
	take := func(c stages.Chunk) {
		at := time.Since(t0)
		r := &res[idx[c.ID]]
		if c.Final {
			r.err = c.Err
			if st := c.Stats; st != nil {
				r.TTFT, r.Duration, r.Generated, r.TPOT = st.TTFT, st.Duration, st.Generated, st.ITL()
			}
			return
		}
		if len(r.Tokens) == 0 {
			r.firstAt = at
		} else {
			r.Gaps = append(r.Gaps, at-r.lastAt)
		}
		r.lastAt = at
		r.Tokens = append(r.Tokens, c.Tokens...)
		if len(c.Tokens) > c.Accepted {
			r.Blocks = append(r.Blocks, Block{Drafted: c.Drafted, Accepted: c.Accepted})
		} else {
			// Cut by the length before the target's own token: how many
			// more draft tokens it would have accepted is unknown, so the
			// block counts for no acceptance statistic.
			r.Cut++
		}
		if !r.sentence && c.Text != "" {
			r.text = append(r.text, c.Text...)
			if sentenceEnd(string(r.text)) {
				r.sentence, r.sentenceAt = true, at
			}
		}
	}
	var runErr error
	for running := true; running; {
		select {
		case c := <-out:
			take(c)
		case runErr = <-done:
			for len(out) > 0 {
				take(<-out)
			}
			running = false
		}
	}
	if runErr != nil {
		return nil, runErr
	}
	for i := range res {
		r := &res[i]
		if r.err != nil {
			return nil, fmt.Errorf("request %d: %w", i, r.err)
		}
		if r.sentence {
			// TTFT counts from admission, which the client does not see;
			// the sentence came sentenceAt-firstAt after the first token.
			r.TTFS = r.TTFT + r.sentenceAt - r.firstAt
		}
	}
	return res, nil
}
