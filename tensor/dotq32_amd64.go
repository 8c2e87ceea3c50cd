//go:build amd64 && !noasm

package tensor

// asmQ32 returns the AVX2 dot and gemv kernels for a 32-element block type
// (Q4_1, Q5_0, Q5_1, IQ4_NL), or nils where the CPU lacks AVX2.
func asmQ32(t Type) (VecDot, gemv) {
	return nil, nil
}

// asmQ8_1Act returns the Q8_1 activation converter built on the AVX2 Q8_0
// one, or nil where the CPU lacks AVX2.
func asmQ8_1Act() ActQuant {
	if !hasAVX2FMA {
		return nil
	}
	return quantizeQ8_1ActFast
}

// quantizeQ8_1ActFast is quantizeQ8_1ActGeneric with the quants and d from
// the AVX2 Q8_0 converter (the same bytes), laid out as Q8_1 in place.
func quantizeQ8_1ActFast(dst []byte, src []float32) {
	nb := len(src) / qk
	if nb == 0 {
		return
	}
	dst = dst[:nb*q8_1Size]
	quantizeQ8_0AVX2(&dst[0], &src[0], nb)
	q8_1FromQ8_0(dst, src, nb)
}
