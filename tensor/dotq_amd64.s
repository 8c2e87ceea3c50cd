//go:build amd64 && !noasm

#include "textflag.h"

// Q8_0 and Q4_0 weights against q8VNNI activations (dotq_amd64.go) with
// AVX-512 VL and VNNI, 1 to 8 tokens per pass over the weights. The
// activation blocks carry what depends on the token alone (the float32
// scale, the offset that turns unsigned products into signed ones), so the
// per-token work is only the products and the FMA. The integer sums are
// those of the Go references (q8.go), regrouped; the float operations per
// output are the same and in the same order.
//
// Registers: SI weight row group, DX weight stride, R8 and R12 weight
// blocks of rows 0-3 and 4-7, R10 activation row of token 0, R14
// activation stride, DI activation block of token 0, R9 activation block
// of the current token, R11 output, CX block counter, R13 f16Table, R15
// block size. Token t accumulates in Y24+t.

#define zeroAcc \
	VPXORD Y24, Y24, Y24 \
	VPXORD Y25, Y25, Y25 \
	VPXORD Y26, Y26, Y26 \
	VPXORD Y27, Y27, Y27 \
	VPXORD Y28, Y28, Y28 \
	VPXORD Y29, Y29, Y29 \
	VPXORD Y30, Y30, Y30 \
	VPXORD Y31, Y31, Y31

// rows8T transposes 16 bytes of each of the eight rows' current blocks,
// from offset OFF (rows 0-3 at R8 + r·DX, rows 4-7 at R12 + r·DX, BX =
// 3·DX), so that lane l of Y4+k holds row p(l)'s bytes 4k..4k+3, with p =
// [0 2 4 6 1 3 5 7]. Clobbers Y0-Y7.
#define rows8T(OFF) \
	VMOVDQU     OFF(R8), X4 \
	VINSERTI128 $1, OFF(R8)(DX*1), Y4, Y4 \
	VMOVDQU     OFF(R8)(DX*2), X5 \
	VINSERTI128 $1, OFF(R8)(BX*1), Y5, Y5 \
	VMOVDQU     OFF(R12), X6 \
	VINSERTI128 $1, OFF(R12)(DX*1), Y6, Y6 \
	VMOVDQU     OFF(R12)(DX*2), X7 \
	VINSERTI128 $1, OFF(R12)(BX*1), Y7, Y7 \
	VPUNPCKLDQ  Y5, Y4, Y0 \
	VPUNPCKHDQ  Y5, Y4, Y1 \
	VPUNPCKLDQ  Y7, Y6, Y2 \
	VPUNPCKHDQ  Y7, Y6, Y3 \
	VPUNPCKLQDQ Y2, Y0, Y4 \
	VPUNPCKHQDQ Y2, Y0, Y5 \
	VPUNPCKLQDQ Y3, Y1, Y6 \
	VPUNPCKHQDQ Y3, Y1, Y7

// q4vDecode transposes the quants of the eight rows' current Q4_0 blocks
// (rows8T) so that lane l of Y16+k holds row p(l)'s unsigned quants
// 4k..4k+3: Y16-Y19 the low nibbles (elements 0-15), Y20-Y23 the high ones
// (16-31). Y15 = 0x0f bytes. Clobbers Y0-Y7.
#define q4vDecode \
	rows8T(2) \
	q4vNibbles

// q4vNibbles splits the transposed quants in Y4-Y7 (lane l of Y4+k: a
// row's bytes 4k..4k+3) into Y16-Y19 (low nibbles) and Y20-Y23 (high
// nibbles). Y15 = 0x0f bytes. Clobbers Y4-Y7.
#define q4vNibbles \
	VPANDD      Y15, Y4, Y16 \
	VPANDD      Y15, Y5, Y17 \
	VPANDD      Y15, Y6, Y18 \
	VPANDD      Y15, Y7, Y19 \
	VPSRLW      $4, Y4, Y4 \
	VPSRLW      $4, Y5, Y5 \
	VPSRLW      $4, Y6, Y6 \
	VPSRLW      $4, Y7, Y7 \
	VPANDD      Y15, Y4, Y20 \
	VPANDD      Y15, Y5, Y21 \
	VPANDD      Y15, Y6, Y22 \
	VPANDD      Y15, Y7, Y23

// q8vHalf transposes 16 bytes of the quants of the eight rows' current
// Q8_0 blocks, from offset OFF (rows8T: lane l of D0+k holds row p(l)'s
// quants 4k..4k+3 of the 16), flipped to unsigned (+128) with Y14 = 0x80
// bytes. Clobbers Y0-Y7.
#define q8vHalf(OFF, D0, D1, D2, D3) \
	rows8T(OFF) \
	VPXORD      Y14, Y4, D0 \
	VPXORD      Y14, Y5, D1 \
	VPXORD      Y14, Y6, D2 \
	VPXORD      Y14, Y7, D3

// q4vScales gathers the eight rows' F16 scales in lane order p into Y12 as
// float32. Clobbers AX, X12.
#define q4vScales \
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

// q4vToken accumulates the q8VNNI block at R9 against the eight decoded
// rows into ACC (lane l: row p(l)): each row's whole sum Σ q·y over its 32
// unsigned nibbles, in two chains of four VPDPBUSD on the broadcast
// activation quants, the first starting from the block's -8·Σy, so the
// lane holds exactly Σ (q-8)·y; then acc = fma(float32(sum), d_w·d_x, acc).
// Clobbers Y4, Y5.
#define q4vToken(ACC) \
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

// q4vStore writes accumulator ACC, permuted to row order by Y0 (·permRows8,
// dot_amd64.s), at R9.
#define q4vStore(ACC) \
	VPERMPS ACC, Y0, Y1 \
	VMOVUPS Y1, (R9)

// q0Tokens accumulates the decoded block (Y16-Y23, scales Y12) into the
// ntok tokens' accumulators from the activation block at DI on, jumping to
// DONE after the last. Clobbers R9.
#define q0Tokens(DONE) \
	MOVQ DI, R9 \
	q4vToken(Y24) \
	CMPQ ntok+40(FP), $1 \
	JLE  DONE \
	ADDQ R14, R9 \
	q4vToken(Y25) \
	CMPQ ntok+40(FP), $2 \
	JLE  DONE \
	ADDQ R14, R9 \
	q4vToken(Y26) \
	CMPQ ntok+40(FP), $3 \
	JLE  DONE \
	ADDQ R14, R9 \
	q4vToken(Y27) \
	CMPQ ntok+40(FP), $4 \
	JLE  DONE \
	ADDQ R14, R9 \
	q4vToken(Y28) \
	CMPQ ntok+40(FP), $5 \
	JLE  DONE \
	ADDQ R14, R9 \
	q4vToken(Y29) \
	CMPQ ntok+40(FP), $6 \
	JLE  DONE \
	ADDQ R14, R9 \
	q4vToken(Y30) \
	CMPQ ntok+40(FP), $7 \
	JLE  DONE \
	ADDQ R14, R9 \
	q4vToken(Y31) \
	JMP  DONE

// q0Five is q0Tokens for exactly five tokens, without the branches (the
// speculative verification pass). Clobbers R9.
#define q0Five \
	MOVQ DI, R9 \
	q4vToken(Y24) \
	ADDQ R14, R9 \
	q4vToken(Y25) \
	ADDQ R14, R9 \
	q4vToken(Y26) \
	ADDQ R14, R9 \
	q4vToken(Y27) \
	ADDQ R14, R9 \
	q4vToken(Y28)

// q0Stores writes the ntok accumulators, in row order, from R11 on at the
// output stride, jumping to DONE after the last. Clobbers AX, R9, Y0, Y1.
#define q0Stores(DONE) \
	MOVQ    ostride+64(FP), AX \
	SHLQ    $2, AX \
	VMOVDQU ·permRows8(SB), Y0 \
	MOVQ    R11, R9 \
	q4vStore(Y24) \
	CMPQ    ntok+40(FP), $1 \
	JLE     DONE \
	ADDQ    AX, R9 \
	q4vStore(Y25) \
	CMPQ    ntok+40(FP), $2 \
	JLE     DONE \
	ADDQ    AX, R9 \
	q4vStore(Y26) \
	CMPQ    ntok+40(FP), $3 \
	JLE     DONE \
	ADDQ    AX, R9 \
	q4vStore(Y27) \
	CMPQ    ntok+40(FP), $4 \
	JLE     DONE \
	ADDQ    AX, R9 \
	q4vStore(Y28) \
	CMPQ    ntok+40(FP), $5 \
	JLE     DONE \
	ADDQ    AX, R9 \
	q4vStore(Y29) \
	CMPQ    ntok+40(FP), $6 \
	JLE     DONE \
	ADDQ    AX, R9 \
	q4vStore(Y30) \
	CMPQ    ntok+40(FP), $7 \
	JLE     DONE \
	ADDQ    AX, R9 \
	q4vStore(Y31) \
	JMP     DONE

// func q0Rows8V(w *byte, wstride, groups int, x *byte, xstride, ntok, nb int, out *float32, ostride int, bsize int)
//
// Groups of eight Q4_0 (bsize 18) or Q8_0 (bsize 34) rows: each block of
// the eight rows is decoded once and dotted with every token. The group
// counter and the prefetch pointer live on the stack; R15 holds bsize.
TEXT ·q0Rows8V(SB), NOSPLIT, $16-80
	MOVQ         w+0(FP), SI
	MOVQ         wstride+8(FP), DX
	MOVQ         groups+16(FP), AX
	MOVQ         AX, 0(SP)
	MOVQ         x+24(FP), R10
	MOVQ         xstride+32(FP), R14
	MOVQ         out+56(FP), R11
	MOVQ         ·f16Table(SB), R13
	LEAQ         (DX)(DX*2), BX
	MOVQ         bsize+72(FP), R15
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Y14
	CMPQ         0(SP), $0
	JLE          q4vdone

q4vgroup:
	MOVQ  SI, R8
	LEAQ  (SI)(DX*4), R12
	LEAQ  (SI)(DX*8), AX
	MOVQ  AX, 8(SP)
	MOVQ  R10, DI
	MOVQ  nb+48(FP), CX
	zeroAcc
	TESTQ CX, CX
	JZ    q4vgroupdone
	CMPQ  ntok+40(FP), $5
	JEQ   q4v5loop

q4vloop:
	// Eight interleaved row streams defeat the hardware prefetcher: fetch
	// the next group's rows (contiguous when wstride is the row size)
	// ahead, 192 bytes per Q4_0 block against the 144 consumed, 320 per
	// Q8_0 block against 272. Prefetches past the matrix are harmless.
	MOVQ       8(SP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	CMPQ       R15, $18
	JNE        q0vq8
	ADDQ       $192, AX
	MOVQ       AX, 8(SP)
	q4vDecode
	JMP        q0vdecoded

q0vq8:
	PREFETCHT0 192(AX)
	PREFETCHT0 256(AX)
	ADDQ       $320, AX
	MOVQ       AX, 8(SP)
	q8vHalf(2, Y16, Y17, Y18, Y19)
	q8vHalf(18, Y20, Y21, Y22, Y23)

q0vdecoded:
	q4vScales
	q0Tokens(q4vtokdone)

q4vtokdone:
	ADDQ R15, R8
	ADDQ R15, R12
	ADDQ $40, DI
	DECQ CX
	JNZ  q4vloop

	JMP  q4vgroupdone

	// Five tokens (speculative verification) without the per-token
	// branches. A separate loop: one loop branching to the five-token
	// code after the first token measured 25-40% slower on the streamed
	// one-token Q8_0 product.
q4v5loop:
	MOVQ       8(SP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	CMPQ       R15, $18
	JNE        q0v5q8
	ADDQ       $192, AX
	MOVQ       AX, 8(SP)
	q4vDecode
	JMP        q0v5decoded

q0v5q8:
	PREFETCHT0 192(AX)
	PREFETCHT0 256(AX)
	ADDQ       $320, AX
	MOVQ       AX, 8(SP)
	q8vHalf(2, Y16, Y17, Y18, Y19)
	q8vHalf(18, Y20, Y21, Y22, Y23)

q0v5decoded:
	q4vScales
	q0Five
	ADDQ       R15, R8
	ADDQ       R15, R12
	ADDQ       $40, DI
	DECQ       CX
	JNZ        q4v5loop

q4vgroupdone:
	q0Stores(q4vstored)

q4vstored:
	ADDQ $32, R11
	LEAQ (SI)(DX*8), SI
	DECQ 0(SP)
	JNZ  q4vgroup

q4vdone:
	VZEROUPPER
	RET

// The interleaved layouts (repack.go): a group of eight rows holds, per
// block, the eight F16 scales and then the quants, both already in the
// lane order p of rows8T (Q8_0's quants already unsigned), so a block is
// decoded with four (Q4_0) or eight (Q8_0) loads instead of a transpose.
// Registers as in q0Rows8V, with R8 the group's current block, BX the
// group counter and R15 the bytes of one block of eight rows.

// q4x8Decode decodes the eight rows' Q4_0 block at R8 into Y16-Y23 (as
// q4vDecode). Clobbers Y4-Y7.
#define q4x8Decode \
	VMOVDQU 16(R8), Y4 \
	VMOVDQU 48(R8), Y5 \
	VMOVDQU 80(R8), Y6 \
	VMOVDQU 112(R8), Y7 \
	q4vNibbles

// q8x8Decode loads the eight rows' unsigned Q8_0 quants at R8 into
// Y16-Y23 (as q8vHalf twice).
#define q8x8Decode \
	VMOVDQU32 16(R8), Y16 \
	VMOVDQU32 48(R8), Y17 \
	VMOVDQU32 80(R8), Y18 \
	VMOVDQU32 112(R8), Y19 \
	VMOVDQU32 144(R8), Y20 \
	VMOVDQU32 176(R8), Y21 \
	VMOVDQU32 208(R8), Y22 \
	VMOVDQU32 240(R8), Y23

// q0x8Block decodes the block at R8 (Q4_0 when R15 is 144, else Q8_0) and
// its scales into Y12; L8 and LDONE name its local labels.
#define q0x8Block(L8, LDONE) \
	CMPQ      R15, $144 \
	JNE       L8 \
	q4x8Decode \
	JMP       LDONE \
L8: \
	q8x8Decode \
LDONE: \
	VCVTPH2PS (R8), Y12

// func q0x8Rows8V(w *byte, wstride, groups int, x *byte, xstride, ntok, nb int, out *float32, ostride int, gsize int)
//
// Groups of eight interleaved Q4_0 (gsize 144) or Q8_0 (gsize 272) rows,
// contiguous from w (wstride is not used), against ntok (1 to 8) q8VNNI
// activation rows: the outputs of q0Rows8V over the same rows row-major,
// bit for bit.
TEXT ·q0x8Rows8V(SB), NOSPLIT, $0-80
	MOVQ         w+0(FP), R8
	MOVQ         groups+16(FP), BX
	MOVQ         x+24(FP), R10
	MOVQ         xstride+32(FP), R14
	MOVQ         out+56(FP), R11
	MOVQ         gsize+72(FP), R15
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	TESTQ        BX, BX
	JLE          q0x8done

q0x8group:
	MOVQ  R10, DI
	MOVQ  nb+48(FP), CX
	zeroAcc
	TESTQ CX, CX
	JZ    q0x8groupdone
	CMPQ  ntok+40(FP), $5
	JEQ   q0x85loop

q0x8loop:
	q0x8Block(q0x8q8, q0x8decoded)
	q0Tokens(q0x8tokdone)

q0x8tokdone:
	ADDQ R15, R8
	ADDQ $40, DI
	DECQ CX
	JNZ  q0x8loop
	JMP  q0x8groupdone

	// Five tokens without the per-token branches (as q4v5loop).
q0x85loop:
	q0x8Block(q0x85q8, q0x85decoded)
	q0Five
	ADDQ R15, R8
	ADDQ $40, DI
	DECQ CX
	JNZ  q0x85loop

q0x8groupdone:
	q0Stores(q0x8stored)

q0x8stored:
	ADDQ $32, R11
	DECQ BX
	JNZ  q0x8group

q0x8done:
	VZEROUPPER
	RET
