package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/attr"

	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The AVX2 T-token Q6_K kernels (q6KRowsT<T>AVX2): the single-row AVX2
// kernel's operations (q6KRows in dot_k_amd64.s, ggml's AVX2 lanes) with
// each weight block decoded once for all T tokens, in virtual registers
// (the AVX2 ktForm).
// Per 32 elements and token, one VPMADDUBSW multiplies the six-bit values
// by the token's quants, one VPMADDWD applies the two 16-element
// sub-blocks' scales and one VPADDD adds them into the token's eight int32
// lanes, which start at −32·Σ scales·bsums (the scales times −32 as words:
// one VPMADDWD). Each token keeps ggml's eight float lanes, in registers
// for T ≤ q6KAVX2RegT, else in the frame, and its output is their
// hsum_float_8, as the one-token kernel's.

// q6KAVX2MaxT is the most tokens one AVX2 Q6_K kernel takes (T int32 lane
// vectors beside the eight a block's decoding uses); q6KAVX2RegT the most
// whose float lanes stay in registers.
const (
	q6KAVX2MaxT = 8
	q6KAVX2RegT = 4
)

func q6KAVX2(T int) {
	kf = avx2Form(T, 24, q6KAVX2RegT)
	name := fmt.Sprintf("q6KRowsT%dAVX2", T)
	text(name, NOSPLIT, kSig)
	kDoc(name, "Q6_K", T)
	c.AllocLocal(24 + kf.frame())
	c.Comment("Frame: 0 the weight row, 8 the rows left, 16 the output pointer; from 24 the tokens' float lanes past four tokens.")
	rowHeader(0)
	m0F := top.YMM()
	c.VMOVDQU(ktMask0F, m0F)
	c.Label(name + "row")
	w, tk, n := rowStart(T)
	c.Label(name + "blk")
	c.Comment("Each token's lanes start at −32·Σ scales·bsums.")
	sb, sw := top.XMM(), top.YMM()
	c.VMOVDQU(Mem{Base: w, Disp: 192}, sb)
	c.VPMOVSXBW(sb, sw)
	q6KLanesStart(sw, tk)
	for h := 0; h < 2; h++ {
		ql0, ql1, qh := q6KHalf(w, h)
		for g := 0; g < 4; g++ {
			c.Commentf("Elements %d-%d: their six-bit values and the scales of their two sub-blocks as words.",
				128*h+32*g, 128*h+32*g+31)
			v := q6ValueAVX2(g, ql0, ql1, qh, m0F)
			s8, sc := top.XMM(), top.YMM()
			c.VPSHUFB(ktScaleShuf.Offset(64*h+16*g), sb, s8)
			c.VPMOVSXBW(s8, sc)
			ktGroup(tk, v, sc, 4+128*h+32*g)
		}
	}
	c.Comment("acc_t[L] = fma(x_t.d·wd, float32(lane_t[L]), acc_t[L]).")
	ktFuse(tk, broadcastHalf(half(Mem{Base: w, Disp: 208})))
	blockEnd(name, 210, w, tk, n)
	c.Comment("out[t·ostride + r] = hsum8(acc_t), in hsum_float_8's order.")
	storeHsum(T, -1)
	nextRow(0, name+"row")
}

// q6ValueAVX2 returns the 32 six-bit values of group g (0-3) of the half
// whose ql bytes are in ql0 and ql1 and qh bytes in qh, as q6KRows builds
// them: the low (g < 2) or high nibbles of ql0 (g even) or ql1 (g odd),
// ORed with the qh bits of the group moved to bits 4-5.
func q6ValueAVX2(g int, ql0, ql1, qh, m0F VecVirtual) VecVirtual {
	ql := ql0
	if g%2 == 1 {
		ql = ql1
	}
	v, hb := top.YMM(), top.YMM()
	if g < 2 {
		c.VPAND(m0F, ql, v)
	} else {
		c.VPSRLW(U8(4), ql, v)
		c.VPAND(m0F, v, v)
	}
	switch g {
	case 0:
		c.VPAND(ktMask03, qh, hb)
		c.VPSLLW(U8(4), hb, hb)
	case 1:
		c.VPAND(ktMask0C, qh, hb)
		c.VPSLLW(U8(2), hb, hb)
	case 2:
		c.VPAND(ktMask30, qh, hb)
	case 3:
		c.VPAND(ktMaskC0, qh, hb)
		c.VPSRLW(U8(2), hb, hb)
	}
	c.VPOR(hb, v, v)
	return v
}
