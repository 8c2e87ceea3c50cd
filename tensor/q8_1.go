package tensor

import (
	"encoding/binary"
	"math"
)

// Q8_1 activations: what ggml's CPU backend converts inputs to for Q4_1 and
// Q5_1 weights (their vec_dot_type). Layout (ggml-common.h):
//
//	block_q8_1 { d f16; s f16; qs [32]int8 }   36 bytes, x[j] = d·qs[j]
//
// with s = f16(d·Σqs), d before its rounding to F16: the weights' offset
// m times s stands for m·Σx without a second pass over the quants.

const q8_1Size = 36

// quantizeQ8_1Act is the converter in use; installArchImpls replaces it by
// an assembly-backed one where the CPU supports it.
var quantizeQ8_1Act ActQuant = quantizeQ8_1ActGeneric

// registerQ8_1 registers the Q8_1 activation type.
func registerQ8_1() {
	registerAct(Q8_1, quantizeQ8_1Act)
	registerDequant(Q8_1, dequantizeQ8_1)
}

// quantizeQ8_1ActGeneric converts activations as llama.cpp's x86
// quantize_row_q8_1 does: the quants and d of quantizeQ8_0ActGeneric, and
// s = f16(float32(amax/127)·float32(Σqs)).
func quantizeQ8_1ActGeneric(dst []byte, src []float32) {
	nb := len(src) / qk
	dst = dst[:nb*q8_1Size]
	for i := range nb {
		xs := src[i*qk : (i+1)*qk]
		b := dst[i*q8_1Size : (i+1)*q8_1Size]
		amax := maxAbs(xs)
		d := amax / 127
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		var sum int32
		for j, v := range xs {
			q := satInt8(math.RoundToEven(float64(float32(v * id))))
			b[4+j] = byte(q)
			sum += int32(q)
		}
		binary.LittleEndian.PutUint16(b, F32ToF16(d))
		binary.LittleEndian.PutUint16(b[2:], F32ToF16(float32(d*float32(sum))))
	}
}

// dequantizeQ8_1 expands Q8_1 blocks: x = float32(q)·d.
func dequantizeQ8_1(dst []float32, src []byte) {
	nb := len(dst) / qk
	src = src[:nb*q8_1Size]
	for i := range nb {
		b := src[i*q8_1Size : (i+1)*q8_1Size]
		d := F16ToF32(le16(b))
		ys := dst[i*qk : (i+1)*qk]
		for j := range ys {
			ys[j] = float32(int8(b[4+j])) * d
		}
	}
}
