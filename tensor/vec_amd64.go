//go:build amd64 && !noasm

package tensor

// axpyF32AVX2 sets y[i] = fma(x[i], a, y[i]) for i < n&^7.
//
//go:noescape
func axpyF32AVX2(y, x *float32, n int, a float32)

// axpyRoundF16AVX2 sets y[i] = half(fma(x[i], a, y[i])) for i < n&^7.
//
//go:noescape
func axpyRoundF16AVX2(y, x *float32, n int, a float32)

// scaleRoundF16AVX2 sets y[i] = half(y[i]*s) for i < n&^7.
//
//go:noescape
func scaleRoundF16AVX2(y *float32, n int, s float32)

// installAVX2Vec points the attention vector kernels at their AVX2 forms
// (called by installArchImpls where the AVX2 set is in use).
func installAVX2Vec() {
	dotRowsF32Impl = dotRowsF32Fast
	axpyF32Impl = axpyF32Fast
	axpyRoundF16Impl = axpyRoundF16Fast
	scaleRoundF16Impl = scaleRoundF16Fast
}

func dotRowsF32Fast(out, k, q []float32) {
	d := len(q)
	np := d &^ 31
	kb, qb := f32sBytes(k), f32sBytes(q)
	if len(q) == 0 {
		clear(out)
		return
	}
	f32Rows(&kb[0], 4*d, len(out), &qb[0], np, &out[0])
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
		axpyF32AVX2(&y[0], &x[0], n8, a)
	}
	axpyF32Generic(y[n8:], x[n8:len(y)], a)
}

func axpyRoundF16Fast(y, x []float32, a float32) {
	np := len(y) &^ 31
	if np > 0 {
		axpyRoundF16AVX2(&y[0], &x[0], np, a)
	}
	for i := np; i < len(y); i++ {
		y[i] = roundHalf(y[i] + float32(x[i]*a))
	}
}

func scaleRoundF16Fast(y []float32, s float32) {
	n8 := len(y) &^ 7
	if n8 > 0 {
		scaleRoundF16AVX2(&y[0], n8, s)
	}
	scaleRoundF16Generic(y[n8:], s)
}
