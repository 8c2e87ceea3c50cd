package draft_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/verify/verifytest"
)

// passShape is a synthetic target: the time of an n-token pass.
type passShape struct {
	name string
	t    func(n int) float64
}

var shapes = []passShape{
	{"cpu-linear", func(n int) float64 { return float64(n) }},                  // a token costs a pass: speculation never pays
	{"cpu-small", func(n int) float64 { return 1 + 0.9*float64(n-1) }},         // nearly linear
	{"flat", func(n int) float64 { return 1 }},                                 // memory bound: tokens are free
	{"gpu", func(n int) float64 { return 1 + 0.05*float64(n-1) }},              // almost free
	{"knee", func(n int) float64 { return 1 + 0.02*float64(n-1) + kneeAt(n) }}, // flat to 8 tokens, then linear
}

func kneeAt(n int) float64 { return max(0, float64(n-8)) * 0.6 }

// probeOnly is a target on which, with a draft token a tenth of a pass,
// a block accepted in full would pay (k 1: 2/1.7 = 1.18× plain) and one
// at the prior's acceptance of 0.5 would not (0.88×): a fresh sequence
// decodes plainly and probes.
var probeOnly = []float64{1, 1.6, 2.2, 2.8, 3.4}

// positions returns a fresh estimate with acceptance p[j] at position j+1
// (the last repeating) learnt from many observations.
func positions(k int, p ...float64) *draft.Positions {
	var pos draft.Positions
	pos.Init(k, nil)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 4000; i++ {
		a := 0
		for a < k && r.Float64() < p[min(a, len(p)-1)] {
			a++
		}
		pos.Update(k, a)
	}
	return &pos
}

// rate is the formula of Choose, written out again: the test's reference.
func rate(p []float64, pass []float64, d, h, gain, other float64, k int) float64 {
	e, run := 1.0, 1.0
	for j := 0; j < k; j++ {
		run *= p[j]
		e += run
	}
	dt := other + float64(k)*d
	t := pass[k]
	return (gain + e) / (t + dt - math.Min(h*dt, t))
}

// TestChooseMatchesFormula: over pass-cost shapes, draft costs, overlap,
// acceptance profiles and batch loads, Choose picks the k that maximises
// the throughput formula (0 unless a k > 0 gains Margin), and reports its
// predicted speedup.
func TestChooseMatchesFormula(t *testing.T) {
	const K = 8
	accs := [][]float64{{0.05}, {0.3}, {0.6}, {0.8}, {0.95}, {0.9, 0.7, 0.5, 0.3}, {0.6, 0.8, 0.9}}
	pol := draft.Policy{K: K, Auto: true}
	nonzero, zero := 0, 0
	for _, sh := range shapes {
		for _, d := range []float64{0, 0.05, 0.2, 0.6} {
			for _, h := range []float64{0, 0.5, 1} {
				for _, batch := range []int{1, 4} {
					for _, acc := range accs {
						pos := positions(K, acc...)
						p := make([]float64, K)
						for j := range p {
							p[j] = pos.P(j + 1)
						}
						// The other sequences' blocks: 3 tokens each, 2 committed.
						base, gain, other := (batch-1)*3, float64(batch-1)*2, float64(batch-1)*2*d
						pass := make([]float64, K+1)
						for k := range pass {
							pass[k] = sh.t(base + k + 1)
						}
						s := &draft.Step{Pass: pass, Draft: d, Hidden: h, Others: draft.Others{Gain: gain, Draft: other}}
						wantK, best := 0, rate(p, pass, d, h, gain, other, 0)
						r0 := best
						for k := 1; k <= K; k++ {
							if r := rate(p, pass, d, h, gain, other, k); r > best {
								wantK, best = k, r
							}
						}
						if best < r0*(1+draft.Margin) {
							wantK, best = 0, r0
						}
						name := fmt.Sprintf("%s/d%g/h%g/b%d/acc%v", sh.name, d, h, batch, acc)
						c := pol.Choose(pos, s)
						if c.Probe {
							t.Fatalf("%s: first choice is a probe", name)
						}
						if c.K != wantK || math.Abs(c.Speedup-best/r0) > 1e-9 {
							t.Errorf("%s: Choose = %+v, want k %d (speedup %.4f)", name, c, wantK, best/r0)
						}
						if got := draft.Rate(pos, s, c.K); math.Abs(got-best) > 1e-9*best {
							t.Errorf("%s: Rate(%d) = %g, formula %g", name, c.K, got, best)
						}
						if wantK == 0 {
							zero++
						} else {
							nonzero++
						}
						// (With others in the pass that speculate at a loss, a
						// block that accepts better than theirs raises the
						// pass's yield even at a linear cost: batch 1 only.)
						if sh.name == "cpu-linear" && batch == 1 && wantK != 0 {
							t.Errorf("%s: k %d where a token costs a whole pass", name, wantK)
						}
					}
				}
			}
		}
	}
	if zero == 0 || nonzero == 0 {
		t.Errorf("the table exercises only one side: %d zero, %d non-zero choices", zero, nonzero)
	}
}

// TestChooseZeroWhenSpeculationCannotPay: when each extra token costs a
// whole pass, or the draft costs more than the target, the policy decodes
// plainly, whatever the acceptance below 1, and does not probe either
// (not even a block accepted in full would pay); where such a block would
// pay but the sequence's acceptance does not, it decodes plainly except
// for its probes, within their budget.
func TestChooseZeroWhenSpeculationCannotPay(t *testing.T) {
	const K = 6
	pol := draft.Policy{K: K, Auto: true}
	for _, tc := range []struct {
		name  string
		pass  func(n int) float64
		draft float64
		accs  []float64
		probe bool // a block accepted in full would pay
	}{
		{"linear-pass", func(n int) float64 { return float64(n) }, 0, []float64{0, 0.5, 0.9}, false},
		{"slow-draft", func(n int) float64 { return 1 }, 1.2, []float64{0, 0.5, 0.9}, false},
		{"low-acceptance", func(n int) float64 { return 1 + 0.6*float64(n-1) }, 0.1, []float64{0, 0.5}, true},
	} {
		for _, a := range tc.accs {
			pos := positions(K, a)
			pass := make([]float64, K+1)
			for k := range pass {
				pass[k] = tc.pass(k + 1)
			}
			s := &draft.Step{Pass: pass, Draft: tc.draft}
			probes := 0
			const steps = 1000
			for i := 0; i < steps; i++ {
				c := pol.Choose(pos, s)
				switch {
				case c.Probe:
					probes++
					if c.K < 1 || c.K > draft.ProbeK || c.Speedup >= 1 {
						t.Fatalf("%s α=%g: probe %+v", tc.name, a, c)
					}
				case c.K != 0 || c.Speedup != 1:
					t.Fatalf("%s α=%g: step %d chose %+v", tc.name, a, i, c)
				}
			}
			if !tc.probe {
				if probes != 0 {
					t.Errorf("%s α=%g: %d probes in %d steps where no block can pay, want none", tc.name, a, probes, steps)
				}
				continue
			}
			// Probes back off: the longest interval is ProbeMax·2^ProbeBackoff.
			if most := draft.ProbeMax << draft.ProbeBackoff; probes < steps/most || probes > steps/draft.ProbeMin/2 {
				t.Errorf("%s α=%g: %d probes in %d steps, want between 1/%d and 1/%d", tc.name, a, probes, steps, most, 2*draft.ProbeMin)
			}
		}
	}
}

// TestChooseReturnsWhenAcceptanceRises simulates one sequence on a
// target whose extra tokens are cheap, with a draft that is almost always
// wrong for 400 steps and then almost always right: the policy decodes
// plainly in the first phase (but for probes), notices the rise through
// its probes and speculates long blocks in the second; and it falls back
// when acceptance drops again.
func TestChooseReturnsWhenAcceptanceRises(t *testing.T) {
	const K = 8
	pol := draft.Policy{K: K, Auto: true}
	pass := make([]float64, K+1)
	for k := range pass {
		pass[k] = 1 + 0.15*float64(k)
	}
	s := &draft.Step{Pass: pass, Draft: 0.05}
	var pos draft.Positions
	pos.Init(K, nil)
	r := rand.New(rand.NewPCG(3, 4))
	phase := func(alpha float64, steps int) (hist []int, firstSpec int) {
		hist, firstSpec = make([]int, K+1), -1
		for i := 0; i < steps; i++ {
			c := pol.Choose(&pos, s)
			if !c.Probe {
				hist[c.K]++
				if c.K > 0 && firstSpec < 0 {
					firstSpec = i
				}
			}
			a := 0
			for a < c.K && r.Float64() < alpha {
				a++
			}
			pos.Update(c.K, a)
		}
		return hist, firstSpec
	}
	// The prior (0.5) may speculate at first; the last 300 steps must not.
	phase(0.02, 100)
	low, _ := phase(0.02, 300)
	if sumFrom(low, 1) != 0 {
		t.Errorf("low acceptance: choices %v, want only k = 0", low)
	}
	high, first := phase(0.95, 400)
	if first < 0 || first > draft.ProbeMax<<draft.ProbeBackoff {
		t.Errorf("acceptance rose: first speculative choice after %d steps", first)
	}
	if sumFrom(high, 4) < 400-first-50 {
		t.Errorf("high acceptance: choices %v, want mostly k ≥ 4 after step %d", high, first)
	}
	t.Logf("low %v, high %v (first speculative step %d)", low, high, first)
	again, _ := phase(0.02, 300)
	if again[0] < 250 {
		t.Errorf("acceptance fell again: choices %v, want mostly k = 0", again)
	}
}

func sumFrom(h []int, from int) int {
	n := 0
	for _, v := range h[from:] {
		n += v
	}
	return n
}

// TestChooseBatchLowersK: on a target whose passes are flat up to 8
// tokens and linear beyond, one sequence drafts a long block, while with
// three others in the pass (3 tokens each) the extra tokens land past the
// knee and the policy drafts fewer.
func TestChooseBatchLowersK(t *testing.T) {
	const K = 8
	pol := draft.Policy{K: K, Auto: true}
	knee := func(n int) float64 { return 1 + 0.01*float64(n) + kneeAt(n) }
	choose := func(others int) draft.Choice {
		pos := positions(K, 0.8)
		pass := make([]float64, K+1)
		for k := range pass {
			pass[k] = knee(others*3 + k + 1)
		}
		return pol.Choose(pos, &draft.Step{Pass: pass, Draft: 0.01, Others: draft.Others{Gain: float64(others) * 2, Draft: float64(others) * 0.02}})
	}
	one, four := choose(0), choose(3)
	if one.K < 5 || four.K >= one.K {
		t.Errorf("batch 1 chose %+v, batch 4 %+v: want a long block alone and a shorter one in the batch", one, four)
	}
}

func TestPositions(t *testing.T) {
	var p draft.Positions
	p.Init(3, nil)
	if p.P(1) != 0.5 || p.Expected(2) != 1.75 {
		t.Fatalf("prior: P(1) %g, E(2) %g", p.P(1), p.Expected(2))
	}
	p.Update(3, 1) // position 1 accepted, 2 rejected, 3 not examined (it follows 2)
	if !(p.P(1) > 0.5 && p.P(2) < 0.5 && p.P(3) == p.P(2)) {
		t.Errorf("after (3, 1): P = %g %g %g", p.P(1), p.P(2), p.P(3))
	}
	if got, want := p.All(4), p.P(1)*p.P(2)*p.P(3)*p.P(4); math.Abs(got-want) > 1e-12 {
		t.Errorf("All(4) = %g, want P(1)…P(4) = %g", got, want)
	}
	if p.P(9) != p.P(3) {
		t.Errorf("P past the positions tracked %g, want the last one's %g", p.P(9), p.P(3))
	}
	// A new sequence starts from a prior that has learnt.
	prior := draft.NewPrior(3)
	for i := 0; i < 500; i++ {
		prior.Update(3, 3)
	}
	var q draft.Positions
	q.Init(3, prior)
	if q.P(3) < 0.95 {
		t.Errorf("from a prior of full acceptance: P(3) = %g", q.P(3))
	}
	// One early rejection does not overturn a well-founded prior (worth
	// priorWeight observations), but overturns a guess (worth priorMin).
	q.Update(3, 0)
	if q.P(1) < 0.85 {
		t.Errorf("from a prior of 500 full blocks, one rejection: P(1) = %g, want at least 0.85", q.P(1))
	}
	var g draft.Positions
	g.Init(3, draft.NewPrior(3))
	g.Update(3, 0)
	if g.P(1) > 0.4 {
		t.Errorf("from a prior that has seen nothing, one rejection: P(1) = %g, want at most 0.4", g.P(1))
	}
}

func TestCosts(t *testing.T) {
	c := draft.NewCosts(16, 4)
	// Calibrated at 1, 2, 4 and 8 tokens: interpolated between, and
	// extrapolated with the last slope; no attention cost.
	cal := make([]float64, 16)
	cal[0], cal[1], cal[3], cal[7] = 1, 2, 3, 5
	c.Calibrate(cal, 0)
	for n, want := range map[int]float64{1: 1, 2: 2, 3: 2.5, 4: 3, 6: 4, 8: 5, 10: 6, 16: 9, 20: 11} {
		if got := c.Pass(n, 1, 0); math.Abs(got-want) > 1e-9 {
			t.Errorf("calibrated Pass(%d) = %g, want %g", n, got, want)
		}
	}
	// The machine gets twice as slow: plain passes (a token a sequence)
	// teach the level, which other sizes follow; a 3-token pass as slow
	// then fits its cell as calibrated.
	for i := 0; i < 200; i++ {
		c.ObservePass(1, 1, 0, 2)
		c.ObservePass(3, 1, 0, 5)
	}
	if got := c.Pass(3, 1, 0); math.Abs(got-5) > 0.05 {
		t.Errorf("observed 3-token passes of 5: Pass(3) = %g", got)
	}
	if got := c.Pass(8, 1, 0); math.Abs(got-10) > 0.2 {
		t.Errorf("level: Pass(8) = %g, want about 10", got)
	}
	// A pass 100 times slower (descheduled) moves it little.
	c.ObservePass(3, 1, 0, 500)
	if got := c.Pass(3, 1, 0); got > 6 {
		t.Errorf("one outlier moved Pass(3) to %g", got)
	}
	// Passes of 4 sequences and 8 tokens cost more than the prior's shape
	// says: that cell learns it, the 3-token cell keeps its figure, and a
	// cell never run takes the level the plain passes set, not the slow
	// cell's.
	for i := 0; i < 400; i++ {
		c.ObservePass(8, 4, 0, 20)
		c.ObservePass(3, 1, 0, 5)
	}
	if got := c.Pass(8, 4, 0); math.Abs(got-20) > 0.5 {
		t.Errorf("cell (8, 4): %g, want about 20", got)
	}
	if got := c.Pass(3, 1, 0); math.Abs(got-5) > 0.2 {
		t.Errorf("cell (3, 1): %g, want about 5", got)
	}
	if got := c.Pass(8, 1, 0); math.Abs(got-10) > 0.2 {
		t.Errorf("cell (8, 1), never run: %g, want the level's 10", got)
	}
	dst := make([]float64, 3)
	c.Fill(dst, 1, 5, 0, 0)
	for k := range dst {
		if want := c.Pass(5+k+1, 1, draft.Work(0, k+1)); dst[k] != want {
			t.Errorf("Fill[%d] = %g, want Pass(%d) = %g", k, dst[k], 5+k+1, want)
		}
	}
	// Without calibration, the first observation sets the unit.
	u := draft.NewCosts(4, 1)
	u.ObservePass(1, 1, 0, 0.003)
	if got := u.Pass(1, 1, 0); math.Abs(got-0.003) > 1e-9 {
		t.Errorf("uncalibrated after one pass: Pass(1) = %g", got)
	}
}

// TestCostsShapeStaysInItsCell: a sequence that speculates for many steps
// runs only its (k+1)-token passes; where those are slower than the
// calibrated shape says, their cell learns it and the one-token pass keeps
// its prediction (the plain rate the policy weighs speculation against),
// instead of the level rising with them.
func TestCostsShapeStaysInItsCell(t *testing.T) {
	c := draft.NewCosts(8, 1)
	cal := make([]float64, 8)
	cal[0], cal[1] = 1, 1.2
	c.Calibrate(cal, 0)
	for range 100 {
		c.ObservePass(1, 1, 0, 1)
	}
	for range 400 {
		c.ObservePass(2, 1, 0, 1.8)
	}
	if got := c.Pass(2, 1, 0); math.Abs(got-1.8) > 0.05 {
		t.Errorf("observed 2-token passes of 1.8: Pass(2) = %g", got)
	}
	if got := c.Pass(1, 1, 0); math.Abs(got-1) > 0.02 {
		t.Errorf("only 2-token passes since the 1-token ones of 1: Pass(1) = %g, want 1", got)
	}
	// The machine slows down: the plain passes say so, and the 2-token
	// prediction follows through the level.
	for range 400 {
		c.ObservePass(1, 1, 0, 2)
	}
	if got := c.Pass(2, 1, 0); math.Abs(got-3.6) > 0.1 {
		t.Errorf("plain passes twice as slow: Pass(2) = %g, want about 3.6", got)
	}
}

// TestCostsAttention: a pass's time grows with the positions its tokens
// attend to, as calibrated, so a block deep in a sequence costs more per
// token than one at its start, and the level learnt at one depth carries
// to another.
func TestCostsAttention(t *testing.T) {
	// Synthetic target: 1 + 0.1·n per pass, 0.01 per position attended.
	truth := func(n, pos int) float64 { return 1 + 0.1*float64(n) + 0.01*draft.Work(pos, n) }
	c := draft.NewCosts(8, 1)
	cal := make([]float64, 8)
	for n := range cal {
		cal[n] = truth(n+1, 0)
	}
	c.Calibrate(cal, 0.01)
	for _, pos := range []int{0, 50, 300} {
		for n := 1; n <= 8; n++ {
			if got, want := c.Pass(n, 1, draft.Work(pos, n)), truth(n, pos); math.Abs(got-want) > 1e-9*want {
				t.Errorf("Pass(%d tokens at %d) = %g, want %g", n, pos, got, want)
			}
		}
	}
	// Observed at depth 300 and twice as slow: the prediction at depth 50
	// doubles too.
	for i := 0; i < 300; i++ {
		c.ObservePass(2, 1, draft.Work(300, 2), 2*truth(2, 300))
	}
	if got, want := c.Pass(2, 1, draft.Work(50, 2)), 2*truth(2, 50); math.Abs(got-want) > 0.02*want {
		t.Errorf("after a slow-down: Pass(2 at 50) = %g, want about %g", got, want)
	}
}

// TestAutoNoAllocs: the per-step calls allocate nothing.
func TestAutoNoAllocs(t *testing.T) {
	const K = 8
	c := draft.NewCosts(64, 8)
	var pos draft.Positions
	pos.Init(K, draft.NewPrior(K))
	pass := make([]float64, K+1)
	s := &draft.Step{Pass: pass, Draft: 0.1}
	pol := draft.Policy{K: K, Auto: true}
	allocs := testing.AllocsPerRun(100, func() {
		c.ObservePass(9, 2, 300, 0.01)
		c.Fill(pass, 2, 4, 200, 100)
		ch := pol.Choose(&pos, s)
		pos.Update(ch.K, ch.K/2)
	})
	if allocs != 0 {
		t.Errorf("%g allocations per step", allocs)
	}
}

// TestModelFeed: feeding a model drafter the committed tokens ahead of a
// draft leaves its cache one short of them (the KV rule) and changes
// none of the proposals.
func TestModelFeed(t *testing.T) {
	be := verifytest.NewFake(vocab, 1, 256, 8, 0)
	d := draft.NewModel(be, 0)
	ref := verifytest.NewFake(vocab, 1, 256, 256, 0)
	toks := []int32{1, 2, 3}
	r := &draft.Request{K: 3, Out: make([]int32, 0, 3)}
	for step := 0; step < 6; step++ {
		// Plain steps: one committed token each, fed as the pipeline does.
		for i := 0; i < 5+step; i++ {
			toks = append(toks, int32((i*7+step)%vocab))
			if err := d.Accept(0, len(toks)); err != nil {
				t.Fatal(err)
			}
			if err := d.Feed(0, toks); err != nil {
				t.Fatal(err)
			}
			if be.Len(0) != len(toks)-1 {
				t.Fatalf("after Feed the cache holds %d positions, committed %d", be.Len(0), len(toks))
			}
		}
		r.Tokens = toks
		if err := d.Draft(r); err != nil {
			t.Fatal(err)
		}
		want, _ := ref.Greedy(0, toks, 3)
		if fmt.Sprint(r.Out) != fmt.Sprint(want) {
			t.Fatalf("step %d: proposals %v after feeding, want %v", step, r.Out, want)
		}
		toks = append(toks, r.Out[0])
		if err := d.Accept(0, len(toks)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestChooseProbeCatchup: a probe that first has the draft read many
// tokens (Step.Catchup) comes later than one that does not, at most
// ProbeMax steps after the last.
func TestChooseProbeCatchup(t *testing.T) {
	const K = 4
	pol := draft.Policy{K: K, Auto: true}
	pass := probeOnly
	firstProbe := func(catchupPerStep float64) int {
		var pos draft.Positions
		pos.Init(K, nil)
		for i := 1; i <= 1000; i++ {
			// The draft falls one token further behind every plain step.
			s := &draft.Step{Pass: pass, Draft: 0.1, Catchup: catchupPerStep * float64(i)}
			if pol.Choose(&pos, s).Probe {
				return i
			}
		}
		return -1
	}
	cheap, dear := firstProbe(0), firstProbe(0.05)
	if cheap < draft.ProbeMin || dear <= cheap || dear > draft.ProbeMax {
		t.Errorf("first probe after %d steps without catch-up, %d with; want %d ≤ the first < the second ≤ %d", cheap, dear, draft.ProbeMin, draft.ProbeMax)
	}
}

// TestChooseProbeExtra: probes measured to cost more than a steady step
// at their k (Step.ProbeExtra: their real catch-up, a drafter that was
// idle) come later, at most ProbeMax steps after the last; and the
// table's ProbeExtra follows ObserveProbe, shrunk while it has few
// observations and never negative.
func TestChooseProbeExtra(t *testing.T) {
	const K = 4
	pol := draft.Policy{K: K, Auto: true}
	pass := probeOnly
	firstProbe := func(extra float64) int {
		var pos draft.Positions
		pos.Init(K, nil)
		for i := 1; i <= 1000; i++ {
			s := &draft.Step{Pass: pass, Draft: 0.1, ProbeExtra: extra}
			if pol.Choose(&pos, s).Probe {
				return i
			}
		}
		return -1
	}
	cheap, dear := firstProbe(0), firstProbe(0.3)
	if cheap < draft.ProbeMin || dear <= cheap || dear > draft.ProbeMax {
		t.Errorf("first probe after %d steps with no extra, %d with 0.3 passes; want %d ≤ the first < the second ≤ %d", cheap, dear, draft.ProbeMin, draft.ProbeMax)
	}
	c := draft.NewCosts(8, 1)
	if x := c.ProbeExtra(); x != 0 {
		t.Errorf("ProbeExtra before any probe = %g, want 0", x)
	}
	c.ObserveProbe(0.002, 0.001)
	one := c.ProbeExtra()
	for i := 0; i < 100; i++ {
		c.ObserveProbe(0.002, 0.001)
	}
	many := c.ProbeExtra()
	if !(one > 0 && one < many && math.Abs(many-0.002) < 0.002*0.1) {
		t.Errorf("ProbeExtra after one probe of 2 ms extra %g, after 101 %g; want 0 < the first < the second ≈ 0.002", one, many)
	}
	for i := 0; i < 200; i++ {
		c.ObserveProbe(-1, 0.001) // clipped to −predicted/2
	}
	if x := c.ProbeExtra(); x != 0 {
		t.Errorf("ProbeExtra after faster probes = %g, want 0", x)
	}
}

// TestChooseNoProbeNearEnd: a sequence decoding plainly probes only while
// at least its probe interval of steps remains after the probe
// (Step.Left), and ProbeDue says so (negative) when the probe will not
// come, so that no draft model is fed ahead of it; without a bound it
// probes as before.
func TestChooseNoProbeNearEnd(t *testing.T) {
	const K = 4
	pol := draft.Policy{K: K, Auto: true}
	pass := probeOnly // only probes draft
	run := func(tokens int) (probes, lastProbe, dueLate int) {
		var pos draft.Positions
		pos.Init(K, nil)
		lastProbe = -1
		for i := 0; i < tokens; i++ {
			left := 0
			if tokens < 1<<20 {
				left = tokens - i
			}
			s := &draft.Step{Pass: pass, Draft: 0.1, Left: left}
			c := pol.Choose(&pos, s)
			if c.Probe {
				probes++
				lastProbe = i
			}
			// Due within a few steps although fewer than ProbeMin steps are left then.
			if d := pos.ProbeDue(); d >= 0 && left > 0 && left-d-2 < draft.ProbeMin {
				dueLate++
			}
		}
		return
	}
	if p, _, _ := run(1 << 20); p == 0 {
		t.Fatal("no probes without a bound on the steps")
	}
	for _, n := range []int{draft.ProbeMin, 64, 256, 1000} {
		probes, last, late := run(n)
		if late > 0 {
			t.Errorf("%d tokens: ProbeDue announced %d probes too near the end", n, late)
		}
		if last >= 0 && n-last-1 < draft.ProbeMin {
			t.Errorf("%d tokens: probed at step %d, %d steps before the end", n, last, n-last)
		}
		if n <= 2*draft.ProbeMin && probes > 0 {
			t.Errorf("%d tokens: %d probes, want none", n, probes)
		}
		if n >= 1000 && probes == 0 {
			t.Errorf("%d tokens: no probes", n)
		}
	}
}

// TestChooseCatchupDefersSpeculation: where a k > 0 pays once the draft
// has read the sequence, a drafter that must first read much of it
// (Step.Catchup) speculates only when enough steps are left to spread
// that over; a probe's loss counts the tokens fed ahead of it too
// (Step.Behind), so that feeding ahead does not bring the probe closer.
func TestChooseCatchupDefersSpeculation(t *testing.T) {
	const K = 4
	pol := draft.Policy{K: K, Auto: true}
	pass := []float64{1, 1.1, 1.2, 1.3, 1.4}
	pos := positions(K, 0.6)
	choose := func(s draft.Step) draft.Choice {
		p := *pos
		return pol.Choose(&p, &s)
	}
	if c := choose(draft.Step{Pass: pass, Draft: 0.05}); c.K == 0 {
		t.Fatalf("without a catch-up: %+v, want a k > 0", c)
	}
	if c := choose(draft.Step{Pass: pass, Draft: 0.05, Catchup: 20, Left: 40}); c.K != 0 || c.Probe {
		t.Errorf("a catch-up of 20 passes with 40 steps left: %+v, want 0", c)
	}
	if c := choose(draft.Step{Pass: pass, Draft: 0.05, Catchup: 2, Left: 10000}); c.K == 0 {
		t.Errorf("a catch-up of 2 passes with 10000 steps left: %+v, want a k > 0", c)
	}
	// Probes on a target where speculation does not pay: the first comes
	// later when the tokens since the last draft were fed ahead (Behind)
	// than when nothing was read since, and no sooner than when they
	// still wait (Catchup).
	first := func(catchup, behind float64) int {
		var p draft.Positions
		p.Init(K, nil)
		for i := 1; i <= 1000; i++ {
			s := &draft.Step{Pass: probeOnly, Draft: 0.1, Catchup: catchup, Behind: behind * float64(i)}
			if pol.Choose(&p, s).Probe {
				return i
			}
		}
		return -1
	}
	none, fed := first(0, 0), first(0, 0.05)
	if fed <= none {
		t.Errorf("first probe after %d steps with the tokens fed ahead, %d with none behind; want later", fed, none)
	}
}

func TestCostsObserveDraft(t *testing.T) {
	c := draft.NewCosts(4, 1)
	if d := c.Draft(); d != 0 {
		t.Fatalf("Draft before any observation: %g", d)
	}
	c.ObserveDraft(0)
	c.ObserveDraft(math.NaN())
	if d := c.Draft(); d != 0 {
		t.Fatalf("Draft after invalid observations: %g", d)
	}
	c.ObserveDraft(2)
	c.ObserveDraft(4)
	if d := c.Draft(); math.Abs(d-3) > 1e-12 {
		t.Errorf("Draft after 2 and 4: %g, want their mean 3", d)
	}
}

// TestCostsObserveStep: a whole step's extra time is kept per k, a k > 0
// not observed takes that over every k > 0, k = 0 only its own; an
// estimate is shrunk towards 0 while it has few observations, and again
// while other k's are observed instead; a descheduled step is clipped to
// twice its prediction; and Rate charges the extra time, so that the
// choice follows it.
func TestCostsObserveStep(t *testing.T) {
	c := draft.NewCosts(4, 1)
	ex := make([]float64, 4)
	c.StepExtra(ex)
	if fmt.Sprint(ex) != "[0 0 0 0]" {
		t.Fatalf("StepExtra before any observation: %v", ex)
	}
	c.ObserveStep(-1, 1, 1)
	c.ObserveStep(9, 1, 1)
	c.ObserveStep(1, math.NaN(), 1)
	c.ObserveStep(1, 1, 0)
	c.StepExtra(ex)
	if fmt.Sprint(ex) != "[0 0 0 0]" {
		t.Fatalf("StepExtra after invalid observations: %v", ex)
	}
	// Plain steps only: a speculative step is taken to cost as much
	// beyond the model.
	k0 := draft.NewCosts(4, 1)
	for i := 0; i < 100; i++ {
		k0.ObserveStep(0, 3, 10)
	}
	k0.StepExtra(ex)
	if math.Abs(ex[0]-3*100.0/104) > 1e-9 || ex[1] != ex[0] || ex[3] != ex[0] {
		t.Errorf("after 100 plain steps with 3 extra: StepExtra = %v, want every k at 2.88", ex)
	}
	for i := 0; i < 100; i++ {
		c.ObserveStep(1, 2, 10)
	}
	c.StepExtra(ex)
	// k = 1's is shrunk towards the mean over k > 0, itself towards 0.
	if spec := 2 * 100.0 / 104; ex[0] != 0 || math.Abs(ex[1]-(200+4*spec)/104) > 1e-9 || ex[2] != spec || ex[3] != spec {
		t.Errorf("after 100 steps at k = 1 with 2 extra: StepExtra = %v, want [0 2.00 1.92 1.92]", ex)
	}
	c.ObserveStep(0, 100, 10) // clipped to 20, one observation: shrunk to a fifth
	c.StepExtra(ex)
	if math.Abs(ex[0]-4) > 1e-9 {
		t.Errorf("one descheduled step at k = 0: StepExtra[0] = %g, want 4", ex[0])
	}
	for i := 0; i < 1000; i++ {
		c.ObserveStep(0, 0, 10)
	}
	c.StepExtra(ex)
	if !(ex[1] > 0 && ex[1] < 0.6) || ex[0] > 0.1 {
		t.Errorf("after 1000 steps at k = 0 without extra: StepExtra = %v, want k = 0 near 0, k = 1 shrunk below 0.6", ex)
	}
	// Speculation predicted at 1.7× loses to an extra time per
	// speculative step the model does not see; Rate never predicts a
	// step under half of Time's.
	const K = 1
	pol := draft.Policy{K: K, Auto: true}
	pos := positions(K, 1)
	s := draft.Step{Pass: []float64{1, 1.1}, Draft: 0.1}
	p := *pos
	if ch := pol.Choose(&p, &s); ch.K != 1 {
		t.Fatalf("without extra time: %+v, want k = 1", ch)
	}
	s.Extra = []float64{0, 2}
	p = *pos
	if ch := pol.Choose(&p, &s); ch.K != 0 {
		t.Errorf("with 2 passes' extra time per speculative step: %+v, want 0", ch)
	}
	s.Extra = []float64{0, -100}
	if r, want := draft.Rate(pos, &s, 1), pos.Expected(1)/(s.Time(1)/2); math.Abs(r-want) > 1e-9*want {
		t.Errorf("Rate with a large negative extra = %g, want %g (half the time)", r, want)
	}
}

// TestChooseExplores: while the pipeline explores (Step.Explore), a step
// whose best choice is 0 at the prior's acceptance, but where a draft
// that is always right would pay, drafts a probe's k instead, reported as
// a probe that leaves the sequence's probe schedule alone; without
// Explore the same step decodes plainly. Where not even a draft that is
// always right could pay (every token a pass, or steps measured that
// slow: Step.Extra), exploring decodes plainly too, and no probe is
// scheduled. A step where speculation pays takes its best k as ever.
func TestChooseExplores(t *testing.T) {
	const K = 4
	pol := draft.Policy{K: K, Auto: true}
	pass := make([]float64, K+1)
	for k := range pass {
		pass[k] = 1 + 0.6*float64(k) // k = 1 all accepted: 2/1.7 = 1.18× plain; at 0.5: 0.88×
	}
	s := &draft.Step{Pass: pass, Draft: 0.1}
	var pos draft.Positions
	pos.Init(K, nil)
	if c := pol.Choose(&pos, s); c.K != 0 || c.Probe {
		t.Fatalf("not exploring: %+v, want k 0", c)
	}
	due := pos.ProbeDue()
	s.Explore = true
	c := pol.Choose(&pos, s)
	if c.K < 1 || c.K > draft.ProbeK || !c.Probe {
		t.Errorf("exploring: %+v, want a probe of 1..%d tokens", c, draft.ProbeK)
	}
	if got := pos.ProbeDue(); got != due {
		t.Errorf("exploring moved the probe schedule: due %d, was %d", got, due)
	}
	s.Extra = []float64{0, 0.5, 1, 1.5, 2} // measured: each draft token half a pass more
	if c := pol.Choose(&pos, s); c.K != 0 || c.Probe {
		t.Errorf("exploring where the measured steps cannot pay: %+v, want k 0", c)
	}
	if got := pos.ProbeDue(); got >= 0 {
		t.Errorf("a plain step where no block can pay: probe due %d, want none scheduled", got)
	}
	s.Extra = nil
	for k := range pass {
		pass[k] = float64(k + 1) // every token a pass: speculation cannot pay
	}
	if c := pol.Choose(&pos, s); c.K != 0 || c.Probe {
		t.Errorf("exploring where no acceptance can pay: %+v, want k 0", c)
	}
	flat := make([]float64, K+1)
	for k := range flat {
		flat[k] = 1
	}
	s.Pass = flat
	if c := pol.Choose(positions(K, 0.95), s); c.K != K || c.Probe {
		t.Errorf("exploring where speculation pays: %+v, want k %d", c, K)
	}
}

// TestChooseRoundOfPasses: four sequences verified two a pass take turns,
// so a step's measured time (Step.Extra) holds the other pair's pass too.
// On a target where every token costs a whole pass, no k beats plain
// decoding (a pass of two blocks commits tokens at one a pass's time,
// whatever is accepted), and Choose finds that when the gain beside its
// block counts every other sequence of the round (3 here, what the
// pipeline gives it), not the pass's one: against that one alone, the
// other pass's time in every k's denominator made a four-token block look
// about 1.5× plain.
func TestChooseRoundOfPasses(t *testing.T) {
	const K = 4
	pol := draft.Policy{K: K, Auto: true}
	pos := positions(K, 1) // every draft token accepted
	pass := make([]float64, K+1)
	for k := range pass {
		pass[k] = float64(1 + k + 1) // the other sequence's one token and this block
	}
	extra := make([]float64, K+1)
	for k := range extra {
		extra[k] = 2 // the other pair's plain pass
	}
	for _, c := range []struct {
		others float64 // the other sequences whose tokens count beside this block
		want   int
	}{{1, K}, {3, 0}} {
		s := draft.Step{Seqs: 2, Pass: pass, Draft: 0.01, Extra: extra, Others: draft.Others{Gain: c.others}}
		p := *pos
		if ch := pol.Choose(&p, &s); ch.K != c.want {
			t.Errorf("the gain of %g other sequences beside the block: %+v, want k = %d", c.others, ch, c.want)
		}
	}
}

// TestTimeAhead: a step's draft time is hidden by the larger of the
// measured overlap (Hidden) and what drafting ahead hides at its k
// (Ahead: the chance its pre-draft is used). Where the draft costs half a
// pass a token and nothing overlaps, plain decoding wins; with the
// pre-drafts of a draft right 90% of the time hiding their share,
// speculation pays (k = 1 about 1.15× plain).
func TestTimeAhead(t *testing.T) {
	const K = 2
	pol := draft.Policy{K: K, Auto: true}
	pos := positions(K, 0.9)
	s := draft.Step{Pass: []float64{1, 1.6, 2.2}, Draft: 0.5}
	if got, want := s.Time(1), 2.1; math.Abs(got-want) > 1e-12 {
		t.Errorf("Time(1) without overlap = %g, want %g", got, want)
	}
	p := *pos
	if ch := pol.Choose(&p, &s); ch.K != 0 {
		t.Errorf("without overlap: %+v, want k = 0", ch)
	}
	s.Ahead = []float64{0, 0.9, 0.81}
	if got, want := s.Time(1), 1.65; math.Abs(got-want) > 1e-12 {
		t.Errorf("Time(1) with Ahead 0.9 = %g, want %g", got, want)
	}
	s.Hidden = 0.95 // the larger one counts
	if got, want := s.Time(1), 1.625; math.Abs(got-want) > 1e-12 {
		t.Errorf("Time(1) with Hidden 0.95 and Ahead 0.9 = %g, want %g", got, want)
	}
	s.Hidden = 0
	p = *pos
	if ch := pol.Choose(&p, &s); ch.K < 1 {
		t.Errorf("with the pre-drafts' share hidden: %+v, want k ≥ 1", ch)
	}
}

// TestChooseHold: a block of one draft token predicted at exactly plain
// decoding's rate is not taken by a sequence decoding plainly (it gains
// less than Margin) but is kept by one that speculates (within Hold of
// plain); one predicted Hold and more below plain ends the speculation,
// and the sequence is then Lapsed, probing every ProbeMin steps, until
// LapseProbes probes have not paid.
func TestChooseHold(t *testing.T) {
	const a = 0.9
	pol := draft.Policy{K: 1, Auto: true}
	pass := []float64{1, 1}
	// rate(1) = (1+p)/(1+d) for the estimate p of a: d = 0.1 pays, d = p
	// is plain's rate, and d = (1+p)/(1−2·Hold) − 1 is 2·Hold below it.
	step := func(d float64) *draft.Step { return &draft.Step{Pass: pass, Draft: d} }
	fresh := positions(1, a)
	p := fresh.P(1) // the estimate (near a)
	even, below := step(p), step((1+p)/(1-2*draft.Hold)-1)
	if c := pol.Choose(fresh, even); c.K != 0 || c.Probe {
		t.Errorf("plain sequence at an even block: %+v, want k 0", c)
	}
	pos := positions(1, a)
	if c := pol.Choose(pos, step(0.1)); c.K != 1 || c.Probe {
		t.Fatalf("paying block: %+v, want k 1", c)
	}
	for i := 0; i < 5; i++ {
		if c := pol.Choose(pos, even); c.K != 1 || c.Probe || math.Abs(c.Speedup-1) > 1e-9 {
			t.Fatalf("speculating sequence, even block, step %d: %+v, want k 1 at 1×", i, c)
		}
	}
	if pos.Lapsed() {
		t.Error("Lapsed while speculating")
	}
	if c := pol.Choose(pos, below); c.K != 0 {
		t.Fatalf("block below Hold: %+v, want k 0", c)
	}
	if !pos.Lapsed() {
		t.Error("not Lapsed after speculation ended")
	}
	// Rejections take the estimate down to where a probe's block runs at
	// 0.7× plain, though one accepted in full would pay (2/(1+d) > 1.05
	// below an estimate of 1/3). Probes every ProbeMin steps (the first
	// counting the step that ended speculation), none of which pays:
	// Lapsed ends at the choice after the LapseProbes-th, and the next
	// probe is as far off as its loss makes it (30 steps at ProbeBudget).
	for pos.P(1) > 0.1 {
		pos.Update(1, 0)
	}
	bad := step((1+pos.P(1))/0.7 - 1)
	var at []int
	for i := 1; len(at) < draft.LapseProbes+1 && i < 10*draft.ProbeMax; i++ {
		c := pol.Choose(pos, bad)
		if c.Probe {
			at = append(at, i)
		}
		if lapsed := pos.Lapsed(); lapsed != (len(at) < draft.LapseProbes || len(at) == draft.LapseProbes && c.Probe) {
			t.Fatalf("step %d (%+v), after %d probes: Lapsed %v", i, c, len(at), lapsed)
		}
	}
	if len(at) != draft.LapseProbes+1 {
		t.Fatalf("probes at steps %v, want %d", at, draft.LapseProbes+1)
	}
	for i, s := range at[:draft.LapseProbes] {
		if want := (i+1)*draft.ProbeMin - 1; s != want {
			t.Errorf("probes at steps %v, want every %d steps while Lapsed", at, draft.ProbeMin)
			break
		}
	}
	if gap := at[draft.LapseProbes] - at[draft.LapseProbes-1]; gap < 30 {
		t.Errorf("probes at steps %v: the one after Lapsed ends is %d steps on, want at least 30", at, gap)
	}
}

// TestPositionsRelax: a sequence whose estimate of position 1 dipped
// under the pipeline's (rejections after many acceptances) comes back to
// the pipeline's over plain steps (Relax), and what it sees afterwards
// moves it again; without a pipeline estimate it returns to its own prior.
func TestPositionsRelax(t *testing.T) {
	const K = 2
	pipe := draft.NewPrior(K)
	for i := 0; i < 200; i++ {
		pipe.Update(K, K) // the pipeline: every token accepted
	}
	var pos draft.Positions
	pos.Init(K, pipe)
	for i := 0; i < 30; i++ {
		pos.Update(K, K)
	}
	for i := 0; i < 4; i++ {
		pos.Update(K, 0)
	}
	dip, want := pos.P(1), pipe.P(1)
	if dip > want-0.1 {
		t.Fatalf("P(1) after rejections %.3f, pipeline %.3f: no dip to test", dip, want)
	}
	for i := 0; i < 100; i++ {
		pos.Relax(pipe)
	}
	if got := pos.P(1); math.Abs(got-want) > 0.02 {
		t.Errorf("P(1) after 100 plain steps %.3f (from %.3f), want the pipeline's %.3f", got, dip, want)
	}
	before := pos.P(1)
	pos.Update(K, 0)
	if after := pos.P(1); after > before-0.05 {
		t.Errorf("a rejection after relaxing moved P(1) from %.3f to %.3f, want a drop of 0.05 or more", before, after)
	}
	var own draft.Positions
	own.Init(K, nil)
	for i := 0; i < 20; i++ {
		own.Update(K, 0)
	}
	for i := 0; i < 100; i++ {
		own.Relax(nil)
	}
	if got := own.P(1); math.Abs(got-0.5) > 0.02 {
		t.Errorf("without a pipeline estimate: P(1) %.3f after relaxing, want its prior 0.5", got)
	}
}
