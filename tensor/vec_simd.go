//go:build (amd64 || arm64) && !noasm

package tensor

// The attention vector kernels both assembly architectures share, over
// their kernels f32RowsKernel, axpyF32Kernel, axpyRoundF16Kernel and
// scaleRoundF16Kernel (vec_amd64.go, vec_arm64.go): the assembly takes the
// whole vector blocks, Go the columns past them.

func dotRowsF32Fast(out, k, q []float32) {
	d := len(q)
	if d == 0 {
		clear(out)
		return
	}
	np := d &^ 31
	kb, qb := f32sBytes(k), f32sBytes(q)
	f32RowsKernel(&kb[0], 4*d, len(out), &qb[0], np, &out[0])
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
		axpyF32Kernel(&y[0], &x[0], n8, a)
	}
	axpyF32Generic(y[n8:], x[n8:len(y)], a)
}

func axpyRoundF16Fast(y, x []float32, a float32) {
	np := len(y) &^ 31
	if np > 0 {
		axpyRoundF16Kernel(&y[0], &x[0], np, a)
	}
	for i := np; i < len(y); i++ {
		y[i] = roundHalf(y[i] + float32(x[i]*a))
	}
}

func scaleRoundF16Fast(y []float32, s float32) {
	n8 := len(y) &^ 7
	if n8 > 0 {
		scaleRoundF16Kernel(&y[0], n8, s)
	}
	scaleRoundF16Generic(y[n8:], s)
}
