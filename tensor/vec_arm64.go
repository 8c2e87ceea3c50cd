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

func dotRowsF32Fast(out, k, q []float32) {
	d := len(q)
	if d == 0 {
		clear(out)
		return
	}
	np := d &^ 31
	kb, qb := f32sBytes(k), f32sBytes(q)
	f32Rows1NEON(&kb[0], 4*d, len(out), &qb[0], np, &out[0])
	if np == d {
		return
	}
	for p := range out {
		out[p] = tailF64(out[p], k[p*d:(p+1)*d], q, np)
	}
}

func axpyF32Fast(y, x []float32, a float32) {
	n8 := len(y) &^ 7
	if n8 > 0 {
		axpyF32NEON(&y[0], &x[0], n8, a)
	}
	axpyF32Generic(y[n8:], x[n8:len(y)], a)
}

func axpyRoundF16Fast(y, x []float32, a float32) {
	np := len(y) &^ 31
	if np > 0 {
		axpyRoundF16NEON(&y[0], &x[0], np, a)
	}
	for i := np; i < len(y); i++ {
		y[i] = roundHalf(y[i] + float32(x[i]*a))
	}
}

func scaleRoundF16Fast(y []float32, s float32) {
	n8 := len(y) &^ 7
	if n8 > 0 {
		scaleRoundF16NEON(&y[0], n8, s)
	}
	scaleRoundF16Generic(y[n8:], s)
}
