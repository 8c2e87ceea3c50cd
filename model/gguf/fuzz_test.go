package gguf

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

var sentinels = []error{ErrBadMagic, ErrVersion, ErrTruncated, ErrValueType, ErrTensorType,
	ErrShape, ErrAlignment, ErrOutOfBounds, ErrDuplicate, ErrInvalid}

// FuzzParse checks that Parse never panics, that a refusal is a
// *FormatError wrapping one of the sentinels, and that a successful parse
// yields tensor views inside the buffer and survives a write/parse round
// trip unchanged.
func FuzzParse(f *testing.F) {
	w, _ := sampleWriter(f, 5)
	if b, err := w.Bytes(); err == nil {
		f.Add(b)
	}
	f.Add(oneTensor([]uint64{4, 2}, 0, 0, 32))
	f.Add(deepArray(3))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse(b)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "gguf: ") {
				t.Fatalf("error %v (%T) is not a gguf *FormatError", err, err)
			}
			known := false
			for _, s := range sentinels {
				known = known || errors.Is(err, s)
			}
			if !known || fe.Offset < 0 || fe.Offset > int64(len(b)) {
				t.Fatalf("error %v: sentinel known %v, offset %d of %d", err, known, fe.Offset, len(b))
			}
			return
		}
		if file.Alignment == 0 || file.Alignment&(file.Alignment-1) != 0 || (len(file.Tensors) > 0 && file.DataOffset%file.Alignment != 0) {
			t.Fatalf("alignment %d, data offset %d", file.Alignment, file.DataOffset)
		}
		for i := range file.Tensors {
			ti := &file.Tensors[i]
			start := file.DataOffset + ti.Offset
			if uint64(len(ti.Data)) != ti.Size() || start+ti.Size() > uint64(len(b)) || start < file.DataOffset {
				t.Fatalf("tensor %q: %d bytes at %d, size %d, file %d bytes", ti.Name, len(ti.Data), start, ti.Size(), len(b))
			}
			if len(ti.Data) > 0 && &ti.Data[0] != &b[start] {
				t.Fatalf("tensor %q: data is not the view at %d", ti.Name, start)
			}
			if p, ok := file.Tensor(ti.Name); !ok || p != ti {
				t.Fatalf("Tensor(%q) does not find tensor %d", ti.Name, i)
			}
		}
		for _, kv := range file.KV {
			if v, ok := file.Get(kv.Key); !ok || !v.Equal(kv.Value) {
				t.Fatalf("Get(%q) = %v, %v; want %v", kv.Key, v, ok, kv.Value)
			}
		}
		// What was read can be written, and reads back the same.
		w := NewWriter()
		for _, kv := range file.KV {
			w.Set(kv.Key, kv.Value)
		}
		for _, ti := range file.Tensors {
			if err := w.AddTensor(ti.Name, ti.Type, ti.Dims, ti.Data); err != nil {
				t.Fatalf("rewrite: %v", err)
			}
		}
		out, err := w.Bytes()
		if err != nil {
			t.Fatalf("rewrite: %v", err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("parse rewritten file: %v", err)
		}
		if len(again.KV) != len(file.KV) || len(again.Tensors) != len(file.Tensors) {
			t.Fatalf("rewritten file has %d keys, %d tensors; want %d, %d", len(again.KV), len(again.Tensors), len(file.KV), len(file.Tensors))
		}
		for i, kv := range file.KV {
			if again.KV[i].Key != kv.Key || !again.KV[i].Value.Equal(kv.Value) {
				t.Fatalf("rewritten key %d = %q, want %q", i, again.KV[i].Key, kv.Key)
			}
		}
		for i, ti := range file.Tensors {
			a := again.Tensors[i]
			if a.Name != ti.Name || a.Type != ti.Type || !slices.Equal(a.Dims, ti.Dims) || string(a.Data) != string(ti.Data) {
				t.Fatalf("rewritten tensor %d = %q, want %q", i, a.Name, ti.Name)
			}
		}
	})
}
