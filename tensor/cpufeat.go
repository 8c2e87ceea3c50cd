//go:build amd64 && !noasm

package tensor

// X86Features reports what the CPU and the OS support, for packages with
// assembly of their own: avx2FMA is AVX2, FMA and F16C with the YMM state
// saved (what this package's kernels need); avx512F is AVX-512F with the
// opmask and ZMM state saved; avx512DQ is avx512F with AVX-512DQ.
func X86Features() (avx2FMA, avx512F, avx512DQ bool) {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false, false, false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	if ecx1&(1<<27) == 0 { // OSXSAVE
		return false, false, false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	xcr0, _ := xgetbv0()
	// XCR0: SSE, AVX, opmask, ZMM upper halves, upper ZMM registers.
	avx512F = ebx7&(1<<16) != 0 && xcr0&0xe6 == 0xe6
	return hasAVX2FMA, avx512F, avx512F && ebx7&(1<<17) != 0
}
