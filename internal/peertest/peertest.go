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

// LlamaLib returns the libllama the llamacpp backend's tests load:
// $SPECD_LLAMA_LIB if set, else the CPU build of npm's
// @node-llama-cpp/linux-x64@3.21.1 that tools/peer/fetch.sh installs
// (linux/amd64 only). Missing, it calls Missing.
func LlamaLib(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("SPECD_LLAMA_LIB"); p != "" {
		return File(tb, p)
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		Missing(tb, "no libllama for "+runtime.GOOS+"/"+runtime.GOARCH+": set SPECD_LLAMA_LIB to one built for it")
	}
	return File(tb, NPMLlamaLib())
}

// NPMLlamaLib is the path of libllama in npm's @node-llama-cpp/linux-x64
// package under .cache/npm (present after tools/peer/fetch.sh on
// linux/amd64).
func NPMLlamaLib() string {
	return filepath.Join(Root(), ".cache", "npm", "node_modules", "@node-llama-cpp", "linux-x64", "bins", "linux-x64", "libllama.v0.4.0.so")
}
