package tensor

import "unsafe"

// Vector kernels for attention over a KV cache held (or widened) in
// float32: the scores K·q, and the value accumulation and rescaling of an
// online softmax. Their arithmetic is ggml's (ggml_vec_dot_f16/_f32,
// ggml_vec_mad_f32/_f16, ggml_vec_scale_f16 on AVX2), so a model can match
// llama.cpp's attention bit for bit while running at SIMD speed.

// DotRowsF32 computes out[p] = k[p*d:(p+1)*d] · q for p < len(out), with
// d = len(q), in ggml_vec_dot_f16's order: FMA into four 8-lane
// accumulators over steps of 32, GGML_F32x8_REDUCE, then the d%32 tail
// added in float64. For keys and queries that are halves widened to float32
// this is exactly ggml_vec_dot_f16 (their products are exact, so fused and
// unfused agree). k must hold len(out)*d values.
func DotRowsF32(out, k, q []float32) {
	d := len(q)
	if len(out) == 0 {
		return
	}
	k = k[:len(out)*d]
	dotRowsF32Impl(out, k, q)
}

// AxpyF32 sets y[i] = fma(x[i], a, y[i]) for i < len(y) (ggml_vec_mad_f32).
// x must be at least as long as y.
func AxpyF32(y, x []float32, a float32) {
	x = x[:len(y)]
	axpyF32Impl(y, x, a)
}

// AxpyRoundF16 is ggml_vec_mad_f16 on an accumulator of halves kept widened
// in float32: y[i] = half(fma(x[i], a, y[i])) for the first len(y)&^31
// elements and half(y[i] + x[i]*a), unfused, after them,
// where half rounds to the nearest half-precision value (ties to even,
// overflow to ±Inf). x must be at least as long as y.
func AxpyRoundF16(y, x []float32, a float32) {
	x = x[:len(y)]
	axpyRoundF16Impl(y, x, a)
}

// ScaleRoundF16 is ggml_vec_scale_f16 on widened halves: y[i] = half(y[i]*s).
func ScaleRoundF16(y []float32, s float32) { scaleRoundF16Impl(y, s) }

// The implementations in use; assembly versions replace them at init where
// the CPU supports them.
var (
	dotRowsF32Impl    = dotRowsF32Generic
	axpyF32Impl       = axpyF32Generic
	axpyRoundF16Impl  = axpyRoundF16Generic
	scaleRoundF16Impl = scaleRoundF16Generic
)

func f32sBytes(v []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))
}

func dotRowsF32Generic(out, k, q []float32) {
	d := len(q)
	np := d &^ 31
	for p := range out {
		kp := k[p*d : (p+1)*d]
		var acc [32]float32
		for i := 0; i < np; i += 32 {
			for l := range 32 {
				acc[l] = fma32(kp[i+l], q[i+l], acc[l])
			}
		}
		out[p] = tailF64(reduce32(&acc), kp, q, np)
	}
}

// tailF64 adds the products of elements [from, len(q)) to sum in float64.
func tailF64(sum float32, k, q []float32, from int) float32 {
	if from == len(q) {
		return sum
	}
	s := float64(sum)
	for i := from; i < len(q); i++ {
		s += float64(float32(k[i] * q[i]))
	}
	return float32(s)
}

func axpyF32Generic(y, x []float32, a float32) {
	for i := range y {
		y[i] = fma32(x[i], a, y[i])
	}
}

// roundHalf rounds x to the nearest half-precision value as float32.
func roundHalf(x float32) float32 {
	if x != x {
		return x
	}
	return F16ToF32(F32ToF16(x))
}

func axpyRoundF16Generic(y, x []float32, a float32) {
	np := len(y) &^ 31
	for i := range np {
		y[i] = roundHalf(fma32(x[i], a, y[i]))
	}
	for i := np; i < len(y); i++ {
		y[i] = roundHalf(y[i] + float32(x[i]*a))
	}
}

func scaleRoundF16Generic(y []float32, s float32) {
	for i, v := range y {
		y[i] = roundHalf(float32(v * s))
	}
}
