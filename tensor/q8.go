package tensor

import (
	"encoding/binary"
	"math"
)

// Kernels for the 32-element block types Q8_0 and Q4_0. Both dot against
// Q8_0 activations. Block layouts (ggml-common.h):
//
//	block_q8_0 { d f16; qs [32]int8 }           34 bytes, x[j] = d*qs[j]
//	block_q4_0 { d f16; qs [16]uint8 }          18 bytes, x[j] = d*((qs[j]&15)-8),
//	                                                      x[j+16] = d*((qs[j]>>4)-8)
//
// The reference dots follow what llama.cpp computes. Both sum each block's
// 32 products exactly as integers and FMA d_w·d_x times that sum into a
// float32; they differ in how those terms are added up (Q8_0Order):
//
//   - Q4_0 and Q8_0 in the rows order (the default): one float32
//     accumulator per row, block after block, as llama.cpp's x86 build does
//     for Q4_0 (its weights are repacked for ggml_gemv_q4_0_8x8_q8_0).
//   - Q8_0 in the lanes order: llama.cpp's x86 Q8_0 arithmetic
//     (ggml_vec_dot_q8_0_q8_0 and llamafile's tinyBLAS_Q0_AVX), per block
//     8 int32 lanes of 4 products, each converted and FMA'd into its own
//     float32 lane, reduced by hsum_float_8.

// Q8_0Order is the summation order of Q8_0 dot products. The two orders
// differ by a few units in the last place of each dot product.
type Q8_0Order int

const (
	// Q8_0Rows keeps one float32 accumulator per weight row, so kernels
	// vectorise across rows and several tokens cost little more than one:
	// a five-token pass about 1.4× a one-token pass, against 1.7× in the
	// lanes order, on the 58M benchmark model at two threads.
	Q8_0Rows Q8_0Order = iota
	// Q8_0Lanes is llama.cpp's x86 order: logits bit-identical to
	// llama.cpp's CPU backend, and so the same greedy ids on every model
	// (in the rows order a near-tie, after rounding of re-quantized
	// activations has amplified the difference, can part them).
	Q8_0Lanes
)

var q8Order = Q8_0Rows

// SetQ8_0Order selects the order of Q8_0 dot products for the MatMuls and
// VecDots that follow. It must not run concurrently with either.
func SetQ8_0Order(o Q8_0Order) {
	q8Order = o
	registerQ0Kernels()
}

const (
	qk       = 32
	q8_0Size = 34
	q4_0Size = 18
)

// registerQ0 registers Q8_0 and Q4_0: the kernels of q8Order and the form
// in use (registerQ0Kernels), Q8_0 activations, dequantizers and
// quantizers.
func registerQ0() {
	registerQ0Kernels()
	registerAct(Q8_0, quantizeQ8_0Act)
	registerDequant(Q8_0, dequantizeQ8_0)
	registerDequant(Q4_0, dequantizeQ4_0)
	registerQuantize(Q8_0, quantizeQ8_0Ref)
	registerQuantize(Q4_0, quantizeQ4_0Ref)
}

// The kernels in use; assembly versions replace them at init where the CPU
// supports them.
var (
	dotQ8_0         VecDot   = dotQ8_0Generic
	dotQ8_0Lanes    VecDot   = dotQ8_0LanesGeneric
	dotQ4_0         VecDot   = dotQ4_0Generic
	quantizeQ8_0Act ActQuant = quantizeQ8_0ActGeneric
)

// hsum8 adds 8 lanes as ggml's hsum_float_8: (a[l]+a[l+4]) pairwise, then
// lanes 0+2 and 1+3, then those two.
func hsum8(a *[8]float32) float32 {
	r0 := float32(a[4] + a[0])
	r1 := float32(a[5] + a[1])
	r2 := float32(a[6] + a[2])
	r3 := float32(a[7] + a[3])
	return float32(float32(r0+r2) + float32(r1+r3))
}

// dotQ8_0Generic accumulates blocks one after another into one float32,
// as dotQ4_0Generic does:
//
//	acc = fma(float32(Σ w·x), f16(w.d)·f16(x.d), acc)
func dotQ8_0Generic(w, x []byte, n int) float32 {
	nb := n / qk
	w = w[:nb*q8_0Size]
	x = x[:nb*q8_0Size]
	t := f16Table
	var acc float32
	for i := range nb {
		wb := (*[q8_0Size]byte)(w[i*q8_0Size:])
		xb := (*[q8_0Size]byte)(x[i*q8_0Size:])
		d := float32(t[le16(wb[:])] * t[le16(xb[:])])
		var s int32
		for k := 2; k < q8_0Size; k++ {
			s += int32(int8(wb[k])) * int32(int8(xb[k]))
		}
		acc = fma32(float32(s), d, acc)
	}
	return acc
}

// dotQ8_0LanesGeneric is dotQ8_0Generic in the lanes order (Q8_0Lanes).
func dotQ8_0LanesGeneric(w, x []byte, n int) float32 {
	nb := n / qk
	w = w[:nb*q8_0Size]
	x = x[:nb*q8_0Size]
	t := f16Table
	var acc [8]float32
	for i := range nb {
		wb := (*[q8_0Size]byte)(w[i*q8_0Size:])
		xb := (*[q8_0Size]byte)(x[i*q8_0Size:])
		d := float32(t[le16(wb[:])] * t[le16(xb[:])])
		for l := range 8 {
			k := 2 + 4*l
			s := int32(int8(wb[k]))*int32(int8(xb[k])) + int32(int8(wb[k+1]))*int32(int8(xb[k+1])) +
				int32(int8(wb[k+2]))*int32(int8(xb[k+2])) + int32(int8(wb[k+3]))*int32(int8(xb[k+3]))
			acc[l] = fma32(d, float32(s), acc[l])
		}
	}
	return hsum8(&acc)
}

// dotQ4_0Generic accumulates blocks one after another, as llama.cpp's x86
// build does for Q4_0 (its weights are repacked for ggml_gemv_q4_0_8x8_q8_0,
// which keeps one float32 accumulator per row):
//
//	acc = fma(float32(Σ (q-8)·y), f16(w.d)·f16(x.d), acc)
func dotQ4_0Generic(w, x []byte, n int) float32 {
	nb := n / qk
	w = w[:nb*q4_0Size]
	x = x[:nb*q8_0Size]
	t := f16Table
	var acc float32
	for i := range nb {
		wb := (*[q4_0Size]byte)(w[i*q4_0Size:])
		xb := (*[q8_0Size]byte)(x[i*q8_0Size:])
		d := float32(t[le16(wb[:])] * t[le16(xb[:])])
		var s int32
		for k := range 16 {
			q := wb[2+k]
			s += (int32(q&15)-8)*int32(int8(xb[2+k])) + (int32(q>>4)-8)*int32(int8(xb[18+k]))
		}
		acc = fma32(float32(s), d, acc)
	}
	return acc
}

// quantizeQ8_0ActGeneric converts activations to Q8_0 as llama.cpp's x86
// quantize_row_q8_0 does (the path its AVX2 build uses for activations):
// d = amax/127 stored as F16, q = round-half-even(x × (127/amax)), saturated
// to int8 (NaN becomes -128, as the SIMD pack does).
func quantizeQ8_0ActGeneric(dst []byte, src []float32) {
	nb := len(src) / qk
	dst = dst[:nb*q8_0Size]
	for i := range nb {
		xs := src[i*qk : (i+1)*qk]
		b := dst[i*q8_0Size : (i+1)*q8_0Size]
		amax := maxAbs(xs)
		binary.LittleEndian.PutUint16(b, F32ToF16(amax/127))
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		for j, v := range xs {
			b[2+j] = byte(satInt8(math.RoundToEven(float64(float32(v * id)))))
		}
	}
}

// satInt8 converts a rounded value to int8 the way cvtps2dq followed by
// signed-saturating packs does.
func satInt8(r float64) int8 {
	switch {
	case r != r || r >= 1<<31 || r < -(1<<31):
		return -128 // integer indefinite 0x80000000, saturated
	case r > 127:
		return 127
	case r < -128:
		return -128
	}
	return int8(r)
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

// inv returns 1/d, or 0 where d is 0 (ggml's d ? 1.0f/d : 0.0f).
func inv(d float32) float32 {
	if d == 0 {
		return 0
	}
	return 1 / d
}

// maxAbs returns the largest |v| of xs, 0 for none; NaNs are passed over.
func maxAbs(xs []float32) float32 {
	var amax float32
	for _, v := range xs {
		if a := abs32(v); a > amax {
			amax = a
		}
	}
	return amax
}

// maxMagnitude returns the element of xs of the largest magnitude with its
// sign (the first of equal magnitudes; 0 for none, NaNs passed over), the
// max of ggml's quantize_row_q4_0_ref and its kin.
func maxMagnitude(xs []float32) float32 {
	var amax, mx float32
	for _, v := range xs {
		if a := abs32(v); amax < a {
			amax, mx = a, v
		}
	}
	return mx
}

// quantizeQ8_0Ref is ggml's quantize_row_q8_0_ref (used to write weights):
// d = amax/127, q = roundf(x × (1/d)) rounding half away from zero.
func quantizeQ8_0Ref(dst []byte, src []float32) {
	nb := len(src) / qk
	dst = dst[:nb*q8_0Size]
	for i := range nb {
		xs := src[i*qk : (i+1)*qk]
		b := dst[i*q8_0Size : (i+1)*q8_0Size]
		var amax float32
		for _, v := range xs {
			amax = max(amax, abs32(v))
		}
		d := amax / 127
		id := inv(d)
		binary.LittleEndian.PutUint16(b, F32ToF16(d))
		for j, v := range xs {
			b[2+j] = byte(satInt8(math.Round(float64(float32(v * id)))))
		}
	}
}

// quantizeQ4_0Ref is ggml's quantize_row_q4_0_ref: d = max/-8 where max is
// the element of largest magnitude (sign kept), q = min(15, trunc(x/d + 8.5)).
func quantizeQ4_0Ref(dst []byte, src []float32) {
	nb := len(src) / qk
	dst = dst[:nb*q4_0Size]
	for i := range nb {
		xs := src[i*qk : (i+1)*qk]
		b := dst[i*q4_0Size : (i+1)*q4_0Size]
		d := maxMagnitude(xs) / -8
		id := inv(d)
		binary.LittleEndian.PutUint16(b, F32ToF16(d))
		for j := range qk / 2 {
			lo := q4nibble(float32(xs[j] * id))
			hi := q4nibble(float32(xs[j+16] * id))
			b[2+j] = lo | hi<<4
		}
	}
}

// q4nibble is MIN(15, (int8_t)(x + 8.5f)) for the x a Q4_0 block produces
// (|x| ≤ 8); out-of-range or NaN inputs, which only a NaN block yields, clamp.
func q4nibble(x float32) uint8 {
	v := float32(x + 8.5)
	switch {
	case !(v >= 0): // NaN or negative
		return 0
	case v >= 15:
		return 15
	}
	return uint8(v)
}

func dequantizeQ8_0(dst []float32, src []byte) {
	nb := len(dst) / qk
	src = src[:nb*q8_0Size]
	for i := range nb {
		b := src[i*q8_0Size : (i+1)*q8_0Size]
		d := F16ToF32(le16(b))
		ys := dst[i*qk : (i+1)*qk]
		for j := range ys {
			ys[j] = float32(int8(b[2+j])) * d
		}
	}
}

func dequantizeQ4_0(dst []float32, src []byte) {
	nb := len(dst) / qk
	src = src[:nb*q4_0Size]
	for i := range nb {
		b := src[i*q4_0Size : (i+1)*q4_0Size]
		d := F16ToF32(le16(b))
		ys := dst[i*qk : (i+1)*qk]
		for j := range qk / 2 {
			ys[j] = float32(int32(b[2+j]&15)-8) * d
			ys[j+16] = float32(int32(b[2+j]>>4)-8) * d
		}
	}
}
