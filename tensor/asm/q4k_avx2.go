package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/attr"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The AVX2 T-token Q4_K kernels: the single-row AVX2 kernels' integer work
// with each weight block decoded once for all T tokens, in VEX
// instructions and virtual registers. Per 64 elements and token, two
// VPMADDUBSW multiply the nibbles by the token's quants, two VPMADDWD apply
// the sub-blocks' scales and two VPADDD add the products into the token's
// int32 lanes; per block the lanes are reduced into one lane per token
// (tree) and the float work, two fused multiply-adds, runs once for all
// tokens on those lanes, as the VNNI kernels' does. The float operations
// of each output are dotQ4KRef's, so a token's results are those of the
// one-token kernels, bit for bit. q4KRowsT<T>AVX2 take the activation
// scales and Σ bsums·mins from the VNNI kernels' frame tables (q4KTables;
// at most maxBlocks blocks); q4KRowsT<T>AVX2W, for wider rows, gather the
// scales and compute each token's Σ bsums·mins (one VPMADDWD and a second
// tree) per block.

// q4KAVX2MaxT is the most tokens one AVX2 Q4_K kernel takes: T lanes and
// nine vectors (the mask, acc, accm and a step's six) fit in Y0-Y15
// with room for what avo's allocator keeps live beside them.
const q4KAVX2MaxT = 6

func q4KAVX2(T int, wide bool) {
	name := fmt.Sprintf("q4KRowsT%dAVX2", T)
	limit := "0 < nb ≤ kMaxQ4KTBlocks"
	if wide {
		name += "W"
		limit = "nb > 0"
	}
	const (
		mins     = 32 // the block's mins as doubled words
		frameRow = 64
		tables   = 96
	)
	attrs := NOSPLIT
	if !wide {
		attrs = 0 // the tables make a large frame: the stack may need to grow
	}
	text(name, attrs, kSig)
	if T == 2 {
		c.Doc(
			name+" runs T activation rows (Q8_K, at x + t·xstride) through one",
			"pass over rows Q4_K weight rows (at w + r·wstride, "+limit+" blocks",
			"each), writing out[t·ostride + r], bit for bit",
			"",
			"\tdotQ4KRef(w[r*wstride:], x[t*xstride:], 256*nb)",
			"",
			fmt.Sprintf("for every r < rows and t < T (here T = 2; up to %d; AVX2, FMA, F16C).", q4KAVX2MaxT))
		c.Pragma("noescape")
	} else {
		kDoc(name, "Q4_K", T)
	}
	frame := frameRow + 32
	if !wide {
		frame = tables + maxBlocks*q4KTable
	}
	c.AllocLocal(frame)
	c.Comment(
		"Frame: 0-31 the block's scales and 32-63 its mins, as doubled words; 64",
		"the weight row, 72 the rows left, 80 the output pointer, 88 the end of",
		"the tables; from 96, nb tables (q4KTable).")
	rowHeader(frameRow)
	var (
		tk        *tokens
		tab, n    GPVirtual
		m0F       = top.YMM()
		acc, accm = top.YMM(), top.YMM()
	)
	if wide {
		tk, n = newTokens(T, gp64()), gp64()
	} else {
		tk, tab = q4KTables(name, T, frameRow, tables)
	}
	c.VMOVDQU(ktMask0F, m0F)

	c.Label(name + "row")
	w := gp64()
	c.MOVQ(sp(frameRow), w)
	if wide {
		c.MOVQ(arg("xstride", 32), tk.stride)
		c.MOVQ(arg("nb", 40), n)
	}
	tk.load()
	if !wide {
		c.LEAQ(sp(tables), tab)
	}
	c.VXORPS(acc, acc, acc)
	c.VXORPS(accm, accm, accm)

	c.Label(name + "blk")
	q4KDecode(w, mins, top.XMM(), top.YMM(), top.YMM(), top.YMM())
	lanes := make([]vreg, T)
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
				lanes[t] = top.YMM()
				c.VPADDD(b, a, lanes[t])
			} else {
				c.VPADDD(a, lanes[t], lanes[t])
				c.VPADDD(b, lanes[t], lanes[t])
			}
		}
	}
	c.Comment("isum_t and imin_t = Σ bsums·mins in lane t, as floats.")
	isum, imin, tmp := top.YMM(), top.YMM(), top.YMM()
	tree(lanes, tmp, isum, true)
	var xd Op
	if wide {
		mw := top.YMM()
		c.VMOVDQU(sp(mins), mw)
		mv := make([]vreg, T)
		for t := range mv {
			mv[t] = top.YMM()
			c.VPMADDWD(tk.at(t, 260), mw, mv[t])
		}
		tree(mv, tmp, imin, true)
		xd = tokenScales(tk)
	} else {
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
		xd = Mem{Base: tab}
	}
	c.VCVTDQ2PS(isum, isum)
	c.VCVTDQ2PS(imin, imin)
	c.Comment("acc = fma(isum, wd·xd, acc); accm = fma(imin, wdmin·xd, accm), lane t token t's.")
	d := halves(Mem{Base: w})
	dm := top.XMM()
	c.VMOVSHDUP(d, dm)
	wd, wdmin := broadcastHalf(d), broadcastHalf(dm)
	c.VMULPS(xd, wd, wd)
	c.VMULPS(xd, wdmin, wdmin)
	c.VFMADD231PS(wd, isum, acc)
	c.VFMADD231PS(wdmin, imin, accm)
	if wide {
		blockEnd(name, 144, w, tk, n)
	} else {
		q4KAdvance(w, tk, tab)
		c.CMPQ(tab, sp(frameRow+24))
		c.JNE(LabelRef(name + "blk"))
	}

	c.Comment("out[t·ostride + r] = acc − accm for each token.")
	c.VSUBPS(accm, acc, acc)
	out, os := gp64(), gp64()
	c.MOVQ(sp(frameRow+16), out)
	c.MOVQ(arg("ostride", 56), os)
	c.SHLQ(U8(2), os)
	storeLanesVirtual(T, acc, out, os)
	nextRow(frameRow, name+"row")
}

// tokenScales returns the tokens' activation scales (the float32 at the
// start of each one's block) in lanes 0..T-1 of a new register.
func tokenScales(tk *tokens) VecVirtual {
	xd, hi := top.YMM(), top.XMM()
	for t := 0; t < tk.T; t++ {
		dst := xd.AsX()
		if t >= 4 {
			dst = hi
		}
		if t%4 == 0 {
			c.VMOVSS(tk.at(t, 0), dst)
		} else {
			c.VINSERTPS(U8((t%4)<<4), tk.at(t, 0), dst, dst)
		}
	}
	if tk.T > 4 {
		c.VINSERTF128(U8(1), hi, xd, xd)
	}
	return xd
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
