package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The T-token kernels of Q2_K, Q3_K, Q5_K and IQ4_XS (see dot_k2_amd64.go
// and kquants_lanes.go in package tensor), in two forms from one
// description each (ktForm): VNNI, where token t's lanes are in Y16+t and
// its eight float lanes in Y24+t (physical registers, the kernels' layout:
// the other vectors are virtual and so land in Y0-Y15, which the VEX-only
// instructions need), and AVX2, where they are virtual (the float lanes in
// the frame past a few tokens) and VPMADDWD then VPADDD stand for each
// VPDPWSSD (the same wrapping int32 lanes). The weight decoding is done
// once per block for all tokens, and the float work per token is the
// single-row kernels', op for op.

// ktForm is where a T-token kernel keeps each token's int32 lanes and float
// lanes, and the instructions that form uses on them.
type ktForm struct {
	vnni  bool
	T     int
	lanes []vreg
	facc  []vreg // nil entries: in the frame at fbase+32t
	fbase int
}

// kf is the form of the kernel being written.
var kf *ktForm

// vnniForm is the VNNI kernels' form: lanes Y16+t, float lanes Y24+t.
func vnniForm(T int) *ktForm {
	f := &ktForm{vnni: true, T: T}
	for t := 0; t < T; t++ {
		f.lanes = append(f.lanes, Y(16+t))
		f.facc = append(f.facc, Y(24+t))
	}
	return f
}

// avx2Form is the AVX2 kernels' form, whose float lanes, past regT
// tokens, are in the frame from fbase.
func avx2Form(T, fbase, regT int) *ktForm {
	f := &ktForm{T: T, fbase: fbase}
	for t := 0; t < T; t++ {
		f.lanes = append(f.lanes, top.YMM())
		if T <= regT {
			f.facc = append(f.facc, top.YMM())
		} else {
			f.facc = append(f.facc, nil)
		}
	}
	return f
}

// suffix names the form in its kernels' names.
func (f *ktForm) suffix() string {
	if f.vnni {
		return "VNNI"
	}
	return "AVX2"
}

// isa names the instruction sets the form needs.
func (f *ktForm) isa() string {
	if f == nil || f.vnni {
		return "AVX-512 VL, BW and VNNI"
	}
	return "AVX2, FMA, F16C"
}

// frame is the frame bytes the form adds to a kernel's own.
func (f *ktForm) frame() int {
	if f.facc[0] == nil {
		return 32 * f.T
	}
	return 0
}

// zero clears token t's lanes.
func (f *ktForm) zero(t int) {
	l := f.lanes[t]
	if f.vnni {
		c.VPXORD(l, l, l)
	} else {
		c.VPXOR(l, l, l)
	}
}

// madd adds the word pairs of a times those of sc into token t's lanes
// (a is clobbered in the AVX2 form).
func (f *ktForm) madd(sc, a vreg, t int) {
	if f.vnni {
		vpdpwssd(sc, a, f.lanes[t])
		return
	}
	c.VPMADDWD(sc, a, a)
	c.VPADDD(a, f.lanes[t], f.lanes[t])
}

// mulScale sets dst = x_t.d · wb (x_t.d broadcast).
func (f *ktForm) mulScale(tk *tokens, t int, wb, dst vreg) {
	if f.vnni {
		c.VMULPS_BCST(tk.at(t, 0), wb, dst)
		return
	}
	c.VBROADCASTSS(tk.at(t, 0), dst)
	c.VMULPS(wb, dst, dst)
}

// fused emits op(m, v, acc_t) on token t's float lanes (VFMADD231PS or
// VFNMADD231PS), loading and storing them where they are in the frame.
func (f *ktForm) fused(op func(...Op), m, v vreg, t int) {
	if a := f.facc[t]; a != nil {
		op(m, v, a)
		return
	}
	a := top.YMM()
	c.VMOVUPS(sp(f.fbase+32*t), a)
	op(m, v, a)
	c.VMOVUPS(a, sp(f.fbase+32*t))
}

// clearAcc clears every token's float lanes.
func (f *ktForm) clearAcc() {
	var z VecVirtual
	for t, a := range f.facc {
		switch {
		case a != nil:
			c.VXORPS(a, a, a)
		case t == 0:
			z = top.YMM()
			c.VXORPS(z, z, z)
			fallthrough
		default:
			c.VMOVUPS(z, sp(f.fbase+32*t))
		}
	}
}

// acc returns token t's float lanes in a register.
func (f *ktForm) acc(t int) vreg {
	if a := f.facc[t]; a != nil {
		return a
	}
	a := top.YMM()
	c.VMOVUPS(sp(f.fbase+32*t), a)
	return a
}

// ktRows emits the row loop shared by these kernels: frame 0 the weight
// row, 8 the rows left, 16 the output pointer; per row the float lanes are
// cleared and block runs nb times on the weight block w and the tokens'
// blocks; store writes the row's outputs.
func ktRows(name, typ string, T, frame, bs int, doc string, setup, rowInit func(), block func(w GPVirtual, tk *tokens), store func()) {
	text(name, NOSPLIT, kSig)
	kDoc(name, typ, T, "", doc)
	c.AllocLocal(frame + kf.frame())
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

// ktZeroLanes clears every token's int32 lanes.
func ktZeroLanes(T int) {
	for t := 0; t < T; t++ {
		kf.zero(t)
	}
}

// ktFuse emits acc_t = fma(x_t.d·w, float32(lanes_t), acc_t) for each token,
// with w broadcast in wb.
func ktFuse(tk *tokens, wb VecVirtual) {
	for t := 0; t < tk.T; t++ {
		tt := top.YMM()
		l := kf.lanes[t]
		c.VCVTDQ2PS(l, l)
		kf.mulScale(tk, t, wb, tt)
		kf.fused(c.VFMADD231PS, tt, l, t)
	}
}

// ktGroup emits, for each token, lanes_t += VPMADDUBSW(x_t + xo, val)
// scaled by the words of sc.
func ktGroup(tk *tokens, val, sc VecVirtual, xo int) {
	for t := 0; t < tk.T; t++ {
		tmp := top.YMM()
		c.VPMADDUBSW(tk.at(t, xo), val, tmp)
		kf.madd(sc, tmp, t)
	}
}

// broadcastHalf returns the float32 in lane 0 of x broadcast to a new
// 256-bit register.
func broadcastHalf(x VecVirtual) VecVirtual {
	y := top.YMM()
	c.VBROADCASTSS(x, y)
	return y
}

func q2KT(T int) {
	name := fmt.Sprintf("q2KRowsT%d%s", T, kf.suffix())
	m0F, m03 := top.YMM(), top.YMM()
	ktRows(name, "Q2_K", T, 24, 84, "Q2_K: per block the mins first (fused negative multiply-adds of mins·bsums pairs), then the quants; the Q2KLanes order only.",
		func() {
			c.VMOVDQU(ktMask0F, m0F)
			c.VMOVDQU(ktMask03, m03)
		}, nil,
		func(w GPVirtual, tk *tokens) {
			c.Comment("The scales, the mins as words, wd and wdmin.")
			sc, mn, mins := top.XMM(), top.XMM(), top.YMM()
			c.VMOVDQU(Mem{Base: w}, sc)
			c.VPSRLW(U8(4), sc, mn)
			c.VPAND(m0F.AsX(), mn, mn)
			c.VPAND(m0F.AsX(), sc, sc)
			c.VPMOVZXBW(mn, mins)
			d := halves(Mem{Base: w, Disp: 80})
			wd := broadcastHalf(d)
			c.VMOVSHDUP(d, d)
			wdmin := broadcastHalf(d)
			c.Comment("acc_t = fma(−x_t.d·wdmin, float32(mins·bsums pairs), acc_t).")
			for t := 0; t < T; t++ {
				a, cc := top.YMM(), top.YMM()
				c.VPMADDWD(tk.at(t, 260), mins, a)
				c.VCVTDQ2PS(a, a)
				kf.mulScale(tk, t, wdmin, cc)
				kf.fused(c.VFNMADD231PS, cc, a, t)
			}
			ktZeroLanes(T)
			q := top.YMM()
			for g := 0; g < 8; g++ {
				if g%4 == 0 {
					c.VMOVDQU(Mem{Base: w, Disp: 16 + 32*(g/4)}, q)
				}
				c.Commentf("Group %d: its two-bit values, the scales of sub-blocks %d and %d as words.", g, 2*g, 2*g+1)
				v, s8, sw := top.YMM(), top.XMM(), top.YMM()
				c.VPSRLW(U8(2*(g%4)), q, v)
				c.VPAND(m03, v, v)
				c.VPSHUFB(ktScaleShuf.Offset(16*g), sc, s8)
				c.VPMOVZXBW(s8, sw)
				ktGroup(tk, v, sw, 4+32*g)
			}
			ktFuse(tk, wd)
		},
		func() { storeHsum(T, -1) })
}

func q3KT(T int) {
	name := fmt.Sprintf("q3KRowsT%d%s", T, kf.suffix())
	m04, m03 := top.YMM(), top.YMM()
	ktRows(name, "Q3_K", T, 24, 110, "Q3_K: ggml's Σ low·q8 − Σ 4·(1−high)·q8 in 16 bits, the scales unpacked with vector shifts.",
		func() {
			c.VMOVDQU(ktMask04, m04)
			c.VMOVDQU(ktMask03, m03)
		}, nil,
		func(w GPVirtual, tk *tokens) {
			c.Comment("The sixteen scales − 32: low nibbles of bytes 0-7, then their high nibbles,",
				"each with two bits of bytes 8-11 (quarter k shifted right by 2k) on top.")
			sc, lo := top.XMM(), top.XMM()
			c.VMOVQ(Mem{Base: w, Disp: 96}, sc)
			c.VPINSRD(U8(2), Mem{Base: w, Disp: 104}, sc, sc)
			c.VPSRLW(U8(4), sc, lo)
			c.VPUNPCKLQDQ(lo, sc, lo)
			c.VPAND(ktMask0F, lo, lo)
			c.VPSHUFB(ktQ3High, sc, sc)
			c.VPSRLVD(ktQ3Shifts, sc, sc)
			c.VPAND(m03.AsX(), sc, sc)
			c.VPSLLW(U8(4), sc, sc)
			c.VPOR(lo, sc, sc)
			c.VPSUBB(ktByte32, sc, sc)
			hm := top.YMM()
			c.VMOVDQU(Mem{Base: w}, hm)
			ktZeroLanes(T)
			q := top.YMM()
			for g := 0; g < 8; g++ {
				if g%4 == 0 {
					c.VMOVDQU(Mem{Base: w, Disp: 32 + 32*(g/4)}, q)
				}
				c.Commentf("Group %d: the low bits, the high-bit offsets (hmask bit %d moved to bit 2), the scales.", g, g)
				l, h, s8, sw := top.YMM(), top.YMM(), top.XMM(), top.YMM()
				c.VPSRLW(U8(2*(g%4)), q, l)
				c.VPAND(m03, l, l)
				switch {
				case g < 2:
					c.VPSLLW(U8(2-g), hm, h)
				default:
					c.VPSRLW(U8(g-2), hm, h)
				}
				c.VPANDN(m04, h, h)
				c.VPSHUFB(ktScaleShuf.Offset(16*g), sc, s8)
				c.VPMOVSXBW(s8, sw)
				for t := 0; t < T; t++ {
					a, cc := top.YMM(), top.YMM()
					c.VPMADDUBSW(tk.at(t, 4+32*g), l, a)
					c.VPMADDUBSW(tk.at(t, 4+32*g), h, cc)
					c.VPSUBW(cc, a, a)
					kf.madd(sw, a, t)
				}
			}
			ktFuse(tk, broadcastHalf(half(Mem{Base: w, Disp: 108})))
		},
		func() { storeHsum(T, -1) })
}

func q5KT(T int) {
	name := fmt.Sprintf("q5KRowsT%d%s", T, kf.suffix())
	m0F, summs := top.YMM(), top.YMM()
	var mask Op = m0F
	if !kf.vnni {
		mask = ktMask0F // a register more for the tokens
	}
	ktRows(name, "Q5_K", T, 96, 176, "Q5_K. Frame: 32-63 the block's scales as doubled words, 64-95 the tokens' summs.",
		func() {
			if kf.vnni {
				c.VMOVDQU(ktMask0F, m0F)
			}
		},
		func() {
			c.VXORPS(summs, summs, summs)
			if !kf.vnni { // the AVX2 form keeps summs in the frame
				c.VMOVUPS(summs, sp(64))
			}
		},
		func(w GPVirtual, tk *tokens) {
			sm, s16 := top.XMM(), top.XMM()
			q4KScales(w, sm)
			c.VPMOVZXBW(sm, s16)
			lo, hi := top.XMM(), top.XMM()
			c.VPUNPCKLWD(s16, s16, lo)
			c.VPUNPCKHWD(s16, s16, hi)
			c.VMOVDQU(lo, sp(32))
			c.VMOVDQU(hi, sp(48))
			c.Comment("imin_t = Σ mins[s]·int16(bsums[2s] + bsums[2s+1]) (VPHADDW's pair sums) into lane t.",
				"Each token's vector is cleared whole first: the tree adds the upper halves too.")
			mins := top.XMM()
			c.VPSRLDQ(U8(8), sm, mins)
			c.VPMOVZXBW(mins, mins)
			var vi []vreg
			for t := 0; t < T; t++ {
				v := top.YMM()
				c.VPXOR(v, v, v)
				c.VMOVDQU(tk.at(t, 260), v.AsX())
				c.VPHADDW(tk.at(t, 276), v.AsX(), v.AsX())
				c.VPMADDWD(mins, v.AsX(), v.AsX())
				vi = append(vi, v)
			}
			imin, tmp := top.YMM(), top.YMM()
			tree(vi, tmp, imin, !kf.vnni)
			c.VCVTDQ2PS(imin, imin)
			c.Comment("[x_t.d]·wdmin; summs_t = fma(imin_t, −x_t.d·wdmin, summs_t) in lane t.")
			xd, xd4 := top.YMM(), top.XMM()
			for t := 0; t < min(T, 4); t++ {
				if t == 0 {
					c.VMOVSS(tk.at(t, 0), xd.AsX())
				} else {
					c.VINSERTPS(U8(t<<4), tk.at(t, 0), xd.AsX(), xd.AsX())
				}
			}
			for t := 4; t < T; t++ {
				if t == 4 {
					c.VMOVSS(tk.at(t, 0), xd4)
				} else {
					c.VINSERTPS(U8((t-4)<<4), tk.at(t, 0), xd4, xd4)
				}
			}
			if T > 4 {
				c.VINSERTF128(U8(1), xd4, xd, xd)
			}
			d := halves(Mem{Base: w})
			dm := top.XMM()
			c.VMOVSHDUP(d, dm)
			wdmin := broadcastHalf(dm)
			wd := broadcastHalf(d)
			c.VMULPS(wdmin, xd, xd)
			if kf.vnni {
				c.VFNMADD231PS(xd, imin, summs)
			} else {
				sm := top.YMM()
				c.VMOVUPS(sp(64), sm)
				c.VFNMADD231PS(xd, imin, sm)
				c.VMOVUPS(sm, sp(64))
			}
			ktZeroLanes(T)
			qh := top.YMM()
			c.VMOVDQU(Mem{Base: w, Disp: 16}, qh)
			for j := 0; j < 4; j++ {
				if j > 0 {
					c.VPSRLW(U8(2), qh, qh)
				}
				c.Commentf("Sub-blocks %d and %d: nibbles and the fifth bits; their scales.", 2*j, 2*j+1)
				a, b, f := top.YMM(), top.YMM(), top.YMM()
				c.VMOVDQU(Mem{Base: w, Disp: 48 + 32*j}, a)
				c.VPSRLW(U8(4), a, b)
				c.VPAND(mask, a, a)
				c.VPAND(mask, b, b)
				c.VPSLLW(U8(4), qh, f)
				c.VPAND(ktMask10, f, f)
				c.VPOR(f, a, a)
				c.VPSLLW(U8(3), qh, f)
				c.VPAND(ktMask10, f, f)
				c.VPOR(f, b, b)
				sa, sb := top.YMM(), top.YMM()
				c.VPBROADCASTD(sp(32+8*j), sa)
				c.VPBROADCASTD(sp(36+8*j), sb)
				ktGroup(tk, a, sa, 4+64*j)
				ktGroup(tk, b, sb, 36+64*j)
			}
			ktFuse(tk, wd)
		},
		func() {
			if kf.vnni {
				c.VMOVUPS(summs, sp(64))
			}
			storeHsum(T, 64)
		})
}

func iq4XST(T int) {
	name := fmt.Sprintf("iq4XSRowsT%d%s", T, kf.suffix())
	m0F, vals := top.YMM(), top.YMM()
	ktRows(name, "IQ4_XS", T, 64, 136, "IQ4_XS: ggml's |v|·sign(q8, v) per token. Frame: 32-63 the block's scales as doubled words.",
		func() {
			c.VMOVDQU(ktMask0F, m0F)
			c.VMOVDQU(ktIQ4Values, vals)
		}, nil,
		func(w GPVirtual, tk *tokens) {
			c.Comment("Scales − 32 as doubled words: nibbles of scales_l, two bits each of scales_h.")
			sl, l, l4 := gp32(), top.XMM(), top.XMM()
			c.MOVL(Mem{Base: w, Disp: 4}, sl)
			c.VMOVD(sl, l)
			c.VPSRLW(U8(4), l, l4)
			c.VPUNPCKLBW(l4, l, l)
			c.VPAND(m0F.AsX(), l, l)
			s := top.YMM()
			c.VPMOVZXBD(l, s)
			sh, hx, h := gp32(), top.XMM(), top.YMM()
			c.MOVWLZX(Mem{Base: w, Disp: 2}, sh)
			c.VMOVD(sh, hx)
			c.VPBROADCASTD(hx, h)
			c.VPSRLVD(ktIQ4Shifts, h, h)
			c.VPAND(ktDword3, h, h)
			c.VPSLLD(U8(4), h, h)
			c.VPOR(h, s, s)
			c.VPSUBD(ktDword32, s, s)
			c.VPSHUFB(ktDupWord, s, s)
			c.VMOVDQU(s, sp(32))
			ktZeroLanes(T)
			for sb := 0; sb < 8; sb++ {
				c.Commentf("Sub-block %d: its values (nibbles in element order, looked up), their magnitudes, its scale.", sb)
				v, hn, mag, sc := top.YMM(), top.YMM(), top.YMM(), top.YMM()
				c.VBROADCASTI128(Mem{Base: w, Disp: 8 + 16*sb}, v)
				c.VPSRLW(U8(4), v, hn)
				c.VPBLENDD(U8(0xf0), hn, v, v)
				c.VPAND(m0F, v, v)
				c.VPSHUFB(v, vals, v)
				c.VPABSB(v, mag)
				c.VPBROADCASTD(sp(32+4*sb), sc)
				for t := 0; t < T; t++ {
					a := top.YMM()
					c.VMOVDQU(tk.at(t, 4+32*sb), a)
					c.VPSIGNB(v, a, a)
					c.VPMADDUBSW(a, mag, a)
					kf.madd(sc, a, t)
				}
			}
			ktFuse(tk, broadcastHalf(half(Mem{Base: w})))
		},
		func() { storeHsum(T, -1) })
}
