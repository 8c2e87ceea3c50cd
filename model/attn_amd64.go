//go:build amd64 && !noasm

package model

import "github.com/specd-dev/specd/tensor"

// Assembly versions of the attention inner loops (AVX2, FMA, F16C). Each
// performs exactly the operations of its generic counterpart in ops.go, in
// the same order, so results are bit-identical (TestAttnKernels).

// scaleHalfAVX2 is, for n a multiple of 8:
//
//	for i := range n { acc[i] = roundF16(acc[i] * s) }
//
//go:noescape
func scaleHalfAVX2(acc *float32, s float32, n int)

// dot32AVX2 is dot32Generic (four 8-lane accumulators, reduce4x8) over n
// (a multiple of 32) elements.
//
//go:noescape
func dot32AVX2(k, q *float32, n int) float32

// dot64AVX2 is dot64Generic (four 16-lane accumulators, each in two
// registers, reduce4x16) over n (a multiple of 64) elements.
//
//go:noescape
func dot64AVX2(k, q *float32, n int) float32

// dot32F16AVX2 and dot64F16AVX2 are dot32AVX2 and dot64AVX2 with the
// keys read as halves (widened exactly, as VCVTPH2PS does in ggml).
//
//go:noescape
func dot32F16AVX2(k *uint16, q *float32, n int) float32

//go:noescape
func dot64F16AVX2(k *uint16, q *float32, n int) float32

// madHalfF16AVX2 is, for n a multiple of 8 and v read as halves:
//
//	for i := range n { acc[i] = roundF16(fma32(v[i], s, acc[i])) }
//
//go:noescape
func madHalfF16AVX2(acc *float32, v *uint16, s float32, n int)

// dot64F16RowsAVX2 is, for n > 0 and d a positive multiple of 64:
//
//	for r := range n { out[r] = dot64F16AVX2(k[r*stride:], q, d) }
//
//go:noescape
func dot64F16RowsAVX2(out *float32, k *uint16, q *float32, n, d, stride int)

// dot32F16RowsAVX2 is, for n > 0 and d a positive multiple of 32:
//
//	for r := range n { out[r] = dot32F16AVX2(k[r*stride:], q, d) }
//
//go:noescape
func dot32F16RowsAVX2(out *float32, k *uint16, q *float32, n, d, stride int)

// madRowsF16AVX2 is madRowsF16Generic on the first d8 columns (d8 a
// positive multiple of 8, n > 0), rows of v stride halves apart: per row
// p, with flag[p] == 0, scaleHalfAVX2(acc, e[p], d8), weight 1 and
// s = fma32(s, e[p], 1); else weight e[p] and s = fma32(s, 1, e[p]); then
// madHalfF16AVX2(acc, v[p*stride:], weight, d8). It returns s.
//
//go:noescape
func madRowsF16AVX2(acc *float32, v *uint16, e, flag *float32, n, d8, stride int, s float32) float32

// useAttnAsm reports whether the CPU and OS support AVX2, FMA and F16C;
// ggmlLanes is 16 where they support AVX-512F (a native ggml build then uses
// 512-bit vectors), else 8; ggmlSilu16 is whether ggml's SwiGLU uses its
// AVX-512 vector expf (AVX-512F and DQ), as a native build on this CPU does.
var useAttnAsm, ggmlLanes, ggmlSilu16 = func() (bool, int, bool) {
	avx2FMA, avx512F, avx512DQ := tensor.X86Features()
	lanes := 8
	if avx512F {
		lanes = 16
	}
	return avx2FMA, lanes, avx512DQ
}()

func scaleHalf(acc []float32, s float32) {
	n := len(acc)
	if n8 := n &^ 7; useAttnAsm && n8 > 0 {
		scaleHalfAVX2(&acc[0], s, n8)
		scaleHalfGeneric(acc[n8:], s)
		return
	}
	scaleHalfGeneric(acc, s)
}

func dot64(k, q []float32) float32 {
	n := len(q)
	k = k[:n]
	if useAttnAsm && n >= 64 {
		return dot64AVX2(&k[0], &q[0], n)
	}
	return dot64Generic(k, q)
}

func dot32(k, q []float32) float32 {
	n := len(q)
	k = k[:n]
	if useAttnAsm && n >= 32 {
		return dot32AVX2(&k[0], &q[0], n)
	}
	return dot32Generic(k, q)
}

func dot32F16(k []uint16, q []float32) float32 {
	n := len(q)
	k = k[:n]
	if useAttnAsm && n >= 32 {
		return dot32F16AVX2(&k[0], &q[0], n)
	}
	return dot32F16Generic(k, q)
}

func dot64F16(k []uint16, q []float32) float32 {
	n := len(q)
	k = k[:n]
	if useAttnAsm && n >= 64 {
		return dot64F16AVX2(&k[0], &q[0], n)
	}
	return dot64F16Generic(k, q)
}

func madHalfF16(acc []float32, v []uint16, s float32) {
	n := len(acc)
	v = v[:n]
	if n8 := n &^ 7; useAttnAsm && n8 > 0 {
		madHalfF16AVX2(&acc[0], &v[0], s, n8)
		madHalfF16Generic(acc[n8:], v[n8:], s)
		return
	}
	madHalfF16Generic(acc, v, s)
}

func dotRowsF16(out []float32, k []uint16, q []float32) {
	n, d := len(out), len(q)
	w := 32 // the kernel's run: ggml's 8-lane layout sums 32 at a time, the 16-lane one 64
	if ggmlLanes == 16 {
		w = 64
	}
	if !useAttnAsm || n == 0 || d < w {
		dotRowsF16Generic(out, k, q)
		return
	}
	k = k[:n*d]
	dw := d &^ (w - 1)
	if w == 64 {
		dot64F16RowsAVX2(&out[0], &k[0], &q[0], n, dw, d)
	} else {
		dot32F16RowsAVX2(&out[0], &k[0], &q[0], n, dw, d)
	}
	if dw < d {
		dotRowsTailF16(out, k, q, dw)
	}
}

func madRowsF16(acc []float32, v []uint16, e, flag []float32, s float32) float32 {
	n, d := len(e), len(acc)
	if !useAttnAsm || n == 0 || d < 8 {
		return madRowsF16Generic(acc, v, e, flag, d, s)
	}
	d8 := d &^ 7
	flag, v = flag[:n], v[:n*d]
	s1 := madRowsF16AVX2(&acc[0], &v[0], &e[0], &flag[0], n, d8, d, s)
	if d8 < d {
		madRowsF16Generic(acc[d8:], v[d8:], e, flag, d, s)
	}
	return s1
}

// swiglu16AVX512 sets g[i] = silu(g[i])·u[i] (g at gp, u at up) for i < n (a multiple of 16)
// with AVX-512F, each lane computing exactly what the scalar loop of
// swiglu computes with vexpf512:
//
//	for i := range n {
//		x := g[i]
//		g[i] = float32(x/(1+vexpf512(-x))) * u[i]
//	}
func swiglu16AVX512(gp, up *float32, n int)

// swiglu8AVX2 sets g[i] = silu(g[i])·u[i] (g at gp, u at up) for i < n (a
// multiple of 8) with AVX2 and FMA, each lane computing exactly what the
// scalar loop of swiglu computes with vexpf:
//
//	for i := range n {
//		x := g[i]
//		g[i] = float32(x/(1+vexpf(-x))) * u[i]
//	}
func swiglu8AVX2(gp, up *float32, n int)

// swigluVec applies SwiGLU to the longest prefix of g it has a vector
// kernel for, and returns its length: a multiple of 16 elements through
// the AVX-512 kernel where ggmlSilu16, else a multiple of 8 through the
// AVX2 one where useAttnAsm (ggml's 8-lane ggml_v_silu).
func swigluVec(g, u []float32) int {
	switch {
	case ggmlSilu16:
		n16 := len(g) &^ 15
		if n16 == 0 {
			return 0
		}
		u = u[:n16]
		swiglu16AVX512(&g[0], &u[0], n16)
		return n16
	case useAttnAsm:
		n8 := len(g) &^ 7
		if n8 == 0 {
			return 0
		}
		u = u[:n8]
		swiglu8AVX2(&g[0], &u[0], n8)
		return n8
	}
	return 0
}
