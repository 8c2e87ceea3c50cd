package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The T-token kernels of Q2_K, Q3_K, Q5_K and IQ4_XS (see dot_k2_amd64.go
// and kquants_lanes.go in package tensor). Token t's lanes are in Y16+t,
// its eight float lanes in Y24+t; the weight decoding is done once per
// block for all tokens, and the float work per token is the single-row
// kernels', op for op.

// ktRows emits the row loop shared by these kernels: frame 0 the weight
// row, 8 the rows left, 16 the output pointer; per row the accumulators
// Y24+t are cleared and block runs nb times on the weight block w and the
// tokens' blocks; store writes the row's outputs.
func ktRows(name, typ string, T, frame, bs int, doc string, setup, rowInit func(), block func(w GPVirtual, tk *tokens), store func()) {
	text(name, NOSPLIT, kSig)
	kDoc(name, typ, T, "", doc)
	c.AllocLocal(frame)
	rowHeader(0)
	setup()
	c.Label(name + "row")
	w, tk, n := rowStart(T)
	if rowInit != nil {
		rowInit()
	}
	c.Label(name + "blk")
	block(w, tk)
	blockEnd(name, bs, w, tk, n)
	store()
	nextRow(0, name+"row")
}

// ktZeroLanes clears the int32 lanes Y16+t.
func ktZeroLanes(T int) {
	for t := 0; t < T; t++ {
		c.VPXORD(Y(16+t), Y(16+t), Y(16+t))
	}
}

// ktFuse emits acc_t = fma(x_t.d·w, float32(lanes_t), acc_t) for each token,
// with w broadcast in Y4.
func ktFuse(tk *tokens) {
	for t := 0; t < tk.T; t++ {
		tt := Y(9 + (t & 1))
		c.VCVTDQ2PS(Y(16+t), Y(16+t))
		c.VMULPS_BCST(tk.at(t, 0), Y4, tt)
		c.VFMADD231PS(tt, Y(16+t), Y(24+t))
	}
}

// ktGroup emits, for each token, lanes_t += VPMADDUBSW(x_t + xo, Y val)
// scaled by the words of Y sc.
func ktGroup(tk *tokens, val, sc, xo int) {
	for t := 0; t < tk.T; t++ {
		tmp := Y(10 + (t & 1))
		c.VPMADDUBSW(tk.at(t, xo), Y(val), tmp)
		vpdpwssd(Y(sc), tmp, Y(16+t))
	}
}

func q2KT(T int) {
	name := fmt.Sprintf("q2KRowsT%dVNNI", T)
	ktRows(name, "Q2_K", T, 24, 84, "Q2_K: per block the mins first (fused negative multiply-adds of mins·bsums pairs), then the quants; the Q2KLanes order only.",
		func() {
			c.VMOVDQU(ktMask0F, Y14)
			c.VMOVDQU(ktMask03, Y15)
		}, nil,
		func(w GPVirtual, tk *tokens) {
			c.Comment("X1 = scales, Y2 = mins as words, Y4 = wd, Y5 = wdmin.")
			c.VMOVDQU(Mem{Base: w}, X1)
			c.VPSRLW(U8(4), X1, X2)
			c.VPAND(X14, X2, X2)
			c.VPAND(X14, X1, X1)
			c.VPMOVZXBW(X2, Y2)
			loadHalves(Mem{Base: w, Disp: 80}, 5)
			c.VBROADCASTSS(X5, Y4)
			c.VMOVSHDUP(X5, X5)
			c.VBROADCASTSS(X5, Y5)
			c.Comment("acc_t = fma(−x_t.d·wdmin, float32(mins·bsums pairs), acc_t).")
			for t := 0; t < T; t++ {
				a, cc := Y(6+2*(t&1)), Y(7+2*(t&1))
				c.VPMADDWD(tk.at(t, 260), Y2, a)
				c.VCVTDQ2PS(a, a)
				c.VMULPS_BCST(tk.at(t, 0), Y5, cc)
				c.VFNMADD231PS(cc, a, Y(24+t))
			}
			ktZeroLanes(T)
			for g := 0; g < 8; g++ {
				if g%4 == 0 {
					c.VMOVDQU(Mem{Base: w, Disp: 16 + 32*(g/4)}, Y3)
				}
				c.Commentf("Group %d: two-bit values in Y12, the scales of sub-blocks %d and %d in Y13.", g, 2*g, 2*g+1)
				c.VPSRLW(U8(2*(g%4)), Y3, Y12)
				c.VPAND(Y15, Y12, Y12)
				c.VPSHUFB(ktScaleShuf.Offset(16*g), X1, X13)
				c.VPMOVZXBW(X13, Y13)
				ktGroup(tk, 12, 13, 4+32*g)
			}
			ktFuse(tk)
		},
		func() { storeHsum(T, -1) })
}

func q3KT(T int) {
	name := fmt.Sprintf("q3KRowsT%dVNNI", T)
	ktRows(name, "Q3_K", T, 24, 110, "Q3_K: ggml's Σ low·q8 − Σ 4·(1−high)·q8 in 16 bits, the scales unpacked with vector shifts.",
		func() {
			c.VMOVDQU(ktMask04, Y14)
			c.VMOVDQU(ktMask03, Y15)
		}, nil,
		func(w GPVirtual, tk *tokens) {
			c.Comment("X1 = the sixteen scales − 32: low nibbles of bytes 0-7, then their high nibbles,",
				"each with two bits of bytes 8-11 (quarter k shifted right by 2k) on top.")
			c.VMOVQ(Mem{Base: w, Disp: 96}, X1)
			c.VPINSRD(U8(2), Mem{Base: w, Disp: 104}, X1, X1)
			c.VPSRLW(U8(4), X1, X2)
			c.VPUNPCKLQDQ(X2, X1, X2)
			c.VPAND(ktMask0F, X2, X2)
			c.VPSHUFB(ktQ3High, X1, X1)
			c.VPSRLVD(ktQ3Shifts, X1, X1)
			c.VPAND(X15, X1, X1)
			c.VPSLLW(U8(4), X1, X1)
			c.VPOR(X2, X1, X1)
			c.VPSUBB(ktByte32, X1, X1)
			c.VMOVDQU(Mem{Base: w}, Y2)
			ktZeroLanes(T)
			for g := 0; g < 8; g++ {
				if g%4 == 0 {
					c.VMOVDQU(Mem{Base: w, Disp: 32 + 32*(g/4)}, Y3)
				}
				c.Commentf("Group %d: low bits in Y12, high-bit offsets in Y13 (hmask bit %d moved to bit 2), scales in Y5.", g, g)
				c.VPSRLW(U8(2*(g%4)), Y3, Y12)
				c.VPAND(Y15, Y12, Y12)
				switch {
				case g < 2:
					c.VPSLLW(U8(2-g), Y2, Y13)
				default:
					c.VPSRLW(U8(g-2), Y2, Y13)
				}
				c.VPANDN(Y14, Y13, Y13)
				c.VPSHUFB(ktScaleShuf.Offset(16*g), X1, X5)
				c.VPMOVSXBW(X5, Y5)
				for t := 0; t < T; t++ {
					a, cc := Y(6+2*(t&1)), Y(7+2*(t&1))
					c.VPMADDUBSW(tk.at(t, 4+32*g), Y12, a)
					c.VPMADDUBSW(tk.at(t, 4+32*g), Y13, cc)
					c.VPSUBW(cc, a, a)
					vpdpwssd(Y5, a, Y(16+t))
				}
			}
			loadHalf(Mem{Base: w, Disp: 108}, 4)
			c.VBROADCASTSS(X4, Y4)
			ktFuse(tk)
		},
		func() { storeHsum(T, -1) })
}

func q5KT(T int) {
	name := fmt.Sprintf("q5KRowsT%dVNNI", T)
	ktRows(name, "Q5_K", T, 96, 176, "Q5_K. Frame: 32-63 the block's scales as doubled words, 64-95 the tokens' summs (Y13 while running).",
		func() {
			c.VMOVDQU(ktMask0F, Y14)
		},
		func() { c.VXORPS(Y13, Y13, Y13) },
		func(w GPVirtual, tk *tokens) {
			q4KScales(w)
			c.VPMOVZXBW(X1, X3)
			c.VPUNPCKLWD(X3, X3, X5)
			c.VPUNPCKHWD(X3, X3, X6)
			c.VMOVDQU(X5, sp(32))
			c.VMOVDQU(X6, sp(48))
			c.Comment("imin_t = Σ mins[s]·int16(bsums[2s] + bsums[2s+1]) (VPHADDW's pair sums) into lane t of Y2.")
			c.VPSRLDQ(U8(8), X1, X3)
			c.VPMOVZXBW(X3, X3)
			var vi []int
			for t := 0; t < T; t++ {
				c.VMOVDQU(tk.at(t, 260), X(4+t))
				c.VPHADDW(tk.at(t, 276), X(4+t), X(4+t))
				c.VPMADDWD(X3, X(4+t), X(4+t))
				vi = append(vi, 4+t)
			}
			tree(vi, 0, 2)
			c.VCVTDQ2PS(Y2, Y2)
			c.Comment("Y12 = [x_t.d]·wdmin; summs_t = fma(imin_t, −x_t.d·wdmin, summs_t) in lane t of Y13.")
			for t := 0; t < min(T, 4); t++ {
				if t == 0 {
					c.VMOVSS(tk.at(t, 0), X12)
				} else {
					c.VINSERTPS(U8(t<<4), tk.at(t, 0), X12, X12)
				}
			}
			for t := 4; t < T; t++ {
				if t == 4 {
					c.VMOVSS(tk.at(t, 0), X15)
				} else {
					c.VINSERTPS(U8((t-4)<<4), tk.at(t, 0), X15, X15)
				}
			}
			if T > 4 {
				c.VINSERTF128(U8(1), X15, Y12, Y12)
			}
			loadHalves(Mem{Base: w}, 4)
			c.VMOVSHDUP(X4, X5)
			c.VBROADCASTSS(X5, Y5)
			c.VBROADCASTSS(X4, Y4)
			c.VMULPS(Y5, Y12, Y12)
			c.VFNMADD231PS(Y12, Y2, Y13)
			ktZeroLanes(T)
			c.VMOVDQU(Mem{Base: w, Disp: 16}, Y3)
			for j := 0; j < 4; j++ {
				if j > 0 {
					c.VPSRLW(U8(2), Y3, Y3)
				}
				c.Commentf("Sub-blocks %d (Y5) and %d (Y6): nibbles and the fifth bits; scales in Y7, Y8.", 2*j, 2*j+1)
				c.VMOVDQU(Mem{Base: w, Disp: 48 + 32*j}, Y5)
				c.VPSRLW(U8(4), Y5, Y6)
				c.VPAND(Y14, Y5, Y5)
				c.VPAND(Y14, Y6, Y6)
				c.VPSLLW(U8(4), Y3, Y7)
				c.VPAND(ktMask10, Y7, Y7)
				c.VPOR(Y7, Y5, Y5)
				c.VPSLLW(U8(3), Y3, Y7)
				c.VPAND(ktMask10, Y7, Y7)
				c.VPOR(Y7, Y6, Y6)
				c.VPBROADCASTD(sp(32+8*j), Y7)
				c.VPBROADCASTD(sp(36+8*j), Y8)
				ktGroup(tk, 5, 7, 4+64*j)
				ktGroup(tk, 6, 8, 36+64*j)
			}
			ktFuse(tk)
		},
		func() {
			c.VMOVUPS(Y13, sp(64))
			storeHsum(T, 64)
		})
}

func iq4XST(T int) {
	name := fmt.Sprintf("iq4XSRowsT%dVNNI", T)
	ktRows(name, "IQ4_XS", T, 64, 136, "IQ4_XS: ggml's |v|·sign(q8, v) per token. Frame: 32-63 the block's scales as doubled words.",
		func() {
			c.VMOVDQU(ktMask0F, Y14)
			c.VMOVDQU(ktIQ4Values, Y15)
		}, nil,
		func(w GPVirtual, tk *tokens) {
			c.Comment("Scales − 32 as doubled words: nibbles of scales_l, two bits each of scales_h.")
			sl := gp32()
			c.MOVL(Mem{Base: w, Disp: 4}, sl)
			c.VMOVD(sl, X3)
			c.VPSRLW(U8(4), X3, X4)
			c.VPUNPCKLBW(X4, X3, X3)
			c.VPAND(X14, X3, X3)
			c.VPMOVZXBD(X3, Y3)
			sh := gp32()
			c.MOVWLZX(Mem{Base: w, Disp: 2}, sh)
			c.VMOVD(sh, X4)
			c.VPBROADCASTD(X4, Y4)
			c.VPSRLVD(ktIQ4Shifts, Y4, Y4)
			c.VPAND(ktDword3, Y4, Y4)
			c.VPSLLD(U8(4), Y4, Y4)
			c.VPOR(Y4, Y3, Y3)
			c.VPSUBD(ktDword32, Y3, Y3)
			c.VPSHUFB(ktDupWord, Y3, Y3)
			c.VMOVDQU(Y3, sp(32))
			ktZeroLanes(T)
			for s := 0; s < 8; s++ {
				c.Commentf("Sub-block %d: values in Y3, |values| in Y5, scale in Y7.", s)
				c.VMOVDQU(Mem{Base: w, Disp: 8 + 16*s}, X3)
				c.VPSRLW(U8(4), X3, X4)
				c.VINSERTI128(U8(1), X4, Y3, Y3)
				c.VPAND(Y14, Y3, Y3)
				c.VPSHUFB(Y3, Y15, Y3)
				c.VPABSB(Y3, Y5)
				c.VPBROADCASTD(sp(32+4*s), Y7)
				for t := 0; t < T; t++ {
					a := Y(8 + (t & 1))
					c.VMOVDQU(tk.at(t, 4+32*s), a)
					c.VPSIGNB(Y3, a, a)
					c.VPMADDUBSW(a, Y5, a)
					vpdpwssd(Y7, a, Y(16+t))
				}
			}
			loadHalf(Mem{Base: w}, 4)
			c.VBROADCASTSS(X4, Y4)
			ktFuse(tk)
		},
		func() { storeHsum(T, -1) })
}
