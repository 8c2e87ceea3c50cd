package tensor

import "os"

// Kernel dispatch: the one place that decides which form of every kernel
// runs. Each architecture's dispatch file (dispatch_amd64.go,
// dispatch_arm64.go, dispatch_generic.go) detects the CPU's features with
// golang.org/x/sys/cpu, caps them by the SPECD_CPU environment variable and
// provides three hooks; registerKernels calls them and every type's
// registration in one fixed order, from this file's init, the package's
// only one. Package-level variables that depend on the features (hasAVX2FMA,
// useDot, ...) are initialised before it by Go's dependency order.

func init() {
	registerTypeInfos()
	registerKernels()
}

// registerTypeInfos names the internal activation types, once (types is
// read without a lock).
func registerTypeInfos() {
	types[bf16Wide] = bf16WideInfo
	types[q8_0x8] = typeInfo{"Q8_0 (rows interleaved by eight)", qk, q8_0Size, false}
	types[q4_0x8] = typeInfo{"Q4_0 (rows interleaved by eight)", qk, q4_0Size, false}
	registerArchTypeInfos()
}

// registerKernels (re)registers the kernels of every type for the features
// in use and the current summation orders (q8Order, q2Order). It is
// idempotent; SetQ8_0Order, SetQ2KOrder and the tests' form switches call
// it again, never concurrently with a kernel.
func registerKernels() {
	// The assembly behind the kernel variables (dotF16, quantizeQ8_0Act,
	// f16ToF32sImpl, ...), which the registrations below read.
	installArchImpls()
	registerArchTypes()

	registerFloats()   // F32, F16, BF16 (floats.go)
	registerBF16Wide() // BF16's widened activations (act_wide.go)
	registerQ0()       // Q8_0, Q4_0 in q8Order (q8.go)
	registerQ8_1()     // Q8_1 activations (q8_1.go)
	registerQ4_1()
	registerQ5_0()
	registerQ5_1()
	registerIQ4_NL()
	registerQ32() // Q4_1, Q5_0, Q5_1, IQ4_NL kernels (qlanes.go)
	registerKQuants()
	registerKQuantQuantizers()
	registerQ2_K() // in q2Order
	registerQ3_K()
	registerQ5_K()
	registerIQ4_XS()

	registerArchGemvs()
}

// KernelSet names the kernel set in use: "avx512-vnni", "avx2" or
// "generic" on x86-64; "neon" with "+dotprod", "+fhm" and "+i8mm" for the
// arm64 extensions in use; "generic" for the pure-Go kernels (other
// architectures, -tags noasm, SPECD_CPU=generic).
func KernelSet() string { return kernelSet() }

// CPUFeatures lists the CPU features the kernel sets look at that this
// CPU and OS support (golang.org/x/sys/cpu's names, lower case), whether
// or not SPECD_CPU lets the kernels use them.
func CPUFeatures() []string { return cpuFeatures() }

// CPUEnv returns the SPECD_CPU setting and an error if the kernel selection
// could not follow it (a value it does not understand); the best set for
// the CPU is then in use.
func CPUEnv() (string, error) { return os.Getenv("SPECD_CPU"), envErr }
