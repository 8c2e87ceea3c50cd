//go:build amd64 && !noasm

package tensor

import "fmt"

// Q8_0 and Q4_0 weights with AVX-512 VNNI. llama.cpp converts activations
// for both to Q8_0 blocks; the kernels here take the same quants and scale
// in a block laid out for VPDPBUSD, with the part that depends on the
// activation alone computed once per MatMul by the conversion instead of
// once per group of eight rows and token (block_q8_vnni, q8vnni.go).
//
// The weights are used unsigned: Q4_0 keeps its nibbles q, Q8_0 flips its
// quants to w+128. Each row's sum over a block, started from off, is then
// exactly Σ (q-8)·y or Σ w·y, and acc = fma(float32(sum), d_w·d_x, acc):
// the arithmetic of dotQ4_0Generic and dotQ8_0Generic, in their order, so
// results are bit-identical to the AVX2 and pure-Go kernels.
//
// The AVX2 Q8_0 kernels (dot_amd64.go) keep the ggml Q8_0 layout;
// ActType(Q8_0) is q8VNNI128 only while useVNNI. Q4_0 takes q8VNNI with
// AVX2 as well (dotq4t_amd64.go).

// q8VNNI128 is the activation type of Q8_0 weights under useVNNI (q8vnni.go;
// its off is -128·Σ qs).
const q8VNNI128 Type = 60

// registerQ0VNNITypes registers the converters into the two layouts where
// the VNNI set may run (their names are in registerArchTypeInfos).
func registerQ0VNNITypes() {
	if hasAVX2FMA && !hasVNNI {
		// The AVX2 Q4_0 kernel's layout (dotq4t_amd64.go).
		registerAct(q8VNNI, quantizeQ8VNNIActAVX2)
	}
	if hasVNNI {
		registerAct(q8VNNI, quantizeQ8VNNIAct)
		registerAct(q8VNNI128, quantizeQ8VNNI128Act)
	}
}

// setVNNI sets useVNNI (where hasVNNI) and registers every kernel again
// for that form. Tests flip the form through it; it must not run
// concurrently with a kernel.
func setVNNI(v bool) {
	useVNNI = v && hasVNNI
	registerKernels()
}

// registerQ0Kernels registers the Q8_0 and Q4_0 kernels of the form
// useVNNI selects with their activation type (from registerQ0, after
// installArchImpls has installed the AVX2 ones); Q8_0 in the lanes order
// (q8Order) always takes the AVX2 kernels.
func registerQ0Kernels() {
	if useVNNI {
		registerKernel(Q8_0, q8VNNI128, dotQ8_0V)
		registerKernel(Q4_0, q8VNNI, dotQ4_0V)
		registerGemv(Q8_0, gemvQ8_0V)
		registerGemv(Q4_0, gemvQ4_0V)
	} else {
		registerKernel(Q8_0, Q8_0, dotQ8_0)
		registerKernel(Q4_0, Q8_0, dotQ4_0)
		registerGemv(Q8_0, nil)
		registerGemv(Q4_0, nil)
		if hasAVX2FMA {
			// Q4_0 takes the q8VNNI layout with AVX2 too (dotq4t_amd64.go).
			registerKernel(Q4_0, q8VNNI, dotQ4_0T)
			registerGemv(Q8_0, gemvQ8_0)
			registerGemv(Q4_0, gemvQ4_0T)
		}
	}
	// Repack writes one layout whatever the form, so a matrix interleaved
	// under one form computes under the other. Interleaved Q4_0 takes the
	// kernel of the form in use, on q8VNNI activations in both (the AVX2
	// and the AVX-512 converters write the same bytes); interleaved Q8_0
	// keeps the VNNI kernel (the AVX2 form's VPMADDUBSW would saturate on
	// its unsigned quants, and repackTarget makes none under it).
	if hasAVX2FMA {
		registerKernel(q4_0x8, q8VNNI, interleavedDot)
		registerGemv(q4_0x8, gemvQ4_0x8T)
		if useVNNI {
			registerGemv(q4_0x8, gemvQ4_0x8)
		}
	}
	if hasVNNI {
		registerKernel(q8_0x8, q8VNNI128, interleavedDot)
		registerGemv(q8_0x8, gemvQ8_0x8)
	}
	if q8Order == Q8_0Lanes {
		registerKernel(Q8_0, Q8_0, dotQ8_0Lanes)
		registerGemv(Q8_0, nil)
		if hasAVX2FMA {
			registerGemv(Q8_0, gemvQ8_0Lanes)
		}
	}
}

// q0Rows8V computes, over nb blocks, for groups of eight weight rows of
// bsize-byte blocks (Q4_0 18, Q8_0 34) and ntok (1 to 8) q8VNNI activation
// rows,
//
//	for t := range ntok { for r := range 8*groups {
//		out[t*ostride+r] = dot(w[r*wstride:], q8_0 form of x[t*xstride:], 32*nb) } }
//
// with dot dotQ4_0Generic or dotQ8_0Generic.
//
//go:noescape
func q0Rows8V(w *byte, wstride, groups int, x *byte, xstride, ntok, nb int, out *float32, ostride int, bsize int)

func dotQ8_0V(w, x []byte, n int) float32 { return gemvDot(gemvQ8_0V, w, x, n) }

func dotQ4_0V(w, x []byte, n int) float32 { return gemvDot(gemvQ4_0V, w, x, n) }

func gemvQ8_0V(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvQ0V(q8_0Size, w, ws, rows, x, xs, ntok, cols, out, os)
}

func gemvQ4_0V(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvQ0V(q4_0Size, w, ws, rows, x, xs, ntok, cols, out, os)
}

// gemvQ0V runs q0Rows8V over the rows (gemvGroups8).
func gemvQ0V(bsize int, w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qk
	checkGemv(len(w), ws, rows, nb*bsize, len(x), xs, ntok, nb*q8VNNISize, len(out), os)
	gemvGroups8(w, ws, rows, x, xs, ntok, out, os, func(w *byte, ws, groups int, x *byte, nt int, out *float32, os int) {
		q0Rows8V(w, ws, groups, x, xs, nt, nb, out, os, bsize)
	})
}

// repackTarget is the interleaved type Repack makes of t: Q4_0 with the
// AVX2 or the VNNI kernels (q4_0x8RowsT<T>AVX2 or q0x8Rows8V, which repeat the
// arithmetic of the form's row-major kernel), Q8_0 (in its default order)
// only while the VNNI kernels are in use (the AVX2 Q8_0 kernels keep the
// ggml layout and signed quants).
func repackTarget(t Type) (Type, bool) {
	switch {
	case t == Q4_0 && hasAVX2FMA:
		return q4_0x8, true
	case t == Q8_0 && useVNNI && q8Order != Q8_0Lanes:
		return q8_0x8, true
	}
	return 0, false
}

// q0x8Rows8V computes, for groups of eight interleaved rows of gsize bytes
// per block (Q4_0 144, Q8_0 272), contiguous from w, over nb blocks and
// ntok (1 to 8) q8VNNI activation rows, the outputs q0Rows8V computes from
// the same rows row-major. Its arguments are q0Rows8V's (the two share
// their code by frame offsets); wstride is not used.
//
//go:noescape
func q0x8Rows8V(w *byte, wstride, groups int, x *byte, xstride, ntok, nb int, out *float32, ostride int, gsize int)

func gemvQ4_0x8(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvQ0x8(q4_0Size, w, ws, rows, x, xs, ntok, cols, out, os)
}

func gemvQ8_0x8(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvQ0x8(q8_0Size, w, ws, rows, x, xs, ntok, cols, out, os)
}

// gemvQ0x8 runs q0x8Rows8V over whole groups of interleaved rows (MatMul's
// chunks are whole groups; the matrix is never strided).
func gemvQ0x8(bsize int, w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qk
	checkInterleaved(bsize, ws, rows, cols)
	checkGemv(len(w), ws, rows, nb*bsize, len(x), xs, ntok, nb*q8VNNISize, len(out), os)
	for t := 0; t < ntok; t += 8 {
		q0x8Rows8V(ptr(w), ws, rows/8, &x[t*xs], xs, min(8, ntok-t), nb, &out[t*os], os, 8*bsize)
	}
}

// checkInterleaved panics unless an interleaved gemv of bsize-byte blocks
// is given whole groups of rows of a matrix that is not strided.
func checkInterleaved(bsize, ws, rows, cols int) {
	if rows%8 != 0 || ws != cols/qk*bsize {
		panic("tensor: interleaved gemv on a partial group of rows or a strided matrix")
	}
}

// interleavedDot is the single-row dot of an interleaved type, which has
// none: its rows are not contiguous, and MatMul always takes its gemv.
func interleavedDot(w, x []byte, n int) float32 {
	panic(fmt.Sprintf("tensor: an interleaved matrix has no single-row dot (%d elements)", n))
}
