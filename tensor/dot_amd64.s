//go:build amd64 && !noasm

#include "textflag.h"

// AVX2+FMA dot products. Each kernel keeps the summation structure of the
// Go reference it replaces (see floats.go and q8.go), so both give the same
// bits. Lengths are in elements; the float kernels take a multiple of 32
// (the Go wrappers add the tail), the block kernels a block count.

// func dotF32AVX2(w, x *byte, n int) float32
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ $5, CX
	JZ   f32reduce

f32loop:
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	DECQ        CX
	JNZ         f32loop

f32reduce:
	// GGML_F32x8_REDUCE: (s0+s2)+(s1+s3), halves added, two horizontal adds.
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

// func dotF16AVX2(w, x *byte, n int) float32
TEXT ·dotF16AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ $5, CX
	JZ   f16reduce

f16loop:
	VCVTPH2PS   (SI), Y4
	VCVTPH2PS   16(SI), Y5
	VCVTPH2PS   32(SI), Y6
	VCVTPH2PS   48(SI), Y7
	VCVTPH2PS   (DI), Y8
	VCVTPH2PS   16(DI), Y9
	VCVTPH2PS   32(DI), Y10
	VCVTPH2PS   48(DI), Y11
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y1
	VFMADD231PS Y10, Y6, Y2
	VFMADD231PS Y11, Y7, Y3
	ADDQ        $64, SI
	ADDQ        $64, DI
	DECQ        CX
	JNZ         f16loop

f16reduce:
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

// func dotBF16AVX2(w, x *byte, n int) float32
TEXT ·dotBF16AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ $5, CX
	JZ   bf16reduce

bf16loop:
	VPMOVZXWD (SI), Y4
	VPMOVZXWD 16(SI), Y5
	VPMOVZXWD 32(SI), Y6
	VPMOVZXWD 48(SI), Y7
	VPMOVZXWD (DI), Y8
	VPMOVZXWD 16(DI), Y9
	VPMOVZXWD 32(DI), Y10
	VPMOVZXWD 48(DI), Y11
	VPSLLD    $16, Y4, Y4
	VPSLLD    $16, Y5, Y5
	VPSLLD    $16, Y6, Y6
	VPSLLD    $16, Y7, Y7
	VPSLLD    $16, Y8, Y8
	VPSLLD    $16, Y9, Y9
	VPSLLD    $16, Y10, Y10
	VPSLLD    $16, Y11, Y11
	VMULPS    Y8, Y4, Y4
	VMULPS    Y9, Y5, Y5
	VMULPS    Y10, Y6, Y6
	VMULPS    Y11, Y7, Y7
	VADDPS    Y4, Y0, Y0
	VADDPS    Y5, Y1, Y1
	VADDPS    Y6, Y2, Y2
	VADDPS    Y7, Y3, Y3
	ADDQ      $64, SI
	ADDQ      $64, DI
	DECQ      CX
	JNZ       bf16loop

bf16reduce:
	// ggml_vec_dot_bf16 (AVX2): (c1+c3)+(c2+c4), halves, then movehl, movehdup.
	VADDPS       Y2, Y0, Y0
	VADDPS       Y3, Y1, Y1
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// blockScale leaves d_w*d_x (the two blocks' F16 scales at (SI) and (DI),
// widened and multiplied in float32) broadcast in Y1. Clobbers AX, BX, X2.
#define blockScale \
	MOVWLZX      (SI), AX \
	MOVWLZX      (DI), BX \
	SHLL         $16, BX \
	ORL          BX, AX \
	VMOVD        AX, X1 \
	VCVTPH2PS    X1, X1 \
	VMOVSHDUP    X1, X2 \
	VMULSS       X2, X1, X1 \
	VBROADCASTSS X1, Y1

// dotBlock multiplies the signed bytes in Y2 (weights) and Y3 (activations),
// sums groups of four into 8 int32 lanes, converts them to float32 and
// accumulates Y1 × lanes into Y0 (ggml's mul_sum_i8_pairs_float + FMA).
// Y15 holds int16 ones. Clobbers Y4, Y5.
#define dotBlock \
	VPSIGNB     Y2, Y2, Y4 \
	VPSIGNB     Y2, Y3, Y5 \
	VPMADDUBSW  Y5, Y4, Y4 \
	VPMADDWD    Y15, Y4, Y4 \
	VCVTDQ2PS   Y4, Y4 \
	VFMADD231PS Y4, Y1, Y0

// hsum8 reduces Y0 as hsum_float_8 into X0.
#define hsum8 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X0, X1, X0 \
	VMOVHLPS     X0, X0, X1 \
	VADDPS       X1, X0, X0 \
	VMOVSHDUP    X0, X1 \
	VADDSS       X1, X0, X0 \
	VZEROUPPER

// func dotQ8_0AVX2(w, x *byte, nb int) float32
TEXT ·dotQ8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ      w+0(FP), SI
	MOVQ      x+8(FP), DI
	MOVQ      nb+16(FP), CX
	VXORPS    Y0, Y0, Y0
	VPCMPEQW  Y15, Y15, Y15
	VPSRLW    $15, Y15, Y15
	TESTQ     CX, CX
	JZ        q8done

q8loop:
	blockScale
	VMOVDQU 2(SI), Y2
	VMOVDQU 2(DI), Y3
	dotBlock
	ADDQ    $34, SI
	ADDQ    $34, DI
	DECQ    CX
	JNZ     q8loop

q8done:
	hsum8
	MOVSS X0, ret+24(FP)
	RET

// func f16ToF32sAVX2(dst *float32, src *uint16, n int)
TEXT ·f16ToF32sAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   cvtdone

cvtloop:
	VCVTPH2PS (SI), Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       cvtloop

cvtdone:
	VZEROUPPER
	RET

// The ×4 kernels dot one weight row with four activation rows (x, x+stride,
// x+2·stride, x+3·stride), decoding each weight block once. Every row keeps
// its own accumulator and the single-row kernel's order of operations, so
// out[r] is bit-identical to the single dot of row r.

// rowBlock accumulates one activation block at P against the decoded weight
// block (Y4 = |w|, Y2 = w, X9 = w's scale as float32) into ACC.
#define rowBlock(P, ACC) \
	MOVWLZX      (P), BX \
	VMOVD        BX, X1 \
	VCVTPH2PS    X1, X1 \
	VMULSS       X1, X9, X1 \
	VBROADCASTSS X1, Y1 \
	VMOVDQU      2(P), Y3 \
	VPSIGNB      Y2, Y3, Y5 \
	VPMADDUBSW   Y5, Y4, Y5 \
	VPMADDWD     Y15, Y5, Y5 \
	VCVTDQ2PS    Y5, Y5 \
	VFMADD231PS  Y5, Y1, ACC

// hsumStore reduces accumulator Y (low half X) as hsum_float_8 into DST.
#define hsumStore(Y, X, DST) \
	VEXTRACTF128 $1, Y, X1 \
	VADDPS       X, X1, X \
	VMOVHLPS     X, X, X1 \
	VADDPS       X1, X, X \
	VMOVSHDUP    X, X1 \
	VADDSS       X1, X, X \
	MOVSS        X, DST

// x4Prologue expects w in SI, x in DI, stride in DX.
#define x4Prologue \
	LEAQ     (DI)(DX*1), R8 \
	LEAQ     (R8)(DX*1), R9 \
	LEAQ     (R9)(DX*1), R10 \
	VXORPS   Y0, Y0, Y0 \
	VXORPS   Y6, Y6, Y6 \
	VXORPS   Y7, Y7, Y7 \
	VXORPS   Y8, Y8, Y8 \
	VPCMPEQW Y15, Y15, Y15 \
	VPSRLW   $15, Y15, Y15

#define x4Epilogue \
	hsumStore(Y0, X0, (R11)) \
	hsumStore(Y6, X6, 4(R11)) \
	hsumStore(Y7, X7, 8(R11)) \
	hsumStore(Y8, X8, 12(R11)) \
	VZEROUPPER

// func dotQ8_0x4AVX2(w, x *byte, stride, nb int, out *[4]float32)
TEXT ·dotQ8_0x4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ stride+16(FP), DX
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), R11
	x4Prologue
	TESTQ CX, CX
	JZ    q8x4done

q8x4loop:
	MOVWLZX   (SI), AX
	VMOVD     AX, X9
	VCVTPH2PS X9, X9
	VMOVDQU   2(SI), Y2
	VPSIGNB   Y2, Y2, Y4
	rowBlock(DI, Y0)
	rowBlock(R8, Y6)
	rowBlock(R9, Y7)
	rowBlock(R10, Y8)
	ADDQ      $34, SI
	ADDQ      $34, DI
	ADDQ      $34, R8
	ADDQ      $34, R9
	ADDQ      $34, R10
	DECQ      CX
	JNZ       q8x4loop

q8x4done:
	x4Epilogue
	RET

// permL puts lanes ordered [r0 r2 r4 r6 r1 r3 r5 r7] back in row order.
DATA permL<>+0(SB)/4, $0
DATA permL<>+4(SB)/4, $4
DATA permL<>+8(SB)/4, $1
DATA permL<>+12(SB)/4, $5
DATA permL<>+16(SB)/4, $2
DATA permL<>+20(SB)/4, $6
DATA permL<>+24(SB)/4, $3
DATA permL<>+28(SB)/4, $7
GLOBL permL<>(SB), RODATA|NOPTR, $32

// q4Pair computes the exact integer dots of block rows P and Q (their qs
// after the 2-byte scale) with the activation block (Y1 = y[0:16] twice,
// Y2 = y[16:32] twice, Y3 = 8·(y pair sums) as int16), P and Q the
// addresses of their qs, leaving 4 int32
// partial sums per row in DST (row P low half, row Q high half). Nibbles
// are used unsigned and 8·Σy subtracted, so the sums are Σ (q-8)·y exactly.
// Y15 = 0x0f bytes, Y14 = int16 ones.
#define q4Pair(P, Q, XD, YD, YT) \
	VMOVDQU     P, XD \
	VINSERTI128 $1, Q, YD, YD \
	VPSRLW      $4, YD, YT \
	VPAND       Y15, YD, YD \
	VPAND       Y15, YT, YT \
	VPMADDUBSW  Y1, YD, YD \
	VPMADDUBSW  Y2, YT, YT \
	VPADDW      YT, YD, YD \
	VPSUBW      Y3, YD, YD \
	VPMADDWD    Y14, YD, YD

// func dotQ4_0x8AVX2(w *byte, wstride int, x *byte, nb int, out *[8]float32)
//
// Eight Q4_0 weight rows (w + r·wstride) against one Q8_0 activation row;
// each row has its own lane of the accumulator, updated once per block with
// acc = fma(float32(isum), d_w·d_x, acc), the order of dotQ4_0Generic.
TEXT ·dotQ4_0x8AVX2(SB), NOSPLIT, $0-40
	MOVQ         w+0(FP), SI
	MOVQ         wstride+8(FP), DX
	MOVQ         x+16(FP), DI
	MOVQ         nb+24(FP), CX
	MOVQ         ·f16Table(SB), R10
	LEAQ         (DX)(DX*2), BX
	LEAQ         (SI)(DX*4), R8
	VXORPS       Y0, Y0, Y0
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	MOVL         $0x08080808, AX
	VMOVD        AX, X13
	VPBROADCASTD X13, Y13
	VPCMPEQW     Y14, Y14, Y14
	VPSRLW       $15, Y14, Y14
	TESTQ        CX, CX
	JZ           q4x8done

q4x8loop:
	VBROADCASTI128 2(DI), Y1
	VBROADCASTI128 18(DI), Y2
	VPMADDUBSW     Y1, Y13, Y3
	VPMADDUBSW     Y2, Y13, Y4
	VPADDW         Y4, Y3, Y3
	q4Pair(2(SI), 2(SI)(DX*1), X6, Y6, Y7)
	q4Pair(2(SI)(DX*2), 2(SI)(BX*1), X8, Y8, Y7)
	q4Pair(2(R8), 2(R8)(DX*1), X9, Y9, Y4)
	q4Pair(2(R8)(DX*2), 2(R8)(BX*1), X10, Y10, Y4)
	VPHADDD        Y8, Y6, Y6
	VPHADDD        Y10, Y9, Y9
	VPHADDD        Y9, Y6, Y6
	VCVTDQ2PS      Y6, Y6
	MOVWLZX        (SI), AX
	VMOVD          AX, X11
	VPINSRW        $1, (SI)(DX*2), X11, X11
	VPINSRW        $2, (R8), X11, X11
	VPINSRW        $3, (R8)(DX*2), X11, X11
	VPINSRW        $4, (SI)(DX*1), X11, X11
	VPINSRW        $5, (SI)(BX*1), X11, X11
	VPINSRW        $6, (R8)(DX*1), X11, X11
	VPINSRW        $7, (R8)(BX*1), X11, X11
	VCVTPH2PS      X11, Y11
	MOVWLZX        (DI), AX
	VBROADCASTSS   (R10)(AX*4), Y5
	VMULPS         Y5, Y11, Y11
	VFMADD231PS    Y11, Y6, Y0
	ADDQ           $18, SI
	ADDQ           $18, R8
	ADDQ           $34, DI
	DECQ           CX
	JNZ            q4x8loop

q4x8done:
	MOVQ    out+32(FP), R11
	VMOVDQU permL<>(SB), Y1
	VPERMPS Y0, Y1, Y0
	VMOVUPS Y0, (R11)
	VZEROUPPER
	RET
