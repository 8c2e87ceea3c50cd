package bench

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/specd-dev/specd/engine"
)

// openBundled opens the bundled pair on one thread of each.
func openBundled(t *testing.T) (*engine.Engine, engine.Options) {
	t.Helper()
	o := engine.DefaultOptions()
	o.Threads, o.DraftThreads = 1, 1
	o.ApplyDefaults()
	e, err := engine.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e, e.Options()
}

// TestEngineSweep runs a small real sweep on the bundled pair: the model
// and the n-gram draft, greedy (checked exact) and sampled, two batch
// sizes, with a timeline.
func TestEngineSweep(t *testing.T) {
	e, o := openBundled(t)
	ps, err := Builtin(SetAll)
	if err != nil {
		t.Fatal(err)
	}
	ps = Pick(ps, 4)
	r, err := NewEngineRunner(e, RunnerOptions{Base: o, Prompts: ps, N: 12, Seed: 1, MaxK: 3})
	if err != nil {
		t.Fatal(err)
	}
	g := Grid{K: []int{3}, Drafts: []string{DraftModel, DraftNGram}, Temps: []float64{0}, Batches: []int{1, 2}, Threads: []int{1}}
	pts := append(g.Points(), Point{Draft: DraftModel, K: 2, Temp: 0.8, Batch: 2, Threads: 1},
		Point{Draft: DraftModel, K: 3, Auto: true, Batch: 2, Threads: 1})
	res, err := Sweep(context.Background(), r, Plan{Points: pts, Reps: 1, Timeline: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Configs {
		want := "yes"
		if !c.Greedy() {
			want = "n/a: sampling"
		}
		if c.Exact != want {
			t.Errorf("%s: exact %q, want %q", c.Label, c.Exact, want)
		}
		// Auto's k is the policy's, per step (0 included): every verified
		// block counts once in its histogram, whose cap is k.
		if c.Auto {
			n := 0
			for _, x := range c.KChosen {
				n += x
			}
			if len(c.KChosen) != c.K+1 || n < c.Blocks || n == 0 || !(c.PredictedAuto > 0) {
				t.Errorf("%s: k chosen %v over %d blocks, predicted %v", c.Label, c.KChosen, c.Blocks, c.PredictedAuto)
			}
			continue
		}
		if c.Draft == DraftModel && !(c.AcceptanceRate > 0 && c.Blocks > 0 && len(c.Histogram) == c.K+1) {
			t.Errorf("%s: acceptance %v over %d blocks, histogram %v", c.Label, c.AcceptanceRate, c.Blocks, c.Histogram)
		}
		if !(c.TokS.Median > 0 && c.Speedup.Median > 0 && c.TTFTP50 > 0) {
			t.Errorf("%s: tok/s %v speedup %v TTFT %v", c.Label, c.TokS, c.Speedup, c.TTFTP50)
		}
		if runtime.GOOS == "linux" && !(c.CPUShare > 0 && c.CPUTokS.Median > 0) {
			t.Errorf("%s: CPU share %v, tok per CPU-s %v", c.Label, c.CPUShare, c.CPUTokS)
		}
		if len(c.Categories) != 4 {
			t.Errorf("%s: %d categories", c.Label, len(c.Categories))
		}
	}
	for _, b := range res.Baselines {
		if b.Greedy() && b.Exact != "yes" {
			t.Errorf("%s: greedy baselines disagree", b.Label)
		}
	}
	c := res.Costs[0]
	if c.Target1 <= 0 || c.Draft1 <= 0 || !(c.C > 0) || len(c.Pass) != 2 {
		t.Errorf("costs %+v", c)
	}
	tl := res.Timeline
	if tl == nil || len(tl.Intervals) == 0 || tl.Last <= tl.First {
		t.Fatalf("timeline %+v", tl)
	}
	kinds := map[string]bool{}
	for _, iv := range tl.Intervals {
		kinds[iv.Kind] = true
	}
	if !kinds[KindVerify] || !kinds[KindDraft] && !kinds[KindPreDraft] {
		t.Errorf("timeline kinds %v", kinds)
	}
}

// TestEngineSyntheticAcceptance: with every draft token accepted
// (rate 1) or none (rate 0), whatever the draft proposed.
func TestEngineSyntheticAcceptance(t *testing.T) {
	e, o := openBundled(t)
	ps, _ := Builtin(SetBrown)
	for _, rate := range []float64{1, 0} {
		r, err := NewEngineRunner(e, RunnerOptions{Base: o, Prompts: ps[:2], N: 10, Seed: 1, MaxK: 4, Synthetic: []float64{rate}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := r.Run(context.Background(), Point{Draft: DraftModel, K: 4, Batch: 2, Threads: 1}, false)
		if err != nil {
			t.Fatal(err)
		}
		var blocks []Block
		for _, q := range s.Requests {
			blocks = append(blocks, q.Blocks...)
		}
		if got := Alpha(blocks); got != rate {
			t.Errorf("synthetic rate %v: α %v over %v", rate, got, blocks)
		}
	}
	if _, err := NewEngineRunner(e, RunnerOptions{Base: o, Prompts: ps[:1], N: 4, Synthetic: []float64{1.5}}); err == nil {
		t.Error("synthetic rate 1.5 accepted")
	}
}

func TestEngineRunnerErrors(t *testing.T) {
	e, o := openBundled(t)
	long := Prompt{ID: "long", Text: strings.Repeat("the jury said ", 200)}
	for _, c := range []struct {
		ro   RunnerOptions
		want string
	}{
		{RunnerOptions{Base: o, Prompts: []Prompt{{ID: "a", Text: "x"}}, N: 0}, "-n 0"},
		{RunnerOptions{Base: o, N: 4}, "no prompts"},
		{RunnerOptions{Base: o, Prompts: []Prompt{long}, N: 4}, "positions"},
		{RunnerOptions{Base: o, Prompts: []Prompt{{ID: "bad", IDs: []int32{99999}}}, N: 4}, "bad"},
	} {
		if _, err := NewEngineRunner(e, c.ro); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.ro.Prompts, err, c.want)
		}
	}
}
