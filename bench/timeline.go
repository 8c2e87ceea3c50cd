package bench

import (
	"time"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/draft"
)

// Interval kinds of a Timeline.
const (
	KindDraft    = "draft"     // a draft call
	KindPreDraft = "pre-draft" // a pre-draft (drafting step n+1 while step n verifies)
	KindVerify   = "verify"    // a target pass verifying draft blocks (or plain steps)
	KindPrefill  = "prefill"   // a target pass over a prompt (no logits)
)

// Interval is one busy interval of a stage's device work, in time since
// the run started.
type Interval struct {
	Kind  string        `json:"kind"`
	Start time.Duration `json:"start_ns"`
	End   time.Duration `json:"end_ns"`
	// Slot is the sequence slot of a draft; for a target pass, the
	// lowest slot in its batch. Slot0 reports whether slot 0 (the
	// timeline's request) takes part in the pass.
	Slot   int  `json:"slot"`
	Slot0  bool `json:"slot0"`
	Tokens int  `json:"tokens"` // tokens of the pass (draft: proposed)
}

// Timeline is the busy intervals of the draft and the target during one
// run, and the request in slot 0's first and last chunk.
type Timeline struct {
	Point     Point         `json:"point"`
	Intervals []Interval    `json:"intervals"`
	First     time.Duration `json:"first_chunk_ns"` // slot 0's request
	Last      time.Duration `json:"last_chunk_ns"`
	Wall      time.Duration `json:"wall_ns"`
}

// recorder collects intervals into a preallocated slice: once full it
// drops the rest, so recording never allocates. One recorder per
// goroutine (or per lock: the target's is used by prefill and verify under
// the pipeline's device lock).
type recorder struct {
	t0  time.Time
	buf []Interval
}

func newRecorder(t0 time.Time, n int) *recorder {
	return &recorder{t0: t0, buf: make([]Interval, 0, n)}
}

func (r *recorder) add(iv Interval) {
	if len(r.buf) < cap(r.buf) {
		r.buf = append(r.buf, iv)
	}
}

// timedBackend records every Forward of the target.
type timedBackend struct {
	backend.Backend
	rec *recorder
}

func (t *timedBackend) Forward(b *backend.Batch, logits []float32) error {
	start := time.Since(t.rec.t0)
	err := t.Backend.Forward(b, logits)
	end := time.Since(t.rec.t0)
	kind, slot, slot0 := KindVerify, -1, false
	if b.NumLogits() == 0 { // stages prefills without logits
		kind = KindPrefill
	}
	for _, s := range b.Seq {
		if slot < 0 || int(s) < slot {
			slot = int(s)
		}
		slot0 = slot0 || s == 0
	}
	t.rec.add(Interval{Kind: kind, Start: start, End: end, Slot: slot, Slot0: slot0, Tokens: b.Len()})
	return err
}

// timedDrafter records every Draft call.
type timedDrafter struct {
	draft.Drafter
	rec *recorder
}

func (t *timedDrafter) Draft(r *draft.Request) error {
	start := time.Since(t.rec.t0)
	err := t.Drafter.Draft(r)
	end := time.Since(t.rec.t0)
	kind := KindDraft
	if r.Stop != nil { // only pre-drafts may be cut short (stages)
		kind = KindPreDraft
	}
	t.rec.add(Interval{Kind: kind, Start: start, End: end, Slot: r.Slot, Slot0: r.Slot == 0, Tokens: len(r.Out)})
	return err
}
