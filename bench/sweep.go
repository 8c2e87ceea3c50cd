package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// Plan is what a Sweep runs.
type Plan struct {
	Points []Point // speculative configurations (Grid.Points)
	Reps   int     // timed A/B pairs per configuration
	// Warmup is the number of untimed A/B pairs run first (cycling over
	// Points): page faults, caches and clocks settle before timing.
	Warmup int
	// DriftTol is the tolerance of a baseline measurement around its
	// median (0.10); beyond it the pair is flagged.
	DriftTol float64
	// Synthetic: acceptance is synthetic (--synthetic-acceptance), so
	// the output is not the target's and exactness is not checked.
	Synthetic bool
	// Timeline runs one configuration once more, recording a Timeline:
	// the fastest with a draft model, else the fastest.
	Timeline bool
}

// Progress is told after each step of a sweep: how many of total are
// done and what ran.
type Progress func(done, total int, what string)

// Steps is the number of steps Sweep reports to its Progress.
func (pl Plan) Steps() int {
	n := len(threadsOf(pl.Points)) + 2*pl.Warmup + 2*pl.Reps*len(pl.Points)
	if pl.Timeline {
		n++
	}
	return n
}

// measured is one timed run.
type measured struct {
	p    Point
	step int // place in the schedule
	s    Sample
}

// pair is one timed A/B pair.
type pair struct{ base, spec *measured }

// Sweep measures the costs, then runs pl's configurations in interleaved
// A/B pairs: for each repeat, for each configuration in turn, its
// baseline (Point.Baseline) and the configuration, baseline first in even
// repeats and second in odd ones. It returns the aggregated results
// (Machine, Models, Args and Settings are left to the caller).
func Sweep(ctx context.Context, r Runner, pl Plan, progress Progress) (*Results, error) {
	if len(pl.Points) == 0 || pl.Reps < 1 || pl.Warmup < 0 {
		return nil, fmt.Errorf("%w: a sweep needs configurations, a repeat or more and no negative warm-up", ErrGrid)
	}
	if pl.DriftTol <= 0 {
		pl.DriftTol = 0.10
	}
	total, done := pl.Steps(), 0
	step := func(what string) {
		done++
		if progress != nil {
			progress(done, total, what)
		}
	}
	res := &Results{Schema: Schema}
	costs := map[int]Costs{}
	for _, th := range threadsOf(pl.Points) {
		var ks []int
		for _, p := range pl.Points {
			if p.Threads == th && !p.Auto && !slices.Contains(ks, p.K) {
				ks = append(ks, p.K)
			}
		}
		slices.Sort(ks)
		c, err := r.Costs(ctx, th, ks)
		if err != nil {
			return nil, fmt.Errorf("bench: costs: %w", err)
		}
		costs[th] = c
		res.Costs = append(res.Costs, c)
		step(fmt.Sprintf("costs th%d", th))
	}
	runOne := func(p Point) (Sample, error) {
		s, err := r.Run(ctx, p, false)
		if err != nil {
			return s, fmt.Errorf("bench: %s: %w", p, err)
		}
		step(p.String())
		return s, nil
	}
	var warm []Sample // kept for the exactness reference only
	for w := 0; w < pl.Warmup; w++ {
		p := pl.Points[w%len(pl.Points)]
		for _, q := range []Point{p.Baseline(), p} {
			s, err := runOne(q)
			if err != nil {
				return nil, err
			}
			if q.Draft == DraftNone && q.Greedy() {
				warm = append(warm, s)
			}
		}
	}
	var runs []*measured
	pairs := map[Point][]pair{}
	for rep := 0; rep < pl.Reps; rep++ {
		for _, p := range pl.Points {
			order := []Point{p.Baseline(), p}
			if rep%2 == 1 {
				order[0], order[1] = order[1], order[0]
			}
			var pr pair
			for _, q := range order {
				s, err := runOne(q)
				if err != nil {
					return nil, err
				}
				m := &measured{p: q, step: len(runs), s: s}
				runs = append(runs, m)
				if q.Draft == DraftNone {
					pr.base = m
				} else {
					pr.spec = m
				}
			}
			pairs[p] = append(pairs[p], pr)
		}
	}
	ref := reference(warm, runs)
	var cats []string
	for _, q := range r.Prompts() {
		cats = append(cats, q.Category)
	}
	drifted := baselines(res, runs, ref, pl.DriftTol)
	for _, p := range pl.Points {
		c := aggregate(p, pairs[p], costs[p.Threads], cats, ref, pl.Synthetic, drifted)
		res.Configs = append(res.Configs, c)
		res.DriftFlagged += c.DriftedPairs
	}
	res.Best = best(res.Configs)
	if tp, ok := timelinePoint(res.Configs, res.Best); pl.Timeline && ok {
		s, err := r.Run(ctx, tp, true)
		if err != nil {
			return nil, fmt.Errorf("bench: timeline: %s: %w", tp, err)
		}
		step("timeline " + tp.String())
		res.Timeline = s.Timeline
	}
	return res, nil
}

// timelinePoint is the configuration whose timeline a sweep records: the
// fastest exact one with a draft model at a fixed or adaptive k (where
// draft and verify overlap; auto may not draft at all), else the best.
func timelinePoint(cs []ConfigResult, b *Best) (Point, bool) {
	var model []ConfigResult
	for _, c := range cs {
		if c.Draft == DraftModel && !c.Auto {
			model = append(model, c)
		}
	}
	if mb := best(model); mb != nil {
		return mb.Point, true
	}
	if b != nil {
		return b.Point, true
	}
	return Point{}, false
}

func threadsOf(ps []Point) []int {
	var out []int
	for _, p := range ps {
		if !slices.Contains(out, p.Threads) {
			out = append(out, p.Threads)
		}
	}
	return out
}

// reference is the greedy plain tokens of each prompt: those of the
// first greedy baseline run (a warm-up one if any), or nil if there is
// none.
func reference(warm []Sample, runs []*measured) [][]int32 {
	var s *Sample
	if len(warm) > 0 {
		s = &warm[0]
	} else {
		for _, m := range runs {
			if m.p.Draft == DraftNone && m.p.Greedy() {
				s = &m.s
				break
			}
		}
	}
	if s == nil {
		return nil
	}
	ref := make([][]int32, len(s.Requests))
	for _, q := range s.Requests {
		ref[q.Prompt] = q.Tokens
	}
	return ref
}

// mismatches counts the requests of s whose tokens differ from ref.
func mismatches(s Sample, ref [][]int32) int {
	n := 0
	for _, q := range s.Requests {
		if q.Prompt >= len(ref) || !slices.Equal(q.Tokens, ref[q.Prompt]) {
			n++
		}
	}
	return n
}

// baselines fills res.Baselines and res.Drift from the timed baseline
// runs and returns the runs beyond tol from their baseline's median.
func baselines(res *Results, runs []*measured, ref [][]int32, tol float64) map[*measured]bool {
	var order []Point
	by := map[Point][]*measured{}
	for _, m := range runs {
		if m.p.Draft != DraftNone {
			continue
		}
		if _, ok := by[m.p]; !ok {
			order = append(order, m.p)
		}
		by[m.p] = append(by[m.p], m)
	}
	drifted := map[*measured]bool{}
	worst := 0.0
	for _, p := range order {
		ms := by[p]
		b := BaselineResult{Point: p, Label: p.String(), Exact: "n/a: sampling"}
		var ttft, gaps []time.Duration
		var cpuToks, share []float64
		bad := 0
		for _, m := range ms {
			b.TokS = append(b.TokS, m.s.TokS())
			if x := m.s.CPUTokS(); x > 0 {
				cpuToks = append(cpuToks, x)
				share = append(share, m.s.CPU.Seconds()/m.s.Wall.Seconds())
			}
			b.Step = append(b.Step, m.step)
			for _, q := range m.s.Requests {
				ttft = append(ttft, q.TTFT)
				gaps = append(gaps, q.Gaps...)
			}
			if p.Greedy() {
				bad += mismatches(m.s, ref)
			}
		}
		if p.Greedy() {
			b.Exact = exactWord(bad)
		}
		var w float64
		b.Drifted, w = Drift(b.TokS, tol)
		for i, d := range b.Drifted {
			if d {
				drifted[ms[i]] = true
			}
		}
		worst = max(worst, w)
		b.Summary, b.Worst = Summarize(b.TokS), Num(w)
		b.CPUTokS, b.CPUShare = Summarize(cpuToks), Num(Quantile(share, 0.5))
		b.TTFTP50 = dms(DurationQuantile(ttft, 0.5))
		b.ITLP50, b.ITLP99 = dms(DurationQuantile(gaps, 0.5)), dms(DurationQuantile(gaps, 0.99))
		res.Baselines = append(res.Baselines, b)
	}
	res.Drift = Num(worst)
	return drifted
}

func exactWord(mismatched int) string {
	if mismatched == 0 {
		return "yes"
	}
	return "no"
}

func dms(d time.Duration) Num { return Num(float64(d) / 1e6) }

// aggregate computes the statistics of one configuration from its pairs;
// prompts[i] is the category of prompt i.
func aggregate(p Point, prs []pair, c Costs, prompts []string, ref [][]int32, synthetic bool, drifted map[*measured]bool) ConfigResult {
	cr := ConfigResult{Point: p, Label: p.String(), Runs: len(prs)}
	var toks, base, speed, dbusy, vbusy, over, cpuToks, share []float64
	var blocks []Block
	var ttft, ttfs, gaps, tpot []time.Duration
	var autoSteps int
	var predSum float64
	type catAcc struct {
		n             int
		blocks        []Block
		ttft          []time.Duration
		rate, speedup []float64
	}
	cats := map[string]*catAcc{}
	var catOrder []string
	mism := 0
	for _, pr := range prs {
		s, b := pr.spec.s, pr.base.s
		toks = append(toks, s.TokS())
		base = append(base, b.TokS())
		speed = append(speed, s.TokS()/b.TokS())
		if drifted[pr.base] {
			cr.DriftedPairs++
		}
		if x := s.CPUTokS(); x > 0 {
			cpuToks = append(cpuToks, x)
			share = append(share, s.CPU.Seconds()/s.Wall.Seconds())
		}
		if w := s.Wall.Seconds(); w > 0 {
			dbusy = append(dbusy, s.DraftBusy.Seconds()/w)
			vbusy = append(vbusy, s.VerifyBusy.Seconds()/w)
			over = append(over, s.Overlap.Seconds()/w)
		}
		if p.Greedy() && !synthetic {
			mism += mismatches(s, ref)
		}
		for k, n := range s.KChosen {
			for len(cr.KChosen) <= k {
				cr.KChosen = append(cr.KChosen, 0)
			}
			cr.KChosen[k] += n
		}
		cr.Probes += s.Probes
		autoSteps += s.AutoSteps
		predSum += s.PredictedSum
		baseRate := map[int]float64{}
		for _, q := range b.Requests {
			baseRate[q.Prompt] = reqRate(q)
		}
		for _, q := range s.Requests {
			blocks = append(blocks, q.Blocks...)
			ttft = append(ttft, q.TTFT)
			if q.TTFS > 0 {
				ttfs = append(ttfs, q.TTFS)
			}
			gaps = append(gaps, q.Gaps...)
			tpot = append(tpot, q.TPOT)
			cat := "default"
			if q.Prompt < len(prompts) {
				cat = prompts[q.Prompt]
			}
			a := cats[cat]
			if a == nil {
				a = &catAcc{}
				cats[cat] = a
				catOrder = append(catOrder, cat)
			}
			a.n++
			a.blocks = append(a.blocks, q.Blocks...)
			a.ttft = append(a.ttft, q.TTFT)
			a.rate = append(a.rate, reqRate(q))
			if br := baseRate[q.Prompt]; br > 0 {
				a.speedup = append(a.speedup, reqRate(q)/br)
			}
		}
	}
	cr.TokS, cr.BaselineTokS, cr.Speedup = Summarize(toks), Summarize(base), Summarize(speed)
	cr.CPUTokS, cr.CPUShare = Summarize(cpuToks), Num(Quantile(share, 0.5))
	switch {
	case synthetic:
		cr.Exact = "n/a: synthetic"
	case !p.Greedy():
		cr.Exact = "n/a: sampling"
	default:
		cr.Exact, cr.Mismatched = exactWord(mism), mism
	}
	cr.Blocks = len(blocks)
	cr.AcceptanceRate, cr.Alpha = Num(AcceptanceRate(blocks)), Num(Alpha(blocks))
	if !slices.ContainsFunc(blocks, func(b Block) bool { return b.Drafted > 0 }) {
		cr.AcceptanceRate, cr.Alpha = Num(nan), Num(nan) // nothing drafted (auto decoding plainly): unknown, not 0
	}
	cr.PerPosition = PerPosition(blocks)
	cr.AlphaFit = Num(FitDecay(cr.PerPosition))
	cr.MeanAcceptedLength, cr.MeanDrafted = Num(MeanAcceptedLength(blocks)), Num(MeanDrafted(blocks))
	cr.Histogram = Histogram(blocks)
	cr.TTFTP50, cr.TPOT = dms(DurationQuantile(ttft, 0.5)), dms(mean(tpot))
	cr.TTFSP50, cr.TTFSReached = Num(nan), len(ttfs)
	if len(ttfs) > 0 {
		cr.TTFSP50 = dms(DurationQuantile(ttfs, 0.5))
	}
	cr.ITLP50, cr.ITLP99 = dms(DurationQuantile(gaps, 0.5)), dms(DurationQuantile(gaps, 0.99))
	cr.DraftBusy, cr.VerifyBusy, cr.Overlap = Num(Quantile(dbusy, 0.5)), Num(Quantile(vbusy, 0.5)), Num(Quantile(over, 0.5))
	cr.MeanK, cr.PredictedAuto = Num(MeanChosen(cr.KChosen)), Num(nan)
	if autoSteps > 0 {
		cr.PredictedAuto = Num(predSum / float64(autoSteps))
	}
	cr.C, cr.R, cr.PassMs = c.C, Num(c.R(p.K)), Num(nan)
	for _, pc := range c.Pass {
		if pc.K == p.K {
			cr.PassMs = dms(pc.Cost)
		}
	}
	alpha := float64(cr.Alpha)
	cr.Predicted = Num(Predicted(alpha, p.K, float64(c.C)))
	cr.PredictedPass = Num(PredictedPass(alpha, p.K, float64(c.C), float64(cr.R)))
	if p.Auto {
		// k varies step by step: no one (k+1)-pass cost or prediction.
		cr.R, cr.PassMs, cr.Predicted, cr.PredictedPass = Num(nan), Num(nan), Num(nan), Num(nan)
	}
	cr.Theory = Num(cr.Speedup.Median / float64(cr.Predicted))
	for _, name := range catOrder {
		a := cats[name]
		cr.Categories = append(cr.Categories, CategoryResult{
			Category: name, Requests: a.n,
			AcceptanceRate: Num(AcceptanceRate(a.blocks)), Alpha: Num(Alpha(a.blocks)),
			MeanAcceptedLength: Num(MeanAcceptedLength(a.blocks)),
			TTFTP50:            dms(DurationQuantile(a.ttft, 0.5)),
			ReqTokS:            Num(Quantile(a.rate, 0.5)), Speedup: Num(Quantile(a.speedup, 0.5)),
		})
	}
	return cr
}

func reqRate(q Request) float64 {
	if q.Duration <= 0 {
		return 0
	}
	return float64(q.Generated) / q.Duration.Seconds()
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t / time.Duration(len(ds))
}

// best is the configuration with the highest median speedup among those
// whose output was not found inexact, with the knee of its series.
func best(cs []ConfigResult) *Best {
	bi := -1
	for i, c := range cs {
		if c.Exact == "no" || math.IsNaN(c.Speedup.Median) {
			continue
		}
		if bi < 0 || c.Speedup.Median > cs[bi].Speedup.Median {
			bi = i
		}
	}
	if bi < 0 {
		return nil
	}
	b := cs[bi]
	var ks []int
	var sp []float64
	for _, c := range cs {
		if !c.Adaptive && !c.Auto && c.Point.Series() == b.Point.Series() {
			ks = append(ks, c.K)
			sp = append(sp, c.Speedup.Median)
		}
	}
	out := &Best{Label: b.Label, Point: b.Point, Speedup: b.Speedup, Knee: b.K, KneeSpeedup: Num(b.Speedup.Median)}
	if b.Adaptive || b.Auto {
		return out
	}
	idx := make([]int, len(ks))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, c int) int { return ks[a] - ks[c] })
	sks, ssp := make([]int, len(ks)), make([]float64, len(ks))
	for i, j := range idx {
		sks[i], ssp[i] = ks[j], sp[j]
	}
	out.Knee = Knee(sks, ssp, 0.05)
	for i, k := range sks {
		if k == out.Knee {
			out.KneeSpeedup = Num(ssp[i])
		}
	}
	return out
}
