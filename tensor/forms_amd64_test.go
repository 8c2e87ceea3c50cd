//go:build amd64 && !noasm

package tensor

// kernelForms lists the AVX2 kernels (the pure-Go ones without AVX2) and,
// where the CPU has AVX-512 VNNI, the VNNI forms; restore selects the form
// in use before.
func kernelForms() (forms []kernelForm, restore func()) {
	v := useVNNI
	name := "avx2"
	if !hasAVX2FMA {
		name = "go"
	}
	forms = []kernelForm{{name, func() { setVNNI(false) }}}
	if hasVNNI {
		forms = append(forms, kernelForm{"avx512vnni", func() { setVNNI(true) }})
	}
	return forms, func() { setVNNI(v) }
}

// kGemvWideNB is the widest row (in blocks) the K-quant gemv tests try:
// the limit of the T-token Q4_K kernels.
const kGemvWideNB = kMaxQ4KTBlocks

// q8ActNaNExact is false: the AVX2 Q8_0 converter matches the reference
// on every input but NaNs.
const q8ActNaNExact = false

// q32Multirow says whether Q4_1, Q5_0, Q5_1 and IQ4_NL have multi-row
// kernels here: the AVX2 kernels, where the CPU has AVX2 and FMA.
var q32Multirow = hasAVX2FMA
