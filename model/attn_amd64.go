//go:build amd64 && !noasm

package model

// Assembly versions of the attention inner loops (AVX2, FMA, F16C). Each
// performs exactly the operations of its generic counterpart in ops.go, in
// the same order, so results are bit-identical (TestAttnKernels).

// madHalfAVX2 is madHalfGeneric for n a multiple of 8:
//
//	for i := range n { acc[i] = roundF16(fma32(v[i], s, acc[i])) }
//
//go:noescape
func madHalfAVX2(acc, v *float32, s float32, n int)

// scaleHalfAVX2 is, for n a multiple of 8:
//
//	for i := range n { acc[i] = roundF16(acc[i] * s) }
//
//go:noescape
func scaleHalfAVX2(acc *float32, s float32, n int)

// dot32AVX2 is the 4×8-lane FMA part of dotF16/dotF32 over n (a multiple of
// 32) elements, reduced as reduce4x8.
//
//go:noescape
func dot32AVX2(k, q *float32, n int) float32

func cpuidAttn(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
func xgetbvAttn() (eax, edx uint32)

// useAttnAsm reports whether the CPU and OS support AVX2, FMA and F16C.
var useAttnAsm = func() bool {
	maxLeaf, _, _, _ := cpuidAttn(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, ecx1, _ := cpuidAttn(1, 0)
	const fma, osxsave, avx, f16c = 1 << 12, 1 << 27, 1 << 28, 1 << 29
	if ecx1&(fma|osxsave|avx|f16c) != fma|osxsave|avx|f16c {
		return false
	}
	if xcr0, _ := xgetbvAttn(); xcr0&6 != 6 {
		return false
	}
	_, ebx7, _, _ := cpuidAttn(7, 0)
	return ebx7&(1<<5) != 0 // AVX2
}()

func madHalf(acc, v []float32, s float32) {
	n := len(acc)
	v = v[:n]
	if n8 := n &^ 7; useAttnAsm && n8 > 0 {
		madHalfAVX2(&acc[0], &v[0], s, n8)
		madHalfGeneric(acc[n8:], v[n8:], s)
		return
	}
	madHalfGeneric(acc, v, s)
}

func scaleHalf(acc []float32, s float32) {
	n := len(acc)
	if n8 := n &^ 7; useAttnAsm && n8 > 0 {
		scaleHalfAVX2(&acc[0], s, n8)
		scaleHalfGeneric(acc[n8:], s)
		return
	}
	scaleHalfGeneric(acc, s)
}

func dot32(k, q []float32) float32 {
	n := len(q)
	k = k[:n]
	if useAttnAsm && n >= 32 {
		return dot32AVX2(&k[0], &q[0], n)
	}
	return dot32Generic(k, q)
}
