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
