//go:build amd64 && !noasm

package tensor

// haveAVX2K reports whether the CPU and OS support the AVX2 and F16C
// instructions the K-quant kernels use (YMM state enabled by the OS).
var haveAVX2K = func() bool {
	maxLeaf, _, _, _ := kCPUID(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, c1, _ := kCPUID(1, 0)
	const osxsave, avx, f16c = 1 << 27, 1 << 28, 1 << 29
	if c1&(osxsave|avx|f16c) != osxsave|avx|f16c {
		return false
	}
	if xcr0, _ := kXGETBV(); xcr0&6 != 6 { // XMM and YMM state
		return false
	}
	_, b7, _, _ := kCPUID(7, 0)
	return b7&(1<<5) != 0
}()

// kCPUID executes CPUID with the given leaf and sub-leaf.
func kCPUID(eax, ecx uint32) (a, b, c, d uint32)

// kXGETBV returns extended control register 0.
func kXGETBV() (eax, edx uint32)

// dotQ4KAVX2 computes the Q4_K × Q8_K dot product of nb > 0 blocks at w and
// x (144 and 292 bytes each). It is bit-identical to dotQ4KRef:
//
//	for i := 0; i < nb; i++ {
//		sc, mn := q4KScaleMin(w.scales)
//		isum := Σ_{s<8} sc[s] · Σ_{l<32} q4[32s+l]·q8[32s+l]
//		imin := Σ_{j<16} bsums[j]·mn[j/2]
//		d, dmin := x.d·f16(w.d), x.d·f16(w.dmin)
//		sum += d·float32(isum)
//		sum -= dmin·float32(imin)
//	}
//
//go:noescape
func dotQ4KAVX2(w, x *byte, nb int) float32

// dotQ6KAVX2 computes the Q6_K × Q8_K dot product of nb > 0 blocks at w and
// x (210 and 292 bytes each). It is bit-identical to dotQ6KRef:
//
//	for i := 0; i < nb; i++ {
//		isum := Σ_{s<16} sc[s]·Σ_{l<16} u[16s+l]·q8[16s+l] − 32·Σ_s sc[s]·bsums[s]
//		sum += (x.d·f16(w.d))·float32(isum)
//	}
//
//go:noescape
func dotQ6KAVX2(w, x *byte, nb int) float32

// dotQ4Kx4AVX2 computes out[r] = dotQ4KAVX2(w, x + r·stride, nb) for r in
// [0, 4), bit for bit, decoding each weight block once.
//
//go:noescape
func dotQ4Kx4AVX2(w, x *byte, stride, nb int, out *[4]float32)

// dotQ6Kx4AVX2 computes out[r] = dotQ6KAVX2(w, x + r·stride, nb) for r in
// [0, 4), bit for bit, decoding each weight block once.
//
//go:noescape
func dotQ6Kx4AVX2(w, x *byte, stride, nb int, out *[4]float32)

func init() {
	if haveAVX2K {
		registerKernel4(Q4_K, dotQ4Kx4)
		registerKernel4(Q6_K, dotQ6Kx4)
	}
}

// kX4Rows returns x cut to four activation rows of nb Q8_K blocks at
// stride, panicking (like a slice bound) if x is shorter.
func kX4Rows(x []byte, stride, nb int) []byte {
	rb := nb * q8KBytes
	if stride < rb {
		panic("tensor: activation stride shorter than a Q8_K row")
	}
	return x[:3*stride+rb]
}

// dotQ4Kx4 is the four-activation-row form of dotQ4K (registered only with
// AVX2): out[r] = dotQ4K(w, x[r*stride:], n), bit for bit.
func dotQ4Kx4(w, x []byte, stride, n int, out *[4]float32) {
	nb := n / qkK
	if nb <= 0 {
		*out = [4]float32{}
		return
	}
	_ = w[nb*q4KBytes-1]
	x = kX4Rows(x, stride, nb)
	dotQ4Kx4AVX2(&w[0], &x[0], stride, nb, out)
}

// dotQ6Kx4 is the four-activation-row form of dotQ6K (registered only with
// AVX2): out[r] = dotQ6K(w, x[r*stride:], n), bit for bit.
func dotQ6Kx4(w, x []byte, stride, n int, out *[4]float32) {
	nb := n / qkK
	if nb <= 0 {
		*out = [4]float32{}
		return
	}
	_ = w[nb*q6KBytes-1]
	x = kX4Rows(x, stride, nb)
	dotQ6Kx4AVX2(&w[0], &x[0], stride, nb, out)
}

// quantizeQ8KAVX2 converts nb > 0 blocks of 256 floats at src into Q8_K
// blocks at dst, bit-identical to quantizeRowQ8K on every input (NaNs and
// infinities included).
//
//go:noescape
func quantizeQ8KAVX2(dst *byte, src *float32, nb int)

// quantizeQ8K is the registered float32 → Q8_K converter: the AVX2 code
// when the CPU has it, else the reference loop; both give the same bytes.
func quantizeQ8K(dst []byte, src []float32) {
	nb := len(src) / qkK
	if !haveAVX2K || nb <= 0 {
		quantizeRowQ8K(dst, src)
		return
	}
	_ = dst[nb*q8KBytes-1]
	quantizeQ8KAVX2(&dst[0], &src[0], nb)
}

// dotQ4K is the Q4_K × Q8_K kernel registered with MatMul: the AVX2 code
// when the CPU has it, else the reference loop; both give the same bits.
func dotQ4K(w, x []byte, n int) float32 {
	nb := n / qkK
	if !haveAVX2K || nb <= 0 {
		return dotQ4KRef(w, x, n)
	}
	_ = w[nb*q4KBytes-1]
	_ = x[nb*q8KBytes-1]
	return dotQ4KAVX2(&w[0], &x[0], nb)
}

// dotQ6K is the Q6_K × Q8_K kernel registered with MatMul: the AVX2 code
// when the CPU has it, else the reference loop; both give the same bits.
func dotQ6K(w, x []byte, n int) float32 {
	nb := n / qkK
	if !haveAVX2K || nb <= 0 {
		return dotQ6KRef(w, x, n)
	}
	_ = w[nb*q6KBytes-1]
	_ = x[nb*q8KBytes-1]
	return dotQ6KAVX2(&w[0], &x[0], nb)
}
