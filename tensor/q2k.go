package tensor

// Q2_K: ggml's 2-bit K-quant, sixteen sub-blocks of 16 with a 4-bit scale
// (low nibble) and a 4-bit min (high nibble) each:
//
//	block_q2_K (84 bytes): scales [16]u8 @0, qs [64]u8 @16, d f16 @80, dmin f16 @82
//
// Element 128j+32k+l (l < 32) is qs[32j+l]>>2k & 3, in sub-block
// (128j+32k+l)/16: y = d·sc·q − dmin·m. The dot takes Q8_K activations and
// follows ggml_vec_dot_q2_K_q8_K's AVX2 arithmetic: per block, with
// d = x.d·f16(w.d) and dmin = −x.d·f16(w.dmin), first the mins and then
// the scaled quants are fused into eight float lanes,
//
//	acc[L] = fma(dmin, float32(m[2L]·bsums[2L] + m[2L+1]·bsums[2L+1]), acc[L])
//	acc[L] = fma(d, float32(lane[L]), acc[L])
//
// (lane as in kquants_lanes.go), and the result is hsum8(acc). This is what
// llama.cpp computes on AVX2 CPUs (Q2KLanes, the default). With AVX-512 it
// repacks Q2_K matrices whose row count is a multiple of 8 and runs
// ggml_gemv_q2_K_8x8_q8_K instead, Q4_K's arithmetic (Q2KRepacked): per
// block
//
//	acc  = fma(float32(Σ sc·q·q8), f16(w.d)·x.d, acc)
//	accm = fma(float32(Σ m·bsums), f16(w.dmin)·x.d, accm)
//
// and acc − accm; the two agree to rounding (TestKQuants2Golden). Its
// four-token gemm rounds differently again (specd keeps the one-token
// arithmetic for every batch, as for Q4_K).

import (
	"encoding/binary"
	"math"
)

const (
	q2KBytes = 84
	q2KQs    = 16
	q2KD     = 80
)

// Q2KOrder is the summation order of Q2_K dot products (see above). The
// two orders differ by a few units in the last place of each dot product.
type Q2KOrder int

const (
	// Q2KLanes is ggml_vec_dot_q2_K_q8_K's AVX2 order: llama.cpp's on
	// CPUs without AVX-512 (and on any CPU for a matrix whose row count is
	// not a multiple of 8).
	Q2KLanes Q2KOrder = iota
	// Q2KRepacked is ggml_gemv_q2_K_8x8_q8_K's order: llama.cpp's on
	// AVX-512 CPUs for matrices whose row count is a multiple of 8.
	Q2KRepacked
)

var q2Order = Q2KLanes

// SetQ2KOrder selects the order of Q2_K dot products for the MatMuls and
// VecDots that follow. It must not run concurrently with either.
func SetQ2KOrder(o Q2KOrder) {
	q2Order = o
	registerQ2K()
}

// registerQ2_K registers Q2_K: the kernel of q2Order (registerQ2K),
// dequantizer and quantizer.
func registerQ2_K() {
	registerQ2K()
	registerDequant(Q2_K, dequantizeRowQ2K)
	registerQuantize(Q2_K, quantizeRowQ2K)
}

// q2KValues unpacks the 256 two-bit quants of a Q2_K block.
func q2KValues(a *[qkK]uint8, b []byte) {
	_ = b[q2KBytes-1]
	for j := 0; j < 2; j++ {
		qs := b[q2KQs+32*j : q2KQs+32*j+32]
		y := a[128*j : 128*j+128]
		for l, v := range qs {
			y[l] = v & 3
			y[32+l] = v >> 2 & 3
			y[64+l] = v >> 4 & 3
			y[96+l] = v >> 6
		}
	}
}

// dequantizeRowQ2K expands len(dst) elements of Q2_K as ggml's
// dequantize_row_q2_K: y = (d·sc)·q − dmin·m, each product rounded.
func dequantizeRowQ2K(dst []float32, src []byte) {
	nb := len(dst) / qkK
	_ = src[nb*q2KBytes-1]
	var a [qkK]uint8
	for i := 0; i < nb; i++ {
		b := src[i*q2KBytes : (i+1)*q2KBytes]
		d := F16ToF32(binary.LittleEndian.Uint16(b[q2KD:]))
		dmin := F16ToF32(binary.LittleEndian.Uint16(b[q2KD+2:]))
		q2KValues(&a, b)
		y := dst[i*qkK : (i+1)*qkK]
		for s := 0; s < 16; s++ {
			dl, ml := float32(d*float32(b[s]&0xf)), float32(dmin*float32(b[s]>>4))
			for l := 16 * s; l < 16*s+16; l++ {
				y[l] = float32(dl*float32(a[l])) - ml
			}
		}
	}
}

// dotQ2KRef is the reference Q2_K × Q8_K dot product of n elements (a
// multiple of 256), with the float arithmetic of ggml's AVX2
// ggml_vec_dot_q2_K_q8_K (see the top of this file).
func dotQ2KRef(w, x []byte, n int) float32 {
	nb := n / qkK
	_ = w[nb*q2KBytes-1]
	_ = x[nb*q8KBytes-1]
	var (
		acc  [8]float32
		lane [8]int32
		a    [qkK]uint8
		p    [qkK]int32
		sc16 [16]int32
	)
	for i := 0; i < nb; i++ {
		wb := w[i*q2KBytes : (i+1)*q2KBytes]
		xb := x[i*q8KBytes : (i+1)*q8KBytes]
		q2KValues(&a, wb)
		q8 := xb[q8KQs : q8KQs+qkK]
		for e := range p {
			p[e] = int32(a[e]) * int32(int8(q8[e]))
		}
		for s := range sc16 {
			sc16[s] = int32(wb[s] & 0xf)
		}
		kLanes8(&lane, &p, &sc16)
		xd := math.Float32frombits(binary.LittleEndian.Uint32(xb))
		d := float32(xd * F16ToF32(binary.LittleEndian.Uint16(wb[q2KD:])))
		dmin := -float32(xd * F16ToF32(binary.LittleEndian.Uint16(wb[q2KD+2:])))
		for L := range acc {
			b0 := int32(int16(binary.LittleEndian.Uint16(xb[q8KBsums+4*L:])))
			b1 := int32(int16(binary.LittleEndian.Uint16(xb[q8KBsums+4*L+2:])))
			m := int32(wb[2*L]>>4)*b0 + int32(wb[2*L+1]>>4)*b1
			acc[L] = kFMA32(dmin, float32(m), acc[L])
		}
		kFMALanes(&acc, d, &lane)
	}
	return hsum8(&acc)
}

// dotQ2KRepackedRef is the reference Q2_K × Q8_K dot product in the
// Q2KRepacked order (ggml_gemv_q2_K_8x8_q8_K's), n a multiple of 256:
//
//	isum := Σ_{s<16} sc[s] · Σ_{l<16} q2[16s+l]·q8[16s+l]
//	imin := Σ_{s<16} m[s] · bsums[s]
//	acc  = fma(float32(isum), f16(w.d)·x.d, acc)
//	accm = fma(float32(imin), f16(w.dmin)·x.d, accm)
//
// and the result is acc − accm.
func dotQ2KRepackedRef(w, x []byte, n int) float32 {
	nb := n / qkK
	_ = w[nb*q2KBytes-1]
	_ = x[nb*q8KBytes-1]
	var (
		acc, accm float32
		a         [qkK]uint8
	)
	for i := 0; i < nb; i++ {
		wb := w[i*q2KBytes : (i+1)*q2KBytes]
		xb := x[i*q8KBytes : (i+1)*q8KBytes]
		q2KValues(&a, wb)
		q8 := xb[q8KQs : q8KQs+qkK]
		var isum, imin int32
		for s := 0; s < 16; s++ {
			var p int32
			for e := 16 * s; e < 16*s+16; e++ {
				p += int32(a[e]) * int32(int8(q8[e]))
			}
			isum += int32(wb[s]&0xf) * p
			imin += int32(wb[s]>>4) * int32(int16(binary.LittleEndian.Uint16(xb[q8KBsums+2*s:])))
		}
		xd := math.Float32frombits(binary.LittleEndian.Uint32(xb))
		d := float32(F16ToF32(binary.LittleEndian.Uint16(wb[q2KD:])) * xd)
		dmin := float32(F16ToF32(binary.LittleEndian.Uint16(wb[q2KD+2:])) * xd)
		acc = kFMA32(float32(isum), d, acc)
		accm = kFMA32(float32(imin), dmin, accm)
	}
	return acc - accm
}

// quantizeRowQ2K converts len(src) floats (a multiple of 256) into Q2_K
// blocks as ggml's quantize_row_q2_K_ref: per sub-block of 16 a scale/min
// search weighted by |x| on absolute error (makeQKX2Quants, 3 levels,
// rmin −0.5, 16 steps of 0.1); scales and mins quantized to 4 bits against
// the block's largest, d and dmin stored as F16, and the values
// requantized with the stored scales.
func quantizeRowQ2K(dst []byte, src []float32) {
	nb := len(src) / qkK
	_ = dst[nb*q2KBytes-1]
	var (
		l       [qkK]uint8
		laux    [16]uint8
		weights [16]float32
		mins    [16]float32
		scales  [16]float32
	)
	for i := 0; i < nb; i++ {
		x := src[i*qkK : (i+1)*qkK]
		b := dst[i*q2KBytes : (i+1)*q2KBytes]
		var maxScale, maxMin float32
		for j := 0; j < 16; j++ {
			xs := x[16*j : 16*j+16]
			for k, v := range xs {
				weights[k] = abs32(v)
			}
			scales[j], mins[j] = makeQKX2Quants(3, xs, weights[:], l[16*j:16*j+16], laux[:], -0.5, 0.1, 15, true)
			if scales[j] > maxScale {
				maxScale = scales[j]
			}
			if mins[j] > maxMin {
				maxMin = mins[j]
			}
		}
		sc := b[:16]
		var hd, hm uint16
		if maxScale > 0 {
			iscale := 15 / maxScale
			for j := range sc {
				sc[j] = uint8(nearestInt(float32(iscale * scales[j])))
			}
			hd = F32ToF16(maxScale / 15)
		} else {
			clear(sc)
		}
		if maxMin > 0 {
			iscale := 15 / maxMin
			for j := range sc {
				sc[j] |= uint8(nearestInt(float32(iscale*mins[j]))) << 4
			}
			hm = F32ToF16(maxMin / 15)
		}
		binary.LittleEndian.PutUint16(b[q2KD:], hd)
		binary.LittleEndian.PutUint16(b[q2KD+2:], hm)
		fd, fm := F16ToF32(hd), F16ToF32(hm)
		for j := 0; j < 16; j++ {
			d := float32(fd * float32(sc[j]&0xf))
			if d == 0 {
				continue
			}
			dm := float32(fm * float32(sc[j]>>4))
			for k := 0; k < 16; k++ {
				q := nearestInt(float32(x[16*j+k]+dm) / d)
				l[16*j+k] = uint8(max(0, min(3, q)))
			}
		}
		for j := 0; j < 2; j++ {
			qs := b[q2KQs+32*j : q2KQs+32*j+32]
			L := l[128*j : 128*j+128]
			for k := range qs {
				qs[k] = L[k] | L[32+k]<<2 | L[64+k]<<4 | L[96+k]<<6
			}
		}
	}
}
