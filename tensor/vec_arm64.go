//go:build arm64 && !noasm

package tensor

// The arm64 float32 kernels (vec_arm64.s, written by gen_arm64.go): F32
// weights and the attention vector kernels of vec.go, plain NEON.

// f32Rows1NEON computes, for n a multiple of 32,
//
//	for r := range rows { out[r] = dotF32Generic(w[r*wstride:], x, n) }
//
// (which is also dotRowsF32Generic's sum before its tail): eight 4-lane
// accumulators standing for the reference's 32 lanes, fused
// multiply-adds, reduce32's tree.
//
//go:noescape
func f32Rows1NEON(w *byte, wstride, rows int, x *byte, n int, out *float32)

// axpyF32NEON sets y[i] = fma(x[i], a, y[i]) for i < n&^7.
//
//go:noescape
func axpyF32NEON(y, x *float32, n int, a float32)

// axpyRoundF16NEON sets y[i] = half(fma(x[i], a, y[i])) for i < n&^7
// (FCVTN rounds to the nearest half, ties to even, and FCVTL widens it
// back exactly; a NaN stays a NaN, its payload possibly shortened).
//
//go:noescape
func axpyRoundF16NEON(y, x *float32, n int, a float32)

// scaleRoundF16NEON sets y[i] = half(y[i]*s) for i < n&^7.
//
//go:noescape
func scaleRoundF16NEON(y *float32, n int, s float32)

// installNEONVec points the attention vector kernels and the F32 dot at
// their NEON forms (called by installArchImpls).
func installNEONVec() {
	dotRowsF32Impl = dotRowsF32Fast
	axpyF32Impl = axpyF32Fast
	axpyRoundF16Impl = axpyRoundF16Fast
	scaleRoundF16Impl = scaleRoundF16Fast
	dotF32 = func(w, x []byte, n int) float32 { return gemvDot(gemvF32, w, x, n) }
}

// gemvF32 runs f32Rows1NEON once per token and adds the tails (tailF32:
// dotF32Generic's scalar FMAs).
func gemvF32(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	checkGemv(len(w), ws, rows, 4*cols, len(x), xs, ntok, 4*cols, len(out), os)
	np := cols &^ 31
	for t := range ntok {
		f32Rows1NEON(ptr(w), ws, rows, &x[t*xs], np, &out[t*os])
	}
	floatTails(tailF32, 4, 4, w, ws, rows, x, xs, ntok, cols, out, os)
}

// The kernels vec_simd.go calls: NEON.

func f32RowsKernel(w *byte, ws, rows int, x *byte, n int, out *float32) {
	f32Rows1NEON(w, ws, rows, x, n, out)
}
func axpyF32Kernel(y, x *float32, n int, a float32)      { axpyF32NEON(y, x, n, a) }
func axpyRoundF16Kernel(y, x *float32, n int, a float32) { axpyRoundF16NEON(y, x, n, a) }
func scaleRoundF16Kernel(y *float32, n int, s float32)   { scaleRoundF16NEON(y, n, s) }
