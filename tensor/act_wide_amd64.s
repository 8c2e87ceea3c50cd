//go:build amd64 && !noasm

#include "textflag.h"

// func bf16WidenAVX2(dst *byte, src *float32, n int)
//
// dst[i] = BF16ToF32(F32ToBF16(src[i])) for i < n&^7, 8 floats per step:
// u + 0x7fff + (u>>16 & 1) with the low half cleared (round to nearest
// even), or for a NaN (|u| > 0x7f800000) u with the low half cleared and
// the quiet bit set. Constants: Y10 0x7f800000, Y11 0x7fffffff, Y12
// 0x00400000, Y13 1, Y14 0x7fff, Y15 0xffff0000.
TEXT ·bf16WidenAVX2(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	SHRQ         $3, CX
	JZ           bwidedone
	MOVL         $0x7f800000, AX
	MOVQ         AX, X10
	VPBROADCASTD X10, Y10
	MOVL         $0x7fffffff, AX
	MOVQ         AX, X11
	VPBROADCASTD X11, Y11
	MOVL         $0x00400000, AX
	MOVQ         AX, X12
	VPBROADCASTD X12, Y12
	MOVL         $1, AX
	MOVQ         AX, X13
	VPBROADCASTD X13, Y13
	MOVL         $0x7fff, AX
	MOVQ         AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $0xffff0000, AX
	MOVQ         AX, X15
	VPBROADCASTD X15, Y15

bwideloop:
	VMOVDQU   (SI), Y0
	VPSRLD    $16, Y0, Y1
	VPAND     Y13, Y1, Y1
	VPADDD    Y0, Y1, Y1
	VPADDD    Y14, Y1, Y1
	VPAND     Y15, Y1, Y1
	VPAND     Y15, Y0, Y2
	VPOR      Y12, Y2, Y2
	VPAND     Y11, Y0, Y3
	VPCMPGTD  Y10, Y3, Y3
	VPBLENDVB Y3, Y2, Y1, Y1
	VMOVDQU   Y1, (DI)
	ADDQ      $32, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       bwideloop

bwidedone:
	VZEROUPPER
	RET
