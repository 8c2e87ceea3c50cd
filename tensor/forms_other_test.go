//go:build !(amd64 || arm64) || noasm

package tensor

// kernelForms lists the one form without assembly: the pure-Go kernels.
func kernelForms() (forms []kernelForm, restore func()) {
	return []kernelForm{{"go", func() {}}}, func() {}
}

// fromQ8_0Act converts nb ggml Q8_0 activation blocks at src into dst in
// activation type act's layout: the pure-Go kernels take ggml's.
func fromQ8_0Act(act Type, dst, src []byte, nb int) { copy(dst[:nb*q8_0Size], src) }

// kGemvWideNB is the widest row (in blocks) the K-quant gemv tests try.
const kGemvWideNB = 64

// q8ActNaNExact is true: the converter is the reference.
const q8ActNaNExact = true

// q32Multirow says whether Q4_1, Q5_0, Q5_1 and IQ4_NL have multi-row
// kernels here: no assembly: the four types run their references.
var q32Multirow = false
