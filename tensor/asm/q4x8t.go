package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The AVX2 T-token kernels of interleaved Q4_0 (q4_0x8RowsT<T>AVX2, T = 2
// to q4x8TMax): eight rows a group (repack.go's q4_0x8 layout, 144 bytes a
// block) against T q8VNNI activation rows, every token's work in registers
// of its own. Per block each 32 bytes of nibbles are split once, low
// nibbles then high, and each half goes straight to every token: one
// VPBROADCASTD of the token's four quants for that column of elements, one
// VPMADDUBSW against the eight rows, one VPADDW into the token's int16
// sums (|sum| ≤ 8·2·15·128 = 30720, so neither saturates). At the block's
// end VPMADDWD folds lane r's two words into row r's Σ q·y, off makes it
// Σ (q-8)·y, and acc = fma(float32(sum), d_w·d_x, acc): dotQ4_0Generic's
// float operations, in its order, so the outputs are its bit for bit. Registers: token t's float accumulators in Y(t), its int16 sums
// in Y(5+t), the half being multiplied in Y10, a token's broadcast in Y11,
// a product in Y12, the raw bytes (then the rows' scales) in Y13, int16
// ones in Y14 and 0x0f bytes in Y15: T ≤ 5.
const q4x8TMax = 5

const q4x8TSig = "func(w *byte, groups int, x *byte, xstride, nb int, out *float32, ostride int)"

func q4x8T() {
	for T := 2; T <= q4x8TMax; T++ {
		q4x8TKernel(T)
	}
}

func q4x8TKernel(T int) {
	name := fmt.Sprintf("q4_0x8RowsT%dAVX2", T)
	text(name, NOSPLIT, q4x8TSig)
	if T == 2 {
		c.Doc(name+" runs T q8VNNI activation rows (at x + t·xstride) through one",
			"pass over groups of eight interleaved Q4_0 rows (q4_0x8, nb blocks of",
			"144 bytes each, contiguous from w), writing out[t·ostride + r] in",
			"row order, bit for bit dotQ4_0Generic of row r on the Q8_0 form of",
			"token t (here T = 2; AVX2).")
	} else {
		c.Doc(fmt.Sprintf("%s is q4_0x8RowsT2AVX2 for t < %d.", name, T))
	}
	c.Pragma("noescape")
	w, groups, xs, nb, out, os := ld("w", 0), ld("groups", 8), ld("xstride", 24), ld("nb", 32), ld("out", 40), ld("ostride", 48)
	c.SHLQ(U8(2), os)
	acc := func(t int) VecPhysical { return Y(t) }
	sum := func(t int) VecPhysical { return Y(5 + t) }
	half, bc, prod, raw, ones, mask := Y(10), Y(11), Y(12), Y(13), Y(14), Y(15)
	{
		r := gp32()
		c.MOVL(U32(0x0f0f0f0f), r)
		c.VMOVD(r, mask.AsX())
		c.VPBROADCASTD(mask.AsX(), mask)
	}
	c.VPCMPEQW(ones, ones, ones)
	c.VPSRLW(U8(15), ones, ones)
	xp := make([]GPVirtual, T)
	for t := range xp {
		xp[t] = gp64()
	}
	c.TESTQ(groups, groups)
	c.JLE(LabelRef(name + "done"))

	c.Label(name + "group")
	c.MOVQ(arg("x", 16), xp[0])
	for t := 1; t < T; t++ {
		c.LEAQ(Mem{Base: xp[t-1], Index: xs, Scale: 1}, xp[t])
	}
	for t := range T {
		c.VPXOR(acc(t), acc(t), acc(t))
	}
	n := gp64()
	c.MOVQ(nb, n)
	c.TESTQ(n, n)
	c.JZ(LabelRef(name + "store"))

	c.Label(name + "block")
	for u := range 4 {
		c.Commentf("Bytes %d-%d of the eight rows' quants: elements %d-%d (low nibbles), %d-%d (high).",
			4*u, 4*u+3, 4*u, 4*u+3, 16+4*u, 16+4*u+3)
		c.VMOVDQU(Mem{Base: w, Disp: 16 + 32*u}, raw)
		for h := range 2 {
			if h == 0 {
				c.VPAND(mask, raw, half)
			} else {
				c.VPSRLW(U8(4), raw, half)
				c.VPAND(mask, half, half)
			}
			for t := range T {
				c.VPBROADCASTD(Mem{Base: xp[t], Disp: 16*h + 4*u}, bc)
				if u == 0 && h == 0 {
					c.VPMADDUBSW(bc, half, sum(t))
					continue
				}
				c.VPMADDUBSW(bc, half, prod)
				c.VPADDW(prod, sum(t), sum(t))
			}
		}
	}
	c.Comment("Per token: acc = fma(float32(Σ q·y + off), d_w·d_x, acc).")
	c.VCVTPH2PS(Mem{Base: w}, raw)
	for t := range T {
		c.VPMADDWD(ones, sum(t), sum(t))
		c.VPBROADCASTD(Mem{Base: xp[t], Disp: 36}, prod)
		c.VPADDD(prod, sum(t), sum(t))
		c.VCVTDQ2PS(sum(t), sum(t))
		c.VBROADCASTSS(Mem{Base: xp[t], Disp: 32}, bc)
		c.VMULPS(raw, bc, bc)
		c.VFMADD231PS(bc, sum(t), acc(t))
		c.ADDQ(U32(40), xp[t])
	}
	c.ADDQ(U32(144), w)
	c.DECQ(n)
	c.JNZ(LabelRef(name + "block"))

	c.Label(name + "store")
	c.Comment("The tokens' eight outputs, back in row order.")
	c.VMOVDQU(goSym("permRows8"), raw)
	o := gp64()
	c.MOVQ(out, o)
	for t := range T {
		c.VPERMPS(acc(t), raw, acc(t))
		c.VMOVUPS(acc(t), Mem{Base: o})
		if t < T-1 {
			c.ADDQ(os, o)
		}
	}
	c.ADDQ(U32(32), out)
	c.DECQ(groups)
	c.JNZ(LabelRef(name + "group"))

	c.Label(name + "done")
	c.VZEROUPPER()
	c.RET()
}
