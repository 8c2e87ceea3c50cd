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
