//go:build amd64 && !noasm

package tensor

import "unsafe"

// The assembly kernels (dot_amd64.s). Each loops over rows weight rows at
// w + r·wstride and writes one float32 per row; the doc comments give the
// Go loop each one computes, bit for bit.

// f32Rows computes, for n a multiple of 32,
//
//	for r := range rows { out[r] = dotF32Generic(w[r*wstride:], x, n) }
//
//go:noescape
func f32Rows(w *byte, wstride, rows int, x *byte, n int, out *float32)

// f16Rows computes, for n a multiple of 32,
//
//	for r := range rows { out[r] = dotF16Generic(w[r*wstride:], x, n) }
//
//go:noescape
func f16Rows(w *byte, wstride, rows int, x *byte, n int, out *float32)

// bf16Rows computes, for n a multiple of 32,
//
//	for r := range rows { out[r] = dotBF16Generic(w[r*wstride:], x, n) }
//
//go:noescape
func bf16Rows(w *byte, wstride, rows int, x *byte, n int, out *float32)

// q8_0Rows computes, over nb blocks,
//
//	for r := range rows { out[r] = dotQ8_0Generic(w[r*wstride:], x, 32*nb) }
//
//go:noescape
func q8_0Rows(w *byte, wstride, rows int, x *byte, nb int, out *float32)

// q8_0Rows4 computes, over nb blocks, for four activation rows at once,
//
//	for t := range 4 { for r := range rows {
//		out[t*ostride+r] = dotQ8_0Generic(w[r*wstride:], x[t*xstride:], 32*nb) } }
//
//go:noescape
func q8_0Rows4(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

// q4_0Rows8 computes, over nb blocks, for groups of eight weight rows,
//
//	for r := range 8*groups { out[r] = dotQ4_0Generic(w[r*wstride:], x, 32*nb) }
//
//go:noescape
func q4_0Rows8(w *byte, wstride, groups int, x *byte, nb int, out *float32)

// q4_0Rows8x4 computes q4_0Rows8 for four activation rows at once:
//
//	for t := range 4 { for r := range 8*groups {
//		out[t*ostride+r] = dotQ4_0Generic(w[r*wstride:], x[t*xstride:], 32*nb) } }
//
//go:noescape
func q4_0Rows8x4(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

// f16ToF32sAVX2 converts the first n&^7 halves of src into dst:
//
//	for i := range n &^ 7 { dst[i] = F16ToF32(src[i]) }
//
//go:noescape
func f16ToF32sAVX2(dst *float32, src *uint16, n int)

func init() {
	if !hasAVX2FMA {
		return
	}
	dotF32 = func(w, x []byte, n int) float32 { return dot1(gemvF32, w, x, n) }
	dotF16 = func(w, x []byte, n int) float32 { return dot1(gemvF16, w, x, n) }
	dotBF16 = func(w, x []byte, n int) float32 { return dot1(gemvBF16, w, x, n) }
	dotQ8_0 = func(w, x []byte, n int) float32 { return dot1(gemvQ8_0, w, x, n) }
	dotQ4_0 = func(w, x []byte, n int) float32 { return dot1(gemvQ4_0, w, x, n) }
	f16ToF32sImpl = f16ToF32sFast
	registerKernel(F32, F32, dotF32)
	registerKernel(F16, F16, dotF16)
	registerKernel(BF16, BF16, dotBF16)
	registerKernel(Q8_0, Q8_0, dotQ8_0)
	registerKernel(Q4_0, Q8_0, dotQ4_0)
	registerGemv(F32, gemvF32)
	registerGemv(F16, gemvF16)
	registerGemv(BF16, gemvBF16)
	registerGemv(Q8_0, gemvQ8_0)
	registerGemv(Q4_0, gemvQ4_0)
}

// dot1 runs a gemv on one weight row and one activation row.
func dot1(g gemv, w, x []byte, n int) float32 {
	var o [1]float32
	g(w, 0, 1, x, 0, 1, n, o[:], 0)
	return o[0]
}

// ptr returns a pointer to b's first byte (nil-safe for empty b).
func ptr(b []byte) *byte { return unsafe.SliceData(b) }

func gemvF32(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	checkGemv(len(w), ws, rows, 4*cols, len(x), xs, ntok, 4*cols, len(out), os)
	np := cols &^ 31
	for t := range ntok {
		xt := x[t*xs : t*xs+4*cols]
		o := out[t*os : t*os+rows]
		f32Rows(ptr(w), ws, rows, ptr(xt), np, &o[0])
		if np == cols {
			continue
		}
		for r := range o {
			wr := w[r*ws : r*ws+4*cols]
			sum := o[r]
			for i := np; i < cols; i++ {
				sum = fma32(f32at(wr, i), f32at(xt, i), sum)
			}
			o[r] = sum
		}
	}
}

func gemvF16(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	checkGemv(len(w), ws, rows, 2*cols, len(x), xs, ntok, 2*cols, len(out), os)
	np := cols &^ 31
	for t := range ntok {
		xt := x[t*xs : t*xs+2*cols]
		o := out[t*os : t*os+rows]
		f16Rows(ptr(w), ws, rows, ptr(xt), np, &o[0])
		if np == cols {
			continue
		}
		for r := range o {
			wr := w[r*ws : r*ws+2*cols]
			sum := float64(o[r])
			for i := np; i < cols; i++ {
				sum += float64(float32(F16ToF32(le16(wr[2*i:])) * F16ToF32(le16(xt[2*i:]))))
			}
			o[r] = float32(sum)
		}
	}
}

func gemvBF16(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	checkGemv(len(w), ws, rows, 2*cols, len(x), xs, ntok, 2*cols, len(out), os)
	np := cols &^ 31
	for t := range ntok {
		xt := x[t*xs : t*xs+2*cols]
		o := out[t*os : t*os+rows]
		bf16Rows(ptr(w), ws, rows, ptr(xt), np, &o[0])
		if np == cols {
			continue
		}
		for r := range o {
			wr := w[r*ws : r*ws+2*cols]
			sum := float64(o[r])
			for i := np; i < cols; i++ {
				sum += float64(float32(BF16ToF32(le16(wr[2*i:])) * BF16ToF32(le16(xt[2*i:]))))
			}
			o[r] = float32(sum)
		}
	}
}

func gemvQ8_0(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qk
	checkGemv(len(w), ws, rows, nb*q8_0Size, len(x), xs, ntok, nb*q8_0Size, len(out), os)
	t := 0
	for ; t+4 <= ntok; t += 4 {
		q8_0Rows4(ptr(w), ws, rows, &x[t*xs], xs, nb, &out[t*os], os)
	}
	for ; t < ntok; t++ {
		q8_0Rows(ptr(w), ws, rows, &x[t*xs], nb, &out[t*os])
	}
}

func gemvQ4_0(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qk
	checkGemv(len(w), ws, rows, nb*q4_0Size, len(x), xs, ntok, nb*q8_0Size, len(out), os)
	groups := rows / 8
	t := 0
	if groups > 0 {
		for ; t+4 <= ntok; t += 4 {
			q4_0Rows8x4(ptr(w), ws, groups, &x[t*xs], xs, nb, &out[t*os], os)
		}
	}
	for ; t < ntok; t++ {
		if groups > 0 {
			q4_0Rows8(ptr(w), ws, groups, &x[t*xs], nb, &out[t*os])
		}
	}
	for t := range ntok {
		xt := &x[t*xs]
		for r := 8 * groups; r < rows; r++ {
			// A lone row runs as a group of eight copies of itself (stride
			// 0): the same arithmetic, so it matches its grouped neighbours.
			var o [8]float32
			q4_0Rows8(&w[r*ws], 0, 1, xt, nb, &o[0])
			out[t*os+r] = o[0]
		}
	}
}

func f16ToF32sFast(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	n8 := len(src) &^ 7
	if n8 > 0 {
		f16ToF32sAVX2(&dst[0], &src[0], n8)
	}
	f16ToF32sGeneric(dst[n8:], src[n8:])
}
