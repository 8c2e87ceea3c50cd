package tensor

// Design of MatMul. A weight matrix is split by output rows into chunks
// (several per thread, a multiple of 8 rows) that the threads of a Pool
// claim from an atomic counter, so late or slow threads still finish
// together. The activations are converted once per call into the pool's
// grow-only scratch (or viewed in place for F32). Each chunk is handed to
// the weight type's gemv kernel, which loops over its rows and the batch's
// tokens in assembly: several tokens share each weight load (four at a time)
// and, for Q4_0, eight rows share each activation block. Every output is
// computed with the same operations in the same order as the type's single
// VecDot, so a token's logits do not depend on the batch it is in, the
// chunking or the thread count. How the threads meet is in pool.go.

import "fmt"

// Matrix is a row-major weight matrix as stored in a GGUF file: Rows rows of
// Cols elements (ne1 = Rows, ne0 = Cols), each row RowSize(Type, Cols) bytes.
type Matrix struct {
	Type       Type
	Rows, Cols int
	Data       []byte
}

// RowBytes returns the size in bytes of one row of m.
func (m *Matrix) RowBytes() int { return RowSize(m.Type, m.Cols) }

// Row returns the bytes of row r. It panics on an interleaved matrix
// (Repack), whose rows are not contiguous.
func (m *Matrix) Row(r int) []byte {
	if Interleaved(m) {
		panic(fmt.Sprintf("tensor: Row of an interleaved %v matrix", m.Type))
	}
	rb := m.RowBytes()
	return m.Data[r*rb : (r+1)*rb]
}

// Check reports whether m is usable by MatMul: a type with a kernel, Cols a
// multiple of its block size, and Data holding exactly Rows rows.
func (m *Matrix) Check() error {
	if !CanMatMul(m.Type) {
		return fmt.Errorf("tensor: no matmul kernel for weight type %v", m.Type)
	}
	if m.Rows <= 0 || m.Cols <= 0 {
		return fmt.Errorf("tensor: matrix shape %d×%d is empty", m.Rows, m.Cols)
	}
	rb := RowSize(m.Type, m.Cols)
	if rb < 0 {
		return fmt.Errorf("tensor: %d columns is not a multiple of %v's block size %d", m.Cols, m.Type, m.Type.BlockSize())
	}
	if len(m.Data)/rb < m.Rows || len(m.Data) != rb*m.Rows {
		return fmt.Errorf("tensor: %v matrix %d×%d needs %d bytes, has %d", m.Type, m.Rows, m.Cols, rb*m.Rows, len(m.Data))
	}
	return nil
}

// work claims chunks of rows until none are left. Every output element is
// computed exactly as the type's VecDot computes it (gemv kernels promise
// this), so the result does not depend on which thread computes which chunk
// or on how many tokens share the call.
func (j *job) work() {
	for {
		c := int(j.next.Add(1) - 1)
		if c >= j.nChunks {
			return
		}
		r0 := c * j.chunk
		r1 := min(r0+j.chunk, j.rows)
		if j.gemv != nil {
			j.gemv(j.w[r0*j.wRow:r1*j.wRow], j.wRow, r1-r0, j.act, j.aRow, j.n, j.cols, j.out[r0:], j.rows)
			continue
		}
		for r := r0; r < r1; r++ {
			w := j.w[r*j.wRow : (r+1)*j.wRow]
			for t := range j.n {
				j.out[t*j.rows+r] = j.dot(w, j.act[t*j.aRow:(t+1)*j.aRow], j.cols)
			}
		}
	}
}

// MatMul computes out[t*m.Rows+r] = dot(row r of m, x[t*m.Cols:(t+1)*m.Cols])
// for t in [0, n) and r in [0, m.Rows). The activations are first converted
// to the weight type's activation type as llama.cpp's CPU backend does (Q8_0
// blocks for Q8_0 and Q4_0 weights, Q8_K for K-quants, F16 for F16, BF16 for
// BF16, none for F32). Each output is one dot product computed the same way
// whatever n and the thread count, so results are bit-identical across batch
// compositions.
//
// Shapes are the caller's contract (check m once with Matrix.Check): MatMul
// panics if m has no kernel or out or x is too short.
func (p *Pool) MatMul(out []float32, m *Matrix, x []float32, n int) {
	k, ok := kernelFor(m.Type)
	if !ok {
		panic(fmt.Sprintf("tensor: MatMul: no kernel for weight type %v", m.Type))
	}
	if n <= 0 {
		return
	}
	x = x[:n*m.Cols]
	aRow := RowSize(k.act, m.Cols)
	if aRow < 0 {
		panic(fmt.Sprintf("tensor: MatMul: %d columns is not a multiple of %v's block size", m.Cols, k.act))
	}
	var act []byte
	if k.act == F32 {
		act = f32sBytes(x)
	} else {
		p.scratch = PrepareActivations(p.scratch, k.act, x, m.Cols, n)
		act = p.scratch
	}
	p.run(out, m, act, aRow, n, k)
}

// MatMulPrepared is MatMul with activations already converted by
// PrepareActivations (for reuse across several matrices of the same type and
// width, such as Q, K and V). act holds n rows of RowSize(ActType(m.Type),
// m.Cols) bytes.
func (p *Pool) MatMulPrepared(out []float32, m *Matrix, act []byte, n int) {
	k, ok := kernelFor(m.Type)
	if !ok {
		panic(fmt.Sprintf("tensor: MatMulPrepared: no kernel for weight type %v", m.Type))
	}
	if n <= 0 {
		return
	}
	aRow := RowSize(k.act, m.Cols)
	p.run(out, m, act[:n*aRow], aRow, n, k)
}

// PrepareActivations converts n rows of cols activations from x into dst in
// activation type act (see ActType), growing dst if needed, and returns it.
func PrepareActivations(dst []byte, act Type, x []float32, cols, n int) []byte {
	aRow := RowSize(act, cols)
	q := actQuants[act]
	if aRow < 0 || q == nil {
		panic(fmt.Sprintf("tensor: PrepareActivations: cannot convert %d columns to %v", cols, act))
	}
	if cap(dst) < n*aRow {
		dst = make([]byte, n*aRow)
	}
	dst = dst[:n*aRow]
	for t := range n {
		q(dst[t*aRow:(t+1)*aRow], x[t*cols:(t+1)*cols])
	}
	return dst
}

// chunksPerThread sets how finely rows are split so that threads that start
// late or run slower still finish together.
const chunksPerThread = 8

func (p *Pool) run(out []float32, m *Matrix, act []byte, aRow, n int, k kernel) {
	wRow := RowSize(m.Type, m.Cols)
	j := &p.job
	j.out = out[:n*m.Rows]
	j.w = m.Data[:m.Rows*wRow]
	j.wRow, j.rows, j.cols = wRow, m.Rows, m.Cols
	j.act, j.aRow, j.n, j.dot, j.gemv = act, aRow, n, k.dot, k.gemv
	threads := p.threads
	if m.Rows < 2*threads {
		threads = 1
	}
	j.chunk = max(1, (m.Rows+threads*chunksPerThread-1)/(threads*chunksPerThread))
	j.chunk = (j.chunk + 7) &^ 7 // whole groups for eight-row kernels
	j.nChunks = (m.Rows + j.chunk - 1) / j.chunk
	j.next.Store(0)
	p.dispatch(threads - 1)
	j.out, j.w, j.act, j.dot, j.gemv = nil, nil, nil, nil, nil
}

// DequantizeRow converts len(dst) elements of type t from src to float32
// (embedding lookup). len(dst) must be a multiple of t's block size and src
// hold RowSize(t, len(dst)) bytes; it panics on a type without a
// dequantizer (check CanDequantize when loading a model).
func DequantizeRow(dst []float32, t Type, src []byte) {
	if !CanDequantize(t) {
		panic(fmt.Sprintf("tensor: DequantizeRow: unsupported type %v", t))
	}
	dequants[t](dst, src)
}

// QuantizeRow converts src into dst in type t with ggml's reference
// (weight-side) arithmetic. len(src) must be a multiple of t's block size and
// dst hold at least RowSize(t, len(src)) bytes.
func QuantizeRow(dst []byte, t Type, src []float32) error {
	if uint32(t) >= maxType || quantizers[t] == nil {
		return fmt.Errorf("tensor: cannot quantize to type %v", t)
	}
	rs := RowSize(t, len(src))
	if rs < 0 {
		return fmt.Errorf("tensor: %d elements is not a multiple of %v's block size %d", len(src), t, t.BlockSize())
	}
	if len(dst) < rs {
		return fmt.Errorf("tensor: %v row of %d elements needs %d bytes, dst has %d", t, len(src), rs, len(dst))
	}
	quantizers[t](dst, src)
	return nil
}
