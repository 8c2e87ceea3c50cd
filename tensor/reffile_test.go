package tensor

import (
	"encoding/binary"
	"math"
	"os"
	"testing"
)

// refFile reads one of the binary reference files in testdata that a C
// program of llama.cpp's functions writes (kquants_golden.c,
// kquants2_golden.c, q32_golden.c): an 8-byte magic, little-endian uint32
// header words, then sections read in order. Every read fails t on a
// truncated file; done fails it on trailing bytes.
type refFile struct {
	t    *testing.T
	path string
	rest []byte
}

// openRefFile reads testdata/name, checks its magic and returns it with
// its nhdr header words.
func openRefFile(t *testing.T, name, magic string, nhdr int) (*refFile, []int) {
	t.Helper()
	path := "testdata/" + name
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 8+4*nhdr || string(data[:8]) != magic {
		t.Fatalf("%s: bad header", path)
	}
	r := &refFile{t: t, path: path, rest: data[8:]}
	hdr := make([]int, nhdr)
	for i := range hdr {
		hdr[i] = r.u32()
	}
	return r, hdr
}

// bytes returns the next size bytes.
func (r *refFile) bytes(size int) []byte {
	r.t.Helper()
	if size > len(r.rest) {
		r.t.Fatalf("%s: truncated", r.path)
	}
	b := r.rest[:size]
	r.rest = r.rest[size:]
	return b
}

// floats returns the next n float32 values.
func (r *refFile) floats(n int) []float32 {
	r.t.Helper()
	b := r.bytes(4 * n)
	f := make([]float32, n)
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return f
}

// u32 returns the next uint32.
func (r *refFile) u32() int {
	r.t.Helper()
	return int(binary.LittleEndian.Uint32(r.bytes(4)))
}

// done fails t unless the whole file was read.
func (r *refFile) done() {
	r.t.Helper()
	if len(r.rest) != 0 {
		r.t.Fatalf("%s: %d trailing bytes", r.path, len(r.rest))
	}
}
