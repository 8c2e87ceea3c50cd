package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The AVX2 T-token Q4_K kernels (q4KRowsT<T>AVX2): the VNNI kernels'
// design (q4K) in VEX instructions and 16 vector registers, all virtual.
// Per 64 elements and token, two VPMADDUBSW multiply the nibbles by the
// token's quants, two VPMADDWD apply the sub-blocks' scales and two VPADDD
// add the products into the token's int32 lanes (the single-row AVX2
// kernels' integer work); per block the tokens' lanes are reduced into one
// lane each (tree) and the float work, two fused multiply-adds, runs once
// for all tokens on those lanes, with the activation scales and the
// Σ bsums·mins from the frame tables q4KTables builds. The float operations
// of each output are dotQ4KRef's, so a token's results are those of the
// one-token kernels, bit for bit.

// q4KAVX2MaxT is the most tokens one AVX2 Q4_K kernel takes: T lanes and
// nine vectors (the mask, acc, accm and a step's six) fit in Y0-Y15.
const q4KAVX2MaxT = 7

func q4KAVX2(T int) {
	name := fmt.Sprintf("q4KRowsT%dAVX2", T)
	const (
		mins     = 32 // the block's mins as doubled words
		frameRow = 64
		tables   = 96
	)
	text(name, 0, kSig)
	if T == 2 {
		c.Doc(
			name+" runs T activation rows (Q8_K, at x + t·xstride) through one",
			"pass over rows Q4_K weight rows (at w + r·wstride, 0 < nb ≤ kMaxQ4KTBlocks",
			"blocks each), writing out[t·ostride + r], bit for bit",
			"",
			"\tdotQ4KRef(w[r*wstride:], x[t*xstride:], 256*nb)",
			"",
			fmt.Sprintf("for every r < rows and t < T (here T = 2; up to %d; AVX2, FMA, F16C).", q4KAVX2MaxT))
		c.Pragma("noescape")
	} else {
		kDoc(name, "Q4_K", T)
	}
	c.AllocLocal(tables + maxBlocks*q4KTable)
	c.Comment(
		"Frame: 0-31 the block's scales and 32-63 its mins, as doubled words; 64",
		"the weight row, 72 the rows left, 80 the output pointer, 88 the end of",
		"the tables; from 96, nb tables (q4KTable).")
	rowHeader(frameRow)
	tk, tab := q4KTables(name, T, frameRow, tables)
	m0F := top.YMM()
	c.VMOVDQU(ktMask0F, m0F)

	c.Label(name + "row")
	w := gp64()
	c.MOVQ(sp(frameRow), w)
	tk.load()
	c.LEAQ(sp(tables), tab)
	acc, accm := top.YMM(), top.YMM()
	c.VXORPS(acc, acc, acc)
	c.VXORPS(accm, accm, accm)

	c.Label(name + "blk")
	q4KDecode(w, mins, top.XMM(), top.YMM(), top.YMM(), top.YMM())
	lanes := make([]VecVirtual, T)
	for t := range lanes {
		lanes[t] = top.YMM()
	}
	for s := 0; s < 4; s++ {
		c.Commentf("Sub-blocks %d and %d: the low and high nibbles of bytes %d-%d.", 2*s, 2*s+1, 16+32*s, 47+32*s)
		lo, hi, s0, s1 := top.YMM(), top.YMM(), top.YMM(), top.YMM()
		c.VMOVDQU(Mem{Base: w, Disp: 16 + 32*s}, lo)
		c.VPSRLW(U8(4), lo, hi)
		c.VPAND(m0F, lo, lo)
		c.VPAND(m0F, hi, hi)
		c.VPBROADCASTD(sp(8*s), s0)
		c.VPBROADCASTD(sp(8*s+4), s1)
		for t := 0; t < T; t++ {
			a, b := top.YMM(), top.YMM()
			c.VPMADDUBSW(tk.at(t, 4+64*s), lo, a)
			c.VPMADDUBSW(tk.at(t, 36+64*s), hi, b)
			c.VPMADDWD(s0, a, a)
			c.VPMADDWD(s1, b, b)
			if s == 0 {
				c.VPADDD(b, a, lanes[t])
			} else {
				c.VPADDD(a, lanes[t], lanes[t])
				c.VPADDD(b, lanes[t], lanes[t])
			}
		}
	}
	c.Comment("isum_t and imin_t = Σ bsums·mins in lane t, as floats.")
	isum, tmp := top.YMM(), top.YMM()
	vi := make([]vreg, T)
	for t, l := range lanes {
		vi[t] = l
	}
	tree(vi, tmp, isum, true)
	imin := top.YMM()
	for k := 0; k < 8; k++ {
		m, p := top.YMM(), top.YMM()
		c.VPBROADCASTD(sp(mins+4*k), m)
		dst := p
		if k == 0 {
			dst = imin
		}
		c.VPMADDWD(Mem{Base: tab, Disp: 32 + 32*k}, m, dst)
		if k > 0 {
			c.VPADDD(p, imin, imin)
		}
	}
	c.VCVTDQ2PS(isum, isum)
	c.VCVTDQ2PS(imin, imin)
	c.Comment("acc = fma(isum, wd·xd, acc); accm = fma(imin, wdmin·xd, accm), lane t token t's.")
	d := halves(Mem{Base: w})
	dm := top.XMM()
	c.VMOVSHDUP(d, dm)
	wd, wdmin := broadcastHalf(d), broadcastHalf(dm)
	c.VMULPS(Mem{Base: tab}, wd, wd)
	c.VMULPS(Mem{Base: tab}, wdmin, wdmin)
	c.VFMADD231PS(wd, isum, acc)
	c.VFMADD231PS(wdmin, imin, accm)
	q4KAdvance(w, tk, tab)
	c.CMPQ(tab, sp(frameRow+24))
	c.JNE(LabelRef(name + "blk"))

	c.Comment("out[t·ostride + r] = acc − accm for each token.")
	c.VSUBPS(accm, acc, acc)
	out, os := gp64(), gp64()
	c.MOVQ(sp(frameRow+16), out)
	c.MOVQ(arg("ostride", 56), os)
	c.SHLQ(U8(2), os)
	storeLanesVirtual(T, acc, out, os)
	nextRow(frameRow, name+"row")
}

// storeLanesVirtual is storeLanes for the virtual register v.
func storeLanesVirtual(T int, v VecVirtual, out, os GPVirtual) {
	hi := top.XMM()
	for t := 0; t < T; t++ {
		src, lane := v.AsX(), t
		if t >= 4 {
			src, lane = hi, t-4
		}
		if t == 4 {
			c.VEXTRACTF128(U8(1), v, hi)
		}
		if lane == 0 {
			c.VMOVSS(src, Mem{Base: out})
		} else {
			c.VEXTRACTPS(U8(lane), src, Mem{Base: out})
		}
		if t < T-1 {
			c.ADDQ(os, out)
		}
	}
}
