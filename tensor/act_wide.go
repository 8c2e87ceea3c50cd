package tensor

import (
	"encoding/binary"
	"math"
)

// Widened F16 activations. llama.cpp converts the activations of F16
// weights to half precision, and its dot widens both operands back to
// float32 before every FMA. The widening of a half is exact, so storing the
// activations as the float32 values of their halves (f16Wide) gives the
// same products and sums bit for bit, and lets the multi-token kernels FMA
// straight from memory instead of converting each token's halves again for
// every weight row. f16Wide is internal: no GGUF file holds it.

// f16Wide is the activation type of F16 weights where the assembly kernels
// run: 4 bytes per element, each F16ToF32(F32ToF16Hw(x)). Its id is one
// ggml does not use.
const f16Wide Type = 60

func init() {
	types[f16Wide] = typeInfo{"F16 (widened to F32)", 1, 4, false}
	registerAct(f16Wide, quantizeF16Wide)
	registerDequant(f16Wide, dequantizeF32)
}

// quantizeF16Wide is the widening converter in use; an assembly version
// replaces it at init where the CPU supports one.
var quantizeF16Wide ActQuant = quantizeF16WideGeneric

// quantizeF16WideGeneric rounds each activation to half precision as
// llama.cpp does on x86 (F32ToF16Hw) and stores the half's exact float32
// value.
func quantizeF16WideGeneric(dst []byte, src []float32) {
	dst = dst[:4*len(src)]
	t := f16Table
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(t[F32ToF16Hw(v)]))
	}
}

// dotF16WideGeneric is dotF16Generic with the activations already widened
// (x holds n float32 values, each exactly a half): the same FMAs into four
// 8-lane accumulators, the same reduction and float64 tail, so the same
// bits as dotF16Generic on the halves.
func dotF16WideGeneric(w, x []byte, n int) float32 {
	w = w[:2*n]
	x = x[:4*n]
	t := f16Table
	var acc [32]float32
	np := n &^ 31
	for i := 0; i < np; i += 32 {
		wb := (*[64]byte)(w[2*i:])
		for k := range 32 {
			acc[k] = fma32(t[binary.LittleEndian.Uint16(wb[2*k:])], f32at(x, i+k), acc[k])
		}
	}
	return tailF16Wide(w, x, np, n, reduce32(&acc))
}

// tailF16Wide adds the elements from..to of an F16 weight row times widened
// activations to sum as ggml_vec_dot_f16's scalar tail does (in float64).
func tailF16Wide(w, x []byte, from, to int, sum float32) float32 {
	s := float64(sum)
	for i := from; i < to; i++ {
		s += float64(float32(F16ToF32(le16(w[2*i:])) * f32at(x, i)))
	}
	return float32(s)
}
