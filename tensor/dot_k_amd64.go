//go:build amd64 && !noasm

package tensor

// haveAVX2K reports whether the K-quant assembly may run: it needs AVX2,
// FMA and F16C, which the package's hasAVX2FMA check covers.
var haveAVX2K = hasAVX2FMA

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

// gemvQ4K is the Q4_K gemv (see the gemv type): where useVNNI (and rows
// have at most kMaxQ4KTBlocks blocks), tokens go through the T-token
// kernels (gemvQ4KT) up to eight at a time, a single token too (T = 1, a
// row at a time: one stream, and VPDPBUSD's integer work, which made the
// width-896 files' one-token ffn_down 23-30% faster than q4KRows8).
// Otherwise two or more tokens go through the AVX2 T-token kernels
// (q4KRowsT*AVX2, or q4KRowsT*AVX2W on rows of more than kMaxQ4KTBlocks
// blocks) in as few passes over the weights as they allow, and a
// single token through q4KRows8 (rows in eights) and q4KRows (the leftover
// rows). Bit-identical to dotQ4K on every (row, token) pair.
func gemvQ4K(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qkK
	checkGemv(len(w), ws, rows, nb*q4KBytes, len(x), xs, ntok, nb*q8KBytes, len(out), os)
	switch {
	case nb == 0:
		kClearOut(out, rows, ntok, os)
	case useVNNI && nb <= kMaxQ4KTBlocks:
		for t := 0; t < ntok; t += min(8, ntok-t) {
			gemvQ4KT(w, ws, rows, x, xs, t, min(8, ntok-t), nb, out, os)
		}
	case ntok >= 2:
		kern := &q4KRowsTAVX2
		if nb > kMaxQ4KTBlocks {
			kern = &q4KRowsTAVX2W
		}
		kPassesAVX2(kern, w, ws, rows, x, xs, ntok, nb, out, os)
	default:
		if g := rows / 8; g > 0 {
			q4KRows8(&w[0], ws, g, &x[0], nb, &out[0])
		}
		if r := rows / 8 * 8; rows > r {
			q4KRows(&w[r*ws], ws, rows-r, &x[0], nb, &out[r])
		}
	}
}

// gemvQ6K is the Q6_K gemv: two or more tokens go through the T-token
// kernels, the VNNI ones (gemvQ6KT, up to eight a pass) where useVNNI,
// else the AVX2 ones (q6KRowsT*AVX2) in as few passes over the weights as
// they allow; a single token through q6KRows. Bit-identical to dotQ6K on
// every (row, token) pair.
func gemvQ6K(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qkK
	checkGemv(len(w), ws, rows, nb*q6KBytes, len(x), xs, ntok, nb*q8KBytes, len(out), os)
	switch {
	case nb == 0:
		kClearOut(out, rows, ntok, os)
	case ntok == 1:
		q6KRows(&w[0], ws, rows, &x[0], nb, &out[0])
	case useVNNI:
		for t := 0; t < ntok; t += min(8, ntok-t) {
			if T := min(8, ntok-t); T > 1 {
				gemvQ6KT(w, ws, rows, x, xs, t, T, nb, out, os)
			} else {
				q6KRows(&w[0], ws, rows, &x[t*xs], nb, &out[t*os])
			}
		}
	default:
		kPassesAVX2(&q6KRowsTAVX2, w, ws, rows, x, xs, ntok, nb, out, os)
	}
}

// kPassesAVX2 runs the ntok ≥ 2 tokens of x through the AVX2 T-token
// kernels of one type (kern, whose largest T is the most tokens a pass
// takes) in as few passes over the weights as they allow, the tokens
// shared out evenly among the passes.
func kPassesAVX2(kern *[9]kRowsT, w []byte, ws, rows int, x []byte, xs, ntok, nb int, out []float32, os int) {
	maxT := len(kern) - 1
	for kern[maxT] == nil {
		maxT--
	}
	t := 0
	for passes := (ntok + maxT - 1) / maxT; passes > 0; passes-- {
		T := (ntok - t + passes - 1) / passes
		gemvKT(kern, w, ws, rows, x, xs, t, T, nb, out, os)
		t += T
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
