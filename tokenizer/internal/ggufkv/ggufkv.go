// Package ggufkv reads the key/value metadata of a GGUF file, and nothing
// else. It exists so that the tokenizer's tests and the tokenize command can
// load vocabulary files without the full model reader; it implements the
// getters tokenizer.Metadata needs.
package ggufkv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
)

// GGUF value types.
const (
	tUint8   = 0
	tInt8    = 1
	tUint16  = 2
	tInt16   = 3
	tUint32  = 4
	tInt32   = 5
	tFloat32 = 6
	tBool    = 7
	tString  = 8
	tArray   = 9
	tUint64  = 10
	tInt64   = 11
	tFloat64 = 12
)

// File holds the metadata of one GGUF file, decoded into Go values:
// integers as int64/uint64, floats as float64, strings, bools, and arrays as
// []string, []float32, []int32, []int64, []uint64, []float64 or []bool.
type File struct {
	Version uint32
	KV      map[string]any
}

// Open reads the metadata of the GGUF file at path.
func Open(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

type reader struct {
	b   []byte
	off int
	err error
}

var errShort = errors.New("ggufkv: truncated file")

func (r *reader) take(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)-r.off) {
		r.err = errShort
		return nil
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

func (r *reader) u32() uint32 {
	s := r.take(4)
	if s == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(s)
}

func (r *reader) u64() uint64 {
	s := r.take(8)
	if s == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(s)
}

func (r *reader) str() string {
	n := r.u64()
	return string(r.take(n))
}

// Parse decodes the metadata from the bytes of a GGUF file.
func Parse(b []byte) (*File, error) {
	r := &reader{b: b}
	if magic := r.take(4); r.err != nil || string(magic) != "GGUF" {
		return nil, errors.New("ggufkv: not a GGUF file (bad magic)")
	}
	f := &File{Version: r.u32(), KV: map[string]any{}}
	if f.Version < 2 || f.Version > 3 {
		return nil, fmt.Errorf("ggufkv: unsupported GGUF version %d", f.Version)
	}
	r.u64() // tensor count
	nkv := r.u64()
	for i := uint64(0); i < nkv && r.err == nil; i++ {
		key := r.str()
		typ := r.u32()
		v, err := r.value(typ)
		if err != nil {
			return nil, fmt.Errorf("ggufkv: key %q: %w", key, err)
		}
		f.KV[key] = v
	}
	if r.err != nil {
		return nil, r.err
	}
	return f, nil
}

func (r *reader) scalar(typ uint32) (any, error) {
	switch typ {
	case tUint8:
		s := r.take(1)
		if s == nil {
			return nil, errShort
		}
		return uint64(s[0]), nil
	case tInt8:
		s := r.take(1)
		if s == nil {
			return nil, errShort
		}
		return int64(int8(s[0])), nil
	case tUint16:
		s := r.take(2)
		if s == nil {
			return nil, errShort
		}
		return uint64(binary.LittleEndian.Uint16(s)), nil
	case tInt16:
		s := r.take(2)
		if s == nil {
			return nil, errShort
		}
		return int64(int16(binary.LittleEndian.Uint16(s))), nil
	case tUint32:
		return uint64(r.u32()), r.err
	case tInt32:
		return int64(int32(r.u32())), r.err
	case tFloat32:
		return float64(math.Float32frombits(r.u32())), r.err
	case tBool:
		s := r.take(1)
		if s == nil {
			return nil, errShort
		}
		return s[0] != 0, nil
	case tString:
		return r.str(), r.err
	case tUint64:
		return r.u64(), r.err
	case tInt64:
		return int64(r.u64()), r.err
	case tFloat64:
		return math.Float64frombits(r.u64()), r.err
	}
	return nil, fmt.Errorf("unknown value type %d", typ)
}

func (r *reader) value(typ uint32) (any, error) {
	if typ != tArray {
		return r.scalar(typ)
	}
	et := r.u32()
	n := r.u64()
	if r.err != nil {
		return nil, r.err
	}
	// Every element takes at least one byte: reject counts the file cannot hold.
	if n > uint64(len(r.b)-r.off) {
		return nil, errShort
	}
	switch et {
	case tString:
		out := make([]string, 0, n)
		for i := uint64(0); i < n; i++ {
			out = append(out, r.str())
			if r.err != nil {
				return nil, r.err
			}
		}
		return out, nil
	case tFloat32:
		out := make([]float32, 0, n)
		for i := uint64(0); i < n && r.err == nil; i++ {
			out = append(out, math.Float32frombits(r.u32()))
		}
		return out, r.err
	case tInt32:
		out := make([]int32, 0, n)
		for i := uint64(0); i < n && r.err == nil; i++ {
			out = append(out, int32(r.u32()))
		}
		return out, r.err
	case tArray:
		return nil, errors.New("nested arrays are not supported")
	default:
		out := make([]any, 0, n)
		for i := uint64(0); i < n; i++ {
			v, err := r.scalar(et)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
}

// String returns the string value of key.
func (f *File) String(key string) (string, bool) {
	v, ok := f.KV[key].(string)
	return v, ok
}

// Strings returns the string-array value of key.
func (f *File) Strings(key string) ([]string, bool) {
	v, ok := f.KV[key].([]string)
	return v, ok
}

// Float32s returns the float32-array value of key.
func (f *File) Float32s(key string) ([]float32, bool) {
	v, ok := f.KV[key].([]float32)
	return v, ok
}

// Int32s returns the int32-array value of key.
func (f *File) Int32s(key string) ([]int32, bool) {
	v, ok := f.KV[key].([]int32)
	return v, ok
}

// Uint returns an integer value of key that is not negative.
func (f *File) Uint(key string) (uint64, bool) {
	switch v := f.KV[key].(type) {
	case uint64:
		return v, true
	case int64:
		if v >= 0 {
			return uint64(v), true
		}
	}
	return 0, false
}

// Bool returns the bool value of key.
func (f *File) Bool(key string) (bool, bool) {
	v, ok := f.KV[key].(bool)
	return v, ok
}
