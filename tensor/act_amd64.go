//go:build amd64 && !noasm

package tensor

// quantizeQ8_0AVX2 converts nb blocks of 32 floats to Q8_0 exactly as
// quantizeQ8_0ActGeneric does (non-NaN input).
//
//go:noescape
func quantizeQ8_0AVX2(dst *byte, src *float32, nb int)

// quantizeQ8VNNI converts nb blocks of 32 floats to q8VNNI blocks
// (dotq_amd64.go): for each, the Q8_0 block quantizeQ8_0AVX2 writes, laid
// out as q8VNNIFromQ8_0(..., shift) does. Needs AVX-512 VL and VNNI.
//
//go:noescape
func quantizeQ8VNNI(dst *byte, src *float32, nb int, shift int)

// f32ToF16sAVX2 converts the first n&^7 floats to halves as F32ToF16Hw.
//
//go:noescape
func f32ToF16sAVX2(dst *uint16, src *float32, n int)

// installAVX2Acts points the activation converters at their AVX2 forms
// (called by installArchImpls where the AVX2 set is in use).
func installAVX2Acts() {
	quantizeQ8_0Act = quantizeQ8_0ActFast
	quantizeF16Act = quantizeF16Fast
	f32ToF16sImpl = f32ToF16sFast
	quantizeQ8_1Act = quantizeQ8_1ActFast
}

// quantizeQ8VNNIAct and quantizeQ8VNNI128Act convert activations for
// Q4_0 and for Q8_0 weights (offsets -8·Σ and -128·Σ).
func quantizeQ8VNNIAct(dst []byte, src []float32)    { quantizeQ8VNNIShift(dst, src, 3) }
func quantizeQ8VNNI128Act(dst []byte, src []float32) { quantizeQ8VNNIShift(dst, src, 7) }

func quantizeQ8VNNIShift(dst []byte, src []float32, shift int) {
	nb := len(src) / qk
	if nb == 0 {
		return
	}
	dst = dst[:nb*q8VNNISize]
	quantizeQ8VNNI(&dst[0], &src[0], nb, shift)
}

// The kernels act_simd.go calls: AVX2.

func quantizeQ8_0Kernel(dst *byte, src *float32, nb int) { quantizeQ8_0AVX2(dst, src, nb) }
func f32ToF16sKernel(dst *uint16, src *float32, n int)   { f32ToF16sAVX2(dst, src, n) }
