//go:build amd64 && !noasm

package tensor

// cpuid executes CPUID with the given leaf and sub-leaf.
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// xgetbv0 returns XCR0, the register-state components the OS saves.
func xgetbv0() (eax, edx uint32)

// hasAVX2FMA reports whether the CPU and OS support AVX2, FMA and F16C, the
// features every assembly kernel in this package needs. K-quant and other
// kernels test it before installing their assembly versions.
var hasAVX2FMA = detectAVX2FMA()

// hasVNNI reports AVX-512 VNNI with the VL and BW extensions and OS support
// for the AVX-512 state: the int8 kernels then use VPDPBUSD on 256-bit
// vectors (and the 32 vector registers EVEX encoding gives), with exactly
// the same integer sums.
var hasVNNI = hasAVX2FMA && detectVNNI()

func detectVNNI() bool {
	_, ebx7, ecx7, _ := cpuid(7, 0)
	const (
		avx512f    = 1 << 16
		avx512bw   = 1 << 30
		avx512vl   = 1 << 31
		avx512vnni = 1 << 11
	)
	if ebx7&(avx512f|avx512bw|avx512vl) != avx512f|avx512bw|avx512vl || ecx7&avx512vnni == 0 {
		return false
	}
	xcr0, _ := xgetbv0()
	return xcr0&0xe6 == 0xe6 // XMM, YMM, opmask, ZMM_Hi256, Hi16_ZMM state
}

func detectAVX2FMA() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const (
		fma     = 1 << 12
		osxsave = 1 << 27
		avx     = 1 << 28
		f16c    = 1 << 29
	)
	if ecx1&(fma|osxsave|avx|f16c) != fma|osxsave|avx|f16c {
		return false
	}
	if xcr0, _ := xgetbv0(); xcr0&6 != 6 { // XMM and YMM state enabled
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const avx2 = 1 << 5
	return ebx7&avx2 != 0
}

// spinPause executes n (≥ 1) PAUSE instructions: the polite way to wait a
// few dozen nanoseconds in a spin loop.
func spinPause(n int)
