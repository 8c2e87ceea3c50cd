package tensor

// Q5_K: ggml's 5-bit K-quant, eight sub-blocks of 32 with 6-bit scales and
// mins (packed as Q4_K's), 4 low bits in qs and the fifth in qh:
//
//	block_q5_K (176 bytes): d f16 @0, dmin f16 @2, scales [12]u8 @4, qh [32]u8 @16, qs [128]u8 @48
//
// Element 64j+l (l < 32) is qs[32j+l]&15 + 16·(qh[l]>>2j & 1) and element
// 64j+32+l is qs[32j+l]>>4 + 16·(qh[l]>>(2j+1) & 1), both in sub-block
// 2j, 2j+1: y = d·sc·q − dmin·m. The dot takes Q8_K activations and follows
// ggml_vec_dot_q5_K_q8_K's AVX2 arithmetic (which x86 builds with AVX-512
// run too: llama.cpp repacks Q5_K only on ARM): the scaled quants in ggml's
// eight lanes (kquants_lanes.go), fused into eight float lanes with
// d = x.d·f16(w.d) per block, and the mins into one scalar,
//
//	imin  = Σ_{s<8} mn[s] · int16(bsums[2s] + bsums[2s+1])   (16-bit pair sums, as VPHADDW)
//	summs = fma(float32(imin), −x.d·f16(w.dmin), summs)
//
// (the compiler fuses ggml's summs += dmin·imin; checked against its
// shipped AVX2 build), the result hsum8(acc) + summs.

import (
	"encoding/binary"
	"math"
)

const (
	q5KBytes  = 176
	q5KScales = 4
	q5KQh     = 16
	q5KQs     = 48
)

// registerQ5_K registers Q5_K weights.
func registerQ5_K() {
	registerKernel(Q5_K, Q8_K, dotQ5K)
	registerDequant(Q5_K, dequantizeRowQ5K)
	registerQuantize(Q5_K, quantizeRowQ5K)
}

// q5KValues unpacks the 256 five-bit quants (0..31) of a Q5_K block.
func q5KValues(a *[qkK]uint8, b []byte) {
	_ = b[q5KBytes-1]
	qh := b[q5KQh : q5KQh+32]
	for j := 0; j < 4; j++ {
		qs := b[q5KQs+32*j : q5KQs+32*j+32]
		lo, hi := a[64*j:64*j+32], a[64*j+32:64*j+64]
		for l, v := range qs {
			h := qh[l] >> (2 * j)
			lo[l] = v&0xf | (h&1)<<4
			hi[l] = v>>4 | (h>>1&1)<<4
		}
	}
}

// dequantizeRowQ5K expands len(dst) elements of Q5_K as ggml's
// dequantize_row_q5_K: y = (d·sc)·q − dmin·m, each product rounded.
func dequantizeRowQ5K(dst []float32, src []byte) {
	nb := len(dst) / qkK
	_ = src[nb*q5KBytes-1]
	var a [qkK]uint8
	for i := 0; i < nb; i++ {
		b := src[i*q5KBytes : (i+1)*q5KBytes]
		d := F16ToF32(binary.LittleEndian.Uint16(b))
		dmin := F16ToF32(binary.LittleEndian.Uint16(b[2:]))
		sc, mn := q4KScaleMin(b[q5KScales : q5KScales+12])
		q5KValues(&a, b)
		y := dst[i*qkK : (i+1)*qkK]
		for s := 0; s < 8; s++ {
			ds, ms := float32(d*float32(sc[s])), float32(dmin*float32(mn[s]))
			for l := 32 * s; l < 32*s+32; l++ {
				y[l] = float32(ds*float32(a[l])) - ms
			}
		}
	}
}

// dotQ5KRef is the reference Q5_K × Q8_K dot product of n elements (a
// multiple of 256), with the float arithmetic of ggml's AVX2
// ggml_vec_dot_q5_K_q8_K (see the top of this file).
func dotQ5KRef(w, x []byte, n int) float32 {
	nb := n / qkK
	_ = w[nb*q5KBytes-1]
	_ = x[nb*q8KBytes-1]
	var (
		acc   [8]float32
		summs float32
		lane  [8]int32
		a     [qkK]uint8
		p     [qkK]int32
		sc16  [16]int32
	)
	for i := 0; i < nb; i++ {
		wb := w[i*q5KBytes : (i+1)*q5KBytes]
		xb := x[i*q8KBytes : (i+1)*q8KBytes]
		sc, mn := q4KScaleMin(wb[q5KScales : q5KScales+12])
		q5KValues(&a, wb)
		q8 := xb[q8KQs : q8KQs+qkK]
		for e := range p {
			p[e] = int32(a[e]) * int32(int8(q8[e]))
		}
		for s := range sc16 {
			sc16[s] = int32(sc[s/2])
		}
		kLanes8(&lane, &p, &sc16)
		var imin int32
		for s := 0; s < 8; s++ {
			b0 := binary.LittleEndian.Uint16(xb[q8KBsums+4*s:])
			b1 := binary.LittleEndian.Uint16(xb[q8KBsums+4*s+2:])
			imin += int32(mn[s]) * int32(int16(b0+b1))
		}
		xd := math.Float32frombits(binary.LittleEndian.Uint32(xb))
		d := float32(xd * F16ToF32(binary.LittleEndian.Uint16(wb)))
		dmin := -float32(xd * F16ToF32(binary.LittleEndian.Uint16(wb[2:])))
		summs = kFMA32(float32(imin), dmin, summs)
		kFMALanes(&acc, d, &lane)
	}
	return float32(hsum8(&acc) + summs)
}

// quantizeRowQ5K converts len(src) floats (a multiple of 256) into Q5_K
// blocks as ggml's quantize_row_q5_K_ref: Q4_K's procedure
// (quantizeKScaleMin) with 5-bit quants (makeQKX2Quants with nmax 31,
// rmin −0.5, nstep 15).
func quantizeRowQ5K(dst []byte, src []float32) {
	nb := len(src) / qkK
	_ = dst[nb*q5KBytes-1]
	var l [qkK]uint8
	for i := 0; i < nb; i++ {
		b := dst[i*q5KBytes : (i+1)*q5KBytes]
		quantizeKScaleMin(b, b[q5KScales:q5KScales+12], src[i*qkK:(i+1)*qkK], &l, 31, -0.5, 15)
		qh := b[q5KQh : q5KQh+32]
		clear(qh)
		for j := 0; j < 4; j++ {
			qs := b[q5KQs+32*j : q5KQs+32*j+32]
			for k := 0; k < 32; k++ {
				l1, l2 := l[64*j+k], l[64*j+32+k]
				if l1 > 15 {
					l1 -= 16
					qh[k] |= 1 << (2 * j)
				}
				if l2 > 15 {
					l2 -= 16
					qh[k] |= 2 << (2 * j)
				}
				qs[k] = l1 | l2<<4
			}
		}
	}
}
