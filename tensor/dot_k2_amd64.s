//go:build amd64 && !noasm

#include "textflag.h"
#include "dotk_avx2_amd64.h"

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

DATA k2Mask03<>+0(SB)/8, $0x0303030303030303
DATA k2Mask03<>+8(SB)/8, $0x0303030303030303
DATA k2Mask03<>+16(SB)/8, $0x0303030303030303
DATA k2Mask03<>+24(SB)/8, $0x0303030303030303
GLOBL k2Mask03<>(SB), RODATA|NOPTR, $32

DATA k2Mask04<>+0(SB)/8, $0x0404040404040404
DATA k2Mask04<>+8(SB)/8, $0x0404040404040404
DATA k2Mask04<>+16(SB)/8, $0x0404040404040404
DATA k2Mask04<>+24(SB)/8, $0x0404040404040404
GLOBL k2Mask04<>(SB), RODATA|NOPTR, $32

DATA k2Byte32<>+0(SB)/8, $0x2020202020202020
DATA k2Byte32<>+8(SB)/8, $0x2020202020202020
GLOBL k2Byte32<>(SB), RODATA|NOPTR, $16

// k2ScaleShuf<>+16g picks, from 16 scale bytes, those of the 16-element
// sub-blocks 2g and 2g+1 (eight times each): the scales of the two halves
// of group g.
DATA k2ScaleShuf<>+0(SB)/8, $0x0000000000000000
DATA k2ScaleShuf<>+8(SB)/8, $0x0101010101010101
DATA k2ScaleShuf<>+16(SB)/8, $0x0202020202020202
DATA k2ScaleShuf<>+24(SB)/8, $0x0303030303030303
DATA k2ScaleShuf<>+32(SB)/8, $0x0404040404040404
DATA k2ScaleShuf<>+40(SB)/8, $0x0505050505050505
DATA k2ScaleShuf<>+48(SB)/8, $0x0606060606060606
DATA k2ScaleShuf<>+56(SB)/8, $0x0707070707070707
DATA k2ScaleShuf<>+64(SB)/8, $0x0808080808080808
DATA k2ScaleShuf<>+72(SB)/8, $0x0909090909090909
DATA k2ScaleShuf<>+80(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA k2ScaleShuf<>+88(SB)/8, $0x0b0b0b0b0b0b0b0b
DATA k2ScaleShuf<>+96(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA k2ScaleShuf<>+104(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA k2ScaleShuf<>+112(SB)/8, $0x0e0e0e0e0e0e0e0e
DATA k2ScaleShuf<>+120(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL k2ScaleShuf<>(SB), RODATA|NOPTR, $128

// k2WordShuf<>+32k picks, from eight scale words repeated in both 128-bit
// lanes, word 2k for the low lane and word 2k+1 for the high one: the scales
// of group 4j+k's two halves (ggml's get_scale_shuffle_q3k).
DATA k2WordShuf<>+0(SB)/8, $0x0100010001000100
DATA k2WordShuf<>+8(SB)/8, $0x0100010001000100
DATA k2WordShuf<>+16(SB)/8, $0x0302030203020302
DATA k2WordShuf<>+24(SB)/8, $0x0302030203020302
DATA k2WordShuf<>+32(SB)/8, $0x0504050405040504
DATA k2WordShuf<>+40(SB)/8, $0x0504050405040504
DATA k2WordShuf<>+48(SB)/8, $0x0706070607060706
DATA k2WordShuf<>+56(SB)/8, $0x0706070607060706
DATA k2WordShuf<>+64(SB)/8, $0x0908090809080908
DATA k2WordShuf<>+72(SB)/8, $0x0908090809080908
DATA k2WordShuf<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k2WordShuf<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA k2WordShuf<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k2WordShuf<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA k2WordShuf<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA k2WordShuf<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL k2WordShuf<>(SB), RODATA|NOPTR, $128

// k2IQ4Values<> is kvalues_iq4nl, in both 128-bit lanes.
DATA k2IQ4Values<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA k2IQ4Values<>+8(SB)/8, $0x7159453526190d01
DATA k2IQ4Values<>+16(SB)/8, $0xf6eaddcfbfad9881
DATA k2IQ4Values<>+24(SB)/8, $0x7159453526190d01
GLOBL k2IQ4Values<>(SB), RODATA|NOPTR, $32

// k2IQ4Shifts<> are the dword shifts 2·ib that bring scales_h's bits of
// sub-block ib down.
DATA k2IQ4Shifts<>+0(SB)/8, $0x0000000200000000
DATA k2IQ4Shifts<>+8(SB)/8, $0x0000000600000004
DATA k2IQ4Shifts<>+16(SB)/8, $0x0000000a00000008
DATA k2IQ4Shifts<>+24(SB)/8, $0x0000000e0000000c
GLOBL k2IQ4Shifts<>(SB), RODATA|NOPTR, $32

DATA k2Dword3<>+0(SB)/8, $0x0000000300000003
DATA k2Dword3<>+8(SB)/8, $0x0000000300000003
DATA k2Dword3<>+16(SB)/8, $0x0000000300000003
DATA k2Dword3<>+24(SB)/8, $0x0000000300000003
GLOBL k2Dword3<>(SB), RODATA|NOPTR, $32

DATA k2Dword32<>+0(SB)/8, $0x0000002000000020
DATA k2Dword32<>+8(SB)/8, $0x0000002000000020
DATA k2Dword32<>+16(SB)/8, $0x0000002000000020
DATA k2Dword32<>+24(SB)/8, $0x0000002000000020
GLOBL k2Dword32<>(SB), RODATA|NOPTR, $32

// k2DupWord<> copies the low word of each dword into both halves.
DATA k2DupWord<>+0(SB)/8, $0x0504050401000100
DATA k2DupWord<>+8(SB)/8, $0x0d0c0d0c09080908
DATA k2DupWord<>+16(SB)/8, $0x0504050401000100
DATA k2DupWord<>+24(SB)/8, $0x0d0c0d0c09080908
GLOBL k2DupWord<>(SB), RODATA|NOPTR, $32

// ---------------------------------------------------------------- Q5_K

// Q5VALUES builds in Y5 and Y6 the 32 five-bit values of sub-blocks 2j and
// 2j+1 from the nibbles at qo(SI) and the qh bytes in Y3, already shifted
// right by 2j (bits 0 and 1 hold the fifth bits); clobbers t.
#define Q5VALUES(qo, t) \
	KNIBBLES(SI, qo); \
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
	KPAIRSTEP(xo, xo2, so, so2)

// Q5STEPS runs STEP (Q5STEP or its four-token form) over the four
// 64-element groups j of a Q5_K block (nibbles at 48 + 32j, activations at
// 4 + 64j and 36 + 64j, scale dwords at 8j and 8j + 4), shifting the qh
// bytes in Y3 right by 2 between groups.
#define Q5STEPS(STEP) \
	STEP(48, 4, 36, 0, 4); \
	VPSRLW $2, Y3, Y3; \
	STEP(80, 68, 100, 8, 12); \
	VPSRLW $2, Y3, Y3; \
	STEP(112, 132, 164, 16, 20); \
	VPSRLW $2, Y3, Y3; \
	STEP(144, 196, 228, 24, 28)

// K2X4ENTER, K2X4ROW, KX4NEXT (dotk_avx2_amd64.h) and K2X4ROWEND are the
// row and block loops of the four-token kernels. Frame: 32-47 scratch, 48
// the weight row pointer, 56 the rows left, 64 the output byte offset of
// the row; DI, R11, R12, R13 point at the four tokens' blocks, SI at the
// weight block, CX counts blocks.
#define K2X4ENTER \
	MOVQ w+0(FP), AX; \
	MOVQ AX, 48(SP); \
	MOVQ rows+16(FP), AX; \
	MOVQ AX, 56(SP); \
	MOVQ $0, 64(SP)

#define K2X4ROW \
	MOVQ 48(SP), SI; \
	MOVQ x+24(FP), AX; \
	KX4TOKENS(AX); \
	MOVQ nb+32(FP), CX

// K2X4STORE1 stores lane 0 of X3 as out[t][r] (t: byte offset t·8 in out).
#define K2X4STORE1(t) \
	MOVQ out+40(FP), AX; \
	MOVQ t(AX), DX; \
	MOVQ 64(SP), BX; \
	VMOVSS X3, (DX)(BX*1)

// K2X4STORELANE stores lane k of X3 as out[t][r].
#define K2X4STORELANE(t, k) \
	MOVQ out+40(FP), AX; \
	MOVQ t(AX), DX; \
	MOVQ 64(SP), BX; \
	VEXTRACTPS $k, X3, (DX)(BX*1)

// K2X4HOUT stores the KHSUM8 sum of acc (X name accx) as out[t][r];
// clobbers AX, BX, DX, X3, X4.
#define K2X4HOUT(acc, accx, t) \
	KHSUM8(acc, accx, X3, X4); \
	K2X4STORE1(t)

// K2X4OUT4 stores the KHSUM8 sums of the four tokens' accumulators a0-a3
// (X names x0-x3) as out[0..3][r].
#define K2X4OUT4(a0, x0, a1, x1, a2, x2, a3, x3) \
	K2X4HOUT(a0, x0, 0); \
	K2X4HOUT(a1, x1, 8); \
	K2X4HOUT(a2, x2, 16); \
	K2X4HOUT(a3, x3, 24)

#define K2X4ROWEND(label) \
	ADDQ $4, 64(SP); \
	MOVQ 48(SP), AX; \
	ADDQ wstride+8(FP), AX; \
	MOVQ AX, 48(SP); \
	DECQ 56(SP); \
	JNZ  label

// Q5X4MIN leaves in dst the four dwords mins·int16 pair sums of the bsums
// at R (mins as words in X3).
#define Q5X4MIN(R, dst) \
	VMOVDQU 260(R), dst; \
	VPHADDW 276(R), dst, dst; \
	VPMADDWD X3, dst, dst

// Q5X4HOUT stores the KHSUM8 sum of acc (X name accx) plus the token's
// summs, the float at so(SP), as out[t][r]; clobbers AX, BX, DX, X3, X4.
#define Q5X4HOUT(acc, accx, so, t) \
	KHSUM8(acc, accx, X3, X4); \
	VADDSS so(SP), X3, X3; \
	K2X4STORE1(t)

// ---------------------------------------------------------------- Q2_K

// Q2SCALEMIN loads the 16 scale bytes of the Q2_K block at SI, leaving the
// scales (low nibbles) in X1 and the mins (high nibbles) as words in ty,
// whose X name t is clobbered; m0f is the 0x0f mask (X15 or
// k2Mask0F<>(SB)).
#define Q2SCALEMIN(m0f, t, ty) \
	VMOVDQU (SI), X1; \
	VPSRLW $4, X1, t; \
	VPAND m0f, t, t; \
	VPAND m0f, X1, X1; \
	VPMOVZXBW t, ty

// Q2GROUP adds to Y0 the lanes of group g = 4j+k (elements 32g..32g+31):
// the two-bit values of Y3 (shifted right by sh = 2k) against the
// activations at xo(DI), with the scales of sub-blocks 2g and 2g+1 picked
// (ko = 32k) from scw, the scales 8j..8j+7 as words in both lanes;
// clobbers Y6, Y7.
#define Q2GROUP(sh, xo, ko, scw) \
	VPSRLW $sh, Y3, Y6; \
	VPAND Y14, Y6, Y6; \
	VPMADDUBSW xo(DI), Y6, Y6; \
	VPSHUFB k2WordShuf<>+ko(SB), scw, Y7; \
	VPMADDWD Y7, Y6, Y6; \
	VPADDD Y6, Y0, Y0

// Q2BLOCK runs GROUP (Q2GROUP or Q2X4GROUP) over the eight groups of a
// Q2_K block: the quants of groups 0-3 (16(SI)) with the scale words lo,
// those of groups 4-7 (48(SI)) with hi, each loaded into Y3.
#define Q2BLOCK(GROUP, lo, hi) \
	VMOVDQU 16(SI), Y3; \
	GROUP(0, 4, 0, lo); \
	GROUP(2, 36, 32, lo); \
	GROUP(4, 68, 64, lo); \
	GROUP(6, 100, 96, lo); \
	VMOVDQU 48(SI), Y3; \
	GROUP(0, 132, 0, hi); \
	GROUP(2, 164, 32, hi); \
	GROUP(4, 196, 64, hi); \
	GROUP(6, 228, 96, hi)

// K2SCALEW2 expands the 16 scale bytes of X1 into words: lo = scales 0-7 in
// both lanes, hi = scales 8-15 in both lanes (mov: VPMOVZXBW or VPMOVSXBW).
#define K2SCALEW2(mov, lo, hi) \
	mov X1, lo; \
	VPERMQ $0xee, lo, hi; \
	VPERMQ $0x44, lo, lo

// Q2X4MIN folds one token's mins into its float accumulator:
// facc = fma(−x.d·wdmin, float32(mins·bsums pairs), facc), with wdmin
// broadcast in Y6 and the mins as words in Y4; clobbers Y7, Y12.
#define Q2X4MIN(R, facc) \
	VPMADDWD 260(R), Y4, Y7; \
	VCVTDQ2PS Y7, Y7; \
	VBROADCASTSS (R), Y12; \
	VMULPS Y6, Y12, Y12; \
	VFNMADD231PS Y12, Y7, facc

#define Q2X4TOK(R, xo, acc) \
	VPMADDUBSW xo(R), Y5, Y12; \
	VPMADDWD Y7, Y12, Y12; \
	VPADDD Y12, acc, acc

// Q2X4GROUP is Q2GROUP for the four tokens (values in Y5).
#define Q2X4GROUP(sh, xo, ko, scw) \
	VPSRLW $sh, Y3, Y5; \
	VPAND Y15, Y5, Y5; \
	VPSHUFB k2WordShuf<>+ko(SB), scw, Y7; \
	Q2X4TOK(DI, xo, Y8); \
	Q2X4TOK(R11, xo, Y9); \
	Q2X4TOK(R12, xo, Y10); \
	Q2X4TOK(R13, xo, Y11)

// ---------------------------------------------------------------- Q3_K

// Q3SCALES unpacks the sixteen 6-bit scales of the Q3_K block at SI (12
// bytes at 96(SI)) into the bytes of X1, less 32 (as q3KScaleVals);
// clobbers AX, BX, DX, R8, R9, R10.
#define Q3SCALES \
	MOVL 96(SI), AX; \
	MOVL 100(SI), BX; \
	MOVL 104(SI), DX; \
	MOVL AX, R8; \
	ANDL $0x0f0f0f0f, R8; \
	MOVL DX, R9; \
	ANDL $0x03030303, R9; \
	SHLL $4, R9; \
	ORL  R9, R8; \
	MOVL BX, R9; \
	ANDL $0x0f0f0f0f, R9; \
	MOVL DX, R10; \
	SHRL $2, R10; \
	ANDL $0x03030303, R10; \
	SHLL $4, R10; \
	ORL  R10, R9; \
	SHLQ $32, R9; \
	ORQ  R9, R8; \
	SHRL $4, AX; \
	ANDL $0x0f0f0f0f, AX; \
	MOVL DX, R10; \
	SHRL $4, R10; \
	ANDL $0x03030303, R10; \
	SHLL $4, R10; \
	ORL  R10, AX; \
	SHRL $4, BX; \
	ANDL $0x0f0f0f0f, BX; \
	SHRL $6, DX; \
	ANDL $0x03030303, DX; \
	SHLL $4, DX; \
	ORL  DX, BX; \
	SHLQ $32, BX; \
	ORQ  BX, AX; \
	VMOVQ R8, X1; \
	VPINSRQ $1, AX, X1, X1; \
	VPSUBB k2Byte32<>(SB), X1, X1

// Q3GROUP adds to Y0 the lanes of group g = 4j+k: low bits from Y3 shifted
// right by sh = 2k, the high-bit offsets 4·(1−bit) from Y7 (hmask with the
// group's bit moved to bit 2), activations at xo(DI), the signed scales of
// sub-blocks 2g, 2g+1 picked (ko = 32k) from scw (as Q2GROUP); as ggml,
// Σ low·q8 − Σ offset·q8 in 16 bits.
#define Q3GROUP(sh, xo, ko, scw) \
	VPSRLW $sh, Y3, Y6; \
	VPAND Y15, Y6, Y6; \
	VPANDN Y14, Y7, Y7; \
	VMOVDQU xo(DI), Y8; \
	VPMADDUBSW Y8, Y6, Y6; \
	VPMADDUBSW Y8, Y7, Y7; \
	VPSUBW Y7, Y6, Y6; \
	VPSHUFB k2WordShuf<>+ko(SB), scw, Y9; \
	VPMADDWD Y9, Y6, Y6; \
	VPADDD Y6, Y0, Y0

#define Q3X4TOK(R, xo, acc) \
	VMOVDQU xo(R), Y12; \
	VPMADDUBSW Y12, Y6, Y15; \
	VPMADDUBSW Y12, Y5, Y12; \
	VPSUBW Y15, Y12, Y12; \
	VPMADDWD Y7, Y12, Y12; \
	VPADDD Y12, acc, acc

// Q3X4GROUP is Q3GROUP for the four tokens, with the shifted hmask in Y6.
#define Q3X4GROUP(sh, xo, so) \
	VPANDN k2Mask04<>(SB), Y6, Y6; \
	VPSRLW $sh, Y3, Y5; \
	VPAND k2Mask03<>(SB), Y5, Y5; \
	VPSHUFB k2ScaleShuf<>+so(SB), X1, X7; \
	VPMOVSXBW X7, Y7; \
	Q3X4TOK(DI, xo, Y8); \
	Q3X4TOK(R11, xo, Y9); \
	Q3X4TOK(R12, xo, Y10); \
	Q3X4TOK(R13, xo, Y11)

// -------------------------------------------------------------- IQ4_XS

// IQ4SCALES stores the eight sub-block scales of the IQ4_XS block at SI,
// less 32, as doubled words at 0(SP)..31(SP): low nibbles from scales_l
// (4(SI)), two high bits each from scales_h (2(SI)); clobbers AX, Y3, Y4.
#define IQ4SCALES \
	MOVL 4(SI), AX; \
	VMOVD AX, X3; \
	VPSRLW $4, X3, X4; \
	VPUNPCKLBW X4, X3, X3; \
	VPAND k2Mask0F<>(SB), X3, X3; \
	VPMOVZXBD X3, Y3; \
	MOVWLZX 2(SI), AX; \
	VMOVD AX, X4; \
	VPBROADCASTD X4, Y4; \
	VPSRLVD k2IQ4Shifts<>(SB), Y4, Y4; \
	VPAND k2Dword3<>(SB), Y4, Y4; \
	VPSLLD $4, Y4, Y4; \
	VPOR Y4, Y3, Y3; \
	VPSUBD k2Dword32<>(SB), Y3, Y3; \
	VPSHUFB k2DupWord<>(SB), Y3, Y3; \
	VMOVDQU Y3, 0(SP)

// IQ4VALUES leaves in Y3 the 32 values of sub-block s (its 16 index bytes
// at qo(SI): low nibbles are elements 0-15, high nibbles 16-31); clobbers X4.
#define IQ4VALUES(qo) \
	VMOVDQU qo(SI), X3; \
	VPSRLW $4, X3, X4; \
	VINSERTI128 $1, X4, Y3, Y3; \
	VPAND Y15, Y3, Y3; \
	VPSHUFB Y3, Y14, Y3

// IQ4GROUP adds to Y0 the lanes of sub-block s: ggml's mul_add_epi8,
// |v|·sign(q8, v), against the activations at xo(DI), scale at so(SP).
#define IQ4GROUP(qo, xo, so) \
	IQ4VALUES(qo); \
	VMOVDQU xo(DI), Y4; \
	VPSIGNB Y3, Y4, Y4; \
	VPABSB Y3, Y3; \
	VPMADDUBSW Y4, Y3, Y3; \
	VPBROADCASTD so(SP), Y4; \
	VPMADDWD Y4, Y3, Y3; \
	VPADDD Y3, Y0, Y0

#define IQ4X4TOK(R, xo, acc) \
	VMOVDQU xo(R), Y4; \
	VPSIGNB Y3, Y4, Y4; \
	VPMADDUBSW Y4, Y5, Y4; \
	VPMADDWD Y7, Y4, Y4; \
	VPADDD Y4, acc, acc

#define IQ4X4GROUP(qo, xo, so) \
	IQ4VALUES(qo); \
	VPABSB Y3, Y5; \
	VPBROADCASTD so(SP), Y7; \
	IQ4X4TOK(DI, xo, Y8); \
	IQ4X4TOK(R11, xo, Y9); \
	IQ4X4TOK(R12, xo, Y10); \
	IQ4X4TOK(R13, xo, Y11)

// IQ4BLOCK runs GROUP (IQ4GROUP or IQ4X4GROUP) over the eight sub-blocks s
// of an IQ4_XS block: index bytes at 8 + 16s, activations at 4 + 32s,
// scale dwords at 4s in the frame.
#define IQ4BLOCK(GROUP) \
	GROUP(8, 4, 0); \
	GROUP(24, 36, 4); \
	GROUP(40, 68, 8); \
	GROUP(56, 100, 12); \
	GROUP(72, 132, 16); \
	GROUP(88, 164, 20); \
	GROUP(104, 196, 24); \
	GROUP(120, 228, 28)

// K1FOLD folds the block's int32 lanes Y0 into the float accumulator Y13
// of a single-row kernel: acc = fma(x.d·f16(w.d), float32(lanes), acc),
// w.d the F16 at off(SI); clobbers AX, Y0, Y5.
#define K1FOLD(off) \
	KDXD(off, X5, Y5); \
	VCVTDQ2PS Y0, Y0; \
	VFMADD231PS Y5, Y0, Y13

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
	KSCALEMIN(SI, R8, R9, X1)

	// X5 = [f16(w.d)·x.d, f16(w.dmin)·x.d].
	KDDMINXD(0)

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

	KSCALEWORDS(X1, X3, X6, X7)
	VMOVDQU 16(SI), Y3
	VPXOR Y4, Y4, Y4
	Q5STEPS(Q5STEP)

	// acc = fma(d, float32(lanes), acc).
	VCVTDQ2PS Y4, Y4
	VFMADD231PS Y9, Y4, Y13

	K1NEXT(176)
	JNZ  q5loop

	// out = hsum8(acc) + summs
	KHSUM8(Y13, X13, X3, X4)
	VADDSS X12, X3, X3
	VMOVSS X3, (R12)
	ADDQ $4, R12
	ADDQ wstride+8(FP), R11
	DECQ R13
	JNZ  q5row

	VZEROUPPER
	RET

// func q2KRows(w *byte, wstride, rows int, x *byte, nb int, out *float32)
//
// R11 walks the weight rows, R12 the outputs, R13 counts rows; Y13 holds
// acc, Y0 the block's lanes, X1 its scales, Y9 its d.
TEXT ·q2KRows(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), R11
	MOVQ rows+16(FP), R13
	MOVQ out+40(FP), R12
	VMOVDQU k2Mask0F<>(SB), Y15
	VMOVDQU k2Mask03<>(SB), Y14

q2row:
	MOVQ R11, SI
	MOVQ x+24(FP), DI
	MOVQ nb+32(FP), CX
	VXORPS Y13, Y13, Y13

q2loop:
	// X1 = scales (low nibbles), Y2 = mins as words.
	Q2SCALEMIN(X15, X2, Y2)
	K2SCALEW2(VPMOVZXBW, Y10, Y11)

	// X5 = [f16(w.d)·x.d, f16(w.dmin)·x.d]; Y9 = d.
	KDDMINXD(80)
	VBROADCASTSS X5, Y9

	// acc = fma(−dmin, float32(mins·bsums pairs), acc).
	VPMADDWD 260(DI), Y2, Y2
	VCVTDQ2PS Y2, Y2
	VMOVSHDUP X5, X6
	VBROADCASTSS X6, Y6
	VFNMADD231PS Y6, Y2, Y13

	VPXOR Y0, Y0, Y0
	Q2BLOCK(Q2GROUP, Y10, Y11)

	// acc = fma(d, float32(lanes), acc).
	VCVTDQ2PS Y0, Y0
	VFMADD231PS Y9, Y0, Y13

	K1NEXT(84)
	JNZ  q2loop

	KOUT8(Y13, X13)
	ADDQ wstride+8(FP), R11
	DECQ R13
	JNZ  q2row

	VZEROUPPER
	RET

// func q3KRows(w *byte, wstride, rows int, x *byte, nb int, out *float32)
//
// R11 walks the weight rows, R12 the outputs, R13 counts rows; Y13 holds
// acc, Y0 the block's lanes, X1 its scales, Y2 its hmask.
TEXT ·q3KRows(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), R11
	MOVQ rows+16(FP), R13
	MOVQ out+40(FP), R12
	VMOVDQU k2Mask03<>(SB), Y15
	VMOVDQU k2Mask04<>(SB), Y14

q3row:
	MOVQ R11, SI
	MOVQ x+24(FP), DI
	MOVQ nb+32(FP), CX
	VXORPS Y13, Y13, Y13

q3loop:
	Q3SCALES
	K2SCALEW2(VPMOVSXBW, Y10, Y11)
	VMOVDQU (SI), Y2
	VPXOR Y0, Y0, Y0
	VMOVDQU 32(SI), Y3
	VPSLLW $2, Y2, Y7
	Q3GROUP(0, 4, 0, Y10)
	VPSLLW $1, Y2, Y7
	Q3GROUP(2, 36, 32, Y10)
	VPSRLW $0, Y2, Y7
	Q3GROUP(4, 68, 64, Y10)
	VPSRLW $1, Y2, Y7
	Q3GROUP(6, 100, 96, Y10)
	VMOVDQU 64(SI), Y3
	VPSRLW $2, Y2, Y7
	Q3GROUP(0, 132, 0, Y11)
	VPSRLW $3, Y2, Y7
	Q3GROUP(2, 164, 32, Y11)
	VPSRLW $4, Y2, Y7
	Q3GROUP(4, 196, 64, Y11)
	VPSRLW $5, Y2, Y7
	Q3GROUP(6, 228, 96, Y11)

	// acc = fma(x.d·f16(w.d), float32(lanes), acc).
	K1FOLD(108)

	K1NEXT(110)
	JNZ  q3loop

	KOUT8(Y13, X13)
	ADDQ wstride+8(FP), R11
	DECQ R13
	JNZ  q3row

	VZEROUPPER
	RET

// func iq4XSRows(w *byte, wstride, rows int, x *byte, nb int, out *float32)
//
// Frame: the block's scales as doubled words. R11 walks the weight rows,
// R12 the outputs, R13 counts rows; Y13 holds acc, Y0 the block's lanes,
// Y14 the levels, Y15 the nibble mask.
TEXT ·iq4XSRows(SB), NOSPLIT, $32-48
	MOVQ w+0(FP), R11
	MOVQ rows+16(FP), R13
	MOVQ out+40(FP), R12
	VMOVDQU k2Mask0F<>(SB), Y15
	VMOVDQU k2IQ4Values<>(SB), Y14

iq4row:
	MOVQ R11, SI
	MOVQ x+24(FP), DI
	MOVQ nb+32(FP), CX
	VXORPS Y13, Y13, Y13

iq4loop:
	IQ4SCALES
	VPXOR Y0, Y0, Y0
	IQ4BLOCK(IQ4GROUP)

	// acc = fma(f16(w.d)·x.d, float32(lanes), acc).
	K1FOLD(0)

	K1NEXT(136)
	JNZ  iq4loop

	KOUT8(Y13, X13)
	ADDQ wstride+8(FP), R11
	DECQ R13
	JNZ  iq4row

	VZEROUPPER
	RET

// func q2KRowsR(w *byte, wstride, rows int, x *byte, nb int, out *float32)
//
// q2KRows in the Q2KRepacked order: per block the lanes are reduced to
// isum and imin, and X13 = [acc, accm] gets one fused multiply-add each, as
// q4KRows does.
TEXT ·q2KRowsR(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), R11
	MOVQ rows+16(FP), R13
	MOVQ out+40(FP), R12
	VMOVDQU k2Mask0F<>(SB), Y15
	VMOVDQU k2Mask03<>(SB), Y14

q2rrow:
	MOVQ R11, SI
	MOVQ x+24(FP), DI
	MOVQ nb+32(FP), CX
	VXORPS X13, X13, X13

q2rloop:
	Q2SCALEMIN(X15, X2, Y2)
	K2SCALEW2(VPMOVZXBW, Y10, Y11)
	VPMADDWD 260(DI), Y2, Y2

	VPXOR Y0, Y0, Y0
	Q2BLOCK(Q2GROUP, Y10, Y11)

	// X0 = [isum, imin, isum, imin].
	KSUMMIN(Y0, X0)

	// [acc, accm] += [isum·d, imin·dmin] fused, [d, dmin] = [wd, wdmin]·x.d.
	KDDMINXD(80)
	VFMADD231PS X5, X0, X13

	K1NEXT(84)
	JNZ  q2rloop

	// out = acc − accm
	KOUTDIFF(X13)
	ADDQ wstride+8(FP), R11
	DECQ R13
	JNZ  q2rrow

	VZEROUPPER
	RET

// func q2KRows4R(w *byte, wstride, rows int, x *[4]*byte, nb int, out *[4]*float32)
//
// q2KRows4 in the Q2KRepacked order. Registers: X0 the four tokens' acc
// and X2 their accm (one lane each), X14 their imin, Y8-Y11 their lanes.
TEXT ·q2KRows4R(SB), NOSPLIT, $72-48
	K2X4ENTER
	VMOVDQU k2Mask03<>(SB), Y15

q2rx4row:
	K2X4ROW
	VXORPS X0, X0, X0
	VXORPS X2, X2, X2

q2rx4loop:
	Q2SCALEMIN(k2Mask0F<>(SB), X4, Y4)

	// X14 = [imin_t]: each token's mins·bsums lanes, reduced.
	KX4BSUMS(Y4, Y8, Y9, Y10, Y11)
	KREDUCE4(Y8, Y9, Y10, Y11, X14, Y14)
	K2SCALEW2(VPMOVZXBW, Y4, Y6)

	KX4CLEAR
	Q2BLOCK(Q2X4GROUP, Y4, Y6)
	KREDUCE4(Y8, Y9, Y10, Y11, X8, Y8)
	VCVTDQ2PS X8, X8
	VCVTDQ2PS X14, X14

	// X5 = [x_t.d]; acc_t = fma(isum_t, wd·x_t.d, acc_t), accm_t likewise.
	KX4XD(X5)
	KX4DDMIN(80)
	KX4FMA2(X8, X14, X0, X2)

	KX4NEXT(84)
	JNZ  q2rx4loop

	// out[t][r] = acc_t − accm_t.
	VSUBPS X2, X0, X3
	K2X4STORE1(0)
	K2X4STORELANE(8, 1)
	K2X4STORELANE(16, 2)
	K2X4STORELANE(24, 3)
	K2X4ROWEND(q2rx4row)

	VZEROUPPER
	RET
