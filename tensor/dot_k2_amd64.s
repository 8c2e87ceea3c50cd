//go:build amd64 && !noasm

#include "textflag.h"

// AVX2 kernels for Q2_K, Q3_K, Q5_K and IQ4_XS rows against one or four
// Q8_K activation rows (see dot_k2_amd64.go for the contracts and q2k.go,
// q3k.go, q5k.go, iq4xs.go for the reference loops they reproduce). Each
// 32-element group of a block becomes 32 weight bytes, VPMADDUBSW against
// the activations gives 16 pair sums (never saturating: |w|·|q8| pairs
// stay below 2^15), VPMADDWD by the scales eight int32 lanes: ggml's lanes
// (kquants_lanes.go). The lanes are converted to float32 and fused into
// eight float lanes per block with the reference loops' operations, op for
// op, and added up at the end as hsum_float_8 does. The four-token forms
// decode each weight block once and run each token's float work exactly as
// the single-row form does.

DATA k2Mask0F<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA k2Mask0F<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA k2Mask0F<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA k2Mask0F<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL k2Mask0F<>(SB), RODATA|NOPTR, $32

DATA k2Mask10<>+0(SB)/8, $0x1010101010101010
DATA k2Mask10<>+8(SB)/8, $0x1010101010101010
DATA k2Mask10<>+16(SB)/8, $0x1010101010101010
DATA k2Mask10<>+24(SB)/8, $0x1010101010101010
GLOBL k2Mask10<>(SB), RODATA|NOPTR, $32

// K2HSUM8 adds the eight lanes of acc as ggml's hsum_float_8 does (upper
// half plus lower half, then lanes 0+2 and 1+3, then those two), leaving
// the sum in lane 0 of t; u is clobbered.
#define K2HSUM8(acc, accx, t, u) \
	VEXTRACTF128 $1, acc, t; \
	VADDPS accx, t, t; \
	VMOVHLPS t, t, u; \
	VADDPS u, t, t; \
	VMOVSHDUP t, u; \
	VADDSS u, t, t

// K2SCALEMIN unpacks the 6-bit scales and mins of the Q4_K/Q5_K block at
// SI (12 bytes at 4(SI)) into X1: bytes 0-7 the scales, 8-15 the mins, as
// q4KScaleMin; clobbers AX, BX, DX, R8, R9, R10.
#define K2SCALEMIN \
	MOVL 4(SI), AX; \
	MOVL 8(SI), BX; \
	MOVL 12(SI), DX; \
	MOVL AX, R8; \
	ANDL $0x3f3f3f3f, R8; \
	MOVL DX, R9; \
	ANDL $0x0f0f0f0f, R9; \
	MOVL AX, R10; \
	SHRL $6, R10; \
	ANDL $0x03030303, R10; \
	SHLL $4, R10; \
	ORL  R10, R9; \
	SHLQ $32, R9; \
	ORQ  R9, R8; \
	MOVL BX, R10; \
	ANDL $0x3f3f3f3f, R10; \
	SHRL $4, DX; \
	ANDL $0x0f0f0f0f, DX; \
	SHRL $6, BX; \
	ANDL $0x03030303, BX; \
	SHLL $4, BX; \
	ORL  BX, DX; \
	SHLQ $32, DX; \
	ORQ  DX, R10; \
	VMOVQ R8, X1; \
	VPINSRQ $1, R10, X1, X1

// K2SCALEWORDS stores the eight scale bytes of X1 as doubled words (one
// dword per sub-block, for VPBROADCASTD) at 0(SP)..31(SP); clobbers X3, X6, X7.
#define K2SCALEWORDS \
	VPMOVZXBW X1, X3; \
	VPUNPCKLWD X3, X3, X6; \
	VPUNPCKHWD X3, X3, X7; \
	VMOVDQU X6, 0(SP); \
	VMOVDQU X7, 16(SP)

// ---------------------------------------------------------------- Q5_K

// Q5VALUES builds in Y5 and Y6 the 32 five-bit values of sub-blocks 2j and
// 2j+1 from the nibbles at qo(SI) and the qh bytes in Y3, already shifted
// right by 2j (bits 0 and 1 hold the fifth bits); clobbers t.
#define Q5VALUES(qo, t) \
	VMOVDQU qo(SI), Y5; \
	VPSRLW $4, Y5, Y6; \
	VPAND Y15, Y5, Y5; \
	VPAND Y15, Y6, Y6; \
	VPSLLW $4, Y3, t; \
	VPAND k2Mask10<>(SB), t, t; \
	VPOR t, Y5, Y5; \
	VPSLLW $3, Y3, t; \
	VPAND k2Mask10<>(SB), t, t; \
	VPOR t, Y6, Y6

// Q5STEP adds to Y4 the lanes of 64 elements: the values of Q5VALUES
// against the activations at xo(DI) and xo2(DI), scales at so(SP), so2(SP).
#define Q5STEP(qo, xo, xo2, so, so2) \
	Q5VALUES(qo, Y7); \
	VPMADDUBSW xo(DI), Y5, Y5; \
	VPMADDUBSW xo2(DI), Y6, Y6; \
	VPBROADCASTD so(SP), Y7; \
	VPBROADCASTD so2(SP), Y8; \
	VPMADDWD Y7, Y5, Y5; \
	VPMADDWD Y8, Y6, Y6; \
	VPADDD Y5, Y4, Y4; \
	VPADDD Y6, Y4, Y4

// K2X4ENTER, K2X4ROW, K2X4NEXT and K2X4ROWEND are the row and block loops of the four-token kernels. Frame:
// 32-47 scratch, 48 the weight row pointer, 56 the rows left, 64 the output
// byte offset of the row; DI, R11, R12, R13 point at the four tokens'
// blocks, SI at the weight block, CX counts blocks.
#define K2X4ENTER \
	MOVQ w+0(FP), AX; \
	MOVQ AX, 48(SP); \
	MOVQ rows+16(FP), AX; \
	MOVQ AX, 56(SP); \
	MOVQ $0, 64(SP)

#define K2X4ROW \
	MOVQ 48(SP), SI; \
	MOVQ x+24(FP), AX; \
	MOVQ 0(AX), DI; \
	MOVQ 8(AX), R11; \
	MOVQ 16(AX), R12; \
	MOVQ 24(AX), R13; \
	MOVQ nb+32(FP), CX

#define K2X4NEXT(bs) \
	ADDQ $bs, SI; \
	ADDQ $292, DI; \
	ADDQ $292, R11; \
	ADDQ $292, R12; \
	ADDQ $292, R13; \
	DECQ CX

// K2X4STORE1 stores lane 0 of X3 as out[t][r] (t: byte offset t·8 in out).
#define K2X4STORE1(t) \
	MOVQ out+40(FP), AX; \
	MOVQ t(AX), DX; \
	MOVQ 64(SP), BX; \
	VMOVSS X3, (DX)(BX*1)

#define K2X4ROWEND(label) \
	ADDQ $4, 64(SP); \
	MOVQ 48(SP), AX; \
	ADDQ wstride+8(FP), AX; \
	MOVQ AX, 48(SP); \
	DECQ 56(SP); \
	JNZ  label

// K2X4ACC folds one token's int32 lanes ilanes (activations at R) into its
// float accumulator facc: facc = fma(x.d·wd, float32(ilanes), facc), with
// wd broadcast in Y5; clobbers Y6.
#define K2X4ACC(R, ilanes, facc) \
	VBROADCASTSS (R), Y6; \
	VMULPS Y5, Y6, Y6; \
	VCVTDQ2PS ilanes, ilanes; \
	VFMADD231PS Y6, ilanes, facc

// Q5X4MIN leaves in dst the four dwords mins·int16 pair sums of the bsums
// at R (mins as words in X3).
#define Q5X4MIN(R, dst) \
	VMOVDQU 260(R), dst; \
	VPHADDW 276(R), dst, dst; \
	VPMADDWD X3, dst, dst

#define Q5X4TOK(R, xo, xo2, acc) \
	VPMADDUBSW xo(R), Y5, Y4; \
	VPMADDWD Y7, Y4, Y4; \
	VPADDD Y4, acc, acc; \
	VPMADDUBSW xo2(R), Y6, Y4; \
	VPMADDWD Y1, Y4, Y4; \
	VPADDD Y4, acc, acc

#define Q5X4STEP(qo, xo, xo2, so, so2) \
	Q5VALUES(qo, Y1); \
	VPBROADCASTD so(SP), Y7; \
	VPBROADCASTD so2(SP), Y1; \
	Q5X4TOK(DI, xo, xo2, Y8); \
	Q5X4TOK(R11, xo, xo2, Y9); \
	Q5X4TOK(R12, xo, xo2, Y10); \
	Q5X4TOK(R13, xo, xo2, Y11)

// func q5KRows(w *byte, wstride, rows int, x *byte, nb int, out *float32)
//
// Frame: the block's scales as doubled words. R11 walks the weight rows,
// R12 the outputs, R13 counts rows; Y13 holds acc, X12 summs, Y9 the
// block's d.
TEXT ·q5KRows(SB), NOSPLIT, $32-48
	MOVQ w+0(FP), R11
	MOVQ rows+16(FP), R13
	MOVQ out+40(FP), R12
	VMOVDQU k2Mask0F<>(SB), Y15

q5row:
	MOVQ R11, SI
	MOVQ x+24(FP), DI
	MOVQ nb+32(FP), CX
	VXORPS Y13, Y13, Y13
	VXORPS X12, X12, X12

q5loop:
	K2SCALEMIN

	// X5 = [f16(w.d)·x.d, f16(w.dmin)·x.d].
	MOVL (SI), AX
	VMOVD AX, X5
	VCVTPH2PS X5, X5
	VBROADCASTSS (DI), X6
	VMULPS X6, X5, X5

	// summs = fma(float32(imin), −dmin, summs) with
	// imin = Σ mins[s]·int16(bsums[2s] + bsums[2s+1]).
	VMOVDQU 260(DI), X2
	VPHADDW 276(DI), X2, X2
	VPSRLDQ $8, X1, X3
	VPMOVZXBW X3, X3
	VPMADDWD X3, X2, X2
	VPSHUFD $0x4e, X2, X3
	VPADDD X3, X2, X2
	VPSHUFD $0xb1, X2, X3
	VPADDD X3, X2, X2
	VCVTDQ2PS X2, X2
	VMOVSHDUP X5, X6
	VFNMADD231SS X6, X2, X12
	VBROADCASTSS X5, Y9

	K2SCALEWORDS
	VMOVDQU 16(SI), Y3
	VPXOR Y4, Y4, Y4
	Q5STEP(48, 4, 36, 0, 4)
	VPSRLW $2, Y3, Y3
	Q5STEP(80, 68, 100, 8, 12)
	VPSRLW $2, Y3, Y3
	Q5STEP(112, 132, 164, 16, 20)
	VPSRLW $2, Y3, Y3
	Q5STEP(144, 196, 228, 24, 28)

	// acc = fma(d, float32(lanes), acc).
	VCVTDQ2PS Y4, Y4
	VFMADD231PS Y9, Y4, Y13

	ADDQ $176, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q5loop

	// out = hsum8(acc) + summs
	K2HSUM8(Y13, X13, X3, X4)
	VADDSS X12, X3, X3
	VMOVSS X3, (R12)
	ADDQ $4, R12
	ADDQ wstride+8(FP), R11
	DECQ R13
	JNZ  q5row

	VZEROUPPER
	RET

// func q5KRows4(w *byte, wstride, rows int, x *[4]*byte, nb int, out *[4]*float32)
//
// Registers: Y0, Y2, Y13, Y14 the four tokens' acc, X12 their summs (one
// lane each), Y8-Y11 their int32 lanes.
TEXT ·q5KRows4(SB), NOSPLIT, $72-48
	K2X4ENTER
	VMOVDQU k2Mask0F<>(SB), Y15

q5x4row:
	K2X4ROW
	VXORPS Y0, Y0, Y0
	VXORPS Y2, Y2, Y2
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS X12, X12, X12

q5x4loop:
	K2SCALEMIN

	// summs_t = fma(float32(imin_t), −x_t.d·f16(w.dmin), summs_t), lane-wise.
	VPSRLDQ $8, X1, X3
	VPMOVZXBW X3, X3
	Q5X4MIN(DI, X4)
	Q5X4MIN(R11, X5)
	Q5X4MIN(R12, X6)
	Q5X4MIN(R13, X7)
	VPHADDD X5, X4, X4
	VPHADDD X7, X6, X6
	VPHADDD X6, X4, X4
	VCVTDQ2PS X4, X4
	VMOVSS (DI), X5
	VINSERTPS $0x10, (R11), X5, X5
	VINSERTPS $0x20, (R12), X5, X5
	VINSERTPS $0x30, (R13), X5, X5
	MOVL (SI), AX
	VMOVD AX, X6
	VCVTPH2PS X6, X6
	VMOVSHDUP X6, X6
	VBROADCASTSS X6, X6
	VMULPS X5, X6, X6
	VFNMADD231PS X6, X4, X12

	K2SCALEWORDS
	VMOVDQU 16(SI), Y3
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	Q5X4STEP(48, 4, 36, 0, 4)
	VPSRLW $2, Y3, Y3
	Q5X4STEP(80, 68, 100, 8, 12)
	VPSRLW $2, Y3, Y3
	Q5X4STEP(112, 132, 164, 16, 20)
	VPSRLW $2, Y3, Y3
	Q5X4STEP(144, 196, 228, 24, 28)

	MOVWLZX (SI), AX
	VMOVD AX, X5
	VCVTPH2PS X5, X5
	VBROADCASTSS X5, Y5
	K2X4ACC(DI, Y8, Y0)
	K2X4ACC(R11, Y9, Y2)
	K2X4ACC(R12, Y10, Y13)
	K2X4ACC(R13, Y11, Y14)

	K2X4NEXT(176)
	JNZ  q5x4loop

	// out[t][r] = hsum8(acc_t) + summs_t.
	VMOVDQU X12, 32(SP)
	K2HSUM8(Y0, X0, X3, X4)
	VADDSS 32(SP), X3, X3
	K2X4STORE1(0)
	K2HSUM8(Y2, X2, X3, X4)
	VADDSS 36(SP), X3, X3
	K2X4STORE1(8)
	K2HSUM8(Y13, X13, X3, X4)
	VADDSS 40(SP), X3, X3
	K2X4STORE1(16)
	K2HSUM8(Y14, X14, X3, X4)
	VADDSS 44(SP), X3, X3
	K2X4STORE1(24)
	K2X4ROWEND(q5x4row)

	VZEROUPPER
	RET
