package bench

import (
	"math"
	"testing"
	"time"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/verify"
)

// flatBackend writes logits whose argmax is token 0 at every position.
type flatBackend struct{ vocab, calls int }

func (f *flatBackend) Vocab() int              { return f.vocab }
func (f *flatBackend) MaxBatch() int           { return 64 }
func (f *flatBackend) Len(int) int             { return 0 }
func (f *flatBackend) Rollback(int, int) error { return nil }
func (f *flatBackend) Forward(b *backend.Batch, logits []float32) error {
	f.calls++
	for i := range logits {
		logits[i] = -float32(i % f.vocab)
	}
	return nil
}

// verifyBlock is what verify puts in a pass for one block: the last
// committed token and the draft, at consecutive positions of slot seq.
func verifyBlock(b *backend.Batch, seq int32, pos int32, draft []int32) {
	b.Add(7, pos, seq, true)
	for i, t := range draft {
		b.Add(t, pos+1+int32(i), seq, true)
	}
}

func TestSyntheticAcceptance(t *testing.T) {
	const vocab = 8
	d := []int32{3, 5, 2, 6} // never the real argmax (0)
	accepted := func(rates []float64, seed uint64, trials int) []Block {
		s := newSynthetic(&flatBackend{vocab: vocab}, rates, seed)
		lg := make([]float32, 2*(len(d)+1)*vocab)
		b := backend.NewBatch(16)
		var out []Block
		for range trials {
			b.Reset()
			verifyBlock(&b, 0, 10, d)
			verifyBlock(&b, 1, 20, d[:2])
			if err := s.Forward(&b, lg); err != nil {
				t.Fatal(err)
			}
			a0, _ := verify.AcceptGreedy(d, lg[:(len(d)+1)*vocab], vocab)
			a1, _ := verify.AcceptGreedy(d[:2], lg[(len(d)+1)*vocab:], vocab)
			out = append(out, Block{len(d), a0}, Block{2, a1})
		}
		return out
	}
	// Rate 1 accepts every draft token, 0 none, whatever the target says.
	for _, b := range accepted([]float64{1}, 1, 5) {
		if b.Accepted != b.Drafted {
			t.Fatalf("rate 1: %+v", b)
		}
	}
	for _, b := range accepted([]float64{0}, 1, 5) {
		if b.Accepted != 0 {
			t.Fatalf("rate 0: %+v", b)
		}
	}
	// Rate 0.6: the per-token MLE of α comes out near 0.6 (4000 blocks,
	// about 6000 examined tokens: a standard error near 0.006).
	if a := Alpha(accepted([]float64{0.6}, 2, 2000)); math.Abs(a-0.6) > 0.03 {
		t.Errorf("rate 0.6: α = %.3f", a)
	}
	// Per-position rates: 0.9 at position 0, 0.5 after.
	ps := PerPosition(accepted([]float64{0.9, 0.5}, 3, 2000))
	if c0, c1, c2 := ps[0].Conditional, ps[1].Conditional, ps[2].Conditional; math.Abs(c0-0.9) > 0.03 || math.Abs(c1-0.5) > 0.04 || math.Abs(c2-0.5) > 0.06 {
		t.Errorf("per-position conditional acceptance %.3f %.3f %.3f, want 0.9 0.5 0.5", c0, c1, c2)
	}
}

func TestSyntheticLeavesPrefillAndPlainSteps(t *testing.T) {
	const vocab = 8
	s := newSynthetic(&flatBackend{vocab: vocab}, []float64{1}, 1)
	want := make([]float32, 3*vocab)
	(&flatBackend{vocab: vocab}).Forward(nil, want)
	// Plain steps of three sequences: one token each.
	b := backend.NewBatch(8)
	for i := range int32(3) {
		b.Add(5, 9, i, true)
	}
	lg := make([]float32, 3*vocab)
	if err := s.Forward(&b, lg); err != nil {
		t.Fatal(err)
	}
	for i := range lg {
		if lg[i] != want[i] {
			t.Fatalf("plain step logits changed at %d", i)
		}
	}
	// A prefill pass has no logits.
	b.Reset()
	for i := range int32(4) {
		b.Add(1, i, 0, false)
	}
	if err := s.Forward(&b, nil); err != nil {
		t.Fatal(err)
	}
}

func TestSyntheticSamplingTakesOrRejects(t *testing.T) {
	const vocab = 8
	for _, rate := range []float64{0, 1} {
		s := newSynthetic(&flatBackend{vocab: vocab}, []float64{rate}, 1)
		b := backend.NewBatch(4)
		verifyBlock(&b, 0, 3, []int32{4})
		lg := make([]float32, 2*vocab)
		if err := s.Forward(&b, lg); err != nil {
			t.Fatal(err)
		}
		// After any temperature the softmax is one-hot on 4, or zero at 4.
		row := lg[:vocab]
		top := float32(math.Inf(-1))
		for i, x := range row {
			if i != 4 {
				top = max(top, x)
			}
		}
		if rate == 1 && row[4]-top < 1e3 || rate == 0 && row[4] > -1e29 {
			t.Errorf("rate %v: logit of the draft token %g, best other %g", rate, row[4], top)
		}
	}
}

// nopDrafter proposes nothing.
type nopDrafter struct{}

func (nopDrafter) Draft(r *draft.Request) error { r.Out = r.Out[:0]; return nil }
func (nopDrafter) Reset(int) error              { return nil }
func (nopDrafter) Accept(int, int) error        { return nil }
func (nopDrafter) Vocab() int                   { return 0 }

func TestTimelineRecordsWithoutAllocating(t *testing.T) {
	rec := newRecorder(time.Now(), 1000)
	be := &timedBackend{Backend: &flatBackend{vocab: 4}, rec: rec}
	dr := &timedDrafter{Drafter: nopDrafter{}, rec: newRecorder(rec.t0, 1000)}
	b := backend.NewBatch(8)
	verifyBlock(&b, 2, 5, []int32{1, 2})
	verifyBlock(&b, 0, 9, []int32{3})
	lg := make([]float32, 5*4)
	req := &draft.Request{Slot: 0, K: 2, Out: make([]int32, 0, 2)}
	allocs := testing.AllocsPerRun(100, func() {
		be.Forward(&b, lg)
		dr.Draft(req)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per recorded pass and draft", allocs)
	}
	iv := rec.buf[0]
	if iv.Kind != KindVerify || iv.Slot != 0 || !iv.Slot0 || iv.Tokens != 5 || iv.End < iv.Start {
		t.Errorf("verify interval %+v", iv)
	}
	pre := &draft.Request{Slot: 3, Stop: func() bool { return false }}
	dr.Draft(pre)
	if d := dr.rec.buf[len(dr.rec.buf)-1]; d.Kind != KindPreDraft || d.Slot != 3 || d.Slot0 {
		t.Errorf("pre-draft interval %+v", d)
	}
	// Full: the rest is dropped, still without allocating.
	small := newRecorder(rec.t0, 1)
	small.add(Interval{})
	small.add(Interval{})
	if len(small.buf) != 1 {
		t.Errorf("a full recorder kept %d", len(small.buf))
	}
	// A prefill pass (no logits) is told apart.
	b.Reset()
	b.Add(1, 0, 1, false)
	b.Add(2, 1, 1, false)
	be.Forward(&b, nil)
	if iv := rec.buf[len(rec.buf)-1]; iv.Kind != KindPrefill || iv.Slot0 {
		t.Errorf("prefill interval %+v", iv)
	}
}
