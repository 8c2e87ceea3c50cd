package tensor

import "encoding/binary"

// IQ4_NL weights: 4-bit indices into a fixed non-linear table of int8
// values, one scale per 32 elements, dotted against Q8_0 activations
// (ggml's vec_dot_type for IQ4_NL). Layout (ggml-common.h):
//
//	block_iq4_nl { d f16; qs [16]uint8 }   18 bytes
//	x[j] = d·kvalues[qs[j]&15],  x[j+16] = d·kvalues[qs[j]>>4]   (j < 16)
//
// llama.cpp's x86 CPU backend repacks IQ4_NL matrices whose row count is a
// multiple of 8 into eight-row blocks and multiplies them with
// ggml_gemv_iq4_nl_8x8_q8_0 (and the gemm for four tokens, whose per-row
// arithmetic is the same): one float32 accumulator per row,
//
//	acc = fma(float32(Σ kvalues[q]·y), f16(w.d)·f16(x.d), acc)
//
// block after block (Q4_0's rows order, q8.go). dotIQ4_NLGeneric computes
// exactly that. (For row counts that are not a multiple of 8 llama.cpp
// falls back to ggml_vec_dot_iq4_nl_q8_0, whose order differs; model
// matrices have such counts only in toy models.)

const iq4nlSize = 18

// iq4nlTable is ggml's kvalues_iq4nl.
var iq4nlTable = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// dotIQ4_NL and gemvIQ4_NL are the kernels on Q8_0 activations: AVX2
// where the CPU has it, else the reference and no multi-row form
// (qlanes.go registers them).
var dotIQ4_NL, gemvIQ4_NL = asmOr(IQ4_NL, dotIQ4_NLGeneric)

// registerIQ4_NL registers IQ4_NL's dequantizer and quantizer (its kernels:
// registerQ32).
func registerIQ4_NL() {
	registerDequant(IQ4_NL, dequantizeIQ4_NL)
	registerQuantize(IQ4_NL, quantizeIQ4_NL)
}

// dotIQ4_NLGeneric is the reference IQ4_NL × Q8_0 dot of n elements (a
// multiple of 32) in the rows order.
func dotIQ4_NLGeneric(w, x []byte, n int) float32 {
	nb := n / qk
	w = w[:nb*iq4nlSize]
	x = x[:nb*q8_0Size]
	t := f16Table
	var acc float32
	for i := range nb {
		wb := (*[iq4nlSize]byte)(w[i*iq4nlSize:])
		xb := (*[q8_0Size]byte)(x[i*q8_0Size:])
		d := float32(t[le16(wb[:])] * t[le16(xb[:])])
		var s int32
		for k := range 16 {
			q := wb[2+k]
			s += int32(iq4nlTable[q&15])*int32(int8(xb[2+k])) + int32(iq4nlTable[q>>4])*int32(int8(xb[18+k]))
		}
		acc = kFMA32(float32(s), d, acc)
	}
	return acc
}

// dequantizeIQ4_NL is ggml's dequantize_row_iq4_nl: x = d·float32(kvalue).
func dequantizeIQ4_NL(dst []float32, src []byte) {
	nb := len(dst) / qk
	src = src[:nb*iq4nlSize]
	for i := range nb {
		b := src[i*iq4nlSize : (i+1)*iq4nlSize]
		d := F16ToF32(le16(b))
		ys := dst[i*qk : (i+1)*qk]
		for j := range 16 {
			ys[j] = d * float32(iq4nlTable[b[2+j]&15])
			ys[j+16] = d * float32(iq4nlTable[b[2+j]>>4])
		}
	}
}

// quantizeIQ4_NL is ggml's quantize_iq4_nl without an importance matrix,
// what llama-quantize writes for IQ4_NL when given none (ggml's
// quantize_row_iq4_nl_impl with ntry = 7 and weights x²): per block, the
// scale from the element of largest magnitude, refined by a weighted least
// squares fit over 15 trial scales, then every element mapped to its
// nearest table value. All arithmetic is float32 in ggml's order, without
// fused multiply-add. A block below GROUP_MAX_EPS gets d = 0 and index 8.
func quantizeIQ4_NL(dst []byte, src []float32) {
	nb := len(src) / qk
	dst = dst[:nb*iq4nlSize]
	const ntry = 7
	values := &iq4nlTable
	for i := range nb {
		xs := src[i*qk : (i+1)*qk]
		b := dst[i*iq4nlSize : (i+1)*iq4nlSize]
		var (
			w         [qk]float32
			amax, max float32
		)
		for j, v := range xs {
			w[j] = float32(v * v)
			if a := abs32(v); a > amax {
				amax, max = a, v
			}
		}
		var scale float32
		if amax >= groupMaxEps {
			sums := func(id float32) (sumqx, sumq2 float32) {
				for j, v := range xs {
					q := float32(values[bestIndexIQ4NL(float32(id*v))])
					wq := float32(w[j] * q)
					sumqx = float32(sumqx + float32(wq*v))
					sumq2 = float32(sumq2 + float32(wq*q))
				}
				return sumqx, sumq2
			}
			d := -max / float32(values[0])
			sumqx, sumq2 := sums(1 / d)
			d = 0
			if sumq2 > 0 {
				d = sumqx / sumq2
			}
			best := float32(d * sumqx)
			for itry := -ntry; itry <= ntry; itry++ {
				sumqx, sumq2 := sums(float32(itry+int(values[0])) / max)
				if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
					d = sumqx / sumq2
					best = float32(d * sumqx)
				}
			}
			scale = d
		}
		binary.LittleEndian.PutUint16(b, F32ToF16(scale))
		id := inv(scale)
		for j := range 16 {
			lo := bestIndexIQ4NL(float32(id * xs[j]))
			hi := bestIndexIQ4NL(float32(id * xs[j+16]))
			b[2+j] = lo | hi<<4
		}
	}
}

// bestIndexIQ4NL is ggml's best_index_int8 over iq4nlTable: the index of
// the value nearest x, the upper one on a tie.
func bestIndexIQ4NL(x float32) uint8 { return uint8(bestIndexInt8(&iq4nlTable, x)) }
