//go:build amd64 && !noasm

#include "textflag.h"
#include "q4_amd64.h"

// Q8_0 and Q4_0 weights against q8VNNI activations (dotq_amd64.go) with
// AVX-512 VL and VNNI, 1 to 8 tokens per pass over the weights. The
// activation blocks carry what depends on the token alone (the float32
// scale, the offset that turns unsigned products into signed ones), so the
// per-token work is only the products and the FMA. The integer sums are
// those of the Go references (q8.go), regrouped; the float operations per
// output are the same and in the same order.
//
// Registers as in q4_amd64.h (SI weight row group, DX weight stride, R8
// and R12 weight blocks of rows 0-3 and 4-7, R10 activation row of token 0,
// R14 activation stride, DI activation block of token 0, R9 activation
// block of the current token, R11 output, CX block counter; token t
// accumulates in Y24+t), with R13 f16Table and R15 the block size.

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

// q0vBlock decodes the eight rows' current blocks, Q4_0 when R15 is 18
// (q4vDecode), else Q8_0 (q8vHalf twice), into Y16-Y23 and their scales
// into Y12, first fetching the next group's rows ahead (q4vFetch): 192
// bytes per Q4_0 block against the 144 consumed, 320 per Q8_0 block
// against 272. LQ8 and LDONE name its local labels. Clobbers AX, Y0-Y7.
#define q0vBlock(LQ8, LDONE) \
	q4vFetch(8) \
	CMPQ       R15, $18 \
	JNE        LQ8 \
	q4vAdvance(8, 192) \
	q4vDecode \
	JMP        LDONE \
LQ8: \
	PREFETCHT0 192(AX) \
	PREFETCHT0 256(AX) \
	q4vAdvance(8, 320) \
	q8vHalf(2, Y16, Y17, Y18, Y19) \
	q8vHalf(18, Y20, Y21, Y22, Y23) \
LDONE: \
	q4vScales

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
	nibbleMask
	MOVL         $0x80808080, AX
	VPBROADCASTD AX, Y14
	CMPQ         0(SP), $0
	JLE          q4vdone

q4vgroup:
	q4vGroup(8)
	MOVQ  nb+48(FP), CX
	q4vZero(q4vgroupdone)
	CMPQ  ntok+40(FP), $5
	JEQ   q4v5loop

q4vloop:
	q0vBlock(q0vq8, q0vdecoded)
	q4vTokens(q4vtokdone)
	JMP  q4vtokdone

q4vtokdone:
	q4vNext(R15, q4vloop)
	JMP  q4vgroupdone

	// Five tokens (speculative verification) without the per-token
	// branches. A separate loop: one loop branching to the five-token
	// code after the first token measured 25-40% slower on the streamed
	// one-token Q8_0 product.
q4v5loop:
	q0vBlock(q0v5q8, q0v5decoded)
	q4vFive
	q4vNext(R15, q4v5loop)

q4vgroupdone:
	q4vStores(q4vstored)
	JMP  q4vstored

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
	nibbleMask
	TESTQ        BX, BX
	JLE          q0x8done

q0x8group:
	MOVQ  R10, DI
	MOVQ  nb+48(FP), CX
	q4vZero(q0x8groupdone)
	CMPQ  ntok+40(FP), $5
	JEQ   q0x85loop

q0x8loop:
	q0x8Block(q0x8q8, q0x8decoded)
	q4vTokens(q0x8tokdone)
	JMP  q0x8tokdone

q0x8tokdone:
	ADDQ R15, R8
	ADDQ $40, DI
	DECQ CX
	JNZ  q0x8loop
	JMP  q0x8groupdone

	// Five tokens without the per-token branches (as q4v5loop).
q0x85loop:
	q0x8Block(q0x85q8, q0x85decoded)
	q4vFive
	ADDQ R15, R8
	ADDQ $40, DI
	DECQ CX
	JNZ  q0x85loop

q0x8groupdone:
	q4vStores(q0x8stored)
	JMP  q0x8stored

q0x8stored:
	ADDQ $32, R11
	DECQ BX
	JNZ  q0x8group

q0x8done:
	VZEROUPPER
	RET
