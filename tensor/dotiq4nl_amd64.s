//go:build amd64 && !noasm

#include "textflag.h"

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
// Registers as in q0Rows8V: SI weight row group, DX weight stride, R8 and
// R12 weight blocks of rows 0-3 and 4-7, BX = 3·DX, R10 activation row of
// token 0, R14 activation stride, DI activation block of token 0, R9 that
// of the current token, R11 output, CX block counter, R13 f16Table. Token
// t accumulates in Y24+t (lane l: row p(l), p = [0 2 4 6 1 3 5 7]); Y16-Y23
// hold the decoded rows, Y12 their scales, Y13 the table, Y15 0x0f bytes.

#define nlvZeroAcc \
	VPXORD Y24, Y24, Y24 \
	VPXORD Y25, Y25, Y25 \
	VPXORD Y26, Y26, Y26 \
	VPXORD Y27, Y27, Y27 \
	VPXORD Y28, Y28, Y28 \
	VPXORD Y29, Y29, Y29 \
	VPXORD Y30, Y30, Y30 \
	VPXORD Y31, Y31, Y31

// nlvRows8T transposes the 16 quant bytes of each of the eight rows'
// current blocks (rows8T in dotq_amd64.s) so that lane l of Y4+k holds row
// p(l)'s bytes 4k..4k+3. Clobbers Y0-Y7.
#define nlvRows8T \
	VMOVDQU     2(R8), X4 \
	VINSERTI128 $1, 2(R8)(DX*1), Y4, Y4 \
	VMOVDQU     2(R8)(DX*2), X5 \
	VINSERTI128 $1, 2(R8)(BX*1), Y5, Y5 \
	VMOVDQU     2(R12), X6 \
	VINSERTI128 $1, 2(R12)(DX*1), Y6, Y6 \
	VMOVDQU     2(R12)(DX*2), X7 \
	VINSERTI128 $1, 2(R12)(BX*1), Y7, Y7 \
	VPUNPCKLDQ  Y5, Y4, Y0 \
	VPUNPCKHDQ  Y5, Y4, Y1 \
	VPUNPCKLDQ  Y7, Y6, Y2 \
	VPUNPCKHDQ  Y7, Y6, Y3 \
	VPUNPCKLQDQ Y2, Y0, Y4 \
	VPUNPCKHQDQ Y2, Y0, Y5 \
	VPUNPCKLQDQ Y3, Y1, Y6 \
	VPUNPCKHQDQ Y3, Y1, Y7

// nlvDecode leaves in Y16-Y19 the unsigned levels v+128 of elements 0-15
// of the eight rows and in Y20-Y23 those of 16-31, four per lane. Clobbers
// Y0-Y7.
#define nlvDecode \
	nlvRows8T \
	VPANDD  Y15, Y4, Y16 \
	VPANDD  Y15, Y5, Y17 \
	VPANDD  Y15, Y6, Y18 \
	VPANDD  Y15, Y7, Y19 \
	VPSRLW  $4, Y4, Y4 \
	VPSRLW  $4, Y5, Y5 \
	VPSRLW  $4, Y6, Y6 \
	VPSRLW  $4, Y7, Y7 \
	VPANDD  Y15, Y4, Y20 \
	VPANDD  Y15, Y5, Y21 \
	VPANDD  Y15, Y6, Y22 \
	VPANDD  Y15, Y7, Y23 \
	VPSHUFB Y16, Y13, Y16 \
	VPSHUFB Y17, Y13, Y17 \
	VPSHUFB Y18, Y13, Y18 \
	VPSHUFB Y19, Y13, Y19 \
	VPSHUFB Y20, Y13, Y20 \
	VPSHUFB Y21, Y13, Y21 \
	VPSHUFB Y22, Y13, Y22 \
	VPSHUFB Y23, Y13, Y23

// nlvScales gathers the eight rows' F16 scales in lane order p into Y12 as
// float32. Clobbers AX, X12.
#define nlvScales \
	MOVWLZX   (R8), AX \
	VMOVD     AX, X12 \
	VPINSRW   $1, (R8)(DX*2), X12, X12 \
	VPINSRW   $2, (R12), X12, X12 \
	VPINSRW   $3, (R12)(DX*2), X12, X12 \
	VPINSRW   $4, (R8)(DX*1), X12, X12 \
	VPINSRW   $5, (R8)(BX*1), X12, X12 \
	VPINSRW   $6, (R12)(DX*1), X12, X12 \
	VPINSRW   $7, (R12)(BX*1), X12, X12 \
	VCVTPH2PS X12, Y12

// nlvToken accumulates the q8VNNI128 block at R9 against the eight decoded
// rows into ACC: two chains of four VPDPBUSD on the broadcast activation
// quants, the first starting from the block's -128·Σy, then acc =
// fma(float32(sum), d_w·d_x, acc). Clobbers Y4, Y5.
#define nlvToken(ACC) \
	VPBROADCASTD  36(R9), Y4 \
	VPXORD        Y5, Y5, Y5 \
	VPDPBUSD.BCST 0(R9), Y16, Y4 \
	VPDPBUSD.BCST 4(R9), Y17, Y5 \
	VPDPBUSD.BCST 8(R9), Y18, Y4 \
	VPDPBUSD.BCST 12(R9), Y19, Y5 \
	VPDPBUSD.BCST 16(R9), Y20, Y4 \
	VPDPBUSD.BCST 20(R9), Y21, Y5 \
	VPDPBUSD.BCST 24(R9), Y22, Y4 \
	VPDPBUSD.BCST 28(R9), Y23, Y5 \
	VPADDD        Y5, Y4, Y4 \
	VCVTDQ2PS     Y4, Y4 \
	VMULPS.BCST   32(R9), Y12, Y5 \
	VFMADD231PS   Y5, Y4, ACC

// nlvStore writes accumulator ACC, permuted to row order by Y0
// (·permRows8), at R9.
#define nlvStore(ACC) \
	VPERMPS ACC, Y0, Y1 \
	VMOVUPS Y1, (R9)

// nlvPrefetch fetches the next group's rows ahead, 192 bytes per block
// against the 144 consumed (the pointer lives at 8(SP)).
#define nlvPrefetch \
	MOVQ       8(SP), AX \
	PREFETCHT0 (AX) \
	PREFETCHT0 64(AX) \
	PREFETCHT0 128(AX) \
	ADDQ       $192, AX \
	MOVQ       AX, 8(SP)

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
	MOVL           $0x0f0f0f0f, AX
	VMOVD          AX, X15
	VPBROADCASTD   X15, Y15
	VBROADCASTI128 ·iq4nlLUT128(SB), Y13
	CMPQ           0(SP), $0
	JLE            done

group:
	MOVQ  SI, R8
	LEAQ  (SI)(DX*4), R12
	LEAQ  (SI)(DX*8), AX
	MOVQ  AX, 8(SP)
	MOVQ  R10, DI
	MOVQ  nb+48(FP), CX
	nlvZeroAcc
	TESTQ CX, CX
	JZ    groupdone
	CMPQ  ntok+40(FP), $5
	JEQ   loop5

loop:
	nlvPrefetch
	nlvDecode
	nlvScales
	MOVQ DI, R9
	nlvToken(Y24)
	CMPQ ntok+40(FP), $1
	JLE  tokdone
	ADDQ R14, R9
	nlvToken(Y25)
	CMPQ ntok+40(FP), $2
	JLE  tokdone
	ADDQ R14, R9
	nlvToken(Y26)
	CMPQ ntok+40(FP), $3
	JLE  tokdone
	ADDQ R14, R9
	nlvToken(Y27)
	CMPQ ntok+40(FP), $4
	JLE  tokdone
	ADDQ R14, R9
	nlvToken(Y28)
	CMPQ ntok+40(FP), $5
	JLE  tokdone
	ADDQ R14, R9
	nlvToken(Y29)
	CMPQ ntok+40(FP), $6
	JLE  tokdone
	ADDQ R14, R9
	nlvToken(Y30)
	CMPQ ntok+40(FP), $7
	JLE  tokdone
	ADDQ R14, R9
	nlvToken(Y31)

tokdone:
	ADDQ $18, R8
	ADDQ $18, R12
	ADDQ $40, DI
	DECQ CX
	JNZ  loop
	JMP  groupdone

	// Five tokens (speculative verification) without the per-token
	// branches, as in q0Rows8V.
loop5:
	nlvPrefetch
	nlvDecode
	nlvScales
	MOVQ DI, R9
	nlvToken(Y24)
	ADDQ R14, R9
	nlvToken(Y25)
	ADDQ R14, R9
	nlvToken(Y26)
	ADDQ R14, R9
	nlvToken(Y27)
	ADDQ R14, R9
	nlvToken(Y28)
	ADDQ $18, R8
	ADDQ $18, R12
	ADDQ $40, DI
	DECQ CX
	JNZ  loop5

groupdone:
	MOVQ    ostride+64(FP), AX
	SHLQ    $2, AX
	VMOVDQU ·permRows8(SB), Y0
	MOVQ    R11, R9
	nlvStore(Y24)
	CMPQ    ntok+40(FP), $1
	JLE     stored
	ADDQ    AX, R9
	nlvStore(Y25)
	CMPQ    ntok+40(FP), $2
	JLE     stored
	ADDQ    AX, R9
	nlvStore(Y26)
	CMPQ    ntok+40(FP), $3
	JLE     stored
	ADDQ    AX, R9
	nlvStore(Y27)
	CMPQ    ntok+40(FP), $4
	JLE     stored
	ADDQ    AX, R9
	nlvStore(Y28)
	CMPQ    ntok+40(FP), $5
	JLE     stored
	ADDQ    AX, R9
	nlvStore(Y29)
	CMPQ    ntok+40(FP), $6
	JLE     stored
	ADDQ    AX, R9
	nlvStore(Y30)
	CMPQ    ntok+40(FP), $7
	JLE     stored
	ADDQ    AX, R9
	nlvStore(Y31)

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
