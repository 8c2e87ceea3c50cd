package model

import (
	"math"

	"github.com/specd-dev/specd/tensor"
)

// The per-token kernels of the forward pass, each mirroring the rounding
// points of the ggml CPU op named in its comment, as a native llama.cpp
// build on the same CPU computes them (AVX-512 layouts where the CPU has
// AVX-512, AVX2 otherwise; see ggmlLanes), with glibc's expf/sinf/cosf
// (internal/libm). They do not allocate.

// fma32 is a float32 fused multiply-add: a*b is exact in float64, so the
// float64 FMA rounded to float32 equals the fused float32 result except in
// vanishingly rare double-rounding cases.
func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}

// rmsnorm writes out = x / sqrt(mean(x²) + eps) * w, as
// ggml_compute_forward_rms_norm_f32 fused with the weight multiply:
// squares rounded to float32, summed in float64, the mean and the scale in
// float32, and each output (x*scale)*w.
func rmsnorm(out, x, w []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(float32(v * v))
	}
	mean := float32(sum / float64(len(x)))
	scale := 1 / float32(math.Sqrt(float64(mean+eps)))
	rmsScale(out, x, w, scale)
}

// rmsScaleGeneric is rmsnorm's second pass: out[i] = (x[i]*scale)*w[i],
// the product rounded before the weight multiply. (The sum of squares
// stays scalar everywhere: it is one float64 addition chain, in order.)
func rmsScaleGeneric(out, x, w []float32, scale float32) {
	w = w[:len(x)]
	out = out[:len(x)]
	for i, v := range x {
		out[i] = float32(v*scale) * w[i]
	}
}

// ropeAngles fills cs with (cos θ_i, sin θ_i) pairs for position pos, as
// ggml_rope_cache_init: θ_0 = pos and θ_{i+1} = θ_i * base^(-2/d), a running
// float32 product (not pos*base^(-2i/d) computed afresh), cos and sin of the
// float32 angle as glibc's cosf and sinf round them.
func ropeAngles(cs []float32, pos int32, thetaScale float32) {
	theta := float32(pos)
	for i := 0; i+1 < len(cs); i += 2 {
		cs[i], cs[i+1] = cosf(theta), sinf(theta)
		theta = float32(theta * thetaScale)
	}
}

// ropeThetaScale is base^(-2/d) in float32, as powf(freq_base, -2.0f/n_dims).
// (The correctly rounded value equals glibc's powf for common bases and
// head sizes; checked for bases 1e3–8e6 and sizes 16–256.)
func ropeThetaScale(base float32, headDim int) float32 {
	e := float32(-2) / float32(headDim)
	return float32(math.Pow(float64(base), float64(e)))
}

// rope rotates one head vector x (len = headDim) in place by the angles cs
// (from ropeAngles), pairing elements per mode (ggml rotate_pairs). The C
// compiler contracts x0*cos - x1*sin into fma(x0, cos, -(x1*sin)) and
// x0*sin + x1*cos into fma(x0, sin, x1*cos); so does this.
func rope(x, cs []float32, mode ropeMode) {
	d := len(x)
	switch mode {
	case ropeNorm:
		for i := 0; i+1 < d; i += 2 {
			c, s := cs[i], cs[i+1]
			x0, x1 := x[i], x[i+1]
			x[i] = fma32(x0, c, -float32(x1*s))
			x[i+1] = fma32(x0, s, float32(x1*c))
		}
	case ropeNeox:
		h := d / 2
		for i := range h {
			c, s := cs[2*i], cs[2*i+1]
			x0, x1 := x[i], x[i+h]
			x[i] = fma32(x0, c, -float32(x1*s))
			x[i+h] = fma32(x0, s, float32(x1*c))
		}
	}
}

// swiglu writes g[i] = silu(g[i]) * u[i], as ggml_vec_swiglu_f32: runs of
// vector lanes through ggml's vector expf (ggml_v_silu; 16 lanes with
// AVX-512F+DQ, else 8), the tail through expf. The prefix swigluVec has a
// kernel for goes there (a whole number of runs), the rest through
// swigluGeneric.
func swiglu(g, u []float32) {
	u = u[:len(g)]
	i := swigluVec(g, u)
	swigluGeneric(g[i:], u[i:])
}

// swigluGeneric is swiglu in scalar code.
func swigluGeneric(g, u []float32) {
	u = u[:len(g)]
	if ggmlSilu16 {
		n16 := len(g) &^ 15
		for i := 0; i < n16; i++ {
			x := g[i]
			g[i] = float32(x/(1+vexpf512(-x))) * u[i]
		}
		for i := n16; i < len(g); i++ {
			x := g[i]
			g[i] = float32(x/(1+expf(-x))) * u[i]
		}
		return
	}
	n8 := len(g) &^ 7
	for i := 0; i < n8; i++ {
		x := g[i]
		g[i] = float32(x/(1+vexpf(-x))) * u[i]
	}
	for i := n8; i < len(g); i++ {
		x := g[i]
		g[i] = float32(x/(1+expf(-x))) * u[i]
	}
}

// The constants of ggml_v_expf: the rounding shift, log2(e), ln2 split in
// a high and a low part, and the polynomial's coefficients.
const (
	expfShift = 0x1.8p23
	expfLog2e = 0x1.715476p+0
	expfLn2hi = 0x1.62e4p-1
	expfLn2lo = 0x1.7f7d1cp-20
	expfP0    = 0x1.0e4020p-7
	expfP1    = 0x1.573e2ep-5
	expfP2    = 0x1.555e66p-3
	expfP3    = 0x1.fffdb6p-2
	expfP4    = 0x1.ffffecp-1
)

// expfReduce is ggml_v_expf's range reduction, shared by both widths:
// z = x·log2(e) + shift (n in its low mantissa bits), n = round(x/ln2) and
// b = x - n·ln2 in two fused steps.
func expfReduce(x float32) (z, n, b float32) {
	z = fma32(x, expfLog2e, expfShift)
	n = z - expfShift
	b = fma32(-n, expfLn2lo, fma32(-n, expfLn2hi, x))
	return z, n, b
}

// vexpf is one lane of ggml_v_expf (AVX2+FMA): e^x by range reduction
// x = n·ln2 + b with n = round(x/ln2), a degree-5 polynomial in b and
// scaling by 2^n through the exponent bits, with special scaling for
// |n| > 126 so that results overflow to +Inf and underflow to 0 gracefully.
// Bit-identical to ggml (see TestVexpf); within a few ulp of e^x.
func vexpf(x float32) float32 {
	z, n, b := expfReduce(x)
	e := math.Float32bits(z) << 23
	k := math.Float32frombits(e + math.Float32bits(1))
	u := b * b
	j := fma32(fma32(fma32(expfP0, b, expfP1), u, fma32(expfP2, b, expfP3)), u, float32(expfP4*b))
	an := float32(math.Abs(float64(n)))
	if !(an > 126) {
		return fma32(k, j, k)
	}
	var g uint32
	if n <= 0 {
		g = 0x82000000
	}
	s1 := math.Float32frombits(g + 0x7f000000)
	if an > 192 {
		return s1 * s1
	}
	s2 := math.Float32frombits(e - g)
	return fma32(s2, j, s2) * s1
}

// vexpf512 is one lane of ggml_v_expf for AVX-512: the same reduction and
// polynomial as vexpf, but with 1 folded into the polynomial and 2^n
// applied by scaling (VSCALEFPS), and saturation for |n| > 192 only.
// Bit-identical to ggml (see TestVexpf).
func vexpf512(x float32) float32 {
	_, n, b := expfReduce(x)
	if math.Abs(float64(n)) > 192 {
		if n <= 0 {
			return 0
		}
		return float32(math.Inf(1))
	}
	u := b * b
	j := fma32(fma32(fma32(expfP0, b, expfP1), u, fma32(expfP2, b, expfP3)), u, fma32(expfP4, b, 1))
	if ni := int32(n); ni >= -125 && ni <= 126 {
		// j is within [0.7, 1.5], so j·2^n is normal: the product by the
		// power of two is exact, as the scaling instruction's.
		return j * math.Float32frombits(uint32(ni+127)<<23)
	}
	return float32(math.Ldexp(float64(j), int(n))) // one rounding, to a subnormal or Inf
}

// addTo adds b to a element-wise (ggml_add: a residual or a bias).
func addTo(a, b []float32) {
	b = b[:len(a)]
	for i := range a {
		a[i] += b[i]
	}
}

// The attention dot products follow ggml_vec_dot_f16 / ggml_vec_dot_f32,
// whose summation order depends on the SIMD width ggml was built for (a
// native llama.cpp build uses the widest the CPU has): products fused into
// four accumulators of ggmlLanes float32 lanes over steps of 4*ggmlLanes
// elements, a fixed reduction tree (GGML_F32x8_REDUCE for AVX2,
// GGML_F32x16_REDUCE with gcc's _mm512_reduce_add_ps for AVX-512), and a
// float64 tail for the remaining elements. ggmlLanes is 16 on CPUs with
// AVX-512F and 8 otherwise (attn_amd64.go); the arithmetic per element is
// the same, only the order of the additions differs.

// reduce4x8 folds four 8-lane accumulators (acc[8*j+l] is lane l of
// accumulator j) as GGML_F32x8_REDUCE: (a0+a2)+(a1+a3) per lane, then the
// halves, then two horizontal adds.
func reduce4x8(acc *[32]float32) float32 {
	var v [8]float32
	for l := range 8 {
		v[l] = float32(acc[l]+acc[16+l]) + float32(acc[8+l]+acc[24+l])
	}
	t0 := float32(v[0] + v[4])
	t1 := float32(v[1] + v[5])
	t2 := float32(v[2] + v[6])
	t3 := float32(v[3] + v[7])
	return float32(t0+t1) + float32(t2+t3)
}

// reduce4x16 folds four 16-lane accumulators (acc[16*j+l]) as
// GGML_F32x16_REDUCE: (a0+a2)+(a1+a3) per lane, then _mm512_reduce_add_ps
// as gcc implements it: 256-bit halves, 128-bit halves, pairs two apart,
// and the last two.
func reduce4x16(acc *[64]float32) float32 {
	var v [16]float32
	for l := range 16 {
		v[l] = float32(acc[l]+acc[32+l]) + float32(acc[16+l]+acc[48+l])
	}
	var a [8]float32
	for i := range 8 {
		a[i] = v[i] + v[i+8]
	}
	b0, b1, b2, b3 := a[0]+a[4], a[1]+a[5], a[2]+a[6], a[3]+a[7]
	return float32(b0+b2) + float32(b1+b3)
}

// attnVecPart is how many of a head's n elements ggml's attention dot
// takes through its vector accumulators (steps of 64 with 16 lanes, of 32
// with 8); the rest is its float64 tail.
func attnVecPart(n int) int {
	if ggmlLanes == 16 {
		return n &^ 63
	}
	return n &^ 31
}

// dotAttn is ggml_vec_dot_f16 / ggml_vec_dot_f32 of a key row and a query
// (see above). With half-valued inputs (an F16 cache) the products are
// exact in float32, so fused and unfused multiply-adds agree.
func dotAttn(k, q []float32) float32 {
	n := len(q)
	k = k[:n]
	var sum float64 // the vector part's lanes reduce to +0 where it has no elements
	np := attnVecPart(n)
	switch {
	case np == 0:
	case ggmlLanes == 16:
		sum = float64(dot64(k[:np], q[:np]))
	default:
		sum = float64(dot32(k[:np], q[:np]))
	}
	for i := np; i < n; i++ {
		sum += float64(k[i] * q[i])
	}
	return float32(sum)
}

// dot32Generic is the accumulator part of dotAttn with 8 lanes, for
// len(q) a multiple of 32 (0 gives 0).
func dot32Generic(k, q []float32) float32 {
	n := len(q)
	k = k[:n]
	var acc [32]float32
	for i := 0; i+32 <= n; i += 32 {
		kk, qq := k[i:i+32], q[i:i+32]
		for l := range 32 {
			acc[l] = fma32(kk[l], qq[l], acc[l])
		}
	}
	return reduce4x8(&acc)
}

// dot64Generic is the accumulator part of dotAttn with 16 lanes, for
// len(q) a multiple of 64 (0 gives 0).
func dot64Generic(k, q []float32) float32 {
	n := len(q)
	k = k[:n]
	var acc [64]float32
	for i := 0; i+64 <= n; i += 64 {
		kk, qq := k[i:i+64], q[i:i+64]
		for l := range 64 {
			acc[l] = fma32(kk[l], qq[l], acc[l])
		}
	}
	return reduce4x16(&acc)
}

// dotAttnF16 is dotAttn for a key row stored as halves (an F16 cache).
func dotAttnF16(k []uint16, q []float32) float32 {
	n := len(q)
	k = k[:n]
	var sum float64 // the vector part's lanes reduce to +0 where it has no elements
	np := attnVecPart(n)
	switch {
	case np == 0:
	case ggmlLanes == 16:
		sum = float64(dot64F16(k[:np], q[:np]))
	default:
		sum = float64(dot32F16(k[:np], q[:np]))
	}
	for i := np; i < n; i++ {
		sum += float64(tensor.F16ToF32(k[i]) * q[i])
	}
	return float32(sum)
}

// dot32F16Generic is dot32Generic with halves for keys.
func dot32F16Generic(k []uint16, q []float32) float32 {
	n := len(q)
	k = k[:n]
	var acc [32]float32
	for i := 0; i+32 <= n; i += 32 {
		kk, qq := k[i:i+32], q[i:i+32]
		for l := range 32 {
			acc[l] = fma32(tensor.F16ToF32(kk[l]), qq[l], acc[l])
		}
	}
	return reduce4x8(&acc)
}

// dot64F16Generic is dot64Generic with halves for keys.
func dot64F16Generic(k []uint16, q []float32) float32 {
	n := len(q)
	k = k[:n]
	var acc [64]float32
	for i := 0; i+64 <= n; i += 64 {
		kk, qq := k[i:i+64], q[i:i+64]
		for l := range 64 {
			acc[l] = fma32(tensor.F16ToF32(kk[l]), qq[l], acc[l])
		}
	}
	return reduce4x16(&acc)
}

// madHalfF16Generic is madHalfGeneric with halves for values.
func madHalfF16Generic(acc []float32, v []uint16, s float32) {
	v = v[:len(acc)]
	for i, a := range acc {
		y := fma32(tensor.F16ToF32(v[i]), s, a)
		if u := math.Float32bits(y); isNormalHalf(u) {
			acc[i] = roundNormalHalf(u)
		} else {
			acc[i] = roundF16Rare(y)
		}
	}
}

// madHalfGeneric is ggml_vec_mad_f16 on widened halves:
// acc[i] = half(fma(v[i], s, acc[i])). The vector body fuses the
// multiply-add, and the compiler contracts the scalar tail to an FMA too.
func madHalfGeneric(acc, v []float32, s float32) {
	v = v[:len(acc)]
	for i, a := range acc {
		y := fma32(v[i], s, a)
		if u := math.Float32bits(y); isNormalHalf(u) {
			acc[i] = roundNormalHalf(u)
		} else {
			acc[i] = roundF16Rare(y)
		}
	}
}

// scaleHalfGeneric is ggml_vec_scale_f16 on widened halves:
// acc[i] = half(acc[i] * s).
func scaleHalfGeneric(acc []float32, s float32) {
	for i, a := range acc {
		acc[i] = roundF16(a * s)
	}
}

// roundF16 rounds x to the nearest half-precision value (ties to even),
// returned as float32: F16ToF32(F32ToF16(x)) without the detour, with
// overflow to ±Inf and NaN kept. Hot loops inline the common case as
// "if isNormalHalf(u) { roundNormalHalf(u) } else { roundF16Rare(x) }".
func roundF16(x float32) float32 {
	if u := math.Float32bits(x); isNormalHalf(u) {
		return roundNormalHalf(u)
	}
	return roundF16Rare(x)
}

// isNormalHalf reports whether the float32 with bits u has magnitude in
// [2^-14, 2^15): rounding it gives a normal half and cannot overflow.
func isNormalHalf(u uint32) bool { return u&0x7fffffff-0x38800000 < 0x47000000-0x38800000 }

// roundNormalHalf rounds the float32 with bits u to 10 mantissa bits,
// nearest even; a carry ripples into the exponent as it should.
func roundNormalHalf(u uint32) float32 {
	u += 0x0fff + (u>>13)&1
	return math.Float32frombits(u &^ 0x1fff)
}

// roundF16Rare is roundF16 outside the inlined range: tiny values
// (subnormal halves or zero), large ones (up to overflow), Inf and NaN.
func roundF16Rare(x float32) float32 {
	u := math.Float32bits(x)
	abs := u & 0x7fffffff
	switch {
	case abs > 0x7f800000: // NaN
		return x
	case abs >= 0x47800000: // >= 65536: Inf
		return math.Float32frombits(u&0x80000000 | 0x7f800000)
	case abs < 0x38800000: // below 2^-14: a multiple of 2^-24 (subnormal half)
		// In [0.5, 1) the float32 spacing is 2^-24, so the addition
		// rounds |x| to that grid with the FPU's ties-to-even.
		r := float32(math.Float32frombits(abs)+0.5) - 0.5
		return math.Float32frombits(u&0x80000000 | math.Float32bits(r))
	}
	u += 0x0fff + (u>>13)&1
	u &^= 0x1fff
	if u&0x7fffffff >= 0x47800000 {
		u = u&0x80000000 | 0x7f800000
	}
	return math.Float32frombits(u)
}

// attnF16 computes one query head's attention over positions [0, npos) of
// an F16 cache head, as ggml_compute_forward_flash_attn_ext_f16_one_chunk
// with an F16 V: q rounded to half, K·q by dotAttnF16, online softmax with
// running maximum M and sum S, values accumulated in a half-precision buffer
// (rounded to half after every scale and every multiply-add), and
// out = acc * (1/S). k and v are the head's keys and values (halves,
// position-major, len(q) each); qh and acc are scratch of len(q). Values
// held in acc are always exact halves.
func attnF16(out, q []float32, k, v []uint16, npos int, scale float32, qh, acc []float32) {
	d := len(q)
	qh, acc = qh[:d], acc[:d]
	for i, x := range q {
		qh[i] = roundF16(x)
		acc[i] = 0
	}
	m := float32(math.Inf(-1))
	var s float32
	for p := range npos {
		x := float32(dotAttnF16(k[p*d:(p+1)*d], qh) * scale) // rounded: m-x and x-m must not fuse
		ms, vs := float32(1), float32(1)
		if x > m {
			ms = expf(m - x)
			m = x
			scaleHalf(acc, ms) // ggml_vec_scale_f16
		} else {
			vs = expf(x - m)
		}
		vp := v[p*d : (p+1)*d]
		madHalfF16(acc, vp, vs) // ggml_vec_mad_f16
		s = fma32(s, ms, vs)    // S = S*ms + vs, contracted by the C compiler
	}
	inv := float32(0)
	if s != 0 {
		inv = 1 / s
	}
	out = out[:d]
	for i, a := range acc {
		out[i] = a * inv
	}
}

// attnF32 is attnF16 for an F32 cache: q stays float32, the accumulator is
// float32 (ggml_vec_scale_f32, ggml_vec_mad_f32 with FMA).
func attnF32(out []float32, q []float32, k, v []float32, npos int, scale float32, acc []float32) {
	d := len(q)
	acc = acc[:d]
	for i := range acc {
		acc[i] = 0
	}
	m := float32(math.Inf(-1))
	var s float32
	for p := range npos {
		x := float32(dotAttn(k[p*d:(p+1)*d], q) * scale) // rounded, as in attnF16
		ms, vs := float32(1), float32(1)
		if x > m {
			ms = expf(m - x)
			m = x
			for i := range acc {
				acc[i] *= ms
			}
		} else {
			vs = expf(x - m)
		}
		vp := v[p*d : (p+1)*d]
		for i := range acc {
			acc[i] = fma32(vp[i], vs, acc[i])
		}
		s = fma32(s, ms, vs) // S = S*ms + vs, contracted by the C compiler
	}
	inv := float32(0)
	if s != 0 {
		inv = 1 / s
	}
	out = out[:d]
	for i, a := range acc {
		out[i] = a * inv
	}
}
