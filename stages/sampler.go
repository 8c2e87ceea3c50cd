package stages

import (
	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/sample"
)

// sampler adapts sample to backend.Sampler: the filtered distribution of a
// request's parameters and a seeded random stream.
type sampler struct {
	p sample.Params
	s *sample.Sampler
}

func (a *sampler) Probs(dst, logits []float32) { sample.Probs(dst, logits, a.p) }
func (a *sampler) Float() float64              { return a.s.Float() }
func (a *sampler) PeekFloat(n int) float64     { return a.s.PeekFloat(n) }
func (a *sampler) FloatAt(i uint64) float64    { return a.s.FloatAt(i) }

// NewSampler is the Config.NewSampler of the sample package: stream 0
// (verification) is seeded with the request's seed, other streams (the
// draft's) with a seed derived from it, so the two never share numbers.
func NewSampler(p sample.Params, stream uint64) backend.Sampler {
	sp := p
	if stream != 0 {
		sp.Seed = p.Seed ^ (0x9e3779b97f4a7c15 * stream) ^ 0x5bd1e995
	}
	return &sampler{p: sp, s: sample.New(sp)}
}
