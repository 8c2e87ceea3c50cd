package tensor

// Q3_K: ggml's 3-bit K-quant, sixteen sub-blocks of 16 with 6-bit signed
// scales (offset 32), two low bits in qs and the third in hmask:
//
//	block_q3_K (110 bytes): hmask [32]u8 @0, qs [64]u8 @32, scales [12]u8 @96, d f16 @108
//
// Element e = 128j+32k+l (l < 32) is (qs[32j+l]>>2k & 3) − 4 + 4·(hmask[l]>>(4j+k) & 1)
// in [−4, 3], in sub-block e/16: y = d·(sc−32)·q. Scale s takes its low
// nibble from byte s (s < 8, low nibble) or s−8 (high nibble) and its top
// two bits from byte 8+s%4, bits 2·(s/4). The dot takes Q8_K activations
// and follows ggml_vec_dot_q3_K_q8_K's AVX2 arithmetic: the products in
// ggml's eight lanes (kquants_lanes.go), acc[L] = fma(x.d·f16(w.d),
// float32(lane[L]), acc[L]) per block, the result hsum8(acc).

import (
	"encoding/binary"
	"math"
)

const (
	q3KBytes  = 110
	q3KQs     = 32
	q3KScales = 96
	q3KD      = 108
)

// registerQ3_K registers Q3_K weights.
func registerQ3_K() {
	registerKernel(Q3_K, Q8_K, dotQ3K)
	registerDequant(Q3_K, dequantizeRowQ3K)
	registerQuantize(Q3_K, quantizeRowQ3K)
}

// q3KScales unpacks the sixteen scales of a Q3_K block, less 32, from its
// 12 scale bytes.
func q3KScaleVals(sc *[16]int32, s []byte) {
	_ = s[11]
	for j := 0; j < 16; j++ {
		lo := s[j&7] & 0xf
		if j >= 8 {
			lo = s[j-8] >> 4
		}
		sc[j] = int32(lo|(s[8+j%4]>>(2*(j/4))&3)<<4) - 32
	}
}

// q3KValues unpacks the 256 quants of a Q3_K block, in [−4, 3].
func q3KValues(a *[qkK]int8, b []byte) {
	_ = b[q3KBytes-1]
	hm := b[:32]
	for j := 0; j < 2; j++ {
		qs := b[q3KQs+32*j : q3KQs+32*j+32]
		for k := 0; k < 4; k++ {
			y := a[128*j+32*k : 128*j+32*k+32]
			sh, bit := uint(2*k), uint(4*j+k)
			for l, v := range qs {
				y[l] = int8(v>>sh&3) - 4 + int8(hm[l]>>bit&1)<<2
			}
		}
	}
}

// dequantizeRowQ3K expands len(dst) elements of Q3_K as ggml's
// dequantize_row_q3_K: y = (d·(sc−32))·q, the product rounded.
func dequantizeRowQ3K(dst []float32, src []byte) {
	nb := len(dst) / qkK
	_ = src[nb*q3KBytes-1]
	var (
		a  [qkK]int8
		sc [16]int32
	)
	for i := 0; i < nb; i++ {
		b := src[i*q3KBytes : (i+1)*q3KBytes]
		d := F16ToF32(binary.LittleEndian.Uint16(b[q3KD:]))
		q3KScaleVals(&sc, b[q3KScales:q3KScales+12])
		q3KValues(&a, b)
		y := dst[i*qkK : (i+1)*qkK]
		for s := 0; s < 16; s++ {
			dl := float32(d * float32(sc[s]))
			for l := 16 * s; l < 16*s+16; l++ {
				y[l] = dl * float32(a[l])
			}
		}
	}
}

// dotQ3KRef is the reference Q3_K × Q8_K dot product of n elements (a
// multiple of 256), with the float arithmetic of ggml's AVX2
// ggml_vec_dot_q3_K_q8_K (see the top of this file).
func dotQ3KRef(w, x []byte, n int) float32 {
	nb := n / qkK
	_ = w[nb*q3KBytes-1]
	_ = x[nb*q8KBytes-1]
	var (
		acc  [8]float32
		lane [8]int32
		a    [qkK]int8
		p    [qkK]int32
		sc   [16]int32
	)
	for i := 0; i < nb; i++ {
		wb := w[i*q3KBytes : (i+1)*q3KBytes]
		xb := x[i*q8KBytes : (i+1)*q8KBytes]
		q3KValues(&a, wb)
		q3KScaleVals(&sc, wb[q3KScales:q3KScales+12])
		q8 := xb[q8KQs : q8KQs+qkK]
		for e := range p {
			p[e] = int32(a[e]) * int32(int8(q8[e]))
		}
		kLanes8(&lane, &p, &sc)
		xd := math.Float32frombits(binary.LittleEndian.Uint32(xb))
		kFMALanes(&acc, float32(xd*F16ToF32(binary.LittleEndian.Uint16(wb[q3KD:]))), &lane)
	}
	return hsum8(&acc)
}

// makeQ3Quants is ggml's make_q3_quants with do_rmse for one group x:
// symmetric quants in [−nmax, nmax) from the scale −nmax/max, then up to
// five passes that move single quants where that raises Σx²·x·l over
// √Σx²·l², the least-squares fit. It writes L+nmax and returns the scale.
func makeQ3Quants(nmax int32, x []float32, l []int8) float32 {
	var vmax, amax float32
	for _, v := range x {
		if ax := abs32(v); ax > amax {
			amax, vmax = ax, v
		}
	}
	if amax < groupMaxEps {
		clear(l[:len(x)])
		return 0
	}
	iscale := -float32(nmax) / vmax
	var sumLX, sumL2 float32
	for i, v := range x {
		q := max(-nmax, min(nmax-1, nearestInt(float32(iscale*v))))
		l[i] = int8(q)
		w := float32(v * v)
		fl := float32(q)
		sumLX += float32(float32(w*v) * fl)
		sumL2 += float32(float32(w*fl) * fl)
	}
	for itry := 0; itry < 5; itry++ {
		changed := false
		for i, v := range x {
			w := float32(v * v)
			fl := float32(l[i])
			slx := sumLX - float32(float32(w*v)*fl)
			if slx > 0 {
				sl2 := sumL2 - float32(float32(w*fl)*fl)
				nl := max(-nmax, min(nmax-1, nearestInt(float32(v*sl2)/slx)))
				if nl != int32(l[i]) {
					fn := float32(nl)
					slx += float32(float32(w*v) * fn)
					sl2 += float32(float32(w*fn) * fn)
					if sl2 > 0 && float32(float32(slx*slx)*sumL2) > float32(float32(sumLX*sumLX)*sl2) {
						l[i] = int8(nl)
						sumLX, sumL2 = slx, sl2
						changed = true
					}
				}
			}
		}
		if !changed {
			break
		}
	}
	for i := range x {
		l[i] += int8(nmax)
	}
	if sumL2 > 0 {
		return sumLX / sumL2
	}
	return 0
}

// quantizeRowQ3K converts len(src) floats (a multiple of 256) into Q3_K
// blocks as ggml's quantize_row_q3_K_ref: a scale per sub-block of 16 from
// makeQ3Quants, the sixteen scales quantized to 6 bits against the largest
// magnitude (d = max/−32 as F16), and the values requantized with the
// stored scales.
func quantizeRowQ3K(dst []byte, src []float32) {
	nb := len(src) / qkK
	_ = dst[nb*q3KBytes-1]
	var (
		l      [qkK]int8
		scales [16]float32
		sv     [16]int32
	)
	for i := 0; i < nb; i++ {
		x := src[i*qkK : (i+1)*qkK]
		b := dst[i*q3KBytes : (i+1)*q3KBytes]
		var maxScale, amax float32
		for j := 0; j < 16; j++ {
			scales[j] = makeQ3Quants(4, x[16*j:16*j+16], l[16*j:16*j+16])
			if s := abs32(scales[j]); s > amax {
				amax, maxScale = s, scales[j]
			}
		}
		sc := b[q3KScales : q3KScales+12]
		clear(sc)
		var hd uint16
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := 0; j < 16; j++ {
				q := uint8(max(-32, min(31, int32(int8(nearestInt(float32(iscale*scales[j])))))) + 32)
				if j < 8 {
					sc[j] = q & 0xf
				} else {
					sc[j-8] |= (q & 0xf) << 4
				}
				sc[8+j%4] |= (q >> 4) << (2 * (j / 4))
			}
			hd = F32ToF16(1 / iscale)
		}
		binary.LittleEndian.PutUint16(b[q3KD:], hd)
		fd := F16ToF32(hd)
		q3KScaleVals(&sv, sc)
		for j := 0; j < 16; j++ {
			d := float32(fd * float32(sv[j]))
			if d == 0 {
				continue
			}
			for k := 0; k < 16; k++ {
				q := max(-4, min(3, nearestInt(x[16*j+k]/d)))
				l[16*j+k] = int8(q + 4)
			}
		}
		hm := b[:32]
		clear(hm)
		for j := 0; j < qkK; j++ {
			if l[j] > 3 {
				hm[j%32] |= 1 << (j / 32)
				l[j] -= 4
			}
		}
		for j := 0; j < 2; j++ {
			qs := b[q3KQs+32*j : q3KQs+32*j+32]
			L := l[128*j : 128*j+128]
			for k := range qs {
				qs[k] = uint8(L[k]) | uint8(L[32+k])<<2 | uint8(L[64+k])<<4 | uint8(L[96+k])<<6
			}
		}
	}
}
