//go:build arm64 && !noasm

package model

//go:generate env -u GOARCH go run gen_arm64.go

// NEON versions of the attention inner loops, SwiGLU and RMSNorm's scale
// (attn_arm64.s, written by gen_arm64.go). Plain NEON is part of every
// ARMv8-A CPU, so there is no run-time choice. Each kernel performs exactly
// the operations of its generic counterpart, in the same order: the same
// fused multiply-adds (FMLA), the same single roundings, half rounding by
// FCVTN (ties to even, overflow to ±Inf, subnormal halves kept) and exact
// widening by FCVTL. So results are bit-identical (TestAttnKernels,
// TestAttnRowKernels, TestExpfs and the TestVec tests), with two caveats
// the amd64 kernels share: the references' fma32 emulates the fused
// float32 operation in float64, which can round twice in rare ties (no
// tested case does), and a NaN rounded to half keeps only its payload's top
// bits (FCVTN, like VCVTPS2PH, where roundF16 returns the NaN unchanged):
// NaN stays NaN.
//
// The layouts are those of ggml's AVX2 build (ggmlLanes 8, 8-lane SwiGLU
// runs), which the generic code follows on every CPU without AVX-512;
// llama.cpp's own arm64 build adds in half precision where the CPU has
// FP16 arithmetic, which no reference here models.

// scaleHalfNEON is, for n a multiple of 8:
//
//	for i := range n { acc[i] = roundF16(acc[i] * s) }
//
//go:noescape
func scaleHalfNEON(acc *float32, s float32, n int)

// dot32NEON is dot32Generic (four 8-lane accumulators, reduce4x8) over n
// (a multiple of 32) elements.
//
//go:noescape
func dot32NEON(k, q *float32, n int) float32

// dot64NEON is dot64Generic (four 16-lane accumulators, reduce4x16) over n
// (a multiple of 64) elements.
//
//go:noescape
func dot64NEON(k, q *float32, n int) float32

// dot32F16NEON and dot64F16NEON are dot32NEON and dot64NEON with the keys
// read as halves (widened exactly by FCVTL).
//
//go:noescape
func dot32F16NEON(k *uint16, q *float32, n int) float32

//go:noescape
func dot64F16NEON(k *uint16, q *float32, n int) float32

// dot32F16RowsNEON is, for n > 0 and d32 a positive multiple of 32:
//
//	for r := range n { out[r] = dot32F16NEON(k[r*stride:], q, d32) }
//
//go:noescape
func dot32F16RowsNEON(out *float32, k *uint16, q *float32, n, d32, stride int)

// madHalfF16NEON is, for n a multiple of 8 and v read as halves:
//
//	for i := range n { acc[i] = roundF16(fma32(v[i], s, acc[i])) }
//
//go:noescape
func madHalfF16NEON(acc *float32, v *uint16, s float32, n int)

// madRowsF16NEON is madRowsF16Generic on the first d8 columns (d8 a
// positive multiple of 8, n > 0), rows of v stride halves apart: per row
// p, with flag[p] == 0, scaleHalfNEON(acc, e[p], d8), weight 1 and
// s = fma32(s, e[p], 1); else weight e[p] and s = fma32(s, 1, e[p]); then
// madHalfF16NEON(acc, v[p*stride:], weight, d8). It returns s.
//
//go:noescape
func madRowsF16NEON(acc *float32, v *uint16, e, flag *float32, n, d8, stride int, s float32) float32

// swiglu4NEON sets g[i] = silu(g[i])·u[i] (g at gp, u at up) for i < n (a
// multiple of 4), each lane computing exactly what swiglu's 8-lane loop
// computes with vexpf (ggml_v_expf, whose AVX2 and NEON forms are the same
// arithmetic; the saturation for |n| > 126 computed for every lane and
// selected):
//
//	for i := range n {
//		x := g[i]
//		g[i] = float32(x/(1+vexpf(-x))) * u[i]
//	}
//
//go:noescape
func swiglu4NEON(gp, up *float32, n int)

// rmsScaleNEON is, for n a multiple of 4:
//
//	for i := range n { out[i] = float32(x[i]*scale) * w[i] }
//
//go:noescape
func rmsScaleNEON(out, x, w *float32, scale float32, n int)

// ggmlLanes: ggml's AVX2 layout, as the generic code has it.
var ggmlLanes = 8

// ggmlSilu16: SwiGLU as ggml's AVX2 build (8-lane vexpf runs).
var ggmlSilu16 = false

func scaleHalf(acc []float32, s float32) {
	n8 := len(acc) &^ 7
	if n8 > 0 {
		scaleHalfNEON(&acc[0], s, n8)
	}
	scaleHalfGeneric(acc[n8:], s)
}

func dot32(k, q []float32) float32 {
	n := len(q)
	k = k[:n]
	if n >= 32 {
		return dot32NEON(&k[0], &q[0], n)
	}
	return dot32Generic(k, q)
}

func dot64(k, q []float32) float32 {
	n := len(q)
	k = k[:n]
	if n >= 64 {
		return dot64NEON(&k[0], &q[0], n)
	}
	return dot64Generic(k, q)
}

func dot32F16(k []uint16, q []float32) float32 {
	n := len(q)
	k = k[:n]
	if n >= 32 {
		return dot32F16NEON(&k[0], &q[0], n)
	}
	return dot32F16Generic(k, q)
}

func dot64F16(k []uint16, q []float32) float32 {
	n := len(q)
	k = k[:n]
	if n >= 64 {
		return dot64F16NEON(&k[0], &q[0], n)
	}
	return dot64F16Generic(k, q)
}

func madHalfF16(acc []float32, v []uint16, s float32) {
	n := len(acc)
	v = v[:n]
	n8 := n &^ 7
	if n8 > 0 {
		madHalfF16NEON(&acc[0], &v[0], s, n8)
	}
	madHalfF16Generic(acc[n8:], v[n8:], s)
}

// dotRowsF16 is dotRowsF16Generic: with 8 lanes (the layout here unless a
// test sets ggmlLanes) the rows' 32-element blocks by the NEON rows kernel,
// the rest added in float64 as dotAttnF16 does.
func dotRowsF16(out []float32, k []uint16, q []float32) {
	n, d := len(out), len(q)
	if ggmlLanes != 8 || n == 0 || d < 32 {
		dotRowsF16Generic(out, k, q)
		return
	}
	k = k[:n*d]
	d32 := d &^ 31
	dot32F16RowsNEON(&out[0], &k[0], &q[0], n, d32, d)
	if d32 < d {
		dotRowsTailF16(out, k, q, d32)
	}
}

func madRowsF16(acc []float32, v []uint16, e, flag []float32, s float32) float32 {
	n, d := len(e), len(acc)
	if n == 0 || d < 8 {
		return madRowsF16Generic(acc, v, e, flag, d, s)
	}
	d8 := d &^ 7
	flag, v = flag[:n], v[:n*d]
	s1 := madRowsF16NEON(&acc[0], &v[0], &e[0], &flag[0], n, d8, d, s)
	if d8 < d {
		madRowsF16Generic(acc[d8:], v[d8:], e, flag, d, s)
	}
	return s1
}

// swigluVec applies SwiGLU to the elements of g that swiglu's 8-lane loop
// covers (the longest prefix of a multiple of 8 elements), computing
// exactly what swigluGeneric computes there, and returns its length; with
// ggmlSilu16 (set only by tests here) it has no kernel and returns 0.
func swigluVec(g, u []float32) int {
	n8 := len(g) &^ 7
	if ggmlSilu16 || n8 == 0 {
		return 0
	}
	u = u[:n8]
	swiglu4NEON(&g[0], &u[0], n8)
	return n8
}

// rmsScale sets out[i] = float32(x[i]*scale) * w[i], rmsnorm's second
// pass.
func rmsScale(out, x, w []float32, scale float32) {
	n := len(x)
	out, w = out[:n], w[:n]
	n4 := n &^ 3
	if n4 > 0 {
		rmsScaleNEON(&out[0], &x[0], &w[0], scale, n4)
	}
	rmsScaleGeneric(out[n4:], x[n4:], w[n4:], scale)
}
