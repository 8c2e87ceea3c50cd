//go:build (amd64 || arm64) && !noasm

package tensor

import (
	"encoding/binary"
	"unsafe"
)

// The activation converters both assembly architectures share, over their
// kernels quantizeQ8_0Kernel and f32ToF16sKernel (act_amd64.go,
// act_arm64.go).

// quantizeQ8_1ActFast is quantizeQ8_1ActGeneric with the quants and d from
// the assembly Q8_0 converter (the same bytes), laid out as Q8_1 in place.
func quantizeQ8_1ActFast(dst []byte, src []float32) {
	if dst, nb := quantizeQ8_0Head(dst, src, q8_1Size); nb > 0 {
		q8_1FromQ8_0(dst, src, nb)
	}
}

// q8_1FromQ8_0 rewrites nb Q8_0 blocks, which the caller has written at
// the start of dst from src's activations, into Q8_1 blocks in place: the
// blocks move up from the last one down (each lands at or above where it
// was), and s is computed from src's block maxima and the quants.
func q8_1FromQ8_0(dst []byte, src []float32, nb int) {
	dst = dst[:nb*q8_1Size]
	for i := nb - 1; i >= 0; i-- {
		b := dst[i*q8_1Size : (i+1)*q8_1Size]
		copy(b[4:], dst[i*q8_0Size+2:(i+1)*q8_0Size])
		b[0], b[1] = dst[i*q8_0Size], dst[i*q8_0Size+1]
		amax := maxAbs(src[i*qk : (i+1)*qk])
		var sum int32
		for _, q := range b[4:] {
			sum += int32(int8(q))
		}
		binary.LittleEndian.PutUint16(b[2:], F32ToF16(float32(float32(amax/127)*float32(sum))))
	}
}

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
