package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"

	"github.com/specd-dev/specd/tensor"
)

// Writer builds a GGUF version 3 file: metadata in the order keys were
// first set, tensors in the order added, each tensor's data padded to the
// alignment (32, or general.alignment when set). The output is a function
// of the calls made, byte for byte, and llama.cpp reads it (tensor offsets
// are contiguous, as ggml's own writer makes them).
//
// Setters record the first problem (an empty key, an invalid Value) and
// WriteTo reports it. A Writer is not safe for concurrent use.
type Writer struct {
	kv      []KV
	kvIndex map[string]int
	tensors []TensorInfo
	names   map[string]bool
	err     error
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer {
	return &Writer{kvIndex: map[string]int{}, names: map[string]bool{}}
}

// Set sets key to v. A key set twice keeps its first position and its last
// value. v may come from a parsed File (to copy metadata between files).
func (w *Writer) Set(key string, v Value) {
	if w.err != nil {
		return
	}
	if key == "" {
		w.err = errors.New("gguf: empty metadata key")
		return
	}
	if !v.Valid() {
		w.err = fmt.Errorf("gguf: key %q: invalid (zero) Value", key)
		return
	}
	if d := nesting(v); d > maxNesting {
		w.err = fmt.Errorf("gguf: key %q: arrays nested %d deep, at most %d allowed", key, d, maxNesting)
		return
	}
	if i, ok := w.kvIndex[key]; ok {
		w.kv[i].Value = v
		return
	}
	w.kvIndex[key] = len(w.kv)
	w.kv = append(w.kv, KV{Key: key, Value: v})
}

// nesting is how many array levels v has: 0 for a scalar, 1 for an array
// of scalars.
func nesting(v Value) int {
	vs, ok := v.x.([]Value)
	if !ok {
		if v.typ == TypeArray {
			return 1
		}
		return 0
	}
	d := 0
	for _, e := range vs {
		d = max(d, nesting(e))
	}
	return 1 + d
}

// Delete removes key, if set; the other keys keep their order.
func (w *Writer) Delete(key string) {
	i, ok := w.kvIndex[key]
	if !ok {
		return
	}
	w.kv = slices.Delete(w.kv, i, i+1)
	delete(w.kvIndex, key)
	for j := i; j < len(w.kv); j++ {
		w.kvIndex[w.kv[j].Key] = j
	}
}

func (w *Writer) set(key string, x any) {
	v, err := ValueOf(x)
	if err != nil && w.err == nil {
		w.err = err
	}
	w.Set(key, v)
}

// SetString sets key to a string.
func (w *Writer) SetString(key, v string) { w.set(key, v) }

// SetUint32 sets key to a uint32.
func (w *Writer) SetUint32(key string, v uint32) { w.set(key, v) }

// SetInt32 sets key to an int32.
func (w *Writer) SetInt32(key string, v int32) { w.set(key, v) }

// SetUint64 sets key to a uint64.
func (w *Writer) SetUint64(key string, v uint64) { w.set(key, v) }

// SetFloat32 sets key to a float32.
func (w *Writer) SetFloat32(key string, v float32) { w.set(key, v) }

// SetBool sets key to a bool.
func (w *Writer) SetBool(key string, v bool) { w.set(key, v) }

// SetStrings sets key to an array of strings (copied).
func (w *Writer) SetStrings(key string, v []string) { w.set(key, v) }

// SetFloat32s sets key to an array of float32 (copied).
func (w *Writer) SetFloat32s(key string, v []float32) { w.set(key, v) }

// SetInt32s sets key to an array of int32 (copied).
func (w *Writer) SetInt32s(key string, v []int32) { w.set(key, v) }

// AddTensor appends a tensor. dims are ne0 first (at most 4); data must hold
// exactly the tensor's bytes and must not change until the file is written
// (it is not copied). The name must be new, non-empty and under 64 bytes.
func (w *Writer) AddTensor(name string, t tensor.Type, dims []uint64, data []byte) error {
	switch {
	case name == "":
		return errors.New("gguf: tensor with empty name")
	case len(name) >= maxNameLen:
		return fmt.Errorf("gguf: tensor name %q is %d bytes, the limit is %d", name, len(name), maxNameLen-1)
	case w.names[name]:
		return fmt.Errorf("gguf: tensor %q added twice", name)
	case !t.Known():
		return fmt.Errorf("gguf: tensor %q: unknown ggml type %d", name, uint32(t))
	case len(dims) > maxDims:
		return fmt.Errorf("gguf: tensor %q: %d dimensions, at most %d allowed", name, len(dims), maxDims)
	}
	ti := TensorInfo{Name: name, Dims: append([]uint64(nil), dims...), Type: t}
	elems := uint64(1)
	for _, d := range dims {
		hi, lo := mul64(elems, d)
		if hi != 0 || lo > math.MaxInt64 || d > math.MaxInt64 {
			return fmt.Errorf("gguf: tensor %q: shape %v is too large", name, dims)
		}
		elems = lo
	}
	if ti.Dims0()%uint64(t.BlockSize()) != 0 {
		return fmt.Errorf("gguf: tensor %q: row length %d is not a multiple of the %s block size %d", name, ti.Dims0(), t, t.BlockSize())
	}
	hi, size := mul64(elems/uint64(t.BlockSize()), uint64(t.TypeSize()))
	if hi != 0 || size > math.MaxInt64 {
		return fmt.Errorf("gguf: tensor %q: shape %v of %s is too large in bytes", name, dims, t)
	}
	if size != uint64(len(data)) {
		return fmt.Errorf("gguf: tensor %q: %d bytes of data, shape %v of %s needs %d", name, len(data), dims, t, size)
	}
	ti.Data = data
	w.names[name] = true
	w.tensors = append(w.tensors, ti)
	return nil
}

// alignment returns the data alignment the file will use.
func (w *Writer) alignment() (uint64, error) {
	i, ok := w.kvIndex[AlignmentKey]
	if !ok {
		return DefaultAlignment, nil
	}
	v := w.kv[i].Value
	a, isU32 := v.x.(uint32)
	if !isU32 || a == 0 || a&(a-1) != 0 {
		return 0, fmt.Errorf("gguf: %s must be a uint32 power of two, is %s %v", AlignmentKey, v.typ, v)
	}
	return uint64(a), nil
}

// WriteTo writes the file to dst and returns the bytes written.
func (w *Writer) WriteTo(dst io.Writer) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	align, err := w.alignment()
	if err != nil {
		return 0, err
	}
	// Header, metadata and tensor infos are built in memory; tensor data is
	// streamed after them.
	le := binary.LittleEndian
	h := []byte(Magic)
	h = le.AppendUint32(h, 3)
	h = le.AppendUint64(h, uint64(len(w.tensors)))
	h = le.AppendUint64(h, uint64(len(w.kv)))
	for _, kv := range w.kv {
		h = appendString(h, kv.Key)
		h = le.AppendUint32(h, uint32(kv.Value.typ))
		h = appendValue(h, kv.Value)
	}
	off := uint64(0)
	for _, t := range w.tensors {
		h = appendString(h, t.Name)
		h = le.AppendUint32(h, uint32(len(t.Dims)))
		for _, d := range t.Dims {
			h = le.AppendUint64(h, d)
		}
		h = le.AppendUint32(h, uint32(t.Type))
		h = le.AppendUint64(h, off)
		off += padded(uint64(len(t.Data)), align)
	}
	h = append(h, make([]byte, padded(uint64(len(h)), align)-uint64(len(h)))...)

	bw := bufio.NewWriterSize(dst, 1<<16)
	var n int64
	write := func(p []byte) error {
		m, err := bw.Write(p)
		n += int64(m)
		return err
	}
	if err := write(h); err != nil {
		return n, fmt.Errorf("gguf: write: %w", err)
	}
	zeros := make([]byte, align)
	for _, t := range w.tensors {
		if err := write(t.Data); err != nil {
			return n, fmt.Errorf("gguf: write: %w", err)
		}
		if err := write(zeros[:padded(uint64(len(t.Data)), align)-uint64(len(t.Data))]); err != nil {
			return n, fmt.Errorf("gguf: write: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("gguf: write: %w", err)
	}
	return n, nil
}

// Bytes returns the file as a byte slice.
func (w *Writer) Bytes() ([]byte, error) {
	var b bytesWriter
	if _, err := w.WriteTo(&b); err != nil {
		return nil, err
	}
	return b, nil
}

type bytesWriter []byte

func (b *bytesWriter) Write(p []byte) (int, error) {
	*b = append(*b, p...)
	return len(p), nil
}

// WriteFile writes the file to path, through a temporary file in the same
// directory renamed into place, so path never holds a partial file.
func (w *Writer) WriteFile(path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	_, err = w.WriteTo(tmp)
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("gguf: %w", cerr)
	}
	if err == nil {
		if err = os.Rename(tmp.Name(), path); err != nil {
			err = fmt.Errorf("gguf: %w", err)
		}
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

func padded(n, align uint64) uint64 { return (n + align - 1) / align * align }

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// appendValue appends the encoding of v without its type tag: numbers and
// bools (alone or in arrays) little-endian as encoding/binary writes them,
// strings with their length, arrays after their element type and count.
func appendValue(b []byte, v Value) []byte {
	le := binary.LittleEndian
	if s, ok := v.x.(string); ok {
		return appendString(b, s)
	}
	if v.typ == TypeArray {
		b = le.AppendUint32(b, uint32(v.elem))
		b = le.AppendUint64(b, uint64(v.Len()))
		switch s := v.x.(type) {
		case []string:
			for _, e := range s {
				b = appendString(b, e)
			}
			return b
		case []Value:
			for _, e := range s {
				b = appendValue(b, e) // no per-element type tag
			}
			return b
		}
	}
	// Every other Value holds a fixed-size number, bool or slice of them,
	// which Append cannot refuse.
	b, _ = binary.Append(b, le, v.x)
	return b
}

func mul64(a, b uint64) (hi, lo uint64) {
	hi, lo = bits.Mul64(a, b)
	return
}
