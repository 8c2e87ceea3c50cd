// Package backend is the seam between the pipeline and the devices that
// run models: the batch of one forward pass, the Backend that runs it
// over its own KV cache, and the Sampler a request's acceptance rules and
// drafts draw with. The pipeline (stages), the drafters (draft), the
// verifier (verify), the Go CPU backend (backend/cpu) and an accelerator
// backend all use these types without importing one another.
package backend

// Batch is the input of one forward pass: token i is Tokens[i] at position
// Pos[i] of sequence slot Seq[i], and its logits are produced iff
// Logits[i]. A backend for another device reads the same four slices.
type Batch struct {
	Tokens []int32
	Pos    []int32
	Seq    []int32
	Logits []bool
}

// NewBatch returns an empty Batch with room for n tokens, so that adding
// up to n tokens does not allocate.
func NewBatch(n int) Batch {
	return Batch{
		Tokens: make([]int32, 0, n), Pos: make([]int32, 0, n),
		Seq: make([]int32, 0, n), Logits: make([]bool, 0, n),
	}
}

// Reset empties b, keeping its capacity.
func (b *Batch) Reset() {
	b.Tokens, b.Pos, b.Seq, b.Logits = b.Tokens[:0], b.Pos[:0], b.Seq[:0], b.Logits[:0]
}

// Add appends one token.
func (b *Batch) Add(tok, pos, seq int32, logits bool) {
	b.Tokens = append(b.Tokens, tok)
	b.Pos = append(b.Pos, pos)
	b.Seq = append(b.Seq, seq)
	b.Logits = append(b.Logits, logits)
}

// Len is the number of tokens in b.
func (b *Batch) Len() int { return len(b.Tokens) }

// NumLogits is the number of tokens that ask for logits.
func (b *Batch) NumLogits() int {
	n := 0
	for _, l := range b.Logits {
		if l {
			n++
		}
	}
	return n
}

// Backend runs a model's forward pass over its own KV cache. It is used by
// one goroutine at a time.
type Backend interface {
	// Vocab is the number of logits per position.
	Vocab() int
	// MaxBatch is the most tokens one Forward accepts.
	MaxBatch() int
	// Forward writes the K/V of every batch token at (seq, pos) (pos at
	// most the current length of seq; afterwards the length is at least
	// pos+1), attends causally within each sequence, and writes Vocab
	// logits per token with Logits set, in batch order. Results per token
	// do not depend on the rest of the batch.
	Forward(b *Batch, logits []float32) error
	// Len is the number of positions held for slot seq.
	Len(seq int) int
	// Rollback keeps the first n positions of slot seq (n ≤ Len).
	Rollback(seq, n int) error
}

// Sampler is a request's sampling configuration as verification and
// drafting need it. The same filter (temperature, top-k, top-p) must be
// used by the draft for q and by the target for p, so that the
// acceptance rules are exact.
type Sampler interface {
	// Probs writes the filtered, temperature-scaled distribution of
	// logits into dst (len(dst) == len(logits)); zero outside the filter.
	Probs(dst, logits []float32)
	// Float returns the next uniform number in [0, 1) of the request's
	// seeded generator.
	Float() float64
}

// An Indexed Sampler can give any number of its generator by index:
// FloatAt(i) is the i-th number counted from its seed, whatever has been
// drawn. A draft model draws the proposal for sequence position p with
// FloatAt(p) (draft.Request.Sampler), so a proposal depends only on its
// context and position, not on how many numbers earlier drafts took.
type Indexed interface {
	FloatAt(i uint64) float64
}

// A Peeker is a Sampler that can tell a later number of its generator
// without drawing it: PeekFloat(n), n ≥ 1, is what the n-th next call of
// Float will return. The pipeline uses it to couple a pre-draft's guess of
// the target's next token with the target's own draw of it (draft.Request.
// Coupled); the numbers Float returns do not change.
type Peeker interface {
	PeekFloat(n int) float64
}
