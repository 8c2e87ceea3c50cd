//go:build arm64 && !noasm

package tensor

// The arm64 activation converters (act_arm64.s, written by gen_arm64.go);
// plain NEON, every CPU has them.

// quantizeQ8_0NEON converts nb blocks of 32 floats to Q8_0 exactly as
// quantizeQ8_0ActGeneric does, NaNs included:
//
//	amax := max |x| over the block, NaNs left out
//	d := F32ToF16(amax/127); id := 127/amax (0 if amax == 0)
//	q := satInt8(RoundToEven(x·id))   // NaN and |x·id| ≥ 2^31 give -128
//
//go:noescape
func quantizeQ8_0NEON(dst *byte, src *float32, nb int)

// f32ToF16sNEON converts the first n&^7 floats to halves as F32ToF16Hw
// does (FCVTN rounds to nearest even and keeps a NaN's top payload bits,
// quieted, as F16C does):
//
//	for i := range n &^ 7 { dst[i] = F32ToF16Hw(src[i]) }
//
//go:noescape
func f32ToF16sNEON(dst *uint16, src *float32, n int)

// f16ToF32sNEON converts the first n&^7 halves to floats:
//
//	for i := range n &^ 7 { dst[i] = F16ToF32(src[i]) }
//
//go:noescape
func f16ToF32sNEON(dst *float32, src *uint16, n int)

// installNEONActs points the activation converters and the F16/F32
// conversions at their NEON forms (called by installArchImpls).
func installNEONActs() {
	quantizeQ8_0Act = quantizeQ8_0ActFast
	quantizeQ8_1Act = quantizeQ8_1ActFast
	quantizeF16Act = quantizeF16Fast
	f32ToF16sImpl = f32ToF16sFast
	f16ToF32sImpl = f16ToF32sFast
}

// The kernels act_simd.go calls: NEON.

func quantizeQ8_0Kernel(dst *byte, src *float32, nb int) { quantizeQ8_0NEON(dst, src, nb) }
func f32ToF16sKernel(dst *uint16, src *float32, n int)   { f32ToF16sNEON(dst, src, n) }

func f16ToF32sFast(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	n8 := len(src) &^ 7
	if n8 > 0 {
		f16ToF32sNEON(&dst[0], &src[0], n8)
	}
	f16ToF32sGeneric(dst[n8:], src[n8:])
}
