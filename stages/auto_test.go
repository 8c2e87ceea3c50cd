package stages_test

import (
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/stages"
	"github.com/specd-dev/specd/verify/verifytest"
)

// costedDrafter advances a synthetic clock by per for every token drafted.
type costedDrafter struct {
	draft.Drafter
	clock *verifytest.Clock
	per   time.Duration
}

func (d costedDrafter) Draft(r *draft.Request) error {
	err := d.Drafter.Draft(r)
	d.clock.Advance(time.Duration(len(r.Out)) * d.per)
	return err
}

// costedFeeder is a costedDrafter of a draft.Feeder. The pipeline feeds a
// couple of tokens at a time: a call costs a drafted token; feeds counts
// the calls.
type costedFeeder struct {
	costedDrafter
	feeds *atomic.Int64
}

func (d costedFeeder) Feed(slot int, committed []int32) error {
	d.feeds.Add(1)
	d.clock.Advance(d.per)
	return d.Drafter.(draft.Feeder).Feed(slot, committed)
}

// feeds counts the Feed calls of every costedFeeder.
var feeds atomic.Int64

// syntheticCosts gives cfg a synthetic cost model: its target's passes
// cost pass(tokens, seqs) and a drafted token costs per, on clocks the
// pipeline's auto policy reads instead of the wall clock. It returns the
// clocks; cfg.Target becomes a *verifytest.Costed.
func syntheticCosts(cfg *stages.Config, pass func(tokens, seqs int) time.Duration, per time.Duration) *stages.Clock {
	tc, dc := &verifytest.Clock{}, &verifytest.Clock{}
	cfg.Target = &verifytest.Costed{Backend: cfg.Target, Clock: tc, Cost: pass}
	if d := cfg.Drafter; d != nil {
		cfg.Drafter = costedDrafter{d, dc, per}
		if _, ok := d.(draft.Feeder); ok {
			cfg.Drafter = costedFeeder{costedDrafter{d, dc, per}, &feeds}
		}
	}
	return &stages.Clock{Target: tc.Now, Draft: dc.Now}
}

// flatCost is an accelerator-like target: extra tokens cost little.
func flatCost(tokens, seqs int) time.Duration {
	return 100*time.Microsecond + 2*time.Microsecond*time.Duration(tokens)
}

// linearCost is a compute-bound target: every token costs a whole pass,
// so speculation cannot pay even at full acceptance.
func linearCost(tokens, seqs int) time.Duration {
	return 100 * time.Microsecond * time.Duration(tokens)
}

// keepDrafter makes a draft that proposes the target's own tokens accept
// exactly keep(committed tokens) of each block: it replaces the
// proposals after those by a token the target does not choose.
type keepDrafter struct {
	draft.Drafter
	keep func(committed int) int
}

// keepFeeder is a keepDrafter of a model draft, with its Feed.
type keepFeeder struct{ keepDrafter }

func (d keepFeeder) Feed(slot int, committed []int32) error {
	return d.Drafter.(draft.Feeder).Feed(slot, committed)
}

func (d keepDrafter) Draft(r *draft.Request) error {
	err := d.Drafter.Draft(r)
	for i := max(d.keep(len(r.Tokens)), 0); i < len(r.Out); i++ {
		r.Out[i] = (r.Out[i] + 1) % vocab
	}
	return err
}

// autoConfig is one sequence of the fake target drafted for by itself,
// with acceptance set by keep and costs by pass (and 10µs a draft token).
func autoConfig(k int, pass func(tokens, seqs int) time.Duration, keep func(int) int) (stages.Config, *verifytest.Costed) {
	return autoConfigDraft(k, pass, keep, 10*time.Microsecond)
}

// autoConfigDraft is autoConfig with a draft token costing per.
func autoConfigDraft(k int, pass func(tokens, seqs int) time.Duration, keep func(int) int, per time.Duration) (stages.Config, *verifytest.Costed) {
	cfg := stages.Config{
		Target:  verifytest.NewFake(vocab, 1, 2048, 64, 4),
		Drafter: keepFeeder{keepDrafter{draft.NewModel(verifytest.NewFake(vocab, 1, 2048, 64, 4), 0), keep}},
		Policy:  draft.Policy{K: k, Auto: true, Cost: 0.1}, Slots: 1, MaxPos: 2048,
		Costs: draft.NewCosts(64, 1),
	}
	cfg.Clock = syntheticCosts(&cfg, pass, per)
	return cfg, cfg.Target.(*verifytest.Costed)
}

func all(int) int { return 1 << 20 }

// calibrate gives cfg's costs the calibration pass implies for decoding
// passes of 1 to 64 tokens of one sequence, as if measured.
func calibrate(cfg stages.Config, pass func(tokens, seqs int) time.Duration) {
	cal := make([]float64, 64)
	for n := range cal {
		cal[n] = pass(n+1, 1).Seconds()
	}
	cfg.Costs.Calibrate(cal, 0)
}

// runGreedy runs prompt through cfg as the one request "a" for gen tokens,
// fails the test unless they are the fake target's greedy decoding, and
// returns the pipeline and how many Feed calls the drafters
// made meanwhile.
func runGreedy(t *testing.T, cfg stages.Config, prompt []int32, gen int) (*stages.Pipeline, int64) {
	t.Helper()
	fed := feeds.Load()
	res, p := runPipeline(t, cfg, []stages.Request{{ID: "a", PromptIDs: prompt, MaxTokens: gen}})
	fed = feeds.Load() - fed
	ref := verifytest.NewFake(vocab, 1, 2048, 2048, 4)
	want, err := ref.Greedy(0, prompt, gen)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res["a"].tokens) != fmt.Sprint(want) {
		t.Fatal("tokens differ from plain greedy decoding")
	}
	return p, fed
}

// TestAutoPicksFormulasK runs the auto policy on synthetic cost models
// and synthetic acceptance, and checks that it settles on the k the
// throughput formula says is best: none at all when every token costs a
// whole pass (even at full acceptance: only its probes draft), the largest
// when extra tokens are nearly free and every draft token is accepted, and
// the middle one when exactly two tokens of each block are accepted. It
// also checks that calibration read the synthetic clock, and that output
// stays the target's.
func TestAutoPicksFormulasK(t *testing.T) {
	const K, gen = 6, 400
	ref := verifytest.NewFake(vocab, 1, 2048, 2048, 4)
	prompt := []int32{1, 2, 3}
	want, err := ref.Greedy(0, prompt, gen)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		pass func(tokens, seqs int) time.Duration
		keep func(int) int
		kept int // accepted tokens per block (K: all)
	}{
		{"linear/full-acceptance", linearCost, all, K},
		{"flat/full-acceptance", flatCost, all, K},
		{"flat/two-accepted", func(n, _ int) time.Duration { return time.Duration(90+10*n) * time.Microsecond }, func(int) int { return 2 }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, target := autoConfig(K, tc.pass, tc.keep)
			res, p := runPipeline(t, cfg, []stages.Request{{ID: "a", PromptIDs: prompt, MaxTokens: gen}})
			if got := res["a"].tokens; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("tokens differ from plain greedy decoding:\n got  %v\n want %v", got, want)
			}
			// The formula at the true acceptance and costs.
			sec := func(d time.Duration) float64 { return d.Seconds() }
			bestK, best, r0 := 0, 0.0, 0.0
			for k := 0; k <= K; k++ {
				e := float64(1 + min(k, tc.kept))
				r := e / (sec(tc.pass(k+1, 1)) + float64(k)*sec(10*time.Microsecond))
				if k == 0 {
					r0 = r
				}
				if r > best {
					bestK, best = k, r
				}
			}
			if best < r0*(1+draft.Margin) {
				bestK = 0
			}
			m := p.Metrics().Snapshot()
			st := res["a"].final.Stats
			t.Logf("k chosen %v (%d probes, predicted speedup %.2f); formula's best k %d (speedup %.2f)",
				m.KChosen, m.Probes, m.PredictedSpeedup(), bestK, best/r0)
			if fmt.Sprint(st.KChosen) != fmt.Sprint(m.KChosen) || st.AutoSteps != m.AutoSteps || st.Probes != m.Probes {
				t.Errorf("request stats (k %v, %d auto steps, %d probes) differ from the pipeline's (k %v, %d, %d)",
					st.KChosen, st.AutoSteps, st.Probes, m.KChosen, m.AutoSteps, m.Probes)
			}
			if sumFrom(m.KChosen, 0) != m.Steps || m.AutoSteps != m.Steps {
				t.Errorf("histogram %v counts %d steps, %d auto steps, of %d", m.KChosen, sumFrom(m.KChosen, 0), m.AutoSteps, m.Steps)
			}
			// Settled: at least 80% of the steps on the formula's k (the
			// rest: the prior's first steps, probes, the capped last steps).
			if m.KChosen[bestK] < m.Steps*8/10 {
				t.Errorf("chose k %d in %d of %d steps (histogram %v), want most", bestK, m.KChosen[bestK], m.Steps, m.KChosen)
			}
			if bestK == 0 {
				// With every draft token accepted: no block can pay, so
				// there is nothing for a probe to find either.
				if spec := sumFrom(m.KChosen, 1); spec != 0 || m.Probes != 0 {
					t.Errorf("plain decoding is best even with every draft token accepted: %d speculative steps, %d probes in %d steps, want none", spec, m.Probes, m.Steps)
				}
			}
			// Calibration timed the synthetic passes.
			if got, want := cfg.Costs.Pass(1, 1, 0), sec(tc.pass(1, 1)); math.Abs(got-want) > 0.05*want {
				t.Errorf("Costs.Pass(1) = %g, the synthetic cost is %g", got, want)
			}
			if len(target.Passes) == 0 {
				t.Error("no passes recorded")
			}
			var buf strings.Builder
			m.Write(&buf)
			if !strings.Contains(buf.String(), "k chosen: 0:") && bestK == 0 || !strings.Contains(buf.String(), "predicted speedup") {
				t.Errorf("report lacks the k histogram:\n%s", buf.String())
			}
		})
	}
}

// TestAutoReturnsWhenAcceptanceRises: a draft that is always wrong for
// the first 300 tokens and always right after, on a target where extra
// tokens are nearly free: the policy decodes plainly (but for probes, for
// which the draft model is fed the tokens while the target verifies)
// while the draft is wrong, and its probes bring it back to long blocks
// once the draft is right, for most of the remaining tokens.
func TestAutoReturnsWhenAcceptanceRises(t *testing.T) {
	const K, gen, switchAt = 6, 900, 300
	prompt := []int32{4, 5}
	cfg, target := autoConfig(K, flatCost, func(committed int) int {
		if committed-len(prompt) < switchAt {
			return 0
		}
		return 1 << 20
	})
	// Calibrated here, so that every pass recorded is a decoding pass.
	calibrate(cfg, flatCost)
	p, fed := runGreedy(t, cfg, prompt, gen)
	// Walk the passes (the first is the prompt's prefill): a pass of n
	// tokens commits 1 token while the draft is wrong.
	passes := target.Passes[1:]
	committed, low, lowSpec, i := 0, 0, 0, 0
	for ; i < len(passes) && committed < switchAt; i++ {
		if committed >= switchAt/2 { // after the prior's first steps
			low++
			if passes[i] > 1 {
				lowSpec++
			}
		}
		committed++
	}
	if lowSpec > low/draft.ProbeMin+1 {
		t.Errorf("wrong draft: %d of the last %d passes drafted, more than probes", lowSpec, low)
	}
	first := -1
	long := 0
	for j := i; j < len(passes); j++ {
		if passes[j] > 1 && first < 0 {
			first = j - i
		}
		if passes[j] == K+1 {
			long++
		}
	}
	high := len(passes) - i
	if first < 0 || first > draft.ProbeMax<<draft.ProbeBackoff {
		t.Errorf("right draft: first speculative pass after %d passes", first)
	}
	if long*(K+1) < (gen-switchAt)/2 {
		t.Errorf("right draft: %d of %d passes verified %d tokens: %d of the last %d tokens", long, high, K+1, long*(K+1), gen-switchAt)
	}
	m := p.Metrics().Snapshot()
	if fed == 0 {
		t.Error("the draft model was never fed while decoding plainly")
	}
	t.Logf("k chosen %v, %d probes, %d feeds; %d of the last %d wrong-draft passes drafted; first speculative pass %d after the switch; %d of %d long",
		m.KChosen, m.Probes, fed, lowSpec, low, first, long, high)
}

// TestAutoBatch: four sequences on a target whose passes are flat up to
// 8 tokens and linear beyond, with a draft that is always right: alone, a
// sequence drafts long blocks; four sharing a pass draft shorter ones,
// because their extra tokens land past the knee. Output is the target's.
func TestAutoBatch(t *testing.T) {
	const K, gen = 6, 200
	knee := func(n, _ int) time.Duration {
		return time.Duration(100+2*n+80*max(0, n-8)) * time.Microsecond
	}
	ref := verifytest.NewFake(vocab, 1, 2048, 2048, 4)
	mean := map[int]float64{}
	for _, seqs := range []int{1, 4} {
		cfg := stages.Config{
			Target:  verifytest.NewFake(vocab, seqs, 512, 64, 4),
			Drafter: draft.NewModel(verifytest.NewFake(vocab, seqs, 512, 64, 4), 0),
			Policy:  draft.Policy{K: K, Auto: true, Cost: 0.1}, Slots: seqs, MaxPos: 512, VerifyBatch: seqs,
		}
		cfg.Clock = syntheticCosts(&cfg, knee, 5*time.Microsecond)
		ps := prompts(seqs)
		var reqs []stages.Request
		for i, pr := range ps {
			reqs = append(reqs, stages.Request{ID: fmt.Sprint(i), PromptIDs: pr, MaxTokens: gen})
		}
		res, p := runPipeline(t, cfg, reqs)
		for i, pr := range ps {
			want, _ := ref.Greedy(0, pr, gen)
			if got := res[fmt.Sprint(i)].tokens; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("batch %d request %d differs from plain greedy decoding", seqs, i)
			}
		}
		m := p.Metrics().Snapshot()
		var sum float64
		for k, n := range m.KChosen {
			sum += float64(k * n)
		}
		mean[seqs] = sum / float64(m.Steps)
		t.Logf("batch %d: k chosen %v, mean %.2f, %.1f tokens per pass", seqs, m.KChosen, mean[seqs], float64(m.PassTokens)/float64(m.Passes))
	}
	if mean[1] < 4 || mean[4] > mean[1]-1 {
		t.Errorf("mean k %.2f alone, %.2f in a batch of 4: want long blocks alone and shorter ones in the batch", mean[1], mean[4])
	}
}

func sumFrom(h []int, from int) int {
	n := 0
	for _, v := range h[from:] {
		n += v
	}
	return n
}

// TestRequestAuto: a request turns the auto policy off (a fixed k, or its
// own k as the cap) or asks for it; asking for it on a pipeline of a fixed
// k, or with adaptive too, ends the request with an error that says so.
// Output is the target's either way.
func TestRequestAuto(t *testing.T) {
	const K, gen = 4, 60
	prompt := []int32{1, 2, 3}
	ref := verifytest.NewFake(vocab, 1, 2048, 2048, 4)
	want, err := ref.Greedy(0, prompt, gen)
	if err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	for _, tc := range []struct {
		name      string
		auto      bool // the pipeline's policy
		reqAuto   *bool
		adaptive  *bool
		k         int
		autoSteps bool   // every step chosen by the auto policy
		fixedK    int    // else: every step drafted this k
		err       string // the request fails with this
	}{
		{"auto pipeline, default", true, nil, nil, 0, true, 0, ""},
		{"auto pipeline, auto", true, &yes, nil, 0, true, 0, ""},
		{"auto pipeline, auto up to 2", true, &yes, nil, 2, true, 0, ""},
		{"auto pipeline, auto off", true, &no, nil, 0, false, K, ""},
		{"auto pipeline, auto off, k 2", true, &no, nil, 2, false, 2, ""},
		{"auto and adaptive", true, &yes, &yes, 0, false, 0, "exclude each other"},
		{"fixed pipeline, auto off", false, &no, nil, 3, false, 3, ""},
		{"fixed pipeline, auto", false, &yes, nil, 0, false, 0, "does not choose draft lengths by cost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := autoConfig(K, flatCost, all)
			cfg.Policy.Auto = tc.auto
			res, _ := runPipeline(t, cfg, []stages.Request{{ID: "a", PromptIDs: prompt, MaxTokens: gen, K: tc.k, Auto: tc.reqAuto, Adaptive: tc.adaptive}})
			r := res["a"]
			if tc.err != "" {
				if r.final.Err == nil || !strings.Contains(r.final.Err.Error(), tc.err) || len(r.tokens) != 0 {
					t.Fatalf("error %v, %d tokens; want one that says %q", r.final.Err, len(r.tokens), tc.err)
				}
				return
			}
			if r.final.Err != nil || fmt.Sprint(r.tokens) != fmt.Sprint(want) {
				t.Fatalf("error %v, tokens %v, want %v", r.final.Err, r.tokens, want)
			}
			st := r.final.Stats
			if tc.autoSteps {
				if st.AutoSteps != st.Steps {
					t.Fatalf("%d auto steps of %d", st.AutoSteps, st.Steps)
				}
				if kmax := max(tc.k, 0); kmax > 0 {
					for k := kmax + 1; k < len(st.KChosen); k++ {
						if st.KChosen[k] > 0 {
							t.Fatalf("k chosen %v past the request's k %d", st.KChosen, kmax)
						}
					}
				}
				return
			}
			// Fixed: every step but those the length cuts short drafts k.
			if st.AutoSteps != 0 || st.KChosen[tc.fixedK] < st.Steps-tc.fixedK {
				t.Fatalf("%d auto steps, k chosen %v over %d steps; want k %d", st.AutoSteps, st.KChosen, st.Steps, tc.fixedK)
			}
		})
	}
}

// TestAutoShortRequestNoProbes: on a target where speculation cannot pay
// even when every draft token is accepted (each token a pass), the
// pipeline does not explore, and a request too short for a probe to repay
// itself (fewer steps left after it than its interval) decodes plainly
// throughout: its draft model is never fed ahead of a probe that will not
// come; greedy output is the target's.
func TestAutoShortRequestNoProbes(t *testing.T) {
	const K, gen = 4, 100
	prompt := []int32{4, 5, 6}
	cfg, _ := autoConfig(K, linearCost, all)
	calibrate(cfg, linearCost)
	p, fed := runGreedy(t, cfg, prompt, gen)
	m := p.Metrics().Snapshot()
	if m.Probes != 0 || m.KChosen[0] != m.AutoSteps || fed != 0 {
		t.Errorf("k chosen %v (%d auto steps), %d probes, %d feeds; want every step at 0, no feeds", m.KChosen, m.AutoSteps, m.Probes, fed)
	}
}

// overheadDrafter advances clock by over for every draft step: work of a
// speculative step that neither the target's passes nor the draft's
// per-token cost shows (the cost model cannot predict it), seen only on
// the clock of whole steps (Clock.Step).
type overheadDrafter struct {
	draft.Drafter
	clock *verifytest.Clock
	over  time.Duration
}

func (d overheadDrafter) Draft(r *draft.Request) error {
	d.clock.Advance(d.over)
	return d.Drafter.Draft(r)
}

type overheadFeeder struct{ overheadDrafter }

func (d overheadFeeder) Feed(slot int, committed []int32) error {
	return d.Drafter.(draft.Feeder).Feed(slot, committed)
}

// TestAutoFollowsMeasuredSteps: a target pass costs 100µs + 10µs a token
// and the draft is right for one token of each block, so the cost model
// predicts k = 1 at 1.69× plain; every speculative step also costs an
// overhead that neither the passes nor the draft's timing shows, only the
// steps' own clock. With none, or a small one (50µs: 1.22× measured), the
// policy keeps speculating; with 250µs (0.58× measured) it learns from
// the steps' times to decode plainly but for probes (and for the few
// steady speculative steps that measure again what the model keeps
// predicting: Costs.ObserveStep's forgetting). Either way its throughput
// on the steps' clock is at least 0.9× plain's (without the correction:
// 0.58×), and its output the target's.
func TestAutoFollowsMeasuredSteps(t *testing.T) {
	const K, gen = 4, 600
	prompt := []int32{7, 8, 9}
	pass := func(n, _ int) time.Duration { return time.Duration(100+10*n) * time.Microsecond }
	ref := verifytest.NewFake(vocab, 1, 2048, 2048, 4)
	want, err := ref.Greedy(0, prompt, gen)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		over  time.Duration
		plain bool // speculation loses by the steps' clock
	}{{0, false}, {50 * time.Microsecond, false}, {250 * time.Microsecond, true}} {
		t.Run(fmt.Sprint("overhead=", tc.over), func(t *testing.T) {
			cfg, _ := autoConfig(K, pass, func(int) int { return 1 })
			oc := &verifytest.Clock{}
			switch d := cfg.Drafter.(type) {
			case costedFeeder:
				cfg.Drafter = overheadFeeder{overheadDrafter{d, oc, tc.over}}
			default:
				t.Fatalf("drafter %T", d)
			}
			target, draftClock := cfg.Clock.Target, cfg.Clock.Draft
			cfg.Clock.Step = func() time.Duration { return target() + draftClock() + oc.Now() }
			calibrate(cfg, pass)
			res, p := runPipeline(t, cfg, []stages.Request{{ID: "a", PromptIDs: prompt, MaxTokens: gen}})
			if fmt.Sprint(res["a"].tokens) != fmt.Sprint(want) {
				t.Fatal("tokens differ from plain greedy decoding")
			}
			m := p.Metrics().Snapshot()
			// Throughput on the steps' clock after the prefill, against
			// plain decoding's: one token a 1-token pass.
			elapsed := cfg.Clock.Step() - pass(len(prompt), 1)
			speedup := float64(gen-1) * pass(1, 1).Seconds() / elapsed.Seconds()
			t.Logf("k chosen %v, %d probes, predicted %.2f, measured %.2f× plain", m.KChosen, m.Probes, m.PredictedSpeedup(), speedup)
			spec := sumFrom(m.KChosen, 1)
			if tc.plain {
				if spec-m.Probes > m.Steps/10 || m.KChosen[0] < m.Steps*8/10 {
					t.Errorf("speculation loses: %d of %d steps speculative (%d probes), want plain decoding but for probes", spec, m.Steps, m.Probes)
				}
			} else if spec < m.Steps*8/10 {
				t.Errorf("speculation pays: %d of %d steps speculative, want most", spec, m.Steps)
			}
			if speedup < 0.9 {
				t.Errorf("measured %.2f× plain, want at least 0.9", speedup)
			}
			if !tc.plain && speedup < 1.1 {
				t.Errorf("measured %.2f× plain where speculation pays, want at least 1.1", speedup)
			}
		})
	}
}

// TestAutoExploresFirst: a fresh pipeline knows nothing of its pair's
// acceptance. On a target where a draft token costs 60% of a one-token
// pass's marginal cost and speculation pays only when nearly every draft
// token is accepted (k = 1 at full acceptance: 1.14× plain; at the prior's
// 0.5: 0.86×), a draft that is always right is found out in the first
// steps of a short request by exploring (ExploreBlocks blocks), not after
// probes spread over the request: almost every decoding pass verifies a
// draft. Output is the target's.
func TestAutoExploresFirst(t *testing.T) {
	const K, gen = 4, 64
	prompt := []int32{3, 4, 5}
	pass := func(n, _ int) time.Duration { return time.Duration(100+60*n) * time.Microsecond }
	cfg, target := autoConfigDraft(K, pass, all, 60*time.Microsecond)
	calibrate(cfg, pass)
	p, _ := runGreedy(t, cfg, prompt, gen)
	plain := 0
	passes := target.Passes[1:] // after the prompt's prefill
	for _, n := range passes {
		if n == 1 {
			plain++
		}
	}
	m := p.Metrics().Snapshot()
	if plain > len(passes)/10 {
		t.Errorf("%d of %d decoding passes verified no draft (k chosen %v, %d probes); want at most a tenth", plain, len(passes), m.KChosen, m.Probes)
	}
	if m.Probes > draft.ExploreBlocks+1 {
		t.Errorf("%d probes, want at most the %d exploring steps", m.Probes, draft.ExploreBlocks+1)
	}
	t.Logf("k chosen %v, %d probes, %d of %d passes plain", m.KChosen, m.Probes, plain, len(passes))
}

// TestAutoRemembersAcceptance: pipelines built one after another on one
// cost table (an engine's, as specd bench's runs and a server's share it)
// do not explore again what the first one found: on the target of
// TestAutoExploresFirst (speculation pays only when nearly every draft
// token is accepted), the second pipeline's first step already drafts as
// the best k, with no exploring or probing step at all; a pipeline on a
// fresh table explores again. Output is the target's each time.
func TestAutoRemembersAcceptance(t *testing.T) {
	const K, gen = 4, 64
	prompt := []int32{3, 4, 5}
	pass := func(n, _ int) time.Duration { return time.Duration(100+60*n) * time.Microsecond }
	cfg, _ := autoConfigDraft(K, pass, all, 60*time.Microsecond)
	calibrate(cfg, pass)
	p, _ := runGreedy(t, cfg, prompt, gen)
	if m := p.Metrics().Snapshot(); m.Probes == 0 {
		t.Fatalf("first pipeline: no exploring steps (k chosen %v)", m.KChosen)
	}
	next, target := autoConfigDraft(K, pass, all, 60*time.Microsecond)
	next.Costs = cfg.Costs
	p, _ = runGreedy(t, next, prompt, gen)
	m := p.Metrics().Snapshot()
	if m.Probes != 0 || len(target.Passes) < 2 || target.Passes[1] != K+1 {
		t.Errorf("second pipeline on the table: k chosen %v, %d probes, passes %v; want the first decoding pass to verify %d draft tokens, no probes", m.KChosen, m.Probes, target.Passes, K)
	}
	fresh, _ := autoConfigDraft(K, pass, all, 60*time.Microsecond)
	calibrate(fresh, pass)
	p, _ = runGreedy(t, fresh, prompt, gen)
	if m := p.Metrics().Snapshot(); m.Probes == 0 {
		t.Errorf("pipeline on a fresh table: k chosen %v, no exploring steps", m.KChosen)
	}
}
