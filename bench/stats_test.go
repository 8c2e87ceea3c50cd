package bench

import (
	"math"
	"slices"
	"testing"
	"time"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// blocks5 is worked through by hand in the tests below:
//
//	drafted 3 accepted 3 | drafted 3 accepted 1 | drafted 3 accepted 0 | drafted 2 accepted 2 | no draft
var blocks5 = []Block{{3, 3}, {3, 1}, {3, 0}, {2, 2}, {0, 0}}

func TestAcceptanceRateAndAlpha(t *testing.T) {
	// 6 accepted of 11 drafted.
	if got := AcceptanceRate(blocks5); !near(got, 6.0/11, 1e-12) {
		t.Errorf("AcceptanceRate = %v, want 6/11", got)
	}
	// Examined: 3 (all accepted) + 2 (1 + the rejection) + 1 (the
	// rejection) + 2 (all accepted) = 8, of which 6 accepted.
	if got := Alpha(blocks5); !near(got, 0.75, 1e-12) {
		t.Errorf("Alpha = %v, want 0.75", got)
	}
	if AcceptanceRate(nil) != 0 || Alpha([]Block{{0, 0}}) != 0 {
		t.Error("no drafts: want 0")
	}
}

func TestMeanAcceptedLength(t *testing.T) {
	// 4 blocks with a draft, 6 accepted: 1 + 6/4.
	if got := MeanAcceptedLength(blocks5); !near(got, 2.5, 1e-12) {
		t.Errorf("MeanAcceptedLength = %v, want 2.5", got)
	}
	if got := MeanDrafted(blocks5); !near(got, 2.75, 1e-12) {
		t.Errorf("MeanDrafted = %v, want 2.75", got)
	}
	if MeanAcceptedLength(nil) != 1 || MeanDrafted(nil) != 0 {
		t.Error("no drafts: want 1 and 0")
	}
}

func TestHistogram(t *testing.T) {
	if got, want := Histogram(blocks5), []int{1, 1, 1, 1}; !slices.Equal(got, want) {
		t.Errorf("Histogram = %v, want %v", got, want)
	}
	if got, want := Histogram([]Block{{4, 0}, {4, 0}, {4, 4}, {2, 1}}), []int{2, 1, 0, 0, 1}; !slices.Equal(got, want) {
		t.Errorf("Histogram = %v, want %v", got, want)
	}
	if Histogram([]Block{{0, 0}}) != nil {
		t.Error("no drafts: want nil")
	}
}

func TestPerPosition(t *testing.T) {
	got := PerPosition(blocks5)
	want := []Position{
		// Position 0: proposed by all 4 drafts, examined in all, accepted by 3.
		{Proposed: 4, Reached: 4, Accepted: 3, Rate: 0.75, Conditional: 0.75},
		// Position 1: proposed by 4; reached by the 3 that accepted
		// position 0; accepted by {3,3} and {2,2}.
		{Proposed: 4, Reached: 3, Accepted: 2, Rate: 0.5, Conditional: 2.0 / 3},
		// Position 2: proposed by the three k=3 drafts; reached and
		// accepted only by {3,3}.
		{Proposed: 3, Reached: 1, Accepted: 1, Rate: 1.0 / 3, Conditional: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("PerPosition = %+v", got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Proposed != w.Proposed || g.Reached != w.Reached || g.Accepted != w.Accepted ||
			!near(g.Rate, w.Rate, 1e-12) || !near(g.Conditional, w.Conditional, 1e-12) {
			t.Errorf("position %d = %+v, want %+v", i, g, w)
		}
	}
}

func TestFitDecay(t *testing.T) {
	// Exactly geometric: any weights recover α.
	geo := []Position{{Proposed: 10, Rate: 0.5}, {Proposed: 7, Rate: 0.25}, {Proposed: 1, Rate: 0.125}}
	if got := FitDecay(geo); !near(got, 0.5, 1e-12) {
		t.Errorf("FitDecay(geometric 0.5) = %v", got)
	}
	// By hand: ln α = (1·ln 0.8 + 2·ln 0.5) / (1 + 4) → α = 0.7247797.
	two := []Position{{Proposed: 1, Rate: 0.8}, {Proposed: 1, Rate: 0.5}}
	if got := FitDecay(two); !near(got, 0.7247797, 1e-6) {
		t.Errorf("FitDecay = %v, want 0.7247797", got)
	}
	// Weights: position 1 counted twice: (2·ln 0.8 + 2·ln 0.5)/(2+4).
	two[0].Proposed = 2
	if got, want := FitDecay(two), math.Exp((2*math.Log(0.8)+2*math.Log(0.5))/6); !near(got, want, 1e-12) {
		t.Errorf("weighted FitDecay = %v, want %v", got, want)
	}
	// A zero rate is left out; nothing left gives 0.
	if got := FitDecay([]Position{{Proposed: 3, Rate: 0.6}, {Proposed: 3, Rate: 0}}); !near(got, 0.6, 1e-12) {
		t.Errorf("FitDecay with a zero = %v, want 0.6", got)
	}
	if FitDecay(nil) != 0 {
		t.Error("FitDecay(nil) != 0")
	}
}

func TestQuantileAndSummary(t *testing.T) {
	xs := []float64{4, 1, 3, 2}
	for _, c := range []struct{ q, want float64 }{{0, 1}, {0.5, 2.5}, {0.99, 3.97}, {1, 4}, {0.25, 1.75}} {
		if got := Quantile(xs, c.q); !near(got, c.want, 1e-12) {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if !slices.Equal(xs, []float64{4, 1, 3, 2}) {
		t.Error("Quantile sorted its argument")
	}
	if !math.IsNaN(Quantile(nil, 0.5)) || Quantile([]float64{5}, 0.99) != 5 {
		t.Error("Quantile of none or one")
	}
	s := Summarize([]float64{3, 1, 2})
	if s.N != 3 || s.Median != 2 || s.Min != 1 || s.Max != 3 || s.Spread() != 1 {
		t.Errorf("Summarize = %+v, spread %v", s, s.Spread())
	}
	if e := Summarize(nil); e.N != 0 || !math.IsNaN(e.Median) || !math.IsNaN(e.Spread()) {
		t.Errorf("Summarize(nil) = %+v", e)
	}
	ds := []time.Duration{10 * time.Millisecond, 30 * time.Millisecond, 20 * time.Millisecond}
	if got := DurationQuantile(ds, 0.5); got != 20*time.Millisecond {
		t.Errorf("DurationQuantile = %v", got)
	}
	if got := DurationQuantile(ds, 0.99); got != 29800*time.Microsecond {
		t.Errorf("DurationQuantile p99 = %v, want 29.8ms", got)
	}
}

func TestDrift(t *testing.T) {
	// Median 100; deviations 0, 4%, 5%, 20%, 11%.
	flags, worst := Drift([]float64{100, 104, 95, 120, 89}, 0.10)
	if want := []bool{false, false, false, true, true}; !slices.Equal(flags, want) {
		t.Errorf("Drift flags = %v, want %v", flags, want)
	}
	if !near(worst, 0.20, 1e-12) {
		t.Errorf("worst = %v, want 0.20", worst)
	}
	// Exactly at the tolerance is not drift.
	if flags, _ := Drift([]float64{100, 110, 90}, 0.10); slices.Contains(flags, true) {
		t.Errorf("10%% flagged at tolerance 10%%: %v", flags)
	}
	if flags, worst := Drift(nil, 0.1); flags != nil || worst != 0 {
		t.Error("Drift(nil)")
	}
}

func TestPredicted(t *testing.T) {
	// α 0.5, k 2: E = (1 − 0.125)/0.5 = 1.75 tokens per step.
	for _, c := range []struct {
		alpha float64
		k     int
		c     float64
		want  float64
	}{
		{0.5, 2, 0, 1.75},
		{0.5, 2, 0.25, 1.75 / 1.5},
		{1, 3, 0.1, 4 / 1.3},
		{0, 4, 0.1, 1 / 1.4},
	} {
		if got := Predicted(c.alpha, c.k, c.c); !near(got, c.want, 1e-12) {
			t.Errorf("Predicted(%v, %d, %v) = %v, want %v", c.alpha, c.k, c.c, got, c.want)
		}
	}
	// With a (k+1)-pass of 1.2 one-token passes: 1.75 / (2·0.25 + 1.2).
	if got := PredictedPass(0.5, 2, 0.25, 1.2); !near(got, 1.75/1.7, 1e-12) {
		t.Errorf("PredictedPass = %v, want %v", got, 1.75/1.7)
	}
	if !math.IsNaN(PredictedPass(0.5, 2, 0.25, 0)) {
		t.Error("PredictedPass without r")
	}
}

func TestKnee(t *testing.T) {
	ks := []int{1, 2, 4, 8}
	// Best 1.6 at k 4; 1.5 at k 2 is more than 5% below (1.52).
	if got := Knee(ks, []float64{1.2, 1.5, 1.6, 1.58}, 0.05); got != 4 {
		t.Errorf("Knee = %d, want 4", got)
	}
	if got := Knee(ks, []float64{1.2, 1.55, 1.6, 1.5}, 0.05); got != 2 {
		t.Errorf("Knee = %d, want 2", got)
	}
	if got := Knee(ks, []float64{math.NaN(), 1, 0.9, 0.8}, 0.05); got != 2 {
		t.Errorf("Knee with NaN = %d, want 2", got)
	}
	if Knee(nil, nil, 0.05) != -1 {
		t.Error("Knee(nil)")
	}
}

func TestGridPoints(t *testing.T) {
	g := Grid{K: []int{1, 4}, PMin: []float64{0, 0.3}, Adaptive: true, Drafts: []string{DraftModel, DraftNGram},
		Temps: []float64{0}, Batches: []int{1}, Threads: []int{1}}
	var got []string
	for _, p := range g.Points() {
		got = append(got, p.String())
	}
	want := []string{
		"model k1 t0 b1 th1", "model k4 t0 b1 th1", "model k4 adaptive t0 b1 th1",
		"model k1 p0.3 t0 b1 th1", "model k4 p0.3 t0 b1 th1", "model k4 p0.3 adaptive t0 b1 th1",
		// The n-gram draft has no p_min: one set, not two.
		"ngram k1 t0 b1 th1", "ngram k4 t0 b1 th1", "ngram k4 adaptive t0 b1 th1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Points:\n got %q\nwant %q", got, want)
	}
	for _, bad := range []Grid{
		{K: []int{0}, Drafts: []string{DraftModel}, Temps: []float64{0}, Batches: []int{1}, Threads: []int{1}},
		{K: []int{1}, Drafts: []string{"tree"}, Temps: []float64{0}, Batches: []int{1}, Threads: []int{1}},
		{K: []int{1}, PMin: []float64{1}, Drafts: []string{DraftModel}, Temps: []float64{0}, Batches: []int{1}, Threads: []int{1}},
		{K: []int{1}, Drafts: []string{DraftModel}, Temps: []float64{-1}, Batches: []int{1}, Threads: []int{1}},
		{K: []int{1}, Drafts: []string{DraftModel}, Temps: []float64{0}, Batches: []int{0}, Threads: []int{1}},
		{K: []int{1}, Drafts: []string{DraftModel}, Temps: []float64{0}, Batches: []int{1}},
	} {
		if bad.Check() == nil {
			t.Errorf("%+v passed Check", bad)
		}
	}
}
