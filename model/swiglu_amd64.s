//go:build amd64 && !noasm

#include "textflag.h"

// The constants of ggml_v_expf (AVX2) that swiglu8AVX2 broadcasts from
// memory: the polynomial's coefficients p0-p4, then 192 and the two
// exponent patterns of the scaling for |n| > 126.
DATA swc<>+0(SB)/4, $0x3c072010  // p0 0x1.0e4020p-7
DATA swc<>+4(SB)/4, $0x3d2b9f17  // p1 0x1.573e2ep-5
DATA swc<>+8(SB)/4, $0x3e2aaf33  // p2 0x1.555e66p-3
DATA swc<>+12(SB)/4, $0x3efffedb // p3 0x1.fffdb6p-2
DATA swc<>+16(SB)/4, $0x3f7ffff6 // p4 0x1.ffffecp-1
DATA swc<>+20(SB)/4, $0x43400000 // 192
DATA swc<>+24(SB)/4, $0x82000000
DATA swc<>+28(SB)/4, $0x7f000000
GLOBL swc<>(SB), RODATA|NOPTR, $32

// bcast8 sets the eight lanes of Y (whose low half is X) to the 32 bits
// IMM, through AX.
#define bcast8(IMM, X, Y) \
	MOVL         IMM, AX \
	VMOVD        AX, X \
	VPBROADCASTD X, Y

// func swiglu8AVX2(gp, up *float32, n int)
// g[i] = silu(g[i]) * u[i] for i < n (a multiple of 8), lane for lane the
// arithmetic of vexpf (ggml_v_expf with AVX2 and FMA: the scaling for
// |n| > 126 only where a lane of the run needs it, as ggml branches) and
// swiglu's scalar loop (ggml_v_silu, then the product).
//
// Registers: Y15 shift 0x1.8p23, Y14 log2(e), Y13 ln2 high, Y12 ln2 low,
// Y11 1 (as a float and as its bits), Y10 the sign bit, Y8 126; per run
// Y0 x, Y3 n, Y4 b, Y5 e (z's bits shifted to the exponent), Y6 k, Y7 u
// (then |n|), Y1 and Y2 the polynomial (Y1 j at the end), Y9 a broadcast
// constant.
TEXT ·swiglu8AVX2(SB), NOSPLIT, $0-24
	MOVQ gp+0(FP), DI
	MOVQ up+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   done
	bcast8($0x4b400000, X15, Y15) // shift 0x1.8p23
	bcast8($0x3fb8aa3b, X14, Y14) // log2e
	bcast8($0x3f317200, X13, Y13) // ln2hi
	bcast8($0x35bfbe8e, X12, Y12) // ln2lo
	bcast8($0x3f800000, X11, Y11) // 1
	bcast8($0x80000000, X10, Y10) // sign bit
	bcast8($0x42fc0000, X8, Y8)   // 126

loop:
	VMOVUPS      (DI), Y0       // x
	VXORPS       Y10, Y0, Y1    // -x, the argument of expf
	VMOVAPS      Y15, Y2
	VFMADD231PS  Y14, Y1, Y2    // z = -x·log2e + shift
	VSUBPS       Y15, Y2, Y3    // n = z - shift
	VMOVAPS      Y1, Y4
	VFNMADD231PS Y13, Y3, Y4    // b = -n·ln2hi + -x
	VFNMADD231PS Y12, Y3, Y4    // b = -n·ln2lo + b
	VPSLLD       $23, Y2, Y5    // e = bits(z) << 23
	VPADDD       Y11, Y5, Y6    // k = e + bits(1)
	VMULPS       Y4, Y4, Y7     // u = b·b
	VBROADCASTSS swc<>+0(SB), Y9
	VBROADCASTSS swc<>+4(SB), Y1
	VFMADD231PS  Y9, Y4, Y1     // p0·b + p1
	VBROADCASTSS swc<>+8(SB), Y9
	VBROADCASTSS swc<>+12(SB), Y2
	VFMADD231PS  Y9, Y4, Y2     // p2·b + p3
	VFMADD231PS  Y7, Y1, Y2     // (p0·b + p1)·u + (p2·b + p3)
	VBROADCASTSS swc<>+16(SB), Y1
	VMULPS       Y4, Y1, Y1     // p4·b
	VFMADD231PS  Y7, Y2, Y1     // j
	VANDNPS      Y3, Y10, Y7    // |n|
	VCMPPS       $0x1e, Y8, Y7, Y4 // c: |n| > 126
	VMOVMSKPS    Y4, AX
	TESTL        AX, AX
	JNZ          scaled
	VFMADD231PS  Y1, Y6, Y6     // e^-x = k·j + k

silu:
	VADDPS       Y11, Y6, Y6    // 1 + e^-x
	VDIVPS       Y6, Y0, Y0     // x / (1 + e^-x)
	VMULPS       (SI), Y0, Y0
	VMOVUPS      Y0, (DI)
	ADDQ         $32, DI
	ADDQ         $32, SI
	DECQ         CX
	JNZ          loop
	VZEROUPPER

done:
	RET

scaled:
	// Some lane has |n| > 126: there e^-x = (s2·j + s2)·s1, or s1·s1
	// where |n| > 192, with g = 0x82000000 where n ≤ 0 (else 0),
	// s1 = g + 0x7f000000 and s2 = e - g; the other lanes as above.
	VBROADCASTSS swc<>+20(SB), Y9
	VCMPPS       $0x1e, Y9, Y7, Y7 // d: |n| > 192
	VXORPS       Y2, Y2, Y2
	VCMPPS       $0x12, Y2, Y3, Y2 // n ≤ 0
	VBROADCASTSS swc<>+24(SB), Y9
	VANDPS       Y9, Y2, Y2     // g
	VPSUBD       Y2, Y5, Y5     // s2 = e - g
	VBROADCASTSS swc<>+28(SB), Y9
	VPADDD       Y9, Y2, Y2     // s1 = g + 0x7f000000
	VMOVAPS      Y5, Y3
	VFMADD231PS  Y1, Y5, Y3     // s2·j + s2
	VMULPS       Y2, Y3, Y3     // (s2·j + s2)·s1
	VFMADD231PS  Y1, Y6, Y6     // k·j + k
	VBLENDVPS    Y4, Y3, Y6, Y6 // c lanes: the scaled value
	VMULPS       Y2, Y2, Y2     // s1·s1
	VBLENDVPS    Y7, Y2, Y6, Y6 // d lanes: s1·s1
	JMP          silu
