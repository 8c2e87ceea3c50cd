package model_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/model"
	"github.com/specd-dev/specd/model/modeltest"
)

// TestProfile: with a Profile set, Forward times each of its stages (and
// computes the same logits as without); without, it times nothing.
func TestProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := modeltest.Write(path, modeltest.Options{Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, FFN: 96, Vocab: 300, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	run := func(p *model.Profile) ([]float32, time.Duration) {
		kv, err := m.NewCache(1, 64, false)
		if err != nil {
			t.Fatal(err)
		}
		st := m.NewState(8, nil)
		st.SetProfile(p)
		b := backend.NewBatch(8)
		for i := range 8 {
			b.Add(int32(10+i), int32(i), 0, i == 7)
		}
		lg := make([]float32, m.Config.Vocab)
		t0 := time.Now()
		if err := st.Forward(&b, kv, lg); err != nil {
			t.Fatal(err)
		}
		return lg, time.Since(t0)
	}
	var p model.Profile
	got, wall := run(&p)
	want, _ := run(nil)
	if !slices.Equal(got, want) {
		t.Error("profiling changed the logits")
	}
	var sum time.Duration
	for op := model.Op(0); op < model.NumOps; op++ {
		if p[op] <= 0 && op != model.OpSwiGLU && op != model.OpEmbed {
			t.Errorf("%s: %v", op, p[op])
		}
		sum += p[op]
	}
	if sum <= 0 || sum > wall {
		t.Errorf("stages sum to %v, Forward took %v", sum, wall)
	}
	if model.OpAttention.String() != "attention" || model.Op(99).String() != "op 99" {
		t.Errorf("names %q %q", model.OpAttention, model.Op(99))
	}
}
