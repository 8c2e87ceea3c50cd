package cpu_test

import (
	"path/filepath"
	"testing"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/backend/cpu"
	"github.com/specd-dev/specd/model"
	"github.com/specd-dev/specd/model/modeltest"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/tensor"
	"github.com/specd-dev/specd/verify"
)

// TestCPUVerifyStep checks the CPU backend on a tiny random model: a
// verification step of 4 ragged blocks gives the same tokens as one-token
// decoding and allocates nothing once warmed up.
func TestCPUVerifyStep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := modeltest.Write(path, modeltest.Options{Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, FFN: 96, Vocab: 300, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	kv, err := m.NewCache(4, 64, false)
	if err != nil {
		t.Fatal(err)
	}
	pool := tensor.NewPool(2)
	defer pool.Close()
	be := cpu.New(m.NewState(32, pool), kv)
	v := verify.New(be)
	V := be.Vocab()

	// Reference: one-token greedy decoding of slot 0 from token 7.
	lg := make([]float32, V)
	var b backend.Batch
	ref := []int32{7}
	for i := 0; i < 6; i++ {
		b.Reset()
		b.Add(ref[i], int32(i), 0, true)
		if err := be.Forward(&b, lg); err != nil {
			t.Fatal(err)
		}
		ref = append(ref, int32(sample.Greedy(lg)))
	}
	// Drafts: slot 0 all correct (k=5), slot 1 wrong at 2 (k=3), slots 2
	// and 3 empty and k=1; all start from token 7 at position 0.
	var blocks []*verify.Block
	drafts := [][]int32{ref[1:6], {ref[1], ref[2], (ref[3] + 1) % int32(V)}, nil, {ref[1]}}
	for s, d := range drafts {
		if err := be.Rollback(s, 0); err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, &verify.Block{Seq: int32(s), Pos: 0, Last: 7, Draft: d, Tokens: make([]int32, 0, 6)})
	}
	step := func() {
		if err := v.Verify(blocks); err != nil {
			t.Fatal(err)
		}
	}
	step()
	wantAcc := []int{5, 2, 0, 1}
	for s, b := range blocks {
		if b.Accepted != wantAcc[s] {
			t.Errorf("slot %d: accepted %d, want %d", s, b.Accepted, wantAcc[s])
		}
		for i, tok := range b.Tokens {
			if tok != ref[i+1] {
				t.Errorf("slot %d: token %d = %d, want %d", s, i, tok, ref[i+1])
			}
		}
		if be.Len(s) != 1+b.Accepted {
			t.Errorf("slot %d: cache length %d, want %d", s, be.Len(s), 1+b.Accepted)
		}
	}
	if n := testing.AllocsPerRun(20, step); n != 0 {
		t.Errorf("%v allocations per verification step", n)
	}
}
