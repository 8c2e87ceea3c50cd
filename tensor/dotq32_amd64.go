//go:build amd64 && !noasm

package tensor

import "unsafe"

// The AVX2 kernels of dotq32_amd64.s. Each takes 1 to 4 activation rows
// (ntok) at x + t·xstride and writes out[t·ostride + r]; the doc comments
// give the Go loop each computes, bit for bit.

// q5_0RowsN, q4_1RowsN, q5_1RowsN and their Rows4 forms are generated
// (asm/q32.go) into dotq32_lanes_amd64.s and declared in
// dotq32_lanes_stubs_amd64.go.
//
//go:generate env -u GOARCH go run -C asm . -kernels q32 -out ../dotq32_lanes_amd64.s -stubs ../dotq32_lanes_stubs_amd64.go -pkg tensor

// iq4nlRows8 computes, over nb blocks, for groups of eight IQ4_NL rows and
// ntok (1 to 8) activation rows,
//
//	for t := range ntok { for r := range 8*groups {
//		out[t*ostride+r] = dotIQ4_NLGeneric(w[r*wstride:], x[t*xstride:], 32*nb) } }
//
//go:noescape
func iq4nlRows8(w *byte, wstride, groups int, x *byte, xstride, ntok, nb int, out *float32, ostride int)

// iq4nlRows8x1 is iq4nlRows8 for one token:
//
//	for r := range 8*groups { out[r] = dotIQ4_NLGeneric(w[r*wstride:], x, 32*nb) }
//
//go:noescape
func iq4nlRows8x1(w *byte, wstride, groups int, x *byte, nb int, out *float32)

// iq4nlRows8V is iq4nlRows8 with AVX-512 VNNI (dotiq4nl_amd64.s) on
// q8VNNI128 activations, for 1 to 8 tokens in one pass:
//
//	for t := range ntok { for r := range 8*groups {
//		out[t*ostride+r] = dotIQ4_NLGeneric(w[r*wstride:], q8_0 form of x[t*xstride:], 32*nb) } }
//
//go:noescape
func iq4nlRows8V(w *byte, wstride, groups int, x *byte, xstride, ntok, nb int, out *float32, ostride int)

// registerQ32VNNI installs the forms of the four types for the current
// useVNNI.
func registerQ32VNNI() { setQ32Forms(useVNNI) }

// setQ32Forms registers the VNNI kernels of Q4_1, Q5_0, Q5_1 and IQ4_NL,
// on their VNNI activation layouts, where v and the CPU has VNNI, and the
// AVX2 ones on Q8_0 and Q8_1 activations otherwise (registerQ32 calls it,
// so setVNNI flips these types with Q8_0 and Q4_0).
func setQ32Forms(v bool) {
	if v && hasVNNI {
		registerKernel(Q4_1, q8_1VNNI, dotQ4_1V)
		registerKernel(Q5_0, q8LanesVNNI, dotQ5_0V)
		registerKernel(Q5_1, q8_1VNNI, dotQ5_1V)
		registerKernel(IQ4_NL, q8VNNI128, dotIQ4_NLV)
		registerGemv(Q4_1, gemvQ4_1V)
		registerGemv(Q5_0, gemvQ5_0V)
		registerGemv(Q5_1, gemvQ5_1V)
		registerGemv(IQ4_NL, gemvIQ4_NLV)
		return
	}
	registerQ32Kernels()
}

func dotIQ4_NLV(w, x []byte, n int) float32 { return gemvDot(gemvIQ4_NLV, w, x, n) }

// gemvIQ4_NLV runs iq4nlRows8V over groups of eight rows (gemvGroups8).
func gemvIQ4_NLV(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qk
	checkGemv(len(w), ws, rows, nb*iq4nlSize, len(x), xs, ntok, nb*q8VNNISize, len(out), os)
	gemvGroups8(w, ws, rows, x, xs, ntok, out, os, func(w *byte, ws, groups int, x *byte, nt int, out *float32, os int) {
		iq4nlRows8V(w, ws, groups, x, xs, nt, nb, out, os)
	})
}

// asmQ32 returns the AVX2 dot and gemv kernels for a 32-element block type
// (Q4_1, Q5_0, Q5_1, IQ4_NL), or nils where the CPU lacks AVX2.
func asmQ32(t Type) (VecDot, gemv) {
	if !hasAVX2FMA {
		return nil, nil
	}
	var g gemv
	switch t {
	case Q5_0:
		g = gemvQ5_0Asm
	case Q4_1:
		g = gemvQ4_1Asm
	case Q5_1:
		g = gemvQ5_1Asm
	case IQ4_NL:
		g = gemvIQ4_NLAsm
	default:
		return nil, nil
	}
	return func(w, x []byte, n int) float32 { return gemvDot(g, w, x, n) }, g
}

type (
	rowsN func(w *byte, wstride, rows int, x *byte, xstride, ntok, nb int, out *float32, ostride int)
	rows4 func(w *byte, wstride, groups int, x *byte, nb int, out *float32)
)

func gemvQ5_0Asm(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvLanes(q5_0RowsN, q5_0Rows4, q5_0Size, q8_0Size, w, ws, rows, x, xs, ntok, cols, out, os)
}

func gemvQ4_1Asm(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvLanes(q4_1RowsN, q4_1Rows4, q4_1Size, q8_1Size, w, ws, rows, x, xs, ntok, cols, out, os)
}

func gemvQ5_1Asm(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvLanes(q5_1RowsN, q5_1Rows4, q5_1Size, q8_1Size, w, ws, rows, x, xs, ntok, cols, out, os)
}

// gemvLanes runs a lanes type's kernels (bsize-byte weight blocks,
// asize-byte activation blocks): kernN on two to eight tokens at a time,
// a lone token through kern4 four rows at a time (and kernN for the rows
// left over).
func gemvLanes(kernN rowsN, kern4 rows4, bsize, asize int, w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qk
	checkGemv(len(w), ws, rows, nb*bsize, len(x), xs, ntok, nb*asize, len(out), os)
	t := 0
	for ; ntok-t >= 2; t += 8 {
		kernN(ptr(w), ws, rows, &x[t*xs], xs, min(8, ntok-t), nb, &out[t*os], os)
	}
	if t < ntok {
		g := rows / 4
		if g > 0 {
			kern4(ptr(w), ws, g, &x[t*xs], nb, &out[t*os])
		}
		if r := 4 * g; r < rows {
			kernN(&w[r*ws], ws, rows-r, &x[t*xs], xs, 1, nb, &out[t*os+r], os)
		}
	}
}

// gemvIQ4_NLAsm runs iq4nlRows8 over groups of eight rows (gemvGroups8:
// a lone row as eight copies of itself), two to eight tokens at a time, and
// iq4nlRows8x1 for a lone token.
func gemvIQ4_NLAsm(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qk
	checkGemv(len(w), ws, rows, nb*iq4nlSize, len(x), xs, ntok, nb*q8_0Size, len(out), os)
	gemvGroups8(w, ws, rows, x, xs, ntok, out, os, func(w *byte, ws, groups int, x *byte, nt int, out *float32, os int) {
		t := 0
		for ; nt-t >= 2; t += 8 {
			iq4nlRows8(w, ws, groups, (*byte)(unsafe.Add(unsafe.Pointer(x), t*xs)), xs, min(8, nt-t), nb,
				(*float32)(unsafe.Add(unsafe.Pointer(out), 4*t*os)), os)
		}
		if t < nt {
			iq4nlRows8x1(w, ws, groups, (*byte)(unsafe.Add(unsafe.Pointer(x), t*xs)), nb,
				(*float32)(unsafe.Add(unsafe.Pointer(out), 4*t*os)))
		}
	})
}
