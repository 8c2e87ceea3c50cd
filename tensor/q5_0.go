package tensor

import "encoding/binary"

// Q5_0 weights: 5-bit signed quants with one scale per 32 elements, dotted
// against Q8_0 activations (ggml's vec_dot_type for Q5_0). Layout
// (ggml-common.h):
//
//	block_q5_0 { d f16; qh [4]uint8; qs [16]uint8 }   22 bytes
//	x[j]    = d·((qs[j]&15 | bit j of qh<<4) - 16)
//	x[j+16] = d·((qs[j]>>4 | bit j+16 of qh<<4) - 16)   (j < 16)
//
// dotQ5_0Generic is ggml_vec_dot_q5_0_q8_0 on x86 (AVX2, the same with
// AVX-512) and llamafile's tinyBLAS for batches, in the lanes order
// (qlanes.go): bit-identical to llama.cpp's CPU backend.

const q5_0Size = 22

// dotQ5_0 and gemvQ5_0 are the kernels on Q8_0 activations: AVX2 where the
// CPU has it, else the reference and no multi-row form (qlanes.go
// registers them).
var dotQ5_0, gemvQ5_0 = asmOr(Q5_0, dotQ5_0Generic)

// registerQ5_0 registers Q5_0's dequantizer and quantizer (its kernels:
// registerQ32).
func registerQ5_0() {
	registerDequant(Q5_0, dequantizeQ5_0)
	registerQuantize(Q5_0, quantizeQ5_0Ref)
}

// q5_0Quants unpacks a Q5_0 block's 32 quants, -16..15.
func q5_0Quants(q *[qk]int32, b []byte) {
	b = b[:q5_0Size]
	qh, qs := b[2:6], b[6:]
	for j := range 16 {
		q[j] = int32(qs[j]&15) | qhBit(qh, j)<<4 - 16
		q[j+16] = int32(qs[j]>>4) | qhBit(qh, j+16)<<4 - 16
	}
}

// dotQ5_0Generic is the reference Q5_0 × Q8_0 dot of n elements (a
// multiple of 32): per block d = f16(w.d)·f16(x.d), then lanes8.
func dotQ5_0Generic(w, x []byte, n int) float32 {
	nb := n / qk
	w = w[:nb*q5_0Size]
	x = x[:nb*q8_0Size]
	t := f16Table
	var (
		acc [8]float32
		q   [qk]int32
	)
	for i := range nb {
		wb := w[i*q5_0Size : (i+1)*q5_0Size]
		xb := x[i*q8_0Size : (i+1)*q8_0Size]
		q5_0Quants(&q, wb)
		lanes8(&acc, float32(t[le16(wb)]*t[le16(xb)]), &q, xb[2:])
	}
	return hsum8(&acc)
}

// dequantizeQ5_0 is ggml's dequantize_row_q5_0: x = float32(q-16)·d.
func dequantizeQ5_0(dst []float32, src []byte) {
	nb := len(dst) / qk
	src = src[:nb*q5_0Size]
	var q [qk]int32
	for i := range nb {
		b := src[i*q5_0Size : (i+1)*q5_0Size]
		d := F16ToF32(le16(b))
		q5_0Quants(&q, b)
		ys := dst[i*qk : (i+1)*qk]
		for j := range ys {
			ys[j] = float32(q[j]) * d
		}
	}
}

// quantizeQ5_0Ref is ggml's quantize_row_q5_0_ref (what llama-quantize
// writes without an importance matrix): d = max/-16 where max is the
// element of largest magnitude (sign kept, the first on ties), q =
// min(31, trunc(x/d + 16.5)).
func quantizeQ5_0Ref(dst []byte, src []float32) {
	nb := len(src) / qk
	dst = dst[:nb*q5_0Size]
	for i := range nb {
		xs := src[i*qk : (i+1)*qk]
		b := dst[i*q5_0Size : (i+1)*q5_0Size]
		d := maxMagnitude(xs) / -16
		id := inv(d)
		binary.LittleEndian.PutUint16(b, F32ToF16(d))
		var qh uint32
		for j := range qk / 2 {
			lo := truncQuant(float32(float32(xs[j]*id)+16.5), 31)
			hi := truncQuant(float32(float32(xs[j+16]*id)+16.5), 31)
			b[6+j] = lo&15 | hi&15<<4
			qh |= uint32(lo>>4)<<j | uint32(hi>>4)<<(j+16)
		}
		binary.LittleEndian.PutUint32(b[2:], qh)
	}
}

// truncQuant is MIN(top, (int8_t)v) for the v ≥ 0 a legacy quantizer
// produces from finite input; out-of-range or NaN values, which only a
// non-finite block yields, clamp.
func truncQuant(v float32, top uint8) uint8 {
	switch {
	case !(v >= 0): // NaN or negative
		return 0
	case v >= float32(top):
		return top
	}
	return uint8(v)
}
