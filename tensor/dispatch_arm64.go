//go:build arm64 && !noasm

package tensor

import (
	"fmt"
	"os"

	"golang.org/x/sys/cpu"
)

// The arm64 kernels come in a plain NEON form, which every ARMv8-A CPU
// runs, and forms using extensions that golang.org/x/sys/cpu reports (from
// the kernel's HWCAPs, so the OS support is covered):
//
//   - ASIMDDP (SDOT/UDOT): the integer dots of Q8_0, Q4_0, IQ4_NL, Q5_0,
//     Q4_1, Q5_1, Q4_K and Q6_K four bytes per lane per instruction
//     instead of a widening multiply and pairwise adds;
//   - ASIMDFHM (FMLAL/FMLAL2): F16 weights times F16 activations without
//     widening either first;
//   - I8MM (SMMLA), with ASIMDDP: the multi-token Q8_0, Q4_0, IQ4_NL and
//     Q4_K kernels take two rows times two tokens, 8 bytes each, per
//     instruction (a third token of a pass takes SDOT on the same operands
//     in Q8_0, Q4_0 and IQ4_NL, SMMLA against itself in Q4_K; a single
//     token, and Q4_K's odd last row, run the SDOT form).
//
// All forms compute the same integer sums and the same single-rounded
// float operations in the same order, so they give the same bits. The FP16
// arithmetic extensions (FPHP, ASIMDHP) are not used: adding in half
// precision rounds differently from the references, which accumulate in
// float32 as llama.cpp's x86 build does.
//
// SPECD_CPU=neon in the environment restricts the kernels to plain NEON
// whatever the CPU has (CI runs the tests so, as well as on an emulated CPU
// without the extensions); tests switch forms in-process with
// setARM64Forms.
var (
	cpuDotProd = cpu.ARM64.HasASIMDDP
	cpuFHM     = cpu.ARM64.HasASIMDFHM
	cpuI8MM    = cpu.ARM64.HasI8MM
)

// useDot, useFHM and useMM select the kernel forms in use: the extension
// where the CPU has it (I8MM's forms with SDOT's), unless SPECD_CPU=neon;
// envErr names a SPECD_CPU value the selection does not understand (the
// extensions are then used).
var (
	useDot, useFHM, useMM = arm64Forms(os.Getenv("SPECD_CPU"))
	envErr                = arm64EnvErr(os.Getenv("SPECD_CPU"))
)

// arm64Forms returns the forms SPECD_CPU=env selects: none under neon,
// else those the CPU has.
func arm64Forms(env string) (dot, fhm, mm bool) {
	if env == "neon" {
		return false, false, false
	}
	return cpuDotProd, cpuFHM, cpuI8MM && cpuDotProd
}

// arm64EnvErr names a SPECD_CPU value arm64Forms does not understand.
func arm64EnvErr(env string) error {
	switch env {
	case "", "neon", "native":
		return nil
	}
	return fmt.Errorf("tensor: SPECD_CPU=%q: want neon or nothing on arm64 (using the CPU's extensions)", env)
}

// setARM64Forms selects the SDOT, FMLAL and SMMLA forms (where the CPU has
// them; SMMLA's only with SDOT's) for the kernels called after it; it must
// not run concurrently with them. The kernels read the selection at each
// call, so nothing is registered again.
func setARM64Forms(dot, fhm, mm bool) {
	useDot = dot && cpuDotProd
	useFHM = fhm && cpuFHM
	useMM = mm && useDot && cpuI8MM
}

// ARM64Features reports the CPU extensions the arm64 kernels in use take:
// SDOT (dotProd), FMLAL (fhm) and SMMLA (i8mm). SPECD_CPU=neon turns them
// off.
func ARM64Features() (dotProd, fhm, i8mm bool) { return useDot, useFHM, useMM }

// kernelSet names the arm64 set in use: "neon" and the extensions taken.
func kernelSet() string {
	s := "neon"
	if useDot {
		s += "+dotprod"
	}
	if useFHM {
		s += "+fhm"
	}
	if useMM {
		s += "+i8mm"
	}
	return s
}

// cpuFeatures lists the extensions the kernels look at that the CPU has.
func cpuFeatures() []string {
	fs := []string{"asimd"}
	for _, f := range []struct {
		name string
		has  bool
	}{{"asimddp", cpuDotProd}, {"asimdfhm", cpuFHM}, {"i8mm", cpuI8MM}} {
		if f.has {
			fs = append(fs, f.name)
		}
	}
	return fs
}

// installArchImpls points the kernel variables at their NEON forms (every
// ARMv8-A CPU has NEON; the SDOT, FMLAL and SMMLA forms are chosen at each
// call from useDot, useFHM and useMM).
func installArchImpls() {
	installNEONActs() // act_arm64.go
	installNEONDots() // dot_arm64.go
	installNEONVec()  // vec_arm64.go
}

// registerArchTypeInfos names the one internal activation layout of the
// arm64 kernels: Q4_0's q8VNNI (q8vnni.go); the others take ggml's.
func registerArchTypeInfos() {
	types[q8VNNI] = typeInfo{"Q8_0 (activation layout for Q4_0: float32 scale, -8·Σ quants)", qk, q8VNNISize, false}
}

// registerArchTypes registers Q4_0's activation layout: the NEON Q8_0
// quantizer, then q8VNNIInPlace.
func registerArchTypes() { registerAct(q8VNNI, quantizeQ8VNNIActNEON) }

// quantizeQ8VNNIActNEON quantizes src into q8VNNI blocks (off = -8·Σ qs):
// Q8_0 blocks at the end of dst, laid out from its start in place.
func quantizeQ8VNNIActNEON(dst []byte, src []float32) {
	nb := len(src) / qk
	if nb == 0 {
		return
	}
	dst = dst[:nb*q8VNNISize]
	quantizeQ8_0Act(dst[nb*(q8VNNISize-q8_0Size):], src)
	q8VNNIInPlace(dst, nb, 3)
}

// registerArchGemvs registers the multi-row forms that do not depend on
// an order (Q8_0 and Q4_0 register theirs with their kernels).
func registerArchGemvs() {
	registerGemv(F32, gemvF32)
	registerGemv(F16, gemvF16)
	registerGemv(BF16, gemvBF16)
	registerGemv(Q4_K, gemvQ4K)
	registerGemv(Q6_K, gemvQ6K)
	registerGemv(Q5_K, gemvQ5K)
	registerGemv(Q3_K, q3KKernels.gemv)
	registerGemv(IQ4_XS, iq4XSKernels.gemv)
}
