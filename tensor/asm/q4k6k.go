package main

import (
	"fmt"
	"strings"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// kSig is the signature of every T-token kernel.
const kSig = "func(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)"

// kDoc is the declaration's comment of a T-token kernel of the named type:
// the contract and its reference loop for T = 2 (with more), a line
// pointing there for the others.
func kDoc(name, typ string, T int, more ...string) {
	if T != 2 {
		c.Doc(fmt.Sprintf("%s is %s for t < %d.", name, strings.Replace(name, fmt.Sprintf("T%d", T), "T2", 1), T))
		c.Pragma("noescape")
		return
	}
	c.Doc(append([]string{
		fmt.Sprintf("%s runs T activation rows (Q8_K, at x + t·xstride) through one", name),
		fmt.Sprintf("pass over rows %s weight rows (at w + r·wstride, nb > 0 blocks each),", typ),
		"writing out[t·ostride + r], bit for bit",
		"",
		fmt.Sprintf("\tdot%sRef(w[r*wstride:], x[t*xstride:], 256*nb)", refName(typ)),
		"",
		"for every r < rows and t < T (here T = 2; " + kf.isa() + ").",
	}, more...)...)
	c.Pragma("noescape")
}

func refName(typ string) string {
	switch typ {
	case "Q4_K":
		return "Q4K"
	case "Q6_K":
		return "Q6K"
	case "Q2_K":
		return "Q2K"
	case "Q3_K":
		return "Q3K"
	case "Q5_K":
		return "Q5K"
	}
	return "IQ4XS"
}

// q4KTable is the size of a Q4_K kernel's per-block table in its frame:
// the eight tokens' activation scales (float32) at 0, then for k < 8 the
// eight tokens' bsums pair k (two int16, as one dword) at 32+32k.
const q4KTable = 288

// q4KSteps emits the integer work of one Q4_K block (weights at w, scales
// decoded into the frame) for T tokens into Y16+base+t.
func q4KSteps(T, base int, w GPVirtual, tk *tokens) {
	for s := 0; s < 4; s++ {
		c.VMOVDQU(Mem{Base: w, Disp: 16 + 32*s}, Y5)
		c.VPSRLW(U8(4), Y5, Y6)
		c.VPAND(Y15, Y5, Y5)
		c.VPAND(Y15, Y6, Y6)
		c.VPBROADCASTQ(sp(8*s), Y7)
		c.VPSHUFD(U8(0x50), Y7, Y7)
		for t := 0; t < T; t++ {
			t0, t1 := Y(9+2*(t&1)), Y(10+2*(t&1))
			acc := Y(16 + base + t)
			c.VPXORD(t0, t0, t0)
			c.VPXORD(t1, t1, t1)
			vpdpbusd(tk.at(t, 4+64*s), Y5, t0)
			vpdpbusd(tk.at(t, 36+64*s), Y6, t1)
			c.VPACKSSDW(t1, t0, t0)
			if s == 0 {
				c.VPMADDWD(Y7, t0, acc)
			} else {
				vpdpwssd(Y7, t0, acc)
			}
		}
	}
}

// q4KTail emits the float work of the previous block (weights at w-144,
// table at tab-q4KTable, mins as doubled words at mins(SP)) from its sums
// in Y16+base+t: isum and imin per token lane, then acc (Y13) and accm
// (Y14) updated with one fused multiply-add each. Uses Y0-Y4 and Y8.
func q4KTail(T, base, mins int, w, tab GPVirtual) {
	var vi []vreg
	for t := 0; t < T; t++ {
		vi = append(vi, Y(16+base+t))
	}
	tree(vi, Y0, Y1, false)
	c.VPXORD(Y2, Y2, Y2)
	for k := 0; k < 8; k++ {
		r := Y([]int{3, 8}[k&1])
		c.VMOVDQU(Mem{Base: tab, Disp: 32 + 32*k - q4KTable}, r)
		vpdpwssdBcst(sp(mins+4*k), r, Y2)
	}
	c.VCVTDQ2PS(Y1, Y1)
	c.VCVTDQ2PS(Y2, Y2)
	loadHalves(Mem{Base: w, Disp: -144}, 3)
	c.VBROADCASTSS(X3, Y4)
	c.VMOVSHDUP(X3, X3)
	c.VBROADCASTSS(X3, Y3)
	c.VMULPS(Mem{Base: tab, Disp: -q4KTable}, Y4, Y4)
	c.VMULPS(Mem{Base: tab, Disp: -q4KTable}, Y3, Y3)
	c.VFMADD231PS(Y4, Y1, Y13)
	c.VFMADD231PS(Y3, Y2, Y14)
}

// q4KDecode unpacks the block at w's scales into 0(SP) and its mins into
// mins(SP), as doubled words, through the registers x (16 bytes), y, lo and
// hi.
func q4KDecode(w GPVirtual, mins int, x, y, lo, hi vreg) {
	q4KScales(w, x)
	c.VPMOVZXBW(x.AsX(), y.AsY())
	c.VPUNPCKLWD(y.AsY(), y.AsY(), lo.AsY())
	c.VPUNPCKHWD(y.AsY(), y.AsY(), hi.AsY())
	c.VMOVDQU(lo.AsX(), sp(0))
	c.VMOVDQU(hi.AsX(), sp(16))
	c.VEXTRACTI128(U8(1), lo.AsY(), sp(mins))
	c.VEXTRACTI128(U8(1), hi.AsY(), sp(mins+16))
}

func q4KAdvance(w GPVirtual, tk *tokens, tab GPVirtual) {
	c.ADDQ(U32(144), w)
	tk.advance()
	c.ADDQ(U32(q4KTable), tab)
}

func q4K(T int) {
	kf = vnniForm(T)
	name := fmt.Sprintf("q4KRowsT%dVNNI", T)
	const (
		minsA, minsB = 32, 64
		frameRow     = 96
		tables       = 128
		setA, setB   = 0, 8
	)
	text(name, 0, kSig)
	kDoc(name, "Q4_K", T, "",
		fmt.Sprintf("nb ≤ kMaxQ4KTBlocks (%d): the kernel first copies each block's activation", maxBlocks),
		"scales and bsums into tables in its frame, token lanes side by side, so that",
		"per weight block one vector load gives all tokens' scales and eight",
		"VPDPWSSDs give all tokens' Σ bsums·mins. Software-pipelined by two blocks:",
		"the integer sums of even blocks go to Y16+t and of odd blocks to Y24+t,",
		"and each block's float work (tree, Σ bsums·mins, fused multiply-adds) is",
		"interleaved with the next block's integer work.")
	c.AllocLocal(tables + maxBlocks*q4KTable)
	c.Comment(
		"Frame: 0-31 the block's scales, 32-63 and 64-95 the mins of even and odd",
		"blocks, as doubled words; 96 the weight row, 104 the rows left, 112 the",
		"output pointer, 120 the end of the tables; from 128, nb tables (q4KTable).")
	rowHeader(frameRow)
	tk, tab := q4KTables(name, T, frameRow, tables)
	c.VMOVDQU(ktMask0F, Y15)
	c.Label(name + "row")
	w := gp64()
	c.MOVQ(sp(frameRow), w)
	tk.load()
	c.LEAQ(sp(tables), tab)
	c.VXORPS(Y13, Y13, Y13)
	c.VXORPS(Y14, Y14, Y14)
	c.Comment("Block 0: integer work only.")
	q4KDecode(w, minsA, X1, Y3, Y5, Y6)
	q4KSteps(T, setA, w, tk)
	q4KAdvance(w, tk, tab)
	c.CMPQ(tab, sp(frameRow+24))
	c.JEQ(LabelRef(name + "lastA"))
	c.Label(name + "blk")
	c.Comment("An odd block, with the float work of the even block before it.")
	q4KDecode(w, minsB, X1, Y3, Y5, Y6)
	interleave(capture(func() { q4KSteps(T, setB, w, tk) }), capture(func() { q4KTail(T, setA, minsA, w, tab) }))
	q4KAdvance(w, tk, tab)
	c.CMPQ(tab, sp(frameRow+24))
	c.JEQ(LabelRef(name + "lastB"))
	c.Comment("An even block, with the float work of the odd block before it.")
	q4KDecode(w, minsA, X1, Y3, Y5, Y6)
	interleave(capture(func() { q4KSteps(T, setA, w, tk) }), capture(func() { q4KTail(T, setB, minsB, w, tab) }))
	q4KAdvance(w, tk, tab)
	c.CMPQ(tab, sp(frameRow+24))
	c.JNE(LabelRef(name + "blk"))
	c.Label(name + "lastA")
	q4KTail(T, setA, minsA, w, tab)
	c.JMP(LabelRef(name + "store"))
	c.Label(name + "lastB")
	q4KTail(T, setB, minsB, w, tab)
	c.Label(name + "store")
	c.Comment("out[t·ostride + r] = acc − accm for each token.")
	c.VSUBPS(Y14, Y13, Y13)
	out, os := gp64(), gp64()
	c.MOVQ(sp(frameRow+16), out)
	c.MOVQ(arg("ostride", 56), os)
	c.SHLQ(U8(2), os)
	storeLanes(T, 13, out, os)
	nextRow(frameRow, name+"row")
}

// q4KTables emits the prologue of the Q4_K T-token kernels: from the tokens'
// activation blocks, per block a q4KTable in the frame from tables on (each
// token's scale and bsums pairs, token-major, lanes T..7 zero), and the end
// of the tables at frameRow+24. It returns the tokens' registers and the
// table pointer.
func q4KTables(name string, T, frameRow, tables int) (*tokens, GPVirtual) {
	c.Comment("Tables: per block, each token's scale and bsums pairs, token-major (lanes T..7 zero).")
	xs := gp64()
	c.MOVQ(arg("xstride", 32), xs)
	tk := newTokens(T, xs)
	tk.load()
	tab := gp64()
	c.LEAQ(sp(tables), tab)
	n := gp64()
	c.MOVQ(arg("nb", 40), n)
	c.Label(name + "tab")
	for k := -1; k < 8; k++ {
		src, dst := 0, 0
		if k >= 0 {
			src, dst = 260+4*k, 32+32*k
		}
		for t := 0; t < 8; t++ {
			d := Mem{Base: tab, Disp: dst + 4*t}
			if t < T {
				v := gp32()
				c.MOVL(tk.at(t, src), v)
				c.MOVL(v, d)
			} else {
				c.MOVL(U32(0), d)
			}
		}
	}
	c.ADDQ(U32(q4KTable), tab)
	tk.advance()
	c.DECQ(n)
	c.JNZ(LabelRef(name + "tab"))
	c.MOVQ(tab, sp(frameRow+24))
	return tk, tab
}

// nextRow moves the output pointer at off+16(SP) on by one float32 and the
// weight row at off(SP) by wstride, and loops to label while rows are left
// (off+8(SP)); then returns.
func nextRow(off int, label string) {
	c.ADDQ(U8(4), sp(off+16))
	r := gp64()
	c.MOVQ(sp(off), r)
	c.ADDQ(arg("wstride", 8), r)
	c.MOVQ(r, sp(off))
	c.DECQ(sp(off + 8))
	c.JNZ(LabelRef(label))
	c.VZEROUPPER()
	c.RET()
}

// q6Masks holds the Q6_K kernels' byte masks 0x0f, 0x03, 0x0c, 0x30, 0xc0.
type q6Masks struct{ m0F, m03, m0C, m30, mC0 VecVirtual }

// q6Value builds in dst the 32 six-bit values of group g (0-3) of the half
// whose ql bytes are in ql0, ql1 and qh bytes in qh (shifting ql0 or ql1
// right by four for g = 2 or 3): the qh bits moved to bits 4-5, then one
// VPTERNLOGD (0xF8: dst | ql&0x0f) adds the low nibble.
func q6Value(g int, dst, ql0, ql1, qh VecVirtual, m q6Masks) {
	ql := ql0
	switch g {
	case 0:
		c.VPAND(m.m03, qh, dst)
		c.VPSLLW(U8(4), dst, dst)
	case 1:
		ql = ql1
		c.VPAND(m.m0C, qh, dst)
		c.VPSLLW(U8(2), dst, dst)
	case 2:
		c.VPSRLW(U8(4), ql0, ql0)
		c.VPAND(m.m30, qh, dst)
	case 3:
		ql = ql1
		c.VPSRLW(U8(4), ql1, ql1)
		c.VPAND(m.mC0, qh, dst)
		c.VPSRLW(U8(2), dst, dst)
	}
	c.VPTERNLOGD(U8(0xf8), m.m0F, ql, dst)
}

func q6K(T int) {
	kf = vnniForm(T)
	name := fmt.Sprintf("q6KRowsT%dVNNI", T)
	text(name, NOSPLIT, kSig)
	kDoc(name, "Q6_K", T)
	c.AllocLocal(24)
	rowHeader(0)
	m := q6Masks{top.YMM(), top.YMM(), top.YMM(), top.YMM(), top.YMM()}
	c.VMOVDQU(ktMask0F, m.m0F)
	c.VMOVDQU(ktMask03, m.m03)
	c.VMOVDQU(ktMask0C, m.m0C)
	c.VMOVDQU(ktMask30, m.m30)
	c.VMOVDQU(ktMaskC0, m.mC0)
	k := gp32()
	c.MOVL(U32(0xaaaa), k)
	c.KMOVW(k, K1)
	c.Label(name + "row")
	w, tk, n := rowStart(T)
	c.Label(name + "blk")
	c.Comment("Each token's lanes start at −32·Σ scales·bsums (the scales as words, times −32).")
	sw := top.YMM()
	c.VPMOVSXBW(Mem{Base: w, Disp: 192}, sw)
	q6KLanesStart(sw, tk)
	for h := 0; h < 2; h++ {
		ql0, ql1, qh := q6KHalf(w, h)
		for g := 0; g < 4; g += 2 {
			c.Commentf("Elements %d-%d and %d-%d; their scales as word pairs.",
				128*h+32*g, 128*h+32*g+31, 128*h+32*g+32, 128*h+32*g+63)
			v0, v1, pairs := top.YMM(), top.YMM(), top.YMM()
			q6Value(g, v0, ql0, ql1, qh, m)
			q6Value(g+1, v1, ql0, ql1, qh, m)
			c.VMOVDQU(ktQ6PairIdx.Offset(64*h+32*(g/2)), pairs)
			c.VPERMW(sw, pairs, pairs)
			for t := 0; t < T; t++ {
				a, b := top.YMM(), top.YMM()
				c.VPXOR(a, a, a) // VPXOR: avo marks its zeroing idiom, not VPXORD's
				c.VPXOR(b, b, b)
				vpdpbusd(tk.at(t, 4+128*h+32*g), v0, a)
				vpdpbusd(tk.at(t, 36+128*h+32*g), v1, b)
				c.VPSLLD(U8(16), b, b)
				c.VMOVDQU16(b, K1, a)
				kf.madd(pairs, a, t)
			}
		}
	}
	c.Comment("acc_t[L] = fma(xd_t·wd, float32(lane_t[L]), acc_t[L]).")
	ktFuse(tk, broadcastHalf(half(Mem{Base: w, Disp: 208})))
	blockEnd(name, 210, w, tk, n)
	c.Comment("out[t·ostride + r] = hsum8(acc_t), in hsum_float_8's order.")
	storeHsum(T, -1)
	nextRow(0, name+"row")
}

// q6KLanesStart sets each token's int32 lanes to −32·Σ scales·bsums, from
// the block's scales as words in sw: the scales times −32 as words (exact:
// |32·s| < 2^15), then one VPMADDWD with the token's bsums.
func q6KLanesStart(sw VecVirtual, tk *tokens) {
	s32, z := top.YMM(), top.YMM()
	c.VPSLLW(U8(5), sw, s32)
	c.VPXOR(z, z, z)
	c.VPSUBW(s32, z, s32)
	for t := 0; t < tk.T; t++ {
		c.VPMADDWD(tk.at(t, 260), s32, kf.lanes[t])
	}
}

// q6KHalf loads the ql bytes of half h (0 or 1) of the Q6_K block at w,
// both 32-byte runs, and its 32 qh bytes.
func q6KHalf(w GPVirtual, h int) (ql0, ql1, qh VecVirtual) {
	ql0, ql1, qh = top.YMM(), top.YMM(), top.YMM()
	c.VMOVDQU(Mem{Base: w, Disp: 64 * h}, ql0)
	c.VMOVDQU(Mem{Base: w, Disp: 64*h + 32}, ql1)
	c.VMOVDQU(Mem{Base: w, Disp: 128 + 32*h}, qh)
	return ql0, ql1, qh
}

// rowHeader copies w, rows and out to the frame's words at off, off+8 and
// off+16.
func rowHeader(off int) {
	c.MOVQ(ld("w", 0), sp(off))
	c.MOVQ(ld("rows", 16), sp(off+8))
	c.MOVQ(ld("out", 48), sp(off+16))
}

// rowStart begins a weight row of a kernel whose frame starts as
// rowHeader's: it returns the weight pointer, the tokens' pointers and the
// block counter, and clears the tokens' float lanes (kf).
func rowStart(T int) (GPVirtual, *tokens, GPVirtual) {
	w := gp64()
	c.MOVQ(sp(0), w)
	xs := gp64()
	c.MOVQ(arg("xstride", 32), xs)
	tk := newTokens(T, xs)
	tk.load()
	n := gp64()
	c.MOVQ(arg("nb", 40), n)
	kf.clearAcc()
	return w, tk, n
}

// blockEnd moves the weights on by bs bytes and the tokens by one block,
// and loops to name+"blk" while blocks are left.
func blockEnd(name string, bs int, w GPVirtual, tk *tokens, n GPVirtual) {
	c.ADDQ(U32(bs), w)
	tk.advance()
	c.DECQ(n)
	c.JNZ(LabelRef(name + "blk"))
}

// storeHsum writes hsum8 of token t's float lanes (plus, where add ≥ 0, the float at
// add+4t(SP)) for each token, at out, out+ostride, ... (out at 16(SP)).
func storeHsum(T, add int) {
	out, os := gp64(), gp64()
	c.MOVQ(sp(16), out)
	c.MOVQ(arg("ostride", 56), os)
	c.SHLQ(U8(2), os)
	for t := 0; t < T; t++ {
		a := top.YMM()
		c.VMOVAPS(kf.acc(t), a)
		sum := khsum8(a)
		if add >= 0 {
			c.VADDSS(sp(add+4*t), sum, sum)
		}
		c.VMOVSS(sum, Mem{Base: out})
		if t < T-1 {
			c.ADDQ(os, out)
		}
	}
}
