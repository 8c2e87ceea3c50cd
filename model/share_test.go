package model

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd-dev/specd/model/gguf"
	"github.com/specd-dev/specd/model/modeltest"
)

// shareFile writes a random model and returns its parsed file.
func shareFile(t *testing.T, o modeltest.Options) *gguf.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := modeltest.Write(path, o); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// variant rebuilds src with the string metadata in set added and the
// tensors in data replaced, and loads it.
func variant(t *testing.T, src *gguf.File, set map[string]string, data map[string][]byte) *Model {
	t.Helper()
	w := gguf.NewWriter()
	for _, kv := range src.KV {
		w.Set(kv.Key, kv.Value)
	}
	for k, v := range set {
		w.SetString(k, v)
	}
	for _, ti := range src.Tensors {
		d := ti.Data
		if r, ok := data[ti.Name]; ok {
			d = r
		}
		if err := w.AddTensor(ti.Name, ti.Type, ti.Dims, d); err != nil {
			t.Fatal(err)
		}
	}
	b, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func tensorData(t *testing.T, f *gguf.File, name string) []byte {
	t.Helper()
	ti, ok := f.Tensor(name)
	if !ok {
		t.Fatalf("no %s", name)
	}
	return ti.Data
}

func TestShareEmbeddings(t *testing.T) {
	tf := shareFile(t, modeltest.Options{Dim: 64, Layers: 2, Heads: 4, FFN: 96, Vocab: 300, Seed: 1})
	tiedF := shareFile(t, modeltest.Options{Dim: 64, Layers: 1, Heads: 2, FFN: 64, Vocab: 300, Seed: 2, Tied: true})
	untiedF := shareFile(t, modeltest.Options{Dim: 64, Layers: 1, Heads: 2, FFN: 64, Vocab: 300, Seed: 3})
	narrowF := shareFile(t, modeltest.Options{Dim: 32, Layers: 1, Heads: 2, FFN: 64, Vocab: 300, Seed: 4, Tied: true})
	otherF := shareFile(t, modeltest.Options{Dim: 64, Layers: 1, Heads: 2, FFN: 64, Vocab: 320, Seed: 5, Tied: true})
	temb, tout := tensorData(t, tf, "token_embd.weight"), tensorData(t, tf, "output.weight")
	if bytes.Equal(temb, tensorData(t, tiedF, "token_embd.weight")) {
		t.Fatal("random models with the same embedding table: the test cannot tell sharing from not")
	}
	const hash = "0123456789abcdef"
	sameEmb := map[string][]byte{"token_embd.weight": temb}

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
	equal := func(a, b []float32) bool {
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return len(a) == len(b)
	}

	for _, tc := range []struct {
		name             string
		target, draft    *Model
		embd, output     bool
		embdHow, outHow  string
		sameLogitsBefore bool // identical tables: sharing must not change the logits
	}{
		// Equal recorded hashes: shared without comparing, even though the
		// tables differ here (the metadata is trusted, the bytes unread).
		{"metadata", variant(t, tf, map[string]string{SharedEmbdKey: hash}, nil), variant(t, tiedF, map[string]string{SharedEmbdKey: hash}, nil),
			true, true, "equal " + SharedEmbdKey, "tied", false},
		// Different recorded hashes: not shared, even if the bytes agree.
		{"metadata-differs", variant(t, tf, map[string]string{SharedEmbdKey: hash}, nil), variant(t, tiedF, map[string]string{SharedEmbdKey: "fedcba"}, sameEmb),
			false, false, "different " + SharedEmbdKey, "tied", false},
		// Only one file records a hash: byte comparison.
		{"bytes-one-hash", variant(t, tf, map[string]string{SharedEmbdKey: hash}, nil), variant(t, tiedF, nil, sameEmb),
			true, true, "byte comparison", "tied", true},
		{"bytes", variant(t, tf, nil, nil), variant(t, tiedF, nil, sameEmb),
			true, true, "byte comparison", "tied", true},
		{"differ", variant(t, tf, nil, nil), variant(t, tiedF, nil, nil),
			false, false, "contents differ", "tied", false},
		// Untied draft: the output head is compared on its own.
		{"untied-same-output", variant(t, tf, nil, nil), variant(t, untiedF, nil, map[string][]byte{"token_embd.weight": temb, "output.weight": tout}),
			true, true, "byte comparison", "byte comparison", true},
		{"untied-own-output", variant(t, tf, nil, nil), variant(t, untiedF, nil, sameEmb),
			true, false, "byte comparison", "output.weight: contents differ", true},
		{"untied-output-only", variant(t, tf, nil, nil), variant(t, untiedF, nil, map[string][]byte{"output.weight": tout}),
			false, true, "contents differ", "byte comparison", false},
		{"narrow", variant(t, tf, map[string]string{SharedEmbdKey: hash}, nil), variant(t, narrowF, map[string]string{SharedEmbdKey: hash}, nil),
			false, false, "dim 32", "dim 32", false},
		{"other-vocab", variant(t, tf, nil, nil), variant(t, otherF, nil, nil),
			false, false, "vocab 320", "vocab 320", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, tg := tc.draft, tc.target
			embd0, out0 := d.w.tokEmbd, d.w.output
			before := logits(d)
			s := d.Share(tg)
			if s.Embd != tc.embd || s.Output != tc.output || !strings.Contains(s.EmbdHow, tc.embdHow) || !strings.Contains(s.OutputHow, tc.outHow) {
				t.Fatalf("%v, want embd %v (%q), output %v (%q)", s, tc.embd, tc.embdHow, tc.output, tc.outHow)
			}
			wantEmbd, wantOut := embd0, out0
			if s.Embd {
				wantEmbd = tg.w.tokEmbd
			}
			if s.Output {
				wantOut = tg.w.output
				if d.w.tiedEmbd {
					wantOut = tg.w.tokEmbd
				}
			}
			if d.w.tokEmbd != wantEmbd || d.w.output != wantOut {
				t.Errorf("draft tables after %v: embd target's %v, output target's %v", s, d.w.tokEmbd == tg.w.tokEmbd, d.w.output == tg.w.output)
			}
			after := logits(d)
			if tc.sameLogitsBefore && !equal(before, after) {
				t.Error("sharing identical tables changed the draft's logits")
			}
			if tc.name == "metadata" && equal(before, after) {
				t.Error("the metadata case did not take the target's (different) table")
			}
			if !(s.Embd || s.Output) && !equal(before, after) {
				t.Error("nothing shared, yet the logits changed")
			}
		})
	}
	self := variant(t, tf, nil, nil)
	if s := self.Share(self); s.Embd || s.Output || !strings.Contains(s.EmbdHow, "is the target") {
		t.Errorf("sharing with itself: %v", s)
	}
	d := variant(t, tiedF, nil, sameEmb)
	if !d.ShareEmbeddings(variant(t, tf, nil, nil)) {
		t.Error("ShareEmbeddings refused an identical table")
	}
}

func TestForceShareEmbeddings(t *testing.T) {
	tf := shareFile(t, modeltest.Options{Dim: 64, Layers: 1, Heads: 4, FFN: 64, Vocab: 300, Seed: 1})
	tiedF := shareFile(t, modeltest.Options{Dim: 64, Layers: 1, Heads: 2, FFN: 64, Vocab: 300, Seed: 2, Tied: true})
	narrowF := shareFile(t, modeltest.Options{Dim: 32, Layers: 1, Heads: 2, FFN: 64, Vocab: 300, Seed: 4, Tied: true})
	target, d, narrow := variant(t, tf, nil, nil), variant(t, tiedF, nil, nil), variant(t, narrowF, nil, nil)
	if d.ShareEmbeddings(target) {
		t.Fatal("ShareEmbeddings shared a different table")
	}
	if !d.ForceShareEmbeddings(target) || d.w.tokEmbd != target.w.tokEmbd || d.w.output != target.w.tokEmbd {
		t.Error("ForceShareEmbeddings did not share a table of the same shape")
	}
	if narrow.ForceShareEmbeddings(target) || target.ForceShareEmbeddings(target) {
		t.Error("ForceShareEmbeddings accepted another width or the model itself")
	}
}
