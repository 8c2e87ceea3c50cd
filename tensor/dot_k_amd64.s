//go:build amd64 && !noasm

#include "textflag.h"
#include "dotk_avx2_amd64.h"

// AVX2 kernels for K-quants: Q4_K and Q6_K rows against one or four Q8_K
// activation rows, and the float32 → Q8_K activation quantizer (see
// dot_k_amd64.go and kquants.go for the reference loops they reproduce).
// Each block's quants are summed in int32 vector lanes (VPMADDUBSW never
// saturates here: |u|·|q8| pairs stay below 2^15). Q4_K reduces the lanes to
// one int32 per block and accumulates with fused multiply-adds; Q6_K keeps
// ggml's eight lanes, fuses into eight float lanes and adds them up at the
// end as hsum_float_8 does: the float work of the reference loops, op for op.

DATA kMask0F<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kMask0F<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kMask0F<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kMask0F<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL kMask0F<>(SB), RODATA|NOPTR, $32

DATA kMask03<>+0(SB)/8, $0x0303030303030303
DATA kMask03<>+8(SB)/8, $0x0303030303030303
DATA kMask03<>+16(SB)/8, $0x0303030303030303
DATA kMask03<>+24(SB)/8, $0x0303030303030303
GLOBL kMask03<>(SB), RODATA|NOPTR, $32

DATA kMask0C<>+0(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA kMask0C<>+8(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA kMask0C<>+16(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA kMask0C<>+24(SB)/8, $0x0c0c0c0c0c0c0c0c
GLOBL kMask0C<>(SB), RODATA|NOPTR, $32

DATA kMask30<>+0(SB)/8, $0x3030303030303030
DATA kMask30<>+8(SB)/8, $0x3030303030303030
DATA kMask30<>+16(SB)/8, $0x3030303030303030
DATA kMask30<>+24(SB)/8, $0x3030303030303030
GLOBL kMask30<>(SB), RODATA|NOPTR, $32

DATA kMaskC0<>+0(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA kMaskC0<>+8(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA kMaskC0<>+16(SB)/8, $0xc0c0c0c0c0c0c0c0
DATA kMaskC0<>+24(SB)/8, $0xc0c0c0c0c0c0c0c0
GLOBL kMaskC0<>(SB), RODATA|NOPTR, $32

DATA kQ4MinShuf<>+0(SB)/8, $0x0b0b0a0a09090808
DATA kQ4MinShuf<>+8(SB)/8, $0x0f0f0e0e0d0d0c0c
GLOBL kQ4MinShuf<>(SB), RODATA|NOPTR, $16

DATA kQ6ScaleShuf<>+0(SB)/8, $0x0000000000000000
DATA kQ6ScaleShuf<>+8(SB)/8, $0x0101010101010101
DATA kQ6ScaleShuf<>+16(SB)/8, $0x0202020202020202
DATA kQ6ScaleShuf<>+24(SB)/8, $0x0303030303030303
DATA kQ6ScaleShuf<>+32(SB)/8, $0x0404040404040404
DATA kQ6ScaleShuf<>+40(SB)/8, $0x0505050505050505
DATA kQ6ScaleShuf<>+48(SB)/8, $0x0606060606060606
DATA kQ6ScaleShuf<>+56(SB)/8, $0x0707070707070707
DATA kQ6ScaleShuf<>+64(SB)/8, $0x0808080808080808
DATA kQ6ScaleShuf<>+72(SB)/8, $0x0909090909090909
DATA kQ6ScaleShuf<>+80(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA kQ6ScaleShuf<>+88(SB)/8, $0x0b0b0b0b0b0b0b0b
DATA kQ6ScaleShuf<>+96(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA kQ6ScaleShuf<>+104(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA kQ6ScaleShuf<>+112(SB)/8, $0x0e0e0e0e0e0e0e0e
DATA kQ6ScaleShuf<>+120(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL kQ6ScaleShuf<>(SB), RODATA|NOPTR, $128

// Q4STEP handles 64 elements: 32 weight bytes at qo(SI), whose low nibbles
// meet the activations at xo(DI) with the scale word pair at so(SP) and high
// nibbles those at xo2(DI) with the pair at so2(SP). Products accumulate
// in Y4; clobbers Y5-Y8.
#define Q4STEP(qo, xo, xo2, so, so2) \
	KNIBBLES(SI, qo); \
	KPAIRSTEP(xo, xo2, so, so2)

// Q4STEPS runs STEP (Q4STEP or one of its forms) over the four 64-element
// groups g of a Q4_K block: weight bytes at 16 + 32g, activations at
// 4 + 64g and 36 + 64g, scale dwords at 8g and 8g + 4 in the frame.
#define Q4STEPS(STEP) \
	STEP(16, 4, 36, 0, 4); \
	STEP(48, 68, 100, 8, 12); \
	STEP(80, 132, 164, 16, 20); \
	STEP(112, 196, 228, 24, 28)

// Q4BLOCK computes the int32 lanes of the Q4_K block at B against the
// activations at DI: its scales and mins are unpacked into sx (KSCALEMIN
// with t0, t1), the imin lanes (Σ bsums·mins) left in Y2, the scales
// stored in the frame as doubled words and, with STEP being Q4STEP on B,
// the isum lanes left in Y4. Clobbers AX, BX, DX, R10, t0, t1, X3, Y5-Y8.
#define Q4BLOCK(B, t0, t1, sx, STEP) \
	KSCALEMIN(B, t0, t1, sx); \
	VPSHUFB kQ4MinShuf<>(SB), sx, X2; \
	VPMOVZXBW X2, Y2; \
	VPMADDWD 260(DI), Y2, Y2; \
	KSCALEWORDS(sx, X3, X5, X6); \
	VPXOR Y4, Y4, Y4; \
	Q4STEPS(STEP)

// func q4KRows(w *byte, wstride, rows int, x *byte, nb int, out *float32)
//
// The frame holds the block's eight scales, each as a pair of equal words
// (one dword per sub-block), for VPBROADCASTD. R11 walks the weight rows,
// R12 the outputs, R13 counts rows.
TEXT ·q4KRows(SB), NOSPLIT, $32-48
	MOVQ w+0(FP), R11
	MOVQ rows+16(FP), R13
	MOVQ out+40(FP), R12
	VMOVDQU kMask0F<>(SB), Y15

q4row:
	MOVQ R11, SI
	MOVQ x+24(FP), DI
	MOVQ nb+32(FP), CX
	VXORPS X0, X0, X0

q4loop:
	// Isum lanes in Y4; mins: Σ bsums[j]·mins[j/2] as 8 int32 lanes in Y2.
	Q4BLOCK(SI, R8, R9, X1, Q4STEP)

	// X4 = [isum, imin, isum, imin].
	KSUMMIN(Y4, X4)

	// [d, dmin] = [wd, wdmin]·xd; X0 = [acc, accm] += [isum·d, imin·dmin] fused.
	KDDMINXD(0)
	VFMADD231PS X5, X4, X0

	K1NEXT(144)
	JNZ  q4loop

	// out = acc − accm
	KOUTDIFF(X0)
	ADDQ wstride+8(FP), R11
	DECQ R13
	JNZ  q4row

	VZEROUPPER
	RET

// Q6STEP handles 32 elements held as unsigned 6-bit values in Y6: it
// multiplies them by the activations at xo(DI), applies the scales of the
// two 16-element sub-blocks (shuffle mask at so) and accumulates into Y0.
#define Q6STEP(xo, so) \
	VPMADDUBSW xo(DI), Y6, Y6; \
	VPSHUFB kQ6ScaleShuf<>+so(SB), X1, X7; \
	VPMOVSXBW X7, Y7; \
	VPMADDWD Y7, Y6, Y6; \
	VPADDD Y6, Y0, Y0

// Q6HALF handles 128 elements: ql bytes at lo(SI) and lo2(SI), qh bytes at
// ho(SI); it builds the four 32-value groups in Y6 and applies STEP (Q6STEP
// or a multi-token form) to each with the activation offsets xo0-xo3 and
// scale masks so0-so3. m03 is the 0x03 byte mask (a register or
// kMask03<>(SB)); Y15 holds the 0x0f mask. Clobbers Y3-Y7.
#define Q6HALF(STEP, m03, lo, lo2, ho, xo0, xo1, xo2, xo3, so0, so1, so2, so3) \
	VMOVDQU lo(SI), Y3; \
	VMOVDQU lo2(SI), Y4; \
	VMOVDQU ho(SI), Y5; \
	VPAND Y15, Y3, Y6; \
	VPAND m03, Y5, Y7; \
	VPSLLW $4, Y7, Y7; \
	VPOR Y7, Y6, Y6; \
	STEP(xo0, so0); \
	VPAND Y15, Y4, Y6; \
	VPAND kMask0C<>(SB), Y5, Y7; \
	VPSLLW $2, Y7, Y7; \
	VPOR Y7, Y6, Y6; \
	STEP(xo1, so1); \
	VPSRLW $4, Y3, Y3; \
	VPAND Y15, Y3, Y6; \
	VPAND kMask30<>(SB), Y5, Y7; \
	VPOR Y7, Y6, Y6; \
	STEP(xo2, so2); \
	VPSRLW $4, Y4, Y4; \
	VPAND Y15, Y4, Y6; \
	VPAND kMaskC0<>(SB), Y5, Y7; \
	VPSRLW $2, Y7, Y7; \
	VPOR Y7, Y6, Y6; \
	STEP(xo3, so3)

// Q6BLOCK runs Q6HALF with STEP and m03 over both halves of a Q6_K block
// (the 256 elements, activations at 4-255 of the Q8_K block).
#define Q6BLOCK(STEP, m03) \
	Q6HALF(STEP, m03, 0, 32, 128, 4, 36, 68, 100, 0, 16, 32, 48); \
	Q6HALF(STEP, m03, 64, 96, 160, 132, 164, 196, 228, 64, 80, 96, 112)

// func q6KRows(w *byte, wstride, rows int, x *byte, nb int, out *float32)
TEXT ·q6KRows(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), R11
	MOVQ rows+16(FP), R13
	MOVQ out+40(FP), R12
	VMOVDQU kMask0F<>(SB), Y15
	VMOVDQU kMask03<>(SB), Y14

q6row:
	MOVQ R11, SI
	MOVQ x+24(FP), DI
	MOVQ nb+32(FP), CX
	VXORPS Y13, Y13, Y13

q6loop:
	// Offset: 32·Σ scales[s]·bsums[s] as 8 int32 lanes in Y2.
	VMOVDQU 192(SI), X1
	VPMOVSXBW X1, Y2
	VPMADDWD 260(DI), Y2, Y2
	VPSLLD $5, Y2, Y2

	VPXOR Y0, Y0, Y0
	Q6BLOCK(Q6STEP, Y14)
	VPSUBD Y2, Y0, Y0
	VCVTDQ2PS Y0, Y0

	// acc[L] = fma(xd·wd, float32(lane[L]), acc[L]) in Y13.
	KDXD(208, X3, Y3)
	VFMADD231PS Y3, Y0, Y13

	K1NEXT(210)
	JNZ  q6loop

	KOUT8(Y13, X13)
	ADDQ wstride+8(FP), R11
	DECQ R13
	JNZ  q6row

	VZEROUPPER
	RET

// Eight weight rows, one token: each row's block is computed as in q4KRows,
// but the per-row integer sums are gathered into one vector of eight (a
// VPHADDD tree) and the float accumulation runs on eight lanes at once, lane
// r doing exactly row r's single-row operations.

// Q4R8STEP is Q4STEP on the row at R9.
#define Q4R8STEP(qo, xo, xo2, so, so2) \
	KNIBBLES(R9, qo); \
	KPAIRSTEP(xo, xo2, so, so2)

// Q4R8ROW computes the block of the row at R9 (Q4BLOCK, scales and mins
// unpacked into X3; clobbers AX, BX, DX, R10, R12, R13): its isum lanes in
// Y4 and its imin lanes in Y2; it stores its d and dmin halves at do(SP)
// and mo(SP) and moves R9 to the next row.
#define Q4R8ROW(do, mo) \
	Q4BLOCK(R9, R12, R13, X3, Q4R8STEP); \
	MOVL (R9), AX; \
	MOVW AX, do(SP); \
	SHRL $16, AX; \
	MOVW AX, mo(SP); \
	ADDQ R8, R9

// Q4R8PAIR computes two consecutive rows (Q4R8ROW with the d and dmin
// halves at do, do+16 and do+2, do+18) and pairs their lanes into isum
// and imin with one VPHADDD level; clobbers Y9, Y10.
#define Q4R8PAIR(do, isum, imin) \
	Q4R8ROW(do, do+16); \
	VMOVDQA Y4, Y10; \
	VMOVDQA Y2, Y9; \
	Q4R8ROW(do+2, do+18); \
	VPHADDD Y4, Y10, isum; \
	VPHADDD Y2, Y9, imin

// Q4R8FOUR computes four consecutive rows (d halves from do on) and adds
// their lanes up two VPHADDD levels into isum and imin.
#define Q4R8FOUR(do, isum, imin) \
	Q4R8PAIR(do, isum, imin); \
	Q4R8PAIR(do+4, Y10, Y9); \
	VPHADDD Y10, isum, isum; \
	VPHADDD Y9, imin, imin

// func q4KRows8(w *byte, wstride, groups int, x *byte, nb int, out *float32)
//
// For each of groups groups of eight rows at w + r·wstride, writes
// out[8g+r] = dotQ4KRef(row, x, 256·nb), bit for bit.
//
// Frame: 0-31 the current row's scales (as in q4KRows), 32-47 the eight
// rows' d and 48-63 their dmin (F16), 64 the output pointer, 72 the groups
// left, 80 the group's first row. Registers: SI row 0 of the current block,
// R9 the current row, R8 wstride, DI the activation block, CX blocks left,
// R11 the prefetch pointer; Y12/Y0 (isum) and Y11/Y1 (imin) hold the partial VPHADDD trees, Y10/Y9 the
// current pair; Y14 and Y13 the eight rows' acc and accm.
TEXT ·q4KRows8(SB), NOSPLIT, $88-48
	MOVQ w+0(FP), AX
	MOVQ AX, 80(SP)
	MOVQ groups+16(FP), AX
	MOVQ AX, 72(SP)
	MOVQ out+40(FP), AX
	MOVQ AX, 64(SP)
	MOVQ wstride+8(FP), R8
	VMOVDQU kMask0F<>(SB), Y15

q4r8group:
	MOVQ 80(SP), SI
	LEAQ (SI)(R8*8), R11
	MOVQ x+24(FP), DI
	MOVQ nb+32(FP), CX
	VXORPS Y14, Y14, Y14
	VXORPS Y13, Y13, Y13

q4r8loop:
	// Eight row streams a few blocks long defeat the hardware prefetcher
	// once the matrix is not in cache: fetch the next group's rows
	// (contiguous when wstride is the row size) ahead, the 1152 bytes of
	// one block of eight rows per block consumed. Prefetches past the
	// matrix are harmless.
	PREFETCHT0 0(R11)
	PREFETCHT0 64(R11)
	PREFETCHT0 128(R11)
	PREFETCHT0 192(R11)
	PREFETCHT0 256(R11)
	PREFETCHT0 320(R11)
	PREFETCHT0 384(R11)
	PREFETCHT0 448(R11)
	PREFETCHT0 512(R11)
	PREFETCHT0 576(R11)
	PREFETCHT0 640(R11)
	PREFETCHT0 704(R11)
	PREFETCHT0 768(R11)
	PREFETCHT0 832(R11)
	PREFETCHT0 896(R11)
	PREFETCHT0 960(R11)
	PREFETCHT0 1024(R11)
	PREFETCHT0 1088(R11)
	ADDQ       $1152, R11
	MOVQ SI, R9
	Q4R8FOUR(32, Y12, Y11)
	Q4R8FOUR(40, Y0, Y1)

	// [isum_0..7] in Y5, [imin_0..7] in Y6.
	VPERM2I128 $0x20, Y0, Y12, Y5
	VPERM2I128 $0x31, Y0, Y12, Y6
	VPADDD Y6, Y5, Y5
	VPERM2I128 $0x20, Y1, Y11, Y6
	VPERM2I128 $0x31, Y1, Y11, Y7
	VPADDD Y7, Y6, Y6
	VCVTDQ2PS Y5, Y5
	VCVTDQ2PS Y6, Y6

	// acc = fma(isum, wd·xd, acc); accm = fma(imin, wdmin·xd, accm).
	VCVTPH2PS 32(SP), Y7
	VCVTPH2PS 48(SP), Y8
	VBROADCASTSS (DI), Y2
	VMULPS Y2, Y7, Y7
	VMULPS Y2, Y8, Y8
	VFMADD231PS Y7, Y5, Y14
	VFMADD231PS Y8, Y6, Y13

	K1NEXT(144)
	JNZ  q4r8loop

	VSUBPS Y13, Y14, Y14
	MOVQ 64(SP), AX
	VMOVUPS Y14, (AX)
	ADDQ $32, AX
	MOVQ AX, 64(SP)
	MOVQ 80(SP), AX
	LEAQ (AX)(R8*8), AX
	MOVQ AX, 80(SP)
	DECQ 72(SP)
	JNZ  q4r8group

	VZEROUPPER
	RET

DATA kAbsMask<>+0(SB)/8, $0x7fffffff7fffffff
DATA kAbsMask<>+8(SB)/8, $0x7fffffff7fffffff
DATA kAbsMask<>+16(SB)/8, $0x7fffffff7fffffff
DATA kAbsMask<>+24(SB)/8, $0x7fffffff7fffffff
GLOBL kAbsMask<>(SB), RODATA|NOPTR, $32

DATA kRoundMagic<>+0(SB)/8, $0x4b4000004b400000
DATA kRoundMagic<>+8(SB)/8, $0x4b4000004b400000
DATA kRoundMagic<>+16(SB)/8, $0x4b4000004b400000
DATA kRoundMagic<>+24(SB)/8, $0x4b4000004b400000
GLOBL kRoundMagic<>(SB), RODATA|NOPTR, $32

DATA kMant23<>+0(SB)/8, $0x007fffff007fffff
DATA kMant23<>+8(SB)/8, $0x007fffff007fffff
DATA kMant23<>+16(SB)/8, $0x007fffff007fffff
DATA kMant23<>+24(SB)/8, $0x007fffff007fffff
GLOBL kMant23<>(SB), RODATA|NOPTR, $32

DATA kHalfMant<>+0(SB)/8, $0x0040000000400000
DATA kHalfMant<>+8(SB)/8, $0x0040000000400000
DATA kHalfMant<>+16(SB)/8, $0x0040000000400000
DATA kHalfMant<>+24(SB)/8, $0x0040000000400000
GLOBL kHalfMant<>(SB), RODATA|NOPTR, $32

DATA kInt127<>+0(SB)/8, $0x0000007f0000007f
DATA kInt127<>+8(SB)/8, $0x0000007f0000007f
DATA kInt127<>+16(SB)/8, $0x0000007f0000007f
DATA kInt127<>+24(SB)/8, $0x0000007f0000007f
GLOBL kInt127<>(SB), RODATA|NOPTR, $32

DATA kLowByte<>+0(SB)/8, $0x000000ff000000ff
DATA kLowByte<>+8(SB)/8, $0x000000ff000000ff
DATA kLowByte<>+16(SB)/8, $0x000000ff000000ff
DATA kLowByte<>+24(SB)/8, $0x000000ff000000ff
GLOBL kLowByte<>(SB), RODATA|NOPTR, $32

DATA kPermQ8K<>+0(SB)/8, $0x0000000400000000
DATA kPermQ8K<>+8(SB)/8, $0x0000000500000001
DATA kPermQ8K<>+16(SB)/8, $0x0000000600000002
DATA kPermQ8K<>+24(SB)/8, $0x0000000700000003
GLOBL kPermQ8K<>(SB), RODATA|NOPTR, $32

DATA kOnes8<>+0(SB)/8, $0x0101010101010101
DATA kOnes8<>+8(SB)/8, $0x0101010101010101
DATA kOnes8<>+16(SB)/8, $0x0101010101010101
DATA kOnes8<>+24(SB)/8, $0x0101010101010101
GLOBL kOnes8<>(SB), RODATA|NOPTR, $32

DATA kOnes16<>+0(SB)/8, $0x0001000100010001
DATA kOnes16<>+8(SB)/8, $0x0001000100010001
DATA kOnes16<>+16(SB)/8, $0x0001000100010001
DATA kOnes16<>+24(SB)/8, $0x0001000100010001
GLOBL kOnes16<>(SB), RODATA|NOPTR, $32

// Q8KROUND rounds the 8 floats at off(SI), scaled by the iscale in Y2, to
// the low bytes of min(127, nearest_int(iscale·x)) in the dwords of Y.
#define Q8KROUND(off, Y) \
	VMULPS off(SI), Y2, Y; \
	VADDPS kRoundMagic<>(SB), Y, Y; \
	VPAND kMant23<>(SB), Y, Y; \
	VPSUBD kHalfMant<>(SB), Y, Y; \
	VPMINSD kInt127<>(SB), Y, Y; \
	VPAND kLowByte<>(SB), Y, Y

// Q8KCHUNK quantizes 32 floats at off(SI), stores the bytes at qo(DI) and
// leaves in S the eight 4-byte sums (lanes 0-3: first 16 bytes, 4-7: next 16).
#define Q8KCHUNK(off, qo, S) \
	Q8KROUND(off, Y4); \
	Q8KROUND(off+32, Y5); \
	Q8KROUND(off+64, Y6); \
	Q8KROUND(off+96, Y7); \
	VPACKUSDW Y5, Y4, Y4; \
	VPACKUSDW Y7, Y6, Y6; \
	VPACKUSWB Y6, Y4, Y4; \
	VPERMD Y4, Y14, Y4; \
	VMOVDQU Y4, qo(DI); \
	VPMADDUBSW Y4, Y13, S; \
	VPMADDWD kOnes16<>(SB), S, S

// Q8KSUMS turns the chunk sums a, b, c, d into the eight 16-element sums
// in order, as dwords in dst.
#define Q8KSUMS(a, b, c, d, dst) \
	VPHADDD b, a, a; \
	VPHADDD d, c, c; \
	VPHADDD c, a, dst; \
	VPERMD dst, Y14, dst

// func quantizeQ8KAVX2(dst *byte, src *float32, nb int)
//
// Bit-identical to quantizeRowQ8K on nb > 0 blocks, for every input.
TEXT ·quantizeQ8KAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ nb+16(FP), CX
	VMOVDQU kAbsMask<>(SB), Y15
	VMOVDQU kPermQ8K<>(SB), Y14
	VMOVDQU kOnes8<>(SB), Y13

q8kloop:
	// amax = max |x| over non-NaN x: VMAXPS returns its second source (the
	// accumulator) when the new value is NaN.
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	XORQ AX, AX

q8kmax:
	VANDPS (SI)(AX*1), Y15, Y4
	VANDPS 32(SI)(AX*1), Y15, Y5
	VMAXPS Y0, Y4, Y0
	VMAXPS Y1, Y5, Y1
	ADDQ $64, AX
	CMPQ AX, $1024
	JNE  q8kmax
	VMAXPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS X1, X0, X0
	VXORPS X1, X1, X1
	VUCOMISS X1, X0
	JEQ  q8kzero
	VBROADCASTSS X0, Y0

	// max = the first x with |x| == amax.
	XORQ AX, AX

q8kfind:
	VANDPS (SI)(AX*1), Y15, Y4
	VCMPPS $0, Y0, Y4, Y4
	VMOVMSKPS Y4, BX
	TESTL BX, BX
	JNZ  q8kfound
	ADDQ $32, AX
	JMP  q8kfind

q8kfound:
	BSFL BX, BX
	LEAQ (AX)(BX*4), AX
	VMOVSS (SI)(AX*1), X1

	// iscale = -127/max; d = 1/iscale.
	MOVL $0xc2fe0000, AX
	VMOVD AX, X2
	VDIVSS X1, X2, X2
	MOVL $0x3f800000, AX
	VMOVD AX, X3
	VDIVSS X2, X3, X3
	VMOVSS X3, (DI)
	VBROADCASTSS X2, Y2

	Q8KCHUNK(0, 4, Y8)
	Q8KCHUNK(128, 36, Y9)
	Q8KCHUNK(256, 68, Y10)
	Q8KCHUNK(384, 100, Y11)
	Q8KSUMS(Y8, Y9, Y10, Y11, Y12)
	Q8KCHUNK(512, 132, Y8)
	Q8KCHUNK(640, 164, Y9)
	Q8KCHUNK(768, 196, Y10)
	Q8KCHUNK(896, 228, Y11)
	Q8KSUMS(Y8, Y9, Y10, Y11, Y8)
	VPACKSSDW Y8, Y12, Y12
	VPERMQ $0xd8, Y12, Y12
	VMOVDQU Y12, 260(DI)
	JMP  q8knext

q8kzero:
	VPXOR Y4, Y4, Y4
	VMOVDQU Y4, (DI)
	VMOVDQU Y4, 32(DI)
	VMOVDQU Y4, 64(DI)
	VMOVDQU Y4, 96(DI)
	VMOVDQU Y4, 128(DI)
	VMOVDQU Y4, 160(DI)
	VMOVDQU Y4, 192(DI)
	VMOVDQU Y4, 224(DI)
	VMOVDQU Y4, 256(DI)
	MOVL $0, 288(DI)

q8knext:
	ADDQ $1024, SI
	ADDQ $292, DI
	DECQ CX
	JNZ  q8kloop

	VZEROUPPER
	RET

