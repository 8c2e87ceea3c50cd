//go:build amd64 && !noasm

package tensor

// bf16Act is the activation type of BF16 weights: bf16Wide where the AVX2
// kernels run, BF16 otherwise.
var bf16Act = func() Type {
	if hasAVX2FMA {
		return bf16Wide
	}
	return BF16
}()

// bf16WidenAVX2 widens the first n&^7 floats of src into dst as
// quantizeBF16WideGeneric does:
//
//	for i := range n &^ 7 { dst[i] = BF16ToF32(F32ToBF16(src[i])) }
//
//go:noescape
func bf16WidenAVX2(dst *byte, src *float32, n int)

// installAVX2Widen points BF16's activation widening at its AVX2 form
// (called by installArchImpls where the AVX2 set is in use).
func installAVX2Widen() { quantizeBF16Wide = quantizeBF16WideFast }

func quantizeBF16WideFast(dst []byte, src []float32) {
	n8 := len(src) &^ 7
	dst = dst[:4*len(src)]
	if n8 > 0 {
		bf16WidenAVX2(&dst[0], &src[0], n8)
	}
	quantizeBF16WideGeneric(dst[4*n8:], src[n8:])
}
