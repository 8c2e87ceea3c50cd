//go:build amd64 && !noasm

package tensor

// f16Rows23 computes f16Rows4's outputs for ntok = 2 or 3 tokens
// (dotf16_amd64.s), n a positive multiple of 32:
//
//	for t := range ntok { for r := range rows {
//		out[t*ostride+r] = dotF16Generic(w[r*wstride:], x[t*xstride:], n) } }
//
//go:noescape
func f16Rows23(w *byte, wstride, rows int, x *byte, xstride, ntok, n int, out *float32, ostride int)

// f16Rows2x23 is f16Rows23 on pairs of rows half the matrix apart (r and
// r + rows/2, rows even), each token's converted activations serving both,
// in AVX-512 VL registers (used where useVNNI).
//
//go:noescape
func f16Rows2x23(w *byte, wstride, rows int, x *byte, xstride, ntok, n int, out *float32, ostride int)

// f16Rows2x45 is f16Rows2x23 for ntok = 4 or 5.
//
//go:noescape
func f16Rows2x45(w *byte, wstride, rows int, x *byte, xstride, ntok, n int, out *float32, ostride int)

// f16Rows2x1 is f16Rows on pairs of rows half the matrix apart (r and
// r + rows/2, rows even), the activations converted once for both.
//
//go:noescape
func f16Rows2x1(w *byte, wstride, rows int, x *byte, n int, out *float32)
