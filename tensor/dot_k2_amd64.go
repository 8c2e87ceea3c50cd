//go:build amd64 && !noasm

package tensor

// The Q2_K, Q3_K, Q5_K and IQ4_XS × Q8_K kernels registered with MatMul:
// AVX2 assembly (dot_k2_amd64.s) where the CPU has it (haveAVX2K), else the
// reference loops; both give the same bits.
//
// For each type T the assembly has a one-token form
//
//	tRows(w, wstride, rows, x, nb, out):   out[r] = dotTRef(w + r·wstride, x, 256·nb) for r < rows
//
// bit for bit, with nb > 0 blocks per row, and the generated T-token forms
// below, which decode each weight block once for all their tokens. The
// gemv of each type runs two or more tokens in T-token passes: the VNNI
// forms up to eight a pass where useVNNI (leaving at most one), else the
// AVX2 forms in as few passes as they allow; single tokens go through the
// one-token form. The Q2KRepacked order has a four-token form instead,
// q2KRows4R (out[t][r] for t < 4, entries may repeat: a token given twice
// computes and writes the same values twice), run four at a time with a
// remainder of three as four with the last repeated.

//go:noescape
func q2KRows(w *byte, wstride, rows int, x *byte, nb int, out *float32)

//go:noescape
func q2KRowsR(w *byte, wstride, rows int, x *byte, nb int, out *float32)

//go:noescape
func q2KRows4R(w *byte, wstride, rows int, x *[4]*byte, nb int, out *[4]*float32)

//go:noescape
func q3KRows(w *byte, wstride, rows int, x *byte, nb int, out *float32)

//go:noescape
func q5KRows(w *byte, wstride, rows int, x *byte, nb int, out *float32)

//go:noescape
func iq4XSRows(w *byte, wstride, rows int, x *byte, nb int, out *float32)

// The T-token forms, generated into dotk_amd64.s and declared in
// dotk_stubs_amd64.go: T activation rows at x + t·xstride through one pass
// over the weight rows, out[t·ostride + r] bit for bit the reference dot of
// row r and token t, as the four-token forms: AVX-512 VL and VNNI forms
// for T = 2..8 (used where useVNNI) and AVX2 ones for T = 2 up to 6 or 8
// (the asm module's avx2Max). Q2_K has them in the Q2KLanes order only.

// The T-token kernels by T.
var (
	q2KRowsT   = [9]kRowsT{2: q2KRowsT2VNNI, 3: q2KRowsT3VNNI, 4: q2KRowsT4VNNI, 5: q2KRowsT5VNNI, 6: q2KRowsT6VNNI, 7: q2KRowsT7VNNI, 8: q2KRowsT8VNNI}
	q3KRowsT   = [9]kRowsT{2: q3KRowsT2VNNI, 3: q3KRowsT3VNNI, 4: q3KRowsT4VNNI, 5: q3KRowsT5VNNI, 6: q3KRowsT6VNNI, 7: q3KRowsT7VNNI, 8: q3KRowsT8VNNI}
	q5KRowsT   = [9]kRowsT{2: q5KRowsT2VNNI, 3: q5KRowsT3VNNI, 4: q5KRowsT4VNNI, 5: q5KRowsT5VNNI, 6: q5KRowsT6VNNI, 7: q5KRowsT7VNNI, 8: q5KRowsT8VNNI}
	iq4XSRowsT = [9]kRowsT{2: iq4XSRowsT2VNNI, 3: iq4XSRowsT3VNNI, 4: iq4XSRowsT4VNNI, 5: iq4XSRowsT5VNNI, 6: iq4XSRowsT6VNNI, 7: iq4XSRowsT7VNNI, 8: iq4XSRowsT8VNNI}

	q2KRowsTAVX2   = [9]kRowsT{2: q2KRowsT2AVX2, 3: q2KRowsT3AVX2, 4: q2KRowsT4AVX2, 5: q2KRowsT5AVX2, 6: q2KRowsT6AVX2, 7: q2KRowsT7AVX2, 8: q2KRowsT8AVX2}
	q3KRowsTAVX2   = [9]kRowsT{2: q3KRowsT2AVX2, 3: q3KRowsT3AVX2, 4: q3KRowsT4AVX2, 5: q3KRowsT5AVX2, 6: q3KRowsT6AVX2}
	q5KRowsTAVX2   = [9]kRowsT{2: q5KRowsT2AVX2, 3: q5KRowsT3AVX2, 4: q5KRowsT4AVX2, 5: q5KRowsT5AVX2, 6: q5KRowsT6AVX2}
	iq4XSRowsTAVX2 = [9]kRowsT{2: iq4XSRowsT2AVX2, 3: iq4XSRowsT3AVX2, 4: iq4XSRowsT4AVX2, 5: iq4XSRowsT5AVX2, 6: iq4XSRowsT6AVX2, 7: iq4XSRowsT7AVX2, 8: iq4XSRowsT8AVX2}
)

// registerQ2K registers the Q2_K kernels of q2Order (q2KRowsR and
// q2KRows4R are the Q2KRepacked forms, bit for bit dotQ2KRepackedRef).
func registerQ2K() {
	dot, g := dotQ2K, gemvQ2K
	if q2Order == Q2KRepacked {
		dot, g = dotQ2KR, gemvQ2KR
	}
	registerKernel(Q2_K, Q8_K, dot)
	if haveAVX2K {
		registerGemv(Q2_K, g)
	}
}

// The registered dots: the assembly where haveAVX2K, else the reference.

func dotQ2K(w, x []byte, n int) float32   { return dotK2Kind(k2Q2K, w, x, n) }
func dotQ2KR(w, x []byte, n int) float32  { return dotK2Kind(k2Q2KR, w, x, n) }
func dotQ3K(w, x []byte, n int) float32   { return dotK2Kind(k2Q3K, w, x, n) }
func dotQ5K(w, x []byte, n int) float32   { return dotK2Kind(k2Q5K, w, x, n) }
func dotIQ4XS(w, x []byte, n int) float32 { return dotK2Kind(k2IQ4XS, w, x, n) }

// dotK2Kind is kind k's one-row dot: its one-token kernel over one row, or its
// reference loop (k2Ref) where the AVX2 kernels do not take it.
func dotK2Kind(k k2Kind, w, x []byte, n int) float32 {
	nb, ok := kDotBlocks(w, x, n, k2Bytes[k])
	if !ok {
		return k2Ref[k](w, x, n)
	}
	var out float32
	k2Rows(k, &w[0], 0, 1, &x[0], nb, &out)
	return out
}

// The gemvs (see the gemv type and the top of this file): one loop,
// gemvK2, over the kernels of a k2Kind. It calls them directly, by a switch
// on the kind (k2Rows, k2Rows4): through a function value the token pointer
// arrays would escape to the heap.

func gemvQ2K(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvK2(k2Q2K, w, ws, rows, x, xs, ntok, cols, out, os)
}

func gemvQ2KR(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvK2(k2Q2KR, w, ws, rows, x, xs, ntok, cols, out, os)
}

func gemvQ3K(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvK2(k2Q3K, w, ws, rows, x, xs, ntok, cols, out, os)
}

func gemvQ5K(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvK2(k2Q5K, w, ws, rows, x, xs, ntok, cols, out, os)
}

func gemvIQ4XS(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvK2(k2IQ4XS, w, ws, rows, x, xs, ntok, cols, out, os)
}

// k2Kind names the kernels of one weight layout of this file.
type k2Kind uint8

const (
	k2Q2K   k2Kind = iota // Q2_K, Q2KLanes order
	k2Q2KR                // Q2_K, Q2KRepacked order
	k2Q3K                 // Q3_K
	k2Q5K                 // Q5_K
	k2IQ4XS               // IQ4_XS
)

// k2Bytes is each kind's bytes per 256-weight block, k2RowsT its T-token
// kernels (nil: it has none), k2Ref its reference dot.
var (
	k2Bytes     = [...]int{k2Q2K: q2KBytes, k2Q2KR: q2KBytes, k2Q3K: q3KBytes, k2Q5K: q5KBytes, k2IQ4XS: iq4XSBytes}
	k2RowsT     = [...]*[9]kRowsT{k2Q2K: &q2KRowsT, k2Q3K: &q3KRowsT, k2Q5K: &q5KRowsT, k2IQ4XS: &iq4XSRowsT}
	k2RowsTAVX2 = [...]*[9]kRowsT{k2Q2K: &q2KRowsTAVX2, k2Q3K: &q3KRowsTAVX2, k2Q5K: &q5KRowsTAVX2, k2IQ4XS: &iq4XSRowsTAVX2}
	k2Ref       = [...]VecDot{k2Q2K: dotQ2KRef, k2Q2KR: dotQ2KRepackedRef, k2Q3K: dotQ3KRef, k2Q5K: dotQ5KRef, k2IQ4XS: dotIQ4XSRef}
)

func gemvK2(k k2Kind, w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qkK
	checkGemv(len(w), ws, rows, nb*k2Bytes[k], len(x), xs, ntok, nb*q8KBytes, len(out), os)
	if nb == 0 {
		kClearOut(out, rows, ntok, os)
		return
	}
	var xp [4]*byte
	var op [4]*float32
	t := 0
	switch kt := k2RowsT[k]; {
	case kt != nil && useVNNI:
		for ; ntok-t >= 2; t += min(8, ntok-t) {
			gemvKT(kt, w, ws, rows, x, xs, t, min(8, ntok-t), nb, out, os)
		}
	case kt != nil && ntok >= 2:
		kPassesAVX2(k2RowsTAVX2[k], w, ws, rows, x, xs, ntok, nb, out, os)
		t = ntok
	}
	for ntok-t >= 3 { // Q2KRepacked
		m := kTokens(&xp, &op, x, xs, out, os, t, ntok)
		q2KRows4R(&w[0], ws, rows, &xp, nb, &op)
		t += m
	}
	for ; t < ntok; t++ {
		k2Rows(k, &w[0], ws, rows, &x[t*xs], nb, &out[t*os])
	}
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

// k2Rows is kind k's one-token kernel.
func k2Rows(k k2Kind, w *byte, ws, rows int, x *byte, nb int, out *float32) {
	switch k {
	case k2Q2K:
		q2KRows(w, ws, rows, x, nb, out)
	case k2Q2KR:
		q2KRowsR(w, ws, rows, x, nb, out)
	case k2Q3K:
		q3KRows(w, ws, rows, x, nb, out)
	case k2Q5K:
		q5KRows(w, ws, rows, x, nb, out)
	case k2IQ4XS:
		iq4XSRows(w, ws, rows, x, nb, out)
	default:
		panic("tensor: unknown K-quant kernel kind")
	}
}

// LlamaCppQ2KOrder returns the Q2_K order of a llama.cpp CPU backend built
// for this machine (GGML_NATIVE): Q2KRepacked where the CPU has AVX-512F
// (ggml_cpu_has_avx512, which gates the Q2_K repacking), else Q2KLanes.
func LlamaCppQ2KOrder() Q2KOrder {
	if _, avx512, _ := X86Features(); avx512 {
		return Q2KRepacked
	}
	return Q2KLanes
}
