package bench

import (
	"math"
	"slices"
)

// The goal of the auto draft-length policy (issue 17): never slower than
// plain decoding by more than 3%, and within 5% of the best fixed k of
// the same configuration (or faster).
const (
	AutoGoalPlain = 0.97 // auto speedup over plain decoding, at least
	AutoGoalBest  = 0.95 // auto speedup over the best fixed k's, at least
)

// AutoRow compares one auto configuration with plain decoding and with
// every fixed k of the same series (draft, p_min, temperature, batch,
// threads) in the same sweep.
type AutoRow struct {
	Point     Point   // the auto configuration
	Label     string  // its label
	PlainTokS float64 // median of its series' plain baseline runs
	AutoTokS  Summary
	// Speedup is auto over plain decoding (median of its A/B pairs).
	Speedup Summary
	Fixed   []AutoFixed // ascending k
	// BestK is the fixed k with the highest median speedup among those not
	// found inexact (-1 if none); VsBest is Speedup.Median over its.
	BestK       int
	BestSpeedup float64
	VsBest      float64
	KChosen     []int // the policy's choices, as ConfigResult.KChosen
	MeanK       float64
	// MeetsPlain: Speedup.Median >= AutoGoalPlain; MeetsBest: VsBest >=
	// AutoGoalBest (false without a fixed k to compare); Exact as the
	// configuration's.
	MeetsPlain, MeetsBest bool
	Exact                 string
}

// Goal reports whether the row met both goals and its output was not
// found inexact.
func (a AutoRow) Goal() bool { return a.MeetsPlain && a.MeetsBest && a.Exact != "no" }

// AutoFixed is one fixed draft length beside an auto configuration.
type AutoFixed struct {
	K       int
	TokS    Summary
	Speedup Summary
	Exact   string
}

// AutoRows returns one AutoRow per auto configuration of res, in order.
func AutoRows(res *Results) []AutoRow {
	var out []AutoRow
	for _, c := range res.Configs {
		if !c.Auto {
			continue
		}
		a := AutoRow{Point: c.Point, Label: c.Label, AutoTokS: c.TokS, Speedup: c.Speedup, BestK: -1,
			BestSpeedup: math.NaN(), VsBest: math.NaN(), KChosen: c.KChosen, MeanK: float64(c.MeanK), Exact: c.Exact}
		a.PlainTokS = c.BaselineTokS.Median
		for _, b := range res.Baselines {
			if b.Point == c.Point.Baseline() {
				a.PlainTokS = b.Summary.Median
			}
		}
		for _, f := range res.Configs {
			if f.Auto || f.Adaptive || f.Point.Fixed() != c.Point.Fixed() {
				continue
			}
			a.Fixed = append(a.Fixed, AutoFixed{K: f.K, TokS: f.TokS, Speedup: f.Speedup, Exact: f.Exact})
			if f.Exact != "no" && !math.IsNaN(f.Speedup.Median) && (a.BestK < 0 || f.Speedup.Median > a.BestSpeedup) {
				a.BestK, a.BestSpeedup = f.K, f.Speedup.Median
			}
		}
		slices.SortFunc(a.Fixed, func(x, y AutoFixed) int { return x.K - y.K })
		a.MeetsPlain = a.Speedup.Median >= AutoGoalPlain
		if a.BestK >= 0 {
			a.VsBest = a.Speedup.Median / a.BestSpeedup
			a.MeetsBest = a.VsBest >= AutoGoalBest
		}
		out = append(out, a)
	}
	return out
}
