//go:build amd64 && !noasm

package tensor

import "unsafe"

// dotF32AVX2 returns the F32 dot of the first n elements (n a multiple of
// 32) with the structure of dotF32Generic's main loop and reduction:
//
//	var acc [32]float32
//	for i := 0; i < n; i += 32 {
//		for k := range 32 { acc[k] = fma(w[i+k], x[i+k], acc[k]) }
//	}
//	return reduce32(&acc)
//
//go:noescape
func dotF32AVX2(w, x *byte, n int) float32

// dotF16AVX2 is dotF32AVX2 over halves widened with VCVTPH2PS.
//
//go:noescape
func dotF16AVX2(w, x *byte, n int) float32

// dotBF16AVX2 returns the BF16 dot of the first n elements (n a multiple of
// 32) with dotBF16Generic's main loop and reduction:
//
//	for i := 0; i < n; i += 32 {
//		for k := range 32 { acc[k] = float32(w[i+k]*x[i+k]) + acc[k] }
//	}
//	return (acc_0+acc_2 + acc_1+acc_3) reduced as ggml_vec_dot_bf16
//
//go:noescape
func dotBF16AVX2(w, x *byte, n int) float32

// dotQ8_0AVX2 returns the dot of nb Q8_0 blocks with nb Q8_0 blocks:
//
//	for each block i:
//		d := f16(w[i].d) * f16(x[i].d)
//		for l := range 8 { acc[l] = fma(d, float32(Σ_{k<4} w[i].qs[4l+k]*x[i].qs[4l+k]), acc[l]) }
//	return hsum8(&acc)
//
//go:noescape
func dotQ8_0AVX2(w, x *byte, nb int) float32

// dotQ4_0AVX2 is dotQ8_0AVX2 for Q4_0 weights: lanes 0-3 take the low
// nibbles (elements 0-15), lanes 4-7 the high nibbles (elements 16-31),
// each minus 8.
//
//go:noescape
func dotQ4_0AVX2(w, x *byte, nb int) float32

// f16ToF32sAVX2 converts the first n&^7 halves of src into dst:
//
//	for i := range n &^ 7 { dst[i] = F16ToF32(src[i]) }
//
//go:noescape
func f16ToF32sAVX2(dst *float32, src *uint16, n int)

func init() {
	if !hasAVX2FMA {
		return
	}
	dotF32 = dotF32Fast
	dotF16 = dotF16Fast
	dotBF16 = dotBF16Fast
	dotQ8_0 = dotQ8_0Fast
	dotQ4_0 = dotQ4_0Fast
	f16ToF32sImpl = f16ToF32sFast
	registerKernel(F32, F32, dotF32)
	registerKernel(F16, F16, dotF16)
	registerKernel(BF16, BF16, dotBF16)
	registerKernel(Q8_0, Q8_0, dotQ8_0)
	registerKernel(Q4_0, Q8_0, dotQ4_0)
}

// ptr returns a pointer to b's first byte, valid for a zero-length access
// when b is empty.
func ptr(b []byte) *byte { return unsafe.SliceData(b) }

func dotF32Fast(w, x []byte, n int) float32 {
	w, x = w[:4*n], x[:4*n]
	np := n &^ 31
	sum := dotF32AVX2(ptr(w), ptr(x), np)
	for i := np; i < n; i++ {
		sum = fma32(f32at(w, i), f32at(x, i), sum)
	}
	return sum
}

func dotF16Fast(w, x []byte, n int) float32 {
	w, x = w[:2*n], x[:2*n]
	np := n &^ 31
	sum := float64(dotF16AVX2(ptr(w), ptr(x), np))
	for i := np; i < n; i++ {
		sum += float64(float32(F16ToF32(le16(w[2*i:])) * F16ToF32(le16(x[2*i:]))))
	}
	return float32(sum)
}

func dotBF16Fast(w, x []byte, n int) float32 {
	w, x = w[:2*n], x[:2*n]
	np := n &^ 31
	sum := float64(dotBF16AVX2(ptr(w), ptr(x), np))
	for i := np; i < n; i++ {
		sum += float64(float32(BF16ToF32(le16(w[2*i:])) * BF16ToF32(le16(x[2*i:]))))
	}
	return float32(sum)
}

func dotQ8_0Fast(w, x []byte, n int) float32 {
	nb := n / qk
	w, x = w[:nb*q8_0Size], x[:nb*q8_0Size]
	return dotQ8_0AVX2(ptr(w), ptr(x), nb)
}

func dotQ4_0Fast(w, x []byte, n int) float32 {
	nb := n / qk
	w, x = w[:nb*q4_0Size], x[:nb*q8_0Size]
	return dotQ4_0AVX2(ptr(w), ptr(x), nb)
}

func f16ToF32sFast(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	n8 := len(src) &^ 7
	if n8 > 0 {
		f16ToF32sAVX2(&dst[0], &src[0], n8)
	}
	f16ToF32sGeneric(dst[n8:], src[n8:])
}
