package gguf

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

const peerModels = "../../.cache/llama.cpp/models"

// peerFile returns the path of a llama.cpp vocabulary file, skipping the
// test when the peer checkout is absent unless SPECD_REQUIRE_PEER=1.
func peerFile(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(peerModels, name)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("SPECD_REQUIRE_PEER") == "1" {
			t.Fatalf("peer file missing (run bash tools/peer/fetch.sh): %v", err)
		}
		t.Skipf("peer file missing (run bash tools/peer/fetch.sh): %v", err)
	}
	return p
}

func TestVocabLlamaSPM(t *testing.T) {
	f, err := Open(peerFile(t, "ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Version != 3 || f.Alignment != 32 || len(f.Tensors) != 0 {
		t.Errorf("version %d alignment %d tensors %d", f.Version, f.Alignment, len(f.Tensors))
	}
	if s, _ := f.String("general.architecture"); s != "llama" {
		t.Errorf("general.architecture = %q", s)
	}
	if s, _ := f.String("tokenizer.ggml.model"); s != "llama" {
		t.Errorf("tokenizer.ggml.model = %q", s)
	}
	if n, ok := f.Uint("llama.vocab_size"); n != 32000 || !ok {
		t.Errorf("llama.vocab_size = %d, %v", n, ok)
	}
	if n, ok := f.Int("llama.context_length"); n != 4096 || !ok {
		t.Errorf("llama.context_length = %d, %v", n, ok)
	}
	if e, ok := f.Float("llama.attention.layer_norm_rms_epsilon"); float32(e) != 1e-5 || !ok {
		t.Errorf("rms epsilon = %v, %v", e, ok)
	}
	if b, ok := f.Bool("tokenizer.ggml.add_bos_token"); !b || !ok {
		t.Errorf("add_bos_token = %v, %v", b, ok)
	}
	toks, ok := f.Strings("tokenizer.ggml.tokens")
	if !ok || len(toks) != 32000 || toks[0] != "<unk>" || toks[1] != "<s>" || toks[2] != "</s>" || toks[3] != "<0x00>" {
		t.Errorf("tokens: ok %v, %d entries", ok, len(toks))
	}
	scores, ok := f.Float32s("tokenizer.ggml.scores")
	if !ok || len(scores) != 32000 {
		t.Errorf("scores: ok %v, %d entries", ok, len(scores))
	}
	types, ok := f.Int32s("tokenizer.ggml.token_type")
	if !ok || len(types) != 32000 || types[0] != 2 || types[1] != 3 || types[3] != 6 {
		t.Errorf("token types: ok %v, %v", ok, types[:min(4, len(types))])
	}
}

// TestVocabFilesRewrite reads every vocabulary GGUF llama.cpp ships and
// checks that writing its metadata back gives the original bytes (plus the
// alignment padding ggml's writer also adds after the header).
func TestVocabFilesRewrite(t *testing.T) {
	peerFile(t, "ggml-vocab-llama-spm.gguf")
	paths, _ := filepath.Glob(filepath.Join(peerModels, "*.gguf"))
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			orig, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(orig)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Tensors) != 0 {
				t.Skipf("%d tensors: not a metadata-only file", len(f.Tensors))
			}
			if f.Version == 2 {
				// The writer makes v3, whose little-endian layout is v2's.
				orig = append([]byte(nil), orig...)
				orig[4] = 3
			}
			w := NewWriter()
			for _, kv := range f.KV {
				w.Set(kv.Key, kv.Value)
			}
			out, err := w.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			if len(out) < len(orig) || !bytes.Equal(out[:len(orig)], orig) || len(bytes.Trim(out[len(orig):], "\x00")) != 0 {
				t.Errorf("rewritten file (%d bytes) differs from the original (%d bytes)", len(out), len(orig))
			}
		})
	}
}

// BenchmarkOpenVocab measures opening and parsing a 32000-token vocabulary.
func BenchmarkOpenVocab(b *testing.B) {
	p := filepath.Join(peerModels, "ggml-vocab-llama-spm.gguf")
	if _, err := os.Stat(p); err != nil {
		b.Skip("peer file missing (run bash tools/peer/fetch.sh)")
	}
	for b.Loop() {
		f, err := Open(p)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}
