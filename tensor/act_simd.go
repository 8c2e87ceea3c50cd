//go:build (amd64 || arm64) && !noasm

package tensor

import "unsafe"

// The activation converters both assembly architectures share, over their
// kernels quantizeQ8_0Kernel and f32ToF16sKernel (act_amd64.go,
// act_arm64.go).

func quantizeQ8_0ActFast(dst []byte, src []float32) {
	quantizeQ8_0Head(dst, src, q8_0Size)
}

// quantizeQ8_0Head sizes dst to src's nb whole 32-float blocks of size
// bytes each and writes their Q8_0 blocks at its start (the layouts built
// from Q8_0 then rewrite them in place); it returns the sized dst and nb,
// and writes nothing where nb is 0.
func quantizeQ8_0Head(dst []byte, src []float32, size int) ([]byte, int) {
	nb := len(src) / qk
	if nb == 0 {
		return dst, 0
	}
	dst = dst[:nb*size]
	quantizeQ8_0Kernel(&dst[0], &src[0], nb)
	return dst, nb
}

// quantizeF16Fast is f32ToF16sFast writing into dst viewed as halves.
func quantizeF16Fast(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	f32ToF16sFast(unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(dst))), len(src)), src)
}

func f32ToF16sFast(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	n8 := len(src) &^ 7
	if n8 > 0 {
		f32ToF16sKernel(&dst[0], &src[0], n8)
	}
	f32ToF16sGeneric(dst[n8:], src[n8:])
}
