package model

import (
	"path/filepath"
	"testing"

	"github.com/specd-dev/specd/model/modeltest"
)

func loadShareModel(t *testing.T, name string, o modeltest.Options) *Model {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".gguf")
	if err := modeltest.Write(path, o); err != nil {
		t.Fatal(err)
	}
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestShareEmbeddings(t *testing.T) {
	target := loadShareModel(t, "target", modeltest.Options{Dim: 64, Layers: 2, Heads: 4, FFN: 96, Vocab: 300, Seed: 1})
	tied := loadShareModel(t, "tied", modeltest.Options{Dim: 64, Layers: 1, Heads: 2, FFN: 64, Vocab: 300, Seed: 2, Tied: true})
	untied := loadShareModel(t, "untied", modeltest.Options{Dim: 64, Layers: 1, Heads: 2, FFN: 64, Vocab: 300, Seed: 3})
	narrow := loadShareModel(t, "narrow", modeltest.Options{Dim: 32, Layers: 1, Heads: 2, FFN: 64, Vocab: 300, Seed: 4})
	other := loadShareModel(t, "other", modeltest.Options{Dim: 64, Layers: 1, Heads: 2, FFN: 64, Vocab: 320, Seed: 5})

	logits := func(m *Model) []float32 {
		kv, err := m.NewCache(1, 4, false)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float32, m.Config.Vocab)
		var b Batch
		b.Add(7, 0, 0, true)
		if err := m.NewState(1, nil).Forward(&b, kv, out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := logits(tied)
	if !tied.ShareEmbeddings(target) {
		t.Fatal("tied draft of the same shape refused")
	}
	if tied.w.tokEmbd != target.w.tokEmbd || tied.w.output != target.w.tokEmbd {
		t.Error("tied draft does not use the target's embeddings for input and output")
	}
	after := logits(tied)
	same := true
	for i := range before {
		same = same && before[i] == after[i]
	}
	if same {
		t.Error("sharing did not change the draft's logits")
	}
	ownOutput := untied.w.output
	if !untied.ShareEmbeddings(target) || untied.w.tokEmbd != target.w.tokEmbd || untied.w.output != ownOutput {
		t.Error("untied draft: want the target's input embeddings and its own output")
	}
	if narrow.ShareEmbeddings(target) || other.ShareEmbeddings(target) || target.ShareEmbeddings(target) {
		t.Error("sharing accepted a different width, a different vocabulary or the model itself")
	}
}
