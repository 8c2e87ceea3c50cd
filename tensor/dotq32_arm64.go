//go:build arm64 && !noasm

package tensor

// The arm64 kernels of Q5_0, Q4_1 and Q5_1 (dot_arm64.s, written by
// gen_arm64.go), in the lanes order of their references (qlanes.go), and
// IQ4_NL's, the four-row kernels of Q4_0 on its levels (dot_arm64.go).
//
// <type>RowsT<T><form> (T = 1 to 8, but Q4_1 and Q5_1 1 to 4 in the NEON
// form; NEON and Dot, the SDOT form) compute,
// row by row, unpacking each weight block once for the T tokens,
//
//	for t := range T { for r := range rows {
//		out[t*ostride+r] = dot<Type>Generic(w[r*wstride:], x[t*xstride:], 32*nb) } }
//
// on Q8_0 activations (Q5_0) or Q8_1 ones (Q4_1, Q5_1), bit for bit: per
// block lane l of eight holds the exact sum of products 4l..4l+3 and is
// FMA'd with f16(w.d)·f16(x.d) into float lane l (and summs =
// fma(f16(w.m), f16(x.s), summs)); hsum8 of the lanes (+ summs) at the end.

//go:noescape
func q5_0RowsT1NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_0RowsT2NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_0RowsT3NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_0RowsT4NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_0RowsT1Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_0RowsT2Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_0RowsT3Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_0RowsT4Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_0RowsT5NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_0RowsT6NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_0RowsT7NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_0RowsT8NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_0RowsT5Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_0RowsT6Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_0RowsT7Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_0RowsT8Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_1RowsT1NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_1RowsT2NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_1RowsT3NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_1RowsT4NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_1RowsT1Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_1RowsT2Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_1RowsT3Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_1RowsT4Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_1RowsT5Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_1RowsT6Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_1RowsT7Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_1RowsT8Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_1RowsT1NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_1RowsT2NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_1RowsT3NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_1RowsT4NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_1RowsT1Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_1RowsT2Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_1RowsT3Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_1RowsT4Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_1RowsT5Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_1RowsT6Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_1RowsT7Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5_1RowsT8Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

// The lanes types' kernels: up to eight tokens a pass, Q4_1 and Q5_1 four
// in the NEON form.
var (
	q5_0Lanes = rowKernels{qk, q5_0Size, q8_0Size,
		[9]rowsKernel{nil, q5_0RowsT1NEON, q5_0RowsT2NEON, q5_0RowsT3NEON, q5_0RowsT4NEON,
			q5_0RowsT5NEON, q5_0RowsT6NEON, q5_0RowsT7NEON, q5_0RowsT8NEON},
		[9]rowsKernel{nil, q5_0RowsT1Dot, q5_0RowsT2Dot, q5_0RowsT3Dot, q5_0RowsT4Dot,
			q5_0RowsT5Dot, q5_0RowsT6Dot, q5_0RowsT7Dot, q5_0RowsT8Dot}, upTo8, dotQ5_0Generic}
	q4_1Lanes = rowKernels{qk, q4_1Size, q8_1Size,
		[9]rowsKernel{nil, q4_1RowsT1NEON, q4_1RowsT2NEON, q4_1RowsT3NEON, q4_1RowsT4NEON},
		[9]rowsKernel{nil, q4_1RowsT1Dot, q4_1RowsT2Dot, q4_1RowsT3Dot, q4_1RowsT4Dot,
			q4_1RowsT5Dot, q4_1RowsT6Dot, q4_1RowsT7Dot, q4_1RowsT8Dot}, upTo8Dot, dotQ4_1Generic}
	q5_1Lanes = rowKernels{qk, q5_1Size, q8_1Size,
		[9]rowsKernel{nil, q5_1RowsT1NEON, q5_1RowsT2NEON, q5_1RowsT3NEON, q5_1RowsT4NEON},
		[9]rowsKernel{nil, q5_1RowsT1Dot, q5_1RowsT2Dot, q5_1RowsT3Dot, q5_1RowsT4Dot,
			q5_1RowsT5Dot, q5_1RowsT6Dot, q5_1RowsT7Dot, q5_1RowsT8Dot}, upTo8Dot, dotQ5_1Generic}
)

// upTo8 and upTo8Dot are the lanes kernels' tokens a pass: eight while
// that many are left (Q5_0), or eight in the SDOT form and four in the
// NEON one (Q4_1, Q5_1).
func upTo8(n int) int { return min(8, n) }
func upTo8Dot(n int) int {
	if useDot {
		return min(8, n)
	}
	return min(4, n)
}

func gemvIQ4_NLAsm(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvQ0(q0IQ4NL, w, ws, rows, x, xs, ntok, cols, out, os)
}

// asmQ32 returns the NEON dot and gemv kernels of a 32-element block type
// (Q4_1, Q5_0, Q5_1, IQ4_NL): every arm64 CPU has NEON, and the kernels
// pick the SDOT and SMMLA forms at each call.
func asmQ32(t Type) (VecDot, gemv) {
	switch t {
	case Q5_0:
		return q5_0Lanes.dot1, q5_0Lanes.gemv
	case Q4_1:
		return q4_1Lanes.dot1, q4_1Lanes.gemv
	case Q5_1:
		return q5_1Lanes.dot1, q5_1Lanes.gemv
	case IQ4_NL:
		return func(w, x []byte, n int) float32 { return gemvDot(gemvIQ4_NLAsm, w, x, n) }, gemvIQ4_NLAsm
	}
	return nil, nil
}

// registerQ32VNNI: arm64 has no VNNI forms.
func registerQ32VNNI() {}
