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

// func dotQ4_0AVX2(w, x *byte, nb int) float32
TEXT ·dotQ4_0AVX2(SB), NOSPLIT, $0-28
	MOVQ         w+0(FP), SI
	MOVQ         x+8(FP), DI
	MOVQ         nb+16(FP), CX
	VXORPS       Y0, Y0, Y0
	VPCMPEQW     Y15, Y15, Y15
	VPSRLW       $15, Y15, Y15
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $0x08080808, AX
	VMOVD        AX, X13
	VPBROADCASTD X13, Y13
	TESTQ        CX, CX
	JZ           q4done

q4loop:
	blockScale
	// bytes_from_nibbles_32: low nibbles of the 16 bytes in the low lane,
	// high nibbles in the high lane, then offset by -8.
	VMOVDQU     2(SI), X2
	VPSRLW      $4, X2, X3
	VINSERTI128 $1, X3, Y2, Y2
	VPAND       Y14, Y2, Y2
	VPSUBB      Y13, Y2, Y2
	VMOVDQU     2(DI), Y3
	dotBlock
	ADDQ        $18, SI
	ADDQ        $34, DI
	DECQ        CX
	JNZ         q4loop

q4done:
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
