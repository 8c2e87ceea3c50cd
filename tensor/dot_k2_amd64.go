//go:build amd64 && !noasm

package tensor

// The Q2_K, Q3_K, Q5_K and IQ4_XS × Q8_K kernels registered with MatMul:
// AVX2 assembly (dot_k2_amd64.s) where the CPU has it (haveAVX2K), else the
// reference loops; both give the same bits.
//
// For each type T the assembly has two forms:
//
//	tRows(w, wstride, rows, x, nb, out):   out[r] = dotTRef(w + r·wstride, x, 256·nb) for r < rows
//	tRows4(w, wstride, rows, x, nb, out):  out[t][r] = dotTRef(w + r·wstride, x[t], 256·nb) for t < 4
//
// bit for bit, with nb > 0 blocks per row. The four-token form decodes each
// weight block once for the four activation rows (entries may repeat: a
// token given twice computes and writes the same values twice). The gemv
// of each type runs tokens four at a time (a remainder of three as four
// with the last repeated), the rest one at a time.

//go:noescape
func q5KRows(w *byte, wstride, rows int, x *byte, nb int, out *float32)

//go:noescape
func q5KRows4(w *byte, wstride, rows int, x *[4]*byte, nb int, out *[4]*float32)

func init() {
	if haveAVX2K {
		registerGemv(Q5_K, gemvQ5K)
	}
}

func dotQ2K(w, x []byte, n int) float32   { return dotQ2KRef(w, x, n) }
func dotQ3K(w, x []byte, n int) float32   { return dotQ3KRef(w, x, n) }
func dotIQ4XS(w, x []byte, n int) float32 { return dotIQ4XSRef(w, x, n) }

// dotQ5K is the Q5_K × Q8_K kernel registered with MatMul.
func dotQ5K(w, x []byte, n int) float32 {
	nb := n / qkK
	if !haveAVX2K || nb <= 0 {
		return dotQ5KRef(w, x, n)
	}
	_ = w[nb*q5KBytes-1]
	_ = x[nb*q8KBytes-1]
	var out float32
	q5KRows(&w[0], 0, 1, &x[0], nb, &out)
	return out
}

// gemvQ5K is the Q5_K gemv (see the gemv type and the top of this file).
func gemvQ5K(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qkK
	checkGemv(len(w), ws, rows, nb*q5KBytes, len(x), xs, ntok, nb*q8KBytes, len(out), os)
	if nb == 0 {
		kClearOut(out, rows, ntok, os)
		return
	}
	var xp [4]*byte
	var op [4]*float32
	t := 0
	for ntok-t >= 3 {
		m := kTokens(&xp, &op, x, xs, out, os, t, ntok)
		q5KRows4(&w[0], ws, rows, &xp, nb, &op)
		t += m
	}
	for ; t < ntok; t++ {
		q5KRows(&w[0], ws, rows, &x[t*xs], nb, &out[t*os])
	}
}
