package tensor

import (
	"encoding/binary"
	"math"
)

// Kernels for the float weight types F32, F16 and BF16. The reference dots
// reproduce the summation structure of ggml's AVX2 build (ggml_vec_dot_f32,
// _f16 and _bf16): four 8-lane accumulators over steps of 32 elements, a
// fixed reduction tree, and a scalar tail. The assembly versions keep the
// same structure, so both agree bit for bit except where rounding a float64
// FMA to float32 differs from a fused float32 FMA (vanishingly rare).

// registerFloats registers F32, F16 and BF16 weights and activations.
func registerFloats() {
	registerKernel(F32, F32, dotF32)
	registerKernel(F16, F16, dotF16)
	registerKernel(BF16, bf16Act, dotBF16)
	registerAct(F32, quantizeF32)
	registerAct(F16, quantizeF16Act)
	registerAct(BF16, quantizeBF16)
	registerDequant(F32, dequantizeF32)
	registerDequant(F16, dequantizeF16)
	registerDequant(BF16, dequantizeBF16)
	registerQuantize(F32, quantizeF32)
	registerQuantize(F16, quantizeF16)
	registerQuantize(BF16, quantizeBF16)
}

// The dot kernels in use; assembly versions replace them at init where the
// CPU supports them. dotBF16 takes activations of type bf16Act.
var (
	dotF32  VecDot = dotF32Generic
	dotF16  VecDot = dotF16Generic
	dotBF16 VecDot = dotBF16Generic

	quantizeF16Act ActQuant = quantizeF16ActGeneric
)

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }

func f32at(b []byte, i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
}

// fma32 returns a*b+c rounded once to float64 and then to float32; a*b is
// exact in float64, so this equals a fused float32 FMA except in rare
// double-rounding cases.
func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}

// reduce32 folds four 8-lane accumulators (acc[8*j+l] is lane l of
// accumulator j) as GGML_F32x8_REDUCE does.
func reduce32(acc *[32]float32) float32 {
	var v [8]float32
	for l := range 8 {
		a := float32(acc[l] + acc[16+l])
		b := float32(acc[8+l] + acc[24+l])
		v[l] = float32(a + b)
	}
	t0 := float32(v[0] + v[4])
	t1 := float32(v[1] + v[5])
	t2 := float32(v[2] + v[6])
	t3 := float32(v[3] + v[7])
	return float32(float32(t0+t1) + float32(t2+t3))
}

// dotF32Generic is ggml_vec_dot_f32 (AVX2): FMA into four 8-lane
// accumulators, reduce, then a scalar FMA tail for n%32 elements.
func dotF32Generic(w, x []byte, n int) float32 {
	w = w[:4*n]
	x = x[:4*n]
	var acc [32]float32
	np := n &^ 31
	for i := 0; i < np; i += 32 {
		for k := range 32 {
			acc[k] = fma32(f32at(w, i+k), f32at(x, i+k), acc[k])
		}
	}
	sum := reduce32(&acc)
	for i := np; i < n; i++ {
		sum = fma32(f32at(w, i), f32at(x, i), sum)
	}
	return sum
}

// dotF16Generic is ggml_vec_dot_f16 (AVX2, F16C): halves widened to float32,
// FMA into four 8-lane accumulators, reduce, and a float64 tail.
func dotF16Generic(w, x []byte, n int) float32 {
	w = w[:2*n]
	x = x[:2*n]
	t := f16Table // exact conversions, one load each instead of branches
	var acc [32]float32
	np := n &^ 31
	for i := 0; i < np; i += 32 {
		wb := (*[64]byte)(w[2*i:])
		xb := (*[64]byte)(x[2*i:])
		for k := range 32 {
			a := t[binary.LittleEndian.Uint16(wb[2*k:])]
			b := t[binary.LittleEndian.Uint16(xb[2*k:])]
			acc[k] = fma32(a, b, acc[k])
		}
	}
	sum := float64(reduce32(&acc))
	for i := np; i < n; i++ {
		sum += float64(float32(t[le16(w[2*i:])] * t[le16(x[2*i:])]))
	}
	return float32(sum)
}

// dotBF16Generic is ggml_vec_dot_bf16 (AVX2): unfused multiply-add into four
// 8-lane accumulators, reduced as (c1+c3)+(c2+c4), and a float64 tail.
func dotBF16Generic(w, x []byte, n int) float32 {
	w = w[:2*n]
	x = x[:2*n]
	var acc [32]float32
	np := n &^ 31
	for i := 0; i < np; i += 32 {
		for k := range 32 {
			a := BF16ToF32(le16(w[2*(i+k):]))
			b := BF16ToF32(le16(x[2*(i+k):]))
			acc[k] = float32(a*b) + acc[k]
		}
	}
	sum := float64(reduceBF16(&acc))
	for i := np; i < n; i++ {
		sum += float64(float32(BF16ToF32(le16(w[2*i:])) * BF16ToF32(le16(x[2*i:]))))
	}
	return float32(sum)
}

// reduceBF16 sums ggml_vec_dot_bf16's four 8-lane accumulators in its
// order: (c1+c3)+(c2+c4) lane by lane, then the 8 lanes pairwise.
func reduceBF16(acc *[32]float32) float32 {
	var v [8]float32
	for l := range 8 {
		v[l] = float32(acc[l]+acc[16+l]) + float32(acc[8+l]+acc[24+l])
	}
	g0 := float32(v[0] + v[4])
	g1 := float32(v[1] + v[5])
	g2 := float32(v[2] + v[6])
	g3 := float32(v[3] + v[7])
	return float32(g0+g2) + float32(g1+g3)
}

func quantizeF32(dst []byte, src []float32) {
	dst = dst[:4*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

func quantizeF16(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], F32ToF16(v))
	}
}

// quantizeF16ActGeneric converts activations to F16 as llama.cpp's CPU
// backend does on x86 (F16C): F32ToF16Hw.
func quantizeF16ActGeneric(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], F32ToF16Hw(v))
	}
}

func quantizeBF16(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], F32ToBF16(v))
	}
}

func dequantizeF32(dst []float32, src []byte) {
	src = src[:4*len(dst)]
	for i := range dst {
		dst[i] = f32at(src, i)
	}
}

func dequantizeF16(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	t := f16Table
	for i := range dst {
		dst[i] = t[le16(src[2*i:])]
	}
}

func dequantizeBF16(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = BF16ToF32(le16(src[2*i:]))
	}
}
