//go:build amd64 && !noasm

#include "textflag.h"

// func madHalfAVX2(acc, v *float32, s float32, n int)
TEXT ·madHalfAVX2(SB), NOSPLIT, $0-32
	MOVQ         acc+0(FP), DI
	MOVQ         v+8(FP), SI
	VBROADCASTSS s+16(FP), Y0
	MOVQ         n+24(FP), CX
	SHRQ         $3, CX
	JZ           maddone

madloop:
	VMOVUPS     (DI), Y1
	VFMADD231PS (SI), Y0, Y1 // Y1 += v*s, fused
	VCVTPS2PH   $0, Y1, X2   // round to half, nearest even
	VCVTPH2PS   X2, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $32, DI
	ADDQ        $32, SI
	DECQ        CX
	JNZ         madloop

maddone:
	VZEROUPPER
	RET

// func scaleHalfAVX2(acc *float32, s float32, n int)
TEXT ·scaleHalfAVX2(SB), NOSPLIT, $0-24
	MOVQ         acc+0(FP), DI
	VBROADCASTSS s+8(FP), Y0
	MOVQ         n+16(FP), CX
	SHRQ         $3, CX
	JZ           scaledone

scaleloop:
	VMULPS    (DI), Y0, Y1
	VCVTPS2PH $0, Y1, X2
	VCVTPH2PS X2, Y1
	VMOVUPS   Y1, (DI)
	ADDQ      $32, DI
	DECQ      CX
	JNZ       scaleloop

scaledone:
	VZEROUPPER
	RET

// func dot32AVX2(k, q *float32, n int) float32
TEXT ·dot32AVX2(SB), NOSPLIT, $0-28
	MOVQ   k+0(FP), SI
	MOVQ   q+8(FP), DI
	MOVQ   n+16(FP), CX
	SHRQ   $5, CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	TESTQ  CX, CX
	JZ     dotreduce

dotloop:
	VMOVUPS     (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	VMOVUPS     32(SI), Y5
	VFMADD231PS 32(DI), Y5, Y1
	VMOVUPS     64(SI), Y6
	VFMADD231PS 64(DI), Y6, Y2
	VMOVUPS     96(SI), Y7
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	DECQ        CX
	JNZ         dotloop

dotreduce:
	// GGML_F32x8_REDUCE: (a0+a2)+(a1+a3), halves, two horizontal adds.
	VADDPS       Y2, Y0, Y0
	VADDPS       Y3, Y1, Y1
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func cpuidAttn(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuidAttn(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbvAttn() (eax, edx uint32)
TEXT ·xgetbvAttn(SB), NOSPLIT, $0-8
	MOVL   $0, CX
	XGETBV
	MOVL   AX, eax+0(FP)
	MOVL   DX, edx+4(FP)
	RET
