package tensor

import "math"

// F16ToF32 converts an IEEE half-precision value to float32. The conversion
// is exact; NaNs keep their payload and come out quiet, as with
// ggml_compute_fp16_to_fp32 and the F16C instruction.
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f && man == 0: // ±Inf
		return math.Float32frombits(sign | 0x7f800000)
	case exp == 0x1f: // NaN, made quiet
		return math.Float32frombits(sign | 0x7fc00000 | man<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
	case man == 0: // ±0
		return math.Float32frombits(sign)
	}
	// Subnormal half: man × 2^-24 is exact in float32.
	f := float32(man) * (1.0 / (1 << 24))
	return math.Float32frombits(sign | math.Float32bits(f))
}

// F32ToF16 converts f to half precision, rounding to nearest even, with
// overflow to ±Inf and NaN mapped to the quiet NaN 0x7e00 (sign kept), bit for
// bit as ggml_compute_fp32_to_fp16.
func F32ToF16(f float32) uint16 {
	w := math.Float32bits(f)
	sign := uint16(w>>16) & 0x8000
	abs := w & 0x7fffffff
	if abs > 0x7f800000 {
		return sign | 0x7e00
	}
	if abs >= 0x47800000 { // ≥ 65536: rounds to Inf whatever the mantissa
		return sign | 0x7c00
	}
	exp := int(abs >> 23)
	man := abs & 0x7fffff
	if exp < 113 { // below the smallest normal half (2^-14): subnormal or zero
		if exp < 102 { // < 2^-25: rounds to zero (2^-25 itself ties to even 0)
			return sign
		}
		// value = (man|1<<23) × 2^(exp-150); half subnormal unit = 2^-24.
		m := man | 0x800000
		shift := uint(126 - exp) // 150-exp-24
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || rem == half && h&1 == 1 {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(exp-112)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++ // may carry into the exponent, up to Inf: that is correct rounding
	}
	return sign | uint16(h)
}

// BF16ToF32 converts a bfloat16 value to float32 (exact).
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F32ToBF16 converts f to bfloat16 rounding to nearest even, with NaNs made
// quiet, bit for bit as ggml_compute_fp32_to_bf16.
func F32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 64
	}
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}

// F16ToF32s converts len(src) halves into dst[:len(src)] (the bulk path for
// attention over an F16 KV cache). dst must be at least as long as src.
func F16ToF32s(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	f16ToF32sImpl(dst, src)
}

// F32ToF16s converts len(src) floats into dst[:len(src)] as F32ToF16 does,
// except NaNs: they become quiet NaNs keeping the top bits of their payload,
// which is what the F16C instruction (and so llama.cpp's CPU backend when it
// converts activations or writes an F16 KV cache) produces. dst must be at
// least as long as src.
func F32ToF16s(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	f32ToF16sImpl(dst, src)
}

// F32ToF16Hw converts f as the F16C instruction VCVTPS2PH does with
// round-to-nearest-even: F32ToF16 for every non-NaN value, and a quiet NaN
// keeping the top 9 payload bits for a NaN.
func F32ToF16Hw(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16)&0x8000 | 0x7e00 | uint16(u>>13)&0x1ff
	}
	return F32ToF16(f)
}

func f32ToF16sGeneric(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = F32ToF16Hw(v)
	}
}

// f32ToF16sImpl is the bulk converter in use; an assembly version replaces
// it at init where the CPU supports one.
var f32ToF16sImpl = f32ToF16sGeneric

// f16Table maps every half to its float32 value; it makes the pure-Go bulk
// conversion a table lookup (256 KiB, built once).
var f16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = F16ToF32(uint16(i))
	}
	return &t
}()

func f16ToF32sGeneric(dst []float32, src []uint16) {
	dst = dst[:len(src)]
	t := f16Table
	for i, h := range src {
		dst[i] = t[h]
	}
}

// f16ToF32sImpl is the bulk converter in use; an assembly version replaces
// it at init where the CPU supports one.
var f16ToF32sImpl = f16ToF32sGeneric
