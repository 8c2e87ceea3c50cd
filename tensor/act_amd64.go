//go:build amd64 && !noasm

package tensor

import "unsafe"

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

func init() {
	if !hasAVX2FMA {
		return
	}
	quantizeQ8_0Act = quantizeQ8_0ActFast
	quantizeF16Act = quantizeF16Fast
	f32ToF16sImpl = f32ToF16sFast
	registerAct(Q8_0, quantizeQ8_0Act)
	registerAct(F16, quantizeF16Act)
}

func quantizeQ8_0ActFast(dst []byte, src []float32) {
	nb := len(src) / qk
	if nb == 0 {
		return
	}
	dst = dst[:nb*q8_0Size]
	quantizeQ8_0AVX2(&dst[0], &src[0], nb)
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

// quantizeF16Fast is f32ToF16sFast writing into dst viewed as halves.
func quantizeF16Fast(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	f32ToF16sFast(unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(dst))), len(src)), src)
}

func f32ToF16sFast(dst []uint16, src []float32) {
	n8 := len(src) &^ 7
	if n8 > 0 {
		f32ToF16sAVX2(&dst[0], &src[0], n8)
	}
	f32ToF16sGeneric(dst[n8:], src[n8:])
}
