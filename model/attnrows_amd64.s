//go:build amd64 && !noasm

#include "textflag.h"

// func dot32F16RowsAVX2(out *float32, k *uint16, q *float32, n, d32, stride int)
// out[r] = dot32F16AVX2(k + r*stride, q, d32) for r < n (n, d32 > 0; d32 a
// multiple of 32; stride in halves): ggml's 8-lane layout, four
// accumulators reduced as GGML_F32x8_REDUCE. Rows are independent, so
// their reductions overlap.
TEXT ·dot32F16RowsAVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DX
	MOVQ k+8(FP), R8
	MOVQ q+16(FP), R9
	MOVQ n+24(FP), BX
	MOVQ d32+32(FP), R10
	SHRQ $5, R10
	MOVQ stride+40(FP), R11
	SHLQ $1, R11

rows:
	MOVQ   R8, SI
	MOVQ   R9, DI
	MOVQ   R10, CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

row:
	VCVTPH2PS   (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	VCVTPH2PS   16(SI), Y5
	VFMADD231PS 32(DI), Y5, Y1
	VCVTPH2PS   32(SI), Y6
	VFMADD231PS 64(DI), Y6, Y2
	VCVTPH2PS   48(SI), Y7
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $64, SI
	ADDQ        $128, DI
	DECQ        CX
	JNZ         row

	// GGML_F32x8_REDUCE: (a0+a2)+(a1+a3), halves, two horizontal adds.
	VADDPS       Y2, Y0, Y0
	VADDPS       Y3, Y1, Y1
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	MOVSS        X0, (DX)
	ADDQ         $4, DX
	ADDQ         R11, R8
	DECQ         BX
	JNZ          rows
	VZEROUPPER
	RET
