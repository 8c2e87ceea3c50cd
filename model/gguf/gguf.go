// Package gguf reads and writes GGUF files, the container llama.cpp uses for
// model weights and metadata.
//
// Design. A GGUF file is a header (magic "GGUF", version, tensor count,
// key/value count), an ordered list of typed metadata key/value pairs, a list
// of tensor descriptions (name, shape, ggml type, offset), padding to the
// file's alignment, and the tensor data. Open maps the file read-only
// (mmap) and Parse decodes the header and metadata into Go values; tensor
// data is never copied, each TensorInfo.Data is a view into the mapping, so
// opening a multi-gigabyte model costs only its metadata. Close unmaps.
//
// Files come from outside, so the reader trusts nothing: every length and
// count is checked against the bytes left before anything is allocated,
// shapes are checked for overflow and block-size multiples, offsets for
// alignment and bounds. A bad file yields a *FormatError that wraps one of
// the Err* sentinels and names the byte offset and what was wrong; it never
// panics. Versions 2 and 3 are read (little-endian only); the Writer
// produces version 3 with deterministic output.
package gguf

import (
	"errors"
	"fmt"
	"os"

	"github.com/specd-dev/specd/tensor"
)

// Sentinel errors; a *FormatError wraps one of them (test with errors.Is).
var (
	ErrBadMagic    = errors.New("gguf: not a GGUF file (bad magic)")
	ErrVersion     = errors.New("gguf: unsupported GGUF version")
	ErrTruncated   = errors.New("gguf: truncated file")
	ErrValueType   = errors.New("gguf: unknown metadata value type")
	ErrTensorType  = errors.New("gguf: unknown tensor type")
	ErrShape       = errors.New("gguf: bad tensor shape")
	ErrAlignment   = errors.New("gguf: bad alignment")
	ErrOutOfBounds = errors.New("gguf: tensor data out of bounds")
	ErrDuplicate   = errors.New("gguf: duplicate name")
	ErrInvalid     = errors.New("gguf: invalid value")
)

// FormatError describes a malformed GGUF file.
type FormatError struct {
	Path   string // file name, when read with Open
	Offset int64  // byte offset at which the problem was found
	Msg    string // what was wrong, naming the key or tensor
	Err    error  // one of the Err* sentinels
}

// Error formats e as "gguf: PATH: offset N: MSG".
func (e *FormatError) Error() string {
	s := "gguf: "
	if e.Path != "" {
		s += e.Path + ": "
	}
	return s + fmt.Sprintf("offset %d: %s", e.Offset, e.Msg)
}

// Unwrap returns the sentinel.
func (e *FormatError) Unwrap() error { return e.Err }

// KV is one metadata key/value pair.
type KV struct {
	Key   string
	Value Value
}

// TensorInfo describes one tensor of a file.
type TensorInfo struct {
	Name   string
	Dims   []uint64    // ne0 first: Dims[0] is the row length
	Type   tensor.Type // ggml element type
	Offset uint64      // offset of the data from the start of the data section
	Data   []byte      // the tensor's bytes: a view into the file, not a copy
}

// Elements is the number of elements of t (the product of its dims).
func (t *TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// File is a parsed GGUF file. Its fields must not be modified; being
// read-only, a File may be used by many goroutines at once. Tensor data
// views are valid until Close. A file opened with Open is mapped, not read:
// truncating it on disk while it is open makes access to its data fault.
type File struct {
	Version    uint32       // 2 or 3
	Alignment  uint64       // data alignment: general.alignment, default 32
	DataOffset uint64       // file offset of the data section (unpadded in a file without tensors, as in ggml)
	KV         []KV         // metadata in file order
	Tensors    []TensorInfo // tensors in file order

	kvIndex     map[string]int
	tensorIndex map[string]int
	unmap       func() error
}

// DefaultAlignment is the data alignment of a file without general.alignment.
const DefaultAlignment = 32

// AlignmentKey is the metadata key that sets a file's data alignment; it
// must be a uint32 power of two.
const AlignmentKey = "general.alignment"

// Open maps the file at path read-only and parses it. The caller must Close
// the File when done with it and with every tensor's Data.
func Open(path string) (*File, error) { return open(path, Parse) }

// OpenInfo is Open with ParseInfo: it also opens files with tensors of types
// package tensor does not know, for describing them.
func OpenInfo(path string) (*File, error) { return open(path, ParseInfo) }

func open(path string, parse func([]byte) (*File, error)) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	size := st.Size()
	if size < 0 || size != int64(int(size)) {
		return nil, fmt.Errorf("gguf: %s: file too large to map (%d bytes)", path, size)
	}
	var (
		data  []byte
		unmap func() error
	)
	if size > 0 {
		data, unmap, err = mapFile(fd, int(size))
		if err != nil {
			return nil, fmt.Errorf("gguf: %s: map: %w", path, err)
		}
	}
	f, err := parse(data)
	if err != nil {
		if unmap != nil {
			unmap()
		}
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.Path = path
		}
		return nil, err
	}
	f.unmap = unmap
	return f, nil
}

// Close releases the file's mapping. Afterwards the tensors' Data views are
// cleared; any copy of them kept elsewhere must not be used. Close is
// idempotent and a no-op for a File from Parse.
func (f *File) Close() error {
	u := f.unmap
	if u == nil {
		return nil
	}
	f.unmap = nil
	for i := range f.Tensors {
		f.Tensors[i].Data = nil
	}
	if err := u(); err != nil {
		return fmt.Errorf("gguf: unmap: %w", err)
	}
	return nil
}

// Get returns the value of key.
func (f *File) Get(key string) (Value, bool) {
	i, ok := f.kvIndex[key]
	if !ok {
		return Value{}, false
	}
	return f.KV[i].Value, true
}

// String returns the string value of key.
func (f *File) String(key string) (string, bool) {
	v, _ := f.Get(key)
	return v.Str()
}

// Uint returns the integer value of key, of any integer type, as uint64;
// ok is false if absent, not an integer, or negative.
func (f *File) Uint(key string) (uint64, bool) {
	v, _ := f.Get(key)
	return v.Uint()
}

// Int returns the integer value of key, of any integer type, as int64; ok
// is false if absent, not an integer, or above math.MaxInt64.
func (f *File) Int(key string) (int64, bool) {
	v, _ := f.Get(key)
	return v.Int()
}

// Float returns the float32/float64 (or integer) value of key as float64.
func (f *File) Float(key string) (float64, bool) {
	v, _ := f.Get(key)
	return v.Float()
}

// Bool returns the bool value of key.
func (f *File) Bool(key string) (bool, bool) {
	v, _ := f.Get(key)
	return v.Bool()
}

// Strings returns the string-array value of key. The slice is shared with
// the File and must not be modified.
func (f *File) Strings(key string) ([]string, bool) {
	v, _ := f.Get(key)
	return v.Strings()
}

// Float32s returns the float32-array value of key (shared with the File; do
// not modify); a float64 array is converted.
func (f *File) Float32s(key string) ([]float32, bool) {
	v, _ := f.Get(key)
	return v.Float32s()
}

// Int32s returns the int32-array value of key (shared with the File; do not
// modify); other integer arrays are converted when every element fits.
func (f *File) Int32s(key string) ([]int32, bool) {
	v, _ := f.Get(key)
	return v.Int32s()
}

// Tensor returns the tensor called name.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i, ok := f.tensorIndex[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}
