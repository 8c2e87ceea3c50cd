//go:build !nollamacpp && ((linux && !android) || darwin || (android && cgo)) && (amd64 || arm64)

package llamacpp

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/internal/peertest"
)

// foreignELF writes the 64-byte header of an ELF shared library for
// another architecture than this process's.
func foreignELF(t *testing.T, path string) {
	t.Helper()
	m := elf.EM_AARCH64
	if runtime.GOARCH == "arm64" {
		m = elf.EM_X86_64
	}
	h := elf.Header64{Type: uint16(elf.ET_DYN), Machine: uint16(m), Version: 1, Ehsize: 64, Phentsize: 56, Shentsize: 64}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS], h.Ident[elf.EI_DATA], h.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	var b bytes.Buffer
	if err := binary.Write(&b, binary.LittleEndian, h); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLoadBadPaths: no library, a directory without one, a file that is
// not a shared library, and one for another architecture each give
// ErrLibrary naming the path, without calling into anything.
func TestLoadBadPaths(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "libllama.txt.so")
	if err := os.WriteFile(text, []byte("not a library\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	arm := filepath.Join(dir, "libllama-other-arch.so")
	foreignELF(t, arm)
	empty := t.TempDir()
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"", []string{"no path given", "SPECD_LLAMA_LIB"}},
		{filepath.Join(dir, "missing", "libllama.so"), []string{"missing/libllama.so", "no such file"}},
		{empty, []string{"no libllama.* in directory " + empty}},
		{text, []string{text, "not an ELF shared library"}},
		{arm, []string{arm, "is built for", "this specd for " + runtime.GOARCH}},
	} {
		_, err := Load(tc.path)
		if !errors.Is(err, ErrLibrary) {
			t.Errorf("Load(%q): %v, want ErrLibrary", tc.path, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Load(%q): %q lacks %q", tc.path, err, w)
			}
		}
	}
}

// TestLoadBadLibraries: a real shared library that is not libllama (ggml's
// base library, next to it) is missing llama_version; the real libllama
// with another expected version is refused naming both versions; the real
// one as shipped loads, as its directory too, to the same Lib.
func TestLoadBadLibraries(t *testing.T) {
	path := peertest.LlamaLib(t)
	dir := filepath.Dir(path)
	base := filepath.Join(dir, "libggml-base.so")
	_, err := Load(base)
	var se *SymbolError
	if !errors.Is(err, ErrSymbol) || !errors.As(err, &se) || se.Symbol != "llama_version" || !strings.Contains(err.Error(), "libggml-base.so has no symbol llama_version") {
		t.Errorf("Load(%s): %v, want a missing llama_version", base, err)
	}
	_, err = load(path, []string{"0.3.9", "0.5.0"})
	var ve *VersionError
	if !errors.Is(err, ErrVersion) || !errors.As(err, &ve) || ve.Found != "0.4.0-dev" {
		t.Fatalf("load with other versions: %v", err)
	}
	resolved, _ := filepath.EvalSymlinks(path)
	for _, w := range []string{"llama.cpp 0.4.0-dev", "supported: 0.3.9, 0.5.0", resolved} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q lacks %q", err, w)
		}
	}
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := Load(dir)
	if err != nil || l2 != l {
		t.Fatalf("Load(%s): %p, %v; Load(%s) gave %p", dir, l2, err, path, l)
	}
	if !strings.Contains(l.SystemInfo, "CPU") || len(l.Devices()) == 0 || l.Devices()[0].Type != "CPU" {
		t.Errorf("system info %q, devices %+v", l.SystemInfo, l.Devices())
	}
	t.Logf("%s: %s; %s", l, l.SystemInfo, l.Devices())
}

// TestLayoutCheck: defaults that differ from the pinned ones are named.
func TestLayoutCheck(t *testing.T) {
	got := defaultContextParams
	got.nOutputsMaxPerSeq = 7
	if d := diffFields(got, defaultContextParams); d != "nOutputsMaxPerSeq 7, want 1" {
		t.Errorf("diff %q", d)
	}
	if d := diffFields(defaultModelParams, defaultModelParams); d != "" {
		t.Errorf("diff of equal structs %q", d)
	}
}

// tinyModel is a small GGUF llama that llama.cpp loads: the bundled
// draft's file in the repository (models/).
func tinyModel(t *testing.T) string {
	t.Helper()
	return peertest.File(t, filepath.Join(peertest.Root(), "models", "specd-draft.gguf"))
}

// TestModelAndContextErrors: a missing file, a file that is not GGUF, a
// GGUF file llama.cpp cannot read and an unknown device are ErrModel or
// ErrDevice errors naming the problem (quoting llama.cpp's own message
// where it has one); a context of no sequences is refused.
func TestModelAndContextErrors(t *testing.T) {
	l, err := Load(peertest.LlamaLib(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	notGGUF := filepath.Join(dir, "text.gguf")
	os.WriteFile(notGGUF, []byte("hello"), 0o644)
	broken := filepath.Join(dir, "broken.gguf")
	os.WriteFile(broken, append([]byte("GGUF\x03\x00\x00\x00"), bytes.Repeat([]byte{0xff}, 64)...), 0o644)
	for _, tc := range []struct {
		path string
		p    ModelParams
		is   error
		want []string
	}{
		{filepath.Join(dir, "missing.gguf"), ModelParams{}, ErrModel, []string{"missing.gguf", "no such file"}},
		{notGGUF, ModelParams{}, ErrModel, []string{notGGUF, "not a GGUF file"}},
		{broken, ModelParams{}, ErrModel, []string{broken, "llama.cpp:"}},
		{tinyModel(t), ModelParams{Device: "HTP0"}, ErrDevice, []string{`"HTP0"`, "it has: CPU"}},
	} {
		m, err := l.LoadModel(tc.path, tc.p)
		if err == nil {
			m.Close()
			t.Errorf("%s: loaded", tc.path)
			continue
		}
		if !errors.Is(err, tc.is) {
			t.Errorf("%s: %v, want %v", tc.path, err, tc.is)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", tc.path, err, w)
			}
		}
	}
	m, err := l.LoadModel(tinyModel(t), ModelParams{Device: "cpu", NGPULayers: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, p := range []ContextParams{{Seqs: 0, MaxPos: 8, MaxBatch: 8}, {Seqs: 1, MaxPos: 0, MaxBatch: 8}, {Seqs: 1, MaxPos: 8, MaxBatch: 8, Threads: -1}} {
		if _, err := m.NewBackend(p); !errors.Is(err, ErrContext) {
			t.Errorf("%+v: %v, want ErrContext", p, err)
		}
	}
}

// TestBatchErrors: every malformed batch is an ErrBatch naming what is
// wrong, changes nothing, and a good batch still runs after it; a bad
// rollback is an ErrRollback; a closed backend says so.
func TestBatchErrors(t *testing.T) {
	l, err := Load(peertest.LlamaLib(t))
	if err != nil {
		t.Fatal(err)
	}
	m, err := l.LoadModel(tinyModel(t), ModelParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	be, err := m.NewBackend(ContextParams{Seqs: 2, MaxPos: 32, MaxBatch: 4, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	v := m.Vocab()
	lg := make([]float32, 4*v)
	good := func() {
		t.Helper()
		var b backend.Batch
		b.Add(1, int32(be.Len(0)), 0, true)
		if err := be.Forward(&b, lg); err != nil {
			t.Fatalf("good batch after a bad one: %v", err)
		}
	}
	good()
	one := func(tok, pos, seq int32) *backend.Batch {
		var b backend.Batch
		b.Add(tok, pos, seq, true)
		return &b
	}
	for _, tc := range []struct {
		b      *backend.Batch
		logits []float32
		want   string
	}{
		{one(int32(v), 1, 0), lg, "outside the vocabulary"},
		{one(-1, 1, 0), lg, "outside the vocabulary"},
		{one(1, 1, 2), lg, "slot 2 of 2"},
		{one(1, 32, 0), lg, "position 32 outside [0, 32)"},
		{one(1, 3, 0), lg, "position 3 with 1 held"},
		{one(1, 1, 0), lg[:v-1], "logits for 1 tokens"},
		{func() *backend.Batch { b := one(1, 1, 0); b.Add(2, 3, 0, false); return b }(), lg, "not consecutive"},
		{func() *backend.Batch { b := one(1, 1, 0); b.Add(2, 1, 0, false); return b }(), lg, "not consecutive"},
		{func() *backend.Batch {
			var b backend.Batch
			for i := range 5 {
				b.Add(1, int32(1+i), 0, false)
			}
			return &b
		}(), lg, "5 tokens, at most 4"},
		{&backend.Batch{Tokens: []int32{1}, Pos: []int32{1}}, lg, "1 tokens, 1 positions, 0 slots"},
	} {
		err := be.Forward(tc.b, tc.logits)
		if !errors.Is(err, ErrBatch) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want ErrBatch with %q", tc.b, err, tc.want)
		}
		if be.Len(0) != 1 || be.Len(1) != 0 {
			t.Fatalf("after a bad batch: lengths %d, %d", be.Len(0), be.Len(1))
		}
	}
	good()
	for _, tc := range [][2]int{{0, 3}, {0, -1}, {2, 0}, {-1, 0}} {
		if err := be.Rollback(tc[0], tc[1]); !errors.Is(err, ErrRollback) {
			t.Errorf("Rollback(%d, %d): %v, want ErrRollback", tc[0], tc[1], err)
		}
	}
	if err := be.Rollback(0, 0); err != nil || be.Len(0) != 0 {
		t.Fatalf("Rollback(0, 0): %v, %d left", err, be.Len(0))
	}
	be.Close()
	be.Close()
	if err := be.Forward(one(1, 0, 0), lg); !errors.Is(err, ErrClosed) {
		t.Errorf("Forward after Close: %v", err)
	}
	if err := be.Rollback(0, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("Rollback after Close: %v", err)
	}
}
