package main

import (
	"fmt"
	"strings"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The AVX2 lanes kernels of Q5_0, Q4_1 and Q5_1 (qlanes.go in package
// tensor): weight rows against 1 to q32MaxT activation rows (RowsN), each
// weight block decoded once for all the tokens, or groups of four rows
// against one (Rows4), every output with the exact operations
// and order of the type's Go reference (ggml's AVX2 dot products), so a
// token's results do not depend on the tokens beside it. Registers are
// virtual throughout.

const q32Sig = "func(w *byte, wstride, rows int, x *byte, xstride, ntok, nb int, out *float32, ostride int)"

// q32MaxT is the most tokens a RowsN kernel takes: their float lanes, and
// a block's decoded quants and scale, in Y0-Y15, the decoding's masks
// read from memory.
const q32MaxT = 8

// q32Type describes one weight type of the lanes kernels.
type q32Type struct {
	name, typ string
	// bs and xbs: the weight and activation block sizes in bytes.
	bs, xbs int
	// qs: the quants' offset in a weight block; qh: that of the fifth
	// bits (0: none).
	qs, qh int
	// min: the type has a min (Q4_1, Q5_1; activations Q8_1).
	min bool
	doc []string
}

var q32Types = []q32Type{
	{name: "q5_0RowsN", typ: "Q5_0", bs: 22, xbs: 34, qs: 6, qh: 2, doc: []string{
		"q5_0RowsN computes, over nb blocks,",
		"",
		"\tfor t := range ntok { for r := range rows {",
		"\t\tout[t*ostride+r] = dotQ5_0Generic(w[r*wstride:], x[t*xstride:], 32*nb) } }",
		"",
		"for 1 ≤ ntok ≤ 8 Q8_0 activation rows: a block's quants are (nibble | 0xf0",
		"where the qh bit is clear) as int8, that is q-16.",
	}},
	{name: "q4_1RowsN", typ: "Q4_1", bs: 20, xbs: 36, qs: 4, min: true, doc: []string{
		"q4_1RowsN is q5_0RowsN for Q4_1 weights and Q8_1 activations",
		"(dotQ4_1Generic).",
	}},
	{name: "q5_1RowsN", typ: "Q5_1", bs: 24, xbs: 36, qs: 8, qh: 4, min: true, doc: []string{
		"q5_1RowsN is q5_0RowsN for Q5_1 weights and Q8_1 activations",
		"(dotQ5_1Generic): a block's quants are nibble | (0x10 where the qh bit",
		"is set).",
	}},
}

// ld loads the argument name at off(FP) into a new virtual register.
func ld(name string, off int) GPVirtual {
	r := gp64()
	c.MOVQ(arg(name, off), r)
	return r
}

// f16At returns the function that loads the half at m and gives the
// address of its float32 in the f16Table at tab.
func f16At(tab GPVirtual) func(m Mem) Mem {
	return func(m Mem) Mem {
		h := gp32()
		c.MOVWLZX(m, h)
		return Mem{Base: tab, Index: h.As64(), Scale: 4}
	}
}

// rowsEnd moves out on by one float32 and w by ws, loops to "row" while
// rows are left, then returns (at "done").
func rowsEnd(out, w, ws, rows GPVirtual) {
	c.ADDQ(U8(4), out)
	c.ADDQ(ws, w)
	c.DECQ(rows)
	c.JNZ(LabelRef("row"))

	c.Label("done")
	c.VZEROUPPER()
	c.RET()
}

// goSym is the address of the package-level Go variable name.
func goSym(name string) Mem { return NewDataAddr(Symbol{Name: "·" + name}, 0) }

// broadcastD returns a vector with the dword v in every lane.
func broadcastD(v uint32) VecVirtual {
	r := gp32()
	c.MOVL(U32(v), r)
	y := top.YMM()
	c.VMOVD(r, y.AsX())
	c.VPBROADCASTD(y.AsX(), y)
	return y
}

// hsum reduces y as hsum_float_8 (halves added, then movehl, then
// movehdup), leaving the sum in lane 0 of y's low half.
func hsum(y VecVirtual) {
	x, t := y.AsX(), top.XMM()
	c.VEXTRACTF128(U8(1), y, t)
	c.VADDPS(x, t, x)
	c.VMOVHLPS(x, x, t)
	c.VADDPS(t, x, x)
	c.VMOVSHDUP(x, t)
	c.VADDSS(t, x, x)
}

func q32Lanes(k q32Type) {
	name := k.name
	frame := 0
	if k.min {
		frame = 4 * q32MaxT // the tokens' summs, lane t at 4t, at the end of a row
	}
	text(name, NOSPLIT, q32Sig)
	c.Doc(k.doc...)
	c.Pragma("noescape")
	if frame > 0 {
		c.AllocLocal(frame)
	}
	w, ws, rows, x, xs, out := ld("w", 0), ld("wstride", 8), ld("rows", 16), ld("x", 24), ld("xstride", 32), ld("out", 56)
	ntok := arg("ntok", 40)
	tab := gp64()
	c.MOVQ(goSym("f16Table"), tab)
	xs3 := gp64()
	c.LEAQ(Mem{Base: xs, Index: xs, Scale: 2}, xs3)
	f16 := f16At(tab)
	cs := q32MemConsts(k, !k.min)
	c.TESTQ(rows, rows)
	c.JZ(LabelRef("done"))

	c.Label("row")
	b, xb, xb4, n := gp64(), gp64(), gp64(), gp64()
	c.MOVQ(w, b)
	c.MOVQ(x, xb)
	c.Comment("Tokens 4-7 from xb4 = x + 4·xstride.")
	c.LEAQ(Mem{Base: x, Index: xs, Scale: 4}, xb4)
	c.MOVQ(arg("nb", 48), n)
	var acc [q32MaxT]VecVirtual
	for t := range acc {
		acc[t] = top.YMM()
		c.VXORPS(acc[t], acc[t], acc[t])
	}
	// The summs: token t's in lane t.
	summs := top.YMM()
	if k.min {
		c.VXORPS(summs, summs, summs)
	}
	c.TESTQ(n, n)
	c.JZ(LabelRef("rowdone"))

	c.Label("loop")
	q, mag := q32Decode(k, !k.min, cs, Mem{Base: b})
	c.Comment("d_w in every lane.")
	wd := top.YMM()
	c.VBROADCASTSS(f16(Mem{Base: b}), wd)
	xq := func(t, off int) Mem {
		m := Mem{Base: xb, Disp: off}
		if t >= 4 {
			m.Base = xb4
		}
		switch t % 4 {
		case 1:
			m = m.Idx(xs, 1)
		case 2:
			m = m.Idx(xs, 2)
		case 3:
			m = m.Idx(xs3, 1)
		}
		return m
	}
	if k.min {
		c.Comment("summs = fma(m_w, s_x, summs), token t's in lane t: the tokens' s_x",
			"gathered (the lanes past ntok stay 0) and widened, m_w in every lane.")
		h, sx := gp32(), top.XMM()
		c.MOVWLZX(xq(0, 2), h)
		c.VMOVD(h, sx)
		for t := 1; t < q32MaxT; t++ {
			c.CMPQ(ntok, U8(t))
			c.JLE(LabelRef("sxdone"))
			c.VPINSRW(U8(t), xq(t, 2), sx, sx)
		}
		c.Label("sxdone")
		sy, wm := top.YMM(), top.YMM()
		c.VCVTPH2PS(sx, sy)
		c.VBROADCASTSS(f16(Mem{Base: b, Disp: 2}), wm)
		c.VFMADD231PS(sy, wm, summs)
	}
	for t := 0; t < q32MaxT; t++ {
		if t > 0 {
			c.CMPQ(ntok, U8(t))
			c.JLE(LabelRef("tokdone"))
		}
		p := top.YMM()
		if k.min {
			c.Commentf("Token %d: ggml's mul_sum_us8_pairs_float.", t)
			c.VPMADDUBSW(xq(t, 4), q, p)
		} else {
			c.Commentf("Token %d: |q| times y with q's sign, pairs and then fours summed (mul_sum_i8_pairs_float).", t)
			c.VMOVDQU(xq(t, 2), p)
			c.VPSIGNB(q, p, p)
			c.VPMADDUBSW(p, mag, p)
		}
		c.VPMADDWD(cs.ones, p, p)
		c.VCVTDQ2PS(p, p)
		dy := top.YMM()
		c.VBROADCASTSS(f16(xq(t, 0)), dy)
		c.VMULPS(wd, dy, dy)
		c.VFMADD231PS(p, dy, acc[t])
	}

	c.Label("tokdone")
	c.ADDQ(U8(k.bs), b)
	c.ADDQ(U8(k.xbs), xb)
	c.ADDQ(U8(k.xbs), xb4)
	c.DECQ(n)
	c.JNZ(LabelRef("loop"))

	c.Label("rowdone")
	c.Comment("out[t·ostride + r] = hsum(acc_t) (+ summs_t).")
	os, o := gp64(), gp64()
	c.MOVQ(arg("ostride", 64), os)
	c.SHLQ(U8(2), os)
	c.MOVQ(out, o)
	if k.min {
		c.VMOVUPS(summs, sp(0))
	}
	for t := 0; t < q32MaxT; t++ {
		if t > 0 {
			c.CMPQ(ntok, U8(t))
			c.JLE(LabelRef("stored"))
			c.ADDQ(os, o)
		}
		hsum(acc[t])
		if k.min {
			c.VADDSS(sp(4*t), acc[t].AsX(), acc[t].AsX())
		}
		c.VMOVSS(acc[t].AsX(), Mem{Base: o})
	}

	c.Label("stored")
	rowsEnd(out, w, ws, rows)
}

// q32Regs holds a lanes kernel's constants, in registers or in memory.
type q32Regs struct {
	// ones: int16 ones; low: 0x0f bytes; qhShuf: the byte shuffle that
	// spreads the four qh bytes over eight bytes each; qhBit: the bit of
	// its byte each element tests; hiBits: the high bits those set or clear.
	ones, low, qhShuf, qhBit, hiBits Op
}

// The decoding's masks in memory (q32MemConsts).
var q32Low, q32QhBit, q32HiF0, q32Hi10 Mem

// q32Data writes the masks q32MemConsts reads.
func q32Data() {
	const bytes = 0x0101010101010101
	q32Low = global("q32Low", splat(4, 0x0f*bytes)...)
	q32QhBit = global("q32QhBit", splat(4, 0x8040201008040201)...)
	q32HiF0 = global("q32HiF0", splat(4, 0xf0*bytes)...)
	q32Hi10 = global("q32Hi10", splat(4, 0x10*bytes)...)
}

// q32MemConsts is q32Consts with only the int16 ones in a register: the
// masks, read once a block, are memory operands, which leaves the
// registers to the tokens.
func q32MemConsts(k q32Type, signed bool) q32Regs {
	c.Comment("Int16 ones.")
	ones := top.YMM()
	c.VPCMPEQW(ones, ones, ones)
	c.VPSRLW(U8(15), ones, ones)
	r := q32Regs{ones: ones, low: q32Low, qhShuf: goSym("q32QhShuf"), qhBit: q32QhBit, hiBits: q32Hi10}
	if signed {
		r.hiBits = q32HiF0
	}
	return r
}

func q32Consts(k q32Type, signed bool) q32Regs {
	var r q32Regs
	c.Comment("Int16 ones, 0x0f bytes.")
	ones := top.YMM()
	c.VPCMPEQW(ones, ones, ones)
	c.VPSRLW(U8(15), ones, ones)
	r.ones = ones
	r.low = broadcastD(0x0f0f0f0f)
	if k.qh != 0 {
		c.Comment("The byte shuffle that spreads the four qh bytes over eight bytes each, the bit",
			"of its byte each element tests, and the high bits those set or clear.")
		shuf := top.YMM()
		c.VMOVDQU(goSym("q32QhShuf"), shuf)
		r.qhShuf = shuf
		g := gp64()
		c.MOVQ(U64(0x8040201008040201), g)
		bit := top.YMM()
		c.VMOVQ(g, bit.AsX())
		c.VPBROADCASTQ(bit.AsX(), bit)
		r.qhBit = bit
		if signed {
			r.hiBits = broadcastD(0xf0f0f0f0)
		} else {
			r.hiBits = broadcastD(0x10101010)
		}
	}
	return r
}

// q32Decode decodes the weight block at m: its quants, signed with their
// magnitudes in mag (Q5_0 where signed), else unsigned (Q5_0 as q+16).
func q32Decode(k q32Type, signed bool, cs q32Regs, m Mem) (q, mag VecVirtual) {
	c.Comment("The block's quants in element order: low nibbles (elements 0-15), then high ones.")
	// The 16 bytes go to both halves, the upper half takes them shifted
	// (every register written whole, so that avo's liveness, which tracks
	// the halves, sees each value start here). h: the shifted bytes, then
	// (Q5_0, Q5_1) the fifth bits, then (Q5_0) the magnitudes.
	q, h := top.YMM(), top.YMM()
	c.VBROADCASTI128(m.Offset(k.qs), q)
	c.VPSRLW(U8(4), q, h)
	c.VPBLENDD(U8(0xf0), h, q, q)
	c.VPAND(cs.low, q, q)
	if k.qh != 0 {
		c.Comment("0xff in byte j where bit j of qh is set (ggml's bytes_from_bits_32).")
		c.VPBROADCASTD(m.Offset(k.qh), h)
		c.VPSHUFB(cs.qhShuf, h, h)
		c.VPAND(cs.qhBit, h, h)
		c.VPCMPEQB(cs.qhBit, h, h)
		if signed {
			c.VPANDN(cs.hiBits, h, h)
		} else {
			c.VPAND(cs.hiBits, h, h)
		}
		c.VPOR(h, q, q)
		if signed {
			mag = h
			c.VPABSB(q, mag)
		}
	}
	return q, mag
}

// q32Rows4 writes the single-token form: four rows at a time (w + r·wstride),
// so that four independent accumulators hide the latency of each row's
// chain of fused multiply-adds; the activation block is loaded once for the
// four, and the next group's rows are prefetched.
func q32Rows4(k q32Type) {
	name := strings.Replace(k.name, "RowsN", "Rows4", 1)
	frame := 0
	if k.min {
		frame = 16
	}
	text(name, NOSPLIT, "func(w *byte, wstride, groups int, x *byte, nb int, out *float32)")
	if k.min {
		c.Doc(fmt.Sprintf("%s is q5_0Rows4 for %s.", name, k.typ))
	} else {
		c.Doc("q5_0Rows4, q4_1Rows4 and q5_1Rows4 compute their RowsN kernel for one",
			"token and rows in groups of four, whose accumulators interleave:",
			"",
			"\tfor r := range 4*groups { out[r] = dot<type>Generic(w[r*wstride:], x, 32*nb) }")
	}
	c.Pragma("noescape")
	if frame > 0 {
		c.AllocLocal(frame)
	}
	w, ws, groups, x, out := ld("w", 0), ld("wstride", 8), ld("groups", 16), ld("x", 24), ld("out", 40)
	tab := gp64()
	c.MOVQ(goSym("f16Table"), tab)
	ws3 := gp64()
	c.LEAQ(Mem{Base: ws, Index: ws, Scale: 2}, ws3)
	f16 := f16At(tab)
	cs := q32Consts(k, !k.min)
	c.TESTQ(groups, groups)
	c.JZ(LabelRef("done"))

	c.Label("group")
	b, pf, xb, n := gp64(), gp64(), gp64(), gp64()
	c.MOVQ(w, b)
	c.LEAQ(Mem{Base: w, Index: ws, Scale: 4}, pf)
	c.MOVQ(x, xb)
	c.MOVQ(arg("nb", 32), n)
	var acc [4]VecVirtual
	for r := range acc {
		acc[r] = top.YMM()
		c.VXORPS(acc[r], acc[r], acc[r])
	}
	if k.min {
		c.Comment("Row r's summs at 4r(SP).")
		c.MOVQ(U32(0), sp(0))
		c.MOVQ(U32(0), sp(8))
	}
	c.TESTQ(n, n)
	c.JZ(LabelRef("groupdone"))

	c.Label("loop")
	c.PREFETCHT0(Mem{Base: pf})
	c.PREFETCHT0(Mem{Base: pf, Disp: 64})
	c.ADDQ(U8(4*k.bs), pf)
	y, dx, sx := top.YMM(), top.XMM(), top.XMM()
	if k.min {
		c.VMOVDQU(Mem{Base: xb, Disp: 4}, y)
		c.VMOVSS(f16(Mem{Base: xb}), dx)
		c.VMOVSS(f16(Mem{Base: xb, Disp: 2}), sx)
	} else {
		c.VMOVDQU(Mem{Base: xb, Disp: 2}, y)
		c.VMOVSS(f16(Mem{Base: xb}), dx)
	}
	for r := 0; r < 4; r++ {
		m := Mem{Base: b}
		switch r {
		case 1:
			m = m.Idx(ws, 1)
		case 2:
			m = m.Idx(ws, 2)
		case 3:
			m = m.Idx(ws3, 1)
		}
		c.Commentf("Row %d.", r)
		q, mag := q32Decode(k, !k.min, cs, m)
		p := top.YMM()
		if k.min {
			c.VPMADDUBSW(y, q, p)
		} else {
			c.VPSIGNB(q, y, p)
			c.VPMADDUBSW(p, mag, p)
		}
		c.VPMADDWD(cs.ones, p, p)
		c.VCVTDQ2PS(p, p)
		dy := top.YMM()
		c.VMULSS(f16(m), dx, dy.AsX())
		c.VBROADCASTSS(dy.AsX(), dy)
		c.VFMADD231PS(p, dy, acc[r])
		if k.min {
			s := top.XMM()
			mw := f16(m.Offset(2))
			c.VMOVSS(sp(4*r), s)
			c.VFMADD231SS(mw, sx, s)
			c.VMOVSS(s, sp(4*r))
		}
	}
	c.ADDQ(U8(k.bs), b)
	c.ADDQ(U8(k.xbs), xb)
	c.DECQ(n)
	c.JNZ(LabelRef("loop"))

	c.Label("groupdone")
	for r := 0; r < 4; r++ {
		hsum(acc[r])
		if k.min {
			c.VADDSS(sp(4*r), acc[r].AsX(), acc[r].AsX())
		}
		c.VMOVSS(acc[r].AsX(), Mem{Base: out, Disp: 4 * r})
	}
	c.ADDQ(U8(16), out)
	c.LEAQ(Mem{Base: w, Index: ws, Scale: 4}, w)
	c.DECQ(groups)
	c.JNZ(LabelRef("group"))

	c.Label("done")
	c.VZEROUPPER()
	c.RET()
}

// q32 writes the lanes kernels.
func q32() {
	q32Data()
	for _, k := range q32Types {
		q32Lanes(k)
	}
	for _, k := range q32Types {
		q32Rows4(k)
	}
	for _, i := range []int{1, 0, 2} {
		q32RowsV(q32Types[i])
	}
}

// q32RowsV writes the VNNI form (AVX-512 VL and VNNI, 1 to 8 tokens per
// pass): the weights' quants as unsigned bytes (Q5_0's as q+16), the
// activations in the VNNI layouts of package tensor's dotq32v_amd64.go,
// where d_x (and s_x) are float32 and, for Q5_0, each lane's -16·Σy is
// stored: VPDPBUSD started from it leaves exactly ggml's lane sums. Token
// t accumulates in Y16+t and its summs in X24+t, physical registers, so
// that the decoding's VEX-only instructions get Y0-Y15.
func q32RowsV(k q32Type) {
	name := strings.Replace(k.name, "RowsN", "RowsV", 1)
	text(name, NOSPLIT, q32Sig)
	switch name {
	case "q4_1RowsV":
		c.Doc("q4_1RowsV, q5_0RowsV and q5_1RowsV compute, over nb blocks, for ntok (1",
			"to 8) activation rows in their VNNI layout,",
			"",
			"\tfor t := range ntok { for r := range rows {",
			"\t\tout[t*ostride+r] = dot<type>Generic(w[r*wstride:], Q8_1 or Q8_0 form of x[t*xstride:], 32*nb) } }")
	default:
		c.Doc(fmt.Sprintf("%s is q4_1RowsV for %s.", name, k.typ))
	}
	c.Pragma("noescape")
	xbs := 40 // q8_1VNNISize
	if !k.min {
		xbs = 68 // q8LanesVNNISize
	}
	w, ws, rows, x, xs, ntok, out := ld("w", 0), ld("wstride", 8), ld("rows", 16), ld("x", 24), ld("xstride", 32), ld("ntok", 40), ld("out", 56)
	tab := gp64()
	c.MOVQ(goSym("f16Table"), tab)
	f16 := f16At(tab)
	cs := q32Consts(k, false)
	c.TESTQ(rows, rows)
	c.JZ(LabelRef("done"))

	c.Label("row")
	b, xb, n := gp64(), gp64(), gp64()
	c.MOVQ(w, b)
	c.MOVQ(x, xb)
	c.MOVQ(arg("nb", 48), n)
	for t := 0; t < 8; t++ {
		c.VPXORD(Y(16+t), Y(16+t), Y(16+t))
	}
	if k.min {
		for t := 0; t < 8; t++ {
			c.VPXORD(X(24+t), X(24+t), X(24+t))
		}
	}
	c.TESTQ(n, n)
	c.JZ(LabelRef("rowdone"))

	c.Label("loop")
	q, _ := q32Decode(k, false, cs, Mem{Base: b})
	wd, wm := top.YMM(), top.XMM()
	c.VBROADCASTSS(f16(Mem{Base: b}), wd)
	if k.min {
		c.VMOVSS(f16(Mem{Base: b, Disp: 2}), wm)
	}
	p := gp64()
	c.MOVQ(xb, p)
	for t := 0; t < 8; t++ {
		if t > 0 {
			c.CMPQ(ntok, U8(t))
			c.JLE(LabelRef("tokdone"))
			c.ADDQ(xs, p)
		}
		s, f := top.YMM(), top.YMM()
		if k.min {
			c.VPXOR(s, s, s)
			vpdpbusd(Mem{Base: p}, q, s)
			c.VCVTDQ2PS(s, s)
			c.VMULPS_BCST(Mem{Base: p, Disp: 32}, wd, f)
			c.VFMADD231PS(s, f, Y(16+t))
			c.VFMADD231SS(Mem{Base: p, Disp: 36}, wm, X(24+t))
		} else {
			c.VMOVDQU32(Mem{Base: p, Disp: 32}, s)
			vpdpbusd(Mem{Base: p}, q, s)
			c.VCVTDQ2PS(s, s)
			c.VMULPS_BCST(Mem{Base: p, Disp: 64}, wd, f)
			c.VFMADD231PS(s, f, Y(16+t))
		}
	}

	c.Label("tokdone")
	c.ADDQ(U8(k.bs), b)
	c.ADDQ(U8(xbs), xb)
	c.DECQ(n)
	c.JNZ(LabelRef("loop"))

	c.Label("rowdone")
	os, o := gp64(), gp64()
	c.MOVQ(arg("ostride", 64), os)
	c.SHLQ(U8(2), os)
	c.MOVQ(out, o)
	for t := 0; t < 8; t++ {
		if t > 0 {
			c.CMPQ(ntok, U8(t))
			c.JLE(LabelRef("stored"))
			c.ADDQ(os, o)
		}
		a := top.YMM()
		c.VMOVAPS(Y(16+t), a)
		hsum(a)
		if k.min {
			c.VADDSS(X(24+t), a.AsX(), a.AsX())
		}
		c.VMOVSS(a.AsX(), Mem{Base: o})
	}

	c.Label("stored")
	rowsEnd(out, w, ws, rows)
}
