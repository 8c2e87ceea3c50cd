//go:build amd64 && !noasm

package tensor

//go:generate env -u GOARCH go run -C asm . -kernels q4t -out ../dotq4x8t_amd64.s -stubs ../dotq4x8t_stubs_amd64.go -pkg tensor

// Q4_0 weights with AVX2 on the q8VNNI activation layout (dotq_amd64.go),
// the one the AVX-512 VNNI kernels take: the activation side's part of
// Σ (q-8)·y, -8·Σ y, is computed once per MatMul by the conversion, so the
// kernel's work per token is eight VPMADDUBSW on transposed weights
// (q4_0Rows8VT) instead of decoding and reducing eight rows for every
// token, and several tokens cost little more than one. Bit-identical to
// dotQ4_0Generic on the Q8_0 form of the same activations.
//
// A matrix interleaved by eight rows at load (q4_0x8, Repack) needs no
// transpose at all: its block of eight rows is, as loaded, the registers
// q4_0Rows8VT builds (in the lane order of repack.go, which the kernels
// undo at the store), so q4_0x8RowsT<T>AVX2 and q4_0x8Rows8V1 read four vectors
// and the scales per block where the row-major kernels gather eight rows,
// with the same products, sums and float operations per output. On an AMD
// EPYC with SPECD_CPU=avx2 (BenchmarkRepack, 2560×896 at one thread) that
// is 1.6x faster than the row-major kernels at one token and 1.3-1.6x at
// five (the tokens share the decoding, which is what interleaving saves).

// q4_0Rows8VT computes, for groups of eight rows and ntok (1 to 8) q8VNNI
// activation rows,
//
//	for t := range ntok { for r := range 8*groups {
//		out[t*ostride+r] = dotQ4_0Generic(w[r*wstride:], q8_0 form of x[t*xstride:], 32*nb) } }
//
//go:noescape
func q4_0Rows8VT(w *byte, wstride, groups int, x *byte, xstride, ntok, nb int, out *float32, ostride int)

// q4_0Rows8V1 is q4_0Rows8 on one q8VNNI activation row:
//
//	for r := range 8*groups {
//		out[r] = dotQ4_0Generic(w[r*wstride:], q8_0 form of x, 32*nb) }
//
//go:noescape
func q4_0Rows8V1(w *byte, wstride, groups int, x *byte, nb int, out *float32)

// gemvQ4_0T runs q4_0Rows8VT over the rows (gemvGroups8), q4_0Rows8V1 for
// a single token.
func gemvQ4_0T(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qk
	checkGemv(len(w), ws, rows, nb*q4_0Size, len(x), xs, ntok, nb*q8VNNISize, len(out), os)
	gemvGroups8(w, ws, rows, x, xs, ntok, out, os, func(w *byte, ws, groups int, x *byte, nt int, out *float32, os int) {
		if nt == 1 {
			q4_0Rows8V1(w, ws, groups, x, nb, out)
			return
		}
		q4_0Rows8VT(w, ws, groups, x, xs, nt, nb, out, os)
	})
}

func dotQ4_0T(w, x []byte, n int) float32 { return gemvDot(gemvQ4_0T, w, x, n) }

// q4_0x8Rows8V1 is q4_0Rows8V1 on groups of eight interleaved rows
// (q4_0x8, 144 bytes a block, contiguous from w): the same outputs, bit
// for bit, in row order.
//
//go:noescape
func q4_0x8Rows8V1(w *byte, groups int, x *byte, nb int, out *float32)

// gemvQ4_0x8T runs the kernels of interleaved Q4_0 over whole groups of
// rows: q4_0x8RowsT<T>AVX2 for passes of 2 to 5 tokens (q4x8TRun),
// q4_0x8Rows8V1 for one.
func gemvQ4_0x8T(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qk
	checkInterleaved(q4_0Size, ws, rows, cols)
	checkGemv(len(w), ws, rows, nb*q4_0Size, len(x), xs, ntok, nb*q8VNNISize, len(out), os)
	for t := 0; t < ntok; {
		nt := q4x8TRun(ntok - t)
		if nt == 1 {
			q4_0x8Rows8V1(ptr(w), rows/8, &x[t*xs], nb, &out[t*os])
		} else {
			q4x8TKernels[nt-1](ptr(w), rows/8, &x[t*xs], xs, nb, &out[t*os], os)
		}
		t += nt
	}
}

// q4x8TKernels are q4_0x8RowsT<T>AVX2 by T-1 (from T = 2).
var q4x8TKernels = [...]func(w *byte, groups int, x *byte, xstride, nb int, out *float32, ostride int){
	nil, q4_0x8RowsT2AVX2, q4_0x8RowsT3AVX2, q4_0x8RowsT4AVX2, q4_0x8RowsT5AVX2}

// q4x8TRun is how many of the n ≥ 1 tokens left the next pass takes: all
// of them up to five, six as three and three, else five. (Against a
// kernel that kept eight tokens' accumulators in the frame, on an AMD
// EPYC with SPECD_CPU=avx2, 2560×896 at one thread: 12% less time for two
// to five tokens, 18% for eight as 5 + 3, the same for six as 3 + 3.)
func q4x8TRun(n int) int {
	switch {
	case n <= 5:
		return n
	case n == 6:
		return 3
	}
	return 5
}

// quantizeQ8VNNIActAVX2 is quantizeQ8VNNIAct with AVX2 only: the AVX2 Q8_0
// converter writes the Q8_0 blocks at the end of dst, and q8VNNIInPlace
// lays them out as q8VNNIFromQ8_0(..., 3) does, front to back.
func quantizeQ8VNNIActAVX2(dst []byte, src []float32) {
	nb := len(src) / qk
	if nb == 0 {
		return
	}
	dst = dst[:nb*q8VNNISize]
	q := dst[nb*(q8VNNISize-q8_0Size):]
	quantizeQ8_0AVX2(&q[0], &src[0], nb)
	q8VNNIInPlace(dst, nb, 3)
}
