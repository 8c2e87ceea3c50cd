package tensor

import (
	"math"

	"github.com/x448/float16"
)

// The scalar half-precision conversions are github.com/x448/float16's, which
// are bit for bit ggml's (ggml_compute_fp16_to_fp32 and
// ggml_compute_fp32_to_fp16) for every input but a NaN going to half
// precision: there ggml, and so F32ToF16, gives the canonical quiet NaN, while
// float16 keeps the payload's top bits as the F16C instruction does
// (F32ToF16Hw). TestF16Exhaustive and TestF32ToF16All check every input
// against a transcription of ggml's code.

// F16ToF32 converts an IEEE half-precision value to float32. The conversion
// is exact; NaNs keep their payload and come out quiet, as with
// ggml_compute_fp16_to_fp32 and the F16C instruction. It is a lookup in
// f16Table (as ggml's CPU backend converts by table too): branch-free, so
// the scalar loops over halves (attention's float64 tails over an F16
// cache, the references) do not wait on the conversion.
func F16ToF32(h uint16) float32 { return f16Table[h] }

// F32ToF16 converts f to half precision, rounding to nearest even, with
// overflow to ±Inf and NaN mapped to the quiet NaN 0x7e00 (sign kept), bit for
// bit as ggml_compute_fp32_to_fp16. The NaN case is ggml's, not float16's.
func F32ToF16(f float32) uint16 {
	if u := math.Float32bits(f); u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16)&0x8000 | 0x7e00
	}
	return float16.Fromfloat32(f).Bits()
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
func F32ToF16Hw(f float32) uint16 { return float16.Fromfloat32(f).Bits() }

func f32ToF16sGeneric(dst []uint16, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = F32ToF16Hw(v)
	}
}

// f32ToF16sImpl is the bulk converter in use; an assembly version replaces
// it at init where the CPU supports one.
var f32ToF16sImpl = f32ToF16sGeneric

// f16Table maps every half to its float32 value (float16's conversion);
// F16ToF32 and the pure-Go bulk conversion are lookups in it (256 KiB,
// built once).
var f16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = float16.Frombits(uint16(i)).Float32()
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
