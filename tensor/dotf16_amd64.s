//go:build amd64 && !noasm

#include "textflag.h"
#include "q4_amd64.h"

// Two- and three-token F16 kernels: f16Rows4's two passes over each weight
// row (elements 0-15 of every 32 into accumulators 0 and 1, then 16-31 into
// 2 and 3), with every token's four accumulators kept in registers and the
// token count fixed, so the loops carry no spills and no per-token
// branches. Each output gets the single-token kernel's FMAs in the same
// order and the same reduction. There is no software prefetch: with the
// weights streamed from memory the hardware prefetcher alone keeps up
// better than a PREFETCHT0 one, two or four rows ahead (32000×512 and
// 1536×512 F16, BenchmarkF16Pass).
//
// Registers: SI weight row, DX weight stride, R12 rows left, R10 token 0,
// R14 token stride, R11 output, AX output stride in bytes, R8/DI weight and
// activation pointers, CX steps of 32 elements, Y12-Y13 converted weights,
// Y14-Y15 converted activations, Y0-Y11 the accumulators (Y4t..Y4t+3 for
// token t).

// f16pTok converts one token's 16 halves at A and B and FMAs them with the
// weights in Y12, Y13 into ACCA, ACCB.
#define f16pTok(A, B, ACCA, ACCB) \
	VCVTPH2PS   A, Y14 \
	VCVTPH2PS   B, Y15 \
	VFMADD231PS Y14, Y12, ACCA \
	VFMADD231PS Y15, Y13, ACCB

// f16pRed reduces A0-A3 (low half of A0 in XA0) as GGML_F32x8_REDUCE and
// stores the float at DST. Clobbers X12.
#define f16pRed(A0, A1, A2, A3, XA0, DST) \
	VADDPS       A2, A0, A0 \
	VADDPS       A3, A1, A1 \
	VADDPS       A1, A0, A0 \
	VEXTRACTF128 $1, A0, X12 \
	VADDPS       X12, XA0, XA0 \
	VHADDPS      XA0, XA0, XA0 \
	VHADDPS      XA0, XA0, XA0 \
	MOVSS        XA0, DST

// f16pStart points R8, DI at the row's start and CX at its step count.
#define f16pStart \
	MOVQ SI, R8 \
	MOVQ R10, DI \
	MOVQ n+48(FP), CX \
	SHRQ $5, CX

// f16pNext moves R8, DI one step (32 halves) on and loops to LOOP while
// steps are left.
#define f16pNext(LOOP) \
	ADDQ $64, R8 \
	ADDQ $64, DI \
	DECQ CX \
	JNZ  LOOP

// f16pW converts the row's 16 halves at O0(R8) and O1(R8) into Y12, Y13.
#define f16pW(O0, O1) \
	VCVTPH2PS O0(R8), Y12 \
	VCVTPH2PS O1(R8), Y13

// f16pRed2 and f16pRed3 reduce tokens 0-1 or 0-2 (accumulators Y0-Y3,
// Y4-Y7, Y8-Y11) with f16pRed and store them at DST + t·AX. Clobbers X12.
#define f16pRed2(DST) \
	f16pRed(Y0, Y1, Y2, Y3, X0, (DST)) \
	f16pRed(Y4, Y5, Y6, Y7, X4, (DST)(AX*1))

#define f16pRed3(DST) \
	f16pRed2(DST) \
	f16pRed(Y8, Y9, Y10, Y11, X8, (DST)(AX*2))

// f16pNextRow moves on to the next row and its output, looping to LOOP
// while rows are left.
#define f16pNextRow(LOOP) \
	ADDQ $4, R11 \
	ADDQ DX, SI \
	DECQ R12 \
	JNZ  LOOP

// func f16Rows23(w *byte, wstride, rows int, x *byte, xstride, ntok, n int, out *float32, ostride int)
//
// ntok is 2 or 3, n a positive multiple of 32.
TEXT ·f16Rows23(SB), NOSPLIT, $0-72
	MOVQ  w+0(FP), SI
	MOVQ  wstride+8(FP), DX
	MOVQ  rows+16(FP), R12
	MOVQ  x+24(FP), R10
	MOVQ  xstride+32(FP), R14
	MOVQ  out+56(FP), R11
	MOVQ  ostride+64(FP), AX
	SHLQ  $2, AX
	TESTQ R12, R12
	JZ    f16pdone
	CMPQ  ntok+40(FP), $3
	JEQ   f16p3row

f16p2row:
	f16pStart
	zeroY0to7(VXORPS)

f16p2a:
	f16pW(0, 16)
	f16pTok((DI), 16(DI), Y0, Y1)
	f16pTok((DI)(R14*1), 16(DI)(R14*1), Y4, Y5)
	f16pNext(f16p2a)
	f16pStart

f16p2b:
	f16pW(32, 48)
	f16pTok(32(DI), 48(DI), Y2, Y3)
	f16pTok(32(DI)(R14*1), 48(DI)(R14*1), Y6, Y7)
	f16pNext(f16p2b)

	f16pRed2(R11)
	f16pNextRow(f16p2row)
	JMP f16pdone

f16p3row:
	f16pStart
	zeroY0to11(VXORPS)

f16p3a:
	f16pW(0, 16)
	f16pTok((DI), 16(DI), Y0, Y1)
	f16pTok((DI)(R14*1), 16(DI)(R14*1), Y4, Y5)
	f16pTok((DI)(R14*2), 16(DI)(R14*2), Y8, Y9)
	f16pNext(f16p3a)
	f16pStart

f16p3b:
	f16pW(32, 48)
	f16pTok(32(DI), 48(DI), Y2, Y3)
	f16pTok(32(DI)(R14*1), 48(DI)(R14*1), Y6, Y7)
	f16pTok(32(DI)(R14*2), 48(DI)(R14*2), Y10, Y11)
	f16pNext(f16p3b)

	f16pRed3(R11)
	f16pNextRow(f16p3row)

f16pdone:
	VZEROUPPER
	RET

// f16qTok converts one token's 16 halves at A and B and FMAs them with
// two rows' weights (Y12, Y13 and Y28, Y29) into R0A, R0B and R1A, R1B.
#define f16qTok(A, B, R0A, R0B, R1A, R1B) \
	VCVTPH2PS   A, Y14 \
	VCVTPH2PS   B, Y15 \
	VFMADD231PS Y14, Y12, R0A \
	VFMADD231PS Y15, Y13, R0B \
	VFMADD231PS Y14, Y28, R1A \
	VFMADD231PS Y15, Y29, R1B

// f16qW converts the two rows' 16 halves at O0 and O1 (R8 and R8 + R9)
// into Y12, Y13 and Y28, Y29.
#define f16qW(O0, O1) \
	VCVTPH2PS O0(R8), Y12 \
	VCVTPH2PS O1(R8), Y13 \
	VCVTPH2PS O0(R8)(R9*1), Y28 \
	VCVTPH2PS O1(R8)(R9*1), Y29

// f16qPairs halves the row count R12 into the number of row pairs, jumping
// to DONE when there are none, and sets R9 to the byte offset of the
// second row of a pair (R12·DX) and BX to its output (R11 + 4·R12).
#define f16qPairs(DONE) \
	SHRQ  $1, R12 \
	JZ    DONE \
	MOVQ  R12, R9 \
	IMULQ DX, R9 \
	LEAQ  (R11)(R12*4), BX

// f16qLow8, f16qLow10 and f16qLow12 copy the second row's accumulators
// (Y16 on) to Y0 on, whose low halves the VEX reductions can address.
#define f16qLow8 \
	VMOVAPS Y16, Y0 \
	VMOVAPS Y17, Y1 \
	VMOVAPS Y18, Y2 \
	VMOVAPS Y19, Y3 \
	VMOVAPS Y20, Y4 \
	VMOVAPS Y21, Y5 \
	VMOVAPS Y22, Y6 \
	VMOVAPS Y23, Y7

#define f16qLow10 \
	f16qLow8 \
	VMOVAPS Y24, Y8 \
	VMOVAPS Y25, Y9

#define f16qLow12 \
	f16qLow10 \
	VMOVAPS Y26, Y10 \
	VMOVAPS Y27, Y11

// f16qNextRow moves on to the next pair of rows and their outputs,
// looping to LOOP while pairs are left.
#define f16qNextRow(LOOP) \
	ADDQ $4, R11 \
	ADDQ $4, BX \
	ADDQ DX, SI \
	DECQ R12 \
	JNZ  LOOP

// func f16Rows2x23(w *byte, wstride, rows int, x *byte, xstride, ntok, n int, out *float32, ostride int)
//
// f16Rows23 on pairs of weight rows (rows even), so that each token's
// converted activations serve both: row r < rows/2 with row r + rows/2,
// whose accumulators are Y16-Y27 (AVX-512 VL registers). Rows half a
// matrix apart, not adjacent ones: two separate sequential streams keep
// the hardware prefetcher going, interleaved neighbours do not (32000×512,
// 3 tokens, streamed: 2.5-3.1 ms for adjacent pairs against 1.2-1.6 ms).
// R9 holds the byte offset to the second row, BX its output.
TEXT ·f16Rows2x23(SB), NOSPLIT, $0-72
	MOVQ  w+0(FP), SI
	MOVQ  wstride+8(FP), DX
	MOVQ  rows+16(FP), R12
	MOVQ  x+24(FP), R10
	MOVQ  xstride+32(FP), R14
	MOVQ  out+56(FP), R11
	MOVQ  ostride+64(FP), AX
	SHLQ  $2, AX
	f16qPairs(f16qdone)
	CMPQ  ntok+40(FP), $3
	JEQ   f16q3row

f16q2row:
	f16pStart
	zeroY0to7(VXORPS)
	zeroY16to23

f16q2a:
	f16qW(0, 16)
	f16qTok((DI), 16(DI), Y0, Y1, Y16, Y17)
	f16qTok((DI)(R14*1), 16(DI)(R14*1), Y4, Y5, Y20, Y21)
	f16pNext(f16q2a)
	f16pStart

f16q2b:
	f16qW(32, 48)
	f16qTok(32(DI), 48(DI), Y2, Y3, Y18, Y19)
	f16qTok(32(DI)(R14*1), 48(DI)(R14*1), Y6, Y7, Y22, Y23)
	f16pNext(f16q2b)
	f16pRed2(R11)
	f16qLow8
	f16pRed2(BX)
	f16qNextRow(f16q2row)
	JMP f16qdone

f16q3row:
	f16pStart
	zeroY0to11(VXORPS)
	zeroY16to27

f16q3a:
	f16qW(0, 16)
	f16qTok((DI), 16(DI), Y0, Y1, Y16, Y17)
	f16qTok((DI)(R14*1), 16(DI)(R14*1), Y4, Y5, Y20, Y21)
	f16qTok((DI)(R14*2), 16(DI)(R14*2), Y8, Y9, Y24, Y25)
	f16pNext(f16q3a)
	f16pStart

f16q3b:
	f16qW(32, 48)
	f16qTok(32(DI), 48(DI), Y2, Y3, Y18, Y19)
	f16qTok(32(DI)(R14*1), 48(DI)(R14*1), Y6, Y7, Y22, Y23)
	f16qTok(32(DI)(R14*2), 48(DI)(R14*2), Y10, Y11, Y26, Y27)
	f16pNext(f16q3b)
	f16pRed3(R11)
	f16qLow12
	f16pRed3(BX)
	f16qNextRow(f16q3row)

f16qdone:
	VZEROUPPER
	RET

// f16sRed finishes one token of one row: YA, YB hold its accumulators 2
// and 3, SA, SB the stack slots of 0 and 1; (s0+s2)+(s1+s3), halves, two
// horizontal adds (GGML_F32x8_REDUCE), stored at DST. Clobbers X12.
#define f16sRed(YA, YB, XA, SA, SB, DST) \
	VADDPS       SA, YA, YA \
	VADDPS       SB, YB, YB \
	VADDPS       YB, YA, YA \
	VEXTRACTF128 $1, YA, X12 \
	VADDPS       X12, XA, XA \
	VHADDPS      XA, XA, XA \
	VHADDPS      XA, XA, XA \
	MOVSS        XA, DST

// f16sRed4 and f16sRed5 finish tokens 0-3 or 0-4 of one row (accumulators
// 2 and 3 of token t in Y2t, Y2t+1, accumulators 0 and 1 spilled from
// S(SP) on, 64 bytes a token) and store them at DST + t·AX. Clobbers R8,
// X12.
#define f16sRed4(S, DST) \
	f16sRed(Y0, Y1, X0, S+0(SP), S+32(SP), (DST)) \
	f16sRed(Y2, Y3, X2, S+64(SP), S+96(SP), (DST)(AX*1)) \
	f16sRed(Y4, Y5, X4, S+128(SP), S+160(SP), (DST)(AX*2)) \
	LEAQ    (DST)(AX*2), R8 \
	f16sRed(Y6, Y7, X6, S+192(SP), S+224(SP), (R8)(AX*1))

#define f16sRed5(S, DST) \
	f16sRed4(S, DST) \
	f16sRed(Y8, Y9, X8, S+256(SP), S+288(SP), (DST)(AX*4))

// f16sFMA4 and f16sFMA5 run one step of a pass (the halves at O0 and O1
// of every 32) for the two rows and four or five tokens, token t at
// DI + t·R14 (R13 = 3·R14), into Y2t, Y2t+1 and Y16+2t, Y17+2t.
#define f16sFMA4(O0, O1) \
	f16qW(O0, O1) \
	f16qTok(O0(DI), O1(DI), Y0, Y1, Y16, Y17) \
	f16qTok(O0(DI)(R14*1), O1(DI)(R14*1), Y2, Y3, Y18, Y19) \
	f16qTok(O0(DI)(R14*2), O1(DI)(R14*2), Y4, Y5, Y20, Y21) \
	f16qTok(O0(DI)(R13*1), O1(DI)(R13*1), Y6, Y7, Y22, Y23)

#define f16sFMA5(O0, O1) \
	f16sFMA4(O0, O1) \
	f16qTok(O0(DI)(R14*4), O1(DI)(R14*4), Y8, Y9, Y24, Y25)

// zeroPair4 and zeroPair5 clear the accumulators of f16Rows2x45 for four
// and five tokens (Y0-Y7 or Y0-Y9 for row r, Y16-Y23 or Y16-Y25 for its
// partner); spillPair4 and spillPair5 store them from 0(SP), in that order.
#define zeroPair4 \
	zeroY0to7(VXORPS) \
	zeroY16to23

#define zeroPair5 \
	zeroY0to9(VXORPS) \
	zeroY16to25

// spill2 and spill4 store their registers from S(SP) on, 32 bytes apart.
#define spill2(A, B, S) \
	VMOVUPS A, S+0(SP) \
	VMOVUPS B, S+32(SP)

#define spill4(A, B, C, D, S) \
	spill2(A, B, S) \
	spill2(C, D, S+64)

#define spillPair4 \
	spill4(Y0, Y1, Y2, Y3, 0) \
	spill4(Y4, Y5, Y6, Y7, 128) \
	spill4(Y16, Y17, Y18, Y19, 256) \
	spill4(Y20, Y21, Y22, Y23, 384)

#define spillPair5 \
	spill4(Y0, Y1, Y2, Y3, 0) \
	spill4(Y4, Y5, Y6, Y7, 128) \
	spill2(Y8, Y9, 256) \
	spill4(Y16, Y17, Y18, Y19, 320) \
	spill4(Y20, Y21, Y22, Y23, 448) \
	spill2(Y24, Y25, 576)

// f16sPasses runs the two passes over a pair of rows: the first (elements
// 0-15 of every 32) from zeroed accumulators (ZERO), spilled (SPILL) for
// the second (16-31), which starts from zero again; FMA is the step of
// either pass and LA, LB name the loops.
#define f16sPasses(ZERO, SPILL, FMA, LA, LB) \
	f16pStart \
	ZERO \
LA: \
	FMA(0, 16) \
	f16pNext(LA) \
	SPILL \
	f16pStart \
	ZERO \
LB: \
	FMA(32, 48) \
	f16pNext(LB)

// func f16Rows2x45(w *byte, wstride, rows int, x *byte, xstride, ntok, n int, out *float32, ostride int)
//
// f16Rows2x23 for ntok = 4 or 5: rows r and r + rows/2 (rows even) in two
// passes, the first pass's accumulators (Y0-Y9 for row r, Y16-Y25 for the
// other, two per token) waiting on the stack. R13 holds three token
// strides.
TEXT ·f16Rows2x45(SB), 0, $640-72
	MOVQ  w+0(FP), SI
	MOVQ  wstride+8(FP), DX
	MOVQ  rows+16(FP), R12
	MOVQ  x+24(FP), R10
	MOVQ  xstride+32(FP), R14
	MOVQ  out+56(FP), R11
	MOVQ  ostride+64(FP), AX
	SHLQ  $2, AX
	LEAQ  (R14)(R14*2), R13
	f16qPairs(f16sdone)
	CMPQ  ntok+40(FP), $5
	JEQ   f16s5row

f16s4row:
	f16sPasses(zeroPair4, spillPair4, f16sFMA4, f16s4a, f16s4b)
	JMP f16s4red

f16s5row:
	f16sPasses(zeroPair5, spillPair5, f16sFMA5, f16s5a, f16s5b)
	JMP f16s5red

f16s4red:
	f16sRed4(0, R11)
	f16qLow8
	f16sRed4(256, BX)
	f16qNextRow(f16s4row)
	JMP f16sdone

f16s5red:
	f16sRed5(0, R11)
	f16qLow10
	f16sRed5(320, BX)
	f16qNextRow(f16s5row)

f16sdone:
	VZEROUPPER
	RET

// func f16Rows2x1(w *byte, wstride, rows int, x *byte, n int, out *float32)
//
// f16Rows on rows r and r + rows/2 (rows even) in one pass, the token's
// converted activations (Y8-Y11) serving both rows: row r accumulates in
// Y0-Y3, the other in Y4-Y7; Y12-Y15 hold converted weights.
TEXT ·f16Rows2x1(SB), NOSPLIT, $0-48
	MOVQ  w+0(FP), SI
	MOVQ  wstride+8(FP), DX
	MOVQ  rows+16(FP), R12
	MOVQ  x+24(FP), R10
	MOVQ  out+40(FP), R11
	f16qPairs(f16odone)

f16orow:
	MOVQ   SI, R8
	MOVQ   R10, DI
	MOVQ   n+32(FP), CX
	SHRQ   $5, CX
	zeroY0to7(VXORPS)

f16oloop:
	VCVTPH2PS   (DI), Y8
	VCVTPH2PS   16(DI), Y9
	VCVTPH2PS   32(DI), Y10
	VCVTPH2PS   48(DI), Y11
	VCVTPH2PS   (R8), Y12
	VCVTPH2PS   16(R8), Y13
	VCVTPH2PS   32(R8), Y14
	VCVTPH2PS   48(R8), Y15
	VFMADD231PS Y8, Y12, Y0
	VFMADD231PS Y9, Y13, Y1
	VFMADD231PS Y10, Y14, Y2
	VFMADD231PS Y11, Y15, Y3
	VCVTPH2PS   (R8)(R9*1), Y12
	VCVTPH2PS   16(R8)(R9*1), Y13
	VCVTPH2PS   32(R8)(R9*1), Y14
	VCVTPH2PS   48(R8)(R9*1), Y15
	VFMADD231PS Y8, Y12, Y4
	VFMADD231PS Y9, Y13, Y5
	VFMADD231PS Y10, Y14, Y6
	VFMADD231PS Y11, Y15, Y7
	ADDQ        $64, R8
	ADDQ        $64, DI
	DECQ        CX
	JNZ         f16oloop

	f16pRed(Y0, Y1, Y2, Y3, X0, (R11))
	f16pRed(Y4, Y5, Y6, Y7, X4, (BX))
	f16qNextRow(f16orow)

f16odone:
	VZEROUPPER
	RET
