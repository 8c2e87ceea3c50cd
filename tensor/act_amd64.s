//go:build amd64 && !noasm

#include "textflag.h"

// permQ8 undoes the lane interleaving of the two signed packs.
DATA permQ8<>+0(SB)/4, $0
DATA permQ8<>+4(SB)/4, $4
DATA permQ8<>+8(SB)/4, $1
DATA permQ8<>+12(SB)/4, $5
DATA permQ8<>+16(SB)/4, $2
DATA permQ8<>+20(SB)/4, $6
DATA permQ8<>+24(SB)/4, $3
DATA permQ8<>+28(SB)/4, $7
GLOBL permQ8<>(SB), RODATA|NOPTR, $32

// q8Quant quantizes the 32 floats at SI as llama.cpp's x86
// quantize_row_q8_0, instruction for instruction: amax by a max tree,
// d = amax/127 converted to F16 (VCVTPS2PH, round to nearest even) into the
// low word of X5, and Y0 = round-half-even(x × (127/amax)) converted and
// packed with signed saturation, in element order. Needs Y15 = abs mask,
// X14 = 127.0, Y13 = permQ8. Clobbers Y1-Y8.
#define q8Quant \
	VMOVUPS      (SI), Y0 \
	VMOVUPS      32(SI), Y1 \
	VMOVUPS      64(SI), Y2 \
	VMOVUPS      96(SI), Y3 \
	VANDPS       Y15, Y0, Y4 \
	VANDPS       Y15, Y1, Y5 \
	VMAXPS       Y5, Y4, Y4 \
	VANDPS       Y15, Y2, Y5 \
	VMAXPS       Y5, Y4, Y4 \
	VANDPS       Y15, Y3, Y5 \
	VMAXPS       Y5, Y4, Y4 \
	VEXTRACTF128 $1, Y4, X5 \
	VMAXPS       X4, X5, X4 \
	VMOVHLPS     X4, X4, X5 \
	VMAXPS       X5, X4, X4 \
	VMOVSHDUP    X4, X5 \
	VMAXSS       X5, X4, X4 \
	VDIVSS       X14, X4, X5 \
	VCVTPS2PH    $0, X5, X5 \
	VXORPS       X6, X6, X6 \
	VDIVSS       X4, X14, X7 \
	VCMPSS       $4, X6, X4, X8 \
	VANDPS       X8, X7, X7 \
	VBROADCASTSS X7, Y7 \
	VMULPS       Y7, Y0, Y0 \
	VMULPS       Y7, Y1, Y1 \
	VMULPS       Y7, Y2, Y2 \
	VMULPS       Y7, Y3, Y3 \
	VROUNDPS     $0, Y0, Y0 \
	VROUNDPS     $0, Y1, Y1 \
	VROUNDPS     $0, Y2, Y2 \
	VROUNDPS     $0, Y3, Y3 \
	VCVTPS2DQ    Y0, Y0 \
	VCVTPS2DQ    Y1, Y1 \
	VCVTPS2DQ    Y2, Y2 \
	VCVTPS2DQ    Y3, Y3 \
	VPACKSSDW    Y1, Y0, Y0 \
	VPACKSSDW    Y3, Y2, Y2 \
	VPACKSSWB    Y2, Y0, Y0 \
	VPERMD       Y0, Y13, Y0

// q8QuantConsts loads the constants q8Quant needs.
#define q8QuantConsts \
	MOVL         $0x7fffffff, AX \
	VMOVD        AX, X15 \
	VPBROADCASTD X15, Y15 \
	MOVL         $0x42fe0000, AX \
	VMOVD        AX, X14 \
	VMOVDQU      permQ8<>(SB), Y13

// func quantizeQ8_0AVX2(dst *byte, src *float32, nb int)
//
// Per block of 32 floats, the F16 scale and the 32 quants of q8Quant
// (d = amax/127, q = round-half-even(x × (127/amax))).
TEXT ·quantizeQ8_0AVX2(SB), NOSPLIT, $0-24
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  nb+16(FP), CX
	q8QuantConsts
	TESTQ CX, CX
	JZ    q8adone

q8aloop:
	q8Quant
	VMOVD   X5, AX
	MOVW    AX, (DI)
	VMOVDQU Y0, 2(DI)
	ADDQ    $128, SI
	ADDQ    $34, DI
	DECQ    CX
	JNZ     q8aloop

q8adone:
	VZEROUPPER
	RET

// func quantizeQ8VNNI(dst *byte, src *float32, nb int, shift int)
//
// Per block of 32 floats, the q8VNNI block (dotq_amd64.go) of q8Quant's
// results: the 32 quants, the F16 scale widened to float32, and
// -(the sum of the 32 quants) << shift as int32. Needs AVX-512 VL and VNNI.
TEXT ·quantizeQ8VNNI(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         nb+16(FP), CX
	MOVQ         shift+24(FP), BX
	q8QuantConsts
	MOVL         $0x01010101, AX
	VMOVD        AX, X12
	VPBROADCASTD X12, Y12
	TESTQ        CX, CX
	JZ           qvdone

qvloop:
	q8Quant
	VCVTPH2PS    X5, X5
	VMOVSS       X5, 32(DI)
	VMOVDQU      Y0, (DI)
	VPXORD       Y6, Y6, Y6
	VPDPBUSD     Y0, Y12, Y6
	VEXTRACTI128 $1, Y6, X7
	VPADDD       X7, X6, X6
	VPSHUFD      $0x4e, X6, X7
	VPADDD       X7, X6, X6
	VPSHUFD      $0xb1, X6, X7
	VPADDD       X7, X6, X6
	VMOVD        X6, AX
	NEGL         AX
	SHLXL        BX, AX, AX
	MOVL         AX, 36(DI)
	ADDQ         $128, SI
	ADDQ         $40, DI
	DECQ         CX
	JNZ          qvloop

qvdone:
	VZEROUPPER
	RET

// func f32ToF16sAVX2(dst *uint16, src *float32, n int)
//
// dst[i] = F32ToF16(src[i]) for i < n&^7 with VCVTPS2PH (round to nearest
// even), as llama.cpp's CPU backend converts activations on F16C machines.
TEXT ·f32ToF16sAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   f2hdone

f2hloop:
	VMOVUPS   (SI), Y0
	VCVTPS2PH $0, Y0, X0
	VMOVDQU   X0, (DI)
	ADDQ      $32, SI
	ADDQ      $16, DI
	DECQ      CX
	JNZ       f2hloop

f2hdone:
	VZEROUPPER
	RET
