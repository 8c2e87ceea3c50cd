package bench

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/golden"
)

// fakeRunner is a Runner with made-up, deterministic figures: plain
// decoding at 100 tok/s, a configuration at 100·(1 + k/10) tok/s (times
// slow[call] for that call), every request decoding tokens 1 2 3 4 except
// prompt 0 in the configurations of wrong.
type fakeRunner struct {
	calls []string
	slow  map[int]float64
	wrong map[string]bool
}

var fakePrompts = []Prompt{{ID: "a", Category: "news", Text: "x"}, {ID: "b", Category: "chat", Text: "y"}}

func (f *fakeRunner) Prompts() []Prompt { return fakePrompts }

func (f *fakeRunner) Costs(ctx context.Context, threads int, ks []int) (Costs, error) {
	c := Costs{Threads: threads, Target1: 10 * time.Millisecond, Draft1: time.Millisecond, C: 0.1}
	for _, k := range ks {
		d := 10*time.Millisecond + time.Duration(k)*500*time.Microsecond
		c.Pass = append(c.Pass, PassCost{K: k, Cost: d, R: Num(d.Seconds() / 0.010)})
	}
	return c, nil
}

func (f *fakeRunner) Run(ctx context.Context, p Point, timeline bool) (Sample, error) {
	call := len(f.calls)
	f.calls = append(f.calls, p.String())
	tokS := 100 * (1 + float64(p.K)/10)
	if p.Auto {
		tokS = 119
	}
	if x, ok := f.slow[call]; ok {
		tokS *= x
	}
	var s Sample
	for i := range fakePrompts {
		q := Request{Prompt: i, Tokens: []int32{1, 2, 3, 4}, Generated: 4,
			TTFT: 5 * time.Millisecond, TTFS: 8 * time.Millisecond, TPOT: 3 * time.Millisecond,
			Gaps: []time.Duration{2 * time.Millisecond, 4 * time.Millisecond}, Duration: time.Duration(0.4 / tokS * 100 * float64(time.Second))}
		if f.wrong[p.String()] && i == 0 {
			q.Tokens = []int32{1, 2, 9, 9}
		}
		if p.K > 0 {
			q.Blocks = []Block{{p.K, min(p.K, 2)}, {p.K, 0}}
		} else {
			q.Blocks = []Block{{}, {}, {}, {}}
		}
		s.Requests = append(s.Requests, q)
		s.Generated += q.Generated
	}
	if p.K > 0 {
		// Auto: per run, 2 plain steps, 1 of k 1 and 5 of k 2 (a probe
		// among them), each predicted at 1.25×; fixed: every block at k.
		s.KChosen = make([]int, p.K+1)
		s.KChosen[p.K] = 2 * len(fakePrompts)
		if p.Auto {
			s.KChosen = []int{2, 1, 5}
			s.AutoSteps, s.Probes, s.PredictedSum = 8, 1, 8*1.25
		}
	}
	s.Wall = time.Duration(float64(s.Generated) / tokS * float64(time.Second))
	s.DraftBusy, s.VerifyBusy, s.Overlap = s.Wall/4, s.Wall/2, s.Wall/8
	s.CPU = s.Wall * 3 / 2
	if timeline {
		s.Timeline = &Timeline{Point: p, Wall: s.Wall, First: time.Millisecond, Last: s.Wall,
			Intervals: []Interval{{Kind: KindPrefill, Start: 0, End: time.Millisecond, Slot0: true, Tokens: 3},
				{Kind: KindDraft, Start: time.Millisecond, End: 2 * time.Millisecond, Slot0: true, Tokens: p.K},
				{Kind: KindVerify, Start: 2 * time.Millisecond, End: 5 * time.Millisecond, Slot0: true, Tokens: p.K + 1}}}
	}
	return s, nil
}

var fakePoints = []Point{
	{Draft: DraftModel, K: 1, Batch: 1, Threads: 1},
	{Draft: DraftModel, K: 2, Batch: 1, Threads: 1},
	{Draft: DraftModel, K: 2, Temp: 0.8, Batch: 1, Threads: 1},
	{Draft: DraftModel, K: 2, Auto: true, Batch: 1, Threads: 1},
}

// fakeSweep runs fakePoints with 2 repeats and 1 warm-up pair; call 13
// (the baseline after k2 in the second repeat) runs at 70%, and k 2
// greedy decodes prompt 0 wrongly.
func fakeSweep(t *testing.T) (*Results, *fakeRunner, []int) {
	t.Helper()
	f := &fakeRunner{slow: map[int]float64{13: 0.7}, wrong: map[string]bool{"model k2 t0 b1 th1": true}}
	var prog []int
	pl := Plan{Points: fakePoints, Reps: 2, Warmup: 1, Timeline: true}
	res, err := Sweep(context.Background(), f, pl, func(done, total int, what string) {
		if total != pl.Steps() {
			t.Errorf("progress total %d, Steps %d", total, pl.Steps())
		}
		prog = append(prog, done)
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, f, prog
}

func TestSweepSchedule(t *testing.T) {
	_, f, prog := fakeSweep(t)
	want := []string{
		// warm-up pair
		"plain t0 b1 th1", "model k1 t0 b1 th1",
		// repeat 0: baseline first
		"plain t0 b1 th1", "model k1 t0 b1 th1", "plain t0 b1 th1", "model k2 t0 b1 th1", "plain t0.8 b1 th1", "model k2 t0.8 b1 th1",
		"plain t0 b1 th1", "model auto≤2 t0 b1 th1",
		// repeat 1: configuration first
		"model k1 t0 b1 th1", "plain t0 b1 th1", "model k2 t0 b1 th1", "plain t0 b1 th1", "model k2 t0.8 b1 th1", "plain t0.8 b1 th1",
		"model auto≤2 t0 b1 th1", "plain t0 b1 th1",
		// the timeline of the best exact configuration
		"model k2 t0.8 b1 th1",
	}
	if !slices.Equal(f.calls, want) {
		t.Errorf("calls:\n got %q\nwant %q", f.calls, want)
	}
	// One costs step, then one per run.
	if len(prog) != 1+len(want) || prog[len(prog)-1] != len(prog) {
		t.Errorf("progress %v", prog)
	}
}

func TestSweepDriftExactnessSpeedup(t *testing.T) {
	res, _, _ := fakeSweep(t)
	byLabel := map[string]ConfigResult{}
	for _, c := range res.Configs {
		byLabel[c.Label] = c
	}
	k1, k2, k2s := byLabel["model k1 t0 b1 th1"], byLabel["model k2 t0 b1 th1"], byLabel["model k2 t0.8 b1 th1"]
	// Drift: the greedy baseline ran 100, 100, 100, 100, 70, 100: median
	// 100, the 70 is 30% off and its pair (k 2's second) is flagged.
	if k1.DriftedPairs != 0 || k2.DriftedPairs != 1 || k2s.DriftedPairs != 0 || res.DriftFlagged != 1 {
		t.Errorf("drifted pairs k1 %d k2 %d k2 t0.8 %d, total %d; want 0 1 0 1", k1.DriftedPairs, k2.DriftedPairs, k2s.DriftedPairs, res.DriftFlagged)
	}
	if !near(float64(res.Drift), 0.30, 1e-6) {
		t.Errorf("drift %v, want 0.30", res.Drift)
	}
	var b0 *BaselineResult
	for i := range res.Baselines {
		if res.Baselines[i].Label == "plain t0 b1 th1" {
			b0 = &res.Baselines[i]
		}
	}
	if b0 == nil || !slices.Equal(b0.Drifted, []bool{false, false, false, false, true, false}) || !slices.Equal(b0.Step, []int{0, 2, 6, 9, 11, 15}) {
		t.Fatalf("greedy baseline %+v", b0)
	}
	// Exactness: k 2 greedy got prompt 0 wrong in both repeats.
	if k1.Exact != "yes" || k2.Exact != "no" || k2.Mismatched != 2 || k2s.Exact != "n/a: sampling" || b0.Exact != "yes" {
		t.Errorf("exact: k1 %q, k2 %q (%d), k2 t0.8 %q, baseline %q", k1.Exact, k2.Exact, k2.Mismatched, k2s.Exact, b0.Exact)
	}
	// Speedup: k 1 at 110 tok/s over 100 in both pairs; k 2 at 120 over
	// 100 and over 70: median of 1.2 and 1.714.
	if !near(k1.Speedup.Median, 1.1, 1e-6) || !near(k2.Speedup.Median, (1.2+120.0/70)/2, 1e-6) || !near(k2.Speedup.Max, 120.0/70, 1e-6) {
		t.Errorf("speedups k1 %+v k2 %+v", k1.Speedup, k2.Speedup)
	}
	// The inexact k 2 is not the best, however fast.
	if res.Best == nil || res.Best.Label != "model k2 t0.8 b1 th1" || res.Best.Knee != 2 {
		t.Errorf("best %+v", res.Best)
	}
	if res.Timeline == nil || res.Timeline.Point != res.Best.Point {
		t.Errorf("timeline %+v", res.Timeline)
	}
	// CPU: 1.5 CPU-seconds per second of wall.
	if !near(float64(k1.CPUShare), 1.5, 1e-6) || !near(k1.CPUTokS.Median, 110/1.5, 1e-3) {
		t.Errorf("k1 CPU share %v, tok per CPU-s %v", k1.CPUShare, k1.CPUTokS)
	}
	// Per block: {k, min(k, 2)} and {k, 0}: k 2 accepted 2 of 4, α 2/3.
	if !near(float64(k2s.AcceptanceRate), 0.5, 1e-12) || !near(float64(k2s.Alpha), 2.0/3, 1e-12) || !slices.Equal(k2s.Histogram, []int{4, 0, 4}) {
		t.Errorf("k2 t0.8 acceptance %v alpha %v histogram %v", k2s.AcceptanceRate, k2s.Alpha, k2s.Histogram)
	}
	// Theory: c 0.1, r = 11 ms / 10 ms.
	if !near(float64(k2s.Predicted), Predicted(2.0/3, 2, 0.1), 1e-12) || !near(float64(k2s.R), 1.1, 1e-9) ||
		!near(float64(k2s.PredictedPass), PredictedPass(2.0/3, 2, 0.1, 1.1), 1e-9) {
		t.Errorf("theory %v %v %v", k2s.Predicted, k2s.R, k2s.PredictedPass)
	}
	if len(k2s.Categories) != 2 || k2s.Categories[0].Category != "news" || k2s.Categories[0].Requests != 2 ||
		!near(float64(k2s.Categories[1].Speedup), 1.2, 1e-6) {
		t.Errorf("categories %+v", k2s.Categories)
	}
}

func TestSweepErrors(t *testing.T) {
	for _, pl := range []Plan{{Reps: 1}, {Points: fakePoints}, {Points: fakePoints, Reps: 1, Warmup: -1}} {
		if _, err := Sweep(context.Background(), &fakeRunner{}, pl, nil); err == nil {
			t.Errorf("%+v: no error", pl)
		}
	}
	// Synthetic acceptance: no exactness verdict.
	res, err := Sweep(context.Background(), &fakeRunner{wrong: map[string]bool{"model k1 t0 b1 th1": true}},
		Plan{Points: fakePoints[:1], Reps: 1, Synthetic: true}, nil)
	if err != nil || res.Configs[0].Exact != "n/a: synthetic" {
		t.Errorf("synthetic: %v %+v", err, res)
	}
}

func fakeResults(t *testing.T) *Results {
	res, _, _ := fakeSweep(t)
	res.Machine = Machine{CPU: "Test CPU", Flags: []string{"avx2", "fma"}, CPUs: 2, OS: "linux", Arch: "amd64", Go: "go1.x"}
	res.Models = Models{Target: ModelInfo{Name: "t.gguf", SHA256: "00ff", Bytes: 10, Params: 5, Arch: "llama", Layers: 1, Dim: 8, Vocab: 16},
		Draft: &ModelInfo{Name: "d.gguf", SHA256: "ff00", Bytes: 4, Params: 2, Arch: "llama", Layers: 1, Dim: 4, Vocab: 16}}
	res.Args = []string{"bench", "--k", "1,2"}
	res.Settings = Settings{N: 4, Reps: 2, Warmup: 1, Seed: 1, Prompts: "fake", PromptCount: 2, DriftTol: 0.1, DraftThreads: 1}
	return res
}

func TestResultsSchema(t *testing.T) {
	res := fakeResults(t)
	var j, c bytes.Buffer
	if err := res.WriteJSON(&j); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "results.json.golden"), j.Bytes())
	if err := res.WriteCSV(&c); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "results.csv.golden"), c.Bytes())
	// What was written reads back (null for what was not measured) and
	// writes the same again.
	back, err := ReadJSON(bytes.NewReader(j.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := back.WriteJSON(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), j.Bytes()) {
		golden.Check(t, filepath.Join("testdata", "results.json.golden"), again.Bytes()) // shows the difference in results.json.got
	}
	if _, err := ReadJSON(strings.NewReader(`{"schema": "specd-bench/0"}`)); err == nil {
		t.Error("another schema read")
	}
	if b, _ := Num(math.NaN()).MarshalJSON(); string(b) != "null" {
		t.Errorf("NaN marshals as %s", b)
	}
}
