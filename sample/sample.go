// Package sample turns logits into tokens: greedy argmax, and seeded
// sampling with temperature, top-k and top-p.
//
// The filters apply in llama.cpp's default sampler-chain order for these
// three: top-k on the logits, then top-p on the softmax of the surviving
// (unscaled) logits, then temperature, then the softmax that is sampled
// from. Probs returns exactly that final distribution, so a speculative
// verifier can compare target and draft probabilities p(x) and q(x) with the
// same numbers the Sampler draws from. Temperature 0 (or below) is greedy:
// a one-hot distribution on the argmax (lowest id on ties).
//
// Random numbers come from SplitMix64 and exponentials from glibc's expf
// as internal/libm computes it in Go, so a seed gives the same tokens on
// every platform.
package sample

import (
	"cmp"
	"math"
	"slices"
	"sync"

	"github.com/specd-dev/specd/internal/libm"
)

// Params configure sampling.
type Params struct {
	Temp float32 // temperature; <= 0 means greedy
	TopK int     // keep the TopK most likely tokens; <= 0 means all
	TopP float32 // keep the smallest set with probability >= TopP; <= 0 or >= 1 means all
	Seed uint64  // RNG seed
}

// Greedy returns the index of the largest logit, the lowest on ties (NaNs
// are never chosen unless all are NaN, then 0). It returns -1 for no logits.
func Greedy(logits []float32) int {
	if len(logits) == 0 {
		return -1
	}
	best := 0
	for i, l := range logits {
		if l > logits[best] || (logits[best] != logits[best] && l == l) {
			best = i
		}
	}
	return best
}

// buffers hold a Probs call's working storage: the candidate indices and,
// for top-p over every token, each token's bucket and exponential
// (nucleus).
type buffers struct {
	cand   []int32
	bucket []uint8
	exps   []float32
}

// scratch holds buffers between calls; Probs takes one from the pool so
// that steady-state sampling does not allocate.
var scratch = sync.Pool{New: func() any { return new(buffers) }}

// Probs writes into dst (len(dst) >= len(logits)) the distribution that a
// Sampler with parameters p draws from for these logits: zero outside the
// tokens kept by top-k and top-p, softmax(logit/Temp) over the kept ones
// (float32, as llama.cpp). p.Seed is ignored.
func Probs(dst, logits []float32, p Params) {
	n := len(logits)
	dst = dst[:n]
	clear(dst)
	if n == 0 {
		return
	}
	if !(p.Temp > 0) {
		dst[Greedy(logits)] = 1
		return
	}
	if (p.TopK <= 0 || p.TopK >= n) && (p.TopP <= 0 || p.TopP >= 1) {
		softmaxAll(dst, logits, p.Temp) // nothing filtered
		return
	}
	b := scratch.Get().(*buffers)
	defer scratch.Put(b)
	softmaxOver(dst, logits, kept(b, logits, p), p.Temp)
}

// softmaxOver writes softmax(logits/temp) over the candidates cand into
// their entries of dst.
func softmaxOver(dst, logits []float32, cand []int32, temp float32) {
	maxl := float32(math.Inf(-1))
	for _, i := range cand {
		maxl = max(maxl, logits[i]/temp)
	}
	var sum float32
	for _, i := range cand {
		e := libm.Expf(logits[i]/temp - maxl)
		dst[i] = e
		sum += e
	}
	for _, i := range cand {
		dst[i] /= sum
	}
}

// softmaxAll is softmaxOver every token, bit for bit (TestSoftmaxDense),
// without the candidate list: the largest logit is scaled once (x ↦
// x/temp is monotonic in float32 as in the reals, so the largest scaled
// logit is the largest logit scaled).
func softmaxAll(dst, logits []float32, temp float32) {
	maxl := float32(math.Inf(-1))
	for _, l := range logits {
		maxl = max(maxl, l)
	}
	maxl /= temp
	// expf(l/temp − maxl) and their sum in token order, then each
	// divided by the sum: libm's vector forms, the loops' bits.
	libm.DivAll(dst, libm.ExpSum(dst, logits, temp, maxl))
}

// kept returns the indices surviving top-k and top-p, using b's storage.
func kept(b *buffers, logits []float32, p Params) []int32 {
	n := len(logits)
	cand := b.cand[:0]
	if cap(cand) < n {
		cand = make([]int32, 0, n)
		b.cand = cand
	}
	// Candidates in order of descending logit, the lower id first on ties
	// (cmp.Compare puts NaN below every number): a total order, so the
	// top k and their order are those of a sort of every token.
	byLogit := func(a, b int32) int {
		if c := cmp.Compare(logits[b], logits[a]); c != 0 { // descending
			return c
		}
		return cmp.Compare(a, b)
	}
	topP := p.TopP > 0 && p.TopP < 1
	if p.TopK > 0 && p.TopK < n {
		cand = topK(cand, n, p.TopK, byLogit)
		if topP && len(cand) > 1 {
			cand = prefix(cand, logits, p.TopP)
		}
		return cand
	}
	if topP && n > 1 {
		if len(b.bucket) < n {
			b.bucket = make([]uint8, n)
		}
		if len(b.exps) < n {
			b.exps = make([]float32, n)
		}
		if c, ok := nucleus(cand, b.bucket[:n], b.exps[:n], logits, p.TopP, byLogit); ok {
			return c
		}
	}
	for i := range n {
		cand = append(cand, int32(i))
	}
	if topP && n > 1 {
		// A logit that is NaN or +Inf, or every logit -Inf: the
		// softmax is not a distribution; the nucleus is what the plain
		// rule, sorting every token, finds.
		slices.SortFunc(cand, byLogit)
		cand = prefix(cand, logits, p.TopP)
	}
	return cand
}

// prefix returns the shortest prefix of cand (in order of descending
// logit) whose cumulative probability reaches topP, all of cand if none
// does: the softmax of the logits, its denominator summed over cand in
// cand's order (as llama.cpp sums it over candidates that top-k sorted),
// each probability added in that order.
func prefix(cand []int32, logits []float32, topP float32) []int32 {
	maxl := logits[cand[0]]
	var sum float32
	for _, i := range cand {
		sum += libm.Expf(logits[i] - maxl)
	}
	var cum float32
	k, _ := cumulate(&cum, cand, func(i int32) float32 { return libm.Expf(logits[i] - maxl) }, topP, sum)
	return cand[:k]
}

// cumulate adds to *cum the probabilities term(i)/sum of cand in order and
// returns how many it took to reach topP, and whether it did.
func cumulate(cum *float32, cand []int32, term func(int32) float32, topP, sum float32) (int, bool) {
	for k, i := range cand {
		*cum += term(i) / sum
		if *cum >= topP {
			return k + 1, true
		}
	}
	return len(cand), false
}

// Nucleus buckets: a token's bucket is ⌊(max − logit)·nucleusScale⌋, the
// last one taking everything 31.75 and more below the largest logit.
const (
	nucleusBuckets = 128
	nucleusScale   = 4 // buckets per unit of logit
)

// nucleus appends to cand (empty) the top-p nucleus of every token: the
// shortest run of tokens in order of descending logit (before) whose
// probabilities, the softmax of the logits added in that order, reach
// topP. The softmax's denominator is summed in token order, as llama.cpp's
// top-p sums it over candidates no top-k sorted. Without sorting every
// token: the softmax's terms (into es) and their sum come first, then one
// pass files each token, by how far its logit lies below the largest, into
// a bucket (bucket[i]), adding its term to the bucket's mass; the buckets
// from the top whose mass reaches topP hold a
// prefix of the order (a bucket takes every token of equal logit), which
// is sorted and cumulated, and where rounding leaves the cumulative short,
// the next bucket's tokens, all below these, are sorted and cumulated
// after them. It returns false, with nothing appended, where a logit is
// NaN or +Inf or every logit is -Inf (the caller then sorts every token).
func nucleus(cand []int32, bucket []uint8, es, logits []float32, topP float32, before func(a, b int32) int) ([]int32, bool) {
	maxl := float32(math.Inf(-1))
	for _, l := range logits {
		maxl = max(maxl, l) // NaN if any is
	}
	if !(maxl < float32(math.Inf(1)) && maxl > float32(math.Inf(-1))) {
		return cand, false // NaN, +Inf, or every logit -Inf
	}
	var mass [nucleusBuckets]float32
	sum := libm.ExpSum(es, logits, 1, maxl) // l/1 is l, bit for bit
	for i, l := range logits {
		e := es[i]
		b := nucleusBuckets - 1
		if d := (maxl - l) * nucleusScale; d < nucleusBuckets-1 {
			b = int(d) // d ≥ 0: (maxl − l) is monotone in l, as is ⌊·⌋
		}
		bucket[i] = uint8(b)
		mass[b] += e
	}
	// The first buckets whose mass reaches topP (the bucket sums round
	// differently from the cumulative, which the loop below makes good).
	top, target := 0, topP*sum
	for acc := mass[0]; acc < target && top < nucleusBuckets-1; {
		top++
		acc += mass[top]
	}
	var cum float32
	for lo := 0; ; {
		start := len(cand)
		for i, b := range bucket {
			if int(b) >= lo && int(b) <= top {
				cand = append(cand, int32(i))
			}
		}
		slices.SortFunc(cand[start:], before)
		if k, ok := cumulate(&cum, cand[start:], func(i int32) float32 { return es[i] }, topP, sum); ok || top == nucleusBuckets-1 {
			return cand[:start+k], true
		}
		lo, top = top+1, top+1
	}
}

// topK appends to h (empty) the k tokens of 0..n-1 first in the order
// before (k < n), in that order: a heap of the k first seen so far, its
// root the last of them in that order, which a token replaces when it
// comes before it, then a sort of those k. Each of the n tokens costs one
// comparison with the root unless it enters the heap.
func topK(h []int32, n, k int, before func(a, b int32) int) []int32 {
	down := func(i int) { // restore the heap below i
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && before(h[c], h[c+1]) < 0 {
				c++ // the later child
			}
			if before(h[i], h[c]) >= 0 {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for t := range int32(n) {
		switch {
		case len(h) < k:
			h = append(h, t)
			for i := len(h) - 1; i > 0; { // up to its place
				parent := (i - 1) / 2
				if before(h[parent], h[i]) >= 0 {
					break
				}
				h[parent], h[i] = h[i], h[parent]
				i = parent
			}
		case before(t, h[0]) < 0:
			h[0] = t
			down(0)
		}
	}
	slices.SortFunc(h, before)
	return h
}

// Sampler draws tokens from logits with fixed parameters and its own RNG.
// It is not safe for concurrent use.
type Sampler struct {
	p     Params
	rng   uint64
	probs []float32
}

// New returns a sampler with parameters p, its RNG seeded with p.Seed.
func New(p Params) *Sampler { return &Sampler{p: p, rng: p.Seed} }

// Params returns the sampler's parameters.
func (s *Sampler) Params() Params { return s.p }

// Uint64 returns the next value of the sampler's SplitMix64 generator.
func (s *Sampler) Uint64() uint64 {
	s.rng += splitMixStep
	return splitMix(s.rng)
}

// splitMix is SplitMix64's output for the state z.
func splitMix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Float returns a uniform float64 in [0, 1) from the sampler's RNG (53
// random bits), for acceptance tests in speculative decoding.
func (s *Sampler) Float() float64 {
	return floatOf(s.Uint64())
}

// floatOf is the uniform float64 in [0, 1) of a generator output's top 53
// bits.
func floatOf(u uint64) float64 { return float64(u>>11) / (1 << 53) }

// splitMixStep is SplitMix64's increment: each number advances the state by it.
const splitMixStep = 0x9e3779b97f4a7c15

// PeekFloat returns what the n-th next call of Float (n ≥ 1) will return,
// without advancing the RNG: SplitMix64's state after n steps is its state
// plus n increments.
func (s *Sampler) PeekFloat(n int) float64 {
	return floatOf(splitMix(s.rng + uint64(n)*splitMixStep))
}

// FloatAt returns the i-th number (from 0) that Float returns from the
// seed on, without drawing: whatever has been drawn, the same number for
// the same seed and i (backend.Indexed).
func (s *Sampler) FloatAt(i uint64) float64 {
	return floatOf(splitMix(s.p.Seed + (i+1)*splitMixStep))
}

// Sample returns a token drawn from Probs(logits, params). Greedy
// parameters return the argmax without consuming random numbers.
func (s *Sampler) Sample(logits []float32) int {
	if !(s.p.Temp > 0) {
		return Greedy(logits)
	}
	if cap(s.probs) < len(logits) {
		s.probs = make([]float32, len(logits))
	}
	probs := s.probs[:len(logits)]
	Probs(probs, logits, s.p)
	return s.Draw(probs)
}

// Draw returns an index drawn from the distribution probs with one random
// number of s (DrawFrom); -1 if all are 0.
func (s *Sampler) Draw(probs []float32) int { return DrawFrom(probs, s.Float()) }

// DrawFrom returns an index drawn from the non-negative weights w
// (normalised or not) with the uniform number u in [0, 1): the first index
// at which the running sum of positive weights exceeds u·total. It returns
// the last index with a positive weight if rounding leaves the sum short,
// and -1 if no weight is positive. It is the one categorical draw of
// specd: sampling, acceptance and drafting all use it.
func DrawFrom(w []float32, u float64) int {
	var total float64
	last := -1
	for i, v := range w {
		if v > 0 {
			total += float64(v)
			last = i
		}
	}
	if last < 0 {
		return -1
	}
	target := u * total
	var cum float64
	for i, v := range w {
		if v > 0 {
			cum += float64(v)
			if target < cum {
				return i
			}
		}
	}
	return last
}
