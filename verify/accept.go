package verify

import (
	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/sample"
)

// Acceptance rules. Both take the target's view of the k+1 positions of
// one block (position i predicts the token after draft token i; position 0
// follows the last committed token) and return how many of the k draft
// tokens are accepted and the one token the target adds after them: the
// correction at the first rejection, or the bonus token when all k are
// accepted. Either way a block commits accepted+1 tokens.

// AcceptGreedy applies the greedy rule: draft token i is accepted while it
// equals the target's argmax at position i; the target's argmax at the
// first mismatch (or after the last draft token) is the next token.
// logits holds len(draft)+1 rows of vocab values.
func AcceptGreedy(draft []int32, logits []float32, vocab int) (accepted int, next int32) {
	for i, d := range draft {
		t := int32(sample.Greedy(logits[i*vocab : (i+1)*vocab]))
		if t != d {
			return i, t
		}
	}
	k := len(draft)
	return k, int32(sample.Greedy(logits[k*vocab : (k+1)*vocab]))
}

// AcceptSample applies exact speculative sampling (Leviathan et al. 2023,
// Chen et al. 2023) to one block: draft token x at position i, drawn from
// q_i, is accepted with probability min(1, p_i(x)/q_i(x)); at the first
// rejection the next token is drawn from norm(max(0, p_i − q_i)); if all k
// are accepted a bonus token is drawn from p_k. The emitted tokens are then
// distributed exactly as sampling from p alone.
//
// logits holds k+1 rows of the target's logits; q holds k rows of the
// draft's filtered distributions, or is nil for a deterministic draft (q_i
// one-hot on the draft token, as for n-gram drafts). p and r are scratch
// rows of vocab floats.
func AcceptSample(draft []int32, logits, q []float32, vocab int, s backend.Sampler, p, r []float32) (accepted int, next int32) {
	for i, x := range draft {
		s.Probs(p, logits[i*vocab:(i+1)*vocab])
		px := p[x]
		qx := float32(1)
		var qi []float32
		if q != nil {
			qi = q[i*vocab : (i+1)*vocab]
			qx = qi[x]
		}
		u := s.Float()
		if qx > 0 && u*float64(qx) < float64(px) {
			continue // accepted
		}
		// Rejected: the residual max(0, p − q).
		for j := range r {
			qj := float32(0)
			if qi != nil {
				qj = qi[j]
			} else if j == int(x) {
				qj = 1
			}
			r[j] = max(p[j]-qj, 0)
		}
		t := sample.DrawFrom(r, s.Float())
		if t < 0 {
			// p ≤ q everywhere only if p == q up to rounding, when a
			// rejection has probability zero; fall back to p itself.
			t = max(sample.DrawFrom(p, s.Float()), 0)
		}
		return i, int32(t)
	}
	k := len(draft)
	s.Probs(p, logits[k*vocab:(k+1)*vocab])
	return k, int32(max(sample.DrawFrom(p, s.Float()), 0))
}
