package verify_test

import (
	"errors"
	"testing"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/verify"
	"github.com/specd-dev/specd/verify/verifytest"
)

const vocab = 16

// prefill feeds all but the last token of prompt into slot s.
func prefill(t *testing.T, f *verifytest.Fake, s int, prompt []int32) {
	t.Helper()
	if err := f.KV.Reset(s); err != nil {
		t.Fatal(err)
	}
	var b backend.Batch
	for i, tok := range prompt[:len(prompt)-1] {
		b.Add(tok, int32(i), int32(s), false)
	}
	if b.Len() > 0 {
		if err := f.Forward(&b, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRaggedGreedy verifies blocks of different draft lengths for several
// sequences in one pass, with drafts that are the target's own greedy
// continuation corrupted at a chosen position, and checks the accepted
// counts, the tokens and that the result equals plain greedy decoding.
func TestRaggedGreedy(t *testing.T) {
	const seqs = 4
	target := verifytest.NewFake(vocab, seqs, 128, 64, 0)
	ref := verifytest.NewFake(vocab, 1, 128, 64, 0)
	prompts := [][]int32{{1, 2, 3}, {4}, {5, 6, 7, 8, 9}, {2, 2}}
	ks := []int{0, 3, 8, 5}
	corrupt := []int{-1, 0, 8, 2} // index of the first wrong draft token; -1 or k: none
	var want [][]int32
	for s, p := range prompts {
		w, err := ref.Greedy(0, p, 12)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, w)
		prefill(t, target, s, p)
	}
	v := verify.New(target)
	var blocks []*verify.Block
	for s, p := range prompts {
		d := append([]int32{}, want[s][:ks[s]]...)
		if c := corrupt[s]; c >= 0 && c < ks[s] {
			d[c] = (d[c] + 1) % vocab
		}
		blocks = append(blocks, &verify.Block{Seq: int32(s), Pos: int32(len(p) - 1), Last: p[len(p)-1], Draft: d})
	}
	if err := v.Verify(blocks); err != nil {
		t.Fatal(err)
	}
	if target.Calls != 4 { // 3 prefills (prompt 1 has a single token) and one verification
		t.Errorf("%d forward passes, want 4", target.Calls)
	}
	for s, b := range blocks {
		wantAcc := ks[s]
		if c := corrupt[s]; c >= 0 && c < ks[s] {
			wantAcc = c
		}
		if b.Accepted != wantAcc {
			t.Errorf("seq %d: accepted %d, want %d", s, b.Accepted, wantAcc)
		}
		for i, tok := range b.Tokens {
			if tok != want[s][i] {
				t.Errorf("seq %d: token %d = %d, want %d", s, i, tok, want[s][i])
			}
		}
		if len(b.Tokens) != wantAcc+1 {
			t.Errorf("seq %d: %d tokens, want %d", s, len(b.Tokens), wantAcc+1)
		}
		committed := len(prompts[s]) + len(b.Tokens)
		if got := target.Len(s); got != committed-1 {
			t.Errorf("seq %d: target cache length %d, want %d", s, got, committed-1)
		}
	}
}

// TestDecodeLoop decodes with the verifier alone, drafting from a second
// fake (partial acceptance) and from the target itself (full acceptance),
// and compares with plain greedy decoding.
func TestDecodeLoop(t *testing.T) {
	for _, tc := range []struct {
		name     string
		draft    []verifytest.Term
		allAccpt bool
	}{
		{"self", []verifytest.Term{{Seed: 1, Scale: 1}}, true},
		{"noisy", []verifytest.Term{{Seed: 1, Scale: 1}, {Seed: 9, Scale: 0.4}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k := 1; k <= 8; k++ {
				target := verifytest.NewFake(vocab, 1, 256, 16, 0)
				ref := verifytest.NewFake(vocab, 1, 256, 256, 0)
				dr := verifytest.NewFake(vocab, 1, 256, 256, 0, tc.draft...)
				prompt := []int32{3, 1, 4, 1, 5}
				want, err := ref.Greedy(0, prompt, 40)
				if err != nil {
					t.Fatal(err)
				}
				prefill(t, target, 0, prompt)
				v := verify.New(target)
				toks := append([]int32{}, prompt...)
				drafted, accepted := 0, 0
				blk := &verify.Block{Draft: make([]int32, 0, k), Tokens: make([]int32, 0, k+1)}
				for len(toks) < len(prompt)+40 {
					// Draft k tokens greedily by replaying the committed
					// tokens into the draft fake (simple, not fast).
					d, err := dr.Greedy(0, toks, k)
					if err != nil {
						t.Fatal(err)
					}
					blk.Seq, blk.Pos, blk.Last = 0, int32(len(toks)-1), toks[len(toks)-1]
					blk.Draft = append(blk.Draft[:0], d...)
					if err := v.Verify([]*verify.Block{blk}); err != nil {
						t.Fatal(err)
					}
					drafted += k
					accepted += blk.Accepted
					toks = append(toks, blk.Tokens...)
				}
				got := toks[len(prompt) : len(prompt)+40]
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("k=%d: token %d = %d, want %d", k, i, got[i], want[i])
					}
				}
				if tc.allAccpt && accepted != drafted {
					t.Fatalf("k=%d: self-draft accepted %d of %d", k, accepted, drafted)
				}
				if !tc.allAccpt && (accepted == drafted || accepted == 0) {
					t.Fatalf("k=%d: noisy draft accepted %d of %d; want partial acceptance", k, accepted, drafted)
				}
			}
		})
	}
}

// TestVerifierSampling checks the emitted token distribution through the
// whole Verifier (forward pass, rule, rollback) against the target's
// softmax at a fixed context, with the draft's q from another fake.
func TestVerifierSampling(t *testing.T) {
	const n = 30000
	target := verifytest.NewFake(vocab, 1, 32, 8, 0)
	dr := verifytest.NewFake(vocab, 1, 32, 8, 0, verifytest.Term{Seed: 1, Scale: 1}, verifytest.Term{Seed: 5, Scale: 1.5})
	prompt := []int32{7, 3}
	// p and q at the fixed context.
	s := &verifytest.Softmax{State: 3, Temp: 0.7}
	lg := make([]float32, vocab)
	p, q := make([]float32, vocab), make([]float32, vocab)
	var b backend.Batch
	b.Add(7, 0, 0, false)
	b.Add(3, 1, 0, true)
	if err := target.Forward(&b, lg); err != nil {
		t.Fatal(err)
	}
	s.Probs(p, lg)
	if err := dr.Forward(&b, lg); err != nil {
		t.Fatal(err)
	}
	s.Probs(q, lg)
	prefill(t, target, 0, prompt)
	v := verify.New(target)
	counts := make([]int, vocab)
	blk := &verify.Block{Seq: 0, Pos: 1, Last: 3, Draft: make([]int32, 1), Q: q, Sampler: s, Tokens: make([]int32, 0, 2)}
	acc := 0
	for i := 0; i < n; i++ {
		blk.Draft[0] = int32(sample.DrawFrom(q, s.Float()))
		if err := v.Verify([]*verify.Block{blk}); err != nil {
			t.Fatal(err)
		}
		counts[blk.Tokens[0]]++
		acc += blk.Accepted
		if target.Len(0) != 2+blk.Accepted {
			t.Fatalf("cache length %d after %d accepted", target.Len(0), blk.Accepted)
		}
		if err := target.Rollback(0, 1); err != nil {
			t.Fatal(err)
		}
	}
	// Cells with expected count < 5 are merged into one.
	var pm []float32
	var cm []int
	var restP float32
	rest := 0
	for i := range p {
		if p[i]*n < 5 {
			restP += p[i]
			rest += counts[i]
			continue
		}
		pm = append(pm, p[i])
		cm = append(cm, counts[i])
	}
	pm = append(pm, restP)
	cm = append(cm, rest)
	// 0.999 quantile for up to 15 degrees of freedom is 37.7; use it as a
	// bound for fewer cells too (looser, still fails a wrong rule: the
	// draft alone, q, gives a chi-square in the thousands here).
	x := chiSquare(cm, pm)
	if x > 37.7 {
		t.Errorf("chi-square %.1f; counts %v, p %v", x, counts, p)
	}
	var alpha float64
	for i := range p {
		alpha += float64(min(p[i], q[i]))
	}
	if got := float64(acc) / n; got < alpha-0.02 || got > alpha+0.02 {
		t.Errorf("acceptance %.3f, want %.3f", got, alpha)
	}
	if xq := chiSquare(cm, mergeLike(q, p, n)); xq < 100 {
		t.Errorf("the draft's own distribution also fits (chi-square %.1f): test has no power", xq)
	}
}

// mergeLike merges q's cells the way p's were merged.
func mergeLike(q, p []float32, n int) []float32 {
	var out []float32
	var rest float32
	for i := range p {
		if p[i]*float32(n) < 5 {
			rest += q[i]
			continue
		}
		out = append(out, q[i])
	}
	return append(out, rest)
}

func TestVerifyAllocs(t *testing.T) {
	target := verifytest.NewFake(vocab, 4, 64, 40, 4)
	for s := 0; s < 4; s++ {
		prefill(t, target, s, []int32{1, 2, int32(s)})
	}
	v := verify.New(target)
	var blocks []*verify.Block
	for s := 0; s < 4; s++ {
		blocks = append(blocks, &verify.Block{Seq: int32(s), Pos: 2, Last: int32(s), Draft: []int32{1, 2, 3, 4, 5}, Tokens: make([]int32, 0, 6)})
	}
	greedy := func() {
		if err := v.Verify(blocks); err != nil {
			t.Fatal(err)
		}
		for s := 0; s < 4; s++ {
			_ = target.Rollback(s, 2)
		}
	}
	if n := testing.AllocsPerRun(50, greedy); n != 0 {
		t.Errorf("greedy Verify: %v allocations per call", n)
	}
	s := &verifytest.Softmax{State: 1}
	q := make([]float32, 5*vocab)
	for i := range q {
		q[i] = 1.0 / vocab
	}
	for _, b := range blocks {
		b.Sampler, b.Q = s, q
	}
	if n := testing.AllocsPerRun(50, greedy); n != 0 {
		t.Errorf("sampling Verify: %v allocations per call", n)
	}
}

func TestVerifyErrors(t *testing.T) {
	target := verifytest.NewFake(vocab, 2, 16, 4, 0)
	v := verify.New(target)
	for _, tc := range []struct {
		name string
		b    verify.Block
		want error
	}{
		{"too large", verify.Block{Draft: []int32{1, 2, 3, 4}}, verify.ErrBatchTooLarge},
		{"position past cache", verify.Block{Pos: 3, Draft: []int32{1}}, verify.ErrBadBlock},
		{"token outside vocab", verify.Block{Draft: []int32{vocab}}, verify.ErrBadBlock},
		{"short q", verify.Block{Draft: []int32{1}, Q: make([]float32, 3)}, verify.ErrBadBlock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b
			if err := v.Verify([]*verify.Block{&b}); !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}
