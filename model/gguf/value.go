package gguf

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ValueType is the type tag of a GGUF metadata value, numbered as in the
// GGUF specification (gguf_type in ggml's gguf.h).
type ValueType uint32

// The GGUF metadata value types.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{
	"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
	"bool", "string", "array", "uint64", "int64", "float64",
}

// String returns the GGUF name of t ("uint32", "array", ...), or
// "type(N)" for an id outside the specification.
func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return "type(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// Valid reports whether t is a type defined by the GGUF specification.
func (t ValueType) Valid() bool { return t <= TypeFloat64 }

// size is the encoded size of a fixed-size scalar of type t, 0 for string
// and array.
func (t ValueType) size() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// Value is one GGUF metadata value: a scalar, or an array of scalars or of
// arrays. It is immutable; the zero Value is invalid (Valid reports false)
// and is refused by the Writer.
//
// Internally a scalar is held as its Go type (uint8 ... float64, bool,
// string) and an array as a typed slice ([]uint8 ... []float64, []bool,
// []string, or []Value for an array of arrays), so a 150k-entry vocabulary
// costs one slice, not 150k Values.
type Value struct {
	typ  ValueType
	elem ValueType // element type when typ == TypeArray
	x    any       // nil only for the zero Value
}

// ValueOf makes a Value from a Go value: uint8, int8, uint16, int16, uint32,
// int32, float32, bool, string, uint64, int64, float64, a slice of any of
// those (an array; the slice is copied), or a []Value whose elements are all
// arrays (an array of arrays). Any other type is an error.
func ValueOf(x any) (Value, error) {
	switch v := x.(type) {
	case uint8:
		return Value{typ: TypeUint8, x: v}, nil
	case int8:
		return Value{typ: TypeInt8, x: v}, nil
	case uint16:
		return Value{typ: TypeUint16, x: v}, nil
	case int16:
		return Value{typ: TypeInt16, x: v}, nil
	case uint32:
		return Value{typ: TypeUint32, x: v}, nil
	case int32:
		return Value{typ: TypeInt32, x: v}, nil
	case float32:
		return Value{typ: TypeFloat32, x: v}, nil
	case bool:
		return Value{typ: TypeBool, x: v}, nil
	case string:
		return Value{typ: TypeString, x: v}, nil
	case uint64:
		return Value{typ: TypeUint64, x: v}, nil
	case int64:
		return Value{typ: TypeInt64, x: v}, nil
	case float64:
		return Value{typ: TypeFloat64, x: v}, nil
	case []uint8:
		return arrayOf(TypeUint8, v), nil
	case []int8:
		return arrayOf(TypeInt8, v), nil
	case []uint16:
		return arrayOf(TypeUint16, v), nil
	case []int16:
		return arrayOf(TypeInt16, v), nil
	case []uint32:
		return arrayOf(TypeUint32, v), nil
	case []int32:
		return arrayOf(TypeInt32, v), nil
	case []float32:
		return arrayOf(TypeFloat32, v), nil
	case []bool:
		return arrayOf(TypeBool, v), nil
	case []string:
		return arrayOf(TypeString, v), nil
	case []uint64:
		return arrayOf(TypeUint64, v), nil
	case []int64:
		return arrayOf(TypeInt64, v), nil
	case []float64:
		return arrayOf(TypeFloat64, v), nil
	case []Value:
		for i, e := range v {
			if e.typ != TypeArray || e.x == nil {
				return Value{}, fmt.Errorf("gguf: array of arrays: element %d is %s, not an array", i, e.typ)
			}
		}
		return arrayOf(TypeArray, v), nil
	}
	return Value{}, fmt.Errorf("gguf: no GGUF type for Go type %T", x)
}

func arrayOf[T any](elem ValueType, s []T) Value {
	c := make([]T, len(s))
	copy(c, s)
	return Value{typ: TypeArray, elem: elem, x: c}
}

// Valid reports whether v holds a value (the zero Value does not).
func (v Value) Valid() bool { return v.x != nil }

// Type is v's type; TypeArray for arrays.
func (v Value) Type() ValueType { return v.typ }

// ElemType is the element type of an array (TypeArray for an array of
// arrays); meaningless for a scalar.
func (v Value) ElemType() ValueType { return v.elem }

// IsArray reports whether v is an array.
func (v Value) IsArray() bool { return v.typ == TypeArray && v.x != nil }

// Len is the number of elements of an array, 0 for a scalar.
func (v Value) Len() int {
	switch s := v.x.(type) {
	case []uint8:
		return len(s)
	case []int8:
		return len(s)
	case []uint16:
		return len(s)
	case []int16:
		return len(s)
	case []uint32:
		return len(s)
	case []int32:
		return len(s)
	case []float32:
		return len(s)
	case []bool:
		return len(s)
	case []string:
		return len(s)
	case []uint64:
		return len(s)
	case []int64:
		return len(s)
	case []float64:
		return len(s)
	case []Value:
		return len(s)
	}
	return 0
}

// Any returns the Go value held: a scalar (uint8 ... float64, bool, string)
// or, for an array, the typed slice ([]uint8 ... []float64, []bool,
// []string, []Value). The slice is shared with v and must not be modified.
func (v Value) Any() any { return v.x }

// Uint returns a scalar integer of any width as uint64; ok is false for a
// non-integer or a negative value.
func (v Value) Uint() (uint64, bool) {
	switch x := v.x.(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case int8, int16, int32, int64:
		i, _ := v.Int()
		if i < 0 {
			return 0, false
		}
		return uint64(i), true
	}
	return 0, false
}

// Int returns a scalar integer of any width as int64; ok is false for a
// non-integer or a uint64 above math.MaxInt64.
func (v Value) Int() (int64, bool) {
	switch x := v.x.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8, uint16, uint32, uint64:
		u, _ := v.Uint()
		if u > math.MaxInt64 {
			return 0, false
		}
		return int64(u), true
	}
	return 0, false
}

// Float returns a float32 or float64 scalar as float64; integer scalars are
// converted too (some writers store whole-number parameters as integers).
func (v Value) Float() (float64, bool) {
	switch x := v.x.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	if i, ok := v.Int(); ok {
		return float64(i), true
	}
	if u, ok := v.Uint(); ok {
		return float64(u), true
	}
	return 0, false
}

// Bool returns a bool scalar.
func (v Value) Bool() (bool, bool) {
	b, ok := v.x.(bool)
	return b, ok
}

// Str returns a string scalar. (String formats any Value for display.)
func (v Value) Str() (string, bool) {
	s, ok := v.x.(string)
	return s, ok
}

// Strings returns an array of strings. The slice is shared with v and must
// not be modified.
func (v Value) Strings() ([]string, bool) {
	s, ok := v.x.([]string)
	return s, ok
}

// Float32s returns an array of float32 (shared with v; do not modify), or
// an array of float64 converted to a new []float32.
func (v Value) Float32s() ([]float32, bool) {
	switch s := v.x.(type) {
	case []float32:
		return s, true
	case []float64:
		out := make([]float32, len(s))
		for i, f := range s {
			out[i] = float32(f)
		}
		return out, true
	}
	return nil, false
}

// Int32s returns an array of int32 (shared with v; do not modify), or an
// array of any other integer type converted to a new []int32 when every
// element fits.
func (v Value) Int32s() ([]int32, bool) {
	switch s := v.x.(type) {
	case []int32:
		return s, true
	case []uint8:
		return toInt32s(s)
	case []int8:
		return toInt32s(s)
	case []uint16:
		return toInt32s(s)
	case []int16:
		return toInt32s(s)
	case []uint32:
		return toInt32s(s)
	case []uint64:
		return toInt32s(s)
	case []int64:
		return toInt32s(s)
	}
	return nil, false
}

func toInt32s[T uint8 | int8 | uint16 | int16 | uint32 | uint64 | int64](s []T) ([]int32, bool) {
	out := make([]int32, len(s))
	for i, x := range s {
		if x < 0 && int64(x) < math.MinInt32 || x > 0 && uint64(x) > math.MaxInt32 {
			return nil, false
		}
		out[i] = int32(x)
	}
	return out, true
}

// Index returns element i of an array as a Value; the zero Value if v is not
// an array or i is out of range.
func (v Value) Index(i int) Value {
	if i < 0 || i >= v.Len() {
		return Value{}
	}
	switch s := v.x.(type) {
	case []uint8:
		return Value{typ: TypeUint8, x: s[i]}
	case []int8:
		return Value{typ: TypeInt8, x: s[i]}
	case []uint16:
		return Value{typ: TypeUint16, x: s[i]}
	case []int16:
		return Value{typ: TypeInt16, x: s[i]}
	case []uint32:
		return Value{typ: TypeUint32, x: s[i]}
	case []int32:
		return Value{typ: TypeInt32, x: s[i]}
	case []float32:
		return Value{typ: TypeFloat32, x: s[i]}
	case []bool:
		return Value{typ: TypeBool, x: s[i]}
	case []string:
		return Value{typ: TypeString, x: s[i]}
	case []uint64:
		return Value{typ: TypeUint64, x: s[i]}
	case []int64:
		return Value{typ: TypeInt64, x: s[i]}
	case []float64:
		return Value{typ: TypeFloat64, x: s[i]}
	case []Value:
		return s[i]
	}
	return Value{}
}

// Equal reports whether v and o have the same type and contents. Floats
// compare by bit pattern, so a NaN equals itself.
func (v Value) Equal(o Value) bool {
	if v.typ != o.typ || (v.x == nil) != (o.x == nil) {
		return false
	}
	if v.typ != TypeArray {
		return scalarEqual(v.x, o.x)
	}
	if v.elem != o.elem || v.Len() != o.Len() {
		return false
	}
	switch a := v.x.(type) {
	case []string:
		return slices.Equal(a, o.x.([]string))
	case []uint8:
		return slices.Equal(a, o.x.([]uint8))
	case []int32:
		return slices.Equal(a, o.x.([]int32))
	case []float32:
		b := o.x.([]float32)
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				return false
			}
		}
		return true
	}
	for i := range v.Len() {
		if !v.Index(i).Equal(o.Index(i)) {
			return false
		}
	}
	return true
}

func scalarEqual(a, b any) bool {
	switch x := a.(type) {
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	}
	return a == b
}

// maxShown is how many array elements String prints before eliding.
const maxShown = 8

// String formats v for display: strings quoted, arrays as
// "[a b c ... (N elements)]" showing at most 8 elements.
func (v Value) String() string {
	if v.x == nil {
		return "<invalid>"
	}
	if v.typ != TypeArray {
		if s, ok := v.x.(string); ok {
			return strconv.Quote(s)
		}
		return fmt.Sprint(v.x)
	}
	var b strings.Builder
	b.WriteByte('[')
	n := v.Len()
	for i := range min(n, maxShown) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(v.Index(i).String())
	}
	if n > maxShown {
		fmt.Fprintf(&b, " ... (%d elements)", n)
	}
	b.WriteByte(']')
	return b.String()
}
