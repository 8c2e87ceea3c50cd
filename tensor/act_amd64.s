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

// func quantizeQ8_0AVX2(dst *byte, src *float32, nb int)
//
// llama.cpp's x86 quantize_row_q8_0, instruction for instruction: per block
// of 32, amax by a max tree, d = amax/127 stored as F16 (VCVTPS2PH, round
// to nearest even), q = round-half-even(x × (127/amax)) converted and
// packed with signed saturation.
TEXT ·quantizeQ8_0AVX2(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         nb+16(FP), CX
	MOVL         $0x7fffffff, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	MOVL         $0x42fe0000, AX // 127.0
	VMOVD        AX, X14
	VMOVDQU      permQ8<>(SB), Y13
	TESTQ        CX, CX
	JZ           q8adone

q8aloop:
	VMOVUPS      (SI), Y0
	VMOVUPS      32(SI), Y1
	VMOVUPS      64(SI), Y2
	VMOVUPS      96(SI), Y3
	VANDPS       Y15, Y0, Y4
	VANDPS       Y15, Y1, Y5
	VMAXPS       Y5, Y4, Y4
	VANDPS       Y15, Y2, Y5
	VMAXPS       Y5, Y4, Y4
	VANDPS       Y15, Y3, Y5
	VMAXPS       Y5, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VMAXPS       X4, X5, X4
	VMOVHLPS     X4, X4, X5
	VMAXPS       X5, X4, X4
	VMOVSHDUP    X4, X5
	VMAXSS       X5, X4, X4 // amax
	VDIVSS       X14, X4, X5 // d = amax / 127
	VCVTPS2PH    $0, X5, X5
	VMOVD        X5, AX
	MOVW         AX, (DI)
	VXORPS       X6, X6, X6
	VDIVSS       X4, X14, X7 // 127 / amax
	VCMPSS       $4, X6, X4, X8 // amax != 0
	VANDPS       X8, X7, X7
	VBROADCASTSS X7, Y7
	VMULPS       Y7, Y0, Y0
	VMULPS       Y7, Y1, Y1
	VMULPS       Y7, Y2, Y2
	VMULPS       Y7, Y3, Y3
	VROUNDPS     $0, Y0, Y0
	VROUNDPS     $0, Y1, Y1
	VROUNDPS     $0, Y2, Y2
	VROUNDPS     $0, Y3, Y3
	VCVTPS2DQ    Y0, Y0
	VCVTPS2DQ    Y1, Y1
	VCVTPS2DQ    Y2, Y2
	VCVTPS2DQ    Y3, Y3
	VPACKSSDW    Y1, Y0, Y0
	VPACKSSDW    Y3, Y2, Y2
	VPACKSSWB    Y2, Y0, Y0
	VPERMD       Y0, Y13, Y0
	VMOVDQU      Y0, 2(DI)
	ADDQ         $128, SI
	ADDQ         $34, DI
	DECQ         CX
	JNZ          q8aloop

q8adone:
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
