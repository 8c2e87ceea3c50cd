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

// f16ToF32sAVX2 converts the first n&^7 halves of src into dst:
//
//	for i := range n &^ 7 { dst[i] = F16ToF32(src[i]) }
//
//go:noescape
func f16ToF32sAVX2(dst *float32, src *uint16, n int)

// dotQ8_0x4AVX2 computes out[r] = dotQ8_0AVX2(w, x+r*stride, nb) for r in
// [0, 4), decoding each weight block once.
//
//go:noescape
func dotQ8_0x4AVX2(w, x *byte, stride, nb int, out *[4]float32)

// dotQ4_0x8AVX2 computes, for the eight Q4_0 rows at w + r·wstride,
// out[r] = dotQ4_0Generic(row r, x) bit for bit:
//
//	for each block i: acc[r] = fma(float32(Σ (q-8)·y), f16(w_r[i].d)·f16(x[i].d), acc[r])
//
//go:noescape
func dotQ4_0x8AVX2(w *byte, wstride int, x *byte, nb int, out *[8]float32)

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
	registerKernel4(Q8_0, dotQ8_0x4Fast)
	registerKernel8(Q4_0, dotQ4_0x8Fast)
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

// dotQ4_0Fast runs the eight-row kernel on one row (stride 0): the same
// arithmetic, so single and grouped rows agree bit for bit.
func dotQ4_0Fast(w, x []byte, n int) float32 {
	var out [8]float32
	nb := n / qk
	w, x = w[:nb*q4_0Size], x[:nb*q8_0Size]
	dotQ4_0x8AVX2(ptr(w), 0, ptr(x), nb, &out)
	return out[0]
}

func f16ToF32sFast(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	n8 := len(src) &^ 7
	if n8 > 0 {
		f16ToF32sAVX2(&dst[0], &src[0], n8)
	}
	f16ToF32sGeneric(dst[n8:], src[n8:])
}

// x4Rows checks that x holds four activation rows of rb bytes at stride.
func x4Rows(x []byte, stride, rb int) []byte {
	if stride < rb {
		panic("tensor: activation stride shorter than a row")
	}
	return x[:3*stride+rb]
}

func dotQ8_0x4Fast(w, x []byte, stride, n int, out *[4]float32) {
	nb := n / qk
	w = w[:nb*q8_0Size]
	x = x4Rows(x, stride, nb*q8_0Size)
	dotQ8_0x4AVX2(ptr(w), ptr(x), stride, nb, out)
}

func dotQ4_0x8Fast(w []byte, stride int, x []byte, n int, out *[8]float32) {
	nb := n / qk
	rb := nb * q4_0Size
	if stride < rb {
		panic("tensor: weight stride shorter than a row")
	}
	w, x = w[:7*stride+rb], x[:nb*q8_0Size]
	dotQ4_0x8AVX2(ptr(w), stride, ptr(x), nb, out)
}
