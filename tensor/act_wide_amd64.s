//go:build amd64 && !noasm

#include "textflag.h"

// func f16WidenAVX2(dst *byte, src *float32, n int)
//
// dst[i] = F16ToF32(F32ToF16Hw(src[i])) for i < n&^7: VCVTPS2PH (round to
// nearest even) then VCVTPH2PS, 16 floats per step and a last 8.
TEXT ·f16WidenAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   widedone

wideloop:
	CMPQ      CX, $2
	JLT       widelast
	VMOVUPS   (SI), Y0
	VMOVUPS   32(SI), Y1
	VCVTPS2PH $0, Y0, X0
	VCVTPS2PH $0, Y1, X1
	VCVTPH2PS X0, Y0
	VCVTPH2PS X1, Y1
	VMOVUPS   Y0, (DI)
	VMOVUPS   Y1, 32(DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $2, CX
	JNZ       wideloop
	JMP       widedone

widelast:
	VMOVUPS   (SI), Y0
	VCVTPS2PH $0, Y0, X0
	VCVTPH2PS X0, Y0
	VMOVUPS   Y0, (DI)

widedone:
	VZEROUPPER
	RET
