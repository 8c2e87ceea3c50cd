package tensor

import "encoding/binary"

// Widened BF16 activations. llama.cpp converts the activations of BF16
// weights to bfloat16, and its dot widens both operands back to float32
// before every multiply. The widening is exact, so storing the activations
// as the float32 values of their bfloat16s (bf16Wide) gives the same
// products and sums bit for bit, and lets the kernels multiply straight
// from memory instead of converting each token's activations again for
// every weight row. bf16Wide is internal: no GGUF file holds it.
//
// F16 keeps half-precision activations: widening them as well made no
// difference to the multi-token passes, which are bound by the FMA units
// and by loads, and made the single-token pass, bound by memory, slower
// (its activation row doubles).

// bf16Wide is the activation type of BF16 weights where the assembly
// kernels run: 4 bytes per element, each BF16ToF32(F32ToBF16(x)). Its id is
// one ggml does not use.
const bf16Wide Type = 62

// bf16WideInfo names bf16Wide, the widened activations of BF16 weights
// where the AVX2 kernels run (registerTypeInfos).
var bf16WideInfo = typeInfo{"BF16 (widened to F32)", 1, 4, false}

// registerBF16Wide registers bf16Wide's converter and dequantizer.
func registerBF16Wide() {
	registerAct(bf16Wide, quantizeBF16Wide)
	registerDequant(bf16Wide, dequantizeF32)
}

// quantizeBF16Wide is the widening converter in use; an assembly version
// replaces it at init where the CPU supports one.
var quantizeBF16Wide ActQuant = quantizeBF16WideGeneric

// quantizeBF16WideGeneric rounds each activation to bfloat16 as llama.cpp
// does (F32ToBF16) and stores its exact float32 value.
func quantizeBF16WideGeneric(dst []byte, src []float32) {
	dst = dst[:4*len(src)]
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], uint32(F32ToBF16(v))<<16)
	}
}

// dotBF16WideGeneric is dotBF16Generic with the activations already widened
// (x holds n float32 values, each exactly a bfloat16): the same unfused
// multiply-adds into four 8-lane accumulators, the same reduction and
// float64 tail, so the same bits as dotBF16Generic on the bfloat16s.
func dotBF16WideGeneric(w, x []byte, n int) float32 {
	w = w[:2*n]
	x = x[:4*n]
	var acc [32]float32
	np := n &^ 31
	for i := 0; i < np; i += 32 {
		for k := range 32 {
			acc[k] = float32(BF16ToF32(le16(w[2*(i+k):]))*f32at(x, i+k)) + acc[k]
		}
	}
	return tailBF16Wide(w, x, np, n, reduceBF16(&acc))
}

// tailBF16Wide adds the elements from..to of a BF16 weight row times
// widened activations to sum as ggml_vec_dot_bf16's scalar tail does (in
// float64).
func tailBF16Wide(w, x []byte, from, to int, sum float32) float32 {
	s := float64(sum)
	for i := from; i < to; i++ {
		s += float64(float32(BF16ToF32(le16(w[2*i:])) * f32at(x, i)))
	}
	return float32(s)
}
