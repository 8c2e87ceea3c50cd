//go:build amd64 && !noasm

#include "textflag.h"

// func axpyF32AVX2(y, x *float32, n int, a float32)
TEXT ·axpyF32AVX2(SB), NOSPLIT, $0-28
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS a+24(FP), Y0
	SHRQ         $3, CX
	JZ           axpydone

axpyloop:
	VMOVUPS     (DI), Y1
	VFMADD231PS (SI), Y0, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $32, DI
	ADDQ        $32, SI
	DECQ        CX
	JNZ         axpyloop

axpydone:
	VZEROUPPER
	RET

// func axpyRoundF16AVX2(y, x *float32, n int, a float32)
TEXT ·axpyRoundF16AVX2(SB), NOSPLIT, $0-28
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS a+24(FP), Y0
	SHRQ         $3, CX
	JZ           axpyhdone

axpyhloop:
	VMOVUPS     (DI), Y1
	VFMADD231PS (SI), Y0, Y1
	VCVTPS2PH   $0, Y1, X1
	VCVTPH2PS   X1, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $32, DI
	ADDQ        $32, SI
	DECQ        CX
	JNZ         axpyhloop

axpyhdone:
	VZEROUPPER
	RET

// func scaleRoundF16AVX2(y *float32, n int, s float32)
TEXT ·scaleRoundF16AVX2(SB), NOSPLIT, $0-20
	MOVQ         y+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS s+16(FP), Y0
	SHRQ         $3, CX
	JZ           scalehdone

scalehloop:
	VMULPS    (DI), Y0, Y1
	VCVTPS2PH $0, Y1, X1
	VCVTPH2PS X1, Y1
	VMOVUPS   Y1, (DI)
	ADDQ      $32, DI
	DECQ      CX
	JNZ       scalehloop

scalehdone:
	VZEROUPPER
	RET
