package tensor

// The lanes order shared by the 32-element block types ggml's x86 CPU
// backend dots with ggml_vec_dot_<type>_q8_<0|1> (Q5_0, Q4_1, Q5_1): per
// block, eight int32 lanes each hold the exact sum of four consecutive
// products (lane l: elements 4l..4l+3, what mul_sum_i8_pairs_float and
// mul_sum_us8_pairs_float leave, with VPMADDUBSW+VPMADDWD or VPDPBUSD
// alike), each converted to float32 and fused-multiply-added with the
// block's d_w·d_x into its own float32 lane; hsum8 adds the lanes at the
// end. llamafile's tinyBLAS_Q0_AVX, which llama.cpp runs for Q5_0 batches
// of two or more tokens, computes the same operations in the same order.

// registerQ32 registers the kernels of Q4_1, Q5_0, Q5_1 and IQ4_NL, in the
// VNNI form where useVNNI.
func registerQ32() {
	registerQ32Kernels()
	registerQ32VNNI() // the AVX-512 VNNI forms, where in use
}

// registerQ32Kernels registers the dot and gemv kernels of Q4_1, Q5_0,
// Q5_1 and IQ4_NL on Q8_1 and Q8_0 activations (ggml's vec_dot_types);
// on amd64 setQ32Forms replaces them by the VNNI forms while useVNNI.
func registerQ32Kernels() {
	registerKernel(Q4_1, Q8_1, dotQ4_1)
	registerKernel(Q5_0, Q8_0, dotQ5_0)
	registerKernel(Q5_1, Q8_1, dotQ5_1)
	registerKernel(IQ4_NL, Q8_0, dotIQ4_NL)
	registerGemv(Q4_1, gemvQ4_1)
	registerGemv(Q5_0, gemvQ5_0)
	registerGemv(Q5_1, gemvQ5_1)
	registerGemv(IQ4_NL, gemvIQ4_NL)
}

// asmOr returns t's assembly kernels (asmQ32) or, without them, ref and
// no multi-row form.
func asmOr(t Type, ref VecDot) (VecDot, gemv) {
	if d, g := asmQ32(t); d != nil {
		return d, g
	}
	return ref, nil
}

// lanes8 accumulates one block: q holds the 32 weight quants as integers
// (signed or not), y the 32 int8 activation quants.
func lanes8(acc *[8]float32, d float32, q *[qk]int32, y []byte) {
	y = y[:qk]
	for l := range 8 {
		k := 4 * l
		s := q[k]*int32(int8(y[k])) + q[k+1]*int32(int8(y[k+1])) +
			q[k+2]*int32(int8(y[k+2])) + q[k+3]*int32(int8(y[k+3]))
		acc[l] = kFMA32(d, float32(s), acc[l])
	}
}

// qhBit returns bit j of a Q5 block's 32-bit high-bit field (element j's
// fifth bit).
func qhBit(qh []byte, j int) int32 { return int32(qh[j>>3]>>(j&7)) & 1 }
