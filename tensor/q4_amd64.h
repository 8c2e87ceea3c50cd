// Macros shared by the amd64 assembly of package tensor: register
// clearing (dotf16_amd64.s, roof_amd64.s and the kernels below), the 0x0f
// byte mask, and the pieces of the eight-row kernels on 4-bit and 8-bit
// weight blocks against q8VNNI activations: q0Rows8V and q0x8Rows8V
// (dotq_amd64.s) and iq4nlRows8V (dotiq4nl_amd64.s) with AVX-512 VNNI,
// q4_0Rows8VT (dotq4t_amd64.s, group walk and prefetch only) with AVX2.
//
// Register plan of the eight-row kernels: SI weight row group, DX weight
// stride, R8 and R12 weight blocks of rows 0-3 and 4-7, BX = 3·DX, R10
// activation row of token 0, R14 activation stride, DI activation block of
// token 0, R9 activation block of the current token, R11 output, CX block
// counter. In the VNNI kernels the decoded rows are in Y16-Y23 (lane l: row
// p(l), p = [0 2 4 6 1 3 5 7]), their scales in Y12, 0x0f bytes in Y15,
// and token t accumulates in Y24+t. The per-token macros (q4vEach and its
// users) read ntok+40(FP) and ostride+64(FP): the kernels using them share
// that argument layout.

// clear2 and clear4 zero their registers with OP (A = A OP A): VXORPS for
// Y0-Y15, VPXORD (EVEX) for Y16-Y31 or where the EVEX form is wanted.
#define clear2(OP, A, B) \
	OP A, A, A \
	OP B, B, B

#define clear4(OP, A, B, C, D) \
	clear2(OP, A, B) \
	clear2(OP, C, D)

// zeroY0to7, zeroY0to9 and zeroY0to11 clear Y0 up to Y7, Y9 or Y11 with OP.
#define zeroY0to7(OP) \
	clear4(OP, Y0, Y1, Y2, Y3) \
	clear4(OP, Y4, Y5, Y6, Y7)

#define zeroY0to9(OP) \
	zeroY0to7(OP) \
	clear2(OP, Y8, Y9)

#define zeroY0to11(OP) \
	zeroY0to9(OP) \
	clear2(OP, Y10, Y11)

// zeroY16to23, zeroY16to25 and zeroY16to27 clear Y16 up to Y23, Y25 or
// Y27; zeroY24to31 clears Y24-Y31 (all with VPXORD).
#define zeroY16to23 \
	clear4(VPXORD, Y16, Y17, Y18, Y19) \
	clear4(VPXORD, Y20, Y21, Y22, Y23)

#define zeroY16to25 \
	zeroY16to23 \
	clear2(VPXORD, Y24, Y25)

#define zeroY16to27 \
	zeroY16to25 \
	clear2(VPXORD, Y26, Y27)

#define zeroY24to31 \
	clear4(VPXORD, Y24, Y25, Y26, Y27) \
	clear4(VPXORD, Y28, Y29, Y30, Y31)

// nibbleMask sets Y15 = 0x0f bytes. Clobbers AX.
#define nibbleMask \
	MOVL         $0x0f0f0f0f, AX \
	VMOVD        AX, X15 \
	VPBROADCASTD X15, Y15

// q4vGroup starts a group of eight rows at SI: R8 and R12 at rows 0 and 4,
// the next group's start (the prefetch pointer) at SLOT(SP), DI at token
// 0's first activation block. Clobbers AX.
#define q4vGroup(SLOT) \
	MOVQ SI, R8 \
	LEAQ (SI)(DX*4), R12 \
	LEAQ (SI)(DX*8), AX \
	MOVQ AX, SLOT(SP) \
	MOVQ R10, DI

// q4vZero clears the token accumulators Y24-Y31 and jumps to DONE when
// the block count CX is zero.
#define q4vZero(DONE) \
	zeroY24to31 \
	TESTQ CX, CX \
	JZ    DONE

// q4vFetch loads the prefetch pointer kept at SLOT(SP) into AX and fetches
// the three cache lines from it. Eight interleaved row streams defeat the
// hardware prefetcher; the next group's rows are contiguous when wstride
// is the row size, and prefetches past the matrix are harmless.
#define q4vFetch(SLOT) \
	MOVQ       SLOT(SP), AX \
	PREFETCHT0 (AX) \
	PREFETCHT0 64(AX) \
	PREFETCHT0 128(AX)

// q4vAdvance moves the prefetch pointer in AX N bytes on and stores it back
// at SLOT(SP).
#define q4vAdvance(SLOT, N) \
	ADDQ $N, AX \
	MOVQ AX, SLOT(SP)

// q4vNext moves the eight rows (R8, R12) one block of BSIZE bytes on and DI
// one q8VNNI block (40 bytes) on, and loops to LOOP while blocks are left.
#define q4vNext(BSIZE, LOOP) \
	ADDQ BSIZE, R8 \
	ADDQ BSIZE, R12 \
	ADDQ $40, DI \
	DECQ CX \
	JNZ  LOOP

// rows8T transposes 16 bytes of each of the eight rows' current blocks,
// from offset OFF (rows 0-3 at R8 + r·DX, rows 4-7 at R12 + r·DX, BX =
// 3·DX), so that lane l of Y4+k holds row p(l)'s bytes 4k..4k+3.
// Clobbers Y0-Y7.
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

// q4vDecode transposes the 4-bit quants of the eight rows' current blocks
// (16 bytes at offset 2, after the F16 scale: Q4_0 and IQ4_NL) so that
// lane l of Y16+k holds row p(l)'s unsigned quants 4k..4k+3: Y16-Y19 the
// low nibbles (elements 0-15), Y20-Y23 the high ones (16-31). Y15 = 0x0f
// bytes. Clobbers Y0-Y7.
#define q4vDecode \
	rows8T(2) \
	q4vNibbles

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
// rows into ACC (lane l: row p(l)): each row's sum Σ u·y over its 32
// unsigned quants u, in two chains of four VPDPBUSD on the broadcast
// activation quants, the first starting from the block's offset at 36
// (-8·Σy for Q4_0, where u = q+8; -128·Σy for Q8_0 and IQ4_NL, where u =
// q+128), so the lane holds exactly the signed Σ q·y; then acc =
// fma(float32(sum), d_w·d_x, acc). Clobbers Y4, Y5.
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

// q4vStore writes accumulator ACC, permuted to row order by Y0
// (·permRows8, dot_amd64.s), at R9. Clobbers Y1.
#define q4vStore(ACC) \
	VPERMPS ACC, Y0, Y1 \
	VMOVUPS Y1, (R9)

// q4vThen is one link of q4vEach, after T tokens: to DONE when ntok <= T,
// else R9 on by STRIDE and STEP(ACC).
#define q4vThen(STEP, STRIDE, DONE, T, ACC) \
	CMPQ ntok+40(FP), $T \
	JLE  DONE \
	ADDQ STRIDE, R9 \
	STEP(ACC)

// q4vEach runs STEP(Y24+t) for the tokens t = 0 to ntok-1, moving R9
// STRIDE bytes on between tokens, and jumps to DONE after the last when
// ntok < 8 (after the eighth it falls through).
#define q4vEach(STEP, STRIDE, DONE) \
	STEP(Y24) \
	q4vThen(STEP, STRIDE, DONE, 1, Y25) \
	q4vThen(STEP, STRIDE, DONE, 2, Y26) \
	q4vThen(STEP, STRIDE, DONE, 3, Y27) \
	q4vThen(STEP, STRIDE, DONE, 4, Y28) \
	q4vThen(STEP, STRIDE, DONE, 5, Y29) \
	q4vThen(STEP, STRIDE, DONE, 6, Y30) \
	q4vThen(STEP, STRIDE, DONE, 7, Y31)

// q4vTokens accumulates the decoded block (Y16-Y23, scales Y12) into the
// ntok tokens' accumulators from the activation block at DI on (q4vEach:
// DONE after the last). Clobbers R9, Y4, Y5.
#define q4vTokens(DONE) \
	MOVQ DI, R9 \
	q4vEach(q4vToken, R14, DONE)

// q4vFive is q4vTokens for exactly five tokens, without the branches (the
// speculative verification pass). Clobbers R9, Y4, Y5.
#define q4vFive \
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

// q4vStores writes the ntok accumulators, in row order, from R11 on at the
// output stride (q4vEach: DONE after the last). Clobbers AX, R9, Y0, Y1.
#define q4vStores(DONE) \
	MOVQ    ostride+64(FP), AX \
	SHLQ    $2, AX \
	VMOVDQU ·permRows8(SB), Y0 \
	MOVQ    R11, R9 \
	q4vEach(q4vStore, AX, DONE)
