//go:build ignore

// dotk_gen writes dotk_amd64.s, the AVX-512 (VL, BW, VNNI) K-quant kernels
// that run T = 2..8 activation rows through one pass over the weights:
//
//	go run dotk_gen.go
//
// One function per T and weight type, because every token has registers of
// its own (its int32 sums in Y16+t, and for Q6_K its float lanes in Y24+t).
// See dotk_amd64.go for the contracts and the reference loops.
package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
)

var b bytes.Buffer

// maxBlocks is kMaxQ4KTBlocks in dotk_amd64.go: the most blocks per row the
// Q4_K kernels' frame tables hold.
const maxBlocks = 64

func p(format string, args ...any) {
	if capturing != nil {
		*capturing = append(*capturing, fmt.Sprintf(format, args...))
		return
	}
	fmt.Fprintf(&b, "\t"+format+"\n", args...)
}

// capturing, when set, collects p's instructions instead of writing them.
var capturing *[]string

// capture returns the instructions f emits through p.
func capture(f func()) []string {
	var l []string
	capturing = &l
	f()
	capturing = nil
	return l
}

// interleave writes the instructions of a with those of b spread evenly
// among them (b's in order, each after about len(a)/len(b) of a's).
func interleave(a, b []string) {
	j := 0
	for i, ins := range a {
		p("%s", ins)
		for j < len(b) && (j+1)*len(a) <= (i+1)*len(b) {
			p("%s", b[j])
			j++
		}
	}
	for ; j < len(b); j++ {
		p("%s", b[j])
	}
}

func label(l string)   { fmt.Fprintf(&b, "%s:\n", l) }
func comment(c string) { fmt.Fprintf(&b, "\t// %s\n", c) }

// xaddr is the address of byte off of token t's current activation block:
// DI is token 0's, BX token 1's, R9 token 2's and R10 token 3's; R8 is the
// activation row stride.
func xaddr(t, off int) string {
	switch t {
	case 0:
		return fmt.Sprintf("%d(DI)", off)
	case 1:
		return fmt.Sprintf("%d(BX)", off)
	case 2:
		return fmt.Sprintf("%d(R9)", off)
	case 3:
		return fmt.Sprintf("%d(R10)", off)
	case 4:
		return fmt.Sprintf("%d(DI)(R8*4)", off)
	case 5:
		return fmt.Sprintf("%d(BX)(R8*4)", off)
	case 6:
		return fmt.Sprintf("%d(R9)(R8*4)", off)
	default:
		return fmt.Sprintf("%d(R10)(R8*4)", off)
	}
}

// tokenBases sets BX, R9, R10 from DI and R8 (as many as T needs).
func tokenBases(T int) {
	if T > 1 {
		p("LEAQ (DI)(R8*1), BX")
	}
	if T > 2 {
		p("LEAQ (DI)(R8*2), R9")
	}
	if T > 3 {
		p("LEAQ (BX)(R8*2), R10")
	}
}

func advanceTokens(T int) {
	p("ADDQ $292, DI")
	if T > 1 {
		p("ADDQ $292, BX")
	}
	if T > 2 {
		p("ADDQ $292, R9")
	}
	if T > 3 {
		p("ADDQ $292, R10")
	}
}

func y(n int) string { return fmt.Sprintf("Y%d", n) }
func x(n int) string { return fmt.Sprintf("X%d", n) }

// tree reduces the eight int32 lanes of each of the T vectors v[t] into lane
// t of out (lanes T..7 hold sums of repeated vectors); v is clobbered, tmp
// is a scratch register. Integer adds only, so the grouping is free.
func tree(v []int, tmp, out int) {
	T := len(v)
	at := func(i int) int { return v[min(i, T-1)] }
	// Level 1: pairs (a, b) → [a0+a2, b0+b2, a1+a3, b1+b3] per 128-bit half.
	var l1 []int
	for i := 0; i < T; i += 2 {
		a, bb := at(i), at(i+1)
		if i+1 >= T {
			bb = a
		}
		p("VPUNPCKLDQ %s, %s, %s", y(bb), y(a), y(tmp))
		p("VPUNPCKHDQ %s, %s, %s", y(bb), y(a), y(a))
		p("VPADDD %s, %s, %s", y(tmp), y(a), y(a))
		l1 = append(l1, a)
	}
	// Level 2: quads → [t0, t1, t2, t3] per half.
	var l2 []int
	for i := 0; i < len(l1); i += 2 {
		a := l1[i]
		bb := a
		if i+1 < len(l1) {
			bb = l1[i+1]
		}
		p("VPUNPCKLQDQ %s, %s, %s", y(bb), y(a), y(tmp))
		p("VPUNPCKHQDQ %s, %s, %s", y(bb), y(a), y(a))
		p("VPADDD %s, %s, %s", y(tmp), y(a), y(a))
		l2 = append(l2, a)
	}
	// Level 3: the two halves of the low and high quads.
	c, d := l2[0], l2[0]
	if len(l2) > 1 {
		d = l2[1]
	}
	p("VSHUFI64X2 $0, %s, %s, %s", y(d), y(c), y(tmp))
	p("VSHUFI64X2 $3, %s, %s, %s", y(d), y(c), y(out))
	p("VPADDD %s, %s, %s", y(tmp), y(out), y(out))
}

// storeLanes writes lanes 0..T-1 of Y reg to AX, AX+DX, AX+2·DX, ...
// (clobbers AX and X3 when T > 4).
func storeLanes(T, reg int) {
	for t := 0; t < T; t++ {
		if t == 4 {
			p("VEXTRACTF128 $1, %s, X3", y(reg))
		}
		src := reg
		lane := t
		if t >= 4 {
			src, lane = 3, t-4
		}
		if lane == 0 {
			p("VMOVSS %s, (AX)", x(src))
		} else {
			p("VEXTRACTPS $%d, %s, (AX)", lane, x(src))
		}
		if t < T-1 {
			p("ADDQ DX, AX")
		}
	}
}

// q4KTable is the size of a Q4_K kernel's per-block table in its frame:
// the eight tokens' activation scales (float32) at 0, then for k < 8 the
// eight tokens' bsums pair k (two int16, as one dword) at 32+32k.
const q4KTable = 288

// q4KSteps emits the integer work of one Q4_K block (weights at SI,
// scales decoded into the frame) for T tokens into Y16+base+t.
func q4KSteps(T, base int) {
	for s := 0; s < 4; s++ {
		p("VMOVDQU %d(SI), Y5", 16+32*s)
		p("VPSRLW $4, Y5, Y6")
		p("VPAND Y15, Y5, Y5")
		p("VPAND Y15, Y6, Y6")
		p("VPBROADCASTQ %d(SP), Y7", 8*s)
		p("VPSHUFD $0x50, Y7, Y7")
		for t := 0; t < T; t++ {
			t0, t1 := 9+2*(t&1), 10+2*(t&1)
			acc := 16 + base + t
			p("VPXORD %s, %s, %s", y(t0), y(t0), y(t0))
			p("VPXORD %s, %s, %s", y(t1), y(t1), y(t1))
			p("VPDPBUSD %s, Y5, %s", xaddr(t, 4+64*s), y(t0))
			p("VPDPBUSD %s, Y6, %s", xaddr(t, 36+64*s), y(t1))
			p("VPACKSSDW %s, %s, %s", y(t1), y(t0), y(t0))
			if s == 0 {
				p("VPMADDWD Y7, %s, %s", y(t0), y(acc))
			} else {
				p("VPDPWSSD Y7, %s, %s", y(t0), y(acc))
			}
		}
	}
}

// q4KTail emits the float work of the previous block (weights at -144(SI),
// table at -q4KTable(CX), mins as doubled words at mins(SP)) from its sums
// in Y16+base+t: isum and imin per token lane, then acc (Y13) and accm
// (Y14) updated with one fused multiply-add each. Uses Y0-Y4, Y8 and AX.
func q4KTail(T, base, mins int) {
	var vi []int
	for t := 0; t < T; t++ {
		vi = append(vi, 16+base+t)
	}
	tree(vi, 0, 1)
	p("VPXORD Y2, Y2, Y2")
	for k := 0; k < 8; k++ {
		r := []int{3, 8}[k&1]
		p("VMOVDQU %d(CX), %s", 32+32*k-q4KTable, y(r))
		p("VPDPWSSD.BCST %d(SP), %s, Y2", mins+4*k, y(r))
	}
	p("VCVTDQ2PS Y1, Y1")
	p("VCVTDQ2PS Y2, Y2")
	p("MOVL -144(SI), AX")
	p("VMOVD AX, X3")
	p("VCVTPH2PS X3, X3")
	p("VBROADCASTSS X3, Y4")
	p("VMOVSHDUP X3, X3")
	p("VBROADCASTSS X3, Y3")
	p("VMULPS %d(CX), Y4, Y4", -q4KTable)
	p("VMULPS %d(CX), Y3, Y3", -q4KTable)
	p("VFMADD231PS Y4, Y1, Y13")
	p("VFMADD231PS Y3, Y2, Y14")
}

// q4KDecode unpacks the block at SI's scales into 0(SP) and its mins into
// mins(SP), as doubled words.
func q4KDecode(mins int) {
	p("Q4KTDECODE")
	p("VPMOVZXBW X1, Y3")
	p("VPUNPCKLWD Y3, Y3, Y5")
	p("VPUNPCKHWD Y3, Y3, Y6")
	p("VMOVDQU X5, 0(SP)")
	p("VMOVDQU X6, 16(SP)")
	p("VEXTRACTI128 $1, Y5, %d(SP)", mins)
	p("VEXTRACTI128 $1, Y6, %d(SP)", mins+16)
}

func q4KAdvance(T int) {
	p("ADDQ $144, SI")
	advanceTokens(T)
	p("ADDQ $%d, CX", q4KTable)
}

func q4K(T int) {
	name := fmt.Sprintf("q4KRowsT%dVNNI", T)
	const (
		minsA, minsB = 32, 64
		frameRow     = 96
		tables       = 128
		setA, setB   = 0, 8
	)
	fmt.Fprintf(&b, "\n// func %s(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)\n", name)
	fmt.Fprintf(&b, "//\n")
	fmt.Fprintf(&b, "// Software-pipelined by two blocks: the integer sums of even blocks go to\n")
	fmt.Fprintf(&b, "// Y16+t and of odd blocks to Y24+t, and each block's float work (tree,\n")
	fmt.Fprintf(&b, "// Σ bsums·mins, fused multiply-adds) is interleaved with the next block's\n")
	fmt.Fprintf(&b, "// integer work. Frame: 0-31 the block's scales, 32-63 and 64-95 the mins\n")
	fmt.Fprintf(&b, "// of even and odd blocks, as doubled words; 96 the weight row, 104 the\n")
	fmt.Fprintf(&b, "// rows left, 112 the output pointer, 120 the end of the tables; from 128,\n")
	fmt.Fprintf(&b, "// nb ≤ %d tables of %d bytes (see q4KTable).\n", maxBlocks, q4KTable)
	fmt.Fprintf(&b, "TEXT ·%s(SB), 0, $%d-64\n", name, tables+maxBlocks*q4KTable)
	p("MOVQ w+0(FP), AX")
	p("MOVQ AX, %d(SP)", frameRow)
	p("MOVQ rows+16(FP), AX")
	p("MOVQ AX, %d(SP)", frameRow+8)
	p("MOVQ out+48(FP), AX")
	p("MOVQ AX, %d(SP)", frameRow+16)
	comment("Tables: per block, each token's scale and bsums pairs, token-major (lanes T..7 zero).")
	p("MOVQ x+24(FP), DI")
	p("MOVQ xstride+32(FP), R8")
	tokenBases(T)
	p("LEAQ %d(SP), CX", tables)
	p("MOVQ nb+40(FP), R13")
	label(name + "tab")
	for k := -1; k < 8; k++ {
		src, dst := 0, 0
		if k >= 0 {
			src, dst = 260+4*k, 32+32*k
		}
		for t := 0; t < 8; t++ {
			if t < T {
				p("MOVL %s, AX", xaddr(t, src))
				p("MOVL AX, %d(CX)", dst+4*t)
			} else {
				p("MOVL $0, %d(CX)", dst+4*t)
			}
		}
	}
	p("ADDQ $%d, CX", q4KTable)
	advanceTokens(T)
	p("DECQ R13")
	p("JNZ %stab", name)
	p("MOVQ CX, %d(SP)", frameRow+24)
	p("VMOVDQU ktMask0F<>(SB), Y15")
	label(name + "row")
	p("MOVQ %d(SP), SI", frameRow)
	p("MOVQ x+24(FP), DI")
	tokenBases(T)
	p("LEAQ %d(SP), CX", tables)
	p("VXORPS Y13, Y13, Y13")
	p("VXORPS Y14, Y14, Y14")
	comment("Block 0: integer work only.")
	q4KDecode(minsA)
	q4KSteps(T, setA)
	q4KAdvance(T)
	p("CMPQ CX, %d(SP)", frameRow+24)
	p("JEQ %slastA", name)
	label(name + "blk")
	comment("An odd block, with the float work of the even block before it.")
	q4KDecode(minsB)
	interleave(capture(func() { q4KSteps(T, setB) }), capture(func() { q4KTail(T, setA, minsA) }))
	q4KAdvance(T)
	p("CMPQ CX, %d(SP)", frameRow+24)
	p("JEQ %slastB", name)
	comment("An even block, with the float work of the odd block before it.")
	q4KDecode(minsA)
	interleave(capture(func() { q4KSteps(T, setA) }), capture(func() { q4KTail(T, setB, minsB) }))
	q4KAdvance(T)
	p("CMPQ CX, %d(SP)", frameRow+24)
	p("JNE %sblk", name)
	label(name + "lastA")
	q4KTail(T, setA, minsA)
	p("JMP %sstore", name)
	label(name + "lastB")
	q4KTail(T, setB, minsB)
	label(name + "store")
	comment("out[t·ostride + r] = acc − accm for each token.")
	p("VSUBPS Y14, Y13, Y13")
	p("MOVQ %d(SP), AX", frameRow+16)
	p("MOVQ ostride+56(FP), DX")
	p("SHLQ $2, DX")
	storeLanes(T, 13)
	p("ADDQ $4, %d(SP)", frameRow+16)
	p("MOVQ %d(SP), AX", frameRow)
	p("ADDQ wstride+8(FP), AX")
	p("MOVQ AX, %d(SP)", frameRow)
	p("DECQ %d(SP)", frameRow+8)
	p("JNZ %srow", name)
	p("VZEROUPPER")
	p("RET")
}

// q6Value builds in Y<dst> the 32 six-bit values of group g (0-3) of the
// half whose ql bytes are in Y3, Y4 and qh bytes in Y5 (shifting Y3 or Y4
// right by four for g = 2 or 3): the qh bits moved to bits 4-5, then one
// VPTERNLOGD (0xF8: dst | ql&0x0f) adds the low nibble.
func q6Value(g, dst int) {
	d := y(dst)
	ql := "Y3"
	switch g {
	case 0:
		p("VPAND Y14, Y5, %s", d)
		p("VPSLLW $4, %s, %s", d, d)
	case 1:
		ql = "Y4"
		p("VPAND Y13, Y5, %s", d)
		p("VPSLLW $2, %s, %s", d, d)
	case 2:
		p("VPSRLW $4, Y3, Y3")
		p("VPAND Y12, Y5, %s", d)
	case 3:
		ql = "Y4"
		p("VPSRLW $4, Y4, Y4")
		p("VPAND Y11, Y5, %s", d)
		p("VPSRLW $2, %s, %s", d, d)
	}
	p("VPTERNLOGD $0xf8, Y15, %s, %s", ql, d)
}

func q6K(T int) {
	name := fmt.Sprintf("q6KRowsT%dVNNI", T)
	fmt.Fprintf(&b, "\n// func %s(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)\n", name)
	fmt.Fprintf(&b, "TEXT ·%s(SB), NOSPLIT, $24-64\n", name)
	p("MOVQ w+0(FP), AX")
	p("MOVQ AX, 0(SP)")
	p("MOVQ rows+16(FP), AX")
	p("MOVQ AX, 8(SP)")
	p("MOVQ out+48(FP), AX")
	p("MOVQ AX, 16(SP)")
	p("VMOVDQU ktMask0F<>(SB), Y15")
	p("VMOVDQU ktMask03<>(SB), Y14")
	p("VMOVDQU ktMask0C<>(SB), Y13")
	p("VMOVDQU ktMask30<>(SB), Y12")
	p("VMOVDQU ktMaskC0<>(SB), Y11")
	p("MOVL $0xaaaa, AX")
	p("KMOVW AX, K1")
	label(name + "row")
	p("MOVQ 0(SP), SI")
	p("MOVQ x+24(FP), DI")
	p("MOVQ xstride+32(FP), R8")
	tokenBases(T)
	p("MOVQ nb+40(FP), CX")
	for t := 0; t < T; t++ {
		p("VXORPS %s, %s, %s", y(24+t), y(24+t), y(24+t))
	}
	label(name + "blk")
	comment("Each token's lanes start at −32·Σ scales·bsums (Y1: the scales as words; Y2: times −32).")
	p("VPMOVSXBW 192(SI), Y1")
	p("VPSLLW $5, Y1, Y2")
	p("VPXOR Y0, Y0, Y0")
	p("VPSUBW Y2, Y0, Y2")
	for t := 0; t < T; t++ {
		p("VPMADDWD %s, Y2, %s", xaddr(t, 260), y(16+t))
	}
	for h := 0; h < 2; h++ {
		p("VMOVDQU %d(SI), Y3", 64*h)
		p("VMOVDQU %d(SI), Y4", 64*h+32)
		p("VMOVDQU %d(SI), Y5", 128+32*h)
		for g := 0; g < 4; g += 2 {
			comment(fmt.Sprintf("Elements %d-%d (Y6) and %d-%d (Y8); Y7: their scales as word pairs.",
				128*h+32*g, 128*h+32*g+31, 128*h+32*g+32, 128*h+32*g+63))
			q6Value(g, 6)
			q6Value(g+1, 8)
			p("VMOVDQU ktQ6PairIdx<>+%d(SB), Y7", 64*h+32*(g/2))
			p("VPERMW Y1, Y7, Y7")
			for t := 0; t < T; t++ {
				p("VPXORD Y9, Y9, Y9")
				p("VPXORD Y10, Y10, Y10")
				p("VPDPBUSD %s, Y6, Y9", xaddr(t, 4+128*h+32*g))
				p("VPDPBUSD %s, Y8, Y10", xaddr(t, 36+128*h+32*g))
				p("VPSLLD $16, Y10, Y10")
				p("VMOVDQU16 Y10, K1, Y9")
				p("VPDPWSSD Y7, Y9, %s", y(16+t))
			}
		}
	}
	comment("acc_t[L] = fma(xd_t·wd, float32(lane_t[L]), acc_t[L]).")
	p("MOVWLZX 208(SI), AX")
	p("VMOVD AX, X0")
	p("VCVTPH2PS X0, X0")
	p("VBROADCASTSS X0, Y0")
	for t := 0; t < T; t++ {
		tt := 9 + (t & 1)
		p("VCVTDQ2PS %s, %s", y(16+t), y(16+t))
		p("VMULPS.BCST %s, Y0, %s", xaddr(t, 0), y(tt))
		p("VFMADD231PS %s, %s, %s", y(tt), y(16+t), y(24+t))
	}
	p("ADDQ $210, SI")
	advanceTokens(T)
	p("DECQ CX")
	p("JNZ %sblk", name)
	comment("out[t·ostride + r] = hsum8(acc_t), in hsum_float_8's order.")
	p("MOVQ 16(SP), AX")
	p("MOVQ ostride+56(FP), DX")
	p("SHLQ $2, DX")
	for t := 0; t < T; t++ {
		p("VMOVAPS %s, Y5", y(24+t))
		p("KHSUM8(Y5, X5, X3, X4)")
		p("VMOVSS X3, (AX)")
		if t < T-1 {
			p("ADDQ DX, AX")
		}
	}
	p("ADDQ $4, 16(SP)")
	p("MOVQ 0(SP), AX")
	p("ADDQ wstride+8(FP), AX")
	p("MOVQ AX, 0(SP)")
	p("DECQ 8(SP)")
	p("JNZ %srow", name)
	p("VZEROUPPER")
	p("RET")
}

const header = `// Code generated by dotk_gen.go; DO NOT EDIT.

//go:build amd64 && !noasm

#include "textflag.h"

// AVX-512 (VL, BW, VNNI) K-quant kernels: T = 2..8 activation rows against
// each weight row in one pass over the weights. Each weight block is decoded
// once for all tokens. Per token, VPDPBUSD sums the unsigned quants times
// the int8 activations four at a time (|sum| < 2^15), two such vectors are
// packed into words, and one VPDPWSSD applies both their scales and
// accumulates in int32 lanes: three multiplies per 64 elements instead of
// four, with the same exact sums as the AVX2 kernels, grouped differently.
// Q4_K packs with VPACKSSDW (only the block total matters); Q6_K must keep
// each four-element sum in its ggml lane, so it moves the second vector's
// sums into the high words (shift, then a word-masked move with K1).
// Token t's sums live in Y16+t. The float work is the single-row kernels',
// op for op: Q4_K reduces each token's sums to one lane per token and runs
// its two fused multiply-adds per block on the token lanes; Q6_K keeps
// ggml's eight lanes per token, in Y24+t.

// KHSUM8 adds the eight lanes of acc as ggml's hsum_float_8 does (see
// dot_k_amd64.s), leaving the sum in lane 0 of t.
#define KHSUM8(acc, accx, t, u) \
	VEXTRACTF128 $1, acc, t; \
	VADDPS accx, t, t; \
	VMOVHLPS t, t, u; \
	VADDPS u, t, t; \
	VMOVSHDUP t, u; \
	VADDSS u, t, t

// Q4KTDECODE unpacks the scales and mins of the Q4_K block at SI into X1
// (bytes 0-7 the scales, 8-15 the mins, as q4KScaleMin); clobbers AX, DX,
// R11, R12.
#define Q4KTDECODE \
	MOVL 4(SI), AX; \
	MOVL 12(SI), DX; \
	MOVL AX, R11; \
	ANDL $0x3f3f3f3f, R11; \
	MOVL DX, R12; \
	ANDL $0x0f0f0f0f, R12; \
	SHRL $6, AX; \
	ANDL $0x03030303, AX; \
	SHLL $4, AX; \
	ORL  AX, R12; \
	SHLQ $32, R12; \
	ORQ  R12, R11; \
	MOVL 8(SI), AX; \
	MOVL AX, R12; \
	ANDL $0x3f3f3f3f, R12; \
	SHRL $4, DX; \
	ANDL $0x0f0f0f0f, DX; \
	SHRL $6, AX; \
	ANDL $0x03030303, AX; \
	SHLL $4, AX; \
	ORL  AX, DX; \
	SHLQ $32, DX; \
	ORQ  DX, R12; \
	VMOVQ R11, X1; \
	VPINSRQ $1, R12, X1, X1
`

// data writes the constant tables: byte masks and the Q6_K scale-pair
// indexes (VPERMW's 16 word indexes for groups 2p and 2p+1, 32 elements
// each, alternate their scales: sub-blocks 4p and 4p+2 in words 0-7, 4p+1
// and 4p+3 in words 8-15).
func data() {
	for _, m := range []struct {
		name string
		v    byte
	}{{"ktMask0F", 0x0f}, {"ktMask03", 0x03}, {"ktMask0C", 0x0c}, {"ktMask30", 0x30}, {"ktMaskC0", 0xc0}} {
		for off := 0; off < 32; off += 8 {
			fmt.Fprintf(&b, "DATA %s<>+%d(SB)/8, $0x%016x\n", m.name, off, uint64(m.v)*0x0101010101010101)
		}
		fmt.Fprintf(&b, "GLOBL %s<>(SB), RODATA|NOPTR, $32\n\n", m.name)
	}
	for pr := 0; pr < 4; pr++ {
		for off := 0; off < 32; off += 8 {
			var v uint64
			for i := 3; i >= 0; i-- {
				j := off/2 + i
				v = v<<16 | uint64(2*(2*pr+j&1)+j/8)
			}
			fmt.Fprintf(&b, "DATA ktQ6PairIdx<>+%d(SB)/8, $0x%016x\n", 32*pr+off, v)
		}
	}
	fmt.Fprintf(&b, "GLOBL ktQ6PairIdx<>(SB), RODATA|NOPTR, $128\n\n")
}

func main() {
	b.WriteString(header)
	data()
	data2()
	for T := 2; T <= 8; T++ {
		q4K(T)
	}
	for T := 2; T <= 8; T++ {
		q6K(T)
	}
	for T := 2; T <= 8; T++ {
		q2KT(T)
	}
	for T := 2; T <= 8; T++ {
		q3KT(T)
	}
	for T := 2; T <= 8; T++ {
		q5KT(T)
	}
	for T := 2; T <= 8; T++ {
		iq4XST(T)
	}
	if err := os.WriteFile("dotk_amd64.s", b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}

// The T-token kernels of Q2_K, Q3_K, Q5_K and IQ4_XS (see dot_k2_amd64.go
// and kquants_lanes.go). They keep the AVX2 kernels' integer work per token
// (VPMADDUBSW of each 32-element group against the token's activations),
// but fuse the VPMADDWD by the scales and the VPADDD into one VPDPWSSD,
// which gives the same wrapping int32 lanes; the weight decoding is done
// once per block for all tokens. Token t's lanes are in Y16+t, its eight
// float lanes in Y24+t; the float work per token is the single-row
// kernels', op for op.

// data2 writes the tables of these kernels.
func data2() {
	for off := 0; off < 32; off += 8 {
		fmt.Fprintf(&b, "DATA ktMask04<>+%d(SB)/8, $0x0404040404040404\n", off)
	}
	fmt.Fprintf(&b, "GLOBL ktMask04<>(SB), RODATA|NOPTR, $32\n\n")
	for off := 0; off < 32; off += 8 {
		fmt.Fprintf(&b, "DATA ktMask10<>+%d(SB)/8, $0x1010101010101010\n", off)
	}
	fmt.Fprintf(&b, "GLOBL ktMask10<>(SB), RODATA|NOPTR, $32\n\n")
	fmt.Fprintf(&b, "DATA ktByte32<>+0(SB)/8, $0x2020202020202020\n")
	fmt.Fprintf(&b, "DATA ktByte32<>+8(SB)/8, $0x2020202020202020\n")
	fmt.Fprintf(&b, "GLOBL ktByte32<>(SB), RODATA|NOPTR, $16\n\n")
	// ktScaleShuf<>+16g: the bytes of sub-blocks 2g and 2g+1, eight each.
	for g := 0; g < 8; g++ {
		for h := 0; h < 2; h++ {
			fmt.Fprintf(&b, "DATA ktScaleShuf<>+%d(SB)/8, $0x%016x\n", 16*g+8*h, uint64(2*g+h)*0x0101010101010101)
		}
	}
	fmt.Fprintf(&b, "GLOBL ktScaleShuf<>(SB), RODATA|NOPTR, $128\n\n")
	// ktQ3High<>: bytes 8-11 of the Q3_K scales four times (VPSHUFB), and the
	// dword shifts 0, 2, 4, 6 that bring each quarter's two bits down.
	fmt.Fprintf(&b, "DATA ktQ3High<>+0(SB)/8, $0x0b0a09080b0a0908\n")
	fmt.Fprintf(&b, "DATA ktQ3High<>+8(SB)/8, $0x0b0a09080b0a0908\n")
	fmt.Fprintf(&b, "GLOBL ktQ3High<>(SB), RODATA|NOPTR, $16\n\n")
	fmt.Fprintf(&b, "DATA ktQ3Shifts<>+0(SB)/8, $0x0000000200000000\n")
	fmt.Fprintf(&b, "DATA ktQ3Shifts<>+8(SB)/8, $0x0000000600000004\n")
	fmt.Fprintf(&b, "GLOBL ktQ3Shifts<>(SB), RODATA|NOPTR, $16\n\n")
	vals := []int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	q := func(v []int8) uint64 {
		var r uint64
		for i, x := range v {
			r |= uint64(uint8(x)) << (8 * i)
		}
		return r
	}
	for lane := 0; lane < 2; lane++ {
		fmt.Fprintf(&b, "DATA ktIQ4Values<>+%d(SB)/8, $0x%016x\n", 16*lane, q(vals[:8]))
		fmt.Fprintf(&b, "DATA ktIQ4Values<>+%d(SB)/8, $0x%016x\n", 16*lane+8, q(vals[8:]))
	}
	fmt.Fprintf(&b, "GLOBL ktIQ4Values<>(SB), RODATA|NOPTR, $32\n\n")
	for i := 0; i < 4; i++ {
		fmt.Fprintf(&b, "DATA ktIQ4Shifts<>+%d(SB)/8, $0x%016x\n", 8*i, uint64(4*i)|uint64(4*i+2)<<32)
	}
	fmt.Fprintf(&b, "GLOBL ktIQ4Shifts<>(SB), RODATA|NOPTR, $32\n\n")
	for _, c := range []struct {
		name string
		v    uint64
	}{{"ktDword3", 3}, {"ktDword32", 32}} {
		for i := 0; i < 4; i++ {
			fmt.Fprintf(&b, "DATA %s<>+%d(SB)/8, $0x%016x\n", c.name, 8*i, c.v|c.v<<32)
		}
		fmt.Fprintf(&b, "GLOBL %s<>(SB), RODATA|NOPTR, $32\n\n", c.name)
	}
	// ktDupWord<>: each dword's low word into both of its words.
	for i := 0; i < 4; i++ {
		v := uint64(0x0504050401000100)
		if i%2 == 1 {
			v = 0x0d0c0d0c09080908
		}
		fmt.Fprintf(&b, "DATA ktDupWord<>+%d(SB)/8, $0x%016x\n", 8*i, v)
	}
	fmt.Fprintf(&b, "GLOBL ktDupWord<>(SB), RODATA|NOPTR, $32\n\n")
}

// ktRows emits the row loop shared by these kernels: frame 0 the weight
// row, 8 the rows left, 16 the output pointer; per row the accumulators
// Y24+t are cleared and block(…) runs nb times (SI the weight block, DI,
// BX, R9, R10 and R8 the tokens' blocks, CX counting); store() writes the
// row's outputs from AX (token 0's) and DX (ostride in bytes).
func ktRows(name string, T, frame, bs int, doc string, setup, rowInit, block, store func()) {
	fmt.Fprintf(&b, "\n// func %s(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)\n", name)
	if doc != "" {
		fmt.Fprintf(&b, "//\n// %s\n", doc)
	}
	fmt.Fprintf(&b, "TEXT ·%s(SB), NOSPLIT, $%d-64\n", name, frame)
	p("MOVQ w+0(FP), AX")
	p("MOVQ AX, 0(SP)")
	p("MOVQ rows+16(FP), AX")
	p("MOVQ AX, 8(SP)")
	p("MOVQ out+48(FP), AX")
	p("MOVQ AX, 16(SP)")
	setup()
	label(name + "row")
	p("MOVQ 0(SP), SI")
	p("MOVQ x+24(FP), DI")
	p("MOVQ xstride+32(FP), R8")
	tokenBases(T)
	p("MOVQ nb+40(FP), CX")
	for t := 0; t < T; t++ {
		p("VXORPS %s, %s, %s", y(24+t), y(24+t), y(24+t))
	}
	if rowInit != nil {
		rowInit()
	}
	label(name + "blk")
	block()
	p("ADDQ $%d, SI", bs)
	advanceTokens(T)
	p("DECQ CX")
	p("JNZ %sblk", name)
	p("MOVQ 16(SP), AX")
	p("MOVQ ostride+56(FP), DX")
	p("SHLQ $2, DX")
	store()
	p("ADDQ $4, 16(SP)")
	p("MOVQ 0(SP), AX")
	p("ADDQ wstride+8(FP), AX")
	p("MOVQ AX, 0(SP)")
	p("DECQ 8(SP)")
	p("JNZ %srow", name)
	p("VZEROUPPER")
	p("RET")
}

// ktStoreHsum writes hsum8(Y24+t) (plus, where add ≥ 0, the float at
// add+4t(SP)) for each token, at AX, AX+DX, ...
func ktStoreHsum(T, add int) {
	for t := 0; t < T; t++ {
		p("VMOVAPS %s, Y5", y(24+t))
		p("KHSUM8(Y5, X5, X3, X4)")
		if add >= 0 {
			p("VADDSS %d(SP), X3, X3", add+4*t)
		}
		p("VMOVSS X3, (AX)")
		if t < T-1 {
			p("ADDQ DX, AX")
		}
	}
}

// ktZeroLanes clears the int32 lanes Y16+t.
func ktZeroLanes(T int) {
	for t := 0; t < T; t++ {
		p("VPXORD %s, %s, %s", y(16+t), y(16+t), y(16+t))
	}
}

// ktFuse emits acc_t = fma(x_t.d·w, float32(lanes_t), acc_t) for each token,
// with w broadcast in Y4.
func ktFuse(T int) {
	for t := 0; t < T; t++ {
		tt := 9 + (t & 1)
		p("VCVTDQ2PS %s, %s", y(16+t), y(16+t))
		p("VMULPS.BCST %s, Y4, %s", xaddr(t, 0), y(tt))
		p("VFMADD231PS %s, %s, %s", y(tt), y(16+t), y(24+t))
	}
}

// ktGroup emits, for each token, lanes_t += VPMADDUBSW(x_t + xo, Y<val>)
// scaled by the words of Y<sc>.
func ktGroup(T, val, sc, xo int) {
	for t := 0; t < T; t++ {
		tmp := 10 + (t & 1)
		p("VPMADDUBSW %s, %s, %s", xaddr(t, xo), y(val), y(tmp))
		p("VPDPWSSD %s, %s, %s", y(sc), y(tmp), y(16+t))
	}
}

func q2KT(T int) {
	name := fmt.Sprintf("q2KRowsT%dVNNI", T)
	ktRows(name, T, 24, 84, "Q2_K: per block the mins first (fused negative multiply-adds of mins·bsums pairs), then the quants.",
		func() {
			p("VMOVDQU ktMask0F<>(SB), Y14")
			p("VMOVDQU ktMask03<>(SB), Y15")
		}, nil,
		func() {
			comment("X1 = scales, Y2 = mins as words, Y4 = wd, Y5 = wdmin.")
			p("VMOVDQU (SI), X1")
			p("VPSRLW $4, X1, X2")
			p("VPAND X14, X2, X2")
			p("VPAND X14, X1, X1")
			p("VPMOVZXBW X2, Y2")
			p("MOVL 80(SI), AX")
			p("VMOVD AX, X5")
			p("VCVTPH2PS X5, X5")
			p("VBROADCASTSS X5, Y4")
			p("VMOVSHDUP X5, X5")
			p("VBROADCASTSS X5, Y5")
			comment("acc_t = fma(−x_t.d·wdmin, float32(mins·bsums pairs), acc_t).")
			for t := 0; t < T; t++ {
				a, c := 6+2*(t&1), 7+2*(t&1)
				p("VPMADDWD %s, Y2, %s", xaddr(t, 260), y(a))
				p("VCVTDQ2PS %s, %s", y(a), y(a))
				p("VMULPS.BCST %s, Y5, %s", xaddr(t, 0), y(c))
				p("VFNMADD231PS %s, %s, %s", y(c), y(a), y(24+t))
			}
			ktZeroLanes(T)
			for g := 0; g < 8; g++ {
				if g%4 == 0 {
					p("VMOVDQU %d(SI), Y3", 16+32*(g/4))
				}
				comment(fmt.Sprintf("Group %d: two-bit values in Y12, the scales of sub-blocks %d and %d in Y13.", g, 2*g, 2*g+1))
				p("VPSRLW $%d, Y3, Y12", 2*(g%4))
				p("VPAND Y15, Y12, Y12")
				p("VPSHUFB ktScaleShuf<>+%d(SB), X1, X13", 16*g)
				p("VPMOVZXBW X13, Y13")
				ktGroup(T, 12, 13, 4+32*g)
			}
			ktFuse(T)
		},
		func() { ktStoreHsum(T, -1) })
}

func q3KT(T int) {
	name := fmt.Sprintf("q3KRowsT%dVNNI", T)
	ktRows(name, T, 24, 110, "Q3_K: ggml's Σ low·q8 − Σ 4·(1−high)·q8 in 16 bits, the scales unpacked with vector shifts.",
		func() {
			p("VMOVDQU ktMask04<>(SB), Y14")
			p("VMOVDQU ktMask03<>(SB), Y15")
		}, nil,
		func() {
			comment("X1 = the sixteen scales − 32: low nibbles of bytes 0-7, then their high nibbles,")
			comment("each with two bits of bytes 8-11 (quarter k shifted right by 2k) on top.")
			p("VMOVQ 96(SI), X1")
			p("VPINSRD $2, 104(SI), X1, X1")
			p("VPSRLW $4, X1, X2")
			p("VPUNPCKLQDQ X2, X1, X2")
			p("VPAND ktMask0F<>(SB), X2, X2")
			p("VPSHUFB ktQ3High<>(SB), X1, X1")
			p("VPSRLVD ktQ3Shifts<>(SB), X1, X1")
			p("VPAND X15, X1, X1")
			p("VPSLLW $4, X1, X1")
			p("VPOR X2, X1, X1")
			p("VPSUBB ktByte32<>(SB), X1, X1")
			p("VMOVDQU (SI), Y2")
			ktZeroLanes(T)
			for g := 0; g < 8; g++ {
				if g%4 == 0 {
					p("VMOVDQU %d(SI), Y3", 32+32*(g/4))
				}
				comment(fmt.Sprintf("Group %d: low bits in Y12, high-bit offsets in Y13 (hmask bit %d moved to bit 2), scales in Y5.", g, g))
				p("VPSRLW $%d, Y3, Y12", 2*(g%4))
				p("VPAND Y15, Y12, Y12")
				switch {
				case g < 2:
					p("VPSLLW $%d, Y2, Y13", 2-g)
				default:
					p("VPSRLW $%d, Y2, Y13", g-2)
				}
				p("VPANDN Y14, Y13, Y13")
				p("VPSHUFB ktScaleShuf<>+%d(SB), X1, X5", 16*g)
				p("VPMOVSXBW X5, Y5")
				for t := 0; t < T; t++ {
					a, c := 6+2*(t&1), 7+2*(t&1)
					p("VPMADDUBSW %s, Y12, %s", xaddr(t, 4+32*g), y(a))
					p("VPMADDUBSW %s, Y13, %s", xaddr(t, 4+32*g), y(c))
					p("VPSUBW %s, %s, %s", y(c), y(a), y(a))
					p("VPDPWSSD Y5, %s, %s", y(a), y(16+t))
				}
			}
			p("MOVWLZX 108(SI), AX")
			p("VMOVD AX, X4")
			p("VCVTPH2PS X4, X4")
			p("VBROADCASTSS X4, Y4")
			ktFuse(T)
		},
		func() { ktStoreHsum(T, -1) })
}

func q5KT(T int) {
	name := fmt.Sprintf("q5KRowsT%dVNNI", T)
	ktRows(name, T, 96, 176, "Q5_K. Frame: 32-63 the block's scales as doubled words, 64-95 the tokens' summs (Y13 while running).",
		func() {
			p("VMOVDQU ktMask0F<>(SB), Y14")
		},
		func() { p("VXORPS Y13, Y13, Y13") },
		func() {
			p("Q4KTDECODE")
			p("VPMOVZXBW X1, X3")
			p("VPUNPCKLWD X3, X3, X5")
			p("VPUNPCKHWD X3, X3, X6")
			p("VMOVDQU X5, 32(SP)")
			p("VMOVDQU X6, 48(SP)")
			comment("imin_t = Σ mins[s]·int16(bsums[2s] + bsums[2s+1]) (VPHADDW's pair sums) into lane t of Y2.")
			p("VPSRLDQ $8, X1, X3")
			p("VPMOVZXBW X3, X3")
			var vi []int
			for t := 0; t < T; t++ {
				p("VMOVDQU %s, %s", xaddr(t, 260), x(4+t))
				p("VPHADDW %s, %s, %s", xaddr(t, 276), x(4+t), x(4+t))
				p("VPMADDWD X3, %s, %s", x(4+t), x(4+t))
				vi = append(vi, 4+t)
			}
			tree(vi, 0, 2)
			p("VCVTDQ2PS Y2, Y2")
			comment("Y12 = [x_t.d]·wdmin; summs_t = fma(imin_t, −x_t.d·wdmin, summs_t) in lane t of Y13.")
			for t := 0; t < min(T, 4); t++ {
				if t == 0 {
					p("VMOVSS %s, X12", xaddr(t, 0))
				} else {
					p("VINSERTPS $0x%x, %s, X12, X12", t<<4, xaddr(t, 0))
				}
			}
			for t := 4; t < T; t++ {
				if t == 4 {
					p("VMOVSS %s, X15", xaddr(t, 0))
				} else {
					p("VINSERTPS $0x%x, %s, X15, X15", (t-4)<<4, xaddr(t, 0))
				}
			}
			if T > 4 {
				p("VINSERTF128 $1, X15, Y12, Y12")
			}
			p("MOVL (SI), AX")
			p("VMOVD AX, X4")
			p("VCVTPH2PS X4, X4")
			p("VMOVSHDUP X4, X5")
			p("VBROADCASTSS X5, Y5")
			p("VBROADCASTSS X4, Y4")
			p("VMULPS Y5, Y12, Y12")
			p("VFNMADD231PS Y12, Y2, Y13")
			ktZeroLanes(T)
			p("VMOVDQU 16(SI), Y3")
			for j := 0; j < 4; j++ {
				if j > 0 {
					p("VPSRLW $2, Y3, Y3")
				}
				comment(fmt.Sprintf("Sub-blocks %d (Y5) and %d (Y6): nibbles and the fifth bits; scales in Y7, Y8.", 2*j, 2*j+1))
				p("VMOVDQU %d(SI), Y5", 48+32*j)
				p("VPSRLW $4, Y5, Y6")
				p("VPAND Y14, Y5, Y5")
				p("VPAND Y14, Y6, Y6")
				p("VPSLLW $4, Y3, Y7")
				p("VPAND ktMask10<>(SB), Y7, Y7")
				p("VPOR Y7, Y5, Y5")
				p("VPSLLW $3, Y3, Y7")
				p("VPAND ktMask10<>(SB), Y7, Y7")
				p("VPOR Y7, Y6, Y6")
				p("VPBROADCASTD %d(SP), Y7", 32+8*j)
				p("VPBROADCASTD %d(SP), Y8", 36+8*j)
				ktGroup(T, 5, 7, 4+64*j)
				ktGroup(T, 6, 8, 36+64*j)
			}
			ktFuse(T)
		},
		func() {
			p("VMOVUPS Y13, 64(SP)")
			ktStoreHsum(T, 64)
		})
}

func iq4XST(T int) {
	name := fmt.Sprintf("iq4XSRowsT%dVNNI", T)
	ktRows(name, T, 64, 136, "IQ4_XS: ggml's |v|·sign(q8, v) per token. Frame: 32-63 the block's scales as doubled words.",
		func() {
			p("VMOVDQU ktMask0F<>(SB), Y14")
			p("VMOVDQU ktIQ4Values<>(SB), Y15")
		}, nil,
		func() {
			comment("Scales − 32 as doubled words: nibbles of scales_l, two bits each of scales_h.")
			p("MOVL 4(SI), AX")
			p("VMOVD AX, X3")
			p("VPSRLW $4, X3, X4")
			p("VPUNPCKLBW X4, X3, X3")
			p("VPAND X14, X3, X3")
			p("VPMOVZXBD X3, Y3")
			p("MOVWLZX 2(SI), AX")
			p("VMOVD AX, X4")
			p("VPBROADCASTD X4, Y4")
			p("VPSRLVD ktIQ4Shifts<>(SB), Y4, Y4")
			p("VPAND ktDword3<>(SB), Y4, Y4")
			p("VPSLLD $4, Y4, Y4")
			p("VPOR Y4, Y3, Y3")
			p("VPSUBD ktDword32<>(SB), Y3, Y3")
			p("VPSHUFB ktDupWord<>(SB), Y3, Y3")
			p("VMOVDQU Y3, 32(SP)")
			ktZeroLanes(T)
			for s := 0; s < 8; s++ {
				comment(fmt.Sprintf("Sub-block %d: values in Y3, |values| in Y5, scale in Y7.", s))
				p("VMOVDQU %d(SI), X3", 8+16*s)
				p("VPSRLW $4, X3, X4")
				p("VINSERTI128 $1, X4, Y3, Y3")
				p("VPAND Y14, Y3, Y3")
				p("VPSHUFB Y3, Y15, Y3")
				p("VPABSB Y3, Y5")
				p("VPBROADCASTD %d(SP), Y7", 32+4*s)
				for t := 0; t < T; t++ {
					a := 8 + (t & 1)
					p("VMOVDQU %s, %s", xaddr(t, 4+32*s), y(a))
					p("VPSIGNB Y3, %s, %s", y(a), y(a))
					p("VPMADDUBSW %s, Y5, %s", y(a), y(a))
					p("VPDPWSSD Y7, %s, %s", y(a), y(16+t))
				}
			}
			p("MOVWLZX (SI), AX")
			p("VMOVD AX, X4")
			p("VCVTPH2PS X4, X4")
			p("VBROADCASTSS X4, Y4")
			ktFuse(T)
		},
		func() { ktStoreHsum(T, -1) })
}
