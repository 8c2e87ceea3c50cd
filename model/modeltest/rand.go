package modeltest

import "math"

// Rand is a small deterministic generator (SplitMix64) with Gaussian draws by
// the Box–Muller transform. Its sequence is fixed by the seed on every
// platform and Go version, unlike math/rand's, so generated models never
// change under the tests that compare them.
type Rand struct {
	state   uint64
	spare   float64
	hasNext bool
}

// NewRand returns a generator seeded with seed.
func NewRand(seed uint64) *Rand { return &Rand{state: seed} }

// Uint64 returns the next 64 random bits (SplitMix64).
func (r *Rand) Uint64() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Float64 returns a uniform draw in (0, 1): never 0, so its logarithm is finite.
func (r *Rand) Float64() float64 {
	return (float64(r.Uint64()>>11) + 0.5) / (1 << 53)
}

// Norm returns a standard normal draw. Box–Muller makes two at a time; the
// second is kept for the next call.
func (r *Rand) Norm() float64 {
	if r.hasNext {
		r.hasNext = false
		return r.spare
	}
	u1, u2 := r.Float64(), r.Float64()
	rad := math.Sqrt(-2 * math.Log(u1))
	s, c := math.Sincos(2 * math.Pi * u2)
	r.spare, r.hasNext = rad*s, true
	return rad * c
}
