//go:build arm64 && !noasm

package tensor

import "testing"

// kernelForms lists the plain NEON kernels and, where the CPU has SDOT or
// FMLAL, the forms using them; restore selects the forms in use before.
func kernelForms() (forms []kernelForm, restore func()) {
	d, f := useDot, useFHM
	forms = []kernelForm{{"neon", func() { setARM64Forms(false, false) }}}
	if cpuDotProd || cpuFHM {
		forms = append(forms, kernelForm{"dotprod+fhm", func() { setARM64Forms(true, true) }})
	}
	return forms, func() { setARM64Forms(d, f) }
}

// fromQ8_0Act converts nb ggml Q8_0 activation blocks at src into dst in
// activation type act's layout: on arm64 every Q8_0 kernel takes ggml's.
func fromQ8_0Act(act Type, dst, src []byte, nb int) { copy(dst[:nb*q8_0Size], src) }

// kGemvWideNB is the widest row (in blocks) the K-quant gemv tests try.
const kGemvWideNB = 64

// q8ActNaNExact is true: the NEON Q8_0 converter matches the reference on
// every input, NaNs included.
const q8ActNaNExact = true

// TestSPECDCPU checks that SPECD_CPU=neon turns the extensions off and
// that anything else leaves what the CPU has.
func TestSPECDCPU(t *testing.T) {
	if d, f := arm64Forms("neon"); d || f {
		t.Errorf("SPECD_CPU=neon: dotprod %v, fhm %v; want both off", d, f)
	}
	if d, f := arm64Forms(""); d != cpuDotProd || f != cpuFHM {
		t.Errorf("SPECD_CPU unset: dotprod %v, fhm %v; the CPU has %v, %v", d, f, cpuDotProd, cpuFHM)
	}
	dot, fhm, i8mm := ARM64Features()
	t.Logf("kernels in use: dotprod %v, fhm %v (CPU: %v, %v; i8mm %v)", dot, fhm, cpuDotProd, cpuFHM, i8mm)
}
