package tensor

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
// An interleaved matrix is for MatMul only: its rows are not contiguous,
// so Row and DequantizeRow do not apply to it.

// q8_0x8 and q4_0x8 are Q8_0 and Q4_0 with rows interleaved by eight
// (Repack), ids ggml does not use; they are not weight types of a file.
const (
	q8_0x8 Type = 56
	q4_0x8 Type = 57
)

// interleaved maps each interleaved type to the row-major type it holds.
var interleaved = map[Type]Type{q8_0x8: Q8_0, q4_0x8: Q4_0}

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
	interleave8(out.Data, m.Data, m.Type, m.Rows, m.Cols, false)
	return out
}

// Interleaved reports whether m is in an interleaved layout (Repack), in
// which its rows are not contiguous.
func Interleaved(m *Matrix) bool { _, ok := interleaved[m.Type]; return ok }

// DequantizeRow writes row r of m, in either layout, as float32 to
// dst[:m.Cols].
func (m *Matrix) DequantizeRow(dst []float32, r int) {
	plain, ok := interleaved[m.Type]
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
	flip := t == Q8_0
	// mv moves n bytes between packed[p:] and plain[q:], flipping the
	// sign bit of Q8_0 quants.
	mv := func(p, q, n int, quants bool) {
		src, dst := plain[q:q+n], packed[p:p+n]
		if unpack {
			src, dst = dst, src
		}
		copy(dst, src)
		if quants && flip {
			for i := range dst {
				dst[i] ^= 0x80
			}
		}
	}
	nb := cols / qk
	rb := nb * bsize
	for g := 0; g < rows/8; g++ {
		for b := range nb {
			blk := g*8*rb + b*8*bsize
			for l, pl := range groupLanes {
				row := (8*g+pl)*rb + b*bsize
				mv(blk+2*l, row, 2, false)
				for j := 0; j < bsize-2; j += 4 {
					mv(blk+16+(j/4)*32+4*l, row+2+j, 4, true)
				}
			}
		}
	}
}

// groupLanes is the row of each lane of an interleaved group (p above).
var groupLanes = [8]int{0, 2, 4, 6, 1, 3, 5, 7}
