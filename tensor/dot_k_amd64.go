//go:build amd64 && !noasm

package tensor

// haveAVX2K reports whether the K-quant assembly may run: it needs AVX2,
// FMA and F16C, which the package's hasAVX2FMA check covers.
var haveAVX2K = hasAVX2FMA

// useKTAVX2 selects the AVX2 T-token Q4_K kernels for passes of two or
// more tokens without VNNI (gemvQ4K); benchmarks turn it off to compare
// them with the four- and five-token kernels.
var useKTAVX2 = true

// q4KRows computes, for the rows weight rows at w + r·wstride (nb > 0 Q4_K
// blocks each) and one Q8_K activation row x, bit for bit:
//
//	for r := range rows { out[r] = dotQ4KRef(w[r*wstride:], x, 256*nb) }
//
// where per block dotQ4KRef does
//
//	sc, mn := q4KScaleMin(w.scales)
//	isum := Σ_{s<8} sc[s] · Σ_{l<32} q4[32s+l]·q8[32s+l]
//	imin := Σ_{j<16} bsums[j]·mn[j/2]
//	acc  = fma(float32(isum), f16(w.d)·x.d, acc)
//	accm = fma(float32(imin), f16(w.dmin)·x.d, accm)
//
// and returns acc − accm.
//
//go:noescape
func q4KRows(w *byte, wstride, rows int, x *byte, nb int, out *float32)

// q4KRows4 is q4KRows for the four activation rows x[t], writing
// out[t][r]; each weight block is decoded once for all four. Entries may
// repeat (a token given twice computes and writes the same values twice).
//
//go:noescape
func q4KRows4(w *byte, wstride, rows int, x *[4]*byte, nb int, out *[4]*float32)

// q4KRows5 is q4KRows4 for five activation rows: a five-token
// verification pass reads each weight block once.
//
//go:noescape
func q4KRows5(w *byte, wstride, rows int, x *[5]*byte, nb int, out *[5]*float32)

// q4KRows8 is q4KRows for groups·8 rows, eight at a time: the eight rows'
// integer sums are gathered into one vector and their float accumulation
// runs on eight lanes at once, each lane doing its row's q4KRows operations.
//
//go:noescape
func q4KRows8(w *byte, wstride, groups int, x *byte, nb int, out *float32)

// q6KRows computes, for the rows weight rows at w + r·wstride (nb > 0 Q6_K
// blocks each) and one Q8_K activation row x, bit for bit:
//
//	for r := range rows { out[r] = dotQ6KRef(w[r*wstride:], x, 256*nb) }
//
// where per block dotQ6KRef does
//
//	lane := q6KLanes(block)      // eight int32 lanes, as ggml's AVX2 kernel
//	acc[L] = fma(x.d·f16(w.d), float32(lane[L]), acc[L])
//
// and returns hsum8(acc).
//
//go:noescape
func q6KRows(w *byte, wstride, rows int, x *byte, nb int, out *float32)

// q6KRows4 is q6KRows for four activation rows, as q4KRows4.
//
//go:noescape
func q6KRows4(w *byte, wstride, rows int, x *[4]*byte, nb int, out *[4]*float32)

// q6KRows5 is q6KRows for five activation rows, as q4KRows5.
//
//go:noescape
func q6KRows5(w *byte, wstride, rows int, x *[5]*byte, nb int, out *[5]*float32)

// gemvQ4K is the Q4_K gemv (see the gemv type): where useVNNI (and rows
// have at most kMaxQ4KTBlocks blocks), tokens go through the T-token
// kernels (gemvQ4KT) up to eight at a time, a single token too (T = 1, a
// row at a time: one stream, and VPDPBUSD's integer work, which made the
// width-896 files' one-token ffn_down 23-30% faster than q4KRows8). With
// AVX2 only, two or more tokens go through the AVX2 T-token kernels
// (gemvQ4KTAVX2) in as few passes as they allow, or, on rows wider than
// kMaxQ4KTBlocks blocks, five tokens through q4KRows5 in one pass, other
// counts through q4KRows4 four at a time, a remainder of three as four
// with the last repeated. The rest go one at a time through q4KRows8 (rows
// in eights) and q4KRows (the leftover rows). Bit-identical to dotQ4K on
// every (row, token) pair.
func gemvQ4K(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qkK
	checkGemv(len(w), ws, rows, nb*q4KBytes, len(x), xs, ntok, nb*q8KBytes, len(out), os)
	if nb == 0 {
		kClearOut(out, rows, ntok, os)
		return
	}
	t := 0
	if useVNNI && nb <= kMaxQ4KTBlocks {
		for ; t < ntok; t += min(8, ntok-t) {
			gemvQ4KT(w, ws, rows, x, xs, t, min(8, ntok-t), nb, out, os)
		}
	}
	if !useVNNI && useKTAVX2 && nb <= kMaxQ4KTBlocks && ntok >= 2 {
		t = kPassesAVX2(gemvQ4KTAVX2, q4KAVX2MaxT, w, ws, rows, x, xs, ntok, nb, out, os)
	}
	t = kRows45(false, w, ws, rows, x, xs, ntok, t, nb, out, os)
	g := rows / 8
	for ; t < ntok; t++ {
		if g > 0 {
			q4KRows8(&w[0], ws, g, &x[t*xs], nb, &out[t*os])
		}
		if rows > 8*g {
			q4KRows(&w[8*g*ws], ws, rows-8*g, &x[t*xs], nb, &out[t*os+8*g])
		}
	}
}

// gemvQ6K is the Q6_K gemv, as gemvQ4K.
func gemvQ6K(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qkK
	checkGemv(len(w), ws, rows, nb*q6KBytes, len(x), xs, ntok, nb*q8KBytes, len(out), os)
	if nb == 0 {
		kClearOut(out, rows, ntok, os)
		return
	}
	t := 0
	if useVNNI {
		for ; ntok-t >= 2; t += min(8, ntok-t) {
			gemvQ6KT(w, ws, rows, x, xs, t, min(8, ntok-t), nb, out, os)
		}
	}
	if !useVNNI && useKTAVX2 && ntok >= 2 {
		t = kPassesAVX2(gemvQ6KTAVX2, q6KAVX2MaxT, w, ws, rows, x, xs, ntok, nb, out, os)
	}
	for t = kRows45(true, w, ws, rows, x, xs, ntok, t, nb, out, os); t < ntok; t++ {
		q6KRows(&w[0], ws, rows, &x[t*xs], nb, &out[t*os])
	}
}

// kPassesAVX2 runs the ntok ≥ 2 tokens of x through the AVX2 T-token
// kernels of one type (gemvT, up to maxT tokens a pass) in as few passes
// over the weights as they allow, the tokens shared out evenly among the
// passes, and returns ntok.
func kPassesAVX2(gemvT func(w []byte, ws, rows int, x []byte, xs, t0, T, nb int, out []float32, os int),
	maxT int, w []byte, ws, rows int, x []byte, xs, ntok, nb int, out []float32, os int) int {
	t := 0
	for passes := (ntok + maxT - 1) / maxT; passes > 0; passes-- {
		T := (ntok - t + passes - 1) / passes
		gemvT(w, ws, rows, x, xs, t, T, nb, out, os)
		t += T
	}
	return t
}

// kRows45 runs the tokens of x from t on through the AVX2 multi-token
// kernels of Q4_K (q6 false) or Q6_K: five left in one pass (q4KRows5,
// q6KRows5), else four at a time (a remainder of three as four with the
// last repeated), and returns the first token it left for the one-token
// kernels (fewer than three remain).
func kRows45(q6 bool, w []byte, ws, rows int, x []byte, xs, ntok, t, nb int, out []float32, os int) int {
	if ntok-t == 5 {
		var xp [5]*byte
		var op [5]*float32
		kTokens5(&xp, &op, x, xs, out, os, t)
		if q6 {
			q6KRows5(&w[0], ws, rows, &xp, nb, &op)
		} else {
			q4KRows5(&w[0], ws, rows, &xp, nb, &op)
		}
		t += 5
	}
	var xp [4]*byte
	var op [4]*float32
	for ntok-t >= 3 {
		m := kTokens(&xp, &op, x, xs, out, os, t, ntok)
		if q6 {
			q6KRows4(&w[0], ws, rows, &xp, nb, &op)
		} else {
			q4KRows4(&w[0], ws, rows, &xp, nb, &op)
		}
		t += m
	}
	return t
}

// kTokens points xp and op at tokens t, t+1, ... (up to four, at least
// three left), repeating the last when only three remain, and returns how
// many distinct tokens it took.
func kTokens(xp *[4]*byte, op *[4]*float32, x []byte, xs int, out []float32, os, t, ntok int) int {
	m := min(4, ntok-t)
	for k := range 4 {
		u := t + min(k, m-1)
		xp[k], op[k] = &x[u*xs], &out[u*os]
	}
	return m
}

// kTokens5 points xp and op at tokens t .. t+4.
func kTokens5(xp *[5]*byte, op *[5]*float32, x []byte, xs int, out []float32, os, t int) {
	for k := range 5 {
		xp[k], op[k] = &x[(t+k)*xs], &out[(t+k)*os]
	}
}

func kClearOut(out []float32, rows, ntok, os int) {
	for t := range ntok {
		clear(out[t*os : t*os+rows])
	}
}

// quantizeQ8KAVX2 converts nb > 0 blocks of 256 floats at src into Q8_K
// blocks at dst, bit-identical to quantizeRowQ8K on every input (NaNs and
// infinities included).
//
//go:noescape
func quantizeQ8KAVX2(dst *byte, src *float32, nb int)

// quantizeQ8K is the registered float32 → Q8_K converter: the AVX2 code
// when the CPU has it, else the reference loop; both give the same bytes.
func quantizeQ8K(dst []byte, src []float32) {
	nb := len(src) / qkK
	if !haveAVX2K || nb <= 0 {
		quantizeRowQ8K(dst, src)
		return
	}
	_ = dst[nb*q8KBytes-1]
	quantizeQ8KAVX2(&dst[0], &src[0], nb)
}

// kDotBlocks returns the number of 256-column blocks in a one-row dot over
// n columns and whether the AVX2 kernels take it (the CPU has them and
// there is a block); where they do, it checks that w (wb bytes a block)
// and x (Q8_K) hold every block, so the kernel's loads stay in bounds.
func kDotBlocks(w, x []byte, n, wb int) (int, bool) {
	nb := n / qkK
	if !haveAVX2K || nb <= 0 {
		return nb, false
	}
	_ = w[nb*wb-1]
	_ = x[nb*q8KBytes-1]
	return nb, true
}

// dotQ4K is the Q4_K × Q8_K kernel registered with MatMul: the AVX2 code
// when the CPU has it, else the reference loop; both give the same bits.
func dotQ4K(w, x []byte, n int) float32 {
	nb, ok := kDotBlocks(w, x, n, q4KBytes)
	if !ok {
		return dotQ4KRef(w, x, n)
	}
	var out float32
	q4KRows(&w[0], 0, 1, &x[0], nb, &out)
	return out
}

// dotQ6K is the Q6_K × Q8_K kernel registered with MatMul: the AVX2 code
// when the CPU has it, else the reference loop; both give the same bits.
func dotQ6K(w, x []byte, n int) float32 {
	nb, ok := kDotBlocks(w, x, n, q6KBytes)
	if !ok {
		return dotQ6KRef(w, x, n)
	}
	var out float32
	q6KRows(&w[0], 0, 1, &x[0], nb, &out)
	return out
}
