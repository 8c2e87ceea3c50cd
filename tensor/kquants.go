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
// The dot products sum each block's quants in exact integer arithmetic, then
// accumulate in float32 exactly as llama.cpp's x86 kernels do, so that a
// K-quant model computes the same bits as llama.cpp: Q6_K as
// ggml_vec_dot_q6_K_q8_K (eight lanes, fused multiply-add per block, ggml's
// horizontal sum), Q4_K as the repacked gemv llama.cpp uses for Q4_K weights
// (one fused multiply-add per block for the scales and one for the mins).
// llama.cpp's four-token Q4_K gemm rounds per 64 elements instead; specd
// uses the gemv order for every token, because its results must not depend
// on the batch. The reference loops here and the assembly in dot_k_amd64.s
// perform the same float operations in the same order, so they return
// bit-identical results on every input, valid or not.

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

// registerKQuants registers Q8_K activations and the Q4_K and Q6_K kernels
// and dequantizers.
func registerKQuants() {
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
// multiple of 256), with the float arithmetic of llama.cpp's x86 Q4_K
// kernels (the repacked AVX2/AVX-512 gemv and gemm). Per block, with q8 the
// activation quants, bs its bsums and sc/mn the unpacked scales and mins:
//
//	isum := Σ_s sc[s] · Σ_{l<32} q4[32s+l]·q8[32s+l]   (int32, wrapping)
//	imin := Σ_{j<16} bs[j] · mn[j/2]
//	acc  = fma(float32(isum), wd·xd, acc)
//	accm = fma(float32(imin), wdmin·xd, accm)
//
// and the result is acc − accm (fma rounds once; products round to float32).
func dotQ4KRef(w, x []byte, n int) float32 {
	nb := n / qkK
	_ = w[nb*q4KBytes-1]
	_ = x[nb*q8KBytes-1]
	var acc, accm float32
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
		d := float32(F16ToF32(binary.LittleEndian.Uint16(wb)) * xd)
		dmin := float32(F16ToF32(binary.LittleEndian.Uint16(wb[2:])) * xd)
		acc = kFMA32(float32(isum), d, acc)
		accm = kFMA32(float32(imin), dmin, accm)
	}
	return acc - accm
}

// q6KLanes computes the eight int32 lane sums of one Q6_K × Q8_K block as
// llama.cpp's AVX2 kernel holds them: lane L gathers, from each group of 32
// elements, the 4 elements 4L..4L+3 times the scale of their 16-element
// sub-block, less 32·(bs[2L]·sc[2L] + bs[2L+1]·sc[2L+1]); u are the unsigned
// 6-bit quants. The lanes add up to Σ sc·(u−32)·q8 when bsums match the quants.
func q6KLanes(lane *[8]int32, a *[qkK]uint8, wb, xb []byte) {
	q8 := xb[q8KQs : q8KQs+qkK]
	*lane = [8]int32{}
	for g := 0; g < 8; g++ {
		for L := 0; L < 8; L++ {
			sc := int32(int8(wb[q6KScales+2*g+L>>2]))
			var p int32
			for e := 32*g + 4*L; e < 32*g+4*L+4; e++ {
				p += int32(a[e]) * int32(int8(q8[e]))
			}
			lane[L] += sc * p
		}
	}
	for L := 0; L < 8; L++ {
		s0 := int32(int8(wb[q6KScales+2*L])) * int32(int16(binary.LittleEndian.Uint16(xb[q8KBsums+4*L:])))
		s1 := int32(int8(wb[q6KScales+2*L+1])) * int32(int16(binary.LittleEndian.Uint16(xb[q8KBsums+4*L+2:])))
		lane[L] -= (s0 + s1) << 5
	}
}

// dotQ6KRef is the reference Q6_K × Q8_K dot product of n elements (a
// multiple of 256), with the float arithmetic of llama.cpp's AVX2
// ggml_vec_dot_q6_K_q8_K: per block, acc[L] = fma(xd·wd, float32(lane[L]),
// acc[L]) for the eight lanes of q6KLanes; the result is hsum8(acc).
func dotQ6KRef(w, x []byte, n int) float32 {
	nb := n / qkK
	_ = w[nb*q6KBytes-1]
	_ = x[nb*q8KBytes-1]
	var (
		acc  [8]float32
		lane [8]int32
		a    [qkK]uint8
	)
	for i := 0; i < nb; i++ {
		wb := w[i*q6KBytes : (i+1)*q6KBytes]
		xb := x[i*q8KBytes : (i+1)*q8KBytes]
		q6KValues(&a, wb)
		q6KLanes(&lane, &a, wb, xb)
		xd := math.Float32frombits(binary.LittleEndian.Uint32(xb))
		d := float32(xd * F16ToF32(binary.LittleEndian.Uint16(wb[q6KD:])))
		for L := range acc {
			acc[L] = kFMA32(d, float32(lane[L]), acc[L])
		}
	}
	return hsum8(&acc)
}

// kFMA32 returns a·b + c rounded once to float32, as a fused multiply-add
// instruction computes it. a·b is exact in float64; the float64 sum is
// corrected when rounding it to float32 would round twice across a tie.
func kFMA32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	r := float32(s)
	if float64(r) == s || math.IsInf(s, 0) || s != s {
		return r
	}
	// The rounding error of s (TwoSum), exact.
	bv := s - p
	e := (p - (s - bv)) + (float64(c) - bv)
	if e == 0 {
		return r
	}
	// s lies strictly between two float32s; only a tie can round wrongly.
	o := math.Nextafter32(r, float32(math.Copysign(math.Inf(1), s-float64(r))))
	if s-float64(r) != float64(o)-s {
		return r
	}
	// A tie in float64 that is not one exactly: the true value is s + e.
	if (e > 0) == (float64(o) > float64(r)) {
		return o
	}
	return r
}
