package tensor

// K-quants: ggml's super-block formats with QK_K = 256 elements per block.
//
// Weights come as Q4_K (4-bit values, 8 sub-blocks of 32 with 6-bit scales
// and mins) or Q6_K (6-bit values, 16 sub-blocks of 16 with int8 scales);
// activations are converted to Q8_K (int8 values, a float32 scale and
// per-16 sums). Byte layouts are exactly ggml's (ggml-common.h):
//
//	block_q4_K (144 bytes): d f16 @0, dmin f16 @2, scales [12]u8 @4, qs [128]u8 @16
//	block_q6_K (210 bytes): ql [128]u8 @0, qh [64]u8 @128, scales [16]i8 @192, d f16 @208
//	block_q8_K (292 bytes): d f32 @0, qs [256]i8 @4, bsums [16]i16 @260
//
// The dot products sum each block's quants in exact integer arithmetic (as
// ggml's AVX2 kernels do: Q4_K mins and the Q6_K -32 offset go through the
// activation's bsums), then accumulate the blocks in float32 in block order
// with one rounding per operation and no fused multiply-add. The reference
// loops here and the assembly in dot_k_amd64.s perform the same float
// operations in the same order, so they return bit-identical results on
// every input, valid or not.

import (
	"encoding/binary"
	"math"
)

// qkK is the number of elements in every K-quant block (ggml's QK_K).
const qkK = 256

// Block sizes in bytes and field offsets (see the layout table above).
const (
	q4KBytes = 144
	q6KBytes = 210
	q8KBytes = 292

	q4KScales = 4
	q4KQs     = 16

	q6KQh     = 128
	q6KScales = 192
	q6KD      = 208

	q8KQs    = 4
	q8KBsums = 260
)

func init() {
	registerAct(Q8_K, quantizeQ8K)
	registerKernel(Q4_K, Q8_K, dotQ4K)
	registerKernel(Q6_K, Q8_K, dotQ6K)
	registerDequant(Q4_K, dequantizeRowQ4K)
	registerDequant(Q6_K, dequantizeRowQ6K)
	registerDequant(Q8_K, dequantizeRowQ8K)
}

// nearestInt rounds f to the nearest integer, ties to even, the way ggml's
// nearest_int does: adding 1.5·2^23 leaves the rounded integer in the low
// mantissa bits. Valid for |f| <= 4194303; other inputs give garbage, not a
// panic.
func nearestInt(f float32) int32 {
	v := f + 12582912
	return int32(math.Float32bits(v)&0x007fffff) - 0x00400000
}

// quantizeRowQ8K converts len(src) floats (a multiple of 256) into Q8_K
// blocks in dst, bit for bit as ggml's quantize_row_q8_K_ref, which is what
// llama.cpp's CPU backend runs on x86: per block, the value of largest
// magnitude (first one on ties) maps to -127, q = min(127, round(-127/max·x))
// with ties to even, d = 1/iscale, bsums the sums of each 16 quants.
// An all-zero block gets d = 0 and zero quants and sums.
func quantizeRowQ8K(dst []byte, src []float32) {
	nb := len(src) / qkK
	_ = dst[nb*q8KBytes-1]
	for i := 0; i < nb; i++ {
		x := src[i*qkK : (i+1)*qkK]
		b := dst[i*q8KBytes : (i+1)*q8KBytes]
		var amax, max float32
		for _, v := range x {
			if ax := math.Float32frombits(math.Float32bits(v) &^ (1 << 31)); ax > amax {
				amax, max = ax, v
			}
		}
		if amax == 0 {
			clear(b)
			continue
		}
		iscale := -127 / max
		qs := b[q8KQs : q8KQs+qkK]
		for j := 0; j < qkK; j += 16 {
			xs, qj := x[j:j+16], qs[j:j+16]
			var s int32
			for k, v := range xs {
				q := min(nearestInt(float32(iscale*v)), 127)
				qj[k] = byte(q)
				s += int32(int8(q))
			}
			binary.LittleEndian.PutUint16(b[q8KBsums+j/8:], uint16(s))
		}
		binary.LittleEndian.PutUint32(b, math.Float32bits(1/iscale))
	}
}

// dequantizeRowQ8K expands len(dst) elements of Q8_K: y = d·q.
func dequantizeRowQ8K(dst []float32, src []byte) {
	nb := len(dst) / qkK
	_ = src[nb*q8KBytes-1]
	for i := 0; i < nb; i++ {
		b := src[i*q8KBytes : (i+1)*q8KBytes]
		d := math.Float32frombits(binary.LittleEndian.Uint32(b))
		y := dst[i*qkK : (i+1)*qkK]
		for j, q := range b[q8KQs : q8KQs+qkK] {
			y[j] = d * float32(int8(q))
		}
	}
}

// q4KScaleMin unpacks the eight 6-bit scales and eight 6-bit mins of a
// Q4_K block from its 12 scale bytes (ggml's get_scale_min_k4): sub-blocks
// 0-3 keep their scale and min in the low 6 bits of bytes 0-3 and 4-7;
// sub-blocks 4-7 take low and high nibbles of bytes 8-11 and the top two
// bits of bytes 0-3 (scales) and 4-7 (mins).
func q4KScaleMin(s []byte) (sc, mn [8]uint8) {
	_ = s[11]
	for j := 0; j < 4; j++ {
		sc[j] = s[j] & 63
		mn[j] = s[j+4] & 63
		sc[j+4] = s[j+8]&0xf | (s[j]>>6)<<4
		mn[j+4] = s[j+8]>>4 | (s[j+4]>>6)<<4
	}
	return sc, mn
}

// dequantizeRowQ4K expands len(dst) elements of Q4_K as ggml's
// dequantize_row_q4_K: y = (d·scale)·q − dmin·min, each product rounded.
func dequantizeRowQ4K(dst []float32, src []byte) {
	nb := len(dst) / qkK
	_ = src[nb*q4KBytes-1]
	for i := 0; i < nb; i++ {
		b := src[i*q4KBytes : (i+1)*q4KBytes]
		d := F16ToF32(binary.LittleEndian.Uint16(b))
		dmin := F16ToF32(binary.LittleEndian.Uint16(b[2:]))
		sc, mn := q4KScaleMin(b[q4KScales : q4KScales+12])
		y := dst[i*qkK : (i+1)*qkK]
		for j := 0; j < 4; j++ {
			q := b[q4KQs+32*j : q4KQs+32*j+32]
			d1, m1 := float32(d*float32(sc[2*j])), float32(dmin*float32(mn[2*j]))
			d2, m2 := float32(d*float32(sc[2*j+1])), float32(dmin*float32(mn[2*j+1]))
			lo, hi := y[64*j:64*j+32], y[64*j+32:64*j+64]
			for l, v := range q {
				lo[l] = float32(d1*float32(v&0xf)) - m1
				hi[l] = float32(d2*float32(v>>4)) - m2
			}
		}
	}
}

// q6KValues unpacks the 256 six-bit quants of a Q6_K block, without the -32
// offset (0..63), in element order: within each half of 128 elements,
// element l, l+32, l+64, l+96 take the low nibble of ql[l], the low nibble
// of ql[l+32], the high nibble of ql[l], the high nibble of ql[l+32], with
// bit pairs 0-1, 2-3, 4-5, 6-7 of qh[l] on top.
func q6KValues(a *[qkK]uint8, b []byte) {
	_ = b[q6KD+1]
	for h := 0; h < 2; h++ {
		ql := b[64*h : 64*h+64]
		qh := b[q6KQh+32*h : q6KQh+32*h+32]
		y := a[128*h : 128*h+128]
		for l := 0; l < 32; l++ {
			y[l] = ql[l]&0xf | (qh[l]&3)<<4
			y[l+32] = ql[l+32]&0xf | (qh[l]>>2&3)<<4
			y[l+64] = ql[l]>>4 | (qh[l]>>4&3)<<4
			y[l+96] = ql[l+32]>>4 | (qh[l]>>6)<<4
		}
	}
}

// dequantizeRowQ6K expands len(dst) elements of Q6_K as ggml's
// dequantize_row_q6_K: y = (d·scale)·(q − 32), each product rounded.
func dequantizeRowQ6K(dst []float32, src []byte) {
	nb := len(dst) / qkK
	_ = src[nb*q6KBytes-1]
	var a [qkK]uint8
	for i := 0; i < nb; i++ {
		b := src[i*q6KBytes : (i+1)*q6KBytes]
		d := F16ToF32(binary.LittleEndian.Uint16(b[q6KD:]))
		q6KValues(&a, b)
		y := dst[i*qkK : (i+1)*qkK]
		for j := range y {
			sc := float32(int8(b[q6KScales+j/16]))
			y[j] = float32(d*sc) * float32(int32(a[j])-32)
		}
	}
}

// dotQ4KRef is the reference Q4_K × Q8_K dot product of n elements (a
// multiple of 256). Per block, with q8 the activation quants, bs its bsums
// and sc/mn the unpacked scales and mins:
//
//	isum := Σ_s sc[s] · Σ_{l<32} q4[32s+l]·q8[32s+l]   (int32, wrapping)
//	imin := Σ_{j<16} bs[j] · mn[j/2]
//	sum  += (xd·wd)·float32(isum);  sum -= (xd·wdmin)·float32(imin)
//
// where every float operation rounds to float32 (no fusion).
func dotQ4KRef(w, x []byte, n int) float32 {
	nb := n / qkK
	_ = w[nb*q4KBytes-1]
	_ = x[nb*q8KBytes-1]
	var sum float32
	for i := 0; i < nb; i++ {
		wb := w[i*q4KBytes : (i+1)*q4KBytes]
		xb := x[i*q8KBytes : (i+1)*q8KBytes]
		sc, mn := q4KScaleMin(wb[q4KScales : q4KScales+12])
		q8 := xb[q8KQs : q8KQs+qkK]
		var isum int32
		for j := 0; j < 4; j++ {
			q := wb[q4KQs+32*j : q4KQs+32*j+32]
			lo, hi := q8[64*j:64*j+32], q8[64*j+32:64*j+64]
			var sl, sh int32
			for l, v := range q {
				sl += int32(v&0xf) * int32(int8(lo[l]))
				sh += int32(v>>4) * int32(int8(hi[l]))
			}
			isum += int32(sc[2*j])*sl + int32(sc[2*j+1])*sh
		}
		var imin int32
		for j := 0; j < 16; j++ {
			bs := int16(binary.LittleEndian.Uint16(xb[q8KBsums+2*j:]))
			imin += int32(bs) * int32(mn[j/2])
		}
		xd := math.Float32frombits(binary.LittleEndian.Uint32(xb))
		d := float32(xd * F16ToF32(binary.LittleEndian.Uint16(wb)))
		dmin := float32(xd * F16ToF32(binary.LittleEndian.Uint16(wb[2:])))
		sum += float32(d * float32(isum))
		sum -= float32(dmin * float32(imin))
	}
	return sum
}

// dotQ6KRef is the reference Q6_K × Q8_K dot product of n elements (a
// multiple of 256). With u the unsigned 6-bit quants (value + 32), q8 the
// activation quants, bs its bsums and sc the int8 scales, per block:
//
//	isum := Σ_s sc[s] · (Σ_{l<16} u[16s+l]·q8[16s+l]) − 32·Σ_s sc[s]·bs[s]   (int32, wrapping)
//	sum  += (xd·wd)·float32(isum)
//
// which equals Σ sc·(u−32)·q8 whenever bsums match the quants.
func dotQ6KRef(w, x []byte, n int) float32 {
	nb := n / qkK
	_ = w[nb*q6KBytes-1]
	_ = x[nb*q8KBytes-1]
	var sum float32
	var a [qkK]uint8
	for i := 0; i < nb; i++ {
		wb := w[i*q6KBytes : (i+1)*q6KBytes]
		xb := x[i*q8KBytes : (i+1)*q8KBytes]
		q6KValues(&a, wb)
		q8 := xb[q8KQs : q8KQs+qkK]
		var isum, ioff int32
		for s := 0; s < 16; s++ {
			sc := int32(int8(wb[q6KScales+s]))
			var p int32
			for l := 16 * s; l < 16*s+16; l++ {
				p += int32(a[l]) * int32(int8(q8[l]))
			}
			isum += sc * p
			ioff += sc * int32(int16(binary.LittleEndian.Uint16(xb[q8KBsums+2*s:])))
		}
		isum -= ioff << 5
		xd := math.Float32frombits(binary.LittleEndian.Uint32(xb))
		d := float32(xd * F16ToF32(binary.LittleEndian.Uint16(wb[q6KD:])))
		sum += float32(d * float32(isum))
	}
	return sum
}
