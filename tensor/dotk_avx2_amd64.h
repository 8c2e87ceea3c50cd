// Macros shared by the AVX2 K-quant kernels of dot_k_amd64.s (Q4_K, Q6_K)
// and dot_k2_amd64.s (Q2_K, Q3_K, Q5_K, IQ4_XS). Both files keep the same
// register conventions: SI points at the weight block, DI at the Q8_K
// activation block (x.d at 0, the quants at 4, the bsums at 260; 292 bytes
// a block), CX counts blocks; the four-token kernels keep the other three
// tokens' blocks in R11, R12 and R13 and their int32 lanes in Y8-Y11. The
// macros here load no arguments from the frame: their name+off(FP)
// accesses stay in the TEXT bodies, where go vet checks them.

// KHSUM8 adds the eight lanes of acc as ggml's hsum_float_8 does (upper
// half plus lower half, then lanes 0+2 and 1+3, then those two), leaving
// the sum in lane 0 of t; u is clobbered. accx is acc's X name.
#define KHSUM8(acc, accx, t, u) \
	VEXTRACTF128 $1, acc, t; \
	VADDPS accx, t, t; \
	VMOVHLPS t, t, u; \
	VADDPS u, t, t; \
	VMOVSHDUP t, u; \
	VADDSS u, t, t

// KSCALEMIN unpacks the 6-bit scales and mins of the Q4_K/Q5_K block at B
// (12 bytes at 4(B)) into dst: bytes 0-7 the scales, 8-15 the mins, as
// q4KScaleMin; clobbers AX, BX, DX, R10, t0 and t1.
#define KSCALEMIN(B, t0, t1, dst) \
	MOVL 4(B), AX; \
	MOVL 8(B), BX; \
	MOVL 12(B), DX; \
	MOVL AX, t0; \
	ANDL $0x3f3f3f3f, t0; \
	MOVL DX, t1; \
	ANDL $0x0f0f0f0f, t1; \
	MOVL AX, R10; \
	SHRL $6, R10; \
	ANDL $0x03030303, R10; \
	SHLL $4, R10; \
	ORL  R10, t1; \
	SHLQ $32, t1; \
	ORQ  t1, t0; \
	MOVL BX, R10; \
	ANDL $0x3f3f3f3f, R10; \
	SHRL $4, DX; \
	ANDL $0x0f0f0f0f, DX; \
	SHRL $6, BX; \
	ANDL $0x03030303, BX; \
	SHLL $4, BX; \
	ORL  BX, DX; \
	SHLQ $32, DX; \
	ORQ  DX, R10; \
	VMOVQ t0, dst; \
	VPINSRQ $1, R10, dst, dst

// KSCALEWORDS stores the eight scale bytes of src as doubled words (one
// dword per sub-block, for VPBROADCASTD) at 0(SP)..31(SP); clobbers t, lo
// and hi (t may be src).
#define KSCALEWORDS(src, t, lo, hi) \
	VPMOVZXBW src, t; \
	VPUNPCKLWD t, t, lo; \
	VPUNPCKHWD t, t, hi; \
	VMOVDQU lo, 0(SP); \
	VMOVDQU hi, 16(SP)

// KNIBBLES splits the 32 bytes at qo(B) into their low nibbles (Y5) and
// high nibbles (Y6), with the 0x0f mask in Y15.
#define KNIBBLES(B, qo) \
	VMOVDQU qo(B), Y5; \
	VPSRLW $4, Y5, Y6; \
	VPAND Y15, Y5, Y5; \
	VPAND Y15, Y6, Y6

// KPAIRSTEP adds to Y4 the lanes of two 32-element sub-blocks: the values
// in Y5 against the activations at xo(DI) with the scale dword at so(SP),
// those in Y6 against xo2(DI) with so2(SP); clobbers Y5-Y8.
#define KPAIRSTEP(xo, xo2, so, so2) \
	VPMADDUBSW xo(DI), Y5, Y5; \
	VPMADDUBSW xo2(DI), Y6, Y6; \
	VPBROADCASTD so(SP), Y7; \
	VPBROADCASTD so2(SP), Y8; \
	VPMADDWD Y7, Y5, Y5; \
	VPMADDWD Y8, Y6, Y6; \
	VPADDD Y5, Y4, Y4; \
	VPADDD Y6, Y4, Y4

// KREDUCE4 sums each of a, b, c, d (eight int32 lanes) into lane 0-3 of
// dstx, whose Y name is dsty (a and c are clobbered, and X3).
#define KREDUCE4(a, b, c, d, dstx, dsty) \
	VPHADDD b, a, a; \
	VPHADDD d, c, c; \
	VPHADDD c, a, dsty; \
	VEXTRACTI128 $1, dsty, X3; \
	VPADDD X3, dstx, dstx

// KDDMINXD sets X5 = [f16(d)·x.d, f16(dmin)·x.d] from the F16 pair at
// off(SI) and the activation scale at 0(DI); clobbers AX and X6.
#define KDDMINXD(off) \
	MOVL off(SI), AX; \
	VMOVD AX, X5; \
	VCVTPH2PS X5, X5; \
	VBROADCASTSS (DI), X6; \
	VMULPS X6, X5, X5

// KSUMMIN reduces the eight int32 lanes of isum (X name isumx) and of
// the imin lanes in Y2 to isumx = float32([isum, imin, isum, imin]);
// clobbers Y2, X5 and X6.
#define KSUMMIN(isum, isumx) \
	VEXTRACTI128 $1, isum, X5; \
	VPADDD X5, isumx, isumx; \
	VEXTRACTI128 $1, Y2, X6; \
	VPADDD X6, X2, X2; \
	VPHADDD X2, isumx, isumx; \
	VPHADDD isumx, isumx, isumx; \
	VCVTDQ2PS isumx, isumx

// KOUTDIFF stores lane 0 minus lane 1 of acc (acc − accm) at R12 and
// advances R12; clobbers X1 and acc.
#define KOUTDIFF(acc) \
	VMOVSHDUP acc, X1; \
	VSUBSS X1, acc, acc; \
	VMOVSS acc, (R12); \
	ADDQ $4, R12

// KDXD sets y to f16(w.d)·x.d in every lane, w.d the F16 at off(SI), x.d
// the float at 0(DI), x being y's X name; clobbers AX.
#define KDXD(off, x, y) \
	MOVWLZX off(SI), AX; \
	VMOVD AX, x; \
	VCVTPH2PS x, x; \
	VMULSS (DI), x, x; \
	VBROADCASTSS x, y

// KOUT8 stores the KHSUM8 sum of acc (X name accx) at R12 and advances
// R12 to the next output; clobbers X3, X4.
#define KOUT8(acc, accx) \
	KHSUM8(acc, accx, X3, X4); \
	VMOVSS X3, (R12); \
	ADDQ $4, R12

// K1NEXT moves a single-row kernel to the next block (bs bytes of weights)
// and decrements CX; the JNZ that follows loops while blocks are left.
#define K1NEXT(bs) \
	ADDQ $bs, SI; \
	ADDQ $292, DI; \
	DECQ CX

// KX4TOKENS loads the four tokens' activation pointers from the array at P
// into DI, R11, R12 and R13.
#define KX4TOKENS(P) \
	MOVQ 0(P), DI; \
	MOVQ 8(P), R11; \
	MOVQ 16(P), R12; \
	MOVQ 24(P), R13

// KX4CLEAR zeroes the four tokens' int32 lanes Y8-Y11.
#define KX4CLEAR \
	VPXOR Y8, Y8, Y8; \
	VPXOR Y9, Y9, Y9; \
	VPXOR Y10, Y10, Y10; \
	VPXOR Y11, Y11, Y11

// KXORPS4 zeroes the four float accumulators a, b, c, d.
#define KXORPS4(a, b, c, d) \
	VXORPS a, a, a; \
	VXORPS b, b, b; \
	VXORPS c, c, c; \
	VXORPS d, d, d

// KX4BSUMS multiplies the words of src pairwise with each token's bsums
// (260 bytes into its block), leaving the int32 pair sums in d0-d3.
#define KX4BSUMS(src, d0, d1, d2, d3) \
	VPMADDWD 260(DI), src, d0; \
	VPMADDWD 260(R11), src, d1; \
	VPMADDWD 260(R12), src, d2; \
	VPMADDWD 260(R13), src, d3

// KX4XD gathers the four tokens' x.d into the lanes of dst.
#define KX4XD(dst) \
	VMOVSS (DI), dst; \
	VINSERTPS $0x10, (R11), dst, dst; \
	VINSERTPS $0x20, (R12), dst, dst; \
	VINSERTPS $0x30, (R13), dst, dst

// KX4DDMIN sets X7 = f16(w.d) and X6 = f16(w.dmin) in every lane, from
// the F16 pair at off(SI); clobbers AX.
#define KX4DDMIN(off) \
	MOVL off(SI), AX; \
	VMOVD AX, X6; \
	VCVTPH2PS X6, X6; \
	VBROADCASTSS X6, X7; \
	VMOVSHDUP X6, X6; \
	VBROADCASTSS X6, X6

// KX4FMA2 updates the four tokens' lanes of acc and accm with the per-token
// x.d in X5 and KX4DDMIN's X7, X6: acc = fma(isum, w.d·x.d, acc),
// accm = fma(imin, w.dmin·x.d, accm); clobbers X6 and X7.
#define KX4FMA2(isum, imin, acc, accm) \
	VMULPS X5, X7, X7; \
	VMULPS X5, X6, X6; \
	VFMADD231PS X7, isum, acc; \
	VFMADD231PS X6, imin, accm

// KX4ACC folds one token's int32 lanes ilanes (activations at R) into its
// float accumulator facc: facc = fma(x.d·wd, float32(ilanes), facc), with
// wd broadcast in Y5; clobbers Y6 and ilanes.
#define KX4ACC(R, ilanes, facc) \
	VBROADCASTSS (R), Y6; \
	VMULPS Y5, Y6, Y6; \
	VCVTDQ2PS ilanes, ilanes; \
	VFMADD231PS Y6, ilanes, facc

// KX4FOLD broadcasts w.d (the F16 at off(SI)) into Y5 and folds the four
// tokens' lanes Y8-Y11 into their float accumulators f0-f3 with KX4ACC;
// clobbers AX, Y6 and Y8-Y11.
#define KX4FOLD(off, f0, f1, f2, f3) \
	MOVWLZX off(SI), AX; \
	VMOVD AX, X5; \
	VCVTPH2PS X5, X5; \
	VBROADCASTSS X5, Y5; \
	KX4ACC(DI, Y8, f0); \
	KX4ACC(R11, Y9, f1); \
	KX4ACC(R12, Y10, f2); \
	KX4ACC(R13, Y11, f3)

// KX4ADVANCE moves SI to the next weight block (bs bytes) and DI, R11,
// R12, R13 to the tokens' next activation blocks.
#define KX4ADVANCE(bs) \
	ADDQ $bs, SI; \
	ADDQ $292, DI; \
	ADDQ $292, R11; \
	ADDQ $292, R12; \
	ADDQ $292, R13

// KX4NEXT is KX4ADVANCE and a decrement of CX, for the JNZ that loops
// while blocks are left.
#define KX4NEXT(bs) \
	KX4ADVANCE(bs); \
	DECQ CX
