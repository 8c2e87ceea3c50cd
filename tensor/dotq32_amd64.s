//go:build amd64 && !noasm

#include "textflag.h"

// AVX2 kernels for the 32-element block types Q5_0, Q4_1, Q5_1 (the lanes
// order, qlanes.go) and IQ4_NL (the rows order, iq4_nl.go). Each computes
// the dot products of weight rows (w + r·wstride) with 1 to 4 activation
// rows (x + t·xstride), decoding every weight block once for all the
// tokens, and writes out[t·ostride + r]. Every output keeps the exact
// operations and order of the type's Go reference, so a token's results do
// not depend on the tokens beside it.
//
// Lanes kernels: SI weight row, DX weight stride, R9 rows left, R10
// activation row of token 0, R14 activation stride, R12 three strides, R11
// output of token 0, R8 weight block, DI activation block of token 0, CX
// block counter, R13 f16Table, R15 token count. Token t accumulates in
// Y6+t; Q4_1 and Q5_1 keep token 0's float32 summs in X5, token t's
// (t ≥ 1) at 4(t-1)(SP).
//
// The macros all come first (go vet checks a macro's argument references
// against the TEXT block above it).

// lanesConsts sets Y15 to int16 ones and Y14 to 0x0f bytes.
#define lanesConsts \
	VPCMPEQW     Y15, Y15, Y15 \
	VPSRLW       $15, Y15, Y15 \
	MOVL         $0x0f0f0f0f, AX \
	VMOVD        AX, X14 \
	VPBROADCASTD X14, Y14

// qhConsts sets Y13 to the byte shuffle that spreads the four qh bytes over
// eight bytes each, and Y12 to the bit of its byte each element tests.
#define qhConsts \
	VMOVDQU      ·q32QhShuf(SB), Y13 \
	MOVQ         $0x8040201008040201, AX \
	VMOVQ        AX, X12 \
	VPBROADCASTQ X12, Y12

// nibbles loads the 16 quant bytes at Q into Y0 as 32 nibbles in element
// order: low nibbles (elements 0-15), then high ones (16-31). Clobbers X1.
#define nibbles(Q) \
	VMOVDQU     Q, X0 \
	VPSRLW      $4, X0, X1 \
	VINSERTI128 $1, X1, Y0, Y0 \
	VPAND       Y14, Y0, Y0

// qhBits sets Y1 to 0xff in byte j where bit j of the 32-bit field at QH
// is set (ggml's bytes_from_bits_32).
#define qhBits(QH) \
	VPBROADCASTD QH, Y1 \
	VPSHUFB      Y13, Y1, Y1 \
	VPAND        Y12, Y1, Y1 \
	VPCMPEQB     Y12, Y1, Y1

// wScale loads the weight block's F16 scale at S into X10 as float32.
#define wScale(S) \
	MOVWLZX S, AX \
	VMOVSS  (R13)(AX*4), X10

// lanesAcc converts the eight int32 lanes in Y2 and fused-multiply-adds
// them with d = d_w·d_x (d_w in X10, d_x the F16 at S) into ACC.
#define lanesAcc(S, ACC) \
	VCVTDQ2PS    Y2, Y2 \
	MOVWLZX      S, AX \
	VMULSS       (R13)(AX*4), X10, X3 \
	VBROADCASTSS X3, Y3 \
	VFMADD231PS  Y2, Y3, ACC

// q5_0Tok accumulates the Q8_0 activation block with scale at S and quants
// at Q against the decoded Q5_0 block (Y0 signed quants, Y1 their
// magnitudes) into ACC: |q| times y with q's sign, pairs and then fours
// summed (ggml's mul_sum_i8_pairs_float).
#define q5_0Tok(Q, S, ACC) \
	VMOVDQU    Q, Y2 \
	VPSIGNB    Y0, Y2, Y2 \
	VPMADDUBSW Y2, Y1, Y2 \
	VPMADDWD   Y15, Y2, Y2 \
	lanesAcc(S, ACC)

// minLanes accumulates the Q8_1 activation block with quants at Q and d
// at D against the decoded unsigned Q4_1 or Q5_1 quants in Y0 into ACC
// (ggml's mul_sum_us8_pairs_float). Clobbers Y2, Y3.
#define minLanes(Q, D, ACC) \
	VPMADDUBSW Q, Y0, Y2 \
	VPMADDWD   Y15, Y2, Y2 \
	lanesAcc(D, ACC)

// minTok0 is minLanes for token 0, whose summs live in X5: summs =
// fma(m_w, s_x, summs) with m_w in X4 and s_x the F16 at SS.
#define minTok0(Q, D, SS, ACC) \
	minLanes(Q, D, ACC) \
	MOVWLZX     SS, AX \
	VFMADD231SS (R13)(AX*4), X4, X5

// minTok is minLanes for tokens 1-3, whose summs wait at SLOT(SP).
// Clobbers X1.
#define minTok(Q, D, SS, ACC, SLOT) \
	minLanes(Q, D, ACC) \
	MOVWLZX     SS, AX \
	VMOVSS      SLOT(SP), X1 \
	VFMADD231SS (R13)(AX*4), X4, X1 \
	VMOVSS      X1, SLOT(SP)

// hsum reduces Y (low half X) as hsum_float_8: halves added, then movehl,
// then movehdup. Clobbers X1.
#define hsum(Y, X) \
	VEXTRACTF128 $1, Y, X1 \
	VADDPS       X, X1, X \
	VMOVHLPS     X, X, X1 \
	VADDPS       X1, X, X \
	VMOVSHDUP    X, X1 \
	VADDSS       X1, X, X

// lanesProlog loads the arguments of a lanes kernel.
#define lanesProlog \
	MOVQ w+0(FP), SI \
	MOVQ wstride+8(FP), DX \
	MOVQ rows+16(FP), R9 \
	MOVQ x+24(FP), R10 \
	MOVQ xstride+32(FP), R14 \
	MOVQ ntok+40(FP), R15 \
	MOVQ out+56(FP), R11 \
	MOVQ ·f16Table(SB), R13 \
	LEAQ (R14)(R14*2), R12

#define zeroAcc4 \
	VXORPS Y6, Y6, Y6 \
	VXORPS Y7, Y7, Y7 \
	VXORPS Y8, Y8, Y8 \
	VXORPS Y9, Y9, Y9

// minStore writes a token's result, the hsum of its accumulator Y (low
// half X) plus its summs SUMMS, at (BX).
#define minStore(Y, X, SUMMS) \
	hsum(Y, X) \
	VADDSS SUMMS, X, X \
	VMOVSS X, (BX)

// zeroSumms clears the summs: token 0's in X5, the others' on the stack.
#define zeroSumms \
	VXORPS X5, X5, X5 \
	MOVQ   $0, 0(SP) \
	MOVQ   $0, 8(SP)

// nlDecode looks up the levels of the row pair whose quants are at P and Q
// and stores them and their magnitudes at the pair's slots. Clobbers Y4, Y5.
#define nlDecode(P, Q, ALO, AHI, SLO, SHI) \
	VMOVDQU     P, X4 \
	VINSERTI128 $1, Q, Y4, Y4 \
	VPSRLW      $4, Y4, Y5 \
	VPAND       Y15, Y4, Y4 \
	VPAND       Y15, Y5, Y5 \
	VPSHUFB     Y4, Y13, Y4 \
	VPSHUFB     Y5, Y13, Y5 \
	VMOVDQU     Y4, SLO(SP) \
	VMOVDQU     Y5, SHI(SP) \
	VPABSB      Y4, Y4 \
	VPABSB      Y5, Y5 \
	VMOVDQU     Y4, ALO(SP) \
	VMOVDQU     Y5, AHI(SP)

// nlPair leaves in YD the exact dots of a decoded row pair with the
// activations (Y1 = y[0:16] twice, Y2 = y[16:32] twice) as four int32
// partial sums per row: |v| times y with v's sign, in pairs then fours
// (the levels reach 127, so the two halves are widened before they are
// added). Clobbers Y0, Y3.
#define nlPair(ALO, AHI, SLO, SHI, YD) \
	VPSIGNB    SLO(SP), Y1, Y3 \
	VMOVDQU    ALO(SP), YD \
	VPMADDUBSW Y3, YD, YD \
	VPSIGNB    SHI(SP), Y2, Y3 \
	VMOVDQU    AHI(SP), Y0 \
	VPMADDUBSW Y3, Y0, Y0 \
	VPMADDWD   Y14, YD, YD \
	VPMADDWD   Y14, Y0, Y0 \
	VPADDD     Y0, YD, YD

// nlToken accumulates one Q8_0 activation block (scale at S, quants at LO
// and HI) against the eight decoded rows into ACC: each row's whole sum,
// then acc = fma(float32(sum), d_w·d_x, acc). Clobbers AX, Y0-Y7.
#define nlToken(S, LO, HI, ACC) \
	VBROADCASTI128 LO, Y1 \
	VBROADCASTI128 HI, Y2 \
	nlPair(0, 32, 256, 288, Y4) \
	nlPair(64, 96, 320, 352, Y5) \
	nlPair(128, 160, 384, 416, Y6) \
	nlPair(192, 224, 448, 480, Y7) \
	VPHADDD        Y5, Y4, Y4 \
	VPHADDD        Y7, Y6, Y6 \
	VPHADDD        Y6, Y4, Y4 \
	VCVTDQ2PS      Y4, Y4 \
	MOVWLZX        S, AX \
	VBROADCASTSS   (R13)(AX*4), Y5 \
	VMULPS         Y5, Y12, Y5 \
	VFMADD231PS    Y5, Y4, ACC

// prefetch4 fetches the next group of four rows (R14; contiguous when
// wstride is the row size) at the rate the group's blocks are consumed,
// STEP bytes per block: four short row streams at once defeat the hardware
// prefetcher. Prefetches past the matrix are harmless.
#define prefetch4(STEP) \
	PREFETCHT0 (R14) \
	PREFETCHT0 64(R14) \
	ADDQ       $STEP, R14

// lanes4Prolog loads the arguments of a four-row kernel.
#define lanes4Prolog \
	MOVQ w+0(FP), SI \
	MOVQ wstride+8(FP), DX \
	MOVQ groups+16(FP), R9 \
	MOVQ x+24(FP), R10 \
	MOVQ out+40(FP), R11 \
	MOVQ ·f16Table(SB), R13 \
	LEAQ (DX)(DX*2), BX

// rowAcc converts the lanes in Y2 and fused-multiply-adds them with
// d = d_w·d_x (d_w the F16 at D, d_x in X5) into ACC. Clobbers AX, Y3.
#define rowAcc(D, ACC) \
	VCVTDQ2PS    Y2, Y2 \
	MOVWLZX      D, AX \
	VMULSS       (R13)(AX*4), X5, X3 \
	VBROADCASTSS X3, Y3 \
	VFMADD231PS  Y2, Y3, ACC

// q5_0Row accumulates one row's Q5_0 block (quants at QS, high bits at
// QH, scale at D) against the activations into ACC.
#define q5_0Row(QS, QH, D, ACC) \
	nibbles(QS) \
	qhBits(QH) \
	VPANDN     Y11, Y1, Y1 \
	VPOR       Y1, Y0, Y0 \
	VPABSB     Y0, Y1 \
	VPSIGNB    Y0, Y4, Y2 \
	VPMADDUBSW Y2, Y1, Y2 \
	VPMADDWD   Y15, Y2, Y2 \
	rowAcc(D, ACC)

// minRow accumulates one row's decoded Q4_1 or Q5_1 quants (Y0; scale at
// D, m at M) into ACC and m_w·s_x into the row's summs at SLOT(SP).
#define minRow(D, M, ACC, SLOT) \
	VPMADDUBSW  Y4, Y0, Y2 \
	VPMADDWD    Y15, Y2, Y2 \
	rowAcc(D, ACC) \
	MOVWLZX     M, AX \
	VMOVSS      SLOT(SP), X3 \
	VFMADD231SS (R13)(AX*4), X10, X3 \
	VMOVSS      X3, SLOT(SP)

// q5_1Quants decodes a Q5_1 block's quants (at QS, high bits at QH) into
// Y0. Clobbers Y1.
#define q5_1Quants(QS, QH) \
	nibbles(QS) \
	qhBits(QH) \
	VPAND Y11, Y1, Y1 \
	VPOR  Y1, Y0, Y0

// store4Plain writes the four rows' hsums at (R11); store4Summs adds each
// row's summs first.
#define store4Plain \
	hsum(Y6, X6) \
	VMOVSS X6, (R11) \
	hsum(Y7, X7) \
	VMOVSS X7, 4(R11) \
	hsum(Y8, X8) \
	VMOVSS X8, 8(R11) \
	hsum(Y9, X9) \
	VMOVSS X9, 12(R11)

#define store4Summs \
	hsum(Y6, X6) \
	VADDSS 0(SP), X6, X6 \
	VMOVSS X6, (R11) \
	hsum(Y7, X7) \
	VADDSS 4(SP), X7, X7 \
	VMOVSS X7, 4(R11) \
	hsum(Y8, X8) \
	VADDSS 8(SP), X8, X8 \
	VMOVSS X8, 8(R11) \
	hsum(Y9, X9) \
	VADDSS 12(SP), X9, X9 \
	VMOVSS X9, 12(R11)

// minRows4Block loads a Q8_1 activation block's quants, d_x and s_x.
#define minRows4Block \
	VMOVDQU 4(DI), Y4 \
	MOVWLZX (DI), AX \
	VMOVSS  (R13)(AX*4), X5 \
	MOVWLZX 2(DI), AX \
	VMOVSS  (R13)(AX*4), X10

// nlPair1 is nlDecode and nlPair without the stack, for one token: the
// exact dots of the row pair whose quants are at P and Q with the
// activations (Y1, Y2) as four int32 partial sums per row in YD. Clobbers
// Y3-Y5.
#define nlPair1(P, Q, YD) \
	VMOVDQU     P, X4 \
	VINSERTI128 $1, Q, Y4, Y4 \
	VPSRLW      $4, Y4, Y5 \
	VPAND       Y15, Y4, Y4 \
	VPAND       Y15, Y5, Y5 \
	VPSHUFB     Y4, Y13, Y4 \
	VPSHUFB     Y5, Y13, Y5 \
	VPSIGNB     Y4, Y1, Y3 \
	VPABSB      Y4, Y4 \
	VPMADDUBSW  Y3, Y4, Y4 \
	VPSIGNB     Y5, Y2, Y3 \
	VPABSB      Y5, Y5 \
	VPMADDUBSW  Y3, Y5, Y5 \
	VPMADDWD    Y14, Y4, Y4 \
	VPMADDWD    Y14, Y5, Y5 \
	VPADDD      Y5, Y4, YD

// The VNNI lanes kernels (q4_1RowsV, q5_0RowsV, q5_1RowsV: AVX-512 VL and
// VNNI, 1 to 8 tokens per pass) take the weights' quants as unsigned bytes
// (Q5_0's as q+16) in Y0 and the activations in the VNNI layouts of
// dotq32_amd64.go, where d_x (and s_x) are float32 and, for Q5_0, each
// lane's -16·Σy is stored: VPDPBUSD started from it leaves exactly ggml's
// lane sums. d_w is broadcast in Y1, m_w in X2; token t accumulates in
// Y16+t and its summs in X24+t. R12 points at the current token's block.

// minTokV accumulates the q8_1VNNI block at R12 (quants, d_x at 32, s_x at
// 36) against the unsigned quants in Y0 into ACC and SUM. Clobbers Y3, Y4.
#define minTokV(ACC, SUM) \
	VPXORD      Y3, Y3, Y3 \
	VPDPBUSD    (R12), Y0, Y3 \
	VCVTDQ2PS   Y3, Y3 \
	VMULPS.BCST 32(R12), Y1, Y4 \
	VFMADD231PS Y3, Y4, ACC \
	VFMADD231SS 36(R12), X2, SUM

// q5_0TokV accumulates the q8LanesVNNI block at R12 (quants, lane offsets
// at 32, d_x at 64) against the quants q+16 in Y0 into ACC. Clobbers Y3,
// Y4.
#define q5_0TokV(ACC) \
	VMOVDQU32   32(R12), Y3 \
	VPDPBUSD    (R12), Y0, Y3 \
	VCVTDQ2PS   Y3, Y3 \
	VMULPS.BCST 64(R12), Y1, Y4 \
	VFMADD231PS Y3, Y4, ACC

// zeroAccV clears the eight tokens' accumulators and summs.
#define zeroAccV \
	VPXORD Y16, Y16, Y16 \
	VPXORD Y17, Y17, Y17 \
	VPXORD Y18, Y18, Y18 \
	VPXORD Y19, Y19, Y19 \
	VPXORD Y20, Y20, Y20 \
	VPXORD Y21, Y21, Y21 \
	VPXORD Y22, Y22, Y22 \
	VPXORD Y23, Y23, Y23 \
	VPXORD X24, X24, X24 \
	VPXORD X25, X25, X25 \
	VPXORD X26, X26, X26 \
	VPXORD X27, X27, X27 \
	VPXORD X28, X28, X28 \
	VPXORD X29, X29, X29 \
	VPXORD X30, X30, X30 \
	VPXORD X31, X31, X31

// wScaleV broadcasts the weight block's F16 scale at S into Y1 as float32.
#define wScaleV(S) \
	MOVWLZX      S, AX \
	VBROADCASTSS (R13)(AX*4), Y1

// minTokensV runs minTokV for the ntok (R15) tokens from DI on.
#define minTokensV \
	MOVQ DI, R12 \
	minTokV(Y16, X24) \
	CMPQ R15, $1 \
	JLE  tokdone \
	ADDQ R14, R12 \
	minTokV(Y17, X25) \
	CMPQ R15, $2 \
	JLE  tokdone \
	ADDQ R14, R12 \
	minTokV(Y18, X26) \
	CMPQ R15, $3 \
	JLE  tokdone \
	ADDQ R14, R12 \
	minTokV(Y19, X27) \
	CMPQ R15, $4 \
	JLE  tokdone \
	ADDQ R14, R12 \
	minTokV(Y20, X28) \
	CMPQ R15, $5 \
	JLE  tokdone \
	ADDQ R14, R12 \
	minTokV(Y21, X29) \
	CMPQ R15, $6 \
	JLE  tokdone \
	ADDQ R14, R12 \
	minTokV(Y22, X30) \
	CMPQ R15, $7 \
	JLE  tokdone \
	ADDQ R14, R12 \
	minTokV(Y23, X31)

// storeV writes a token's result, the hsum of ACC (moved to Y3) plus its
// summs SUM, at (BX); storeV0 the hsum alone.
#define storeV(ACC, SUM) \
	VMOVAPS ACC, Y3 \
	hsum(Y3, X3) \
	VADDSS  SUM, X3, X3 \
	VMOVSS  X3, (BX)

#define storeV0(ACC) \
	VMOVAPS ACC, Y3 \
	hsum(Y3, X3) \
	VMOVSS  X3, (BX)

// func q5_0RowsN(w *byte, wstride, rows int, x *byte, xstride, ntok, nb int, out *float32, ostride int)
//
// Q5_0 rows against 1 to 4 Q8_0 activation rows: a block's quants are
// (nibble | 0xf0 where the qh bit is clear) as int8, that is q-16.
TEXT ·q5_0RowsN(SB), NOSPLIT, $0-72
	lanesProlog
	lanesConsts
	qhConsts
	MOVL         $0xf0f0f0f0, AX
	VMOVD        AX, X11
	VPBROADCASTD X11, Y11
	TESTQ        R9, R9
	JZ           done

row:
	MOVQ  SI, R8
	MOVQ  R10, DI
	MOVQ  nb+48(FP), CX
	zeroAcc4
	TESTQ CX, CX
	JZ    rowdone

loop:
	nibbles(6(R8))
	qhBits(2(R8))
	VPANDN Y11, Y1, Y1
	VPOR   Y1, Y0, Y0
	VPABSB Y0, Y1
	wScale((R8))
	q5_0Tok(2(DI), (DI), Y6)
	CMPQ   R15, $1
	JLE    tokdone
	q5_0Tok(2(DI)(R14*1), (DI)(R14*1), Y7)
	CMPQ   R15, $2
	JLE    tokdone
	q5_0Tok(2(DI)(R14*2), (DI)(R14*2), Y8)
	CMPQ   R15, $3
	JLE    tokdone
	q5_0Tok(2(DI)(R12*1), (DI)(R12*1), Y9)

tokdone:
	ADDQ $22, R8
	ADDQ $34, DI
	DECQ CX
	JNZ  loop

rowdone:
	MOVQ   ostride+64(FP), AX
	SHLQ   $2, AX
	MOVQ   R11, BX
	hsum(Y6, X6)
	VMOVSS X6, (BX)
	CMPQ   R15, $1
	JLE    stored
	ADDQ   AX, BX
	hsum(Y7, X7)
	VMOVSS X7, (BX)
	CMPQ   R15, $2
	JLE    stored
	ADDQ   AX, BX
	hsum(Y8, X8)
	VMOVSS X8, (BX)
	CMPQ   R15, $3
	JLE    stored
	ADDQ   AX, BX
	hsum(Y9, X9)
	VMOVSS X9, (BX)

stored:
	ADDQ $4, R11
	ADDQ DX, SI
	DECQ R9
	JNZ  row

done:
	VZEROUPPER
	RET

// func q4_1RowsN(w *byte, wstride, rows int, x *byte, xstride, ntok, nb int, out *float32, ostride int)
//
// Q4_1 rows against 1 to 4 Q8_1 activation rows.
TEXT ·q4_1RowsN(SB), NOSPLIT, $16-72
	lanesProlog
	lanesConsts
	TESTQ R9, R9
	JZ    done

row:
	MOVQ  SI, R8
	MOVQ  R10, DI
	MOVQ  nb+48(FP), CX
	zeroAcc4
	zeroSumms
	TESTQ CX, CX
	JZ    rowdone

loop:
	nibbles(4(R8))
	wScale((R8))
	MOVWLZX 2(R8), AX
	VMOVSS  (R13)(AX*4), X4
	minTok0(4(DI), (DI), 2(DI), Y6)
	CMPQ    R15, $1
	JLE     tokdone
	minTok(4(DI)(R14*1), (DI)(R14*1), 2(DI)(R14*1), Y7, 0)
	CMPQ    R15, $2
	JLE     tokdone
	minTok(4(DI)(R14*2), (DI)(R14*2), 2(DI)(R14*2), Y8, 4)
	CMPQ    R15, $3
	JLE     tokdone
	minTok(4(DI)(R12*1), (DI)(R12*1), 2(DI)(R12*1), Y9, 8)

tokdone:
	ADDQ $20, R8
	ADDQ $36, DI
	DECQ CX
	JNZ  loop

rowdone:
	MOVQ ostride+64(FP), AX
	SHLQ $2, AX
	MOVQ R11, BX
	minStore(Y6, X6, X5)
	CMPQ R15, $1
	JLE  stored
	ADDQ AX, BX
	minStore(Y7, X7, 0(SP))
	CMPQ R15, $2
	JLE  stored
	ADDQ AX, BX
	minStore(Y8, X8, 4(SP))
	CMPQ R15, $3
	JLE  stored
	ADDQ AX, BX
	minStore(Y9, X9, 8(SP))

stored:
	ADDQ $4, R11
	ADDQ DX, SI
	DECQ R9
	JNZ  row

done:
	VZEROUPPER
	RET

// func q5_1RowsN(w *byte, wstride, rows int, x *byte, xstride, ntok, nb int, out *float32, ostride int)
//
// Q5_1 rows against 1 to 4 Q8_1 activation rows: a block's quants are
// nibble | (0x10 where the qh bit is set).
TEXT ·q5_1RowsN(SB), NOSPLIT, $16-72
	lanesProlog
	lanesConsts
	qhConsts
	MOVL         $0x10101010, AX
	VMOVD        AX, X11
	VPBROADCASTD X11, Y11
	TESTQ        R9, R9
	JZ           done

row:
	MOVQ  SI, R8
	MOVQ  R10, DI
	MOVQ  nb+48(FP), CX
	zeroAcc4
	zeroSumms
	TESTQ CX, CX
	JZ    rowdone

loop:
	nibbles(8(R8))
	qhBits(4(R8))
	VPAND   Y11, Y1, Y1
	VPOR    Y1, Y0, Y0
	wScale((R8))
	MOVWLZX 2(R8), AX
	VMOVSS  (R13)(AX*4), X4
	minTok0(4(DI), (DI), 2(DI), Y6)
	CMPQ    R15, $1
	JLE     tokdone
	minTok(4(DI)(R14*1), (DI)(R14*1), 2(DI)(R14*1), Y7, 0)
	CMPQ    R15, $2
	JLE     tokdone
	minTok(4(DI)(R14*2), (DI)(R14*2), 2(DI)(R14*2), Y8, 4)
	CMPQ    R15, $3
	JLE     tokdone
	minTok(4(DI)(R12*1), (DI)(R12*1), 2(DI)(R12*1), Y9, 8)

tokdone:
	ADDQ $24, R8
	ADDQ $36, DI
	DECQ CX
	JNZ  loop

rowdone:
	MOVQ ostride+64(FP), AX
	SHLQ $2, AX
	MOVQ R11, BX
	minStore(Y6, X6, X5)
	CMPQ R15, $1
	JLE  stored
	ADDQ AX, BX
	minStore(Y7, X7, 0(SP))
	CMPQ R15, $2
	JLE  stored
	ADDQ AX, BX
	minStore(Y8, X8, 4(SP))
	CMPQ R15, $3
	JLE  stored
	ADDQ AX, BX
	minStore(Y9, X9, 8(SP))

stored:
	ADDQ $4, R11
	ADDQ DX, SI
	DECQ R9
	JNZ  row

done:
	VZEROUPPER
	RET

// func q4_1RowsV(w *byte, wstride, rows int, x *byte, xstride, ntok, nb int, out *float32, ostride int)
//
// Q4_1 rows against 1 to 8 q8_1VNNI activation rows.
TEXT ·q4_1RowsV(SB), NOSPLIT, $0-72
	lanesProlog
	lanesConsts
	TESTQ R9, R9
	JZ    done

row:
	MOVQ  SI, R8
	MOVQ  R10, DI
	MOVQ  nb+48(FP), CX
	zeroAccV
	TESTQ CX, CX
	JZ    rowdone

loop:
	nibbles(4(R8))
	wScaleV((R8))
	MOVWLZX 2(R8), AX
	VMOVSS  (R13)(AX*4), X2
	minTokensV

tokdone:
	ADDQ $20, R8
	ADDQ $40, DI
	DECQ CX
	JNZ  loop

rowdone:
	MOVQ ostride+64(FP), AX
	SHLQ $2, AX
	MOVQ R11, BX
	storeV(Y16, X24)
	CMPQ R15, $1
	JLE  stored
	ADDQ AX, BX
	storeV(Y17, X25)
	CMPQ R15, $2
	JLE  stored
	ADDQ AX, BX
	storeV(Y18, X26)
	CMPQ R15, $3
	JLE  stored
	ADDQ AX, BX
	storeV(Y19, X27)
	CMPQ R15, $4
	JLE  stored
	ADDQ AX, BX
	storeV(Y20, X28)
	CMPQ R15, $5
	JLE  stored
	ADDQ AX, BX
	storeV(Y21, X29)
	CMPQ R15, $6
	JLE  stored
	ADDQ AX, BX
	storeV(Y22, X30)
	CMPQ R15, $7
	JLE  stored
	ADDQ AX, BX
	storeV(Y23, X31)

stored:
	ADDQ $4, R11
	ADDQ DX, SI
	DECQ R9
	JNZ  row

done:
	VZEROUPPER
	RET

// func q5_0RowsV(w *byte, wstride, rows int, x *byte, xstride, ntok, nb int, out *float32, ostride int)
//
// Q5_0 rows against 1 to 8 q8LanesVNNI activation rows: the quants as
// q+16 = nibble | (0x10 where the qh bit is set).
TEXT ·q5_0RowsV(SB), NOSPLIT, $0-72
	lanesProlog
	lanesConsts
	qhConsts
	MOVL         $0x10101010, AX
	VMOVD        AX, X11
	VPBROADCASTD X11, Y11
	TESTQ        R9, R9
	JZ           done

row:
	MOVQ  SI, R8
	MOVQ  R10, DI
	MOVQ  nb+48(FP), CX
	zeroAccV
	TESTQ CX, CX
	JZ    rowdone

loop:
	nibbles(6(R8))
	qhBits(2(R8))
	VPAND Y11, Y1, Y1
	VPOR  Y1, Y0, Y0
	wScaleV((R8))
	MOVQ  DI, R12
	q5_0TokV(Y16)
	CMPQ  R15, $1
	JLE   tokdone
	ADDQ  R14, R12
	q5_0TokV(Y17)
	CMPQ  R15, $2
	JLE   tokdone
	ADDQ  R14, R12
	q5_0TokV(Y18)
	CMPQ  R15, $3
	JLE   tokdone
	ADDQ  R14, R12
	q5_0TokV(Y19)
	CMPQ  R15, $4
	JLE   tokdone
	ADDQ  R14, R12
	q5_0TokV(Y20)
	CMPQ  R15, $5
	JLE   tokdone
	ADDQ  R14, R12
	q5_0TokV(Y21)
	CMPQ  R15, $6
	JLE   tokdone
	ADDQ  R14, R12
	q5_0TokV(Y22)
	CMPQ  R15, $7
	JLE   tokdone
	ADDQ  R14, R12
	q5_0TokV(Y23)

tokdone:
	ADDQ $22, R8
	ADDQ $68, DI
	DECQ CX
	JNZ  loop

rowdone:
	MOVQ ostride+64(FP), AX
	SHLQ $2, AX
	MOVQ R11, BX
	storeV0(Y16)
	CMPQ R15, $1
	JLE  stored
	ADDQ AX, BX
	storeV0(Y17)
	CMPQ R15, $2
	JLE  stored
	ADDQ AX, BX
	storeV0(Y18)
	CMPQ R15, $3
	JLE  stored
	ADDQ AX, BX
	storeV0(Y19)
	CMPQ R15, $4
	JLE  stored
	ADDQ AX, BX
	storeV0(Y20)
	CMPQ R15, $5
	JLE  stored
	ADDQ AX, BX
	storeV0(Y21)
	CMPQ R15, $6
	JLE  stored
	ADDQ AX, BX
	storeV0(Y22)
	CMPQ R15, $7
	JLE  stored
	ADDQ AX, BX
	storeV0(Y23)

stored:
	ADDQ $4, R11
	ADDQ DX, SI
	DECQ R9
	JNZ  row

done:
	VZEROUPPER
	RET

// func q5_1RowsV(w *byte, wstride, rows int, x *byte, xstride, ntok, nb int, out *float32, ostride int)
//
// Q5_1 rows against 1 to 8 q8_1VNNI activation rows.
TEXT ·q5_1RowsV(SB), NOSPLIT, $0-72
	lanesProlog
	lanesConsts
	qhConsts
	MOVL         $0x10101010, AX
	VMOVD        AX, X11
	VPBROADCASTD X11, Y11
	TESTQ R9, R9
	JZ    done

row:
	MOVQ  SI, R8
	MOVQ  R10, DI
	MOVQ  nb+48(FP), CX
	zeroAccV
	TESTQ CX, CX
	JZ    rowdone

loop:
	nibbles(8(R8))
	qhBits(4(R8))
	VPAND   Y11, Y1, Y1
	VPOR    Y1, Y0, Y0
	wScaleV((R8))
	MOVWLZX 2(R8), AX
	VMOVSS  (R13)(AX*4), X2
	minTokensV

tokdone:
	ADDQ $24, R8
	ADDQ $40, DI
	DECQ CX
	JNZ  loop

rowdone:
	MOVQ ostride+64(FP), AX
	SHLQ $2, AX
	MOVQ R11, BX
	storeV(Y16, X24)
	CMPQ R15, $1
	JLE  stored
	ADDQ AX, BX
	storeV(Y17, X25)
	CMPQ R15, $2
	JLE  stored
	ADDQ AX, BX
	storeV(Y18, X26)
	CMPQ R15, $3
	JLE  stored
	ADDQ AX, BX
	storeV(Y19, X27)
	CMPQ R15, $4
	JLE  stored
	ADDQ AX, BX
	storeV(Y20, X28)
	CMPQ R15, $5
	JLE  stored
	ADDQ AX, BX
	storeV(Y21, X29)
	CMPQ R15, $6
	JLE  stored
	ADDQ AX, BX
	storeV(Y22, X30)
	CMPQ R15, $7
	JLE  stored
	ADDQ AX, BX
	storeV(Y23, X31)

stored:
	ADDQ $4, R11
	ADDQ DX, SI
	DECQ R9
	JNZ  row

done:
	VZEROUPPER
	RET

// q32QhShuf spreads a broadcast 32-bit qh over 32 bytes: byte j takes qh
// byte j/8 (VPSHUFB works within 128-bit lanes, each holding the whole
// dword).
DATA ·q32QhShuf+0(SB)/8, $0x0000000000000000
DATA ·q32QhShuf+8(SB)/8, $0x0101010101010101
DATA ·q32QhShuf+16(SB)/8, $0x0202020202020202
DATA ·q32QhShuf+24(SB)/8, $0x0303030303030303
GLOBL ·q32QhShuf(SB), RODATA|NOPTR, $32

// iq4nlLUT is kvalues_iq4nl, the IQ4_NL levels, as int8.
DATA ·iq4nlLUT+0(SB)/8, $0xf6eaddcfbfad9881
DATA ·iq4nlLUT+8(SB)/8, $0x7159453526190d01
GLOBL ·iq4nlLUT(SB), RODATA|NOPTR, $16

// IQ4_NL kernel: groups of eight rows (rows 0-3 at R8 + r·DX, 4-7 at R12 +
// r·DX, BX = 3·DX), each block of the eight decoded once onto the stack
// and dotted with each token. Lane l of a token's accumulator (Y8+t) holds
// row p(l), p = [0 2 4 6 1 3 5 7], as in the Q4_0 kernels; permRows8
// (dot_amd64.s) restores row order. Y13 holds the table, Y14 int16 ones,
// Y15 0x0f bytes, Y12 the eight rows' scales in lane order.
//
// Stack: for the row pair k (rows 2k, 2k+1 in the low and high halves),
// the levels' magnitudes of elements 0-15 at 64k, of 16-31 at 64k+32, the
// signed levels at 256+64k and 256+64k+32; the prefetch pointer at 512,
// the group counter at 520.

// func iq4nlRows8(w *byte, wstride, groups int, x *byte, xstride, ntok, nb int, out *float32, ostride int)
TEXT ·iq4nlRows8(SB), NOSPLIT, $528-72
	MOVQ           w+0(FP), SI
	MOVQ           wstride+8(FP), DX
	MOVQ           groups+16(FP), AX
	MOVQ           AX, 520(SP)
	MOVQ           x+24(FP), R10
	MOVQ           xstride+32(FP), R14
	MOVQ           ntok+40(FP), R15
	MOVQ           out+56(FP), R11
	MOVQ           ·f16Table(SB), R13
	LEAQ           (DX)(DX*2), BX
	LEAQ           (R14)(R14*2), R9
	MOVL           $0x0f0f0f0f, AX
	VMOVD          AX, X15
	VPBROADCASTD   X15, Y15
	VPCMPEQW       Y14, Y14, Y14
	VPSRLW         $15, Y14, Y14
	VBROADCASTI128 ·iq4nlLUT(SB), Y13
	CMPQ           520(SP), $0
	JLE            done

group:
	MOVQ   SI, R8
	LEAQ   (SI)(DX*4), R12
	LEAQ   (SI)(DX*8), AX
	MOVQ   AX, 512(SP)
	MOVQ   R10, DI
	MOVQ   nb+48(FP), CX
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	TESTQ  CX, CX
	JZ     groupdone

loop:
	// Eight interleaved row streams defeat the hardware prefetcher: fetch
	// the next group's rows (contiguous when wstride is the row size)
	// ahead, 192 bytes per block against the 144 consumed, as the Q4_0
	// kernels do. Prefetches past the matrix are harmless.
	MOVQ       512(SP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	ADDQ       $192, AX
	MOVQ       AX, 512(SP)
	nlDecode(2(R8), 2(R8)(DX*1), 0, 32, 256, 288)
	nlDecode(2(R8)(DX*2), 2(R8)(BX*1), 64, 96, 320, 352)
	nlDecode(2(R12), 2(R12)(DX*1), 128, 160, 384, 416)
	nlDecode(2(R12)(DX*2), 2(R12)(BX*1), 192, 224, 448, 480)
	MOVWLZX    (R8), AX
	VMOVD      AX, X12
	VPINSRW    $1, (R8)(DX*2), X12, X12
	VPINSRW    $2, (R12), X12, X12
	VPINSRW    $3, (R12)(DX*2), X12, X12
	VPINSRW    $4, (R8)(DX*1), X12, X12
	VPINSRW    $5, (R8)(BX*1), X12, X12
	VPINSRW    $6, (R12)(DX*1), X12, X12
	VPINSRW    $7, (R12)(BX*1), X12, X12
	VCVTPH2PS  X12, Y12
	nlToken((DI), 2(DI), 18(DI), Y8)
	CMPQ       R15, $1
	JLE        tokdone
	nlToken((DI)(R14*1), 2(DI)(R14*1), 18(DI)(R14*1), Y9)
	CMPQ       R15, $2
	JLE        tokdone
	nlToken((DI)(R14*2), 2(DI)(R14*2), 18(DI)(R14*2), Y10)
	CMPQ       R15, $3
	JLE        tokdone
	nlToken((DI)(R9*1), 2(DI)(R9*1), 18(DI)(R9*1), Y11)

tokdone:
	ADDQ $18, R8
	ADDQ $18, R12
	ADDQ $34, DI
	DECQ CX
	JNZ  loop

groupdone:
	MOVQ    ostride+64(FP), AX
	SHLQ    $2, AX
	VMOVDQU ·permRows8(SB), Y0
	MOVQ    R11, CX
	VPERMPS Y8, Y0, Y1
	VMOVUPS Y1, (CX)
	CMPQ    R15, $1
	JLE     stored
	ADDQ    AX, CX
	VPERMPS Y9, Y0, Y1
	VMOVUPS Y1, (CX)
	CMPQ    R15, $2
	JLE     stored
	ADDQ    AX, CX
	VPERMPS Y10, Y0, Y1
	VMOVUPS Y1, (CX)
	CMPQ    R15, $3
	JLE     stored
	ADDQ    AX, CX
	VPERMPS Y11, Y0, Y1
	VMOVUPS Y1, (CX)

stored:
	ADDQ $32, R11
	LEAQ (SI)(DX*8), SI
	DECQ 520(SP)
	JNZ  group

done:
	VZEROUPPER
	RET

// Single-token lanes kernels: four rows at a time (R8 + r·DX, BX = 3·DX),
// so that four independent accumulators (Y6-Y9, row r in Y6+r) hide the
// latency of each row's chain of fused multiply-adds; the activation block
// (quants in Y4, d_x in X5) is loaded once for the four. SI row group, R9
// groups left, R10 activation row, R11 output, DI activation block, CX
// block counter, R13 f16Table, R14 prefetch pointer. Q4_1 and Q5_1 keep
// row r's summs at 4r(SP), s_x in X10.

// func q5_0Rows4(w *byte, wstride, groups int, x *byte, nb int, out *float32)
//
// Groups of four Q5_0 rows against one Q8_0 activation row.
TEXT ·q5_0Rows4(SB), NOSPLIT, $0-48
	lanes4Prolog
	lanesConsts
	qhConsts
	MOVL         $0xf0f0f0f0, AX
	VMOVD        AX, X11
	VPBROADCASTD X11, Y11
	TESTQ        R9, R9
	JZ           done

group:
	MOVQ  SI, R8
	LEAQ  (SI)(DX*4), R14
	MOVQ  R10, DI
	MOVQ  nb+32(FP), CX
	zeroAcc4
	TESTQ CX, CX
	JZ    groupdone

loop:
	prefetch4(88)
	VMOVDQU 2(DI), Y4
	MOVWLZX (DI), AX
	VMOVSS  (R13)(AX*4), X5
	q5_0Row(6(R8), 2(R8), (R8), Y6)
	q5_0Row(6(R8)(DX*1), 2(R8)(DX*1), (R8)(DX*1), Y7)
	q5_0Row(6(R8)(DX*2), 2(R8)(DX*2), (R8)(DX*2), Y8)
	q5_0Row(6(R8)(BX*1), 2(R8)(BX*1), (R8)(BX*1), Y9)
	ADDQ    $22, R8
	ADDQ    $34, DI
	DECQ    CX
	JNZ     loop

groupdone:
	store4Plain
	ADDQ $16, R11
	LEAQ (SI)(DX*4), SI
	DECQ R9
	JNZ  group

done:
	VZEROUPPER
	RET

// func q4_1Rows4(w *byte, wstride, groups int, x *byte, nb int, out *float32)
//
// Groups of four Q4_1 rows against one Q8_1 activation row.
TEXT ·q4_1Rows4(SB), NOSPLIT, $16-48
	lanes4Prolog
	lanesConsts
	TESTQ R9, R9
	JZ    done

group:
	MOVQ  SI, R8
	LEAQ  (SI)(DX*4), R14
	MOVQ  R10, DI
	MOVQ  nb+32(FP), CX
	zeroAcc4
	MOVQ  $0, 0(SP)
	MOVQ  $0, 8(SP)
	TESTQ CX, CX
	JZ    groupdone

loop:
	prefetch4(80)
	minRows4Block
	nibbles(4(R8))
	minRow((R8), 2(R8), Y6, 0)
	nibbles(4(R8)(DX*1))
	minRow((R8)(DX*1), 2(R8)(DX*1), Y7, 4)
	nibbles(4(R8)(DX*2))
	minRow((R8)(DX*2), 2(R8)(DX*2), Y8, 8)
	nibbles(4(R8)(BX*1))
	minRow((R8)(BX*1), 2(R8)(BX*1), Y9, 12)
	ADDQ $20, R8
	ADDQ $36, DI
	DECQ CX
	JNZ  loop

groupdone:
	store4Summs
	ADDQ $16, R11
	LEAQ (SI)(DX*4), SI
	DECQ R9
	JNZ  group

done:
	VZEROUPPER
	RET

// func q5_1Rows4(w *byte, wstride, groups int, x *byte, nb int, out *float32)
//
// Groups of four Q5_1 rows against one Q8_1 activation row.
TEXT ·q5_1Rows4(SB), NOSPLIT, $16-48
	lanes4Prolog
	lanesConsts
	qhConsts
	MOVL         $0x10101010, AX
	VMOVD        AX, X11
	VPBROADCASTD X11, Y11
	TESTQ        R9, R9
	JZ           done

group:
	MOVQ  SI, R8
	LEAQ  (SI)(DX*4), R14
	MOVQ  R10, DI
	MOVQ  nb+32(FP), CX
	zeroAcc4
	MOVQ  $0, 0(SP)
	MOVQ  $0, 8(SP)
	TESTQ CX, CX
	JZ    groupdone

loop:
	prefetch4(96)
	minRows4Block
	q5_1Quants(8(R8), 4(R8))
	minRow((R8), 2(R8), Y6, 0)
	q5_1Quants(8(R8)(DX*1), 4(R8)(DX*1))
	minRow((R8)(DX*1), 2(R8)(DX*1), Y7, 4)
	q5_1Quants(8(R8)(DX*2), 4(R8)(DX*2))
	minRow((R8)(DX*2), 2(R8)(DX*2), Y8, 8)
	q5_1Quants(8(R8)(BX*1), 4(R8)(BX*1))
	minRow((R8)(BX*1), 2(R8)(BX*1), Y9, 12)
	ADDQ $24, R8
	ADDQ $36, DI
	DECQ CX
	JNZ  loop

groupdone:
	store4Summs
	ADDQ $16, R11
	LEAQ (SI)(DX*4), SI
	DECQ R9
	JNZ  group

done:
	VZEROUPPER
	RET

// func iq4nlRows8x1(w *byte, wstride, groups int, x *byte, nb int, out *float32)
//
// iq4nlRows8 for one token, with the levels kept in registers: Y0 the
// accumulator, Y10 the scales, Y12 the row-order permutation.
TEXT ·iq4nlRows8x1(SB), NOSPLIT, $0-48
	MOVQ           w+0(FP), SI
	MOVQ           wstride+8(FP), DX
	MOVQ           groups+16(FP), R9
	MOVQ           x+24(FP), R10
	MOVQ           out+40(FP), R11
	MOVQ           ·f16Table(SB), R13
	LEAQ           (DX)(DX*2), BX
	MOVL           $0x0f0f0f0f, AX
	VMOVD          AX, X15
	VPBROADCASTD   X15, Y15
	VPCMPEQW       Y14, Y14, Y14
	VPSRLW         $15, Y14, Y14
	VBROADCASTI128 ·iq4nlLUT(SB), Y13
	VMOVDQU        ·permRows8(SB), Y12
	TESTQ          R9, R9
	JZ             done

group:
	MOVQ   SI, R8
	LEAQ   (SI)(DX*4), R12
	LEAQ   (SI)(DX*8), R14
	MOVQ   R10, DI
	MOVQ   nb+32(FP), CX
	VXORPS Y0, Y0, Y0
	TESTQ  CX, CX
	JZ     groupdone

loop:
	PREFETCHT0     (R14)
	PREFETCHT0     64(R14)
	PREFETCHT0     128(R14)
	ADDQ           $192, R14
	VBROADCASTI128 2(DI), Y1
	VBROADCASTI128 18(DI), Y2
	nlPair1(2(R8), 2(R8)(DX*1), Y6)
	nlPair1(2(R8)(DX*2), 2(R8)(BX*1), Y7)
	nlPair1(2(R12), 2(R12)(DX*1), Y8)
	nlPair1(2(R12)(DX*2), 2(R12)(BX*1), Y9)
	VPHADDD        Y7, Y6, Y6
	VPHADDD        Y9, Y8, Y8
	VPHADDD        Y8, Y6, Y6
	VCVTDQ2PS      Y6, Y6
	MOVWLZX        (R8), AX
	VMOVD          AX, X10
	VPINSRW        $1, (R8)(DX*2), X10, X10
	VPINSRW        $2, (R12), X10, X10
	VPINSRW        $3, (R12)(DX*2), X10, X10
	VPINSRW        $4, (R8)(DX*1), X10, X10
	VPINSRW        $5, (R8)(BX*1), X10, X10
	VPINSRW        $6, (R12)(DX*1), X10, X10
	VPINSRW        $7, (R12)(BX*1), X10, X10
	VCVTPH2PS      X10, Y10
	MOVWLZX        (DI), AX
	VBROADCASTSS   (R13)(AX*4), Y5
	VMULPS         Y5, Y10, Y5
	VFMADD231PS    Y5, Y6, Y0
	ADDQ           $18, R8
	ADDQ           $18, R12
	ADDQ           $34, DI
	DECQ           CX
	JNZ            loop

groupdone:
	VPERMPS Y0, Y12, Y0
	VMOVUPS Y0, (R11)
	ADDQ    $32, R11
	LEAQ    (SI)(DX*8), SI
	DECQ    R9
	JNZ     group

done:
	VZEROUPPER
	RET
