//go:build amd64 && !noasm

package tensor

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/cpu"

	"github.com/specd-dev/specd/internal/libm"
)

// The x86-64 kernel sets, best first:
//
//   - avx512-vnni: AVX-512 F, BW and VL with VNNI (VPDPBUSD on 256-bit
//     vectors and the 32 vector registers EVEX encoding gives): the
//     eight-token F32/F16/BF16 kernels, the T-token K-quant kernels and the
//     VNNI activation layouts of the 32-element block types;
//   - avx2: AVX2, FMA and F16C, which every assembly kernel needs;
//   - generic: the pure-Go references.
//
// golang.org/x/sys/cpu reads CPUID and XGETBV: HasAVX2 and HasAVX512* are
// only set where the OS saves the YMM (and opmask and ZMM) state. It has
// every bit the kernels need (F16C included), so there is no CPUID code
// here. All three sets give the same bits.
//
// SPECD_CPU in the environment caps the set: avx2 runs the AVX2 forms on an
// AVX-512 machine (and makes X86Features report no AVX-512, so package
// model's attention and SwiGLU take their AVX2 forms and llama.cpp's AVX2
// arithmetic), generic runs pure Go; avx512 (or unset) takes the best the
// CPU has. A level the CPU lacks falls back to the best it has.

// x86Level is a kernel set, ordered: a higher one needs every feature of
// the lower ones.
type x86Level int

const (
	levelGeneric x86Level = iota
	levelAVX2
	levelAVX512VNNI
)

var levelNames = [...]string{levelGeneric: "generic", levelAVX2: "avx2", levelAVX512VNNI: "avx512-vnni"}

// cpuLevel is the best set the CPU and OS support.
var cpuLevel = func() x86Level {
	x := &cpu.X86
	switch {
	case !(x.HasAVX2 && x.HasFMA && x.HasF16C):
		return levelGeneric
	case x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VL && x.HasAVX512VNNI:
		return levelAVX512VNNI
	}
	return levelAVX2
}()

// level is the set in use: cpuLevel capped by SPECD_CPU; envErr says what
// was wrong with SPECD_CPU, if anything.
var level, envErr = x86LevelFor(os.Getenv("SPECD_CPU"), cpuLevel)

// x86LevelFor returns the kernel set SPECD_CPU=env selects on a CPU whose
// best is best, and an error naming a value it does not understand (then
// best is used).
func x86LevelFor(env string, best x86Level) (x86Level, error) {
	want := best
	switch strings.ToLower(env) {
	case "", "avx512", "avx512-vnni", "native":
	case "avx2":
		want = levelAVX2
	case "generic", "go":
		want = levelGeneric
	default:
		return best, fmt.Errorf("tensor: SPECD_CPU=%q: want avx512, avx2 or generic (using %s)", env, levelNames[best])
	}
	return min(want, best), nil
}

// hasAVX2FMA reports whether the AVX2 kernels (AVX2, FMA, F16C) are in use;
// without them every kernel is the pure-Go reference.
var hasAVX2FMA = level >= levelAVX2

// hasVNNI reports whether the AVX-512 VNNI kernels may run (the CPU has
// them and SPECD_CPU does not cap them); useVNNI (dot_amd64.go) selects
// them, and tests flip it with setVNNI.
var hasVNNI = level >= levelAVX512VNNI

// X86Features reports what the kernel set in use may take, for packages
// with assembly of their own: avx2FMA is AVX2, FMA and F16C with the YMM
// state saved; avx512F is AVX-512F with the opmask and ZMM state saved;
// avx512DQ is avx512F with AVX-512DQ. Under SPECD_CPU=avx2 the AVX-512 ones
// are false, under SPECD_CPU=generic all three.
func X86Features() (avx2FMA, avx512F, avx512DQ bool) {
	avx512F = level >= levelAVX512VNNI && cpu.X86.HasAVX512F
	return hasAVX2FMA, avx512F, avx512F && cpu.X86.HasAVX512DQ
}

// kernelSet names the set in use (useVNNI may be turned off by tests).
func kernelSet() string {
	switch {
	case useVNNI:
		return levelNames[levelAVX512VNNI]
	case hasAVX2FMA:
		return levelNames[levelAVX2]
	}
	return levelNames[levelGeneric]
}

// cpuFeatures lists the CPU features the kernel sets look at, as
// golang.org/x/sys/cpu reports them.
func cpuFeatures() []string {
	x := &cpu.X86
	var fs []string
	for _, f := range []struct {
		name string
		has  bool
	}{
		{"avx2", x.HasAVX2}, {"fma", x.HasFMA}, {"f16c", x.HasF16C},
		{"avx512f", x.HasAVX512F}, {"avx512bw", x.HasAVX512BW}, {"avx512vl", x.HasAVX512VL},
		{"avx512dq", x.HasAVX512DQ}, {"avx512vnni", x.HasAVX512VNNI},
	} {
		if f.has {
			fs = append(fs, f.name)
		}
	}
	return fs
}

// installArchImpls points the kernel variables at the assembly of the set
// in use, before the registration reads them, and selects internal/libm's
// vector expf (AVX2 and FMA) with the set.
func installArchImpls() {
	libm.SetVector(hasAVX2FMA)
	if !hasAVX2FMA {
		return
	}
	installAVX2Acts()  // act_amd64.go
	installAVX2Widen() // act_wide_amd64.go
	installAVX2Dots()  // dot_amd64.go
	installAVX2Vec()   // vec_amd64.go
}

// registerArchTypeInfos names the internal activation layouts of the VNNI
// kernels (ids ggml does not use; not weight types).
func registerArchTypeInfos() {
	types[q8VNNI] = typeInfo{"Q8_0 (VNNI activation layout for Q4_0)", qk, q8VNNISize, false}
	types[q8VNNI128] = typeInfo{"Q8_0 (VNNI activation layout for Q8_0)", qk, q8VNNISize, false}
	types[q8_1VNNI] = typeInfo{"Q8_1 (VNNI activation layout)", qk, q8_1VNNISize, false}
	types[q8LanesVNNI] = typeInfo{"Q8_0 (VNNI activation layout with lane offsets)", qk, q8LanesVNNISize, false}
}

// registerArchTypes registers the converters into the VNNI layouts where
// the VNNI set may run.
func registerArchTypes() {
	registerQ0VNNITypes()  // dotq_amd64.go
	registerQ32VNNITypes() // dotq32v_amd64.go
}

// registerArchGemvs registers the multi-row forms that do not depend on
// an order or on useVNNI (the Q8_0, Q4_0 and 32-element block types
// register theirs with their kernels).
func registerArchGemvs() {
	if !hasAVX2FMA {
		return
	}
	registerGemv(F32, gemvF32)
	registerGemv(F16, gemvF16)
	registerGemv(BF16, gemvBF16)
	registerGemv(Q4_K, gemvQ4K)
	registerGemv(Q6_K, gemvQ6K)
	registerGemv(Q3_K, gemvQ3K)
	registerGemv(Q5_K, gemvQ5K)
	registerGemv(IQ4_XS, gemvIQ4XS)
}
