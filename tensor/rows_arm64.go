//go:build arm64 && !noasm

package tensor

// rowsKernel is the signature of the arm64 row-by-row kernels that take T
// activation rows a pass (the lanes types Q5_0, Q4_1, Q5_1 and the
// K-quants but Q4_K):
//
//	for t := range T { for r := range rows {
//		out[t*ostride+r] = dot(w[r*wstride:], x[t*xstride:], nb blocks) } }
type rowsKernel = func(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)

// rowKernels holds a weight type's row-by-row kernels by form (NEON, and
// Dot: SDOT) and token count, the block's elements and bytes, its
// activation block's bytes, how many tokens of n left a pass takes (run),
// and its reference dot.
type rowKernels struct {
	block, bsize, asize int
	neon, dot           [9]rowsKernel
	run                 func(n int) int
	ref                 VecDot
}

// kernel is the T-token kernel of the form in use.
func (k *rowKernels) kernel(T int) rowsKernel {
	if useDot {
		return k.dot[T]
	}
	return k.neon[T]
}

// gemv is the type's gemv (see the gemv type): run(ntok left) tokens a
// pass over the weights.
func (k *rowKernels) gemv(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / k.block
	checkGemv(len(w), ws, rows, nb*k.bsize, len(x), xs, ntok, nb*k.asize, len(out), os)
	if nb == 0 {
		for t := range ntok {
			clear(out[t*os : t*os+rows])
		}
		return
	}
	for t := 0; t < ntok; {
		T := k.run(ntok - t)
		k.kernel(T)(&w[0], ws, rows, &x[t*xs], xs, nb, &out[t*os], os)
		t += T
	}
}

// dot1 is the type's single dot of n elements, registered with MatMul.
// The one-token kernel is called directly, not through the tables, so that
// out stays on the stack (a pointer passed through a function value
// escapes).
func (k *rowKernels) dot1(w, x []byte, n int) float32 {
	nb := max(n/k.block, 0)
	if nb == 0 {
		return k.ref(w, x, n)
	}
	_ = w[nb*k.bsize-1]
	_ = x[nb*k.asize-1]
	var out float32
	wp, xp, o, d := &w[0], &x[0], &out, useDot
	switch {
	case k == &q6KKernels && d:
		q6KRows1Dot(wp, 0, 1, xp, 0, nb, o, 0)
	case k == &q6KKernels:
		q6KRows1NEON(wp, 0, 1, xp, 0, nb, o, 0)
	case k == &q5KKernels && d:
		q5KRows1Dot(wp, 0, 1, xp, 0, nb, o, 0)
	case k == &q5KKernels:
		q5KRows1NEON(wp, 0, 1, xp, 0, nb, o, 0)
	case k == &q3KKernels && d:
		q3KRows1Dot(wp, 0, 1, xp, 0, nb, o, 0)
	case k == &q3KKernels:
		q3KRows1NEON(wp, 0, 1, xp, 0, nb, o, 0)
	case k == &q2KKernels && d:
		q2KRows1Dot(wp, 0, 1, xp, 0, nb, o, 0)
	case k == &q2KKernels:
		q2KRows1NEON(wp, 0, 1, xp, 0, nb, o, 0)
	case k == &iq4XSKernels && d:
		iq4XSRows1Dot(wp, 0, 1, xp, 0, nb, o, 0)
	case k == &iq4XSKernels:
		iq4XSRows1NEON(wp, 0, 1, xp, 0, nb, o, 0)
	case k == &q5_0Lanes && d:
		q5_0RowsT1Dot(wp, 0, 1, xp, 0, nb, o, 0)
	case k == &q5_0Lanes:
		q5_0RowsT1NEON(wp, 0, 1, xp, 0, nb, o, 0)
	case k == &q4_1Lanes && d:
		q4_1RowsT1Dot(wp, 0, 1, xp, 0, nb, o, 0)
	case k == &q4_1Lanes:
		q4_1RowsT1NEON(wp, 0, 1, xp, 0, nb, o, 0)
	case k == &q5_1Lanes && d:
		q5_1RowsT1Dot(wp, 0, 1, xp, 0, nb, o, 0)
	case k == &q5_1Lanes:
		q5_1RowsT1NEON(wp, 0, 1, xp, 0, nb, o, 0)
	default:
		panic("tensor: no one-token kernel for this type")
	}
	return out
}
