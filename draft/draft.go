// Package draft proposes tokens for speculative decoding: a small model
// run on its own backend (own thread pool, own KV cache), or prompt lookup
// over the sequence's own tokens, with a draft-length policy per sequence
// (fixed k, confidence stop p_min, adaptive k from recent acceptance).
//
// KV rule (the draft's half of the rule in package stages). A model
// drafter's cache for a slot never holds a position whose token is not
// committed: Draft first feeds the committed
// tokens it lacks (the whole prompt on the first call; afterwards the
// correction token, or the last draft token and the bonus token after a
// full acceptance), then feeds its own proposals, and Accept cuts it back
// to the accepted prefix.
package draft

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/sample"
)

// Request asks for up to K draft tokens continuing Tokens in Slot.
type Request struct {
	Slot   int
	Tokens []int32 // committed tokens (prompt and generated), at least one
	K      int
	// Sampler draws draft tokens from the draft's filtered distribution q
	// (which Q then records); nil drafts greedily. A backend.Indexed
	// Sampler gives the proposal at sequence position p the number
	// FloatAt(p), so that the proposals for a context are the same however
	// many numbers earlier drafts drew (a pre-draft stopped early or thrown
	// away): sampled output at a fixed draft length is the same from run to
	// run. Another Sampler's numbers are drawn in turn (Float).
	Sampler backend.Sampler

	// Out receives the proposals (reusing its capacity; give it K).
	Out []int32
	// Q receives len(Out) rows of q when a model drafter samples (reusing
	// its capacity; give it K*vocab); it is set to nil when the proposals
	// are deterministic (q one-hot on each token).
	Q []float32

	// Stop, if not nil, is asked after each proposal but the last whether
	// to stop drafting there: Out then holds the proposals made so far (a
	// model drafter has not fed the last of them to its cache, as when it
	// proposes all K). The pipeline stops a pre-draft this way as soon as
	// the verification it overlaps is done.
	Stop func() bool

	// PMin, if not nil, replaces the model drafter's confidence stop for
	// this request (0: never stop early).
	PMin *float32

	// Coupled (with a Sampler) draws the first proposal with the uniform
	// number U instead of one of Sampler's. A pre-draft's first proposal
	// is its guess of the token the target will sample after the block
	// being verified; given U, the number the target's own draw of that
	// token will use (backend.Peeker), the two draws, from q and from p by
	// the same inverse CDF, agree wherever q is close to p, instead of
	// about Σ p(x)q(x) of the time for independent draws. The target's
	// draw, and so the output, is unchanged; the proposals after the
	// first use Sampler's numbers as before, so a guess that is kept only
	// where it matched leaves them distributed as q.
	Coupled bool
	U       float64
}

// Drafter proposes draft tokens. It is used by one goroutine at a time.
type Drafter interface {
	// Draft fills r.Out with at most r.K tokens (possibly none) and r.Q.
	Draft(r *Request) error
	// Reset prepares slot for a new sequence.
	Reset(slot int) error
	// Accept tells the drafter that slot now has committed tokens after a
	// verification; it drops anything it holds beyond them.
	Accept(slot, committed int) error
	// Vocab is the vocabulary size the drafter proposes from (0: any,
	// it only copies tokens).
	Vocab() int
}

// Feeder is a Drafter that can catch its cache up on committed tokens
// ahead of the next Draft, so that drafting again after plain steps does
// not begin with a long catch-up. The pipeline feeds it while the target
// verifies a step without draft tokens.
type Feeder interface {
	// Feed brings slot's cache up to all committed tokens but the last
	// (which the next Draft feeds), as Draft would before proposing.
	Feed(slot int, committed []int32) error
}

// Errors.
var (
	ErrEmpty = errors.New("draft: request has no committed tokens")
)

// Model drafts with a small model on its own backend (own pool and cache).
type Model struct {
	be     backend.Backend
	vocab  int
	pmin   float32
	batch  backend.Batch
	logits []float32
	prob   []float32
}

// NewModel returns a drafter on be. With pmin > 0 drafting stops early when
// the most likely next token has probability below pmin (after the
// request's filter when sampling, else the plain softmax).
func NewModel(be backend.Backend, pmin float32) *Model {
	return &Model{
		be: be, vocab: be.Vocab(), pmin: pmin,
		batch:  backend.NewBatch(be.MaxBatch()),
		logits: make([]float32, be.Vocab()),
		prob:   make([]float32, be.Vocab()),
	}
}

// Backend returns the drafter's backend.
func (m *Model) Backend() backend.Backend { return m.be }

// Vocab implements Drafter.
func (m *Model) Vocab() int { return m.vocab }

// Reset implements Drafter.
func (m *Model) Reset(slot int) error { return m.be.Rollback(slot, 0) }

// Accept implements Drafter: the cache keeps at most committed-1 positions.
func (m *Model) Accept(slot, committed int) error {
	if n := m.be.Len(slot); n > committed-1 {
		return m.be.Rollback(slot, max(committed-1, 0))
	}
	return nil
}

// Feed implements Feeder: it feeds committed tokens [Len, len−1) in
// passes of up to the backend's batch, without logits.
func (m *Model) Feed(slot int, committed []int32) error {
	have, n := m.be.Len(slot), len(committed)-1
	s := int32(slot)
	for have < n {
		m.batch.Reset()
		end := min(n, have+m.be.MaxBatch())
		for p := have; p < end; p++ {
			m.batch.Add(committed[p], int32(p), s, false)
		}
		if err := m.be.Forward(&m.batch, nil); err != nil {
			return fmt.Errorf("draft: %w", err)
		}
		have = end
	}
	return nil
}

// Draft implements Drafter.
func (m *Model) Draft(r *Request) error {
	n := len(r.Tokens)
	if n == 0 {
		return ErrEmpty
	}
	r.Out = r.Out[:0]
	if r.Sampler != nil {
		r.Q = r.Q[:0]
	} else {
		r.Q = nil
	}
	s := int32(r.Slot)
	pmin := m.pmin
	if r.PMin != nil {
		pmin = *r.PMin
	}
	have := m.be.Len(r.Slot)
	if have > n-1 {
		// Defensive: never keep positions past the committed tokens.
		if err := m.be.Rollback(r.Slot, n-1); err != nil {
			return err
		}
		have = n - 1
	}
	if r.K <= 0 {
		return nil
	}
	// Catch up: feed committed tokens [have, n), logits for the last only.
	for have < n {
		m.batch.Reset()
		end := min(n, have+m.be.MaxBatch())
		for p := have; p < end; p++ {
			m.batch.Add(r.Tokens[p], int32(p), s, p == n-1)
		}
		if err := m.be.Forward(&m.batch, m.logits); err != nil {
			return fmt.Errorf("draft: %w", err)
		}
		have = end
	}
	indexed, _ := r.Sampler.(backend.Indexed)
	for i := 0; i < r.K; i++ {
		var tok int32
		var top float32
		if r.Sampler != nil {
			r.Sampler.Probs(m.prob, m.logits)
			u := r.U
			switch {
			case r.Coupled && i == 0:
			case indexed != nil:
				u = indexed.FloatAt(uint64(n + i)) // the proposal's position
			default:
				u = r.Sampler.Float()
			}
			t := sample.DrawFrom(m.prob, u)
			if t < 0 {
				break // a degenerate distribution proposes nothing
			}
			tok = int32(t)
			if pmin > 0 {
				top = maxOf(m.prob)
			}
		} else {
			tok = int32(sample.Greedy(m.logits))
			if pmin > 0 {
				top = topSoftmax(m.logits, tok)
			}
		}
		if pmin > 0 && top < pmin {
			break
		}
		r.Out = append(r.Out, tok)
		if r.Sampler != nil {
			r.Q = append(r.Q, m.prob...)
		}
		if i == r.K-1 || (r.Stop != nil && r.Stop()) {
			break // the last proposal is not fed: its KV is not needed yet
		}
		m.batch.Reset()
		m.batch.Add(tok, int32(n+i), s, true)
		if err := m.be.Forward(&m.batch, m.logits); err != nil {
			return fmt.Errorf("draft: %w", err)
		}
	}
	return nil
}

func maxOf(v []float32) float32 {
	m := float32(0)
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

// topSoftmax is softmax(logits)[tok] for the argmax tok: 1/Σexp(l−l_tok).
func topSoftmax(logits []float32, tok int32) float32 {
	lm := logits[tok]
	var sum float64
	for _, l := range logits {
		sum += math.Exp(float64(l - lm))
	}
	return float32(1 / sum)
}

// NGram drafts by prompt lookup: it finds the most recent earlier
// occurrence of the sequence's last n tokens (n from Max down to Min) and
// proposes the tokens that followed it. It keeps no state and has no cache.
type NGram struct {
	Min, Max int
}

// NewNGram returns a prompt-lookup drafter matching 1..3 tokens.
func NewNGram() *NGram { return &NGram{Min: 1, Max: 3} }

// Vocab implements Drafter.
func (g *NGram) Vocab() int { return 0 }

// Reset implements Drafter.
func (g *NGram) Reset(int) error { return nil }

// Accept implements Drafter.
func (g *NGram) Accept(int, int) error { return nil }

// Draft implements Drafter. The proposals are deterministic (Q is nil).
func (g *NGram) Draft(r *Request) error {
	r.Out, r.Q = r.Out[:0], nil
	t := r.Tokens
	if len(t) == 0 {
		return ErrEmpty
	}
	for n := min(g.Max, len(t)-1); n >= max(g.Min, 1); n-- {
		tail := t[len(t)-n:]
		// Latest start i < len(t)-n with t[i:i+n] == tail.
		for i := len(t) - n - 1; i >= 0; i-- {
			if !slices.Equal(t[i:i+n], tail) {
				continue
			}
			// Copy what followed; past the end, keep copying the copy
			// (a repeating pattern continues).
			for j := i + n; len(r.Out) < r.K; j++ {
				if j < len(t) {
					r.Out = append(r.Out, t[j])
				} else {
					r.Out = append(r.Out, r.Out[j-len(t)])
				}
			}
			return nil
		}
	}
	return nil
}
