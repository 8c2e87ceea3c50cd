package tensor

// IQ4_XS: ggml's 4-bit non-linear i-quant (type 23), eight sub-blocks of 32
// whose 4-bit indices pick from the 16 values of kvalues_iq4nl, with 6-bit
// signed scales (offset 32):
//
//	block_iq4_xs (136 bytes): d f16 @0, scales_h u16 @2, scales_l [4]u8 @4, qs [128]u8 @8
//
// Sub-block s has scale ((scales_l[s/2] >> 4(s%2)) & 15 | (scales_h>>2s & 3)<<4) − 32;
// its element l < 16 is kvalues_iq4nl[qs[16s+l]&15] and element 16+l is
// kvalues_iq4nl[qs[16s+l]>>4]: y = d·sc·v. The dot takes Q8_K activations
// and follows ggml_vec_dot_iq4_xs_q8_K's AVX2 arithmetic: the products in
// ggml's eight lanes (kquants_lanes.go), formed as its mul_add_epi8 does,
// |v|·sign(q8, v) (which for q8 = −128 and v < 0 gives −128·|v|, not
// 128·|v|: only arbitrary bytes have −128, ggml's Q8_K quantizer never
// writes it), then acc[L] = fma(f16(w.d)·x.d, float32(lane[L]), acc[L])
// per block and hsum8(acc). llama.cpp runs this for batches of fewer than 8
// tokens; from 8 its IQ panel gemm (iqp.cpp) fuses one total per block
// into one accumulator, which agrees only to rounding: specd keeps the
// one-token arithmetic for every batch.

import (
	"encoding/binary"
	"math"
)

const (
	iq4XSBytes = 136
	iq4XSQs    = 8
)

// kvaluesIQ4NL is ggml's kvalues_iq4nl: the sixteen IQ4_NL/IQ4_XS levels.
var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// registerIQ4_XS registers IQ4_XS weights.
func registerIQ4_XS() {
	registerKernel(IQ4_XS, Q8_K, dotIQ4XS)
	registerDequant(IQ4_XS, dequantizeRowIQ4XS)
	registerQuantize(IQ4_XS, quantizeRowIQ4XS)
}

// iq4XSScale returns sub-block s's scale, less 32.
func iq4XSScale(b []byte, s int) int32 {
	sh := binary.LittleEndian.Uint16(b[2:])
	lo := b[4+s/2] >> (4 * (s % 2)) & 0xf
	return int32(lo|uint8(sh>>(2*s)&3)<<4) - 32
}

// iq4XSValues unpacks the 256 values of an IQ4_XS block.
func iq4XSValues(a *[qkK]int8, b []byte) {
	_ = b[iq4XSBytes-1]
	for s := 0; s < 8; s++ {
		qs := b[iq4XSQs+16*s : iq4XSQs+16*s+16]
		y := a[32*s : 32*s+32]
		for l, v := range qs {
			y[l] = kvaluesIQ4NL[v&0xf]
			y[16+l] = kvaluesIQ4NL[v>>4]
		}
	}
}

// dequantizeRowIQ4XS expands len(dst) elements of IQ4_XS as ggml's
// dequantize_row_iq4_xs: y = (d·sc)·v, the product rounded.
func dequantizeRowIQ4XS(dst []float32, src []byte) {
	nb := len(dst) / qkK
	_ = src[nb*iq4XSBytes-1]
	var a [qkK]int8
	for i := 0; i < nb; i++ {
		b := src[i*iq4XSBytes : (i+1)*iq4XSBytes]
		d := F16ToF32(binary.LittleEndian.Uint16(b))
		iq4XSValues(&a, b)
		y := dst[i*qkK : (i+1)*qkK]
		for s := 0; s < 8; s++ {
			dl := float32(d * float32(iq4XSScale(b, s)))
			for l := 32 * s; l < 32*s+32; l++ {
				y[l] = dl * float32(a[l])
			}
		}
	}
}

// dotIQ4XSRef is the reference IQ4_XS × Q8_K dot product of n elements (a
// multiple of 256), with the float arithmetic of ggml's AVX2
// ggml_vec_dot_iq4_xs_q8_K (see the top of this file).
func dotIQ4XSRef(w, x []byte, n int) float32 {
	nb := n / qkK
	_ = w[nb*iq4XSBytes-1]
	_ = x[nb*q8KBytes-1]
	var (
		acc  [8]float32
		lane [8]int32
		a    [qkK]int8
		p    [qkK]int32
		sc16 [16]int32
	)
	for i := 0; i < nb; i++ {
		wb := w[i*iq4XSBytes : (i+1)*iq4XSBytes]
		xb := x[i*q8KBytes : (i+1)*q8KBytes]
		iq4XSValues(&a, wb)
		q8 := xb[q8KQs : q8KQs+qkK]
		for e, v := range a {
			s := int8(q8[e])
			if v < 0 {
				s = -s // wraps for −128, as VPSIGNB
				v = -v
			}
			p[e] = int32(v) * int32(s)
		}
		for s := 0; s < 8; s++ {
			sc16[2*s] = iq4XSScale(wb, s)
			sc16[2*s+1] = sc16[2*s]
		}
		kLanes8(&lane, &p, &sc16)
		xd := math.Float32frombits(binary.LittleEndian.Uint32(xb))
		kFMALanes(&acc, float32(F16ToF32(binary.LittleEndian.Uint16(wb))*xd), &lane)
	}
	return hsum8(&acc)
}

// bestIndexInt8 is ggml's best_index_int8: the index of the value of val
// (ascending) nearest to x, the upper one on ties.
func bestIndexInt8(val *[16]int8, x float32) int {
	if x <= float32(val[0]) {
		return 0
	}
	if x >= float32(val[15]) {
		return 15
	}
	ml, mu := 0, 15
	for mu-ml > 1 {
		mav := (ml + mu) / 2
		if x < float32(val[mav]) {
			mu = mav
		} else {
			ml = mav
		}
	}
	if float32(x-float32(val[mu-1])) < float32(float32(val[mu])-x) {
		return mu - 1
	}
	return mu
}

// quantizeRowIQ4XS converts len(src) floats (a multiple of 256) into IQ4_XS
// blocks as ggml's quantize_row_iq4_xs_ref (quantize_row_iq4_nl_impl with
// no importance weights and ntry 7): per sub-block of 32, weights x², a
// scale from the largest magnitude refined over 15 trial scales by
// weighted least squares; the scales quantized to 6 bits against the
// largest magnitude (d = max/−32 as F16) and the values requantized with
// the quantized scales (in float32, not their F16 rounding: as ggml).
func quantizeRowIQ4XS(dst []byte, src []float32) {
	nb := len(src) / qkK
	_ = dst[nb*iq4XSBytes-1]
	vals := &kvaluesIQ4NL
	var (
		l      [qkK]uint8
		weight [32]float32
		scales [8]float32
	)
	for i := 0; i < nb; i++ {
		x := src[i*qkK : (i+1)*qkK]
		b := dst[i*iq4XSBytes : (i+1)*iq4XSBytes]
		var maxScale, amaxScale float32
		for ib := 0; ib < 8; ib++ {
			xb := x[32*ib : 32*ib+32]
			lb := l[32*ib : 32*ib+32]
			var amax, vmax float32
			for j, v := range xb {
				weight[j] = float32(v * v)
				if ax := abs32(v); ax > amax {
					amax, vmax = ax, v
				}
			}
			if amax < groupMaxEps {
				scales[ib] = 0
				continue
			}
			d := -vmax / float32(vals[0])
			id := 1 / d
			var sumQX, sumQ2 float32
			for j, v := range xb {
				k := bestIndexInt8(vals, float32(id*v))
				lb[j] = uint8(k)
				q := float32(vals[k])
				w := weight[j]
				sumQX += float32(float32(w*q) * v)
				sumQ2 += float32(float32(w*q) * q)
			}
			d = 0
			if sumQ2 > 0 {
				d = sumQX / sumQ2
			}
			best := float32(d * sumQX)
			for itry := -7; itry <= 7; itry++ {
				id = float32(itry+int(vals[0])) / vmax
				sumQX, sumQ2 = 0, 0
				for j, v := range xb {
					q := float32(vals[bestIndexInt8(vals, float32(id*v))])
					w := weight[j]
					sumQX += float32(float32(w*q) * v)
					sumQ2 += float32(float32(w*q) * q)
				}
				if sumQ2 > 0 && float32(sumQX*sumQX) > float32(best*sumQ2) {
					d = sumQX / sumQ2
					best = float32(d * sumQX)
				}
			}
			scales[ib] = d
			if ad := abs32(d); ad > amaxScale {
				amaxScale, maxScale = ad, d
			}
		}
		d := -maxScale / 32
		binary.LittleEndian.PutUint16(b, F32ToF16(d))
		id := inv(d)
		var sh uint16
		sl := b[4:8]
		for ib := 0; ib < 8; ib++ {
			q := max(-32, min(31, nearestInt(float32(id*scales[ib]))))
			dl := float32(d * float32(q))
			var idl float32
			if dl != 0 {
				idl = 1 / dl
			}
			xb := x[32*ib : 32*ib+32]
			for j, v := range xb {
				l[32*ib+j] = uint8(bestIndexInt8(vals, float32(idl*v)))
			}
			q += 32
			if ib%2 == 0 {
				sl[ib/2] = uint8(q) & 0xf
			} else {
				sl[ib/2] |= (uint8(q) & 0xf) << 4
			}
			sh |= uint16(q>>4) << (2 * ib)
		}
		binary.LittleEndian.PutUint16(b[2:], sh)
		qs := b[iq4XSQs : iq4XSQs+128]
		for s := 0; s < 8; s++ {
			for j := 0; j < 16; j++ {
				qs[16*s+j] = l[32*s+j] | l[32*s+16+j]<<4
			}
		}
	}
}
