package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/specd-dev/specd/tensor"
)

// randBytes returns n deterministic pseudo-random bytes.
func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

type testTensor struct {
	name string
	typ  tensor.Type
	dims []uint64
}

var testTensors = []testTensor{
	{"token_embd.weight", tensor.F32, []uint64{8, 5}},
	{"blk.0.attn_q.weight", tensor.F16, []uint64{6, 3}},
	{"blk.0.ffn_up.weight", tensor.Q8_0, []uint64{64, 3}},
	{"blk.0.ffn_down.weight", tensor.Q4_K, []uint64{256, 2}},
	{"blk.0.attn_norm.weight", tensor.F32, []uint64{7}},
	{"output.weight", tensor.Q5_K, []uint64{256, 1, 2, 1}}, // known, not supported: still read
	{"empty", tensor.F32, []uint64{0, 4}},
}

// sampleWriter returns a Writer with one key of every value type, nested
// arrays, and the test tensors filled with random bytes.
func sampleWriter(t testing.TB, seed uint64) (*Writer, map[string][]byte) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	w := NewWriter()
	w.SetString("general.architecture", "llama")
	w.SetUint32("llama.block_count", 2)
	w.SetInt32("i32", -7)
	w.SetUint64("u64", math.MaxUint64)
	w.SetFloat32("llama.rope.freq_base", 10000.5)
	w.SetBool("flag", true)
	w.SetStrings("tokenizer.ggml.tokens", []string{"<unk>", "", "héllo", "\x00\xff"})
	w.SetFloat32s("tokenizer.ggml.scores", []float32{0, -1.5, float32(math.Inf(1)), float32(math.NaN())})
	w.SetInt32s("tokenizer.ggml.token_type", []int32{2, 1, 1, -1})
	for _, x := range []any{uint8(200), int8(-100), uint16(60000), int16(-30000), int64(math.MinInt64), math.Pi,
		[]uint8{1, 2}, []int8{-1}, []uint16{}, []int16{5, -5}, []uint32{7, 8}, []bool{true, false, true},
		[]uint64{1 << 40}, []int64{-1, 1}, []float64{0.25}} {
		v, err := ValueOf(x)
		if err != nil {
			t.Fatal(err)
		}
		w.Set("k."+v.typ.String()+"."+v.elem.String(), v)
	}
	inner1, _ := ValueOf([]string{"a", "bc"})
	inner2, _ := ValueOf([]int32{})
	nested, err := ValueOf([]Value{inner1, inner2})
	if err != nil {
		t.Fatal(err)
	}
	deep, err := ValueOf([]Value{nested})
	if err != nil {
		t.Fatal(err)
	}
	w.Set("nested", nested)
	w.Set("deep", deep)
	data := map[string][]byte{}
	for _, tt := range testTensors {
		ti := TensorInfo{Dims: tt.dims, Type: tt.typ}
		b := randBytes(r, int(ti.Size()))
		if err := w.AddTensor(tt.name, tt.typ, tt.dims, b); err != nil {
			t.Fatal(err)
		}
		data[tt.name] = b
	}
	return w, data
}

func TestRoundTrip(t *testing.T) {
	for _, align := range []uint32{0, 64, 1} {
		w, data := sampleWriter(t, 1)
		if align != 0 {
			w.SetUint32(AlignmentKey, align)
		}
		b, err := w.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse(b)
		if err != nil {
			t.Fatalf("align %d: %v", align, err)
		}
		want := uint64(align)
		if align == 0 {
			want = DefaultAlignment
		}
		if f.Version != 3 || f.Alignment != want || f.DataOffset%want != 0 {
			t.Errorf("align %d: version %d alignment %d data offset %d", align, f.Version, f.Alignment, f.DataOffset)
		}
		if len(f.KV) != len(w.kv) {
			t.Fatalf("align %d: %d keys, want %d", align, len(f.KV), len(w.kv))
		}
		for i, kv := range w.kv {
			if f.KV[i].Key != kv.Key || !f.KV[i].Value.Equal(kv.Value) {
				t.Errorf("align %d: key %d = %s %v, want %s %v", align, i, f.KV[i].Key, f.KV[i].Value, kv.Key, kv.Value)
			}
		}
		if len(f.Tensors) != len(testTensors) {
			t.Fatalf("align %d: %d tensors, want %d", align, len(f.Tensors), len(testTensors))
		}
		for i, tt := range testTensors {
			ti := &f.Tensors[i]
			if ti.Name != tt.name || ti.Type != tt.typ || !slices.Equal(ti.Dims, tt.dims) || ti.Offset%want != 0 {
				t.Errorf("align %d: tensor %d = %q %s %v @%d, want %q %s %v", align, i, ti.Name, ti.Type, ti.Dims, ti.Offset, tt.name, tt.typ, tt.dims)
			}
			if !bytes.Equal(ti.Data, data[tt.name]) {
				t.Errorf("align %d: tensor %q data differs", align, tt.name)
			}
			if p, ok := f.Tensor(tt.name); !ok || p != ti {
				t.Errorf("align %d: Tensor(%q) = %v, %v", align, tt.name, p, ok)
			}
			if len(ti.Data) > 0 && &ti.Data[0] != &b[f.DataOffset+ti.Offset] {
				t.Errorf("align %d: tensor %q data is not a view into the buffer", align, tt.name)
			}
		}
		// Copying every value into a new writer gives the same bytes.
		w2 := NewWriter()
		for _, kv := range f.KV {
			w2.Set(kv.Key, kv.Value)
		}
		for _, ti := range f.Tensors {
			if err := w2.AddTensor(ti.Name, ti.Type, ti.Dims, ti.Data); err != nil {
				t.Fatal(err)
			}
		}
		b2, err := w2.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, b2) {
			t.Errorf("align %d: rewriting a parsed file changed its bytes", align)
		}
	}
}

// TestLayout pins the byte layout of a small file against a hand-written
// encoding of the GGUF v3 format.
func TestLayout(t *testing.T) {
	w := NewWriter()
	w.SetString("a", "xy")
	w.SetUint32("b", 5)
	if err := w.AddTensor("t", tensor.F32, []uint64{2}, []byte{1, 2, 3, 4, 5, 6, 7, 8}); err != nil {
		t.Fatal(err)
	}
	got, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	var r raw
	r.bytes([]byte("GGUF")).u32(3).u64(1).u64(2)
	r.str("a").u32(uint32(TypeString)).str("xy")
	r.str("b").u32(uint32(TypeUint32)).u32(5)
	r.str("t").u32(1).u64(2).u32(uint32(tensor.F32)).u64(0)
	r.pad(32).bytes([]byte{1, 2, 3, 4, 5, 6, 7, 8}).pad(32)
	if !bytes.Equal(got, r.b) {
		t.Fatalf("layout:\n got %x\nwant %x", got, r.b)
	}
	// An array of arrays: outer element type "array", count, then each
	// inner array's element type, count and items, without a tag per element.
	w = NewWriter()
	in1, _ := ValueOf([]uint8{7})
	in2, _ := ValueOf([]string{"z"})
	nest, _ := ValueOf([]Value{in1, in2})
	w.Set("n", nest)
	got2, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	r = raw{}
	r.bytes([]byte("GGUF")).u32(3).u64(0).u64(1)
	r.str("n").u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(2)
	r.u32(uint32(TypeUint8)).u64(1).u8(7)
	r.u32(uint32(TypeString)).u64(1).str("z").pad(32)
	if !bytes.Equal(got2, r.b) {
		t.Fatalf("nested layout:\n got %x\nwant %x", got2, r.b)
	}
	var n bytes.Buffer
	if c, err := w.WriteTo(&n); err != nil || c != int64(len(got2)) {
		t.Errorf("WriteTo = %d, %v; want %d", c, err, len(got))
	}
}

func TestGetters(t *testing.T) {
	w := NewWriter()
	w.SetInt32("pos", 12)
	w.SetInt32("neg", -3)
	w.SetUint32("u32", 4000000000)
	w.SetUint64("big", math.MaxUint64)
	w.SetFloat32("f", 1.5)
	w.SetString("s", "hi")
	w.SetBool("b", true)
	w.SetStrings("ss", []string{"x", "y"})
	w.SetFloat32s("fs", []float32{1, 2})
	w.SetInt32s("is", []int32{-1, 2})
	v, _ := ValueOf([]uint32{1, 2, 3})
	w.Set("u32s", v)
	v, _ = ValueOf([]uint32{1, math.MaxUint32})
	w.Set("u32s.big", v)
	v, _ = ValueOf(uint8(7))
	w.Set("u8", v)
	b, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	checkU := func(key string, want uint64, wantOK bool) {
		t.Helper()
		if got, ok := f.Uint(key); got != want || ok != wantOK {
			t.Errorf("Uint(%q) = %d, %v; want %d, %v", key, got, ok, want, wantOK)
		}
	}
	checkI := func(key string, want int64, wantOK bool) {
		t.Helper()
		if got, ok := f.Int(key); got != want || ok != wantOK {
			t.Errorf("Int(%q) = %d, %v; want %d, %v", key, got, ok, want, wantOK)
		}
	}
	checkU("pos", 12, true)
	checkU("neg", 0, false)
	checkU("u32", 4000000000, true)
	checkU("big", math.MaxUint64, true)
	checkU("u8", 7, true)
	checkU("s", 0, false)
	checkU("missing", 0, false)
	checkI("pos", 12, true)
	checkI("neg", -3, true)
	checkI("u32", 4000000000, true)
	checkI("big", 0, false)
	checkI("f", 0, false)
	if x, ok := f.Float("f"); x != 1.5 || !ok {
		t.Errorf("Float(f) = %v, %v", x, ok)
	}
	if x, ok := f.Float("pos"); x != 12 || !ok {
		t.Errorf("Float(pos) = %v, %v", x, ok)
	}
	if _, ok := f.Float("s"); ok {
		t.Errorf("Float(s) ok")
	}
	if s, ok := f.String("s"); s != "hi" || !ok {
		t.Errorf("String(s) = %q, %v", s, ok)
	}
	if _, ok := f.String("pos"); ok {
		t.Errorf("String(pos) ok")
	}
	if x, ok := f.Bool("b"); !x || !ok {
		t.Errorf("Bool(b) = %v, %v", x, ok)
	}
	if x, ok := f.Strings("ss"); !ok || strings.Join(x, ",") != "x,y" {
		t.Errorf("Strings(ss) = %q, %v", x, ok)
	}
	if x, ok := f.Float32s("fs"); !ok || len(x) != 2 || x[1] != 2 {
		t.Errorf("Float32s(fs) = %v, %v", x, ok)
	}
	if x, ok := f.Int32s("is"); !ok || len(x) != 2 || x[0] != -1 {
		t.Errorf("Int32s(is) = %v, %v", x, ok)
	}
	if x, ok := f.Int32s("u32s"); !ok || len(x) != 3 || x[2] != 3 {
		t.Errorf("Int32s(u32s) = %v, %v", x, ok)
	}
	if x, ok := f.Int32s("u32s.big"); ok {
		t.Errorf("Int32s(u32s.big) = %v, ok; want not ok (out of range)", x)
	}
	for _, c := range []struct {
		x    any
		want []int32
	}{
		{[]int8{-5, 5}, []int32{-5, 5}},
		{[]uint64{5}, []int32{5}},
		{[]int64{math.MinInt32, math.MaxInt32}, []int32{math.MinInt32, math.MaxInt32}},
		{[]int64{math.MinInt32 - 1}, nil},
		{[]uint64{math.MaxInt32 + 1}, nil},
		{int32(3), nil},
	} {
		v, _ := ValueOf(c.x)
		got, ok := v.Int32s()
		if ok != (c.want != nil) || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("Int32s(%v) = %v, %v; want %v", c.x, got, ok, c.want)
		}
	}
	if _, ok := f.Int32s("fs"); ok {
		t.Errorf("Int32s(fs) ok")
	}
	if _, ok := f.Get("missing"); ok {
		t.Errorf("Get(missing) ok")
	}
	if got := fmtValue(f, "ss"); got != `["x" "y"]` {
		t.Errorf("String() of ss = %s", got)
	}
}

func fmtValue(f *File, key string) string { v, _ := f.Get(key); return v.String() }

func TestOpenClose(t *testing.T) {
	w, data := sampleWriter(t, 2)
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range data {
		ti, ok := f.Tensor(name)
		if !ok || !bytes.Equal(ti.Data, want) {
			t.Errorf("tensor %q: ok %v, data equal %v", name, ok, ok && bytes.Equal(ti.Data, want))
		}
	}
	if s, _ := f.String("general.architecture"); s != "llama" {
		t.Errorf("architecture %q", s)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for _, ti := range f.Tensors {
		if ti.Data != nil {
			t.Errorf("tensor %q: Data kept after Close", ti.Name)
		}
	}
	// No temporary files are left beside the output.
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("%d files in output dir, want 1", len(ents))
	}

	// Opening does not copy tensor data: a 8 MiB tensor costs far less.
	big := NewWriter()
	if err := big.AddTensor("big", tensor.F32, []uint64{1024, 2048}, make([]byte, 8<<20)); err != nil {
		t.Fatal(err)
	}
	bigPath := filepath.Join(t.TempDir(), "big.gguf")
	if err := big.WriteFile(bigPath); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	bf, err := Open(bigPath)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if ti, _ := bf.Tensor("big"); len(ti.Data) != 8<<20 {
		t.Errorf("big tensor: %d bytes", len(ti.Data))
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
		t.Errorf("Open of an 8 MiB tensor allocated %d bytes", d)
	}
	bf.Close()

	if _, err := Open(filepath.Join(t.TempDir(), "missing.gguf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing) = %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.gguf")
	os.WriteFile(bad, []byte("GGML\x03\x00\x00\x00"), 0o644)
	_, err = Open(bad)
	var fe *FormatError
	if !errors.Is(err, ErrBadMagic) || !errors.As(err, &fe) || fe.Path != bad || !strings.Contains(err.Error(), bad) {
		t.Errorf("Open(bad) = %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.gguf")
	os.WriteFile(empty, nil, 0o644)
	if _, err := Open(empty); !errors.Is(err, ErrTruncated) {
		t.Errorf("Open(empty) = %v", err)
	}
}

func TestWriterErrors(t *testing.T) {
	w := NewWriter()
	cases := []struct {
		name string
		typ  tensor.Type
		dims []uint64
		n    int
		want string
	}{
		{"", tensor.F32, []uint64{1}, 4, "empty name"},
		{strings.Repeat("x", 64), tensor.F32, []uint64{1}, 4, "limit is 63"},
		{"t", tensor.Type(99), []uint64{1}, 4, "unknown ggml type 99"},
		{"t", tensor.F32, []uint64{1, 1, 1, 1, 1}, 4, "5 dimensions"},
		{"t", tensor.Q8_0, []uint64{31}, 34, "not a multiple"},
		{"t", tensor.F32, []uint64{2}, 4, "4 bytes of data"},
		{"t", tensor.F32, []uint64{1 << 40, 1 << 40}, 4, "too large"},
	}
	for _, c := range cases {
		err := w.AddTensor(c.name, c.typ, c.dims, make([]byte, c.n))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "gguf: ") {
			t.Errorf("AddTensor(%q, %s, %v) = %v, want %q", c.name, c.typ, c.dims, err, c.want)
		}
	}
	if err := w.AddTensor("t", tensor.F32, []uint64{1}, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	if err := w.AddTensor("t", tensor.F32, []uint64{1}, make([]byte, 4)); err == nil {
		t.Errorf("duplicate tensor accepted")
	}
	for _, bad := range []func(*Writer){
		func(w *Writer) { w.SetString("", "x") },
		func(w *Writer) { w.Set("k", Value{}) },
		func(w *Writer) { w.SetUint32(AlignmentKey, 48) },
		func(w *Writer) { w.SetInt32(AlignmentKey, 32) },
	} {
		w := NewWriter()
		bad(w)
		if _, err := w.Bytes(); err == nil {
			t.Errorf("bad writer input accepted")
		}
	}
	if _, err := ValueOf(3); err == nil {
		t.Errorf("ValueOf(int) accepted")
	}
	v, _ := ValueOf(int32(1))
	if _, err := ValueOf([]Value{v}); err == nil {
		t.Errorf("array of arrays with a scalar element accepted")
	}
	// Arrays nest up to maxNesting levels, as the reader allows.
	v, _ = ValueOf([]int32{1})
	for range maxNesting - 1 {
		v, _ = ValueOf([]Value{v})
	}
	w = NewWriter()
	w.Set("deep", v)
	b, err := w.Bytes()
	if err != nil {
		t.Fatalf("%d-deep array: %v", maxNesting, err)
	}
	if f, err := Parse(b); err != nil || !f.KV[0].Value.Equal(v) {
		t.Fatalf("%d-deep array read back: %v", maxNesting, err)
	}
	v, _ = ValueOf([]Value{v})
	w.Set("deeper", v)
	if _, err := w.Bytes(); err == nil || !strings.Contains(err.Error(), "nested") {
		t.Errorf("%d-deep array: err = %v", maxNesting+1, err)
	}
	// Delete removes a key and keeps the others in order.
	w = NewWriter()
	w.SetUint32("a", 1)
	w.SetUint32("b", 2)
	w.SetUint32("c", 3)
	w.Delete("a")
	w.Delete("missing")
	w.SetUint32("b", 4)
	if len(w.kv) != 2 || w.kv[0].Key != "b" || w.kv[0].Value.String() != "4" || w.kv[1].Key != "c" {
		t.Errorf("after Delete: %v", w.kv)
	}
	// Setting a key again keeps its position and takes the new value.
	w = NewWriter()
	w.SetUint32("a", 1)
	w.SetUint32("b", 2)
	w.SetString("a", "x")
	if len(w.kv) != 2 || w.kv[0].Key != "a" || w.kv[0].Value.String() != `"x"` {
		t.Errorf("re-set key: %v", w.kv)
	}
}

// raw builds GGUF bytes by hand, for crafted files.
type raw struct{ b []byte }

func (r *raw) bytes(p []byte) *raw { r.b = append(r.b, p...); return r }
func (r *raw) u8(v uint8) *raw     { r.b = append(r.b, v); return r }
func (r *raw) u32(v uint32) *raw   { r.b = binary.LittleEndian.AppendUint32(r.b, v); return r }
func (r *raw) u64(v uint64) *raw   { r.b = binary.LittleEndian.AppendUint64(r.b, v); return r }
func (r *raw) str(s string) *raw   { return r.u64(uint64(len(s))).bytes([]byte(s)) }
func (r *raw) zeros(n int) *raw    { return r.bytes(make([]byte, n)) }
func (r *raw) pad(a int) *raw {
	for len(r.b)%a != 0 {
		r.b = append(r.b, 0)
	}
	return r
}

// header starts a v3 file with the given counts.
func header(nTensors, nKV uint64) *raw {
	r := &raw{}
	return r.bytes([]byte(Magic)).u32(3).u64(nTensors).u64(nKV)
}

// oneTensor is a file with one F32 tensor of shape dims, type typ at offset
// off, and dataLen bytes of data.
func oneTensor(dims []uint64, typ tensor.Type, off uint64, dataLen int) []byte {
	r := header(1, 0)
	r.str("w").u32(uint32(len(dims)))
	for _, d := range dims {
		r.u64(d)
	}
	r.u32(uint32(typ)).u64(off).pad(32)
	return r.bytes(make([]byte, dataLen)).b
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name string
		b    []byte
		want error
		msg  string
	}{
		{"empty", nil, ErrTruncated, "magic"},
		{"bad magic", []byte("GGML\x03\x00\x00\x00"), ErrBadMagic, `"GGML"`},
		{"version 1", (&raw{}).bytes([]byte(Magic)).u32(1).u64(0).u64(0).b, ErrVersion, "version 1"},
		{"version 4", (&raw{}).bytes([]byte(Magic)).u32(4).u64(0).u64(0).b, ErrVersion, "version 4"},
		{"big endian", (&raw{}).bytes([]byte(Magic)).u32(0x03000000).u64(0).u64(0).b, ErrVersion, "big-endian"},
		{"huge tensor count", header(1<<62, 0).b, ErrTruncated, "tensor count"},
		{"huge kv count", header(0, 1<<62).b, ErrTruncated, "metadata count"},
		{"huge key length", header(0, 1).u64(1 << 62).zeros(8).b, ErrTruncated, "length 4611686018427387904 exceeds"},
		{"empty key", header(0, 1).str("").u32(0).u8(0).b, ErrInvalid, "empty"},
		{"duplicate key", header(0, 2).str("k").u32(0).u8(1).str("k").u32(0).u8(2).b, ErrDuplicate, `key "k": duplicate key`},
		{"unknown value type", header(0, 1).str("k").u32(13).u64(0).b, ErrValueType, "unknown value type 13"},
		{"unknown elem type", header(0, 1).str("k").u32(9).u32(77).u64(0).b, ErrValueType, "element type 77"},
		{"huge string value", header(0, 1).str("k").u32(8).u64(1 << 62).b, ErrTruncated, "length 4611686018427387904 exceeds"},
		{"huge array", header(0, 1).str("k").u32(9).u32(uint32(TypeUint64)).u64(1 << 60).b, ErrTruncated, "array length"},
		{"huge string array", header(0, 1).str("k").u32(9).u32(uint32(TypeString)).u64(1 << 60).b, ErrTruncated, "array length"},
		{"string in array too long", header(0, 1).str("k").u32(9).u32(uint32(TypeString)).u64(1).u64(100).b, ErrTruncated, "element 0"},
		{"truncated scalar", header(0, 1).str("k").u32(uint32(TypeUint64)).u32(0).b, ErrTruncated, "uint64 value"},
		{"bad bool", header(0, 1).str("k").u32(uint32(TypeBool)).u8(2).b, ErrInvalid, "bool"},
		{"bad bool in array", header(0, 1).str("k").u32(9).u32(uint32(TypeBool)).u64(2).u8(1).u8(7).b, ErrInvalid, "element 1"},
		{"nested bad type", header(0, 1).str("k").u32(9).u32(9).u64(1).u32(40).u64(0).b, ErrValueType, "element 0: unknown array element type 40"},
		{"nested too deep", deepArray(20), ErrInvalid, "nested"},
		{"nested one too deep", deepArray(maxNesting + 1), ErrInvalid, "nested more than 8 deep"},
		{"alignment type", header(0, 1).str(AlignmentKey).u32(uint32(TypeUint64)).u64(32).b, ErrAlignment, "must be uint32"},
		{"alignment not power of two", header(0, 1).str(AlignmentKey).u32(uint32(TypeUint32)).u32(24).b, ErrAlignment, "power of two"},
		{"alignment zero", header(0, 1).str(AlignmentKey).u32(uint32(TypeUint32)).u32(0).b, ErrAlignment, "power of two"},
		{"empty tensor name", header(1, 0).str("").zeros(24).b, ErrInvalid, "empty name"},
		{"long tensor name", header(1, 0).str(strings.Repeat("n", 64)).zeros(24).b, ErrInvalid, "limit is 63"},
		{"duplicate tensor", dupTensor(), ErrDuplicate, `tensor "w": duplicate tensor name`},
		{"too many dims", header(1, 0).str("w").u32(5).zeros(24).b, ErrShape, "5 dimensions"},
		{"negative dim", oneTensor([]uint64{1 << 63}, tensor.F32, 0, 0), ErrShape, "negative"},
		{"element overflow", oneTensor([]uint64{1 << 32, 1 << 32}, tensor.F32, 0, 0), ErrShape, "2^63"},
		{"byte overflow", oneTensor([]uint64{1 << 61, 2}, tensor.F32, 0, 0), ErrShape, "too large in bytes"},
		{"unknown tensor type", oneTensor([]uint64{4}, tensor.Type(5), 0, 16), ErrTensorType, "unknown ggml type 5"},
		{"not block multiple", oneTensor([]uint64{33, 2}, tensor.Q8_0, 0, 68), ErrShape, "block size 32"},
		{"misaligned offset", oneTensor([]uint64{4}, tensor.F32, 4, 64), ErrAlignment, "not a multiple of the alignment 32"},
		{"data past end", oneTensor([]uint64{8}, tensor.F32, 0, 31), ErrOutOfBounds, "past its end"},
		{"offset past end", oneTensor([]uint64{1}, tensor.F32, 1<<62, 64), ErrOutOfBounds, "past its end"},
		{"no data section", header(1, 0).str("w").u32(1).u64(1).u32(0).u64(0).b, ErrTruncated, "data section"},
		{"truncated tensor info", header(1, 0).str("w").u32(2).u64(1).b, ErrTruncated, "dimension 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse(c.b)
			if err == nil {
				t.Fatalf("parsed: %d keys, %d tensors", len(f.KV), len(f.Tensors))
			}
			var fe *FormatError
			if !errors.Is(err, c.want) || !errors.As(err, &fe) {
				t.Fatalf("err = %v (%T), want %v", err, err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "gguf: ") || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("err = %q, want it to mention %q", err, c.msg)
			}
			if fe.Offset < 0 || fe.Offset > int64(len(c.b)) {
				t.Errorf("offset %d outside the %d-byte file", fe.Offset, len(c.b))
			}
		})
	}
}

// TestParseInfo: a tensor of a ggml type package tensor does not know fails
// Parse but is described by ParseInfo (no Data, extent unchecked), next to
// a known tensor whose data is checked and viewed as usual.
func TestParseInfo(t *testing.T) {
	r := header(2, 0)
	r.str("iq2").u32(2).u64(256).u64(4).u32(16).u64(0) // GGML_TYPE_IQ2_XXS
	r.str("f").u32(1).u64(2).u32(uint32(tensor.F32)).u64(0).pad(32)
	b := r.bytes([]byte{1, 0, 0, 0, 2, 0, 0, 0}).b
	if _, err := Parse(b); !errors.Is(err, ErrTensorType) {
		t.Fatalf("Parse: %v, want ErrTensorType", err)
	}
	f, err := ParseInfo(b)
	if err != nil {
		t.Fatal(err)
	}
	iq, ok := f.Tensor("iq2")
	if !ok || iq.Type != 16 || iq.Data != nil || !slices.Equal(iq.Dims, []uint64{256, 4}) || iq.Elements() != 1024 {
		t.Errorf("iq2: %+v", iq)
	}
	if ft, ok := f.Tensor("f"); !ok || len(ft.Data) != 8 || ft.Data[4] != 2 {
		t.Errorf("f: %+v", ft)
	}
	// Known tensors are still checked.
	bad := oneTensor([]uint64{4}, tensor.F32, 0, 8)
	if _, err := ParseInfo(bad); !errors.Is(err, ErrOutOfBounds) {
		t.Errorf("ParseInfo of a truncated F32 tensor: %v, want ErrOutOfBounds", err)
	}
}

func TestNestingLimit(t *testing.T) {
	f, err := Parse(deepArray(maxNesting))
	if err != nil {
		t.Fatal(err)
	}
	v := f.KV[0].Value
	for range maxNesting - 1 {
		if v.ElemType() != TypeArray || v.Len() != 1 {
			t.Fatalf("level: elem %s len %d", v.ElemType(), v.Len())
		}
		v = v.Index(0)
	}
	if v.ElemType() != TypeUint8 || v.Len() != 0 {
		t.Errorf("innermost: elem %s len %d", v.ElemType(), v.Len())
	}
}

// deepArray is a file with one key holding depth arrays nested in one
// another, the innermost an empty uint8 array.
func deepArray(depth int) []byte {
	r := header(0, 1).str("k").u32(uint32(TypeArray))
	for range depth - 1 {
		r.u32(uint32(TypeArray)).u64(1)
	}
	return r.u32(uint32(TypeUint8)).u64(0).b
}

func dupTensor() []byte {
	r := header(2, 0)
	r.str("w").u32(1).u64(1).u32(0).u64(0)
	r.str("w").u32(1).u64(1).u32(0).u64(32)
	return r.pad(32).bytes(make([]byte, 64)).b
}

// TestTruncated cuts a valid file at every byte and checks each prefix is
// refused with a truncation or bounds error, never a panic.
func TestTruncated(t *testing.T) {
	w, _ := sampleWriter(t, 3)
	b, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	last := f.Tensors[len(f.Tensors)-1]
	end := int(f.DataOffset + last.Offset + last.Size()) // end of the last byte that matters
	for n := range end {
		_, err := Parse(b[:n])
		want := ErrTruncated
		if uint64(n) >= f.DataOffset {
			want = ErrOutOfBounds
		}
		if !errors.Is(err, want) {
			t.Fatalf("cut at %d of %d: err = %v, want %v", n, len(b), err, want)
		}
	}
	if _, err := Parse(b[:end]); err != nil {
		t.Errorf("file without trailing padding: %v", err)
	}
}

// TestHostileLengths checks that lengths near 2^64 are refused without
// allocating for them.
func TestHostileLengths(t *testing.T) {
	files := [][]byte{
		header(math.MaxUint64, 0).b,
		header(0, math.MaxUint64).b,
		header(0, 1).u64(math.MaxUint64).b,
		header(0, 1).str("k").u32(9).u32(uint32(TypeUint8)).u64(math.MaxUint64).b,
		header(0, 1).str("k").u32(9).u32(uint32(TypeArray)).u64(math.MaxUint64 / 2).b,
		header(0, 1).str("k").u32(9).u32(uint32(TypeString)).u64(1 << 59).b,
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i, b := range files {
		if _, err := Parse(b); !errors.Is(err, ErrTruncated) {
			t.Errorf("file %d: err = %v, want ErrTruncated", i, err)
		}
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Errorf("parsing hostile lengths allocated %d bytes", d)
	}
}

func TestVersion2(t *testing.T) {
	w, data := sampleWriter(t, 4)
	b, err := w.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint32(b[4:], 2) // v2 has the same layout as v3 (little-endian)
	f, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	ti, ok := f.Tensor("blk.0.ffn_up.weight")
	if f.Version != 2 || !ok || !bytes.Equal(ti.Data, data[ti.Name]) {
		t.Errorf("v2 file: version %d, tensor found %v", f.Version, ok)
	}
}

func BenchmarkParse(b *testing.B) {
	w, _ := sampleWriter(b, 6)
	for i := range 1000 {
		w.SetStrings(fmt.Sprintf("k%d", i), []string{"some", "token", "strings"})
	}
	data, err := w.Bytes()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
