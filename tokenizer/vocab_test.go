package tokenizer

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/specd-dev/specd/internal/peertest"
	"github.com/specd-dev/specd/model/gguf"
)

// peerModels is where tools/peer/fetch.sh puts llama.cpp's vocabulary files
// and tokenizer test vectors.
func peerModels() string { return peertest.Models() }

// skipNoPeer ends the test under peertest's rule when path is absent.
func skipNoPeer(t testing.TB, path string) {
	t.Helper()
	peertest.File(t, path)
}

var vocabCache sync.Map // name -> *Tokenizer

// loadVocab loads .cache/llama.cpp/models/ggml-vocab-<name>.gguf once.
func loadVocab(t testing.TB, name string) *Tokenizer {
	t.Helper()
	path := filepath.Join(peerModels(), "ggml-vocab-"+name+".gguf")
	skipNoPeer(t, path)
	if v, ok := vocabCache.Load(name); ok {
		return v.(*Tokenizer)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	defer f.Close()
	tok, err := New(f)
	if err != nil {
		t.Fatalf("tokenizer for %s: %v", name, err)
	}
	vocabCache.Store(name, tok)
	return tok
}

// *gguf.File is the Metadata New is given in practice.
var _ Metadata = (*gguf.File)(nil)

type vocabCase struct {
	text string
	ids  []int32
}

// readVectors reads llama.cpp's test vectors the way tests/test-tokenizer-0
// does: cases in .inp are separated by "\n__ggml_vocab_test__\n", .out has
// one line of space-separated ids per case.
func readVectors(t *testing.T, base string) []vocabCase {
	t.Helper()
	inp, err := os.ReadFile(base + ".inp")
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(base + ".out")
	if err != nil {
		t.Fatal(err)
	}
	const sep = "\n__ggml_vocab_test__\n"
	var texts []string
	raw := string(inp)
	for pos := 0; pos < len(raw); {
		next := strings.Index(raw[pos:], sep)
		if next < 0 {
			texts = append(texts, raw[pos:])
			break
		}
		texts = append(texts, raw[pos:pos+next])
		pos += next + len(sep)
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) != len(texts) {
		t.Fatalf("%s: %d inputs but %d outputs", base, len(texts), len(lines))
	}
	cases := make([]vocabCase, len(texts))
	for i, s := range texts {
		cases[i].text = s
		for _, f := range strings.Fields(lines[i]) {
			v, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s.out line %d: %v", base, i+1, err)
			}
			cases[i].ids = append(cases[i].ids, int32(v))
		}
	}
	return cases
}

// vectorVocabs are the vocabularies whose llama.cpp test vectors must pass.
var vectorVocabs = []string{"llama-spm", "llama-bpe", "qwen2", "gpt-2", "starcoder", "deepseek-llm", "qwen35", "refact", "command-r", "mpt", "deepseek-coder", "falcon", "phi-3"}

// TestVectors runs llama.cpp's tokenizer test vectors (add_special=false,
// parse_special=false, as test-tokenizer-0 does).
func TestVectors(t *testing.T) {
	for _, name := range vectorVocabs {
		t.Run(name, func(t *testing.T) {
			tok := loadVocab(t, name)
			base := filepath.Join(peerModels(), "ggml-vocab-"+name+".gguf")
			skipNoPeer(t, base+".inp")
			cases := readVectors(t, base)
			pass := 0
			for _, c := range cases {
				got, err := tok.Encode(c.text, false, false)
				if err != nil {
					t.Errorf("Encode(%q): %v", c.text, err)
					continue
				}
				if !slices.Equal(got, c.ids) {
					t.Errorf("Encode(%q):\n got  %v\n want %v", c.text, got, c.ids)
					continue
				}
				pass++
			}
			t.Logf("%s: %d/%d cases pass", name, pass, len(cases))
		})
	}
}
