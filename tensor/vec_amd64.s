//go:build amd64 && !noasm

#include "textflag.h"

// roundF16 rounds the eight floats of Y1 to float16 (to nearest even) and
// converts them back, in place.
#define roundF16 \
	VCVTPS2PH $0, Y1, X1 \
	VCVTPH2PS X1, Y1

// noRound leaves Y1 as it is: axpyLoop's FIN for float32 results.
#define noRound

// axpyLoop sets y[i] = FIN(fma(x[i], a, y[i])) for i < n&^7, eight at a
// time in Y1, with y at DI, x at SI, n in CX and a broadcast in Y0, then
// clears the upper halves. LOOP and DONE name its labels.
#define axpyLoop(FIN, LOOP, DONE) \
	SHRQ        $3, CX \
	JZ          DONE \
LOOP: \
	VMOVUPS     (DI), Y1 \
	VFMADD231PS (SI), Y0, Y1 \
	FIN \
	VMOVUPS     Y1, (DI) \
	ADDQ        $32, DI \
	ADDQ        $32, SI \
	DECQ        CX \
	JNZ         LOOP \
DONE: \
	VZEROUPPER

// func axpyF32AVX2(y, x *float32, n int, a float32)
TEXT ·axpyF32AVX2(SB), NOSPLIT, $0-28
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS a+24(FP), Y0
	axpyLoop(noRound, axpyloop, axpydone)
	RET

// func axpyRoundF16AVX2(y, x *float32, n int, a float32)
TEXT ·axpyRoundF16AVX2(SB), NOSPLIT, $0-28
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS a+24(FP), Y0
	axpyLoop(roundF16, axpyhloop, axpyhdone)
	RET

// func scaleRoundF16AVX2(y *float32, n int, s float32)
TEXT ·scaleRoundF16AVX2(SB), NOSPLIT, $0-20
	MOVQ         y+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS s+16(FP), Y0
	SHRQ         $3, CX
	JZ           scalehdone

scalehloop:
	VMULPS  (DI), Y0, Y1
	roundF16
	VMOVUPS Y1, (DI)
	ADDQ    $32, DI
	DECQ    CX
	JNZ     scalehloop

scalehdone:
	VZEROUPPER
	RET
