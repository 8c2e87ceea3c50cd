package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/peertest"
)

func peerVocabPath(t *testing.T, name string) string {
	t.Helper()
	return peertest.File(t, filepath.Join(peertest.Models(), "ggml-vocab-"+name+".gguf"))
}

func TestTokenizeCommand(t *testing.T) {
	vocab := peerVocabPath(t, "llama-bpe")
	// Expected ids are llama.cpp's (tokenizer/testdata/encode-llama-bpe.golden.jsonl).
	if code, out, errOut := runCmd("tokenize", "-m", vocab, "Hello world"); code != 0 || out != "9906 1917\n" {
		t.Errorf("plain: code %d, out %q, stderr %q", code, out, errOut)
	}
	if code, out, _ := runCmd("tokenize", "-m", vocab, "--add-special", "Hello world"); code != 0 || out != "128000 9906 1917\n" {
		t.Errorf("--add-special: code %d, out %q", code, out)
	}
	const chat = "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
	if code, out, _ := runCmd("tokenize", "-m", vocab, "--parse-special", chat); code != 0 || out != "128000 128006 882 128007 271 13347 128009\n" {
		t.Errorf("--parse-special: code %d, out %q", code, out)
	}
	// -f reads the bytes exactly, trailing newline included.
	path := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(path, []byte("Hello world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCmd("tokenize", "-m", vocab, "-f", path)
	if code != 0 || out != "9906 1917 198\n" {
		t.Errorf("-f: code %d, out %q", code, out)
	}
	if err := os.WriteFile(path, []byte("bad \xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCmd("tokenize", "-m", vocab, "-f", path); code != 1 || !strings.Contains(errOut, "invalid UTF-8 at byte 4") {
		t.Errorf("invalid UTF-8: code %d, stderr %q", code, errOut)
	}
	for _, args := range [][]string{{"tokenize", "x"}, {"tokenize", "-m", vocab}, {"tokenize", "-m", vocab, "-f", path, "x"}} {
		if code, _, _ := runCmd(args...); code != 2 {
			t.Errorf("%q: code %d, want 2 (usage)", args, code)
		}
	}
}
