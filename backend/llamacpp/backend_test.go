package llamacpp_test

import (
	"fmt"
	"testing"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/model/modeltest"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/verify"
)

// Small random models with a synthetic vocabulary: quick to write and run.
var (
	tinyLlama = modeltest.Options{Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, FFN: 128, Vocab: 300, Seed: 11}
	tinyQwen2 = modeltest.Options{Arch: "qwen2", Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, FFN: 128, Vocab: 300, Seed: 12, Tied: true}
)

// logitsTol bounds max |Δlogit| / std(logits) between llama.cpp and the Go
// engine on F32 weights (both keep K and V in F16); model/conformance_test
// measures the same quantity between llama.cpp's own builds at up to 1e-3.
const logitsTol = 1e-3

// TestLogitsMatchGoEngine: one Forward of two sequences' prompts in one
// batch (logits for every token) gives, per token and in batch order, the
// Go engine's logits; a slot's logits do not depend on the other slot
// being in the batch; Len follows what was written.
func TestLogitsMatchGoEngine(t *testing.T) {
	l := lib(t)
	for name, o := range map[string]modeltest.Options{"llama": tinyLlama, "qwen2": tinyQwen2} {
		t.Run(name, func(t *testing.T) {
			p := loadPair(t, l, o)
			v := p.goM.Config.Vocab
			a := []int32{1, 17, 42, 99, 5, 250}
			b := []int32{1, 3, 200}
			var bt backend.Batch
			for i := range max(len(a), len(b)) { // interleaved
				if i < len(a) {
					bt.Add(a[i], int32(i), 0, true)
				}
				if i < len(b) {
					bt.Add(b[i], int32(i), 1, true)
				}
			}
			acc := accelBackend(t, p, 2, 32, 16)
			got := make([]float32, bt.Len()*v)
			if err := acc.Forward(&bt, got); err != nil {
				t.Fatal(err)
			}
			if acc.Len(0) != len(a) || acc.Len(1) != len(b) {
				t.Fatalf("lengths %d, %d after writing %d and %d", acc.Len(0), acc.Len(1), len(a), len(b))
			}
			gb := goBackend(t, p.goM, 2, 32, 16, 2)
			want := make([]float32, bt.Len()*v)
			if err := gb.Forward(&bt, want); err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for i := range bt.Len() {
				d := maxRelDiff(got[i*v:(i+1)*v], want[i*v:(i+1)*v])
				worst = max(worst, d)
				if d > logitsTol {
					t.Errorf("token %d (slot %d pos %d): max |Δ|/std %.2g > %.0e", i, bt.Seq[i], bt.Pos[i], d, logitsTol)
				}
			}
			// Slot 1 alone, in a fresh context.
			alone := accelBackend(t, p, 2, 32, 16)
			var b1 backend.Batch
			for i, tok := range b {
				b1.Add(tok, int32(i), 1, true)
			}
			lg1 := make([]float32, len(b)*v)
			if err := alone.Forward(&b1, lg1); err != nil {
				t.Fatal(err)
			}
			for i := range b {
				j := 2*i + 1 // slot 1's i-th token in the interleaved batch
				if d := maxRelDiff(lg1[i*v:(i+1)*v], got[j*v:(j+1)*v]); d > logitsTol {
					t.Errorf("slot 1 pos %d: alone and batched differ by %.2g of the std", i, d)
				}
			}
			t.Logf("max |Δlogit|/std against the Go engine %.2g", worst)
		})
	}
}

// TestRollbackExact: after a verification that rejects part of a draft,
// the context holds exactly the committed positions (read back with
// llama_memory_seq_pos_max), and decoding on from there gives the logits of
// a context that only ever saw the committed tokens: nothing of the
// rejected draft is left.
func TestRollbackExact(t *testing.T) {
	l := lib(t)
	p := loadPair(t, l, tinyLlama)
	v := p.goM.Config.Vocab
	prompt := []int32{1, 17, 42, 99, 5, 250, 7, 8}
	greedy := plainGreedy(t, goBackend(t, p.goM, 1, 32, len(prompt), 1), prompt, 6)

	be := accelBackend(t, p, 1, 32, 8)
	var b backend.Batch
	for i, tok := range prompt[:len(prompt)-1] {
		b.Add(tok, int32(i), 0, false)
	}
	if err := be.Forward(&b, nil); err != nil {
		t.Fatal(err)
	}
	wrong := (greedy[1] + 1) % int32(v)
	blk := &verify.Block{Seq: 0, Pos: int32(len(prompt) - 1), Last: prompt[len(prompt)-1],
		Draft: []int32{greedy[0], wrong, 3, 4}}
	vf := verify.New(be)
	if err := vf.Verify([]*verify.Block{blk}); err != nil {
		t.Fatal(err)
	}
	if blk.Accepted != 1 || fmt.Sprint(blk.Tokens) != fmt.Sprint(greedy[:2]) {
		t.Fatalf("accepted %d, tokens %v; want 1 and %v", blk.Accepted, blk.Tokens, greedy[:2])
	}
	// Committed: the prompt and greedy[0]; greedy[1] is the next block's Last.
	if n := be.Len(0); n != len(prompt)+1 {
		t.Fatalf("context holds %d positions after the rejection, want %d (%d were written)", n, len(prompt)+1, len(prompt)+4)
	}
	b.Reset()
	b.Add(greedy[1], int32(len(prompt)+1), 0, true)
	got := make([]float32, v)
	if err := be.Forward(&b, got); err != nil {
		t.Fatal(err)
	}
	fresh := accelBackend(t, p, 1, 32, 16)
	b.Reset()
	seq := append(append([]int32{}, prompt...), greedy[:2]...)
	for i, tok := range seq {
		b.Add(tok, int32(i), 0, i == len(seq)-1)
	}
	want := make([]float32, v)
	if err := fresh.Forward(&b, want); err != nil {
		t.Fatal(err)
	}
	if d := maxRelDiff(got, want); d > logitsTol {
		t.Errorf("after the rollback the logits differ from a fresh context's by %.2g of the std", d)
	}
	if g, w := sample.Greedy(got), greedy[2]; int32(g) != w {
		t.Errorf("next token %d, want %d", g, w)
	}
}
