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
	minArraySize  = 4 + 8         // element type, count (an array's element)
	stringHdrSize = 8             // length prefix
)

// decoder reads little-endian values from buf, reporting the first problem
// as a *FormatError. The subject fields say what is being read (a key or a
// tensor, and an array element) so that messages can name it; they are only
// formatted when something fails, keeping the happy path free of
// allocations.
type decoder struct {
	buf  []byte
	off  int
	kind string // "key", "tensor" or "" (header)
	name string // key or tensor name; empty while it is being read
	idx  int    // tensor index while its name is being read
	elem int    // array element being read, or -1

	anyType bool // ParseInfo: accept tensor types package tensor does not know
}

// subject describes what is being read, e.g. `key "a.b": element 3: `.
func (d *decoder) subject() string {
	s := ""
	switch {
	case d.kind == "":
	case d.name != "":
		s = fmt.Sprintf("%s %q: ", d.kind, d.name)
	default:
		s = fmt.Sprintf("%s %d: ", d.kind, d.idx)
	}
	if d.elem >= 0 {
		s += fmt.Sprintf("element %d: ", d.elem)
	}
	return s
}

func (d *decoder) fail(sentinel error, format string, args ...any) error {
	return &FormatError{Offset: int64(d.off), Msg: d.subject() + fmt.Sprintf(format, args...), Err: sentinel}
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
	n, err := d.u64(what)
	if err != nil {
		return nil, err
	}
	if n > uint64(d.left()) {
		d.off = start
		return nil, d.fail(ErrTruncated, "%s: length %d exceeds the %d bytes left", what, n, d.left()-8)
	}
	b := d.buf[d.off : d.off+int(n)]
	d.off += int(n)
	return b, nil
}

// Parse decodes a GGUF file held in memory. Tensor data are views into b,
// which must stay unchanged while the File is used.
func Parse(b []byte) (*File, error) { return parse(b, false) }

// ParseInfo is Parse for describing a file rather than loading it: it also
// accepts tensors of ggml types that package tensor does not know (such as
// IQ2_XXS, whose block size it cannot tell). Those tensors keep their
// names, shapes, types and offsets but get no Data, and their extent in the
// data section is not checked; everything else is checked as by Parse.
func ParseInfo(b []byte) (*File, error) { return parse(b, true) }

func parse(b []byte, anyType bool) (*File, error) {
	d := &decoder{buf: b, elem: -1, anyType: anyType}
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
		d.kind, d.name, d.idx = "key", "", i
		kb, err := d.str("name")
		if err != nil {
			return nil, err
		}
		key := string(kb)
		if key == "" {
			d.off = start
			return nil, d.fail(ErrInvalid, "empty name")
		}
		d.name = key
		if _, dup := f.kvIndex[key]; dup {
			d.off = start
			return nil, d.fail(ErrDuplicate, "duplicate key")
		}
		t, err := d.u32("type")
		if err != nil {
			return nil, err
		}
		val, err := d.value(ValueType(t), 0)
		if err != nil {
			return nil, err
		}
		f.kvIndex[key] = len(f.KV)
		f.KV = append(f.KV, KV{Key: key, Value: val})
	}

	d.kind = ""
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
		d.kind, d.name, d.idx = "tensor", "", i
		ti, err := d.tensorInfo(f.tensorIndex)
		if err != nil {
			return nil, err
		}
		f.tensorIndex[ti.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, ti)
	}

	d.kind = ""
	// The data section starts at the next multiple of the alignment.
	// (As in ggml, a file without tensors has no padding.)
	dataStart := uint64(d.off)
	if r := dataStart % f.Alignment; r != 0 && nTensors > 0 {
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
		if !t.Type.Known() { // ParseInfo only
			continue
		}
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
func (d *decoder) tensorInfo(seen map[string]int) (TensorInfo, error) {
	var ti TensorInfo
	start := d.off
	nb, err := d.str("name")
	if err != nil {
		return ti, err
	}
	if len(nb) == 0 {
		d.off = start
		return ti, d.fail(ErrInvalid, "empty name")
	}
	if len(nb) >= maxNameLen {
		d.off = start
		return ti, d.fail(ErrInvalid, "name %q is %d bytes, the limit is %d", truncName(nb), len(nb), maxNameLen-1)
	}
	ti.Name = string(nb)
	d.name = ti.Name
	if _, dup := seen[ti.Name]; dup {
		d.off = start
		return ti, d.fail(ErrDuplicate, "duplicate tensor name")
	}
	nDims, err := d.u32("dimension count")
	if err != nil {
		return ti, err
	}
	if nDims > maxDims {
		d.off -= 4
		return ti, d.fail(ErrShape, "%d dimensions, at most %d allowed", nDims, maxDims)
	}
	ti.Dims = make([]uint64, nDims)
	elems := uint64(1)
	for j := range ti.Dims {
		n, err := d.u64(dimNames[j])
		if err != nil {
			return ti, err
		}
		if n > math.MaxInt64 {
			d.off -= 8
			return ti, d.fail(ErrShape, "%s is %d, which is negative as ggml's int64", dimNames[j], n)
		}
		ti.Dims[j] = n
		hi, lo := bits.Mul64(elems, n)
		if hi != 0 || lo > math.MaxInt64 {
			d.off -= 8
			return ti, d.fail(ErrShape, "shape %v has more than 2^63 elements", ti.Dims[:j+1])
		}
		elems = lo
	}
	t, err := d.u32("type")
	if err != nil {
		return ti, err
	}
	ti.Type = tensor.Type(t)
	if !ti.Type.Known() {
		if d.anyType {
			ti.Offset, err = d.u64("offset")
			return ti, err
		}
		d.off -= 4
		return ti, d.fail(ErrTensorType, "unknown ggml type %d", t)
	}
	bs := uint64(ti.Type.BlockSize())
	if ti.Dims0()%bs != 0 {
		d.off -= 4
		return ti, d.fail(ErrShape, "row length %d is not a multiple of the %s block size %d", ti.Dims0(), ti.Type, bs)
	}
	if hi, _ := bits.Mul64(elems/bs, uint64(ti.Type.TypeSize())); hi != 0 || (elems/bs)*uint64(ti.Type.TypeSize()) > math.MaxInt64 {
		d.off -= 4
		return ti, d.fail(ErrShape, "shape %v of %s is too large in bytes", ti.Dims, ti.Type)
	}
	if ti.Offset, err = d.u64("offset"); err != nil {
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

// dimNames names the dimensions in messages without formatting.
var dimNames = [maxDims]string{"dimension 0", "dimension 1", "dimension 2", "dimension 3"}

// value reads a value of type t at nesting depth.
func (d *decoder) value(t ValueType, depth int) (Value, error) {
	if !t.Valid() {
		d.off -= 4
		return Value{}, d.fail(ErrValueType, "unknown value type %d", uint32(t))
	}
	if t == TypeArray {
		return d.array(depth)
	}
	if t == TypeString {
		s, err := d.str("string")
		if err != nil {
			return Value{}, err
		}
		return Value{typ: TypeString, x: string(s)}, nil
	}
	size := t.size()
	if err := d.need(size, t.String()+" value"); err != nil {
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
			return Value{}, d.fail(ErrInvalid, "bool byte is %d, must be 0 or 1", p[0])
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
func (d *decoder) array(depth int) (Value, error) {
	if depth >= maxNesting {
		return Value{}, d.fail(ErrInvalid, "arrays nested more than %d deep", maxNesting)
	}
	et, err := d.u32("array element type")
	if err != nil {
		return Value{}, err
	}
	elem := ValueType(et)
	if !elem.Valid() {
		d.off -= 4
		return Value{}, d.fail(ErrValueType, "unknown array element type %d", et)
	}
	minSize := elem.size()
	switch elem {
	case TypeString:
		minSize = stringHdrSize
	case TypeArray:
		minSize = minArraySize
	}
	n, err := d.count("array length", minSize)
	if err != nil {
		return Value{}, err
	}
	switch elem {
	case TypeString:
		return d.stringArray(n)
	case TypeArray:
		// Each element is an array header and items, with no type tag of
		// its own (the outer element type says "array").
		vs := make([]Value, n)
		outer := d.elem
		for i := range vs {
			d.elem = i
			var err error
			if vs[i], err = d.array(depth + 1); err != nil {
				return Value{}, err
			}
		}
		d.elem = outer
		return Value{typ: TypeArray, elem: TypeArray, x: vs}, nil
	case TypeBool:
		p := d.buf[d.off : d.off+n]
		bs := make([]bool, n)
		for i, c := range p {
			if c > 1 {
				d.off += i
				d.elem = i
				return Value{}, d.fail(ErrInvalid, "bool byte is %d, must be 0 or 1", c)
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
		x = fixedArray(p, n, 1, func(b []byte) int8 { return int8(b[0]) })
	case TypeUint16:
		x = fixedArray(p, n, 2, le.Uint16)
	case TypeInt16:
		x = fixedArray(p, n, 2, func(b []byte) int16 { return int16(le.Uint16(b)) })
	case TypeUint32:
		x = fixedArray(p, n, 4, le.Uint32)
	case TypeInt32:
		x = fixedArray(p, n, 4, func(b []byte) int32 { return int32(le.Uint32(b)) })
	case TypeFloat32:
		x = fixedArray(p, n, 4, func(b []byte) float32 { return math.Float32frombits(le.Uint32(b)) })
	case TypeUint64:
		x = fixedArray(p, n, 8, le.Uint64)
	case TypeInt64:
		x = fixedArray(p, n, 8, func(b []byte) int64 { return int64(le.Uint64(b)) })
	case TypeFloat64:
		x = fixedArray(p, n, 8, func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) })
	}
	return Value{typ: TypeArray, elem: elem, x: x}, nil
}

// fixedArray decodes the n little-endian elements of size bytes each at
// the start of p with at.
func fixedArray[T any](p []byte, n, size int, at func([]byte) T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = at(p[size*i:])
	}
	return s
}

// stringArray reads n strings. It first checks every length, then copies
// the whole run once and slices the strings out of that copy, so a
// vocabulary costs two allocations, not one per token.
func (d *decoder) stringArray(n int) (Value, error) {
	start := d.off
	outer := d.elem
	for i := range n {
		d.elem = i
		if _, err := d.str("string"); err != nil {
			return Value{}, err
		}
	}
	d.elem = outer
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
