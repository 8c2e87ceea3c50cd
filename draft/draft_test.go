package draft_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/verify/verifytest"
)

const vocab = 16

// TestModelDraftMatchesGreedy drafts with a fake model and checks each
// proposal against plain greedy decoding of the same model, through steps
// that accept none, some and all of the draft, checking the cache rule
// (never ahead of committed-1) after every step.
func TestModelDraftMatchesGreedy(t *testing.T) {
	for k := 1; k <= 8; k++ {
		for _, accept := range []int{0, 1, k} {
			t.Run(fmt.Sprintf("k%d_a%d", k, accept), func(t *testing.T) {
				be := verifytest.NewFake(vocab, 2, 256, 32, 0)
				ref := verifytest.NewFake(vocab, 1, 256, 256, 0)
				d := draft.NewModel(be, 0)
				const slot = 1
				if err := d.Reset(slot); err != nil {
					t.Fatal(err)
				}
				toks := []int32{1, 2, 3, 4}
				r := &draft.Request{Slot: slot, K: k, Out: make([]int32, 0, k)}
				for step := 0; step < 5; step++ {
					r.Tokens = toks
					if err := d.Draft(r); err != nil {
						t.Fatal(err)
					}
					if r.Q != nil {
						t.Fatal("greedy draft returned q")
					}
					want, err := ref.Greedy(0, toks, k)
					if err != nil {
						t.Fatal(err)
					}
					if len(r.Out) != k {
						t.Fatalf("step %d: %d proposals, want %d", step, len(r.Out), k)
					}
					for i := range want {
						if r.Out[i] != want[i] {
							t.Fatalf("step %d: proposal %d = %d, want %d", step, i, r.Out[i], want[i])
						}
					}
					// Commit `accept` proposals and a correction token that
					// differs from the next proposal.
					a := min(accept, len(r.Out))
					toks = append(toks, r.Out[:a]...)
					corr := int32(5)
					if a < len(r.Out) && r.Out[a] == corr {
						corr = 6
					}
					toks = append(toks, corr)
					if err := d.Accept(slot, len(toks)); err != nil {
						t.Fatal(err)
					}
					if got := be.Len(slot); got > len(toks)-1 {
						t.Fatalf("draft cache holds %d positions, committed %d", got, len(toks))
					}
					if be.Len(0) != 0 {
						t.Fatal("another slot was written")
					}
				}
			})
		}
	}
}

func TestModelDraftPMin(t *testing.T) {
	be := verifytest.NewFake(vocab, 1, 64, 32, 0)
	d := draft.NewModel(be, 0.99) // a fake's softmax never reaches 0.99
	r := &draft.Request{Tokens: []int32{1, 2}, K: 4}
	if err := d.Draft(r); err != nil {
		t.Fatal(err)
	}
	if len(r.Out) != 0 {
		t.Fatalf("p_min 0.99 drafted %v", r.Out)
	}
	d = draft.NewModel(be, 1e-6)
	if err := d.Draft(r); err != nil || len(r.Out) != 4 {
		t.Fatalf("p_min 1e-6 drafted %v, %v", r.Out, err)
	}
	// A sharp model: scale the logits so the top token has p > 0.9 most
	// of the time; p_min 0.5 then drafts some but not always all.
	sharp := verifytest.NewFake(vocab, 1, 64, 32, 0, verifytest.Term{Seed: 1, Scale: 12})
	d = draft.NewModel(sharp, 0.5)
	total := 0
	for i := 0; i < 20; i++ {
		r.Tokens = []int32{int32(i % vocab), 3}
		if err := d.Reset(0); err != nil {
			t.Fatal(err)
		}
		if err := d.Draft(r); err != nil {
			t.Fatal(err)
		}
		total += len(r.Out)
	}
	if total == 0 || total == 20*4 {
		t.Fatalf("p_min 0.5 on a sharp model drafted %d of %d; want some early stops", total, 80)
	}
}

func TestModelDraftSampling(t *testing.T) {
	be := verifytest.NewFake(vocab, 1, 64, 32, 0)
	d := draft.NewModel(be, 0)
	s := &verifytest.Softmax{State: 9, Temp: 0.8}
	r := &draft.Request{Tokens: []int32{1, 2}, K: 3, Sampler: s}
	if err := d.Draft(r); err != nil {
		t.Fatal(err)
	}
	if len(r.Out) != 3 || len(r.Q) != 3*vocab {
		t.Fatalf("%d proposals, %d q values", len(r.Out), len(r.Q))
	}
	for i, tok := range r.Out {
		row := r.Q[i*vocab : (i+1)*vocab]
		var sum float32
		for _, v := range row {
			sum += v
		}
		if math.Abs(float64(sum-1)) > 1e-4 || row[tok] <= 0 {
			t.Fatalf("row %d: sum %v, q[token] %v", i, sum, row[tok])
		}
	}
}

func TestModelDraftAllocs(t *testing.T) {
	be := verifytest.NewFake(vocab, 1, 512, 32, 8)
	d := draft.NewModel(be, 0.01)
	toks := make([]int32, 2, 600)
	toks[0], toks[1] = 1, 2
	r := &draft.Request{K: 4, Out: make([]int32, 0, 4), Q: make([]float32, 0, 4*vocab)}
	s := &verifytest.Softmax{State: 1}
	step := func() {
		r.Tokens = toks
		if err := d.Draft(r); err != nil {
			t.Fatal(err)
		}
		toks = append(toks, 3)
		if err := d.Accept(0, len(toks)); err != nil {
			t.Fatal(err)
		}
	}
	if n := testing.AllocsPerRun(50, step); n != 0 {
		t.Errorf("greedy draft: %v allocations per step", n)
	}
	r.Sampler = s
	if n := testing.AllocsPerRun(50, step); n != 0 {
		t.Errorf("sampling draft: %v allocations per step", n)
	}
}

func TestNGram(t *testing.T) {
	g := draft.NewNGram()
	for _, tc := range []struct {
		toks []int32
		k    int
		want []int32
	}{
		{[]int32{1}, 4, nil},
		{[]int32{1, 2, 3}, 4, nil},
		{[]int32{1, 2, 3, 1}, 4, []int32{2, 3, 1, 2}},             // 1-gram, continues the copy
		{[]int32{1, 2, 3, 9, 1, 2}, 2, []int32{3, 9}},             // 2-gram
		{[]int32{5, 1, 2, 7, 1, 2, 8, 1, 2}, 3, []int32{8, 1, 2}}, // latest match wins
		{[]int32{4, 1, 2, 7, 3, 1, 2}, 3, []int32{7, 3, 1}},
		{[]int32{1, 2, 3, 4, 2, 3, 4}, 0, nil},
		{[]int32{9, 9, 9}, 3, []int32{9, 9, 9}}, // 2-gram (9 9) at 0, copy
	} {
		r := &draft.Request{Tokens: tc.toks, K: tc.k}
		if err := g.Draft(r); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(r.Out) != fmt.Sprint(tc.want) && !(len(r.Out) == 0 && len(tc.want) == 0) {
			t.Errorf("%v k=%d: got %v, want %v", tc.toks, tc.k, r.Out, tc.want)
		}
		if r.Q != nil {
			t.Error("n-gram returned q")
		}
	}
	if err := g.Draft(&draft.Request{K: 2}); err == nil {
		t.Error("empty request accepted")
	}
}

func TestPolicy(t *testing.T) {
	if got := draft.Speedup(0.8, 4, 0); math.Abs(got-(1-math.Pow(0.8, 5))/0.2) > 1e-9 {
		t.Errorf("Speedup(0.8,4,0) = %v", got)
	}
	if got := draft.Speedup(1, 4, 0.25); got != 2.5 {
		t.Errorf("Speedup(1,4,0.25) = %v, want 2.5", got)
	}
	fixed := draft.Policy{K: 5}
	var s draft.Acceptance
	if fixed.Next(&s) != 5 {
		t.Error("fixed policy")
	}
	ad := draft.Policy{K: 8, Adaptive: true, Cost: 0.1}
	var good, bad draft.Acceptance
	for i := 0; i < 30; i++ {
		good.Update(4, 4)
		bad.Update(4, 0)
	}
	kg, kb := ad.Next(&good), ad.Next(&bad)
	if good.Alpha() < 0.9 || bad.Alpha() > 0.1 {
		t.Errorf("alpha estimates %v, %v", good.Alpha(), bad.Alpha())
	}
	if kg != 8 || kb != 1 {
		t.Errorf("adaptive k: %d for high acceptance (want 8), %d for low (want 1)", kg, kb)
	}
	var mid draft.Acceptance
	for i := 0; i < 50; i++ {
		mid.Update(4, 2) // 2 of 3 examined pass
	}
	if a := mid.Alpha(); math.Abs(a-2.0/3) > 0.01 {
		t.Errorf("alpha %v, want 2/3", a)
	}
	if km := ad.Next(&mid); km <= 1 || km >= 8 {
		t.Errorf("adaptive k at alpha 2/3, c 0.1 = %d, want between", km)
	}
}

// TestModelDraftStop checks Request.Stop: drafting ends after the proposal
// at which Stop first says so, the proposals are greedy decoding's, the
// last is not fed to the cache, and a later Draft continuing from the
// proposals (as the pipeline extends a partial pre-draft) gives the same
// tokens as one uninterrupted draft.
func TestModelDraftStop(t *testing.T) {
	const k = 6
	ref := verifytest.NewFake(vocab, 1, 256, 256, 0)
	toks := []int32{1, 2, 3, 4}
	want, err := ref.Greedy(0, toks, k)
	if err != nil {
		t.Fatal(err)
	}
	for stopAt := 1; stopAt <= k; stopAt++ {
		be := verifytest.NewFake(vocab, 1, 256, 32, 0)
		d := draft.NewModel(be, 0)
		calls := 0
		r := &draft.Request{Slot: 0, Tokens: toks, K: k, Stop: func() bool { calls++; return calls >= stopAt }}
		if err := d.Draft(r); err != nil {
			t.Fatal(err)
		}
		if len(r.Out) != min(stopAt, k) {
			t.Fatalf("stop at %d: %d proposals", stopAt, len(r.Out))
		}
		if got := be.Len(0); got != len(toks)+len(r.Out)-1 {
			t.Fatalf("stop at %d: cache holds %d positions, want %d (the last proposal unfed)", stopAt, got, len(toks)+len(r.Out)-1)
		}
		// Continue from the partial draft.
		got := append([]int32{}, r.Out...)
		ext := &draft.Request{Slot: 0, Tokens: append(append([]int32{}, toks...), got...), K: k - len(got)}
		if err := d.Draft(ext); err != nil {
			t.Fatal(err)
		}
		got = append(got, ext.Out...)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("stop at %d, then continued: %v, want %v", stopAt, got, want)
		}
	}
}
