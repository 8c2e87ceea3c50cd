//go:build amd64 && !noasm

#include "textflag.h"

// Q8_0 and Q4_0 weights against q8VNNI activations (dotq_amd64.go) with
// AVX-512 VL and VNNI, 1 to 8 tokens per pass over the weights. The
// activation blocks carry what depends on the token alone (the float32
// scale, the offsets that turn unsigned products into signed ones), so the
// per-token work is only the products and the FMA. The integer sums are
// those of the Go references (q8.go), regrouped; the float operations per
// output are the same and in the same order.
//
// Registers: SI weight row (group), DX weight stride, R8 weight block, R10
// activation row of token 0, R14 activation stride, DI activation block of
// token 0, R9 activation block of the current token, R11 output, CX block
// counter, R13 f16Table. Token t accumulates in Y24+t.

// hsumStore reduces accumulator Y (low half X) as hsum_float_8 (halves,
// then movehl, then movehdup) and stores the float at DST. Clobbers X1.
#define hsumStore(Y, X, DST) \
	VEXTRACTF128 $1, Y, X1 \
	VADDPS       X, X1, X \
	VMOVHLPS     X, X, X1 \
	VADDPS       X1, X, X \
	VMOVSHDUP    X, X1 \
	VADDSS       X1, X, X \
	MOVSS        X, DST

#define zeroAcc \
	VPXORD Y24, Y24, Y24 \
	VPXORD Y25, Y25, Y25 \
	VPXORD Y26, Y26, Y26 \
	VPXORD Y27, Y27, Y27 \
	VPXORD Y28, Y28, Y28 \
	VPXORD Y29, Y29, Y29 \
	VPXORD Y30, Y30, Y30 \
	VPXORD Y31, Y31, Y31

// q8vToken accumulates one q8VNNI block at R9 against the weight block
// (Y2 = its quants + 128 as unsigned bytes) into ACC: the lane sums
// Σ (w+128)·x over groups of 4 start from the block's -128·Σx, so they are
// exactly Σ w·x, ggml's lane sums; then acc = fma(float32(lane sum), D, acc)
// with D = d_w·d_x, lane IDX of Y1 broadcast. Clobbers Y3, Y5.
#define q8vToken(IDX, ACC) \
	VMOVDQU     32(R9), Y5 \
	VPDPBUSD    (R9), Y2, Y5 \
	VCVTDQ2PS   Y5, Y5 \
	VPERMPS     Y1, IDX, Y3 \
	VFMADD231PS Y5, Y3, ACC

// q8vTabBlocks is the number of blocks whose activation scales fit in
// q8_0RowsV's frame.
#define q8vTabBlocks 512

// func q8_0RowsV(w *byte, wstride, rows int, x *byte, xstride, ntok, nb int, out *float32, ostride int, tab *float32)
//
// The tokens' activation scales are first gathered into a table (block i,
// token t at 32i + 4t; in the frame, or at tab when nb > q8vTabBlocks), so
// that per weight block one VMULPS forms d_w·d_x for every token (stored at
// 0(SP)). The rows counter lives at 32(SP), the table's address at 40(SP).
TEXT ·q8_0RowsV(SB), $16448-80
	MOVQ   x+24(FP), R9
	MOVQ   xstride+32(FP), R14
	MOVQ   ntok+40(FP), BX
	MOVQ   nb+48(FP), CX
	MOVQ   tab+72(FP), R12
	LEAQ   64(SP), AX
	CMPQ   CX, $q8vTabBlocks
	CMOVQLE AX, R12
	MOVQ   R12, 40(SP)
	MOVQ   R12, AX
	VXORPS Y0, Y0, Y0
	TESTQ  CX, CX
	JZ     q8vtabdone

q8vtabblk:
	VMOVUPS Y0, (AX)
	MOVQ    R9, R8
	XORQ    DI, DI

q8vtabtok:
	MOVL 64(R8), SI
	MOVL SI, (AX)(DI*4)
	ADDQ R14, R8
	INCQ DI
	CMPQ DI, BX
	JLT  q8vtabtok
	ADDQ $72, R9
	ADDQ $32, AX
	DECQ CX
	JNZ  q8vtabblk

q8vtabdone:
	MOVQ         w+0(FP), SI
	MOVQ         wstride+8(FP), DX
	MOVQ         rows+16(FP), AX
	MOVQ         AX, 32(SP)
	MOVQ         x+24(FP), R10
	MOVQ         out+56(FP), R11
	MOVQ         ·f16Table(SB), R13
	MOVL         $0x80808080, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $1, AX
	VPXOR        Y6, Y6, Y6
	VPBROADCASTD AX, Y7
	VPADDD       Y7, Y7, Y8
	VPADDD       Y7, Y8, Y10
	VPADDD       Y7, Y10, Y11
	VPADDD       Y7, Y11, Y12
	VPADDD       Y7, Y12, Y13
	VPADDD       Y7, Y13, Y15
	CMPQ         32(SP), $0
	JLE          q8vdone

q8vrow:
	MOVQ  SI, R8
	MOVQ  R10, DI
	MOVQ  40(SP), R12
	MOVQ  nb+48(FP), CX
	zeroAcc
	TESTQ CX, CX
	JZ    q8vrowdone

q8vloop:
	// Several tokens' work per block leaves the hardware prefetcher
	// behind when the weights stream from memory: fetch 640 bytes ahead.
	PREFETCHT0   640(R8)
	MOVWLZX      (R8), AX
	VBROADCASTSS (R13)(AX*4), Y9
	VMULPS       (R12), Y9, Y1
	VPXORD       2(R8), Y14, Y2
	MOVQ         DI, R9
	q8vToken(Y6, Y24)
	CMPQ         BX, $1
	JLE          q8vtokdone
	ADDQ         R14, R9
	q8vToken(Y7, Y25)
	CMPQ         BX, $2
	JLE          q8vtokdone
	ADDQ         R14, R9
	q8vToken(Y8, Y26)
	CMPQ         BX, $3
	JLE          q8vtokdone
	ADDQ         R14, R9
	q8vToken(Y10, Y27)
	CMPQ         BX, $4
	JLE          q8vtokdone
	ADDQ         R14, R9
	q8vToken(Y11, Y28)
	CMPQ         BX, $5
	JLE          q8vtokdone
	ADDQ         R14, R9
	q8vToken(Y12, Y29)
	CMPQ         BX, $6
	JLE          q8vtokdone
	ADDQ         R14, R9
	q8vToken(Y13, Y30)
	CMPQ         BX, $7
	JLE          q8vtokdone
	ADDQ         R14, R9
	q8vToken(Y15, Y31)

q8vtokdone:
	ADDQ $34, R8
	ADDQ $72, DI
	ADDQ $32, R12
	DECQ CX
	JNZ  q8vloop

q8vrowdone:
	MOVQ    ostride+64(FP), AX
	SHLQ    $2, AX
	MOVQ    R11, R9
	VMOVAPS Y24, Y0
	hsumStore(Y0, X0, (R9))
	CMPQ    BX, $1
	JLE     q8vstored
	ADDQ    AX, R9
	VMOVAPS Y25, Y0
	hsumStore(Y0, X0, (R9))
	CMPQ    BX, $2
	JLE     q8vstored
	ADDQ    AX, R9
	VMOVAPS Y26, Y0
	hsumStore(Y0, X0, (R9))
	CMPQ    BX, $3
	JLE     q8vstored
	ADDQ    AX, R9
	VMOVAPS Y27, Y0
	hsumStore(Y0, X0, (R9))
	CMPQ    BX, $4
	JLE     q8vstored
	ADDQ    AX, R9
	VMOVAPS Y28, Y0
	hsumStore(Y0, X0, (R9))
	CMPQ    BX, $5
	JLE     q8vstored
	ADDQ    AX, R9
	VMOVAPS Y29, Y0
	hsumStore(Y0, X0, (R9))
	CMPQ    BX, $6
	JLE     q8vstored
	ADDQ    AX, R9
	VMOVAPS Y30, Y0
	hsumStore(Y0, X0, (R9))
	CMPQ    BX, $7
	JLE     q8vstored
	ADDQ    AX, R9
	VMOVAPS Y31, Y0
	hsumStore(Y0, X0, (R9))

q8vstored:
	ADDQ $4, R11
	ADDQ DX, SI
	DECQ 32(SP)
	JNZ  q8vrow

q8vdone:
	VZEROUPPER
	RET

// permV puts lanes ordered [r0 r2 r4 r6 r1 r3 r5 r7] back in row order.
DATA permV<>+0(SB)/4, $0
DATA permV<>+4(SB)/4, $4
DATA permV<>+8(SB)/4, $1
DATA permV<>+12(SB)/4, $5
DATA permV<>+16(SB)/4, $2
DATA permV<>+20(SB)/4, $6
DATA permV<>+24(SB)/4, $3
DATA permV<>+28(SB)/4, $7
GLOBL permV<>(SB), RODATA|NOPTR, $32

// q4vDecode transposes the quants of the eight rows' current blocks (rows
// 0-3 at R8 + r·DX, rows 4-7 at R12 + r·DX, BX = 3·DX) so that lane l of
// Y16+k holds row p(l)'s unsigned quants 4k..4k+3, with p = [0 2 4 6 1 3 5
// 7]: Y16-Y19 the low nibbles (elements 0-15), Y20-Y23 the high ones
// (16-31). Y15 = 0x0f bytes. Clobbers Y0-Y7.
#define q4vDecode \
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
	VPUNPCKHQDQ Y3, Y1, Y7 \
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
	VPBROADCASTD  68(R9), Y4 \
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
	VMULPS.BCST   64(R9), Y12, Y5 \
	VFMADD231PS   Y5, Y4, ACC

// q4vStore writes accumulator ACC, permuted to row order by Y0, at R9.
#define q4vStore(ACC) \
	VPERMPS ACC, Y0, Y1 \
	VMOVUPS Y1, (R9)

// func q4_0Rows8V(w *byte, wstride, groups int, x *byte, xstride, ntok, nb int, out *float32, ostride int)
//
// Groups of eight Q4_0 rows: each block of the eight rows is decoded once
// and dotted with every token. The group counter and the prefetch pointer
// live on the stack.
TEXT ·q4_0Rows8V(SB), NOSPLIT, $16-72
	MOVQ         w+0(FP), SI
	MOVQ         wstride+8(FP), DX
	MOVQ         groups+16(FP), AX
	MOVQ         AX, 0(SP)
	MOVQ         x+24(FP), R10
	MOVQ         xstride+32(FP), R14
	MOVQ         out+56(FP), R11
	MOVQ         ·f16Table(SB), R13
	LEAQ         (DX)(DX*2), BX
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
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
	// ahead, 192 bytes per block against the 144 consumed. Prefetches
	// past the matrix are harmless.
	MOVQ       8(SP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	ADDQ       $192, AX
	MOVQ       AX, 8(SP)
	q4vDecode
	q4vScales
	MOVQ       DI, R9
	q4vToken(Y24)
	CMPQ       ntok+40(FP), $1
	JLE        q4vtokdone
	ADDQ       R14, R9
	q4vToken(Y25)
	CMPQ       ntok+40(FP), $2
	JLE        q4vtokdone
	ADDQ       R14, R9
	q4vToken(Y26)
	CMPQ       ntok+40(FP), $3
	JLE        q4vtokdone
	ADDQ       R14, R9
	q4vToken(Y27)
	CMPQ       ntok+40(FP), $4
	JLE        q4vtokdone
	ADDQ       R14, R9
	q4vToken(Y28)
	CMPQ       ntok+40(FP), $5
	JLE        q4vtokdone
	ADDQ       R14, R9
	q4vToken(Y29)
	CMPQ       ntok+40(FP), $6
	JLE        q4vtokdone
	ADDQ       R14, R9
	q4vToken(Y30)
	CMPQ       ntok+40(FP), $7
	JLE        q4vtokdone
	ADDQ       R14, R9
	q4vToken(Y31)

q4vtokdone:
	ADDQ $18, R8
	ADDQ $18, R12
	ADDQ $72, DI
	DECQ CX
	JNZ  q4vloop

	JMP  q4vgroupdone

	// Five tokens (speculative verification) without the per-token
	// branches.
q4v5loop:
	MOVQ       8(SP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	ADDQ       $192, AX
	MOVQ       AX, 8(SP)
	q4vDecode
	q4vScales
	MOVQ       DI, R9
	q4vToken(Y24)
	ADDQ       R14, R9
	q4vToken(Y25)
	ADDQ       R14, R9
	q4vToken(Y26)
	ADDQ       R14, R9
	q4vToken(Y27)
	ADDQ       R14, R9
	q4vToken(Y28)
	ADDQ       $18, R8
	ADDQ       $18, R12
	ADDQ       $72, DI
	DECQ       CX
	JNZ        q4v5loop

q4vgroupdone:
	MOVQ    ostride+64(FP), AX
	SHLQ    $2, AX
	VMOVDQU permV<>(SB), Y0
	MOVQ    R11, R9
	q4vStore(Y24)
	CMPQ    ntok+40(FP), $1
	JLE     q4vstored
	ADDQ    AX, R9
	q4vStore(Y25)
	CMPQ    ntok+40(FP), $2
	JLE     q4vstored
	ADDQ    AX, R9
	q4vStore(Y26)
	CMPQ    ntok+40(FP), $3
	JLE     q4vstored
	ADDQ    AX, R9
	q4vStore(Y27)
	CMPQ    ntok+40(FP), $4
	JLE     q4vstored
	ADDQ    AX, R9
	q4vStore(Y28)
	CMPQ    ntok+40(FP), $5
	JLE     q4vstored
	ADDQ    AX, R9
	q4vStore(Y29)
	CMPQ    ntok+40(FP), $6
	JLE     q4vstored
	ADDQ    AX, R9
	q4vStore(Y30)
	CMPQ    ntok+40(FP), $7
	JLE     q4vstored
	ADDQ    AX, R9
	q4vStore(Y31)

q4vstored:
	ADDQ $32, R11
	LEAQ (SI)(DX*8), SI
	DECQ 0(SP)
	JNZ  q4vgroup

q4vdone:
	VZEROUPPER
	RET

// func q8_0RowsV1(w *byte, wstride, rows int, x *byte, nb int, out *float32)
//
// q8_0RowsV for one token, without the scale table: d_w·d_x is formed
// from the block's float32 scale directly.
TEXT ·q8_0RowsV1(SB), NOSPLIT, $0-48
	MOVQ         w+0(FP), SI
	MOVQ         wstride+8(FP), DX
	MOVQ         rows+16(FP), R12
	MOVQ         x+24(FP), R10
	MOVQ         out+40(FP), R11
	MOVQ         ·f16Table(SB), R13
	MOVL         $0x80808080, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	TESTQ        R12, R12
	JZ           q8v1done

q8v1row:
	MOVQ   SI, R8
	MOVQ   R10, DI
	MOVQ   nb+32(FP), CX
	VPXORD Y24, Y24, Y24
	TESTQ  CX, CX
	JZ     q8v1rowdone

q8v1loop:
	MOVWLZX      (R8), AX
	VBROADCASTSS (R13)(AX*4), Y9
	VPXORD       2(R8), Y14, Y2
	VMULPS.BCST  64(DI), Y9, Y1
	VMOVDQU      32(DI), Y5
	VPDPBUSD     (DI), Y2, Y5
	VCVTDQ2PS    Y5, Y5
	VFMADD231PS  Y5, Y1, Y24
	ADDQ         $34, R8
	ADDQ         $72, DI
	DECQ         CX
	JNZ          q8v1loop

q8v1rowdone:
	VMOVAPS Y24, Y0
	hsumStore(Y0, X0, (R11))
	ADDQ    $4, R11
	ADDQ    DX, SI
	DECQ    R12
	JNZ     q8v1row

q8v1done:
	VZEROUPPER
	RET

// q8pTok accumulates token T's q8VNNI block (quants at Q, offsets at O)
// against the pair's weight blocks (Y2 row a, Y3 row b, quants + 128) into
// ACCA and ACCB, as q8vToken does, with d_w·d_x broadcast from lane IDX of
// the pair's products (Y9 row a, Y10 row b). Clobbers Y1, Y4, Y5, Y15.
#define q8pTok(Q, O, IDX, ACCA, ACCB) \
	VMOVDQU     O, Y4 \
	VMOVDQA     Y4, Y5 \
	VPDPBUSD    Q, Y2, Y4 \
	VPDPBUSD    Q, Y3, Y5 \
	VCVTDQ2PS   Y4, Y4 \
	VCVTDQ2PS   Y5, Y5 \
	VPERMPS     Y9, IDX, Y1 \
	VPERMPS     Y10, IDX, Y15 \
	VFMADD231PS Y4, Y1, ACCA \
	VFMADD231PS Y5, Y15, ACCB

// hsumAcc reduces accumulator ACC (Y16-Y31) into the float at DST.
#define hsumAcc(ACC, DST) \
	VMOVAPS ACC, Y0 \
	hsumStore(Y0, X0, DST)

// func q8_0Rows2x5V(w *byte, wstride, pairs, half int, x *byte, xstride, nb int, tab *float32, out *float32, ostride int)
//
// q8_0RowsV for five tokens with weight rows in pairs half the matrix
// apart: row r (r < pairs) and row r+pairs, whose weights start half bytes
// later, so each token's activation quants and offsets serve both rows and
// memory sees two sequential streams. tab holds the tokens' scales (block
// i, token t at 8i+t, lanes 5-7 zero); per block one VMULPS per row forms
// d_w·d_x for every token, and VPERMPS broadcasts each token's (a product
// stored and reloaded as a broadcast stalls on store forwarding: 20%
// slower). The tokens' activation blocks are DI + t·R14 (R15 = 3·R14); row
// b's weights are R8 + BX. The pair counter lives at 0(SP).
TEXT ·q8_0Rows2x5V(SB), NOSPLIT, $8-80
	MOVQ         w+0(FP), SI
	MOVQ         wstride+8(FP), DX
	MOVQ         pairs+16(FP), AX
	MOVQ         AX, 0(SP)
	MOVQ         half+24(FP), BX
	MOVQ         x+32(FP), R10
	MOVQ         xstride+40(FP), R14
	LEAQ         (R14)(R14*2), R15
	MOVQ         out+64(FP), R11
	MOVQ         ·f16Table(SB), R13
	MOVL         $0x80808080, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $1, AX
	VPXOR        Y6, Y6, Y6
	VPBROADCASTD AX, Y7
	VPADDD       Y7, Y7, Y8
	VPADDD       Y7, Y8, Y11
	VPADDD       Y7, Y11, Y12
	CMPQ         0(SP), $0
	JLE          q8pdone

q8prow:
	MOVQ   SI, R8
	MOVQ   R10, DI
	MOVQ   tab+56(FP), R12
	MOVQ   nb+48(FP), CX
	VPXORD Y16, Y16, Y16
	VPXORD Y17, Y17, Y17
	VPXORD Y18, Y18, Y18
	VPXORD Y19, Y19, Y19
	VPXORD Y20, Y20, Y20
	zeroAcc
	TESTQ  CX, CX
	JZ     q8prowdone

q8ploop:
	// Both streams 640 bytes ahead: the hardware prefetcher alone falls
	// behind (32000×512 streamed, 1.37-1.44 against 1.47-2.3 ms without).
	PREFETCHT0   640(R8)
	PREFETCHT0   640(R8)(BX*1)
	MOVWLZX      (R8), AX
	VBROADCASTSS (R13)(AX*4), Y9
	VMULPS       (R12), Y9, Y9
	MOVWLZX      (R8)(BX*1), AX
	VBROADCASTSS (R13)(AX*4), Y10
	VMULPS       (R12), Y10, Y10
	VPXORD       2(R8), Y14, Y2
	VPXORD       2(R8)(BX*1), Y14, Y3
	q8pTok((DI), 32(DI), Y6, Y16, Y24)
	q8pTok((DI)(R14*1), 32(DI)(R14*1), Y7, Y17, Y25)
	q8pTok((DI)(R14*2), 32(DI)(R14*2), Y8, Y18, Y26)
	q8pTok((DI)(R15*1), 32(DI)(R15*1), Y11, Y19, Y27)
	q8pTok((DI)(R14*4), 32(DI)(R14*4), Y12, Y20, Y28)
	ADDQ         $34, R8
	ADDQ         $72, DI
	ADDQ         $32, R12
	DECQ         CX
	JNZ          q8ploop

q8prowdone:
	MOVQ    ostride+72(FP), AX
	SHLQ    $2, AX
	MOVQ    pairs+16(FP), R9
	LEAQ    (R11)(R9*4), R9
	MOVQ    R11, R12
	hsumAcc(Y16, (R12))
	hsumAcc(Y24, (R9))
	ADDQ    AX, R12
	ADDQ    AX, R9
	hsumAcc(Y17, (R12))
	hsumAcc(Y25, (R9))
	ADDQ    AX, R12
	ADDQ    AX, R9
	hsumAcc(Y18, (R12))
	hsumAcc(Y26, (R9))
	ADDQ    AX, R12
	ADDQ    AX, R9
	hsumAcc(Y19, (R12))
	hsumAcc(Y27, (R9))
	ADDQ    AX, R12
	ADDQ    AX, R9
	hsumAcc(Y20, (R12))
	hsumAcc(Y28, (R9))
	ADDQ    $4, R11
	ADDQ    DX, SI
	DECQ    0(SP)
	JNZ     q8prow

q8pdone:
	VZEROUPPER
	RET
