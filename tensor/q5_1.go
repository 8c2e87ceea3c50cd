package tensor

import "encoding/binary"

// Q5_1 weights: 5-bit unsigned quants with a scale and an offset per 32
// elements, dotted against Q8_1 activations (ggml's vec_dot_type for Q5_1).
// Layout (ggml-common.h):
//
//	block_q5_1 { d f16; m f16; qh [4]uint8; qs [16]uint8 }   24 bytes
//	x[j]    = d·(qs[j]&15 | bit j of qh<<4) + m
//	x[j+16] = d·(qs[j]>>4 | bit j+16 of qh<<4) + m   (j < 16)
//
// dotQ5_1Generic is llama.cpp's x86 ggml_vec_dot_q5_1_q8_1, the arithmetic
// of Q4_1 (q4_1.go) on 5-bit quants.

const q5_1Size = 24

// dotQ5_1 and gemvQ5_1 are the kernels on Q8_1 activations: AVX2 where the
// CPU has it, else the reference and no multi-row form (qlanes.go
// registers them).
var dotQ5_1, gemvQ5_1 = asmOr(Q5_1, dotQ5_1Generic)

// registerQ5_1 registers Q5_1's dequantizer and quantizer (its kernels:
// registerQ32).
func registerQ5_1() {
	registerDequant(Q5_1, dequantizeQ5_1)
	registerQuantize(Q5_1, quantizeQ5_1Ref)
}

// q5_1Quants unpacks a Q5_1 block's 32 quants, 0..31.
func q5_1Quants(q *[qk]int32, b []byte) {
	b = b[:q5_1Size]
	qh, qs := b[4:8], b[8:]
	for j := range 16 {
		q[j] = int32(qs[j]&15) | qhBit(qh, j)<<4
		q[j+16] = int32(qs[j]>>4) | qhBit(qh, j+16)<<4
	}
}

// dotQ5_1Generic is the reference Q5_1 × Q8_1 dot of n elements (a
// multiple of 32).
func dotQ5_1Generic(w, x []byte, n int) float32 {
	return dotMinGeneric(w, x, n, q5_1Size)
}

// dequantizeQ5_1 is ggml's dequantize_row_q5_1: x = float32(q)·d + m.
func dequantizeQ5_1(dst []float32, src []byte) {
	dequantizeMin(dst, src, q5_1Size)
}

// quantizeQ5_1Ref is ggml's quantize_row_q5_1_ref: m = min, d =
// (max-min)/31, q = trunc((x-m)/d + 0.5).
func quantizeQ5_1Ref(dst []byte, src []float32) {
	nb := len(src) / qk
	dst = dst[:nb*q5_1Size]
	for i := range nb {
		xs := src[i*qk : (i+1)*qk]
		b := dst[i*q5_1Size : (i+1)*q5_1Size]
		mn, d, id := minScale(xs, 31)
		binary.LittleEndian.PutUint16(b, F32ToF16(d))
		binary.LittleEndian.PutUint16(b[2:], F32ToF16(mn))
		var qh uint32
		for j := range qk / 2 {
			lo := truncQuant(float32(float32(float32(xs[j]-mn)*id)+0.5), 31)
			hi := truncQuant(float32(float32(float32(xs[j+16]-mn)*id)+0.5), 31)
			b[8+j] = lo&15 | hi&15<<4
			qh |= uint32(lo>>4)<<j | uint32(hi>>4)<<(j+16)
		}
		binary.LittleEndian.PutUint32(b[4:], qh)
	}
}
