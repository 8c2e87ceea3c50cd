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
	for T := 2; T <= 8; T++ {
		q4K(T)
	}
	for T := 2; T <= 8; T++ {
		q6K(T)
	}
	if err := os.WriteFile("dotk_amd64.s", b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
