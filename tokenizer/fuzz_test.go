package tokenizer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzVocabs are the vocabularies FuzzRoundTrip checks.
var fuzzVocabs = []string{"llama-spm", "llama-bpe", "qwen2", "gpt-2", "deepseek-llm"}

// FuzzRoundTrip checks that decoding the encoding of valid UTF-8 gives the
// text back on each vocabulary, and that invalid UTF-8 gives an
// *InvalidUTF8Error, never a panic. The streaming Decoder must give the text
// back exactly; Decode too where the vocabulary does not clean up spaces
// (llama.cpp's clean_up_tokenization_spaces is lossy by design).
// SentencePiece treats "▁" in the input as a space, as llama.cpp does.
func FuzzRoundTrip(f *testing.F) {
	var toks []*Tokenizer
	for _, name := range fuzzVocabs {
		if _, err := os.Stat(filepath.Join(peerModels(), "ggml-vocab-"+name+".gguf")); err != nil {
			continue
		}
		toks = append(toks, loadVocab(f, name))
	}
	if len(toks) == 0 {
		skipNoPeer(f, filepath.Join(peerModels(), "ggml-vocab-llama-spm.gguf"))
	}
	for _, s := range []string{"", " ", "Hello world", "  two", "tab\tnew\nline\r\n", "I'm 'S' we'LL",
		"12345", "日本語 🦙 Ünïcödé", "<s>x</s><|im_start|>", "a\xffb", "\xe2\x82", " ▁ ", "\u00a0\u3000\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range toks {
			ids, err := tok.Encode(s, false, false)
			if !utf8.ValidString(s) {
				var ue *InvalidUTF8Error
				if !errors.As(err, &ue) {
					t.Fatalf("%s: Encode(%q) err = %v, want *InvalidUTF8Error", tok.model, s, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: Encode(%q): %v", tok.model, s, err)
			}
			want := s
			if tok.typ == SPM {
				want = strings.ReplaceAll(s, "▁", " ")
			}
			d := tok.NewDecoder()
			var sb strings.Builder
			for _, id := range ids {
				sb.WriteString(d.Add(id))
			}
			sb.WriteString(d.Flush())
			if sb.String() != want {
				t.Fatalf("%s/%s: stream-decode(Encode(%q)) = %q (ids %v)", tok.model, tok.pre, s, sb.String(), ids)
			}
			if !tok.cleanSpaces {
				if got := tok.Decode(ids); got != want {
					t.Fatalf("%s/%s: Decode(Encode(%q)) = %q", tok.model, tok.pre, s, got)
				}
			}
		}
	})
}
