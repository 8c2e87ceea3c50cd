// Package golden compares what a test produces with a golden file under
// testdata, as gofmt's tests do: a mismatch writes the output beside the
// golden file (testdata/NAME.golden → testdata/NAME.got) and names both
// files for diff, and
//
//	go test ./pkg -run TestX -update
//
// rewrites the golden files of the tests it runs. A test package that
// imports golden gets the -update flag.
//
// It is for files that hold specd's own output (wire formats, reports).
// Golden files made by another program, llama.cpp's tokenizer and ggml's
// kernels (tokenizer, tensor and model testdata), are regenerated with that
// program, as their tests say, never from specd's output.
package golden

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata with the tests' output")

// Updating reports whether the test binary runs with -update.
func Updating() bool { return *update }

// GotPath is where Check writes the output that differs from the golden
// file at path: path without its .golden suffix, plus .got.
func GotPath(path string) string { return strings.TrimSuffix(path, ".golden") + ".got" }

// Check compares got with the golden file at path. With -update it writes
// got to path instead. On a mismatch it writes got to GotPath(path) and
// fails t naming both files; on a match it removes a stale .got file.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	gotPath := GotPath(path)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("golden: %v", err)
		}
		os.Remove(gotPath)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v (go test -run '^%s$' -update writes it)", err, t.Name())
	}
	if bytes.Equal(got, want) {
		os.Remove(gotPath)
		return
	}
	if err := os.WriteFile(gotPath, got, 0o644); err != nil {
		t.Fatalf("golden: %s differs from the output, which cannot be written: %v", path, err)
	}
	t.Errorf("%s differs from the output: diff %s %s (go test -run '^%s$' -update accepts it)", path, path, gotPath, t.Name())
}
