//go:build amd64 && !noasm

#include "textflag.h"

// Expf on four floats at a time (AVX2 and FMA): glibc's evaluation in
// double precision, as Expf has it, on two 128-bit halves' worth of lanes
// at once (VCVTPS2PD widens four floats into four doubles), the table
// entries gathered by index, the special cases blended over the result.

DATA expMask31<>+0(SB)/8, $31
DATA expMask31<>+8(SB)/8, $31
DATA expMask31<>+16(SB)/8, $31
DATA expMask31<>+24(SB)/8, $31
GLOBL expMask31<>(SB), RODATA|NOPTR, $32

DATA expUnder<>+0(SB)/4, $0xc2cff1b4 // underflow threshold -0x1.9fe368p6
DATA expUnder<>+4(SB)/4, $0xc2cff1b4
DATA expUnder<>+8(SB)/4, $0xc2cff1b4
DATA expUnder<>+12(SB)/4, $0xc2cff1b4
GLOBL expUnder<>(SB), RODATA|NOPTR, $16

DATA expOver<>+0(SB)/4, $0x42b17217 // overflow threshold 0x1.62e42ep6
DATA expOver<>+4(SB)/4, $0x42b17217
DATA expOver<>+8(SB)/4, $0x42b17217
DATA expOver<>+12(SB)/4, $0x42b17217
GLOBL expOver<>(SB), RODATA|NOPTR, $16

DATA expInf<>+0(SB)/4, $0x7f800000
DATA expInf<>+4(SB)/4, $0x7f800000
DATA expInf<>+8(SB)/4, $0x7f800000
DATA expInf<>+12(SB)/4, $0x7f800000
GLOBL expInf<>(SB), RODATA|NOPTR, $16

// EXP_CONSTS loads the evaluation's constants into Y10-Y15 and the table's
// address into R8.
#define EXP_CONSTS \
	LEAQ ·Exp2Table(SB), R8 \
	MOVQ $0x40471547652b82fe, AX \ // 32/ln2
	VMOVQ AX, X15 \
	VBROADCASTSD X15, Y15 \
	MOVQ $0x4338000000000000, AX \ // shift 0x1.8p52
	VMOVQ AX, X14 \
	VBROADCASTSD X14, Y14 \
	MOVQ $0x3ebc6af84b912394, AX \ // c0
	VMOVQ AX, X13 \
	VBROADCASTSD X13, Y13 \
	MOVQ $0x3f2ebfce50fac4f3, AX \ // c1
	VMOVQ AX, X12 \
	VBROADCASTSD X12, Y12 \
	MOVQ $0x3f962e42ff0c52d6, AX \ // c2
	VMOVQ AX, X11 \
	VBROADCASTSD X11, Y11 \
	MOVQ $0x3ff0000000000000, AX \ // 1
	VMOVQ AX, X10 \
	VBROADCASTSD X10, Y10

// EXPF4 sets X1 = Expf(X0) lane by lane; it clobbers Y1-Y6.
#define EXPF4 \
	VCVTPS2PD   X0, Y1 \                     // xd
	VMULPD      Y15, Y1, Y1 \                // z = 32/ln2 · xd
	VADDPD      Y14, Y1, Y2 \                // kd = z + shift; ki = its bits
	VSUBPD      Y14, Y2, Y3 \                // kd - shift
	VSUBPD      Y3, Y1, Y3 \                 // r = z - kd
	VPAND       expMask31<>(SB), Y2, Y4 \    // ki % 32
	VPCMPEQQ    Y5, Y5, Y5 \
	VPGATHERQQ  Y5, (R8)(Y4*8), Y6 \         // Exp2Table[ki%32]
	VPSLLQ      $47, Y2, Y4 \
	VPADDQ      Y4, Y6, Y6 \                 // s
	VMOVAPD     Y12, Y4 \
	VFMADD231PD Y13, Y3, Y4 \                // p = c0·r + c1
	VMULPD      Y3, Y3, Y5 \                 // r2
	VMOVAPD     Y10, Y1 \
	VFMADD231PD Y11, Y3, Y1 \                // y = c2·r + 1
	VFMADD231PD Y5, Y4, Y1 \                 // y = p·r2 + y
	VMULPD      Y6, Y1, Y1 \                 // y·s
	VCVTPD2PSY  Y1, X1 \
	VCMPPS      $0x11, expUnder<>(SB), X0, X2 \ // x < underflow threshold
	VANDNPS     X1, X2, X1 \                 // then 0
	VCMPPS      $0x1e, expOver<>(SB), X0, X2 \ // x > overflow threshold
	VBLENDVPS   X2, expInf<>(SB), X1, X1 \   // then +Inf
	VCMPPS      $0x03, X0, X0, X2 \          // NaN
	VADDPS      X0, X0, X3 \
	VBLENDVPS   X2, X3, X1, X1               // then x+x

// func expfsAsm(x *float32, n int)
TEXT ·expfsAsm(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $2, CX
	JZ   expfsdone
	EXP_CONSTS

expfsloop:
	VMOVUPS (DI), X0
	EXPF4
	VMOVUPS X1, (DI)
	ADDQ    $16, DI
	DECQ    CX
	JNZ     expfsloop

expfsdone:
	VZEROUPPER
	RET

// func expSumAsm(dst, x *float32, n int, temp, m float32) float32
//
// X7 the sum, X8 temp and X9 m in every lane: per four elements the
// quotients and differences (VDIVPS and VSUBPS round each lane as DIVSS
// and SUBSS), EXPF4, the store, and the four results added to the sum one
// at a time, in order.
TEXT ·expSumAsm(SB), NOSPLIT, $0-36
	MOVQ         dst+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VXORPS       X7, X7, X7
	VBROADCASTSS temp+24(FP), X8
	VBROADCASTSS m+28(FP), X9
	SHRQ         $2, CX
	JZ           expsumdone
	EXP_CONSTS

expsumloop:
	VMOVUPS (SI), X0
	VDIVPS  X8, X0, X0 // x/temp
	VSUBPS  X9, X0, X0 // - m
	EXPF4
	VMOVUPS   X1, (DI)
	VADDSS    X1, X7, X7 // + e0
	VMOVSHDUP X1, X2
	VADDSS    X2, X7, X7 // + e1
	VMOVHLPS  X1, X1, X3
	VADDSS    X3, X7, X7 // + e2
	VMOVSHDUP X3, X3
	VADDSS    X3, X7, X7 // + e3
	ADDQ      $16, SI
	ADDQ      $16, DI
	DECQ      CX
	JNZ       expsumloop

expsumdone:
	VMOVSS X7, ret+32(FP)
	VZEROUPPER
	RET

// func divAsm(x *float32, n int, d float32)
TEXT ·divAsm(SB), NOSPLIT, $0-20
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS d+16(FP), Y1
	MOVQ         CX, DX
	SHRQ         $3, CX
	JZ           div4

div8loop:
	VMOVUPS (DI), Y0
	VDIVPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	DECQ    CX
	JNZ     div8loop

div4:
	TESTQ $4, DX
	JZ    divdone
	VMOVUPS (DI), X0
	VDIVPS  X1, X0, X0
	VMOVUPS X0, (DI)

divdone:
	VZEROUPPER
	RET
