//go:build arm64 && !noasm

package tensor

import "unsafe"

// The arm64 Q4_K, Q6_K, Q5_K, Q3_K, Q2_K and IQ4_XS kernels (dotk_arm64.s, written
// by gen_arm64.go), in a NEON and an SDOT form with the same bits, several
// tokens a pass over the weights, and for Q4_K an SMMLA form of two to four
// tokens; IQ4_XS's in the same two forms. Q2_K in the Q2KRepacked order
// runs its pure-Go reference.

// q4KRows<T><form> compute, for nb > 0 Q4_K blocks a row and T Q8_K
// activation rows (T = 1 to 6), bit for bit,
//
//	for t := range T { for r := range rows {
//		out[t*ostride+r] = dotQ4KRef(w[r*wstride:], x[t*xstride:], 256*nb) } }
//
// where per block dotQ4KRef does
//
//	sc, mn := q4KScaleMin(w.scales)
//	isum := Σ_{s<8} sc[s] · Σ_{l<32} q4[32s+l]·q8[32s+l]
//	imin := Σ_{j<16} bsums[j]·mn[j/2]
//	acc  = fma(float32(isum), f16(w.d)·x.d, acc)
//	accm = fma(float32(imin), f16(w.dmin)·x.d, accm)
//
// and returns acc − accm. Each weight block is unpacked once for the T
// tokens; the integer sums are grouped differently, exactly (modulo 2^32,
// as the reference's int32 are).
//
//go:noescape
func q4KRows1NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4KRows2NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4KRows3NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4KRows4NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4KRows1Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4KRows2Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4KRows3Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4KRows4Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4KRows5NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4KRows6NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4KRows5Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4KRows6Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

// q4KRows<T>MM (I8MM, T = 2 to 4) compute the same for 2·pairs rows: each
// pair of rows against each pair of tokens is one SMMLA tile per 32
// elements, each sub-block's sum exact as the Dot form's, then its integer
// and float steps lane by lane, so the bits are the Dot form's. q4KRows
// runs an odd last row in the Dot form.
//
//go:noescape
func q4KRows2MM(w *byte, wstride, pairs int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4KRows3MM(w *byte, wstride, pairs int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4KRows4MM(w *byte, wstride, pairs int, x *byte, xstride, nb int, out *float32, ostride int)

// q6KRows<T><form> compute, for nb > 0 Q6_K blocks a row and T Q8_K
// activation rows (T = 1 to 6), bit for bit,
//
//	for t := range T { for r := range rows {
//		out[t*ostride+r] = dotQ6KRef(w[r*wstride:], x[t*xstride:], 256*nb) } }
//
// where per block dotQ6KRef does
//
//	lane := q6KLanes(block)      // eight int32 lanes, as ggml's AVX2 kernel
//	acc[L] = fma(x.d·f16(w.d), float32(lane[L]), acc[L])
//
// and returns hsum8(acc). Each weight block's values are built once for
// the T tokens.
//
//go:noescape
func q6KRows1NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q6KRows2NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q6KRows3NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q6KRows4NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q6KRows5NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q6KRows6NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q6KRows1Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q6KRows2Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q6KRows3Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q6KRows4Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q6KRows5Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q6KRows6Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

// q5KRows<T><form> compute, for nb > 0 Q5_K blocks a row and T Q8_K
// activation rows (T = 1 to 6),
//
//	for t := range T { for r := range rows {
//		out[t*ostride+r] = dotQ5KRef(w[r*wstride:], x[t*xstride:], 256*nb) } }
//
// bit for bit (gen_arm64.go's genQ5K: kLanes8's lanes, each block's 5-bit
// values built once for the T tokens).
//
//go:noescape
func q5KRows1NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5KRows2NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5KRows3NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5KRows1Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5KRows2Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5KRows3Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5KRows4NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5KRows5NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5KRows6NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5KRows4Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5KRows5Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q5KRows6Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

// gemvQ4K is the Q4_K gemv (see the gemv type): up to four tokens a pass
// over the weights (q4KRows<T>).
func gemvQ4K(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qkK
	checkGemv(len(w), ws, rows, nb*q4KBytes, len(x), xs, ntok, nb*q8KBytes, len(out), os)
	if nb == 0 {
		for t := range ntok {
			clear(out[t*os : t*os+rows])
		}
		return
	}
	for t := 0; t < ntok; {
		T := run6(ntok - t) // the SDOT and NEON forms: up to six a pass
		if useMM {
			T = min(4, ntok-t)
		}
		q4KRows(T, &w[0], ws, rows, &x[t*xs], xs, nb, &out[t*os], os)
		t += T
	}
}

// q3KRows<T><form> compute, for nb > 0 Q3_K blocks a row and T Q8_K
// activation rows (T = 1 to 6),
//
//	for t := range T { for r := range rows {
//		out[t*ostride+r] = dotQ3KRef(w[r*wstride:], x[t*xstride:], 256*nb) } }
//
// bit for bit (gen_arm64.go's genQ3K: kLanes8's lanes with the sixteen
// scales, each block's values built once for the T tokens).
//
//go:noescape
func q3KRows1NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q3KRows2NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q3KRows3NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q3KRows1Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q3KRows2Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q3KRows3Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q3KRows4NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q3KRows5NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q3KRows6NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q3KRows4Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q3KRows5Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q3KRows6Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

// q2KRows<T><form> compute, for nb > 0 Q2_K blocks a row and T Q8_K
// activation rows (T = 1 to 6),
//
//	for t := range T { for r := range rows {
//		out[t*ostride+r] = dotQ2KRef(w[r*wstride:], x[t*xstride:], 256*nb) } }
//
// bit for bit (gen_arm64.go's genQ2K: kLanes8's lanes with the sixteen
// scales, each block's values built once for the T tokens).
//
//go:noescape
func q2KRows1NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q2KRows2NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q2KRows3NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q2KRows1Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q2KRows2Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q2KRows3Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q2KRows4NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q2KRows5NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q2KRows6NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q2KRows4Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q2KRows5Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q2KRows6Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

// iq4XSRows<T><form> compute, for nb > 0 IQ4_XS blocks a row and T Q8_K
// activation rows (T = 1 to 6),
//
//	for t := range T { for r := range rows {
//		out[t*ostride+r] = dotIQ4XSRef(w[r*wstride:], x[t*xstride:], 256*nb) } }
//
// bit for bit (gen_arm64.go's genIQ4XS: kLanes8's lanes, the levels'
// magnitudes and signs by TBL once a block for the T tokens).
//
//go:noescape
func iq4XSRows1NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4XSRows2NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4XSRows3NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4XSRows1Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4XSRows2Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4XSRows3Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4XSRows4NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4XSRows5NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4XSRows6NEON(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4XSRows4Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4XSRows5Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4XSRows6Dot(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

// The K-quants' row-by-row kernels (but Q4_K's): up to six tokens a pass
// (run6).
var (
	q6KKernels = rowKernels{qkK, q6KBytes, q8KBytes,
		[9]rowsKernel{nil, q6KRows1NEON, q6KRows2NEON, q6KRows3NEON, q6KRows4NEON, q6KRows5NEON, q6KRows6NEON},
		[9]rowsKernel{nil, q6KRows1Dot, q6KRows2Dot, q6KRows3Dot, q6KRows4Dot, q6KRows5Dot, q6KRows6Dot}, run6, dotQ6KRef}
	q5KKernels = rowKernels{qkK, q5KBytes, q8KBytes,
		[9]rowsKernel{nil, q5KRows1NEON, q5KRows2NEON, q5KRows3NEON, q5KRows4NEON, q5KRows5NEON, q5KRows6NEON},
		[9]rowsKernel{nil, q5KRows1Dot, q5KRows2Dot, q5KRows3Dot, q5KRows4Dot, q5KRows5Dot, q5KRows6Dot}, run6, dotQ5KRef}
	q3KKernels = rowKernels{qkK, q3KBytes, q8KBytes,
		[9]rowsKernel{nil, q3KRows1NEON, q3KRows2NEON, q3KRows3NEON, q3KRows4NEON, q3KRows5NEON, q3KRows6NEON},
		[9]rowsKernel{nil, q3KRows1Dot, q3KRows2Dot, q3KRows3Dot, q3KRows4Dot, q3KRows5Dot, q3KRows6Dot}, run6, dotQ3KRef}
	q2KKernels = rowKernels{qkK, q2KBytes, q8KBytes,
		[9]rowsKernel{nil, q2KRows1NEON, q2KRows2NEON, q2KRows3NEON, q2KRows4NEON, q2KRows5NEON, q2KRows6NEON},
		[9]rowsKernel{nil, q2KRows1Dot, q2KRows2Dot, q2KRows3Dot, q2KRows4Dot, q2KRows5Dot, q2KRows6Dot}, run6, dotQ2KRef}
	iq4XSKernels = rowKernels{qkK, iq4XSBytes, q8KBytes,
		[9]rowsKernel{nil, iq4XSRows1NEON, iq4XSRows2NEON, iq4XSRows3NEON, iq4XSRows4NEON, iq4XSRows5NEON, iq4XSRows6NEON},
		[9]rowsKernel{nil, iq4XSRows1Dot, iq4XSRows2Dot, iq4XSRows3Dot, iq4XSRows4Dot, iq4XSRows5Dot, iq4XSRows6Dot}, run6, dotIQ4XSRef}
)

// run6 returns how many of the n ≥ 1 tokens left the next pass of a
// six-token kernel takes: as few passes as six a pass allow,
// the tokens shared evenly (seven as four and three).
func run6(n int) int {
	passes := (n + 5) / 6
	return (n + passes - 1) / passes
}

func gemvQ6K(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	q6KKernels.gemv(w, ws, rows, x, xs, ntok, cols, out, os)
}

func gemvQ5K(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	q5KKernels.gemv(w, ws, rows, x, xs, ntok, cols, out, os)
}

// The kernels registered with MatMul.

func dotQ6K(w, x []byte, n int) float32   { return q6KKernels.dot1(w, x, n) }
func dotQ5K(w, x []byte, n int) float32   { return q5KKernels.dot1(w, x, n) }
func dotQ3K(w, x []byte, n int) float32   { return q3KKernels.dot1(w, x, n) }
func dotQ2K(w, x []byte, n int) float32   { return q2KKernels.dot1(w, x, n) }
func dotIQ4XS(w, x []byte, n int) float32 { return iq4XSKernels.dot1(w, x, n) }

func dotQ2KR(w, x []byte, n int) float32 { return dotQ2KRepackedRef(w, x, n) }

// registerQ2K registers the Q2_K kernels of q2Order: the NEON ones in the
// Q2KLanes order, the reference (and no gemv) in the Q2KRepacked one.
func registerQ2K() {
	if q2Order == Q2KRepacked {
		registerKernel(Q2_K, Q8_K, dotQ2KR)
		registerGemv(Q2_K, nil)
		return
	}
	registerKernel(Q2_K, Q8_K, dotQ2K)
	registerGemv(Q2_K, q2KKernels.gemv)
}

// LlamaCppQ2KOrder returns the Q2_K order of a llama.cpp CPU backend built
// for this machine: Q2KLanes (arm64 has no AVX-512 repacking).
func LlamaCppQ2KOrder() Q2KOrder { return Q2KLanes }

// q4KRows runs the T-token Q4_K kernel of the form in use (T ≤ 6; ≤ 4
// with SMMLA): with SMMLA (T > 1) the pairs of rows, then an odd last row
// in the SDOT form.
func q4KRows(T int, w *byte, ws, rows int, x *byte, xs, nb int, out *float32, os int) {
	if useMM && T > 1 {
		switch pairs := rows / 2; {
		case pairs == 0:
		case T == 2:
			q4KRows2MM(w, ws, pairs, x, xs, nb, out, os)
		case T == 3:
			q4KRows3MM(w, ws, pairs, x, xs, nb, out, os)
		default:
			q4KRows4MM(w, ws, pairs, x, xs, nb, out, os)
		}
		if rows%2 == 0 {
			return
		}
		last := rows - 1
		w = (*byte)(unsafe.Add(unsafe.Pointer(w), last*ws))
		out = (*float32)(unsafe.Add(unsafe.Pointer(out), 4*last))
		rows = 1
	}
	// Direct calls: through a func value the pointers would escape, and
	// the one-row dot (a stack output) would allocate.
	switch {
	case useDot && T == 1:
		q4KRows1Dot(w, ws, rows, x, xs, nb, out, os)
	case useDot && T == 2:
		q4KRows2Dot(w, ws, rows, x, xs, nb, out, os)
	case useDot && T == 3:
		q4KRows3Dot(w, ws, rows, x, xs, nb, out, os)
	case useDot && T == 4:
		q4KRows4Dot(w, ws, rows, x, xs, nb, out, os)
	case useDot && T == 5:
		q4KRows5Dot(w, ws, rows, x, xs, nb, out, os)
	case useDot:
		q4KRows6Dot(w, ws, rows, x, xs, nb, out, os)
	case T == 1:
		q4KRows1NEON(w, ws, rows, x, xs, nb, out, os)
	case T == 2:
		q4KRows2NEON(w, ws, rows, x, xs, nb, out, os)
	case T == 3:
		q4KRows3NEON(w, ws, rows, x, xs, nb, out, os)
	case T == 4:
		q4KRows4NEON(w, ws, rows, x, xs, nb, out, os)
	case T == 5:
		q4KRows5NEON(w, ws, rows, x, xs, nb, out, os)
	default:
		q4KRows6NEON(w, ws, rows, x, xs, nb, out, os)
	}
}

// dotQ4K is the Q4_K × Q8_K kernel registered with MatMul.
func dotQ4K(w, x []byte, n int) float32 {
	nb := n / qkK
	if nb <= 0 {
		return dotQ4KRef(w, x, n)
	}
	_ = w[nb*q4KBytes-1]
	_ = x[nb*q8KBytes-1]
	var out float32
	q4KRows(1, &w[0], 0, 1, &x[0], 0, nb, &out, 0)
	return out
}

// quantizeQ8KNEON converts nb > 0 blocks of 256 floats at src into Q8_K
// blocks at dst (act_arm64.s), bit-identical to quantizeRowQ8K on every
// input, NaNs and infinities included:
//
//	max := the first value of largest magnitude, NaNs left out
//	iscale := -127/max; d = 1/iscale
//	q := min(nearestInt(iscale·x), 127); qs = byte(q); bsums = Σ int8(q) per 16
//
// (an all-zero or all-NaN block is all zero bytes).
//
//go:noescape
func quantizeQ8KNEON(dst *byte, src *float32, nb int)

// quantizeQ8K is the registered float32 → Q8_K converter.
func quantizeQ8K(dst []byte, src []float32) {
	nb := len(src) / qkK
	if nb <= 0 {
		return
	}
	_ = dst[nb*q8KBytes-1]
	quantizeQ8KNEON(&dst[0], &src[0], nb)
}
