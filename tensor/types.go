package tensor

import "fmt"

// Type is a ggml tensor element type, numbered as in ggml.h.
type Type uint32

// The ggml types. Only those with a non-zero BlockSize in typeInfo are
// understood by specd; the others are named so that errors can say which
// unsupported type a file uses.
const (
	F32  Type = 0
	F16  Type = 1
	Q4_0 Type = 2
	Q4_1 Type = 3
	Q5_0 Type = 6
	Q5_1 Type = 7
	Q8_0 Type = 8
	Q8_1 Type = 9
	Q2_K Type = 10
	Q3_K Type = 11
	Q4_K Type = 12
	Q5_K Type = 13
	Q6_K Type = 14
	Q8_K Type = 15
	I8   Type = 24
	I16  Type = 25
	I32  Type = 26
	I64  Type = 27
	F64  Type = 28
	BF16 Type = 30

	// I-quants (ggml numbers them among the types above).
	IQ4_NL Type = 20
	IQ4_XS Type = 23
)

type typeInfo struct {
	name      string
	blockSize int // elements per block
	typeSize  int // bytes per block
	supported bool
}

var types = map[Type]typeInfo{
	F32:  {"F32", 1, 4, true},
	F16:  {"F16", 1, 2, true},
	Q4_0: {"Q4_0", 32, 18, true},
	Q4_1: {"Q4_1", 32, 20, true},
	Q5_0: {"Q5_0", 32, 22, true},
	Q5_1: {"Q5_1", 32, 24, true},
	Q8_0: {"Q8_0", 32, 34, true},
	Q8_1: {"Q8_1", 32, 36, false},
	Q2_K: {"Q2_K", 256, 84, true},
	Q3_K: {"Q3_K", 256, 110, true},
	Q4_K: {"Q4_K", 256, 144, true},
	Q5_K: {"Q5_K", 256, 176, true},
	Q6_K: {"Q6_K", 256, 210, true},
	Q8_K: {"Q8_K", 256, 292, false}, // activation-only type
	I8:   {"I8", 1, 1, false},
	I16:  {"I16", 1, 2, false},
	I32:  {"I32", 1, 4, false},
	I64:  {"I64", 1, 8, false},
	F64:  {"F64", 1, 8, false},
	BF16: {"BF16", 1, 2, true},

	IQ4_NL: {"IQ4_NL", 32, 18, true},
	IQ4_XS: {"IQ4_XS", 256, 136, true},
}

// String returns ggml's name for t, or "type(N)" for an unknown id.
func (t Type) String() string {
	if ti, ok := types[t]; ok {
		return ti.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// Known reports whether t is a ggml type whose block layout specd knows
// (it can compute sizes and skip over it even if it cannot compute with it).
func (t Type) Known() bool { _, ok := types[t]; return ok }

// Supported reports whether specd can use weights of type t.
func (t Type) Supported() bool { return types[t].supported }

// BlockSize is the number of elements in one block of t (1 for float types);
// 0 for an unknown type.
func (t Type) BlockSize() int { return types[t].blockSize }

// TypeSize is the number of bytes in one block of t; 0 for an unknown type.
func (t Type) TypeSize() int { return types[t].typeSize }

// RowSize returns the bytes taken by n elements of type t, or -1 if n is
// not a multiple of t's block size or t is unknown.
func RowSize(t Type, n int) int {
	ti, ok := types[t]
	if !ok || n < 0 || n%ti.blockSize != 0 {
		return -1
	}
	return n / ti.blockSize * ti.typeSize
}
