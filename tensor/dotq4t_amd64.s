//go:build amd64 && !noasm

#include "textflag.h"

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
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	VPCMPEQW     Y14, Y14, Y14
	VPSRLW       $15, Y14, Y14
	CMPQ         264(SP), $0
	JLE          q4vtdone

q4vtgroup:
	MOVQ    SI, R8
	LEAQ    (SI)(DX*4), R12
	LEAQ    (SI)(DX*8), AX
	MOVQ    AX, 280(SP)
	MOVQ    R10, DI
	MOVQ    nb+48(FP), CX
	VXORPS  Y9, Y9, Y9
	VMOVUPS Y9, 0(SP)
	VMOVUPS Y9, 32(SP)
	VMOVUPS Y9, 64(SP)
	VMOVUPS Y9, 96(SP)
	VMOVUPS Y9, 128(SP)
	VMOVUPS Y9, 160(SP)
	VMOVUPS Y9, 192(SP)
	VMOVUPS Y9, 224(SP)
	TESTQ   CX, CX
	JZ      q4vtstore

q4vtloop:
	// Eight interleaved row streams defeat the hardware prefetcher: fetch
	// the next group's rows ahead, as q4_0Rows8 does (192 bytes per block
	// against the 144 consumed, contiguous when wstride is the row size).
	MOVQ       280(SP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	ADDQ       $192, AX
	MOVQ       AX, 280(SP)

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
	VPSRLW $4, Y0, Y4
	VPSRLW $4, Y1, Y5
	VPSRLW $4, Y2, Y6
	VPSRLW $4, Y3, Y7
	VPAND  Y15, Y0, Y0
	VPAND  Y15, Y1, Y1
	VPAND  Y15, Y2, Y2
	VPAND  Y15, Y3, Y3
	VPAND  Y15, Y4, Y4
	VPAND  Y15, Y5, Y5
	VPAND  Y15, Y6, Y6
	VPAND  Y15, Y7, Y7
	MOVQ   DI, R9
	XORQ   R15, R15

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
	VCVTDQ2PS    Y13, Y13
	VBROADCASTSS 32(R9), Y9
	VMULPS       Y8, Y9, Y9
	VMOVUPS      (SP)(R15*1), Y10
	VFMADD231PS  Y9, Y13, Y10
	VMOVUPS      Y10, (SP)(R15*1)
	ADDQ         R14, R9
	ADDQ         $32, R15
	CMPQ         R15, 272(SP)
	JLT          q4vttok
	ADDQ         $18, R8
	ADDQ         $18, R12
	ADDQ         $40, DI
	DECQ         CX
	JNZ          q4vtloop

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
