//go:build arm64 && !noasm

package tensor

//go:generate env -u GOARCH go run gen_arm64.go

// The arm64 kernels for F16, BF16, Q8_0, Q4_0 and IQ4_NL weights (dot_arm64.s,
// written by gen_arm64.go; Q5_0, Q4_1 and Q5_1: dotq32_arm64.go). Each
// comes in a NEON form and one using an extension (dispatch_arm64.go), the
// multi-token Q8_0, Q4_0 and IQ4_NL ones in a third
// (I8MM), with the same results bit for bit; the doc comments give
// the Go loop each one computes. n counts elements, nb blocks of 32.

// f16Rows1NEON and f16Rows1FHM compute, for n a multiple of 32,
//
//	for r := range rows { out[r] = dotF16Generic(w[r*wstride:], x, n) }
//
// eight 4-lane accumulators standing for dotF16Generic's 32 lanes, fused
// multiply-adds of the widened halves, reduce32's tree (floatTails adds
// the n%32 tail).
//
//go:noescape
func f16Rows1NEON(w *byte, wstride, rows int, x *byte, n int, out *float32)

//go:noescape
func f16Rows1FHM(w *byte, wstride, rows int, x *byte, n int, out *float32)

// f16Rows<T><form> compute f16Rows1 for T activation rows at once (T = 2,
// 3), sharing each weight load (and, in the NEON form, its widening):
//
//	for t := range T { for r := range rows {
//		out[t*ostride+r] = dotF16Generic(w[r*wstride:], x[t*xstride:], n) } }
//
//go:noescape
func f16Rows2NEON(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)

//go:noescape
func f16Rows3NEON(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)

//go:noescape
func f16Rows2FHM(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)

//go:noescape
func f16Rows3FHM(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)

// bf16Rows1NEON computes, for n a multiple of 32 and x widened
// activations (bf16Wide, float32s),
//
//	for r := range rows { out[r] = dotBF16WideGeneric(w[r*wstride:], x, n) }
//
// eight 4-lane accumulators standing for its 32 lanes, the unfused
// products and adds of the widened bfloat16s (SHLL), reduceBF16's tree
// (floatTails adds the n%32 tail).
//
//go:noescape
func bf16Rows1NEON(w *byte, wstride, rows int, x *byte, n int, out *float32)

// bf16Rows<T>NEON compute bf16Rows1NEON for T activation rows at once (T =
// 2, 3), sharing each weight load and widening:
//
//	for t := range T { for r := range rows {
//		out[t*ostride+r] = dotBF16WideGeneric(w[r*wstride:], x[t*xstride:], n) } }
//
//go:noescape
func bf16Rows2NEON(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)

//go:noescape
func bf16Rows3NEON(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)

// q8_0Rows4T<T><form> compute, over nb blocks, for groups of four weight
// rows (one vector lane each) and T activation rows (T = 1, 2, 3),
//
//	for t := range T { for r := range 4*groups {
//		out[t*ostride+r] = dotQ8_0Generic(w[r*wstride:], x[t*xstride:], 32*nb) } }
//
// per block: the exact int32 sum of each (row, token) pair, converted, and
// acc = fma(sum, f16(w.d)·f16(x.d), acc) on the four rows' lanes.
//
//go:noescape
func q8_0Rows4T1NEON(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q8_0Rows4T2NEON(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q8_0Rows4T3NEON(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q8_0Rows4T1Dot(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q8_0Rows4T2Dot(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q8_0Rows4T3Dot(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q8_0Rows4T4NEON(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q8_0Rows4T4Dot(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

// q4_0Rows4T<T><form> are q8_0Rows4T<T><form> for Q4_0 weights on
// q8VNNI activations (each token's block its 32 quants, its scale as a
// float32 and off = −8·Σ quants, from which every row's sum starts):
//
//	for t := range T { for r := range 4*groups {
//		out[t*ostride+r] = dotQ4_0Generic(w[r*wstride:], q8_0 form of x[t*xstride:], 32*nb) } }
//
//go:noescape
func q4_0Rows4T1NEON(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_0Rows4T2NEON(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_0Rows4T3NEON(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_0Rows4T1Dot(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_0Rows4T2Dot(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_0Rows4T3Dot(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_0Rows4T4NEON(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_0Rows4T4Dot(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

// iq4nlRows4T<T><form> are q4_0Rows4T<T><form> for IQ4_NL weights, each
// nibble's element its kvalues_iq4nl level (TBL) instead of the nibble
// minus 8:
//
//	for t := range T { for r := range 4*groups {
//		out[t*ostride+r] = dotIQ4_NLGeneric(w[r*wstride:], x[t*xstride:], 32*nb) } }
//
//go:noescape
func iq4nlRows4T1NEON(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4nlRows4T2NEON(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4nlRows4T3NEON(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4nlRows4T1Dot(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4nlRows4T2Dot(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4nlRows4T3Dot(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4nlRows4T4NEON(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4nlRows4T4Dot(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

// q8_0Rows4T<T>MM, q4_0Rows4T4MM and iq4nlRows4T<T>MM compute the same for
// T = 2 to 4 tokens (Q4_0: 4, where its Dot form costs less for 2 and 3)
// with SMMLA (I8MM): each pair of rows and pair of tokens is one 2×2 tile
// of exact int32 sums per block (a third token's sums are SDOT's on the
// same operands), so the outputs are the Dot form's bit for bit.
//
//go:noescape
func q8_0Rows4T2MM(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q8_0Rows4T3MM(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q8_0Rows4T4MM(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func q4_0Rows4T4MM(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4nlRows4T2MM(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4nlRows4T3MM(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

//go:noescape
func iq4nlRows4T4MM(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

// q8_0LanesRows1NEON and q8_0LanesRows1Dot compute, over nb blocks, in
// the lanes order (Q8_0Lanes),
//
//	for r := range rows { out[r] = dotQ8_0LanesGeneric(w[r*wstride:], x, 32*nb) }
//
//go:noescape
func q8_0LanesRows1NEON(w *byte, wstride, rows int, x *byte, nb int, out *float32)

//go:noescape
func q8_0LanesRows1Dot(w *byte, wstride, rows int, x *byte, nb int, out *float32)

// installNEONDots points the single-row dots of F16, Q8_0 and Q4_0 at
// their NEON gemvs (called by installArchImpls; the registrations then
// read them).
func installNEONDots() {
	dotF16 = func(w, x []byte, n int) float32 { return gemvDot(gemvF16, w, x, n) }
	// BF16 weights take widened activations (bf16Act is bf16Wide).
	dotBF16 = func(w, x []byte, n int) float32 { return gemvDot(gemvBF16, w, x, n) }
	dotQ8_0 = func(w, x []byte, n int) float32 { return gemvDot(gemvQ8_0, w, x, n) }
	dotQ8_0Lanes = func(w, x []byte, n int) float32 { return gemvDot(gemvQ8_0Lanes, w, x, n) }
	dotQ4_0 = dotQ4_0Q8
}

// dotQ4_0Q8 is the Q4_0 dot on Q8_0 activations (dotQ4_0's contract): it
// lays x out as q8VNNI first, the activation type the Q4_0 kernels take
// (MatMul quantizes into it directly).
func dotQ4_0Q8(w, x []byte, n int) float32 {
	nb := n / qk
	v := make([]byte, nb*q8VNNISize)
	q8VNNIFromQ8_0(v, x, nb, 3)
	return dotQ4_0V(w, v, n)
}

func dotQ4_0V(w, x []byte, n int) float32 { return gemvDot(gemvQ4_0, w, x, n) }

// registerQ0Kernels registers the Q4_0 kernels and the Q8_0 ones of
// q8Order.
func registerQ0Kernels() {
	registerKernel(Q4_0, q8VNNI, dotQ4_0V)
	registerGemv(Q4_0, gemvQ4_0)
	if q8Order == Q8_0Lanes {
		registerKernel(Q8_0, Q8_0, dotQ8_0Lanes)
		registerGemv(Q8_0, gemvQ8_0Lanes)
		return
	}
	registerKernel(Q8_0, Q8_0, dotQ8_0)
	registerGemv(Q8_0, gemvQ8_0)
}

// tokenRun returns how many of the n ≥ 1 tokens left the next pass takes:
// three at most, and four as two and two rather than three and one.
func tokenRun(n int) int {
	if n == 4 {
		return 2
	}
	return min(3, n)
}

// q0TokenRun is how many of the n ≥ 1 tokens left the next pass of the
// four-row kernels takes: under the MM forms four a pass while four are
// left, then the rest (a single token runs the Dot form); else as few
// passes as four a pass allow, the tokens shared evenly (five as three and
// two: a one-token pass streams the weights for little work).
func q0TokenRun(n int) int {
	if useMM {
		return min(4, n)
	}
	passes := (n + 3) / 4
	return (n + passes - 1) / passes
}

func gemvF16(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	checkGemv(len(w), ws, rows, 2*cols, len(x), xs, ntok, 2*cols, len(out), os)
	np := cols &^ 31
	for t := 0; t < ntok; {
		T := tokenRun(ntok - t)
		f16Rows(T, ptr(w), ws, rows, &x[t*xs], xs, np, &out[t*os], os)
		t += T
	}
	floatTails(tailF16, 2, 2, w, ws, rows, x, xs, ntok, cols, out, os)
}

// f16Rows runs the T-token F16 kernel of the form in use.
func f16Rows(T int, w *byte, ws, rows int, x *byte, xs, n int, out *float32, os int) {
	switch {
	case T == 1 && useFHM:
		f16Rows1FHM(w, ws, rows, x, n, out)
	case T == 1:
		f16Rows1NEON(w, ws, rows, x, n, out)
	case T == 2 && useFHM:
		f16Rows2FHM(w, ws, rows, x, xs, n, out, os)
	case T == 2:
		f16Rows2NEON(w, ws, rows, x, xs, n, out, os)
	case useFHM:
		f16Rows3FHM(w, ws, rows, x, xs, n, out, os)
	default:
		f16Rows3NEON(w, ws, rows, x, xs, n, out, os)
	}
}

// gemvBF16 takes widened activations (bf16Wide, 4 bytes each).
func gemvBF16(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	checkGemv(len(w), ws, rows, 2*cols, len(x), xs, ntok, 4*cols, len(out), os)
	np := cols &^ 31
	for t := 0; t < ntok; {
		T := tokenRun(ntok - t)
		switch T {
		case 1:
			bf16Rows1NEON(ptr(w), ws, rows, &x[t*xs], np, &out[t*os])
		case 2:
			bf16Rows2NEON(ptr(w), ws, rows, &x[t*xs], xs, np, &out[t*os], os)
		default:
			bf16Rows3NEON(ptr(w), ws, rows, &x[t*xs], xs, np, &out[t*os], os)
		}
		t += T
	}
	floatTails(tailBF16Wide, 2, 4, w, ws, rows, x, xs, ntok, cols, out, os)
}

func gemvQ8_0(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvQ0(q0Q8, w, ws, rows, x, xs, ntok, cols, out, os)
}

// gemvQ8_0Lanes runs q8_0LanesRows1 once per token.
func gemvQ8_0Lanes(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qk
	checkGemv(len(w), ws, rows, nb*q8_0Size, len(x), xs, ntok, nb*q8_0Size, len(out), os)
	for t := range ntok {
		if nb == 0 {
			clear(out[t*os : t*os+rows])
			continue
		}
		if useDot {
			q8_0LanesRows1Dot(ptr(w), ws, rows, &x[t*xs], nb, &out[t*os])
		} else {
			q8_0LanesRows1NEON(ptr(w), ws, rows, &x[t*xs], nb, &out[t*os])
		}
	}
}

func gemvQ4_0(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvQ0(q0Q4, w, ws, rows, x, xs, ntok, cols, out, os)
}

// q0Kind is a weight type of the four-row kernels, which share the block
// layout {d f16; quants}: Q8_0, Q4_0 and IQ4_NL (nibbles minus 8 or their
// kvalues_iq4nl levels), on Q8_0 activations but Q4_0 on q8VNNI ones.
type q0Kind int

const (
	q0Q8 q0Kind = iota
	q0Q4
	q0IQ4NL
)

// q0Rows4Kernel is a four-row kernel's signature.
type q0Rows4Kernel = func(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)

// q0Kernels holds each kind's kernels by form and token count: NEON and
// Dot for 1 to 4 tokens, MM for mmFrom (2, Q4_0 4) to 4; bsize and xsize
// are the weights' and the activations' block bytes.
var q0Kernels = [...]struct {
	bsize, xsize, mmFrom int
	neon, dot, mm        [5]q0Rows4Kernel
}{
	q0Q8: {q8_0Size, q8_0Size, 2,
		[5]q0Rows4Kernel{nil, q8_0Rows4T1NEON, q8_0Rows4T2NEON, q8_0Rows4T3NEON, q8_0Rows4T4NEON},
		[5]q0Rows4Kernel{nil, q8_0Rows4T1Dot, q8_0Rows4T2Dot, q8_0Rows4T3Dot, q8_0Rows4T4Dot},
		[5]q0Rows4Kernel{nil, nil, q8_0Rows4T2MM, q8_0Rows4T3MM, q8_0Rows4T4MM}},
	q0Q4: {q4_0Size, q8VNNISize, 4,
		[5]q0Rows4Kernel{nil, q4_0Rows4T1NEON, q4_0Rows4T2NEON, q4_0Rows4T3NEON, q4_0Rows4T4NEON},
		[5]q0Rows4Kernel{nil, q4_0Rows4T1Dot, q4_0Rows4T2Dot, q4_0Rows4T3Dot, q4_0Rows4T4Dot},
		[5]q0Rows4Kernel{nil, nil, nil, nil, q4_0Rows4T4MM}},
	q0IQ4NL: {iq4nlSize, q8_0Size, 2,
		[5]q0Rows4Kernel{nil, iq4nlRows4T1NEON, iq4nlRows4T2NEON, iq4nlRows4T3NEON, iq4nlRows4T4NEON},
		[5]q0Rows4Kernel{nil, iq4nlRows4T1Dot, iq4nlRows4T2Dot, iq4nlRows4T3Dot, iq4nlRows4T4Dot},
		[5]q0Rows4Kernel{nil, nil, iq4nlRows4T2MM, iq4nlRows4T3MM, iq4nlRows4T4MM}},
}

// gemvQ0 runs the four-row kernels of kind k over whole groups of rows,
// q0TokenRun's tokens a pass, and the rows left over one at a time, each
// as a group of four copies of itself (stride 0): the same arithmetic on
// every lane, so it matches its grouped neighbours.
func gemvQ0(k q0Kind, w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qk
	checkGemv(len(w), ws, rows, nb*q0Kernels[k].bsize, len(x), xs, ntok, nb*q0Kernels[k].xsize, len(out), os)
	if nb == 0 {
		for t := range ntok {
			clear(out[t*os : t*os+rows])
		}
		return
	}
	groups := rows / 4
	for t := 0; t < ntok; {
		T := q0TokenRun(ntok - t)
		if groups > 0 {
			q0Rows4(k, T, ptr(w), ws, groups, &x[t*xs], xs, nb, &out[t*os], os)
		}
		for r := 4 * groups; r < rows; r++ {
			var o [4 * 4]float32
			q0Rows4(k, T, &w[r*ws], 0, 1, &x[t*xs], xs, nb, &o[0], 4)
			for i := range T {
				out[(t+i)*os+r] = o[4*i]
			}
		}
		t += T
	}
}

// q0Rows4 runs the T-token four-row kernel of kind k (T = 1 to 4) in the
// form in use (the MM forms from mmFrom tokens on).
func q0Rows4(k q0Kind, T int, w *byte, ws, groups int, x *byte, xs, nb int, out *float32, os int) {
	f := &q0Kernels[k]
	switch {
	case useMM && T >= f.mmFrom:
		f.mm[T](w, ws, groups, x, xs, nb, out, os)
	case useDot:
		f.dot[T](w, ws, groups, x, xs, nb, out, os)
	default:
		f.neon[T](w, ws, groups, x, xs, nb, out, os)
	}
}
