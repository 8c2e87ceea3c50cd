//go:build amd64 && !noasm

package tensor

// f16Act is the activation type of F16 weights: f16Wide where the AVX2
// kernels run (they FMA straight from the widened activations), F16
// otherwise. It is set before any init function runs, so every
// registration of F16's kernel agrees on it.
var f16Act = func() Type {
	if hasAVX2FMA {
		return f16Wide
	}
	return F16
}()

// bf16Act is the activation type of BF16 weights: bf16Wide where the AVX2
// kernels run, BF16 otherwise.
var bf16Act = func() Type {
	if hasAVX2FMA {
		return bf16Wide
	}
	return BF16
}()

// f16WidenAVX2 widens the first n&^7 floats of src into dst as
// quantizeF16WideGeneric does (VCVTPS2PH rounding to nearest even, then
// VCVTPH2PS):
//
//	for i := range n &^ 7 { dst[i] = F16ToF32(F32ToF16Hw(src[i])) }
//
//go:noescape
func f16WidenAVX2(dst *byte, src *float32, n int)

// bf16WidenAVX2 widens the first n&^7 floats of src into dst as
// quantizeBF16WideGeneric does:
//
//	for i := range n &^ 7 { dst[i] = BF16ToF32(F32ToBF16(src[i])) }
//
//go:noescape
func bf16WidenAVX2(dst *byte, src *float32, n int)

func init() {
	if !hasAVX2FMA {
		return
	}
	quantizeF16Wide = quantizeF16WideFast
	quantizeBF16Wide = quantizeBF16WideFast
	registerAct(f16Wide, quantizeF16Wide)
	registerAct(bf16Wide, quantizeBF16Wide)
}

func quantizeF16WideFast(dst []byte, src []float32) {
	n8 := len(src) &^ 7
	dst = dst[:4*len(src)]
	if n8 > 0 {
		f16WidenAVX2(&dst[0], &src[0], n8)
	}
	quantizeF16WideGeneric(dst[4*n8:], src[n8:])
}

func quantizeBF16WideFast(dst []byte, src []float32) {
	n8 := len(src) &^ 7
	dst = dst[:4*len(src)]
	if n8 > 0 {
		bf16WidenAVX2(&dst[0], &src[0], n8)
	}
	quantizeBF16WideGeneric(dst[4*n8:], src[n8:])
}
