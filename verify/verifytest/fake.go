// Package verifytest provides a fake model backend for tests of the
// speculative pipeline: deterministic pseudo-random logits computed from the
// tokens the backend's own KV cache holds, so any rollback mistake (a stale
// or missing cache entry) changes the output.
package verifytest

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/kvsync"
	"github.com/specd-dev/specd/sample"
)

// Term is one component of a fake model's logits: Scale times a hash of
// (Seed, context) mapped to [-1, 1) per vocabulary entry.
type Term struct {
	Seed  uint64
	Scale float32
}

// Fake is a model whose logits at (seq, pos) depend only on the tokens at
// positions [pos-Window+1, pos] of seq in its cache (all positions if
// Window is 0). Two Fakes with the same first Term and a small second Term
// agree on most argmaxes: a draft with partial acceptance.
type Fake struct {
	V      int
	Batch  int
	Window int
	Terms  []Term
	KV     *kvsync.Cache

	Calls, Tokens int // forward passes and tokens processed
}

// NewFake returns a fake with vocab v, seqs slots of maxPos positions and
// batches of at most maxBatch tokens.
func NewFake(v, seqs, maxPos, maxBatch, window int, terms ...Term) *Fake {
	kv, err := kvsync.New(kvsync.Config{Layers: 1, KVHeads: 1, HeadDim: 1, Seqs: seqs, MaxPos: maxPos, F32: true})
	if err != nil {
		panic(err)
	}
	if len(terms) == 0 {
		terms = []Term{{Seed: 1, Scale: 1}}
	}
	return &Fake{V: v, Batch: maxBatch, Window: window, Terms: terms, KV: kv}
}

func (f *Fake) Vocab() int                { return f.V }
func (f *Fake) MaxBatch() int             { return f.Batch }
func (f *Fake) Len(seq int) int           { return f.KV.Len(seq) }
func (f *Fake) Rollback(seq, n int) error { return f.KV.Rollback(seq, n) }

// Forward implements backend.Backend.
func (f *Fake) Forward(b *backend.Batch, logits []float32) error {
	if b.Len() > f.Batch {
		return fmt.Errorf("fake: batch of %d > %d", b.Len(), f.Batch)
	}
	f.Calls++
	f.Tokens += b.Len()
	o := 0
	for i, tok := range b.Tokens {
		s, pos := int(b.Seq[i]), int(b.Pos[i])
		if s < 0 || s >= f.KV.Config().Seqs {
			return fmt.Errorf("fake: bad slot %d", s)
		}
		if pos < 0 || pos > f.KV.Len(s) {
			return fmt.Errorf("fake: slot %d: position %d past length %d", s, pos, f.KV.Len(s))
		}
		if tok < 0 || int(tok) >= f.V {
			return fmt.Errorf("fake: token %d outside vocabulary", tok)
		}
		if err := f.KV.Grow(s, max(0, pos+1-f.KV.Len(s))); err != nil {
			return err
		}
		k, _ := f.KV.Head32(0, s, 0)
		k[pos] = float32(tok)
		if pos+1 > f.KV.Len(s) {
			_ = f.KV.Commit(s, pos+1)
		}
		if !b.Logits[i] {
			continue
		}
		if len(logits) < (o+1)*f.V {
			return fmt.Errorf("fake: logits buffer too small")
		}
		from := 0
		if f.Window > 0 {
			from = max(0, pos-f.Window+1)
		}
		f.logits(logits[o*f.V:(o+1)*f.V], k[from:pos+1])
		o++
	}
	return nil
}

// Logits computes the fake's logits for a context (the tokens its window
// covers), as Forward does.
func (f *Fake) logits(dst []float32, ctx []float32) {
	for j := range dst {
		dst[j] = 0
	}
	for _, t := range f.Terms {
		h := t.Seed
		for _, c := range ctx {
			h = mix(h ^ uint64(c))
		}
		for j := range dst {
			u := mix(h + uint64(j)*0x9e3779b97f4a7c15)
			dst[j] += t.Scale * (float32(u>>40)/float32(1<<23) - 1)
		}
	}
}

// mix is splitmix64's finaliser.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Greedy decodes n tokens after prompt with plain one-token steps on a
// fresh slot s, the reference that speculative output must equal.
func (f *Fake) Greedy(s int, prompt []int32, n int) ([]int32, error) {
	if err := f.KV.Reset(s); err != nil {
		return nil, err
	}
	lg := make([]float32, len(prompt)*f.V)
	var b backend.Batch
	for i, t := range prompt {
		b.Add(t, int32(i), int32(s), i == len(prompt)-1)
	}
	if err := f.Forward(&b, lg); err != nil {
		return nil, err
	}
	var out []int32
	next := int32(sample.Greedy(lg[:f.V]))
	for len(out) < n {
		out = append(out, next)
		b.Reset()
		b.Add(next, int32(len(prompt)+len(out)-1), int32(s), true)
		if err := f.Forward(&b, lg[:f.V]); err != nil {
			return nil, err
		}
		next = int32(sample.Greedy(lg[:f.V]))
	}
	return out, nil
}

// Softmax is a Sampler with temperature 1 and no filter, drawing from a
// splitmix64 stream: enough for statistical tests of the rules.
type Softmax struct {
	State uint64
	Temp  float32
}

// Probs writes softmax(logits/Temp) (Temp 0 is treated as 1).
func (s *Softmax) Probs(dst, logits []float32) {
	t := s.Temp
	if t <= 0 {
		t = 1
	}
	m := float32(math.Inf(-1))
	for _, v := range logits {
		m = max(m, v)
	}
	var sum float32
	for i, v := range logits {
		dst[i] = float32(math.Exp(float64((v - m) / t)))
		sum += dst[i]
	}
	for i := range dst {
		dst[i] /= sum
	}
}

// Float returns the next uniform number in [0, 1).
func (s *Softmax) Float() float64 {
	s.State += 0x9e3779b97f4a7c15
	return float64(mix(s.State)>>11) / (1 << 53)
}

// FloatAt returns PeekFloat(i+1) (backend.Indexed): the i-th number from
// the current state, which is the seed for a stream only FloatAt reads (a
// draft's).
func (s *Softmax) FloatAt(i uint64) float64 { return s.PeekFloat(int(i) + 1) }

// PeekFloat returns what the n-th next Float (n ≥ 1) will return
// (backend.Peeker).
func (s *Softmax) PeekFloat(n int) float64 {
	return float64(mix(s.State+uint64(n)*0x9e3779b97f4a7c15)>>11) / (1 << 53)
}

// Clock is a synthetic clock for tests of cost measurements: Costed
// backends advance it by their passes' given costs, so nothing sleeps.
// It is safe for concurrent use.
type Clock struct{ ns atomic.Int64 }

// Now is the time the clock has been advanced by.
func (c *Clock) Now() time.Duration { return time.Duration(c.ns.Load()) }

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// Costed is a backend whose every forward pass advances Clock by Cost of
// the pass (its tokens, and its sequences: runs of one slot): a
// synthetic cost model. It records the tokens of each pass in Passes.
type Costed struct {
	backend.Backend
	Clock  *Clock
	Cost   func(tokens, seqs int) time.Duration
	Passes []int
}

// Forward implements backend.Backend.
func (c *Costed) Forward(b *backend.Batch, logits []float32) error {
	seqs := 0
	for i := range b.Seq {
		if i == 0 || b.Seq[i] != b.Seq[i-1] {
			seqs++
		}
	}
	c.Clock.Advance(c.Cost(b.Len(), seqs))
	c.Passes = append(c.Passes, b.Len())
	return c.Backend.Forward(b, logits)
}
