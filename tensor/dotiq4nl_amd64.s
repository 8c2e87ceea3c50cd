//go:build amd64 && !noasm

#include "textflag.h"
#include "q4_amd64.h"

// IQ4_NL weights against q8VNNI128 activations (dotq_amd64.go) with AVX-512
// VL, BW and VNNI, 1 to 8 tokens per pass over the weights: the Q8_0
// kernel q0Rows8V's scheme (dotq_amd64.s) with the levels looked up. Each
// row's 32 indices become the unsigned bytes v+128 (a VPSHUFB of the table
// kvalues_iq4nl+128); VPDPBUSD sums them against the activation quants
// starting from the block's -128·Σy, so every lane holds exactly Σ v·y, and
// acc = fma(float32(sum), d_w·d_x, acc): the operations of
// dotIQ4_NLGeneric in its order, bit-identical to it and to the AVX2
// kernels.
//
// Registers as in q0Rows8V (q4_amd64.h): SI weight row group, DX weight
// stride, R8 and R12 weight blocks of rows 0-3 and 4-7, BX = 3·DX, R10
// activation row of token 0, R14 activation stride, DI activation block of
// token 0, R9 that of the current token, R11 output, CX block counter, R13
// f16Table. Token t accumulates in Y24+t (lane l: row p(l), p = [0 2 4 6 1
// 3 5 7]); Y16-Y23 hold the decoded rows, Y12 their scales, Y13 the table,
// Y15 0x0f bytes.

// nlvDecode leaves in Y16-Y19 the unsigned levels v+128 of elements 0-15
// of the eight rows and in Y20-Y23 those of 16-31, four per lane: the
// indices as Q4_0 quants (q4vDecode), then looked up in Y13. Clobbers
// Y0-Y7.
#define nlvDecode \
	q4vDecode \
	VPSHUFB Y16, Y13, Y16 \
	VPSHUFB Y17, Y13, Y17 \
	VPSHUFB Y18, Y13, Y18 \
	VPSHUFB Y19, Y13, Y19 \
	VPSHUFB Y20, Y13, Y20 \
	VPSHUFB Y21, Y13, Y21 \
	VPSHUFB Y22, Y13, Y22 \
	VPSHUFB Y23, Y13, Y23

// nlvBlock fetches the next group's rows ahead, 192 bytes per block
// against the 144 consumed (the pointer lives at 8(SP)), then decodes the
// eight rows' current blocks into Y16-Y23 and their scales into Y12.
// Clobbers AX, Y0-Y7.
#define nlvBlock \
	q4vFetch(8) \
	q4vAdvance(8, 192) \
	nlvDecode \
	q4vScales

// func iq4nlRows8V(w *byte, wstride, groups int, x *byte, xstride, ntok, nb int, out *float32, ostride int)
TEXT ·iq4nlRows8V(SB), NOSPLIT, $16-72
	MOVQ           w+0(FP), SI
	MOVQ           wstride+8(FP), DX
	MOVQ           groups+16(FP), AX
	MOVQ           AX, 0(SP)
	MOVQ           x+24(FP), R10
	MOVQ           xstride+32(FP), R14
	MOVQ           out+56(FP), R11
	MOVQ           ·f16Table(SB), R13
	LEAQ           (DX)(DX*2), BX
	nibbleMask
	VBROADCASTI128 ·iq4nlLUT128(SB), Y13
	CMPQ           0(SP), $0
	JLE            done

group:
	q4vGroup(8)
	MOVQ  nb+48(FP), CX
	q4vZero(groupdone)
	CMPQ  ntok+40(FP), $5
	JEQ   loop5

loop:
	nlvBlock
	q4vTokens(tokdone)

tokdone:
	q4vNext($18, loop)
	JMP groupdone

	// Five tokens (speculative verification) without the per-token
	// branches, as in q0Rows8V.
loop5:
	nlvBlock
	q4vFive
	q4vNext($18, loop5)

groupdone:
	q4vStores(stored)

stored:
	ADDQ $32, R11
	LEAQ (SI)(DX*8), SI
	DECQ 0(SP)
	JNZ  group

done:
	VZEROUPPER
	RET

// iq4nlLUT128 is kvalues_iq4nl + 128: the IQ4_NL levels as unsigned bytes.
DATA ·iq4nlLUT128+0(SB)/8, $0x766a5d4f3f2d1801
DATA ·iq4nlLUT128+8(SB)/8, $0xf1d9c5b5a6998d81
GLOBL ·iq4nlLUT128(SB), RODATA|NOPTR, $16
