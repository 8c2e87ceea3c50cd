//go:build amd64 && !noasm

package tensor

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

// bf16Rows computes, for n a multiple of 32 and x widened (bf16Wide),
//
//	for r := range rows { out[r] = dotBF16WideGeneric(w[r*wstride:], x, n) }
//
//go:noescape
func bf16Rows(w *byte, wstride, rows int, x *byte, n int, out *float32)

// f32Rows4, f16Rows4 and bf16Rows4 compute their single-token kernel for
// four activation rows at once, sharing each weight load (and its
// conversion; BF16's activations are already widened):
//
//	for t := range 4 { for r := range rows {
//		out[t*ostride+r] = <kind>Rows(w + r*wstride, x + t*xstride) } }
//
//go:noescape
func f32Rows4(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)

//go:noescape
func f16Rows4(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)

//go:noescape
func bf16Rows4(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)

// f16Rows5 is f16Rows4 for five activation rows (x + t*xstride, t < 5),
// in one pass pair over the weights with AVX2 registers only:
//
//	for t := range 5 { for r := range rows {
//		out[t*ostride+r] = f16Rows(w + r*wstride, x + t*xstride) } }
//
//go:noescape
func f16Rows5(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)

// f32RowsxT, f16RowsxT and bf16RowsxT compute f32Rows4, f16Rows4 and
// bf16Rows4 for ntok (1 to 8) activation rows in one pass pair over the
// weights (AVX-512 VL registers; used where hasVNNI):
//
//	for t := range ntok { for r := range rows {
//		out[t*ostride+r] = <kind>Rows(w + r*wstride, x + t*xstride) } }
//
//go:noescape
func f32RowsxT(w *byte, wstride, rows int, x *byte, xstride, ntok, n int, out *float32, ostride int)

//go:noescape
func f16RowsxT(w *byte, wstride, rows int, x *byte, xstride, ntok, n int, out *float32, ostride int)

//go:noescape
func bf16RowsxT(w *byte, wstride, rows int, x *byte, xstride, ntok, n int, out *float32, ostride int)

// minXTF32, minXTF16 and minXTBF16 are the token counts from which the
// eight-token float kernels beat the four-token and single-token ones with
// weights streamed from memory (measured on the development machine; fewer
// tokens stream better through the one-pass kernels).
const (
	minXTF32  = 3
	minXTF16  = 2
	minXTBF16 = 2
)

// q8_0LanesRows computes, over nb blocks,
//
//	for r := range rows { out[r] = dotQ8_0LanesGeneric(w[r*wstride:], x, 32*nb) }
//
//go:noescape
func q8_0LanesRows(w *byte, wstride, rows int, x *byte, nb int, out *float32)

// q8_0LanesRows4 computes, over nb blocks, for four activation rows at once,
//
//	for t := range 4 { for r := range rows {
//		out[t*ostride+r] = dotQ8_0LanesGeneric(w[r*wstride:], x[t*xstride:], 32*nb) } }
//
//go:noescape
func q8_0LanesRows4(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

// q8_0Rows8 computes, over nb blocks, for groups of eight weight rows and
// ntok (1 to 8) activation rows,
//
//	for t := range ntok { for r := range 8*groups {
//		out[t*ostride+r] = dotQ8_0Generic(w[r*wstride:], x[t*xstride:], 32*nb) } }
//
//go:noescape
func q8_0Rows8(w *byte, wstride, groups int, x *byte, xstride, ntok, nb int, out *float32, ostride int)

// useVNNI selects the AVX-512 forms of the kernels where hasVNNI: the
// eight-token F32, F16 and BF16 kernels that need the 32 vector registers,
// and the VNNI Q8_0 and Q4_0 kernels with their activation layout
// (dotq_amd64.go). Tests flip it with setVNNI to check both forms on
// machines that have them; both give the same bits.
var useVNNI = hasVNNI

// f16ToF32sAVX2 converts the first n&^7 halves of src into dst:
//
//	for i := range n &^ 7 { dst[i] = F16ToF32(src[i]) }
//
//go:noescape
func f16ToF32sAVX2(dst *float32, src *uint16, n int)

// installAVX2Dots points the single-row dots of F32, F16, BF16 and Q8_0
// at their AVX2 gemvs (called by installArchImpls where the AVX2 set is in
// use; the registrations then read them). Q4_0's AVX2 kernels take the
// q8VNNI layout and register as such (dotq4t_amd64.go).
func installAVX2Dots() {
	dotF32 = func(w, x []byte, n int) float32 { return gemvDot(gemvF32, w, x, n) }
	dotF16 = func(w, x []byte, n int) float32 { return gemvDot(gemvF16, w, x, n) }
	// BF16 weights take widened activations (bf16Act is bf16Wide).
	dotBF16 = func(w, x []byte, n int) float32 { return gemvDot(gemvBF16, w, x, n) }
	dotQ8_0 = func(w, x []byte, n int) float32 { return gemvDot(gemvQ8_0, w, x, n) }
	dotQ8_0Lanes = func(w, x []byte, n int) float32 { return gemvDot(gemvQ8_0Lanes, w, x, n) }
	f16ToF32sImpl = f16ToF32sFast
}

func gemvF32(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	checkGemv(len(w), ws, rows, 4*cols, len(x), xs, ntok, 4*cols, len(out), os)
	gemvFloat32Acts(floatKernels{f32RowsxT, minXTF32, f32Rows4, f32Rows}, w, ws, rows, x, xs, ntok, cols, out, os)
	floatTails(tailF32, 4, 4, w, ws, rows, x, xs, ntok, cols, out, os)
}

// floatKernels are the kernels of a float type whose activations are
// float32 (F32, and BF16's widened ones): ntok (1 to 8) tokens a pass on
// the AVX-512 set from minXT tokens, else four, else one.
type floatKernels struct {
	xT    func(w *byte, wstride, rows int, x *byte, xstride, ntok, n int, out *float32, ostride int)
	minXT int
	four  func(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)
	one   func(w *byte, wstride, rows int, x *byte, n int, out *float32)
}

// gemvFloat32Acts runs every token through k's kernels over the first
// cols&^31 columns (the caller adds the tails).
func gemvFloat32Acts(k floatKernels, w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	np := cols &^ 31
	t := 0
	if useVNNI && np > 0 && ntok >= k.minXT {
		for ; t+1 < ntok; t += 8 {
			k.xT(ptr(w), ws, rows, &x[t*xs], xs, min(8, ntok-t), np, &out[t*os], os)
		}
	}
	for ; t+4 <= ntok; t += 4 {
		k.four(ptr(w), ws, rows, &x[t*xs], xs, np, &out[t*os], os)
	}
	for ; t < ntok; t++ {
		k.one(ptr(w), ws, rows, &x[t*xs], np, &out[t*os])
	}
}

func gemvF16(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	checkGemv(len(w), ws, rows, 2*cols, len(x), xs, ntok, 2*cols, len(out), os)
	np := cols &^ 31
	t := 0
	// Up to five tokens (decode and speculative verification) run the
	// weight rows in pairs half the matrix apart (dotf16_amd64.s): two
	// sequential streams fetch faster than one, and each token's converted
	// activations serve both rows. An odd last row runs alone.
	if np > 0 && rows >= 2 && (ntok == 1 || useVNNI && ntok <= 5) {
		even := rows &^ 1
		switch {
		case ntok == 1:
			f16Rows2x1(ptr(w), ws, even, &x[0], np, &out[0])
		case ntok <= 3:
			f16Rows2x23(ptr(w), ws, even, &x[0], xs, ntok, np, &out[0], os)
		default:
			f16Rows2x45(ptr(w), ws, even, &x[0], xs, ntok, np, &out[0], os)
		}
		if even < rows {
			gemvF16(w[even*ws:], ws, 1, x, xs, ntok, np, out[even:], os)
		}
		t = ntok
	}
	if useVNNI && np > 0 && ntok-t >= minXTF16 {
		for ; t+1 < ntok; t += 8 {
			f16RowsxT(ptr(w), ws, rows, &x[t*xs], xs, min(8, ntok-t), np, &out[t*os], os)
		}
	}
	// The AVX2 kernels: each pass takes as many of the tokens left as one
	// kernel can, five at most, so that a verification pass of up to five
	// tokens reads the weights once (two and three, the counts speculative
	// verification runs most, have a kernel fixed to them).
	for t < ntok {
		switch rem := ntok - t; {
		case rem == 5:
			f16Rows5(ptr(w), ws, rows, &x[t*xs], xs, np, &out[t*os], os)
			t += 5
		case rem >= 4:
			f16Rows4(ptr(w), ws, rows, &x[t*xs], xs, np, &out[t*os], os)
			t += 4
		case np > 0 && rem >= 2:
			f16Rows23(ptr(w), ws, rows, &x[t*xs], xs, rem, np, &out[t*os], os)
			t += rem
		default:
			f16Rows(ptr(w), ws, rows, &x[t*xs], np, &out[t*os])
			t++
		}
	}
	floatTails(tailF16, 2, 2, w, ws, rows, x, xs, ntok, cols, out, os)
}

// gemvBF16 takes widened activations (bf16Wide, 4 bytes each).
func gemvBF16(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	checkGemv(len(w), ws, rows, 2*cols, len(x), xs, ntok, 4*cols, len(out), os)
	gemvFloat32Acts(floatKernels{bf16RowsxT, minXTBF16, bf16Rows4, bf16Rows}, w, ws, rows, x, xs, ntok, cols, out, os)
	floatTails(tailBF16Wide, 2, 4, w, ws, rows, x, xs, ntok, cols, out, os)
}

func gemvQ8_0(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qk
	checkGemv(len(w), ws, rows, nb*q8_0Size, len(x), xs, ntok, nb*q8_0Size, len(out), os)
	gemvGroups8(w, ws, rows, x, xs, ntok, out, os, func(w *byte, ws, groups int, x *byte, nt int, out *float32, os int) {
		if nt == 1 {
			q8_0Rows8(w, ws, groups, x, xs, nt, nb, out, os)
			return
		}
		q8_0Rows8T(w, ws, groups, x, xs, nt, nb, out, os)
	})
}

// q8_0Rows8T computes q8_0Rows8 for ntok (2 to 8) tokens with each block
// of eight rows transposed once for all of them, so that every lane of a
// token's sum is one row's (no horizontal adds):
//
//	for t := range ntok { for r := range 8*groups {
//		out[t*ostride+r] = dotQ8_0Generic(w[r*wstride:], x[t*xstride:], 32*nb) } }
//
//go:noescape
func q8_0Rows8T(w *byte, wstride, groups int, x *byte, xstride, ntok, nb int, out *float32, ostride int)

// gemvGroups8 runs an eight-row kernel (kern: groups of eight rows from w
// at stride ws, nt ≤ 8 tokens from x, outputs at out with token stride os)
// over whole groups of rows, eight tokens at a time, and over the rows left
// over one at a time, each as a group of eight copies of itself (stride 0):
// the same arithmetic, so it matches its grouped neighbours.
func gemvGroups8(w []byte, ws, rows int, x []byte, xs, ntok int, out []float32, os int,
	kern func(w *byte, ws, groups int, x *byte, nt int, out *float32, os int)) {
	groups := rows / 8
	for t := 0; t < ntok; t += 8 {
		nt := min(8, ntok-t)
		if groups > 0 {
			kern(ptr(w), ws, groups, &x[t*xs], nt, &out[t*os], os)
		}
		for r := 8 * groups; r < rows; r++ {
			var o [8 * 8]float32
			kern(&w[r*ws], 0, 1, &x[t*xs], nt, &o[0], 8)
			for i := range nt {
				out[(t+i)*os+r] = o[8*i]
			}
		}
	}
}

func gemvQ8_0Lanes(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qk
	checkGemv(len(w), ws, rows, nb*q8_0Size, len(x), xs, ntok, nb*q8_0Size, len(out), os)
	t := 0
	for ; t+4 <= ntok; t += 4 {
		q8_0LanesRows4(ptr(w), ws, rows, &x[t*xs], xs, nb, &out[t*os], os)
	}
	for ; t < ntok; t++ {
		q8_0LanesRows(ptr(w), ws, rows, &x[t*xs], nb, &out[t*os])
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
