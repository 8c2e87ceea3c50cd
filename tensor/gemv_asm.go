//go:build (amd64 || arm64) && !noasm

package tensor

import "unsafe"

// Helpers of the float gemvs on both architectures with assembly.

// checkGemv panics unless a gemv's operands hold rows weight rows of wrb
// bytes at wstride, ntok activation rows of xrb bytes at xstride and the
// outputs: the assembly behind a gemv must never read or write out of bounds.
func checkGemv(wlen, wstride, rows, wrb, xlen, xstride, ntok, xrb, olen, ostride int) {
	if rows < 1 || ntok < 1 || wstride < 0 || xstride < 0 || ostride < 0 ||
		(rows-1)*wstride+wrb > wlen || (ntok-1)*xstride+xrb > xlen || (ntok-1)*ostride+rows > olen ||
		(ntok > 1 && ostride < rows) {
		panic("tensor: gemv operands out of range")
	}
}

// ptr returns a pointer to b's first byte (nil-safe for empty b).
func ptr(b []byte) *byte { return unsafe.SliceData(b) }

// floatTails adds the n%32 tail elements, which the assembly leaves out, to
// every output: tail(w row, x row, np, cols, sum) continues the sum. wsize
// and xsize are the bytes per weight and per activation.
func floatTails(tail func(w, x []byte, from, to int, sum float32) float32, wsize, xsize int,
	w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	np := cols &^ 31
	if np == cols {
		return
	}
	for t := range ntok {
		xt := x[t*xs : t*xs+xsize*cols]
		o := out[t*os : t*os+rows]
		for r := range o {
			o[r] = tail(w[r*ws:r*ws+wsize*cols], xt, np, cols, o[r])
		}
	}
}

func tailF32(w, x []byte, from, to int, sum float32) float32 {
	for i := from; i < to; i++ {
		sum = fma32(f32at(w, i), f32at(x, i), sum)
	}
	return sum
}

func tailF16(w, x []byte, from, to int, sum float32) float32 {
	s := float64(sum)
	for i := from; i < to; i++ {
		s += float64(float32(F16ToF32(le16(w[2*i:])) * F16ToF32(le16(x[2*i:]))))
	}
	return float32(s)
}

// gemvDot is g's one-row dot: one weight row, one token. Called with a
// named gemv it inlines to a direct call, so the output stays on the stack.
func gemvDot(g gemv, w, x []byte, n int) float32 {
	var o [1]float32
	g(w, 0, 1, x, 0, 1, n, o[:], 0)
	return o[0]
}
