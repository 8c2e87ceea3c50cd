//go:build amd64 && !noasm

package tensor

//go:generate env -u GOARCH go run -C asm . -kernels dotk -out ../dotk_amd64.s -stubs ../dotk_stubs_amd64.go -pkg tensor

// The T-token K-quant kernels (AVX-512 VL, BW and VNNI, used where useVNNI;
// and AVX2 forms, q4KRowsT*AVX2 and q6KRowsT*AVX2, for 2 up to the largest
// T of their tables) run
// T = 2..8 activation rows at x + t·xstride through one pass over the
// weight rows, writing out[t·ostride + r], bit for bit
//
//	dotQ4KRef(w[r*wstride:], x[t*xstride:], 256*nb)   (q4KRowsT*VNNI)
//	dotQ6KRef(w[r*wstride:], x[t*xstride:], 256*nb)   (q6KRowsT*VNNI)
//
// for every r < rows and t < T (nb ≤ kMaxQ4KTBlocks for Q4_K). Each weight
// block is decoded once for all T tokens; only the integer sums are grouped
// differently from the single-row kernels. The Q4_K kernels first copy each
// block's activation scales and bsums into tables in their frame, token
// lanes side by side, so that per weight block one vector load gives all
// tokens' scales and eight VPDPWSSDs give all tokens' Σ bsums·mins.
// Generated with avo by the asm module (asm/), declared in
// dotk_stubs_amd64.go.

// kMaxQ4KTBlocks bounds the blocks per row (16384 columns) for which the
// Q4_K T-token kernels with tables run: their tables (288 bytes a block)
// live in their frame. Wider rows take the AVX2 kernels without tables
// (q4KRowsT*AVX2W). It is the asm module's maxBlocks.
const kMaxQ4KTBlocks = 64

// kRowsT is the signature of the T-token kernels.
type kRowsT func(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

// The T-token kernels by T (2 ≤ T ≤ 8; Q4_K from 1).
var (
	q4KRowsT = [9]kRowsT{1: q4KRowsT1VNNI, 2: q4KRowsT2VNNI, 3: q4KRowsT3VNNI, 4: q4KRowsT4VNNI, 5: q4KRowsT5VNNI,
		6: q4KRowsT6VNNI, 7: q4KRowsT7VNNI, 8: q4KRowsT8VNNI}
	// The AVX2 forms, 2 ≤ T ≤ the asm module's q4KAVX2MaxT and q6KAVX2MaxT.
	q4KRowsTAVX2 = [9]kRowsT{2: q4KRowsT2AVX2, 3: q4KRowsT3AVX2, 4: q4KRowsT4AVX2, 5: q4KRowsT5AVX2,
		6: q4KRowsT6AVX2}
	q4KRowsTAVX2W = [9]kRowsT{2: q4KRowsT2AVX2W, 3: q4KRowsT3AVX2W, 4: q4KRowsT4AVX2W, 5: q4KRowsT5AVX2W,
		6: q4KRowsT6AVX2W}
	q6KRowsTAVX2 = [9]kRowsT{2: q6KRowsT2AVX2, 3: q6KRowsT3AVX2, 4: q6KRowsT4AVX2, 5: q6KRowsT5AVX2,
		6: q6KRowsT6AVX2, 7: q6KRowsT7AVX2, 8: q6KRowsT8AVX2}
	q6KRowsT = [9]kRowsT{2: q6KRowsT2VNNI, 3: q6KRowsT3VNNI, 4: q6KRowsT4VNNI, 5: q6KRowsT5VNNI,
		6: q6KRowsT6VNNI, 7: q6KRowsT7VNNI, 8: q6KRowsT8VNNI}
)

// gemvKT runs tokens t0 .. t0+T-1 through kern[T].
func gemvKT(kern *[9]kRowsT, w []byte, ws, rows int, x []byte, xs, t0, T, nb int, out []float32, os int) {
	_ = x[(t0+T-1)*xs+nb*q8KBytes-1]
	_ = out[(t0+T-1)*os+rows-1]
	kern[T](&w[0], ws, rows, &x[t0*xs], xs, nb, &out[t0*os], os)
}

// gemvQ4KT runs tokens t0 .. t0+T-1 (1 ≤ T ≤ 8) through q4KRowsT<T>VNNI.
func gemvQ4KT(w []byte, ws, rows int, x []byte, xs, t0, T, nb int, out []float32, os int) {
	gemvKT(&q4KRowsT, w, ws, rows, x, xs, t0, T, nb, out, os)
}

// gemvQ6KT runs tokens t0 .. t0+T-1 (2 ≤ T ≤ 8) through q6KRowsT<T>VNNI.
func gemvQ6KT(w []byte, ws, rows int, x []byte, xs, t0, T, nb int, out []float32, os int) {
	gemvKT(&q6KRowsT, w, ws, rows, x, xs, t0, T, nb, out, os)
}
