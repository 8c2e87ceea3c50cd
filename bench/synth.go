package bench

import (
	"math/rand/v2"

	"github.com/specd-dev/specd/backend"
)

// synthetic is a target backend for --synthetic-acceptance: it runs the
// target's real forward pass, then rewrites the logits of verification
// positions so that each draft token is accepted with a chosen
// probability, whatever the draft proposed. That is the ceiling a draft
// with that acceptance would reach at this target's real cost, for models
// without a trained draft (llama.cpp's --spec-synth-rates does the same).
//
// A verification block is the last committed token followed by its draft
// tokens, at consecutive positions of one sequence, every one asking for
// logits; the logits of entry i decide whether entry i+1 (a draft token)
// is accepted. With probability rates[j] (j the draft position; the last
// rate repeats) the draft token becomes the clear maximum (so greedy and
// sampling acceptance both take it); otherwise it gets a probability of 0
// (both reject it and the target's own token follows). Prefill (logits
// only for the last token) and plain steps (one token) are untouched.
//
// The emitted tokens are then no longer the target's own, so a sweep
// skips its exactness checks. Used by one goroutine at a time, as any
// Backend; it does not allocate.
type synthetic struct {
	backend.Backend
	rates []float64
	rng   *rand.Rand
	rows  []int // logits row of each batch entry (-1: none); reused
}

func newSynthetic(be backend.Backend, rates []float64, seed uint64) *synthetic {
	return &synthetic{Backend: be, rates: rates, rng: rand.New(rand.NewPCG(seed, 0x5e7d)),
		rows: make([]int, 0, be.MaxBatch())}
}

// Forward runs the real pass, then decides acceptance as the type says.
func (s *synthetic) Forward(b *backend.Batch, logits []float32) error {
	if err := s.Backend.Forward(b, logits); err != nil {
		return err
	}
	v := s.Vocab()
	s.rows = s.rows[:0]
	row := 0
	for _, l := range b.Logits {
		if l {
			s.rows = append(s.rows, row)
			row++
		} else {
			s.rows = append(s.rows, -1)
		}
	}
	j := 0 // draft position of entry i+1 within its block
	for i := 0; i+1 < b.Len(); i++ {
		next := b.Seq[i+1] == b.Seq[i] && b.Pos[i+1] == b.Pos[i]+1 && s.rows[i] >= 0 && s.rows[i+1] >= 0
		if !next {
			j = 0
			continue
		}
		lg := logits[s.rows[i]*v : (s.rows[i]+1)*v]
		d := b.Tokens[i+1]
		rate := s.rates[min(j, len(s.rates)-1)]
		if s.rng.Float64() < rate {
			top := lg[0]
			for _, x := range lg[1:] {
				top = max(top, x)
			}
			lg[d] = top + 1e4 // argmax, and probability 1 after any temperature
		} else {
			lg[d] = -1e30 // never the argmax (vocab > 1), probability 0
		}
		j++
	}
	return nil
}
