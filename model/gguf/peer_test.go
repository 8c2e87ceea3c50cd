package gguf

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/peertest"
	"github.com/specd-dev/specd/tensor"
)

var peerModels = peertest.Models()

// peerFile returns the path of a llama.cpp vocabulary file (see peertest
// for what happens when it is missing).
func peerFile(t *testing.T, name string) string {
	t.Helper()
	return peertest.File(t, filepath.Join(peerModels, name))
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
				// Vocabulary files are metadata only; this comparison rewrites metadata.
				t.Fatalf("%d tensors in a vocabulary file", len(f.Tensors))
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

// peerTool compiles testdata/ggufpeer.c against the peer's libggml-base,
// ending the test under peertest's rule when the library or a C compiler
// is missing.
func peerTool(t *testing.T) string {
	t.Helper()
	root, lib := peertest.Src(), peertest.Bin()
	missing := func(why string) { peertest.Missing(t, why) }
	if _, err := os.Stat(filepath.Join(lib, "libggml-base.so")); err != nil {
		missing("peer libggml-base.so missing")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		missing("no C compiler")
	}
	bin := filepath.Join(t.TempDir(), "ggufpeer")
	out, err := exec.Command(cc, "-O1", "-I", filepath.Join(root, "ggml", "include"), "testdata/ggufpeer.c",
		"-L", lib, "-lggml-base", "-Wl,-rpath,"+lib, "-o", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("compiling ggufpeer: %v\n%s", err, out)
	}
	return bin
}

// peerDump runs the peer tool; ggml's GGUF code does the reading.
func peerDump(t *testing.T, tool, path string) string {
	t.Helper()
	out, err := exec.Command(tool, "dump", path).Output()
	if err != nil {
		t.Fatalf("ggml cannot read %s: %v\n%s", path, err, out)
	}
	return string(out)
}

var ggufTypeNames = [...]string{"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64"}

// dump prints f in the format of ggufpeer's dump (strings as length:hex,
// cut at a NUL as ggml's C API returns them; floats as bit patterns).
func dump(f *File) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version %d\nalignment %d\ndata_offset %d\n", f.Version, f.Alignment, f.DataOffset)
	scalar := func(v Value) {
		switch x := v.Any().(type) {
		case string:
			if i := strings.IndexByte(x, 0); i >= 0 {
				x = x[:i]
			}
			fmt.Fprintf(&b, "%d:%x", len(x), x)
		case float32:
			fmt.Fprintf(&b, "f%08x", math.Float32bits(x))
		case float64:
			fmt.Fprintf(&b, "d%016x", math.Float64bits(x))
		case bool:
			if x {
				b.WriteString("1")
			} else {
				b.WriteString("0")
			}
		default:
			fmt.Fprint(&b, x)
		}
	}
	for _, kv := range f.KV {
		v := kv.Value
		fmt.Fprintf(&b, "kv %s %s ", kv.Key, ggufTypeNames[v.Type()])
		if !v.IsArray() {
			scalar(v)
			b.WriteString("\n")
			continue
		}
		fmt.Fprintf(&b, "%s %d\n", ggufTypeNames[v.ElemType()], v.Len())
		for i := range v.Len() {
			b.WriteString("  ")
			scalar(v.Index(i))
			b.WriteString("\n")
		}
	}
	for _, t := range f.Tensors {
		ne := [4]uint64{1, 1, 1, 1}
		copy(ne[:], t.Dims)
		fmt.Fprintf(&b, "tensor %s %s %d %d %d %d %d %d\n", t.Name, strings.ToLower(t.Type.String()),
			ne[0], ne[1], ne[2], ne[3], t.Offset, t.Size())
	}
	return b.String()
}

// sameDump compares two dumps, reporting the first differing line.
func sameDump(t *testing.T, what, ours, ggml string) {
	t.Helper()
	if ours == ggml {
		return
	}
	a, g := strings.Split(ours, "\n"), strings.Split(ggml, "\n")
	for i := range max(len(a), len(g)) {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(g) {
			y = g[i]
		}
		if x != y {
			t.Fatalf("%s: line %d differs:\n specd: %q\n  ggml: %q", what, i+1, x, y)
		}
	}
}

// TestPeerReadsOurFiles checks that ggml reads what the Writer writes, and
// sees the same metadata, shapes and offsets as Parse.
func TestPeerReadsOurFiles(t *testing.T) {
	tool := peerTool(t)
	for _, align := range []uint32{0, 64} {
		w, _ := sampleWriter(t, 7)
		w.Delete("nested") // ggml has no arrays of arrays
		w.Delete("deep")
		if align != 0 {
			w.SetUint32(AlignmentKey, align)
		}
		path := filepath.Join(t.TempDir(), "ours.gguf")
		if err := w.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sameDump(t, fmt.Sprintf("alignment %d", align), dump(f), peerDump(t, tool, path))
		f.Close()
	}
}

// TestPeerWrites checks that Parse reads a file written by ggml's writer.
func TestPeerWrites(t *testing.T) {
	tool := peerTool(t)
	path := filepath.Join(t.TempDir(), "ggml.gguf")
	if out, err := exec.Command(tool, "write", path).CombinedOutput(); err != nil {
		t.Fatalf("ggml write: %v\n%s", err, out)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sameDump(t, "ggml-written file", dump(f), peerDump(t, tool, path))
	if s, _ := f.Strings("tokens"); len(s) != 3 || s[2] != "\u2581b" {
		t.Errorf("tokens = %q", s)
	}
	for k, ti := range f.Tensors {
		for i, c := range ti.Data {
			if c != byte(i*7+k) {
				t.Fatalf("tensor %q byte %d = %d, want %d", ti.Name, i, c, byte(i*7+k))
			}
		}
	}
	if len(f.Tensors) != 4 || f.Tensors[3].Type != tensor.Q4_K {
		t.Errorf("tensors: %d", len(f.Tensors))
	}
}

// TestPeerVocabFiles compares Parse with ggml on real vocabulary files.
func TestPeerVocabFiles(t *testing.T) {
	tool := peerTool(t)
	for _, name := range []string{"llama-spm", "qwen2", "gpt-2", "bert-bge", "aquila"} {
		p := peerFile(t, "ggml-vocab-"+name+".gguf")
		f, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sameDump(t, name, dump(f), peerDump(t, tool, p))
		f.Close()
	}
}
