package tensor

import (
	"encoding/binary"
	"runtime"
	"sync"
)

// Interleaved weights. A one-token product over a row-major matrix reads
// each weight row as its own stream, and a kernel that serves eight rows at
// once transposes their blocks in registers for every block it reads.
// Repack does that transposition once, at load, into a copy laid out in
// groups of eight rows (llama.cpp repacks Q4_0 rows into 8×8 blocks at load
// for the same reason: ggml_gemv_q4_0_8x8_q8_0):
//
//	group of rows 8g..8g+7, block b (blocks of all eight rows, b in order):
//		d   [8]uint16          // the rows' F16 scales, lane l: row 8g+p[l]
//		qs  [size/4][8][4]byte // word l of the j-th 32 bytes: row 8g+p[l]'s quant bytes 4j..4j+3
//
// with p = [0 2 4 6 1 3 5 7], the lane order the AVX-512 row-major
// kernel's transpose produces (so the two VNNI kernels share their code
// after decoding; the AVX2 Q4_0 ones put their outputs in row order with a
// permutation at the store),
// and size the quant bytes of one row's block (16 for Q4_0, 32 for Q8_0;
// Q8_0 quants stored as unsigned w+128, the form the kernel multiplies).
// A group takes exactly the bytes of its eight rows (144 per Q4_0 block,
// 272 per Q8_0 block), so chunks of whole groups are still row ranges of
// RowSize(t, cols) bytes per row. The kernels compute every output with the
// same operations, in the same order, as the row-major type's kernel: the
// results are bit-identical (TestRepack).
//
// An interleaved matrix's rows are not contiguous: MatMul computes with
// it, Matrix.DequantizeRow reads a row back, Matrix.Row refuses it.

// q8_0x8 and q4_0x8 are Q8_0 and Q4_0 with rows interleaved by eight
// (Repack), ids ggml does not use; they are not weight types of a file.
const (
	q8_0x8 Type = 56
	q4_0x8 Type = 57
)

// rowMajor is the row-major type an interleaved type t holds, and whether
// t is one.
func rowMajor(t Type) (Type, bool) {
	switch t {
	case q8_0x8:
		return Q8_0, true
	case q4_0x8:
		return Q4_0, true
	}
	return t, false
}

// Repack returns m in the layout of the fastest kernel for its type on this
// CPU: a new Matrix with its own copy of the data, interleaved by eight
// rows, for matrices of a multiple of eight rows that are Q4_0 where the
// AVX2 or the AVX-512 VNNI kernels are in use, or Q8_0 where the VNNI ones
// are; m itself otherwise. The copy computes bit-identical MatMul
// results; it takes as much memory as m's data, and m (often a view of a
// mapped file) is no longer read.
func Repack(m *Matrix) *Matrix {
	t, ok := repackTarget(m.Type)
	if !ok || m.Rows%8 != 0 || m.Check() != nil {
		return m
	}
	out := &Matrix{Type: t, Rows: m.Rows, Cols: m.Cols, Data: make([]byte, len(m.Data))}
	// Groups are independent: large matrices are split over the CPUs (a
	// load-time cost, paid once; one thread copies about 0.5–0.8 GB/s).
	rb := m.RowBytes()
	groups := m.Rows / 8
	parts := min(runtime.GOMAXPROCS(0), max(len(m.Data)/repackPart, 1), groups)
	var wg sync.WaitGroup
	for i := range parts {
		g0, g1 := groups*i/parts, groups*(i+1)/parts
		wg.Go(func() {
			span := func(b []byte) []byte { return b[g0*8*rb : g1*8*rb] }
			interleave8(span(out.Data), span(m.Data), m.Type, 8*(g1-g0), m.Cols, false)
		})
	}
	wg.Wait()
	return out
}

// repackPart is the least share of a matrix Repack gives one goroutine.
const repackPart = 4 << 20

// Interleaved reports whether m is in an interleaved layout (Repack), in
// which its rows are not contiguous.
func Interleaved(m *Matrix) bool { _, ok := rowMajor(m.Type); return ok }

// DequantizeRow writes row r of m, in either layout, as float32 to
// dst[:m.Cols].
func (m *Matrix) DequantizeRow(dst []float32, r int) {
	plain, ok := rowMajor(m.Type)
	if !ok {
		DequantizeRow(dst, m.Type, m.Row(r))
		return
	}
	// Unpack the row's group, then take the row.
	rb := m.RowBytes()
	g := r / 8
	rows := make([]byte, 8*rb)
	interleave8(m.Data[g*8*rb:(g+1)*8*rb], rows, plain, 8, m.Cols, true)
	DequantizeRow(dst, plain, rows[(r%8)*rb:(r%8+1)*rb])
}

// interleave8 writes the rows × cols matrix plain of row-major type t
// (Q4_0 or Q8_0, rows a multiple of 8) into packed in t's interleaved
// layout, or, with unpack, packed back into plain.
func interleave8(packed, plain []byte, t Type, rows, cols int, unpack bool) {
	bsize := t.TypeSize()
	var flip uint32
	if t == Q8_0 {
		flip = 0x80808080
	}
	le := binary.LittleEndian
	nb := cols / qk
	rb := nb * bsize
	for g := 0; g < rows/8; g++ {
		for b := range nb {
			blk := packed[g*8*rb+b*8*bsize:][:8*bsize]
			for l, pl := range groupLanes {
				row := plain[(8*g+pl)*rb+b*bsize:][:bsize]
				// The scale, then the quants a word at a time (a word of
				// Q8_0 quants flips its sign bits either way).
				if unpack {
					row[0], row[1] = blk[2*l], blk[2*l+1]
				} else {
					blk[2*l], blk[2*l+1] = row[0], row[1]
				}
				for j := 0; j < bsize-2; j += 4 {
					p, q := blk[16+(j/4)*32+4*l:][:4], row[2+j:][:4]
					if unpack {
						le.PutUint32(q, le.Uint32(p)^flip)
					} else {
						le.PutUint32(p, le.Uint32(q)^flip)
					}
				}
			}
		}
	}
}

// groupLanes is the row of each lane of an interleaved group (p above).
var groupLanes = [8]int{0, 2, 4, 6, 1, 3, 5, 7}
