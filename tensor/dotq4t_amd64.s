//go:build amd64 && !noasm

#include "textflag.h"
#include "q4_amd64.h"

// q4tZeroFrame clears the eight tokens' accumulators in the frame (token t
// at 32t(SP)). Clobbers Y9.
#define q4tZeroFrame \
	VXORPS  Y9, Y9, Y9 \
	VMOVUPS Y9, 0(SP) \
	VMOVUPS Y9, 32(SP) \
	VMOVUPS Y9, 64(SP) \
	VMOVUPS Y9, 96(SP) \
	VMOVUPS Y9, 128(SP) \
	VMOVUPS Y9, 160(SP) \
	VMOVUPS Y9, 192(SP) \
	VMOVUPS Y9, 224(SP)

// q4tSplit splits the quant bytes in Y0-Y3 (one dword of each of the eight
// rows per register) into their low nibbles, left in Y0-Y3, and their high
// nibbles, in Y4-Y7. Y15 = 0x0f bytes.
#define q4tSplit \
	VPSRLW $4, Y0, Y4 \
	VPSRLW $4, Y1, Y5 \
	VPSRLW $4, Y2, Y6 \
	VPSRLW $4, Y3, Y7 \
	VPAND  Y15, Y0, Y0 \
	VPAND  Y15, Y1, Y1 \
	VPAND  Y15, Y2, Y2 \
	VPAND  Y15, Y3, Y3 \
	VPAND  Y15, Y4, Y4 \
	VPAND  Y15, Y5, Y5 \
	VPAND  Y15, Y6, Y6 \
	VPAND  Y15, Y7, Y7

// q4tFMA adds the block to the current token's accumulator in the frame at
// R15(SP): acc = fma(float32(Y13), Y8·d_x, acc), with Y13 the int32 sums,
// Y8 the rows' scales and d_x the float32 scale at 32(R9). Clobbers Y9,
// Y10, Y13.
#define q4tFMA \
	VCVTDQ2PS    Y13, Y13 \
	VBROADCASTSS 32(R9), Y9 \
	VMULPS       Y8, Y9, Y9 \
	VMOVUPS      (SP)(R15*1), Y10 \
	VFMADD231PS  Y9, Y13, Y10 \
	VMOVUPS      Y10, (SP)(R15*1)

// q4x8Consts sets Y15 = 0x0f bytes, Y14 = int16 ones. Clobbers AX.
#define q4x8Consts \
	nibbleMask \
	VPCMPEQW     Y14, Y14, Y14 \
	VPSRLW       $15, Y14, Y14

// func q4_0Rows8VT(w *byte, wstride, groups int, x *byte, xstride, ntok, nb int, out *float32, ostride int)
//
// Groups of eight Q4_0 weight rows against ntok (1 to 8) activation rows
// in the q8VNNI layout (dotq_amd64.go: the Q8_0 quants, the scale as
// float32, off = -8·Σ quants), with AVX2 only. Each block of eight rows is
// transposed once for all the tokens: Y0-Y3 hold, in lane r, the low
// nibbles of row r's quant bytes 4k..4k+3 (elements 4k..4k+3), Y4-Y7 the
// high nibbles (elements 16+4k..16+4k+3). A token broadcasts its four
// activation quants of each group against all eight rows; the eight
// VPMADDUBSW products add up in int16 (at most 8·2·15·127 = 30480, so
// never saturating), VPMADDWD folds lane r's two words into row r's Σ q·y
// and off makes it Σ (q-8)·y, exactly. Per output the float operations are
// dotQ4_0Generic's: acc = fma(float32(isum), d_w·d_x, acc), block after
// block. The tokens' accumulators live in the frame (token t at 32t); 256
// holds the group's outputs, 264 the groups left, 272 32·ntok, 280 the
// prefetch pointer.
TEXT ·q4_0Rows8VT(SB), NOSPLIT, $288-72
	MOVQ         w+0(FP), SI
	MOVQ         wstride+8(FP), DX
	MOVQ         groups+16(FP), AX
	MOVQ         AX, 264(SP)
	MOVQ         x+24(FP), R10
	MOVQ         xstride+32(FP), R14
	MOVQ         ntok+40(FP), AX
	SHLQ         $5, AX
	MOVQ         AX, 272(SP)
	MOVQ         out+56(FP), AX
	MOVQ         AX, 256(SP)
	MOVQ         ·f16Table(SB), R13
	LEAQ         (DX)(DX*2), BX
	q4x8Consts
	CMPQ         264(SP), $0
	JLE          q4vtdone

q4vtgroup:
	q4vGroup(280)
	MOVQ  nb+48(FP), CX
	q4tZeroFrame
	TESTQ CX, CX
	JZ    q4vtstore

q4vtloop:
	// Fetch the next group's rows ahead, as q4_0Rows8 does (192 bytes per
	// block against the 144 consumed).
	q4vFetch(280)
	q4vAdvance(280, 192)

	// The rows' scales, in row order.
	MOVWLZX   (R8), AX
	VMOVD     AX, X8
	VPINSRW   $1, (R8)(DX*1), X8, X8
	VPINSRW   $2, (R8)(DX*2), X8, X8
	VPINSRW   $3, (R8)(BX*1), X8, X8
	VPINSRW   $4, (R12), X8, X8
	VPINSRW   $5, (R12)(DX*1), X8, X8
	VPINSRW   $6, (R12)(DX*2), X8, X8
	VPINSRW   $7, (R12)(BX*1), X8, X8
	VCVTPH2PS X8, Y8

	// Rows r and r+4 in the two halves of Y0-Y3, then a 4×4 dword
	// transpose in each half: Y4-Y7 hold dword k of the eight rows.
	VMOVDQU     2(R8), X0
	VINSERTI128 $1, 2(R12), Y0, Y0
	VMOVDQU     2(R8)(DX*1), X1
	VINSERTI128 $1, 2(R12)(DX*1), Y1, Y1
	VMOVDQU     2(R8)(DX*2), X2
	VINSERTI128 $1, 2(R12)(DX*2), Y2, Y2
	VMOVDQU     2(R8)(BX*1), X3
	VINSERTI128 $1, 2(R12)(BX*1), Y3, Y3
	VPUNPCKLDQ  Y1, Y0, Y4
	VPUNPCKHDQ  Y1, Y0, Y5
	VPUNPCKLDQ  Y3, Y2, Y6
	VPUNPCKHDQ  Y3, Y2, Y7
	VPUNPCKLQDQ Y6, Y4, Y0
	VPUNPCKHQDQ Y6, Y4, Y1
	VPUNPCKLQDQ Y7, Y5, Y2
	VPUNPCKHQDQ Y7, Y5, Y3

	// Y4-Y7: high nibbles; Y0-Y3: low nibbles.
	q4tSplit
	MOVQ DI, R9
	XORQ R15, R15

q4vttok:
	VPBROADCASTD 0(R9), Y9
	VPBROADCASTD 16(R9), Y11
	VPMADDUBSW   Y9, Y0, Y13
	VPMADDUBSW   Y11, Y4, Y12
	VPADDW       Y12, Y13, Y13
	VPBROADCASTD 4(R9), Y9
	VPBROADCASTD 20(R9), Y11
	VPMADDUBSW   Y9, Y1, Y10
	VPADDW       Y10, Y13, Y13
	VPMADDUBSW   Y11, Y5, Y12
	VPADDW       Y12, Y13, Y13
	VPBROADCASTD 8(R9), Y9
	VPBROADCASTD 24(R9), Y11
	VPMADDUBSW   Y9, Y2, Y10
	VPADDW       Y10, Y13, Y13
	VPMADDUBSW   Y11, Y6, Y12
	VPADDW       Y12, Y13, Y13
	VPBROADCASTD 12(R9), Y9
	VPBROADCASTD 28(R9), Y11
	VPMADDUBSW   Y9, Y3, Y10
	VPADDW       Y10, Y13, Y13
	VPMADDUBSW   Y11, Y7, Y12
	VPADDW       Y12, Y13, Y13
	VPMADDWD     Y14, Y13, Y13
	VPBROADCASTD 36(R9), Y9
	VPADDD       Y9, Y13, Y13
	q4tFMA
	ADDQ         R14, R9
	ADDQ         $32, R15
	CMPQ         R15, 272(SP)
	JLT          q4vttok
	q4vNext($18, q4vtloop)

q4vtstore:
	MOVQ ostride+64(FP), CX
	SHLQ $2, CX
	MOVQ 256(SP), R9
	XORQ R15, R15

q4vtstoretok:
	VMOVUPS (SP)(R15*1), Y0
	VMOVUPS Y0, (R9)
	ADDQ    CX, R9
	ADDQ    $32, R15
	CMPQ    R15, 272(SP)
	JLT     q4vtstoretok
	ADDQ    $32, 256(SP)
	LEAQ    (SI)(DX*8), SI
	DECQ    264(SP)
	JNZ     q4vtgroup

q4vtdone:
	VZEROUPPER
	RET

// The interleaved Q4_0 layout (q4_0x8, repack.go) with AVX2: a block of a
// group of eight rows is 144 contiguous bytes, the eight F16 scales and
// then, at 16+32k, dword k (quant bytes 4k..4k+3) of the eight rows, lane
// l holding row p[l] (p = [0 2 4 6 1 3 5 7]). Those four loads are the
// registers q4_0Rows8VT builds with eight loads, eight inserts and eight
// unpacks per block, in lane order p instead of row order; the products,
// the int16 and int32 sums and the float operations per output are
// q4_0Rows8VT's, and VPERMPS by permRows8 puts the outputs in row order
// at the store. The group is one stream, which the hardware prefetcher
// follows without help.

// q4x8Nibbles loads the block at R8: Y0-Y3 the low nibbles of dword k
// (elements 4k..4k+3), Y4-Y7 the high ones (elements 16+4k..16+4k+3), one
// lane per row. Y15 = 0x0f bytes.
#define q4x8Nibbles \
	VMOVDQU 16(R8), Y0 \
	VMOVDQU 48(R8), Y1 \
	VMOVDQU 80(R8), Y2 \
	VMOVDQU 112(R8), Y3 \
	q4tSplit

// q4x8Sum leaves in Y13 the eight rows' exact Σ (q-8)·y over the block
// against the q8VNNI activation block at register P (quants at 0, off at
// 36): the eight VPMADDUBSW products (nibbles unsigned, activations
// signed) add up in int16 without saturating (at most 8·2·15·128 = 30720),
// VPMADDWD by Y14 (int16 ones) folds each lane's two words into int32 and
// off adds -8·Σ y. The sums are exact, so their order (a tree here, for a
// shorter dependency chain) does not change them. Clobbers Y9-Y12.
#define q4x8Sum(P) \
	VPBROADCASTD 0(P), Y9 \
	VPBROADCASTD 16(P), Y10 \
	VPMADDUBSW   Y9, Y0, Y13 \
	VPMADDUBSW   Y10, Y4, Y12 \
	VPBROADCASTD 4(P), Y9 \
	VPBROADCASTD 20(P), Y10 \
	VPMADDUBSW   Y9, Y1, Y11 \
	VPMADDUBSW   Y10, Y5, Y10 \
	VPADDW       Y12, Y13, Y13 \
	VPADDW       Y10, Y11, Y11 \
	VPBROADCASTD 8(P), Y9 \
	VPBROADCASTD 24(P), Y10 \
	VPMADDUBSW   Y9, Y2, Y12 \
	VPMADDUBSW   Y10, Y6, Y10 \
	VPADDW       Y11, Y13, Y13 \
	VPADDW       Y10, Y12, Y12 \
	VPBROADCASTD 12(P), Y9 \
	VPBROADCASTD 28(P), Y10 \
	VPMADDUBSW   Y9, Y3, Y11 \
	VPMADDUBSW   Y10, Y7, Y10 \
	VPADDW       Y10, Y11, Y11 \
	VPADDW       Y11, Y12, Y12 \
	VPADDW       Y12, Y13, Y13 \
	VPMADDWD     Y14, Y13, Y13 \
	VPBROADCASTD 36(P), Y9 \
	VPADDD       Y9, Y13, Y13

// func q4_0x8Rows8V1(w *byte, groups int, x *byte, nb int, out *float32)
//
// Groups of eight interleaved Q4_0 rows (144 bytes a block, contiguous
// from w) against one q8VNNI activation row: out[r] = dotQ4_0Generic of
// row r on the Q8_0 form of x, bit for bit. The accumulator Y8 (lane l:
// row p[l]) takes acc = fma(float32(isum), d_w·d_x, acc) once per block,
// dotQ4_0Generic's order.
TEXT ·q4_0x8Rows8V1(SB), NOSPLIT, $0-40
	MOVQ    w+0(FP), R8
	MOVQ    groups+8(FP), BX
	MOVQ    x+16(FP), R10
	MOVQ    out+32(FP), R11
	q4x8Consts
	TESTQ   BX, BX
	JLE     q4x1done

q4x1group:
	MOVQ   R10, DI
	MOVQ   nb+24(FP), CX
	VXORPS Y8, Y8, Y8
	TESTQ  CX, CX
	JZ     q4x1groupdone

q4x1loop:
	q4x8Nibbles
	q4x8Sum(DI)
	VCVTDQ2PS    Y13, Y13
	VCVTPH2PS    (R8), Y12
	VBROADCASTSS 32(DI), Y9
	VMULPS       Y12, Y9, Y9
	VFMADD231PS  Y9, Y13, Y8
	ADDQ         $144, R8
	ADDQ         $40, DI
	DECQ         CX
	JNZ          q4x1loop

q4x1groupdone:
	VMOVDQU ·permRows8(SB), Y12
	VPERMPS Y8, Y12, Y8
	VMOVUPS Y8, (R11)
	ADDQ    $32, R11
	DECQ    BX
	JNZ     q4x1group

q4x1done:
	VZEROUPPER
	RET
