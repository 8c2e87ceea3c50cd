package tensor

import (
	"encoding/binary"
	"math"
)

// Q4_1 weights: 4-bit unsigned quants with a scale and an offset per 32
// elements, dotted against Q8_1 activations (ggml's vec_dot_type for Q4_1).
// Layout (ggml-common.h):
//
//	block_q4_1 { d f16; m f16; qs [16]uint8 }   20 bytes
//	x[j] = d·(qs[j]&15) + m,  x[j+16] = d·(qs[j]>>4) + m   (j < 16)
//
// dotQ4_1Generic is llama.cpp's x86 ggml_vec_dot_q4_1_q8_1 (AVX2; the
// AVX-512 builds run the same code), which its CPU backend uses for every
// batch size: the lanes order (qlanes.go) for d_w·d_x·Σq·y, and beside it
// one float32 summs = fma(f16(w.m), f16(x.s), summs) per block (the C
// compiler fuses that line; a product of two halves is exact in float32,
// so fused or not gives the same bits), added after the lanes:
// hsum8(acc) + summs.

const q4_1Size = 20

// dotQ4_1 and gemvQ4_1 are the kernels on Q8_1 activations: AVX2 where the
// CPU has it, else the reference and no multi-row form (qlanes.go
// registers them).
var dotQ4_1, gemvQ4_1 = asmOr(Q4_1, dotQ4_1Generic)

// registerQ4_1 registers Q4_1's dequantizer and quantizer (its kernels:
// registerQ32).
func registerQ4_1() {
	registerDequant(Q4_1, dequantizeQ4_1)
	registerQuantize(Q4_1, quantizeQ4_1Ref)
}

// q4_1Quants unpacks a Q4_1 block's 32 quants, 0..15.
func q4_1Quants(q *[qk]int32, b []byte) {
	qs := b[4:q4_1Size]
	for j := range 16 {
		q[j] = int32(qs[j] & 15)
		q[j+16] = int32(qs[j] >> 4)
	}
}

// dotQ4_1Generic is the reference Q4_1 × Q8_1 dot of n elements (a
// multiple of 32).
func dotQ4_1Generic(w, x []byte, n int) float32 {
	return dotMinGeneric(w, x, n, q4_1Size)
}

// minQuants unpacks a Q4_1 (bsize 20) or Q5_1 (24) block's quants.
func minQuants(q *[qk]int32, b []byte, bsize int) {
	if bsize == q4_1Size {
		q4_1Quants(q, b)
	} else {
		q5_1Quants(q, b)
	}
}

// dotMinGeneric is the Q4_1 and Q5_1 (bsize-byte blocks) × Q8_1
// reference: per block summs = fma(f16(w.m), f16(x.s), summs) and lanes8
// with d = f16(w.d)·f16(x.d); hsum8(acc) + summs.
func dotMinGeneric(w, x []byte, n, bsize int) float32 {
	nb := n / qk
	w = w[:nb*bsize]
	x = x[:nb*q8_1Size]
	t := f16Table
	var (
		acc   [8]float32
		q     [qk]int32
		summs float32
	)
	for i := range nb {
		wb := w[i*bsize : (i+1)*bsize]
		xb := x[i*q8_1Size : (i+1)*q8_1Size]
		summs = kFMA32(t[le16(wb[2:])], t[le16(xb[2:])], summs)
		minQuants(&q, wb, bsize)
		lanes8(&acc, float32(t[le16(wb)]*t[le16(xb)]), &q, xb[4:])
	}
	return float32(hsum8(&acc) + summs)
}

// dequantizeQ4_1 is ggml's dequantize_row_q4_1: x = float32(q)·d + m, the
// product rounded before the sum (ggml's base library is built without
// fused multiply-add).
func dequantizeQ4_1(dst []float32, src []byte) {
	dequantizeMin(dst, src, q4_1Size)
}

func dequantizeMin(dst []float32, src []byte, bsize int) {
	nb := len(dst) / qk
	src = src[:nb*bsize]
	var q [qk]int32
	for i := range nb {
		b := src[i*bsize : (i+1)*bsize]
		d, m := F16ToF32(le16(b)), F16ToF32(le16(b[2:]))
		minQuants(&q, b, bsize)
		ys := dst[i*qk : (i+1)*qk]
		for j := range ys {
			ys[j] = float32(float32(q[j])*d) + m
		}
	}
}

// quantizeQ4_1Ref is ggml's quantize_row_q4_1_ref (what llama-quantize
// writes without an importance matrix): m = min, d = (max-min)/15,
// q = min(15, trunc((x-m)/d + 0.5)).
func quantizeQ4_1Ref(dst []byte, src []float32) {
	nb := len(src) / qk
	dst = dst[:nb*q4_1Size]
	for i := range nb {
		xs := src[i*qk : (i+1)*qk]
		b := dst[i*q4_1Size : (i+1)*q4_1Size]
		mn, d, id := minScale(xs, 15)
		binary.LittleEndian.PutUint16(b, F32ToF16(d))
		binary.LittleEndian.PutUint16(b[2:], F32ToF16(mn))
		for j := range qk / 2 {
			lo := truncQuant(float32(float32(float32(xs[j]-mn)*id)+0.5), 15)
			hi := truncQuant(float32(float32(float32(xs[j+16]-mn)*id)+0.5), 15)
			b[4+j] = lo | hi<<4
		}
	}
}

// minScale returns a block's minimum, d = (max-min)/nmax and 1/d (0 for
// d = 0), as ggml's Q4_1 and Q5_1 quantizers compute them.
func minScale(xs []float32, nmax float32) (mn, d, id float32) {
	mn, mx := float32(math.MaxFloat32), float32(-math.MaxFloat32)
	for _, v := range xs {
		if v < mn {
			mn = v
		}
		if v > mx {
			mx = v
		}
	}
	d = float32(mx-mn) / nmax
	if d != 0 {
		id = 1 / d
	}
	return mn, d, id
}
