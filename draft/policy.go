package draft

import "math"

// Policy chooses the draft length of each step.
type Policy struct {
	K        int     // fixed draft length, or the largest when Adaptive or Auto
	Adaptive bool    // choose k per sequence from its recent acceptance
	Cost     float64 // c: a draft token's cost relative to a target pass (Adaptive; Auto's prior)
	// Auto chooses k in [0, K] per sequence and step from measured costs
	// and acceptance (Choose; auto.go), plain decoding included. It takes
	// precedence over Adaptive.
	Auto bool
}

// Speedup is the expected number of tokens per unit of target time of
// speculative decoding with per-token acceptance α, draft length k and
// relative draft cost c (Leviathan et al. 2023, eq. 1 and theorem 3.8):
// (1−α^(k+1)) / ((1−α)(kc+1)).
func Speedup(alpha float64, k int, c float64) float64 {
	var tokens float64
	if alpha >= 1 {
		tokens = float64(k + 1)
	} else {
		tokens = (1 - math.Pow(alpha, float64(k+1))) / (1 - alpha)
	}
	return tokens / (float64(k)*c + 1)
}

// Acceptance tracks one sequence's recent per-token acceptance α with
// exponentially decaying counts of draft tokens examined and accepted.
// The zero value starts from a prior of α = 0.5 worth two observations.
type Acceptance struct {
	acc, seen float64
	init      bool
}

const decay = 0.9

// Update records a block of k draft tokens of which a were accepted: the
// target examined a tokens that passed, and one that failed if a < k.
func (s *Acceptance) Update(k, a int) {
	if !s.init {
		s.acc, s.seen, s.init = 1, 2, true
	}
	if k == 0 {
		return
	}
	seen := a
	if a < k {
		seen++
	}
	s.acc = decay*s.acc + float64(a)
	s.seen = decay*s.seen + float64(seen)
}

// Alpha is the current estimate of the per-token acceptance rate.
func (s *Acceptance) Alpha() float64 {
	if !s.init || s.seen == 0 {
		return 0.5
	}
	return s.acc / s.seen
}

// Next returns the draft length for the next step of a sequence whose
// acceptance is s: K when fixed, else the k in [1, K] with the largest
// Speedup at the estimated α. Next ignores Auto: an Auto policy's steps
// are chosen by Choose.
func (p Policy) Next(s *Acceptance) int {
	if p.K <= 0 {
		return 0
	}
	if !p.Adaptive {
		return p.K
	}
	alpha := min(s.Alpha(), 0.999)
	best, bestK := 0.0, 1
	for k := 1; k <= p.K; k++ {
		if v := Speedup(alpha, k, p.Cost); v > best+1e-12 {
			best, bestK = v, k
		}
	}
	return bestK
}
