package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/specd-dev/specd/tensor"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// maxNameLen is one more than the longest tensor name accepted (ggml's
// GGML_MAX_NAME, which includes the terminating NUL).
const maxNameLen = 64

// maxDims is the most dimensions a tensor may have (GGML_MAX_DIMS).
const maxDims = 4

// maxNesting bounds arrays of arrays so a hostile file cannot recurse deeply.
const maxNesting = 8

// Minimum encoded sizes, used to reject counts larger than the file before
// allocating for them.
const (
	minKVSize     = 8 + 4 + 1     // key length, type, smallest value
	minTensorSize = 8 + 4 + 4 + 8 // name length, n_dims, type, offset
	minArraySize  = 4 + 8         // element type, count
	stringHdrSize = 8             // length prefix
)

// decoder reads little-endian values from buf, reporting the first problem
// as a *FormatError.
type decoder struct {
	buf []byte
	off int
}

func (d *decoder) fail(sentinel error, format string, args ...any) error {
	return &FormatError{Offset: int64(d.off), Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

func (d *decoder) left() int { return len(d.buf) - d.off }

// need checks that n bytes remain; what names the item being read.
func (d *decoder) need(n int, what string) error {
	if n > d.left() {
		return d.fail(ErrTruncated, "%s: need %d bytes, only %d left", what, n, d.left())
	}
	return nil
}

func (d *decoder) u32(what string) (uint32, error) {
	if err := d.need(4, what); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint32(d.buf[d.off:])
	d.off += 4
	return v, nil
}

func (d *decoder) u64(what string) (uint64, error) {
	if err := d.need(8, what); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint64(d.buf[d.off:])
	d.off += 8
	return v, nil
}

// count reads a 64-bit element count and checks that count elements of at
// least minSize bytes each fit in what is left.
func (d *decoder) count(what string, minSize int) (int, error) {
	start := d.off
	n, err := d.u64(what)
	if err != nil {
		return 0, err
	}
	if n > uint64(d.left()/minSize) {
		d.off = start
		return 0, d.fail(ErrTruncated, "%s is %d, more than the %d bytes left can hold", what, n, d.left()-8)
	}
	return int(n), nil
}

// str reads a length-prefixed string and returns the bytes, not copied.
func (d *decoder) str(what string) ([]byte, error) {
	start := d.off
	n, err := d.u64(what + ": string length")
	if err != nil {
		return nil, err
	}
	if n > uint64(d.left()) {
		d.off = start
		return nil, d.fail(ErrTruncated, "%s: string length %d exceeds the %d bytes left", what, n, d.left()-8)
	}
	b := d.buf[d.off : d.off+int(n)]
	d.off += int(n)
	return b, nil
}

// Parse decodes a GGUF file held in memory. Tensor data are views into b,
// which must stay unchanged while the File is used.
func Parse(b []byte) (*File, error) {
	d := &decoder{buf: b}
	if err := d.need(4, "magic"); err != nil {
		return nil, err
	}
	if string(b[:4]) != Magic {
		return nil, d.fail(ErrBadMagic, "magic is %q, want %q", b[:4], Magic)
	}
	d.off = 4
	f := &File{Alignment: DefaultAlignment}
	v, err := d.u32("version")
	if err != nil {
		return nil, err
	}
	if v != 2 && v != 3 {
		d.off -= 4
		if v&0xffff == 0 && bits.ReverseBytes32(v) <= 3 {
			return nil, d.fail(ErrVersion, "version %#x looks byte-swapped: big-endian files are not supported", v)
		}
		return nil, d.fail(ErrVersion, "version %d is not supported (want 2 or 3)", v)
	}
	f.Version = v
	nTensors, err := d.count("tensor count", minTensorSize)
	if err != nil {
		return nil, err
	}
	nKV, err := d.count("metadata count", minKVSize)
	if err != nil {
		return nil, err
	}

	f.KV = make([]KV, 0, nKV)
	f.kvIndex = make(map[string]int, nKV)
	for i := range nKV {
		start := d.off
		kb, err := d.str(fmt.Sprintf("metadata key %d", i))
		if err != nil {
			return nil, err
		}
		key := string(kb)
		if key == "" {
			d.off = start
			return nil, d.fail(ErrInvalid, "metadata key %d is empty", i)
		}
		if _, dup := f.kvIndex[key]; dup {
			d.off = start
			return nil, d.fail(ErrDuplicate, "metadata key %q appears twice", key)
		}
		t, err := d.u32(fmt.Sprintf("key %q: type", key))
		if err != nil {
			return nil, err
		}
		val, err := d.value(key, ValueType(t), 0)
		if err != nil {
			return nil, err
		}
		f.kvIndex[key] = len(f.KV)
		f.KV = append(f.KV, KV{Key: key, Value: val})
	}

	if v, ok := f.Get(AlignmentKey); ok {
		a, isU32 := v.x.(uint32)
		if !isU32 {
			return nil, d.fail(ErrAlignment, "%s is %s, must be uint32", AlignmentKey, v.typ)
		}
		if a == 0 || a&(a-1) != 0 {
			return nil, d.fail(ErrAlignment, "%s is %d, not a power of two", AlignmentKey, a)
		}
		f.Alignment = uint64(a)
	}

	f.Tensors = make([]TensorInfo, 0, nTensors)
	f.tensorIndex = make(map[string]int, nTensors)
	for i := range nTensors {
		ti, err := d.tensorInfo(i, f.tensorIndex)
		if err != nil {
			return nil, err
		}
		f.tensorIndex[ti.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, ti)
	}

	// The data section starts at the next multiple of the alignment.
	dataStart := uint64(d.off)
	if r := dataStart % f.Alignment; r != 0 {
		dataStart += f.Alignment - r
	}
	f.DataOffset = dataStart
	if nTensors > 0 && dataStart > uint64(len(b)) {
		return nil, d.fail(ErrTruncated, "data section would start at %d, past the end of the file (%d bytes)", dataStart, len(b))
	}
	avail := uint64(0)
	if dataStart <= uint64(len(b)) {
		avail = uint64(len(b)) - dataStart
	}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if t.Offset%f.Alignment != 0 {
			return nil, &FormatError{Offset: int64(dataStart), Err: ErrAlignment,
				Msg: fmt.Sprintf("tensor %q: offset %d is not a multiple of the alignment %d", t.Name, t.Offset, f.Alignment)}
		}
		size := t.Size()
		if t.Offset > avail || size > avail-t.Offset {
			return nil, &FormatError{Offset: int64(dataStart), Err: ErrOutOfBounds,
				Msg: fmt.Sprintf("tensor %q: data [%d, %d) of the data section runs past its end (%d bytes)", t.Name, t.Offset, t.Offset+size, avail)}
		}
		s := dataStart + t.Offset
		t.Data = b[s : s+size : s+size]
	}
	return f, nil
}

// Dims0 is the row length (ne0), 1 for a tensor without dimensions.
func (t *TensorInfo) Dims0() uint64 {
	if len(t.Dims) == 0 {
		return 1
	}
	return t.Dims[0]
}

// Size is the number of bytes of t's data: Elements divided by the block
// size, times the block's byte size.
func (t *TensorInfo) Size() uint64 {
	bs := uint64(t.Type.BlockSize())
	if bs == 0 {
		return 0
	}
	return t.Elements() / bs * uint64(t.Type.TypeSize())
}

// tensorInfo reads the description of tensor i.
func (d *decoder) tensorInfo(i int, seen map[string]int) (TensorInfo, error) {
	var ti TensorInfo
	start := d.off
	nb, err := d.str(fmt.Sprintf("tensor %d: name", i))
	if err != nil {
		return ti, err
	}
	if len(nb) == 0 {
		d.off = start
		return ti, d.fail(ErrInvalid, "tensor %d: empty name", i)
	}
	if len(nb) >= maxNameLen {
		d.off = start
		return ti, d.fail(ErrInvalid, "tensor %d: name %q is %d bytes, the limit is %d", i, truncName(nb), len(nb), maxNameLen-1)
	}
	ti.Name = string(nb)
	if _, dup := seen[ti.Name]; dup {
		d.off = start
		return ti, d.fail(ErrDuplicate, "tensor name %q appears twice", ti.Name)
	}
	nDims, err := d.u32(fmt.Sprintf("tensor %q: dimension count", ti.Name))
	if err != nil {
		return ti, err
	}
	if nDims > maxDims {
		d.off -= 4
		return ti, d.fail(ErrShape, "tensor %q: %d dimensions, at most %d allowed", ti.Name, nDims, maxDims)
	}
	ti.Dims = make([]uint64, nDims)
	elems := uint64(1)
	for j := range ti.Dims {
		n, err := d.u64(fmt.Sprintf("tensor %q: dimension %d", ti.Name, j))
		if err != nil {
			return ti, err
		}
		if n > math.MaxInt64 {
			d.off -= 8
			return ti, d.fail(ErrShape, "tensor %q: dimension %d is %d, which is negative as ggml's int64", ti.Name, j, n)
		}
		ti.Dims[j] = n
		hi, lo := bits.Mul64(elems, n)
		if hi != 0 || lo > math.MaxInt64 {
			d.off -= 8
			return ti, d.fail(ErrShape, "tensor %q: shape %v has more than 2^63 elements", ti.Name, ti.Dims[:j+1])
		}
		elems = lo
	}
	t, err := d.u32(fmt.Sprintf("tensor %q: type", ti.Name))
	if err != nil {
		return ti, err
	}
	ti.Type = tensor.Type(t)
	if !ti.Type.Known() {
		d.off -= 4
		return ti, d.fail(ErrTensorType, "tensor %q: unknown ggml type %d", ti.Name, t)
	}
	bs := uint64(ti.Type.BlockSize())
	if ti.Dims0()%bs != 0 {
		d.off -= 4
		return ti, d.fail(ErrShape, "tensor %q: row length %d is not a multiple of the %s block size %d", ti.Name, ti.Dims0(), ti.Type, bs)
	}
	if hi, _ := bits.Mul64(elems/bs, uint64(ti.Type.TypeSize())); hi != 0 || (elems/bs)*uint64(ti.Type.TypeSize()) > math.MaxInt64 {
		d.off -= 4
		return ti, d.fail(ErrShape, "tensor %q: shape %v of %s is too large in bytes", ti.Name, ti.Dims, ti.Type)
	}
	if ti.Offset, err = d.u64(fmt.Sprintf("tensor %q: offset", ti.Name)); err != nil {
		return ti, err
	}
	return ti, nil
}

func truncName(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// value reads a value of type t for key at nesting depth.
func (d *decoder) value(key string, t ValueType, depth int) (Value, error) {
	if !t.Valid() {
		d.off -= 4
		return Value{}, d.fail(ErrValueType, "key %q: unknown value type %d", key, uint32(t))
	}
	if t == TypeArray {
		return d.array(key, depth)
	}
	if t == TypeString {
		s, err := d.str(fmt.Sprintf("key %q", key))
		if err != nil {
			return Value{}, err
		}
		return Value{typ: TypeString, x: string(s)}, nil
	}
	size := t.size()
	if err := d.need(size, fmt.Sprintf("key %q: %s value", key, t)); err != nil {
		return Value{}, err
	}
	p := d.buf[d.off : d.off+size]
	var x any
	switch t {
	case TypeUint8:
		x = p[0]
	case TypeInt8:
		x = int8(p[0])
	case TypeBool:
		if p[0] > 1 {
			return Value{}, d.fail(ErrInvalid, "key %q: bool byte is %d, must be 0 or 1", key, p[0])
		}
		x = p[0] == 1
	case TypeUint16:
		x = binary.LittleEndian.Uint16(p)
	case TypeInt16:
		x = int16(binary.LittleEndian.Uint16(p))
	case TypeUint32:
		x = binary.LittleEndian.Uint32(p)
	case TypeInt32:
		x = int32(binary.LittleEndian.Uint32(p))
	case TypeFloat32:
		x = math.Float32frombits(binary.LittleEndian.Uint32(p))
	case TypeUint64:
		x = binary.LittleEndian.Uint64(p)
	case TypeInt64:
		x = int64(binary.LittleEndian.Uint64(p))
	case TypeFloat64:
		x = math.Float64frombits(binary.LittleEndian.Uint64(p))
	}
	d.off += size
	return Value{typ: t, x: x}, nil
}

// array reads an array header and its elements.
func (d *decoder) array(key string, depth int) (Value, error) {
	if depth >= maxNesting {
		return Value{}, d.fail(ErrInvalid, "key %q: arrays nested more than %d deep", key, maxNesting)
	}
	et, err := d.u32(fmt.Sprintf("key %q: array element type", key))
	if err != nil {
		return Value{}, err
	}
	elem := ValueType(et)
	if !elem.Valid() {
		d.off -= 4
		return Value{}, d.fail(ErrValueType, "key %q: unknown array element type %d", key, et)
	}
	minSize := elem.size()
	switch elem {
	case TypeString:
		minSize = stringHdrSize
	case TypeArray:
		minSize = minArraySize
	}
	n, err := d.count(fmt.Sprintf("key %q: array length", key), minSize)
	if err != nil {
		return Value{}, err
	}
	switch elem {
	case TypeString:
		return d.stringArray(key, n)
	case TypeArray:
		vs := make([]Value, n)
		for i := range vs {
			if _, err := d.u32(fmt.Sprintf("key %q: element %d type", key, i)); err != nil {
				return Value{}, err
			}
			// The element type of an array element must itself say "array".
			if t := binary.LittleEndian.Uint32(d.buf[d.off-4:]); ValueType(t) != TypeArray {
				d.off -= 4
				return Value{}, d.fail(ErrValueType, "key %q: element %d of an array of arrays has type %s", key, i, ValueType(t))
			}
			if vs[i], err = d.array(key, depth+1); err != nil {
				return Value{}, err
			}
		}
		return Value{typ: TypeArray, elem: TypeArray, x: vs}, nil
	case TypeBool:
		p := d.buf[d.off : d.off+n]
		bs := make([]bool, n)
		for i, c := range p {
			if c > 1 {
				d.off += i
				return Value{}, d.fail(ErrInvalid, "key %q: element %d: bool byte is %d, must be 0 or 1", key, i, c)
			}
			bs[i] = c == 1
		}
		d.off += n
		return Value{typ: TypeArray, elem: TypeBool, x: bs}, nil
	}
	p := d.buf[d.off : d.off+n*minSize]
	d.off += n * minSize
	le := binary.LittleEndian
	var x any
	switch elem {
	case TypeUint8:
		s := make([]uint8, n)
		copy(s, p)
		x = s
	case TypeInt8:
		s := make([]int8, n)
		for i := range s {
			s[i] = int8(p[i])
		}
		x = s
	case TypeUint16:
		s := make([]uint16, n)
		for i := range s {
			s[i] = le.Uint16(p[2*i:])
		}
		x = s
	case TypeInt16:
		s := make([]int16, n)
		for i := range s {
			s[i] = int16(le.Uint16(p[2*i:]))
		}
		x = s
	case TypeUint32:
		s := make([]uint32, n)
		for i := range s {
			s[i] = le.Uint32(p[4*i:])
		}
		x = s
	case TypeInt32:
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(le.Uint32(p[4*i:]))
		}
		x = s
	case TypeFloat32:
		s := make([]float32, n)
		for i := range s {
			s[i] = math.Float32frombits(le.Uint32(p[4*i:]))
		}
		x = s
	case TypeUint64:
		s := make([]uint64, n)
		for i := range s {
			s[i] = le.Uint64(p[8*i:])
		}
		x = s
	case TypeInt64:
		s := make([]int64, n)
		for i := range s {
			s[i] = int64(le.Uint64(p[8*i:]))
		}
		x = s
	case TypeFloat64:
		s := make([]float64, n)
		for i := range s {
			s[i] = math.Float64frombits(le.Uint64(p[8*i:]))
		}
		x = s
	}
	return Value{typ: TypeArray, elem: elem, x: x}, nil
}

// stringArray reads n strings. It first checks every length, then copies
// the whole run once and slices the strings out of that copy, so a
// vocabulary costs two allocations, not one per token.
func (d *decoder) stringArray(key string, n int) (Value, error) {
	start := d.off
	for i := range n {
		if _, err := d.str(fmt.Sprintf("key %q: element %d", key, i)); err != nil {
			return Value{}, err
		}
	}
	all := string(d.buf[start:d.off])
	ss := make([]string, n)
	p := 0
	for i := range ss {
		l := int(binary.LittleEndian.Uint64(d.buf[start+p:]))
		p += stringHdrSize
		ss[i] = all[p : p+l]
		p += l
	}
	return Value{typ: TypeArray, elem: TypeString, x: ss}, nil
}
