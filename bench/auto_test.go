package bench

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseKs(t *testing.T) {
	for _, c := range []struct {
		in   string
		ks   []int
		auto bool
	}{
		{"1,2,4,8", []int{1, 2, 4, 8}, false},
		{"1, 2,auto", []int{1, 2}, true},
		{"auto", nil, true},
		{"auto,3", []int{3}, true},
	} {
		ks, auto, err := ParseKs(c.in)
		if err != nil || !slices.Equal(ks, c.ks) || auto != c.auto {
			t.Errorf("ParseKs(%q) = %v %v %v, want %v %v", c.in, ks, auto, err, c.ks, c.auto)
		}
	}
	for _, bad := range []string{"", "1,x", "auto,auto", "1,,2", "Auto"} {
		if _, _, err := ParseKs(bad); err == nil {
			t.Errorf("ParseKs(%q): no error", bad)
		}
	}
}

func TestGridAuto(t *testing.T) {
	g := Grid{K: []int{1, 4}, Auto: true, Drafts: []string{DraftModel}, Temps: []float64{0, 0.8}, Batches: []int{1}, Threads: []int{1}}
	var got []string
	for _, p := range g.Points() {
		got = append(got, p.String())
	}
	want := []string{"model k1 t0 b1 th1", "model k4 t0 b1 th1", "model auto≤4 t0 b1 th1",
		"model k1 t0.8 b1 th1", "model k4 t0.8 b1 th1", "model auto≤4 t0.8 b1 th1"}
	if !slices.Equal(got, want) {
		t.Errorf("Points:\n got %q\nwant %q", got, want)
	}
	// Auto alone: capped at AutoK.
	g.K = nil
	if err := g.Check(); err != nil {
		t.Fatal(err)
	}
	if ps := g.Points(); len(ps) != 2 || !ps[0].Auto || ps[0].K != AutoK || g.MaxK() != AutoK {
		t.Errorf("auto alone: %v, MaxK %d", ps, g.MaxK())
	}
	g.Auto = false
	if g.Check() == nil {
		t.Error("no k and no auto passed Check")
	}
	if (Point{Draft: DraftModel, K: 4, Auto: true, Temp: 0.8, Batch: 2, Threads: 1}).Fixed() != (Point{Draft: DraftModel, K: 1, Temp: 0.8, Batch: 2, Threads: 1}).Fixed() {
		t.Error("auto and fixed k are not one Fixed series")
	}
}

func TestMeanChosen(t *testing.T) {
	if m := MeanChosen([]int{4, 2, 10}); !near(m, 22.0/16, 1e-12) {
		t.Errorf("MeanChosen = %v, want 1.375", m)
	}
	if !math.IsNaN(MeanChosen(nil)) || !math.IsNaN(MeanChosen([]int{0, 0})) {
		t.Error("MeanChosen of nothing is not NaN")
	}
}

// TestSweepAuto: the auto configuration of the fake sweep (119 tok/s
// against plain 100) beside its fixed k: k 1 at 1.1×, k 2 faster but
// inexact, so k 1 is the best fixed k to compare with.
func TestSweepAuto(t *testing.T) {
	res, _, _ := fakeSweep(t)
	var auto *ConfigResult
	for i := range res.Configs {
		if res.Configs[i].Auto {
			auto = &res.Configs[i]
		}
	}
	if auto == nil || auto.Label != "model auto≤2 t0 b1 th1" {
		t.Fatalf("no auto configuration in %v", res.Configs)
	}
	// Two runs of KChosen {2, 1, 5}, 8 auto steps at 1.25× predicted, a probe each.
	if !slices.Equal(auto.KChosen, []int{4, 2, 10}) || !near(float64(auto.MeanK), 22.0/16, 1e-12) || auto.Probes != 2 ||
		!near(float64(auto.PredictedAuto), 1.25, 1e-12) {
		t.Errorf("k chosen %v mean %v probes %d predicted %v", auto.KChosen, auto.MeanK, auto.Probes, auto.PredictedAuto)
	}
	if !math.IsNaN(float64(auto.Predicted)) || !math.IsNaN(float64(auto.R)) || auto.Exact != "yes" {
		t.Errorf("auto: predicted %v r %v exact %q", auto.Predicted, auto.R, auto.Exact)
	}
	rows := AutoRows(res)
	if len(rows) != 1 {
		t.Fatalf("%d auto rows", len(rows))
	}
	a := rows[0]
	if len(a.Fixed) != 2 || a.Fixed[0].K != 1 || a.Fixed[1].Exact != "no" || a.BestK != 1 || !near(a.BestSpeedup, 1.1, 1e-6) ||
		!near(a.Speedup.Median, 1.19, 1e-6) || !near(a.VsBest, 1.19/1.1, 1e-6) || !near(a.PlainTokS, 100, 1e-6) || !a.Goal() {
		t.Errorf("auto row %+v", a)
	}
	// The goal, either side of each bound.
	for _, c := range []struct {
		speedup, best float64
		plain, vsBest bool
	}{{0.97, 1.0, true, true}, {0.969, 0.9, false, true}, {1.2, 1.27, true, false}, {1.2, 1.26, true, true}} {
		r := res
		r.Configs = []ConfigResult{
			{Point: Point{Draft: DraftModel, K: 1, Batch: 1, Threads: 1}, Speedup: Summary{N: 1, Median: c.best}, Exact: "yes"},
			{Point: Point{Draft: DraftModel, K: 1, Auto: true, Batch: 1, Threads: 1}, Speedup: Summary{N: 1, Median: c.speedup}, Exact: "yes"},
		}
		a := AutoRows(r)[0]
		if a.MeetsPlain != c.plain || a.MeetsBest != c.vsBest || a.Goal() != (c.plain && c.vsBest) {
			t.Errorf("speedup %v best %v: meets plain %v best %v", c.speedup, c.best, a.MeetsPlain, a.MeetsBest)
		}
	}
}

func TestReportAuto(t *testing.T) {
	res := fakeResults(t)
	var rep, sum bytes.Buffer
	if err := res.WriteReport(&rep, nil); err != nil {
		t.Fatal(err)
	}
	r := rep.String()
	for _, want := range []string{"## Auto draft length against fixed k", "| configuration | plain tok/s | k 1 | k 2 | auto |",
		"| model auto≤2 t0 b1 th1 | 100.0 | 110.0 (1.10×) | 120.0 (1.46×) **inexact** | 119.0 | 1.19× (1.19–1.19) | k 1 (1.10×) | 1.08× | 0: 25%, 1: 12%, 2: 62% (1.38) | goal met |"} {
		if !strings.Contains(r, want) {
			t.Errorf("report lacks %q:\n%s", want, r)
		}
	}
	res.WriteSummary(&sum)
	if s := sum.String(); !strings.Contains(s, "auto: model auto≤2 t0 b1 th1: 1.19x plain, 1.08x the best fixed k (k 1 at 1.10x); mean k 1.38; goal met") {
		t.Errorf("summary:\n%s", s)
	}
}
