//go:build amd64 && !noasm

#include "textflag.h"

// REDUCE4X8 folds the four 8-lane accumulators Y0-Y3 into X0 as
// GGML_F32x8_REDUCE: (a0+a2)+(a1+a3), halves, two horizontal adds.
#define REDUCE4X8 \
	VADDPS       Y2, Y0, Y0 \
	VADDPS       Y3, Y1, Y1 \
	VADDPS       Y1, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0 \
	VHADDPS      X0, X0, X0 \
	VHADDPS      X0, X0, X0

// REDUCE4X16 folds the four 16-lane accumulators (accumulator j in
// Y(2j), Y(2j+1)) into X0 as GGML_F32x16_REDUCE: x0 += x2, x1 += x3,
// x0 += x1; then _mm512_reduce_add_ps as gcc implements it: 256-bit
// halves, 128-bit halves, lanes two apart, then the last pair.
#define REDUCE4X16 \
	VADDPS       Y4, Y0, Y0 \
	VADDPS       Y5, Y1, Y1 \
	VADDPS       Y6, Y2, Y2 \
	VADDPS       Y7, Y3, Y3 \
	VADDPS       Y2, Y0, Y0 \
	VADDPS       Y3, Y1, Y1 \
	VADDPS       Y1, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0 \
	VPERMILPS    $0x4e, X0, X1 \
	VADDPS       X1, X0, X0 \
	VMOVSHDUP    X0, X1 \
	VADDSS       X1, X0, X0

// h64Step accumulates 64 halves of keys at SI times 64 floats at DI into
// Y0-Y7 (eight lanes each) and advances both. Clobbers Y8-Y15.
#define h64Step \
	VCVTPH2PS   (SI), Y8 \
	VFMADD231PS (DI), Y8, Y0 \
	VCVTPH2PS   16(SI), Y9 \
	VFMADD231PS 32(DI), Y9, Y1 \
	VCVTPH2PS   32(SI), Y10 \
	VFMADD231PS 64(DI), Y10, Y2 \
	VCVTPH2PS   48(SI), Y11 \
	VFMADD231PS 96(DI), Y11, Y3 \
	VCVTPH2PS   64(SI), Y12 \
	VFMADD231PS 128(DI), Y12, Y4 \
	VCVTPH2PS   80(SI), Y13 \
	VFMADD231PS 160(DI), Y13, Y5 \
	VCVTPH2PS   96(SI), Y14 \
	VFMADD231PS 192(DI), Y14, Y6 \
	VCVTPH2PS   112(SI), Y15 \
	VFMADD231PS 224(DI), Y15, Y7 \
	ADDQ        $128, SI \
	ADDQ        $256, DI

// h32Step accumulates 32 halves of keys at SI times 32 floats at DI into
// Y0-Y3 (eight lanes each) and advances both. Clobbers Y4-Y7.
#define h32Step \
	VCVTPH2PS   (SI), Y4 \
	VFMADD231PS (DI), Y4, Y0 \
	VCVTPH2PS   16(SI), Y5 \
	VFMADD231PS 32(DI), Y5, Y1 \
	VCVTPH2PS   32(SI), Y6 \
	VFMADD231PS 64(DI), Y6, Y2 \
	VCVTPH2PS   48(SI), Y7 \
	VFMADD231PS 96(DI), Y7, Y3 \
	ADDQ        $64, SI \
	ADDQ        $128, DI

// rowsStart loads the row kernels' arguments: out in DX, k in R8, q in
// R9, n in BX, d (a multiple of 1<<SH) >> SH in R10, stride in bytes in
// R11.
#define rowsStart(SH) \
	MOVQ out+0(FP), DX \
	MOVQ k+8(FP), R8 \
	MOVQ q+16(FP), R9 \
	MOVQ n+24(FP), BX \
	MOVQ d+32(FP), R10 \
	SHRQ $SH, R10 \
	MOVQ stride+40(FP), R11 \
	SHLQ $1, R11

// rowBegin points SI and DI at the row's keys and at q, and CX at its
// step count.
#define rowBegin \
	MOVQ   R8, SI \
	MOVQ   R9, DI \
	MOVQ   R10, CX

// rowEnd stores the row's dot (X0) and moves to the next row, looping to
// ROWS while rows remain, then returns.
#define rowEnd(ROWS) \
	MOVSS X0, (DX) \
	ADDQ  $4, DX \
	ADDQ  R11, R8 \
	DECQ  BX \
	JNZ   ROWS \
	VZEROUPPER \
	RET

// d32Step accumulates 32 floats of keys at SI times 32 floats at DI into
// Y0-Y3 and advances both. Clobbers Y4-Y7.
#define d32Step \
	VMOVUPS     (SI), Y4 \
	VFMADD231PS (DI), Y4, Y0 \
	VMOVUPS     32(SI), Y5 \
	VFMADD231PS 32(DI), Y5, Y1 \
	VMOVUPS     64(SI), Y6 \
	VFMADD231PS 64(DI), Y6, Y2 \
	VMOVUPS     96(SI), Y7 \
	VFMADD231PS 96(DI), Y7, Y3 \
	ADDQ        $128, SI \
	ADDQ        $128, DI

// d64Step accumulates 64 floats of keys at SI times 64 floats at DI into
// Y0-Y7 and advances both. Clobbers Y8-Y15.
#define d64Step \
	VMOVUPS     (SI), Y8 \
	VFMADD231PS (DI), Y8, Y0 \
	VMOVUPS     32(SI), Y9 \
	VFMADD231PS 32(DI), Y9, Y1 \
	VMOVUPS     64(SI), Y10 \
	VFMADD231PS 64(DI), Y10, Y2 \
	VMOVUPS     96(SI), Y11 \
	VFMADD231PS 96(DI), Y11, Y3 \
	VMOVUPS     128(SI), Y12 \
	VFMADD231PS 128(DI), Y12, Y4 \
	VMOVUPS     160(SI), Y13 \
	VFMADD231PS 160(DI), Y13, Y5 \
	VMOVUPS     192(SI), Y14 \
	VFMADD231PS 192(DI), Y14, Y6 \
	VMOVUPS     224(SI), Y15 \
	VFMADD231PS 224(DI), Y15, Y7 \
	ADDQ        $256, SI \
	ADDQ        $256, DI

// dotBody is a whole dot kernel: START (dotStart or dotStart8) loads the
// arguments and zeroes the accumulators, STEP runs n >> SH times (looping
// at label LOOP), REDUCE folds the accumulators into X0 (at label RED)
// and dotRet returns it.
#define dotBody(START, SH, STEP, LOOP, RED, REDUCE) \
	START \
	SHRQ   $SH, CX \
	TESTQ  CX, CX \
	JZ     RED \
LOOP: \
	STEP \
	DECQ   CX \
	JNZ    LOOP \
RED: \
	REDUCE \
	dotRet

// dotStart loads the dot kernels' arguments (k in SI, q in DI, n in CX)
// and zeroes the accumulators Y0-Y3; dotStart8 zeroes Y4-Y7 as well.
#define dotStart \
	MOVQ   k+0(FP), SI \
	MOVQ   q+8(FP), DI \
	MOVQ   n+16(FP), CX \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y3, Y3, Y3

#define dotStart8 \
	dotStart \
	VXORPS Y4, Y4, Y4 \
	VXORPS Y5, Y5, Y5 \
	VXORPS Y6, Y6, Y6 \
	VXORPS Y7, Y7, Y7

// dotRet returns the float32 in X0.
#define dotRet \
	VZEROUPPER \
	MOVSS X0, ret+24(FP) \
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
	dotBody(dotStart, 5, d32Step, dotloop, dotreduce, REDUCE4X8)

// func dot64AVX2(k, q *float32, n int) float32
// Accumulator j (0..3) has lanes 0-7 in Y(2j) and lanes 8-15 in Y(2j+1).
TEXT ·dot64AVX2(SB), NOSPLIT, $0-28
	dotBody(dotStart8, 6, d64Step, d64loop, d64reduce, REDUCE4X16)

// func dot32F16AVX2(k *uint16, q *float32, n int) float32
TEXT ·dot32F16AVX2(SB), NOSPLIT, $0-28
	dotBody(dotStart, 5, h32Step, h32loop, h32reduce, REDUCE4X8)

// func dot64F16AVX2(k *uint16, q *float32, n int) float32
TEXT ·dot64F16AVX2(SB), NOSPLIT, $0-28
	dotBody(dotStart8, 6, h64Step, h64loop, h64reduce, REDUCE4X16)

// func madHalfF16AVX2(acc *float32, v *uint16, s float32, n int)
TEXT ·madHalfF16AVX2(SB), NOSPLIT, $0-32
	MOVQ         acc+0(FP), DI
	MOVQ         v+8(FP), SI
	VBROADCASTSS s+16(FP), Y0
	MOVQ         n+24(FP), CX
	SHRQ         $3, CX
	JZ           hmaddone

hmadloop:
	VCVTPH2PS   (SI), Y2
	VMOVUPS     (DI), Y1
	VFMADD231PS Y2, Y0, Y1
	VCVTPS2PH   $0, Y1, X2
	VCVTPH2PS   X2, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $32, DI
	ADDQ        $16, SI
	DECQ        CX
	JNZ         hmadloop

hmaddone:
	VZEROUPPER
	RET

// func swiglu16AVX512(gp, up *float32, n int)
// g[i] = silu(g[i]) * u[i] for i < n (a multiple of 16), lane for lane
// the arithmetic of vexpf512 and swiglu's scalar loop.
TEXT ·swiglu16AVX512(SB), NOSPLIT, $0-24
	MOVQ gp+0(FP), DI
	MOVQ up+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   swdone
	MOVL $0x4b400000, AX // shift 0x1.8p23
	VPBROADCASTD AX, Z16
	MOVL $0x3fb8aa3b, AX // log2e
	VPBROADCASTD AX, Z17
	MOVL $0x3f317200, AX // ln2hi
	VPBROADCASTD AX, Z18
	MOVL $0x35bfbe8e, AX // ln2lo
	VPBROADCASTD AX, Z19
	MOVL $0x3c072010, AX // p0
	VPBROADCASTD AX, Z20
	MOVL $0x3d2b9f17, AX // p1
	VPBROADCASTD AX, Z21
	MOVL $0x3e2aaf33, AX // p2
	VPBROADCASTD AX, Z22
	MOVL $0x3efffedb, AX // p3
	VPBROADCASTD AX, Z23
	MOVL $0x3f7ffff6, AX // p4
	VPBROADCASTD AX, Z24
	MOVL $0x3f800000, AX // 1
	VPBROADCASTD AX, Z25
	MOVL $0x43400000, AX // 192
	VPBROADCASTD AX, Z26
	MOVL $0x7fffffff, AX // abs mask
	VPBROADCASTD AX, Z27
	MOVL $0x7f800000, AX // +Inf
	VPBROADCASTD AX, Z28
	MOVL $0x80000000, AX // sign bit
	VPBROADCASTD AX, Z29
	VPXORD       Z30, Z30, Z30 // 0

swloop:
	VMOVUPS      (DI), Z0        // x
	VPXORD       Z29, Z0, Z1     // -x
	VMOVAPS      Z16, Z2
	VFMADD231PS  Z17, Z1, Z2     // z = -x·log2e + shift
	VSUBPS       Z16, Z2, Z3     // n = z - shift
	VMOVAPS      Z1, Z4
	VFNMADD231PS Z18, Z3, Z4     // b = -n·ln2hi + -x
	VFNMADD231PS Z19, Z3, Z4     // b = -n·ln2lo + b
	VMULPS       Z4, Z4, Z5      // u = b·b
	VMOVAPS      Z21, Z6
	VFMADD231PS  Z20, Z4, Z6     // p0·b + p1
	VMOVAPS      Z23, Z7
	VFMADD231PS  Z22, Z4, Z7     // p2·b + p3
	VMOVAPS      Z25, Z8
	VFMADD231PS  Z24, Z4, Z8     // p4·b + 1
	VFMADD231PS  Z5, Z6, Z7      // (p0·b + p1)·u + (p2·b + p3)
	VFMADD231PS  Z5, Z7, Z8      // j
	VSCALEFPS    Z3, Z8, Z9      // j·2^n
	VPANDD       Z27, Z3, Z10    // |n|
	VCMPPS       $0x1e, Z26, Z10, K1 // |n| > 192
	VCMPPS       $0x1e, Z30, Z3, K2  // n > 0
	VBLENDMPS    Z28, Z30, K2, Z11   // n > 0 ? +Inf : 0
	VBLENDMPS    Z11, Z9, K1, Z9
	VADDPS       Z25, Z9, Z9     // 1 + e^-x
	VDIVPS       Z9, Z0, Z12     // x / (1 + e^-x)
	VMULPS       (SI), Z12, Z12
	VMOVUPS      Z12, (DI)
	ADDQ         $64, DI
	ADDQ         $64, SI
	DECQ         CX
	JNZ          swloop
	VZEROUPPER

swdone:
	RET

// func dot64F16RowsAVX2(out *float32, k *uint16, q *float32, n, d, stride int)
// out[r] = dot64F16AVX2(k + r*stride, q, d) for r < n (n, d > 0; d a
// multiple of 64; stride in halves). Rows are independent, so their
// reductions overlap.
TEXT ·dot64F16RowsAVX2(SB), NOSPLIT, $0-48
	rowsStart(6)

h64rows:
	rowBegin
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

h64rowloop:
	h64Step
	DECQ        CX
	JNZ         h64rowloop

	REDUCE4X16
	rowEnd(h64rows)

// func dot32F16RowsAVX2(out *float32, k *uint16, q *float32, n, d, stride int)
// out[r] = dot32F16AVX2(k + r*stride, q, d) for r < n (n, d > 0; d a
// multiple of 32; stride in halves): ggml's 8-lane layout, four
// accumulators reduced as GGML_F32x8_REDUCE.
TEXT ·dot32F16RowsAVX2(SB), NOSPLIT, $0-48
	rowsStart(5)

h32rows:
	rowBegin
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

h32rowloop:
	h32Step
	DECQ        CX
	JNZ         h32rowloop

	REDUCE4X8
	rowEnd(h32rows)

// HALFMAD is acc = half(fma(the 8 halves at off(SI), Y8, acc)).
#define HALFMAD(off, acc) \
	VCVTPH2PS   off(SI), Y10 \
	VFMADD231PS Y10, Y8, acc \
	VCVTPS2PH   $0, acc, X10 \
	VCVTPH2PS   X10, acc

// HALFSCALE is acc = half(acc * Y9).
#define HALFSCALE(acc) \
	VMULPS    Y9, acc, acc \
	VCVTPS2PH $0, acc, X10 \
	VCVTPH2PS X10, acc

// func madRowsF16AVX2(acc *float32, v *uint16, e, flag *float32, n, d8, stride int, s float32) float32
// For each row p < n (n > 0), with w the value's weight: if flag[p] is 0,
// acc[i] = half(acc[i]*e[p]), w = 1 and s = fma(s, e[p], 1); else w = e[p]
// and s = fma(s, 1, e[p]) = s + e[p]. Then acc[i] = half(fma(v[p*stride+i],
// w, acc[i])) for i < d8 (a positive multiple of 8; stride in halves).
// Returns s. Columns go in blocks of 64 held in Y0-Y7 over all rows (then
// blocks of 8 in Y0), so acc stays in registers; the sum is taken on the
// first walk over the rows (R14 set), where it overlaps the vector work.
TEXT ·madRowsF16AVX2(SB), NOSPLIT, $0-68
	MOVQ         acc+0(FP), DI
	MOVQ         v+8(FP), R8
	MOVQ         n+32(FP), BX
	MOVQ         d8+40(FP), R10
	MOVQ         stride+48(FP), R11
	SHLQ         $1, R11
	VMOVSS       s+56(FP), X12
	MOVL         $0x3f800000, AX // 1.0
	VMOVD        AX, X15
	VBROADCASTSS X15, Y15
	VXORPS       X14, X14, X14
	MOVQ         $1, R14

mad64cols:
	CMPQ    R10, $64
	JLT     mad8cols
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	MOVQ    R8, SI
	MOVQ    e+16(FP), R12
	MOVQ    flag+24(FP), R13
	MOVQ    BX, CX

mad64rows:
	VMOVSS       (R12), X9
	VMOVSS       (R13), X13
	VUCOMISS     X14, X13
	JEQ          mad64scale
	VBROADCASTSS X9, Y8
	TESTQ        R14, R14
	JZ           mad64mad
	VADDSS       X9, X12, X12

mad64mad:
	HALFMAD(0, Y0)
	HALFMAD(16, Y1)
	HALFMAD(32, Y2)
	HALFMAD(48, Y3)
	HALFMAD(64, Y4)
	HALFMAD(80, Y5)
	HALFMAD(96, Y6)
	HALFMAD(112, Y7)
	ADDQ         $4, R12
	ADDQ         $4, R13
	ADDQ         R11, SI
	DECQ         CX
	JNZ          mad64rows

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	ADDQ    $256, DI
	ADDQ    $128, R8
	SUBQ    $64, R10
	XORQ    R14, R14
	JMP     mad64cols

mad64scale:
	VBROADCASTSS X9, Y9
	HALFSCALE(Y0)
	HALFSCALE(Y1)
	HALFSCALE(Y2)
	HALFSCALE(Y3)
	HALFSCALE(Y4)
	HALFSCALE(Y5)
	HALFSCALE(Y6)
	HALFSCALE(Y7)
	VMOVAPS      Y15, Y8
	TESTQ        R14, R14
	JZ           mad64mad
	VFMADD213SS  X15, X9, X12
	JMP          mad64mad

mad8cols:
	TESTQ   R10, R10
	JZ      maddone
	VMOVUPS (DI), Y0
	MOVQ    R8, SI
	MOVQ    e+16(FP), R12
	MOVQ    flag+24(FP), R13
	MOVQ    BX, CX

mad8rows:
	VMOVSS       (R12), X9
	VMOVSS       (R13), X13
	VUCOMISS     X14, X13
	JEQ          mad8scale
	VBROADCASTSS X9, Y8
	TESTQ        R14, R14
	JZ           mad8mad
	VADDSS       X9, X12, X12

mad8mad:
	HALFMAD(0, Y0)
	ADDQ         $4, R12
	ADDQ         $4, R13
	ADDQ         R11, SI
	DECQ         CX
	JNZ          mad8rows

	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $16, R8
	SUBQ    $8, R10
	XORQ    R14, R14
	JMP     mad8cols

mad8scale:
	VBROADCASTSS X9, Y9
	HALFSCALE(Y0)
	VMOVAPS      Y15, Y8
	TESTQ        R14, R14
	JZ           mad8mad
	VFMADD213SS  X15, X9, X12
	JMP          mad8mad

maddone:
	VZEROUPPER
	MOVSS X12, ret+64(FP)
	RET

