package bench

// The statistics of a sweep, as pure functions of what was measured, each
// with hand-computed expectations in stats_test.go.

import (
	"math"
	"slices"
	"time"

	"github.com/specd-dev/specd/draft"
)

var nan = math.NaN()

// Block is one verified block as its chunk reports it: the draft tokens
// proposed and how many of them the target accepted.
type Block struct {
	Drafted, Accepted int
}

// AcceptanceRate is accepted / drafted draft tokens over blocks (vLLM's
// "draft acceptance rate"); 0 without draft tokens.
func AcceptanceRate(blocks []Block) float64 {
	d, a := 0, 0
	for _, b := range blocks {
		d += b.Drafted
		a += b.Accepted
	}
	if d == 0 {
		return 0
	}
	return float64(a) / float64(d)
}

// Alpha is the per-token acceptance probability α of Leviathan et al.,
// estimated by maximum likelihood from blocks: each block of k drafted
// tokens with a accepted is a accepted trials followed, if a < k, by one
// rejected trial (the tokens after the first rejection are never
// examined), so α = Σa / Σ(a + [a < k]). Accepted/drafted instead
// underestimates α, since it counts unexamined tokens as rejected. 0
// without examined tokens.
func Alpha(blocks []Block) float64 {
	acc, seen := 0, 0
	for _, b := range blocks {
		if b.Drafted == 0 {
			continue
		}
		acc += b.Accepted
		seen += b.Accepted
		if b.Accepted < b.Drafted {
			seen++
		}
	}
	if seen == 0 {
		return 0
	}
	return float64(acc) / float64(seen)
}

// MeanAcceptedLength is the mean number of tokens a drafted block commits:
// 1 + accepted draft tokens per block with a draft (the target's own token
// included, as in stages.Snapshot.MeanAcceptedLength). 1 without drafts.
func MeanAcceptedLength(blocks []Block) float64 {
	n, a := 0, 0
	for _, b := range blocks {
		if b.Drafted > 0 {
			n++
			a += b.Accepted
		}
	}
	if n == 0 {
		return 1
	}
	return 1 + float64(a)/float64(n)
}

// MeanDrafted is the mean draft length of blocks with a draft (k for a
// fixed draft length; less with p_min, adaptive k or the n-gram draft).
func MeanDrafted(blocks []Block) float64 {
	n, d := 0, 0
	for _, b := range blocks {
		if b.Drafted > 0 {
			n++
			d += b.Drafted
		}
	}
	if n == 0 {
		return 0
	}
	return float64(d) / float64(n)
}

// Histogram counts blocks with a draft by accepted length: h[j] is the
// number of blocks that accepted exactly j draft tokens, j = 0..k, where k
// is the longest draft (h has k+1 entries; nil without drafts).
func Histogram(blocks []Block) []int {
	k := -1
	for _, b := range blocks {
		if b.Drafted > 0 {
			k = max(k, b.Drafted)
		}
	}
	if k < 0 {
		return nil
	}
	h := make([]int, k+1)
	for _, b := range blocks {
		if b.Drafted > 0 {
			h[b.Accepted]++
		}
	}
	return h
}

// Position is the acceptance of one draft position i (0-based) over many
// blocks.
type Position struct {
	Proposed int `json:"proposed"` // blocks that drafted a token at i (draft length > i)
	Reached  int `json:"reached"`  // of those, blocks whose tokens before i were all accepted
	Accepted int `json:"accepted"` // blocks that accepted the token at i (accepted length > i)
	// Rate is Accepted/Proposed: the chance a proposed token at i ends up
	// accepted (α^(i+1) when each token is accepted with probability α).
	Rate float64 `json:"rate"`
	// Conditional is Accepted/Reached: the chance the target accepts the
	// token at i once it examines it (α at every i in the same model).
	Conditional float64 `json:"conditional"`
}

// PerPosition returns the acceptance of each draft position 0..k-1, k the
// longest draft of blocks.
func PerPosition(blocks []Block) []Position {
	k := 0
	for _, b := range blocks {
		k = max(k, b.Drafted)
	}
	ps := make([]Position, k)
	for _, b := range blocks {
		for i := 0; i < b.Drafted; i++ {
			ps[i].Proposed++
			if b.Accepted >= i {
				ps[i].Reached++
			}
			if b.Accepted > i {
				ps[i].Accepted++
			}
		}
	}
	for i := range ps {
		p := &ps[i]
		if p.Proposed > 0 {
			p.Rate = float64(p.Accepted) / float64(p.Proposed)
		}
		if p.Reached > 0 {
			p.Conditional = float64(p.Accepted) / float64(p.Reached)
		}
	}
	return ps
}

// FitDecay fits Rate_i ≈ α^(i+1), the geometric decay of acceptance with
// draft position when every token is accepted with probability α, by
// least squares on the logarithms through the origin, weighting each
// position by its proposed count: ln α = Σ wᵢ(i+1) ln rᵢ / Σ wᵢ(i+1)².
// Positions with no proposal or a rate of 0 are left out. 0 if none is
// left.
func FitDecay(ps []Position) float64 {
	num, den := 0.0, 0.0
	for i, p := range ps {
		if p.Proposed == 0 || p.Rate <= 0 {
			continue
		}
		x, w := float64(i+1), float64(p.Proposed)
		num += w * x * math.Log(p.Rate)
		den += w * x * x
	}
	if den == 0 {
		return 0
	}
	return math.Exp(num / den)
}

// Quantile is the q-quantile of xs (0 ≤ q ≤ 1) with linear interpolation
// between order statistics (Hyndman and Fan's type 7, numpy's default);
// NaN for an empty xs. xs is not modified.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// Summary is the median and spread of repeated measurements.
type Summary struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Summarize returns the median, minimum and maximum of xs (NaN for all
// three when xs is empty).
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		nan := math.NaN()
		return Summary{Median: nan, Min: nan, Max: nan}
	}
	return Summary{N: len(xs), Median: Quantile(xs, 0.5), Min: slices.Min(xs), Max: slices.Max(xs)}
}

// Spread is (Max−Min)/Median: the relative width of the repeats.
func (s Summary) Spread() float64 {
	if s.N == 0 || s.Median == 0 {
		return math.NaN()
	}
	return (s.Max - s.Min) / s.Median
}

// DurationQuantile is Quantile over durations (0 for none).
func DurationQuantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return time.Duration(math.Round(Quantile(xs, q)))
}

// Drift flags the measurements of one baseline that are more than tol
// (0.10 for 10%) above or below their median, and returns the largest
// relative deviation from the median.
func Drift(xs []float64, tol float64) (flags []bool, worst float64) {
	if len(xs) == 0 {
		return nil, 0
	}
	m := Quantile(xs, 0.5)
	flags = make([]bool, len(xs))
	for i, x := range xs {
		d := math.Abs(x-m) / m
		flags[i] = d > tol
		worst = max(worst, d)
	}
	return flags, worst
}

// Predicted is the speedup of speculative decoding over plain decoding
// that Leviathan et al. (2023, theorem 3.8) predict for per-token
// acceptance alpha, draft length k and draft/target cost ratio c:
// (1−α^(k+1)) / ((1−α)(kc+1)).
func Predicted(alpha float64, k int, c float64) float64 { return draft.Speedup(alpha, k, c) }

// PredictedPass is Predicted with the measured cost r of the target's
// (k+1)-token verification pass in units of a 1-token pass in place of
// the formula's 1: E / (kc + r), E = (1−α^(k+1))/(1−α) the expected
// tokens per step.
func PredictedPass(alpha float64, k int, c, r float64) float64 {
	if r <= 0 {
		return math.NaN()
	}
	e := draft.Speedup(alpha, k, 0)
	return e / (float64(k)*c + r)
}

// Knee is the smallest k of a series whose speedup is within frac (0.05)
// of the series' best: past it a longer draft buys little. ks and speedup
// are parallel, ks ascending. It returns -1 for an empty series.
func Knee(ks []int, speedup []float64, frac float64) int {
	if len(ks) == 0 {
		return -1
	}
	best := math.Inf(-1)
	for _, s := range speedup {
		if !math.IsNaN(s) {
			best = max(best, s)
		}
	}
	for i, s := range speedup {
		if s >= best*(1-frac) {
			return ks[i]
		}
	}
	return ks[len(ks)-1]
}

// MeanChosen is the mean draft length of a histogram of chosen lengths
// (h[k]: steps that drafted k tokens, 0 for a plain step); NaN when empty.
func MeanChosen(h []int) float64 {
	n, s := 0, 0
	for k, c := range h {
		n += c
		s += k * c
	}
	if n == 0 {
		return nan
	}
	return float64(s) / float64(n)
}
