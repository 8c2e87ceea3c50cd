// Package peertest is the one place where specd's tests find the llama.cpp
// reference they compare against ("the peer": the source checkout with its
// vocabulary files and test vectors, and the tools built from it, all under
// .cache/ at the repository root) and decide what happens when it is absent.
//
// The rule: a test that needs the peer fails, naming the command that
// installs it, unless the quick suite was asked for with -short, in which
// case it is skipped. The README's test command installs the peer first, so
// a full run never skips these tests.
package peertest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Root is the repository root (the directory holding go.mod).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Src is the llama.cpp checkout made by tools/peer/fetch.sh.
func Src() string { return filepath.Join(Root(), ".cache", "llama.cpp") }

// Models holds llama.cpp's vocabulary GGUFs, tokenizer test vectors and chat
// templates.
func Models() string { return filepath.Join(Src(), "models") }

// Bin holds the tools and libraries built by tools/peer/build.sh.
func Bin() string { return filepath.Join(Src(), "build", "bin") }

// Missing ends tb because the peer piece named by what is absent: a failure,
// or a skip under -short.
func Missing(tb testing.TB, what string) {
	tb.Helper()
	const fix = "run bash tools/peer/build.sh (the README's test command does)"
	if testing.Short() {
		tb.Skipf("%s; skipped with -short (%s)", what, fix)
	}
	tb.Fatalf("%s: %s", what, fix)
}

// File returns path after checking that it exists, calling Missing if not.
func File(tb testing.TB, path string) string {
	tb.Helper()
	if _, err := os.Stat(path); err != nil {
		Missing(tb, "peer file missing: "+err.Error())
	}
	return path
}
