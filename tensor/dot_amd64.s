//go:build amd64 && !noasm

#include "textflag.h"

// AVX2+FMA kernels. Each computes the dot products of several weight rows
// (w + r·wstride) with one or more activation rows, looping over rows
// inside the assembly so that a matrix-vector product costs one call per
// chunk of rows. Every output keeps exactly the operation order of the Go
// reference for that type (floats.go, q8.go), whichever kernel computes it,
// so results do not depend on how rows and tokens are grouped.
//
// Register use common to all kernels: SI weight row, DX weight stride, R9
// rows left, R10 activation row, R11 output, R8/DI block pointers, CX block
// counter. Float lengths are multiples of 32 elements (the Go wrappers add
// the tail); block kernels take a block count.

// reduce4x8 folds accumulators Y0..Y3 into X0 as GGML_F32x8_REDUCE:
// (s0+s2)+(s1+s3), halves added, then two horizontal adds.
#define reduce4x8 \
	VADDPS       Y2, Y0, Y0 \
	VADDPS       Y3, Y1, Y1 \
	VADDPS       Y1, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0 \
	VHADDPS      X0, X0, X0 \
	VHADDPS      X0, X0, X0

// hsumStore reduces accumulator Y (low half X) as hsum_float_8 (halves,
// then movehl, then movehdup) and stores the float at DST. Clobbers X1.
#define hsumStore(Y, X, DST) \
	VEXTRACTF128 $1, Y, X1 \
	VADDPS       X, X1, X \
	VMOVHLPS     X, X, X1 \
	VADDPS       X1, X, X \
	VMOVSHDUP    X, X1 \
	VADDSS       X1, X, X \
	MOVSS        X, DST

#define zero4 \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y3, Y3, Y3

// zeroHi16 clears Y16-Y31, the accumulators of the eight-token float
// kernels (f32RowsxT, f16RowsxT, bf16RowsxT).
#define zeroHi16 \
	VPXORD Y16, Y16, Y16 \
	VPXORD Y17, Y17, Y17 \
	VPXORD Y18, Y18, Y18 \
	VPXORD Y19, Y19, Y19 \
	VPXORD Y20, Y20, Y20 \
	VPXORD Y21, Y21, Y21 \
	VPXORD Y22, Y22, Y22 \
	VPXORD Y23, Y23, Y23 \
	VPXORD Y24, Y24, Y24 \
	VPXORD Y25, Y25, Y25 \
	VPXORD Y26, Y26, Y26 \
	VPXORD Y27, Y27, Y27 \
	VPXORD Y28, Y28, Y28 \
	VPXORD Y29, Y29, Y29 \
	VPXORD Y30, Y30, Y30 \
	VPXORD Y31, Y31, Y31

// spillHi16 stores Y16-Y31 at 0-511(SP), where those kernels keep their
// first pass's accumulators.
#define spillHi16 \
	VMOVUPS Y16, 0(SP) \
	VMOVUPS Y17, 32(SP) \
	VMOVUPS Y18, 64(SP) \
	VMOVUPS Y19, 96(SP) \
	VMOVUPS Y20, 128(SP) \
	VMOVUPS Y21, 160(SP) \
	VMOVUPS Y22, 192(SP) \
	VMOVUPS Y23, 224(SP) \
	VMOVUPS Y24, 256(SP) \
	VMOVUPS Y25, 288(SP) \
	VMOVUPS Y26, 320(SP) \
	VMOVUPS Y27, 352(SP) \
	VMOVUPS Y28, 384(SP) \
	VMOVUPS Y29, 416(SP) \
	VMOVUPS Y30, 448(SP) \
	VMOVUPS Y31, 480(SP)

// q8Row leaves in YR the exact integer dot of the Q8_0 weight block row
// whose quants are at W with the activation quants in Y1, in 8 int32 lanes
// of 4 products: |w| (unsigned) times x with w's sign (ggml's
// mul_sum_i8_pairs). Y15 holds int16 ones. Clobbers Y2, Y3.
#define q8Row(W, YR) \
	VMOVDQU    W, Y3 \
	VPABSB     Y3, Y2 \
	VPSIGNB    Y3, Y1, Y3 \
	VPMADDUBSW Y3, Y2, YR \
	VPMADDWD   Y15, YR, YR

// q8Block accumulates one Q8_0 activation block (scale at S, quants at Q)
// against the decoded weight block (Y2 = w quants, Y4 = |w|, Y9 = w's
// scale broadcast) into ACC: d = d_w·d_x broadcast, the 32 products summed
// in 8 int32 lanes of 4 (ggml's mul_sum_i8_pairs_float), converted, and
// FMA'd. R13 points at f16Table; Y15 holds int16 ones. Clobbers BX, Y1,
// Y3, Y5.
#define q8Block(S, Q, ACC) \
	MOVWLZX      S, BX \
	VBROADCASTSS (R13)(BX*4), Y1 \
	VMULPS       Y1, Y9, Y1 \
	VMOVDQU      Q, Y3 \
	VPSIGNB      Y2, Y3, Y5 \
	VPMADDUBSW   Y5, Y4, Y5 \
	VPMADDWD     Y15, Y5, Y5 \
	VCVTDQ2PS    Y5, Y5 \
	VFMADD231PS  Y5, Y1, ACC

// q8Weights decodes the weight block at R8 into Y9 (scale), Y2, Y4.
#define q8Weights \
	MOVWLZX      (R8), AX \
	VBROADCASTSS (R13)(AX*4), Y9 \
	VMOVDQU      2(R8), Y2 \
	VPSIGNB      Y2, Y2, Y4

// q4Pair computes the exact integer dots of two Q4_0 block rows, whose
// quants are at P and Q, with the activation block (Y1 = y[0:16] twice,
// Y2 = y[16:32] twice, Y3 = 8·(y pair sums) as int16), leaving 4 int32
// partial sums per row in YD (row P low half, row Q high half). Nibbles
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

// Four-token float kernels run two passes over each weight row: the first
// accumulates the elements 0-15 of every 32 (accumulators 0 and 1 of the
// single-token kernel), the second elements 16-31 (accumulators 2 and 3),
// so each token keeps the single-token kernel's four accumulators with 8
// registers live per pass. The first pass's accumulators wait on the stack.

#define zero8 \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y3, Y3, Y3 \
	VXORPS Y4, Y4, Y4 \
	VXORPS Y5, Y5, Y5 \
	VXORPS Y6, Y6, Y6 \
	VXORPS Y7, Y7, Y7

#define spill8 \
	VMOVUPS Y0, 0(SP) \
	VMOVUPS Y1, 32(SP) \
	VMOVUPS Y2, 64(SP) \
	VMOVUPS Y3, 96(SP) \
	VMOVUPS Y4, 128(SP) \
	VMOVUPS Y5, 160(SP) \
	VMOVUPS Y6, 192(SP) \
	VMOVUPS Y7, 224(SP)

// fma4 accumulates the 16 weights in Y8, Y9 against 16 activations at
// offset OFF of each of the four tokens into Y0-Y7 (two per token). DI is
// token 0, R14 the token stride, R12 three strides.
#define fma4(OFF, OFF2) \
	VFMADD231PS OFF(DI), Y8, Y0 \
	VFMADD231PS OFF2(DI), Y9, Y1 \
	VFMADD231PS OFF(DI)(R14*1), Y8, Y2 \
	VFMADD231PS OFF2(DI)(R14*1), Y9, Y3 \
	VFMADD231PS OFF(DI)(R14*2), Y8, Y4 \
	VFMADD231PS OFF2(DI)(R14*2), Y9, Y5 \
	VFMADD231PS OFF(DI)(R12*1), Y8, Y6 \
	VFMADD231PS OFF2(DI)(R12*1), Y9, Y7

// cvtFma is one token's step of the F16 kernel: the 16 halves at A and B
// widened and FMA'd with the weights in Y8, Y9 into ACCA, ACCB.
#define cvtFma(A, B, ACCA, ACCB) \
	VCVTPH2PS   A, Y10 \
	VCVTPH2PS   B, Y11 \
	VFMADD231PS Y10, Y8, ACCA \
	VFMADD231PS Y11, Y9, ACCB

// bf16Step is one token's step of the BF16 kernel: the 16 widened
// activations at A and B (bf16Wide) multiplied by the weights in Y8, Y9 and
// added (unfused) into ACCA, ACCB.
#define bf16Step(A, B, ACCA, ACCB) \
	VMULPS A, Y8, Y10 \
	VMULPS B, Y9, Y11 \
	VADDPS Y10, ACCA, ACCA \
	VADDPS Y11, ACCB, ACCB

// bf16Weights widens the 16 bfloat16 weights at A and B into Y8, Y9.
#define bf16Weights(A, B) \
	VPMOVZXWD A, Y8 \
	VPMOVZXWD B, Y9 \
	VPSLLD    $16, Y8, Y8 \
	VPSLLD    $16, Y9, Y9

// red4 finishes one token: YA, YB hold its accumulators 2 and 3, OA, OB
// the stack slots of 0 and 1; (s0+s2)+(s1+s3), halves, two horizontal adds
// (GGML_F32x8_REDUCE), stored at DST.
#define red4(YA, YB, XA, OA, OB, DST) \
	VADDPS       OA, YA, YA \
	VADDPS       OB, YB, YB \
	VADDPS       YB, YA, YA \
	VEXTRACTF128 $1, YA, X8 \
	VADDPS       X8, XA, XA \
	VHADDPS      XA, XA, XA \
	VHADDPS      XA, XA, XA \
	MOVSS        XA, DST

// redBF16 is red4 with ggml_vec_dot_bf16's final steps (movehl, movehdup).
#define redBF16(YA, YB, XA, OA, OB, DST) \
	VADDPS       OA, YA, YA \
	VADDPS       OB, YB, YB \
	VADDPS       YB, YA, YA \
	VEXTRACTF128 $1, YA, X8 \
	VADDPS       X8, XA, XA \
	VMOVHLPS     XA, XA, X8 \
	VADDPS       X8, XA, XA \
	VMOVSHDUP    XA, X8 \
	VADDSS       X8, XA, XA \
	MOVSS        XA, DST

// rows4Prologue loads the arguments shared by the four-token float kernels.
#define rows4Prologue \
	MOVQ w+0(FP), SI \
	MOVQ wstride+8(FP), DX \
	MOVQ rows+16(FP), R9 \
	MOVQ x+24(FP), R10 \
	MOVQ xstride+32(FP), R14 \
	MOVQ out+48(FP), R11 \
	LEAQ (R14)(R14*2), R12

// passStart resets the pointers, the counter (n/32 steps) and Y0-Y7 for
// one pass over the current row; it jumps to DONE if n < 32.
#define passStart(DONE) \
	MOVQ  SI, R8 \
	MOVQ  R10, DI \
	MOVQ  n+40(FP), CX \
	zero8 \
	SHRQ  $5, CX \
	JZ    DONE

// outAddrs sets AX to the byte stride between tokens' outputs and BX to
// token 2's output.
#define outAddrs \
	MOVQ ostride+56(FP), AX \
	SHLQ $2, AX \
	LEAQ (R11)(AX*2), BX

// f32Step is f32RowsxT's multiply-add of one token: the weights Y8, Y9
// times the activations at A and B into ACCA and ACCB.
#define f32Step(A, B, ACCA, ACCB) \
	VFMADD231PS A, Y8, ACCA \
	VFMADD231PS B, Y9, ACCB

// xtChain runs STEP for each of the RowsxT kernels' 1 to 8 tokens (BX of
// them) at offsets OA and OB of token t's activations (DI + t·R14 for
// t < 4, R9 + (t-4)·R14 after; R13 is 3·R14), accumulating token t in
// Y16+2t and Y17+2t, and jumps to SKIP after the last token.
#define xtChain(STEP, OA, OB, SKIP) \
	STEP(OA(DI), OB(DI), Y16, Y17) \
	CMPQ BX, $1 \
	JLE  SKIP \
	STEP(OA(DI)(R14*1), OB(DI)(R14*1), Y18, Y19) \
	CMPQ BX, $2 \
	JLE  SKIP \
	STEP(OA(DI)(R14*2), OB(DI)(R14*2), Y20, Y21) \
	CMPQ BX, $3 \
	JLE  SKIP \
	STEP(OA(DI)(R13*1), OB(DI)(R13*1), Y22, Y23) \
	CMPQ BX, $4 \
	JLE  SKIP \
	STEP(OA(R9), OB(R9), Y24, Y25) \
	CMPQ BX, $5 \
	JLE  SKIP \
	STEP(OA(R9)(R14*1), OB(R9)(R14*1), Y26, Y27) \
	CMPQ BX, $6 \
	JLE  SKIP \
	STEP(OA(R9)(R14*2), OB(R9)(R14*2), Y28, Y29) \
	CMPQ BX, $7 \
	JLE  SKIP \
	STEP(OA(R9)(R13*1), OB(R9)(R13*1), Y30, Y31)

// xtOut reduces token t's second-pass accumulators (YA, YB) with its
// first pass's spilled at S and S+32 (SP) through RED into (R9).
#define xtOut(RED, YA, YB, S, S2) \
	VMOVAPS YA, Y0 \
	VMOVAPS YB, Y1 \
	RED(Y0, Y1, X0, S(SP), S2(SP), (R9))

// xtStores stores the RowsxT kernels' 1 to 8 tokens' sums (BX of them)
// through RED, token t at R9 + t·AX, and jumps to DONE after the last.
#define xtStores(RED, DONE) \
	xtOut(RED, Y16, Y17, 0, 32) \
	CMPQ BX, $1 \
	JLE  DONE \
	ADDQ AX, R9 \
	xtOut(RED, Y18, Y19, 64, 96) \
	CMPQ BX, $2 \
	JLE  DONE \
	ADDQ AX, R9 \
	xtOut(RED, Y20, Y21, 128, 160) \
	CMPQ BX, $3 \
	JLE  DONE \
	ADDQ AX, R9 \
	xtOut(RED, Y22, Y23, 192, 224) \
	CMPQ BX, $4 \
	JLE  DONE \
	ADDQ AX, R9 \
	xtOut(RED, Y24, Y25, 256, 288) \
	CMPQ BX, $5 \
	JLE  DONE \
	ADDQ AX, R9 \
	xtOut(RED, Y26, Y27, 320, 352) \
	CMPQ BX, $6 \
	JLE  DONE \
	ADDQ AX, R9 \
	xtOut(RED, Y28, Y29, 384, 416) \
	CMPQ BX, $7 \
	JLE  DONE \
	ADDQ AX, R9 \
	xtOut(RED, Y30, Y31, 448, 480)

// The Rows4 and RowsxT kernels' weight loads for their two passes over a
// row, 16 elements a pass and step: into Y8 and Y9 (as float32), with the
// prefetch of the next row in the first pass. F32's first pass reads the
// even cache lines of the row and fetches the odd ones for the second
// pass as well, while streaming.
#define f32WA \
	PREFETCHT0 64(R8) \
	PREFETCHT0 (R8)(DX*1) \
	PREFETCHT0 64(R8)(DX*1) \
	VMOVUPS (R8), Y8 \
	VMOVUPS 32(R8), Y9
#define f32WB \
	VMOVUPS 64(R8), Y8 \
	VMOVUPS 96(R8), Y9
#define f16WA \
	PREFETCHT0 (R8)(DX*1) \
	VCVTPH2PS (R8), Y8 \
	VCVTPH2PS 16(R8), Y9
#define f16WB \
	VCVTPH2PS 32(R8), Y8 \
	VCVTPH2PS 48(R8), Y9
#define bf16WA \
	PREFETCHT0 (R8)(DX*1) \
	bf16Weights((R8), 16(R8))
#define bf16WB \
	bf16Weights(32(R8), 48(R8))

// rowsxT is a whole RowsxT kernel (see f32RowsxT): per weight row, pass a
// (weights WA, token offsets OA and OB) accumulates every token in
// Y16-Y31 through STEP, spills them, pass b (WB, OC, OD) accumulates
// afresh, and xtStores reduces both passes through RED; each step
// advances the weights WADV and the activations XADV bytes.
#define rowsxT(WA, WB, STEP, OA, OB, OC, OD, WADV, XADV, RED) \
	MOVQ  w+0(FP), SI \
	MOVQ  wstride+8(FP), DX \
	MOVQ  rows+16(FP), R12 \
	MOVQ  x+24(FP), R10 \
	MOVQ  xstride+32(FP), R14 \
	MOVQ  ntok+40(FP), BX \
	MOVQ  out+56(FP), R11 \
	LEAQ  (R14)(R14*2), R13 \
	TESTQ R12, R12 \
	JZ    xtdone \
xtrow: \
	MOVQ  SI, R8 \
	MOVQ  R10, DI \
	MOVQ  n+48(FP), CX \
	zeroHi16 \
	SHRQ  $5, CX \
	JZ    xta \
xtloopa: \
	WA \
	LEAQ (DI)(R14*4), R9 \
	xtChain(STEP, OA, OB, xtatok) \
xtatok: \
	ADDQ  $WADV, R8 \
	ADDQ  $XADV, DI \
	DECQ  CX \
	JNZ   xtloopa \
xta: \
	spillHi16 \
	MOVQ  SI, R8 \
	MOVQ  R10, DI \
	MOVQ  n+48(FP), CX \
	zeroHi16 \
	SHRQ  $5, CX \
	JZ    xtb \
xtloopb: \
	WB \
	LEAQ (DI)(R14*4), R9 \
	xtChain(STEP, OC, OD, xtbtok) \
xtbtok: \
	ADDQ  $WADV, R8 \
	ADDQ  $XADV, DI \
	DECQ  CX \
	JNZ   xtloopb \
xtb: \
	MOVQ ostride+64(FP), AX \
	SHLQ $2, AX \
	MOVQ R11, R9 \
	xtStores(RED, xtstored) \
xtstored: \
	ADDQ $4, R11 \
	ADDQ DX, SI \
	DECQ R12 \
	JNZ  xtrow \
xtdone: \
	VZEROUPPER \
	RET

// tok4 runs STEP for the four tokens of a Rows4 kernel at offsets OA and
// OB of token t's activations (DI + t·R14; R12 is 3·R14) into Y2t, Y2t+1.
#define tok4(STEP, OA, OB) \
	STEP(OA(DI), OB(DI), Y0, Y1) \
	STEP(OA(DI)(R14*1), OB(DI)(R14*1), Y2, Y3) \
	STEP(OA(DI)(R14*2), OB(DI)(R14*2), Y4, Y5) \
	STEP(OA(DI)(R12*1), OB(DI)(R12*1), Y6, Y7)

// rows4 is a whole Rows4 kernel (four tokens, see f32Rows4): per weight
// row, pass a (weights WA, token steps TA) and, after spilling its sums,
// pass b (WB, TB), each step advancing the weights WADV and the
// activations XADV bytes; then RED reduces both passes of each token into
// its output.
#define rows4(WA, WB, TA, TB, WADV, XADV, RED) \
	rows4Prologue \
	TESTQ R9, R9 \
	JZ    x4done \
x4row: \
	passStart(x4a) \
x4loopa: \
	WA \
	TA \
	ADDQ  $WADV, R8 \
	ADDQ  $XADV, DI \
	DECQ  CX \
	JNZ   x4loopa \
x4a: \
	spill8 \
	passStart(x4b) \
x4loopb: \
	WB \
	TB \
	ADDQ  $WADV, R8 \
	ADDQ  $XADV, DI \
	DECQ  CX \
	JNZ   x4loopb \
x4b: \
	outAddrs \
	RED(Y0, Y1, X0, 0(SP), 32(SP), (R11)) \
	RED(Y2, Y3, X2, 64(SP), 96(SP), (R11)(AX*1)) \
	RED(Y4, Y5, X4, 128(SP), 160(SP), (BX)) \
	RED(Y6, Y7, X6, 192(SP), 224(SP), (BX)(AX*1)) \
	ADDQ $4, R11 \
	ADDQ DX, SI \
	DECQ R9 \
	JNZ  x4row \
x4done: \
	VZEROUPPER \
	RET

// q8tFirst and q8tNext are one group of four of q8_0Rows8T's token loop:
// the token's four quants at XO(R9) broadcast into B, signed by the
// weights' signs at SO(R11), multiplied by the weights' magnitudes WR
// (VPMADDUBSW, into P) and summed in pairs (VPMADDWD by Y15's ones): into
// ACC (q8tFirst) or added to it (q8tNext).
#define q8tFirst(XO, SO, WR, B, P, ACC) \
	VPBROADCASTD XO(R9), B \
	VPSIGNB      SO(R11), B, B \
	VPMADDUBSW   B, WR, P \
	VPMADDWD     Y15, P, ACC
#define q8tNext(XO, SO, WR, B, P, ACC) \
	VPBROADCASTD XO(R9), B \
	VPSIGNB      SO(R11), B, B \
	VPMADDUBSW   B, WR, P \
	VPMADDWD     Y15, P, P \
	VPADDD       P, ACC, ACC

// func f32Rows(w *byte, wstride, rows int, x *byte, n int, out *float32)
TEXT ·f32Rows(SB), NOSPLIT, $0-48
	MOVQ  w+0(FP), SI
	MOVQ  wstride+8(FP), DX
	MOVQ  rows+16(FP), R9
	MOVQ  x+24(FP), R10
	MOVQ  out+40(FP), R11
	TESTQ R9, R9
	JZ    f32done

f32row:
	MOVQ SI, R8
	MOVQ R10, DI
	MOVQ n+32(FP), CX
	zero4
	SHRQ $5, CX
	JZ   f32reduce

f32loop:
	VMOVUPS     (R8), Y4
	VMOVUPS     32(R8), Y5
	VMOVUPS     64(R8), Y6
	VMOVUPS     96(R8), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, R8
	ADDQ        $128, DI
	DECQ        CX
	JNZ         f32loop

f32reduce:
	reduce4x8
	MOVSS X0, (R11)
	ADDQ  $4, R11
	ADDQ  DX, SI
	DECQ  R9
	JNZ   f32row

f32done:
	VZEROUPPER
	RET

// func f16Rows(w *byte, wstride, rows int, x *byte, n int, out *float32)
TEXT ·f16Rows(SB), NOSPLIT, $0-48
	MOVQ  w+0(FP), SI
	MOVQ  wstride+8(FP), DX
	MOVQ  rows+16(FP), R9
	MOVQ  x+24(FP), R10
	MOVQ  out+40(FP), R11
	TESTQ R9, R9
	JZ    f16done

f16row:
	MOVQ SI, R8
	MOVQ R10, DI
	MOVQ n+32(FP), CX
	zero4
	SHRQ $5, CX
	JZ   f16reduce

f16loop:
	VCVTPH2PS   (R8), Y4
	VCVTPH2PS   16(R8), Y5
	VCVTPH2PS   32(R8), Y6
	VCVTPH2PS   48(R8), Y7
	VCVTPH2PS   (DI), Y8
	VCVTPH2PS   16(DI), Y9
	VCVTPH2PS   32(DI), Y10
	VCVTPH2PS   48(DI), Y11
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y1
	VFMADD231PS Y10, Y6, Y2
	VFMADD231PS Y11, Y7, Y3
	ADDQ        $64, R8
	ADDQ        $64, DI
	DECQ        CX
	JNZ         f16loop

f16reduce:
	reduce4x8
	MOVSS X0, (R11)
	ADDQ  $4, R11
	ADDQ  DX, SI
	DECQ  R9
	JNZ   f16row

f16done:
	VZEROUPPER
	RET

// func bf16Rows(w *byte, wstride, rows int, x *byte, n int, out *float32)
//
// x holds widened activations (bf16Wide: n float32s, each exactly a
// bfloat16), so only the weights are converted.
TEXT ·bf16Rows(SB), NOSPLIT, $0-48
	MOVQ  w+0(FP), SI
	MOVQ  wstride+8(FP), DX
	MOVQ  rows+16(FP), R9
	MOVQ  x+24(FP), R10
	MOVQ  out+40(FP), R11
	TESTQ R9, R9
	JZ    bf16done

bf16row:
	MOVQ SI, R8
	MOVQ R10, DI
	MOVQ n+32(FP), CX
	zero4
	SHRQ $5, CX
	JZ   bf16reduce

bf16loop:
	VPMOVZXWD (R8), Y4
	VPMOVZXWD 16(R8), Y5
	VPMOVZXWD 32(R8), Y6
	VPMOVZXWD 48(R8), Y7
	VPSLLD    $16, Y4, Y4
	VPSLLD    $16, Y5, Y5
	VPSLLD    $16, Y6, Y6
	VPSLLD    $16, Y7, Y7
	VMULPS    (DI), Y4, Y4
	VMULPS    32(DI), Y5, Y5
	VMULPS    64(DI), Y6, Y6
	VMULPS    96(DI), Y7, Y7
	VADDPS    Y4, Y0, Y0
	VADDPS    Y5, Y1, Y1
	VADDPS    Y6, Y2, Y2
	VADDPS    Y7, Y3, Y3
	ADDQ      $64, R8
	ADDQ      $128, DI
	DECQ      CX
	JNZ       bf16loop

bf16reduce:
	// ggml_vec_dot_bf16 (AVX2): (c1+c3)+(c2+c4), then as hsum_float_8.
	VADDPS Y2, Y0, Y0
	VADDPS Y3, Y1, Y1
	VADDPS Y1, Y0, Y0
	hsumStore(Y0, X0, (R11))
	ADDQ   $4, R11
	ADDQ   DX, SI
	DECQ   R9
	JNZ    bf16row

bf16done:
	VZEROUPPER
	RET

// func f32Rows4(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)
TEXT ·f32Rows4(SB), NOSPLIT, $256-64
	rows4(f32WA, f32WB, fma4(0, 32), fma4(64, 96), 128, 128, red4)

// func f16Rows4(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)
TEXT ·f16Rows4(SB), NOSPLIT, $256-64
	rows4(f16WA, f16WB, tok4(cvtFma, 0, 16), tok4(cvtFma, 32, 48), 64, 64, red4)

// cvtFma5 is cvtFma with the weights in Y10, Y11 and Y12, Y13 for the
// widened activations (f16Rows5 keeps ten accumulators in Y0-Y9).
#define cvtFma5(A, B, ACCA, ACCB) \
	VCVTPH2PS   A, Y12 \
	VCVTPH2PS   B, Y13 \
	VFMADD231PS Y12, Y10, ACCA \
	VFMADD231PS Y13, Y11, ACCB

// red5 is red4 with X12 for its temporary (X8 is token 4's).
#define red5(YA, YB, XA, OA, OB, DST) \
	VADDPS       OA, YA, YA \
	VADDPS       OB, YB, YB \
	VADDPS       YB, YA, YA \
	VEXTRACTF128 $1, YA, X12 \
	VADDPS       X12, XA, XA \
	VHADDPS      XA, XA, XA \
	VHADDPS      XA, XA, XA \
	MOVSS        XA, DST

// func f16Rows5(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)
//
// f16Rows4 for five tokens (x + t·xstride, t < 5): the two passes over
// each row keep ten accumulators (two per token) in Y0-Y9; the first
// pass's wait on the stack (token t at 64t).
TEXT ·f16Rows5(SB), NOSPLIT, $320-64
	rows4Prologue
	TESTQ R9, R9
	JZ    f16x5done

f16x5row:
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	passStart(f16x5a)

f16x5loopa:
	PREFETCHT0 (R8)(DX*1)
	VCVTPH2PS  (R8), Y10
	VCVTPH2PS  16(R8), Y11
	cvtFma5((DI), 16(DI), Y0, Y1)
	cvtFma5((DI)(R14*1), 16(DI)(R14*1), Y2, Y3)
	cvtFma5((DI)(R14*2), 16(DI)(R14*2), Y4, Y5)
	cvtFma5((DI)(R12*1), 16(DI)(R12*1), Y6, Y7)
	cvtFma5((DI)(R14*4), 16(DI)(R14*4), Y8, Y9)
	ADDQ       $64, R8
	ADDQ       $64, DI
	DECQ       CX
	JNZ        f16x5loopa

f16x5a:
	spill8
	VMOVUPS Y8, 256(SP)
	VMOVUPS Y9, 288(SP)
	VXORPS  Y8, Y8, Y8
	VXORPS  Y9, Y9, Y9
	passStart(f16x5b)

f16x5loopb:
	VCVTPH2PS 32(R8), Y10
	VCVTPH2PS 48(R8), Y11
	cvtFma5(32(DI), 48(DI), Y0, Y1)
	cvtFma5(32(DI)(R14*1), 48(DI)(R14*1), Y2, Y3)
	cvtFma5(32(DI)(R14*2), 48(DI)(R14*2), Y4, Y5)
	cvtFma5(32(DI)(R12*1), 48(DI)(R12*1), Y6, Y7)
	cvtFma5(32(DI)(R14*4), 48(DI)(R14*4), Y8, Y9)
	ADDQ      $64, R8
	ADDQ      $64, DI
	DECQ      CX
	JNZ       f16x5loopb

f16x5b:
	outAddrs
	red5(Y0, Y1, X0, 0(SP), 32(SP), (R11))
	red5(Y2, Y3, X2, 64(SP), 96(SP), (R11)(AX*1))
	red5(Y4, Y5, X4, 128(SP), 160(SP), (BX))
	red5(Y6, Y7, X6, 192(SP), 224(SP), (BX)(AX*1))
	red5(Y8, Y9, X8, 256(SP), 288(SP), (R11)(AX*4))
	ADDQ $4, R11
	ADDQ DX, SI
	DECQ R9
	JNZ  f16x5row

f16x5done:
	VZEROUPPER
	RET

// func bf16Rows4(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)
TEXT ·bf16Rows4(SB), NOSPLIT, $256-64
	rows4(bf16WA, bf16WB, tok4(bf16Step, 0, 32), tok4(bf16Step, 64, 96), 64, 128, redBF16)

// func f32RowsxT(w *byte, wstride, rows int, x *byte, xstride, ntok, n int, out *float32, ostride int)
//
// The four-token two-pass scheme for 1 to 8 tokens (x + t·xstride, t <
// ntok) in one pass pair over each weight row, out[t·ostride + r]; token t
// accumulates in Y16+2t and Y17+2t (AVX-512 VL registers). n is a multiple
// of 32. BX holds ntok, R13 three token strides, R9 token 4's row.
TEXT ·f32RowsxT(SB), NOSPLIT, $512-72
	rowsxT(f32WA, f32WB, f32Step, 0, 32, 64, 96, 128, 128, red4)

// func f16RowsxT(w *byte, wstride, rows int, x *byte, xstride, ntok, n int, out *float32, ostride int)
//
// The four-token two-pass scheme for 1 to 8 tokens (x + t·xstride, t <
// ntok) in one pass pair over each weight row, out[t·ostride + r]; token t
// accumulates in Y16+2t and Y17+2t (AVX-512 VL registers). n is a multiple
// of 32. BX holds ntok, R13 three token strides, R9 token 4's row.
TEXT ·f16RowsxT(SB), NOSPLIT, $512-72
	rowsxT(f16WA, f16WB, cvtFma, 0, 16, 32, 48, 64, 64, red4)

// func bf16RowsxT(w *byte, wstride, rows int, x *byte, xstride, ntok, n int, out *float32, ostride int)
//
// f16RowsxT's scheme with BF16's arithmetic (bf16Step, redBF16): 1 to 8
// tokens of widened activations (bf16Wide, x + t·xstride, t < ntok) in one
// pass pair over each weight row, out[t·ostride + r]; token t accumulates in
// Y16+2t and Y17+2t (AVX-512 VL registers). n is a multiple of 32. BX holds
// ntok, R13 three token strides, R9 token 4's row.
TEXT ·bf16RowsxT(SB), NOSPLIT, $512-72
	rowsxT(bf16WA, bf16WB, bf16Step, 0, 32, 64, 96, 64, 128, redBF16)

// func q8_0Rows8(w *byte, wstride, groups int, x *byte, xstride, ntok, nb int, out *float32, ostride int)
//
// Groups of eight Q8_0 weight rows against ntok (1 to 8) Q8_0 activation
// rows (x + t·xstride), writing out[t·ostride + r]. Each row has its own
// lane of a token's accumulator, updated once per block with
// acc = fma(float32(isum), d_w·d_x, acc), the order of dotQ8_0Generic; the
// eight rows' lane sums are folded into one vector per token with VPHADDD.
// The accumulators (token t at 32t), the prefetch pointer (256) and the
// group counter (264) live on the stack; R15 is 32·(the current token).
TEXT ·q8_0Rows8(SB), NOSPLIT, $272-72
	MOVQ     w+0(FP), SI
	MOVQ     wstride+8(FP), DX
	MOVQ     groups+16(FP), AX
	MOVQ     AX, 264(SP)
	MOVQ     x+24(FP), R10
	MOVQ     xstride+32(FP), R14
	MOVQ     out+56(FP), R11
	MOVQ     ·f16Table(SB), R13
	LEAQ     (DX)(DX*2), BX
	VPCMPEQW Y15, Y15, Y15
	VPSRLW   $15, Y15, Y15
	CMPQ     264(SP), $0
	JLE      q8gdone

q8group:
	MOVQ   SI, R8
	LEAQ   (SI)(DX*4), R12
	LEAQ   (SI)(DX*8), AX
	MOVQ   AX, 256(SP)
	MOVQ   R10, DI
	MOVQ   nb+48(FP), CX
	VXORPS Y0, Y0, Y0
	VMOVUPS Y0, 0(SP)
	VMOVUPS Y0, 32(SP)
	VMOVUPS Y0, 64(SP)
	VMOVUPS Y0, 96(SP)
	VMOVUPS Y0, 128(SP)
	VMOVUPS Y0, 160(SP)
	VMOVUPS Y0, 192(SP)
	VMOVUPS Y0, 224(SP)
	TESTQ  CX, CX
	JZ     q8gstore

q8gloop:
	// Fetch the next row group ahead, as q4_0Rows8V1 does: 320 bytes per
	// block against the 272 consumed.
	MOVQ       256(SP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	PREFETCHT0 192(AX)
	PREFETCHT0 256(AX)
	ADDQ       $320, AX
	MOVQ       AX, 256(SP)
	MOVWLZX    (R8), AX
	VMOVD      AX, X14
	VPINSRW    $1, (R8)(DX*1), X14, X14
	VPINSRW    $2, (R8)(DX*2), X14, X14
	VPINSRW    $3, (R8)(BX*1), X14, X14
	VPINSRW    $4, (R12), X14, X14
	VPINSRW    $5, (R12)(DX*1), X14, X14
	VPINSRW    $6, (R12)(DX*2), X14, X14
	VPINSRW    $7, (R12)(BX*1), X14, X14
	VCVTPH2PS  X14, Y14
	MOVQ       DI, R9
	XORQ       R15, R15

q8gtok:
	VMOVDQU      2(R9), Y1
	q8Row(2(R8), Y4)
	q8Row(2(R8)(DX*1), Y5)
	q8Row(2(R8)(DX*2), Y6)
	q8Row(2(R8)(BX*1), Y7)
	q8Row(2(R12), Y8)
	q8Row(2(R12)(DX*1), Y9)
	q8Row(2(R12)(DX*2), Y10)
	q8Row(2(R12)(BX*1), Y11)
	VPHADDD      Y5, Y4, Y4
	VPHADDD      Y7, Y6, Y6
	VPHADDD      Y9, Y8, Y8
	VPHADDD      Y11, Y10, Y10
	VPHADDD      Y6, Y4, Y4
	VPHADDD      Y10, Y8, Y8
	VPERM2I128   $0x20, Y8, Y4, Y5
	VPERM2I128   $0x31, Y8, Y4, Y6
	VPADDD       Y6, Y5, Y5
	VCVTDQ2PS    Y5, Y5
	MOVWLZX      (R9), AX
	VBROADCASTSS (R13)(AX*4), Y0
	VMULPS       Y14, Y0, Y0
	VMOVUPS      (SP)(R15*1), Y2
	VFMADD231PS  Y0, Y5, Y2
	VMOVUPS      Y2, (SP)(R15*1)
	ADDQ         R14, R9
	ADDQ         $32, R15
	MOVQ         ntok+40(FP), AX
	SHLQ         $5, AX
	CMPQ         R15, AX
	JLT          q8gtok
	ADDQ         $34, R8
	ADDQ         $34, R12
	ADDQ         $34, DI
	DECQ         CX
	JNZ          q8gloop

q8gstore:
	MOVQ ostride+64(FP), CX
	SHLQ $2, CX
	MOVQ R11, R9
	XORQ R15, R15

q8gstoretok:
	VMOVUPS (SP)(R15*1), Y0
	VMOVUPS Y0, (R9)
	ADDQ    CX, R9
	ADDQ    $32, R15
	MOVQ    ntok+40(FP), AX
	SHLQ    $5, AX
	CMPQ    R15, AX
	JLT     q8gstoretok
	ADDQ    $32, R11
	LEAQ    (SI)(DX*8), SI
	DECQ    264(SP)
	JNZ     q8group

q8gdone:
	VZEROUPPER
	RET

// func q8_0Rows8T(w *byte, wstride, groups int, x *byte, xstride, ntok, nb int, out *float32, ostride int)
//
// q8_0Rows8 for 2 to 8 tokens with each block of eight rows transposed
// once for all of them: vector k of the transpose holds, in lane r, the
// quants 4k..4k+3 of row r; the eight vectors go to a 32-byte-aligned
// scratch area (R11: 0-255; 512-767 hold the tokens' accumulators, token t
// at 512 + 32t) and their absolute values stay in Y4, Y5, Y8-Y13. Each token then
// broadcasts its four activation quants of group k against all eight
// rows, so the lanes end up holding the rows' block sums without
// q8_0Rows8's horizontal adds. The integer sums are exact and the float
// operations are q8_0Rows8's: acc = fma(float32(isum), d_w·d_x, acc), the
// order of dotQ8_0Generic. Frame slots: 800 the group's outputs, 808 the
// groups left, 816 the prefetch pointer, 824 32·ntok. Its frame is over
// the NOSPLIT limit, so it has a stack check.
TEXT ·q8_0Rows8T(SB), 0, $832-72
	MOVQ     w+0(FP), SI
	MOVQ     wstride+8(FP), DX
	MOVQ     groups+16(FP), AX
	MOVQ     AX, 808(SP)
	MOVQ     x+24(FP), R10
	MOVQ     xstride+32(FP), R14
	MOVQ     ntok+40(FP), AX
	SHLQ     $5, AX
	MOVQ     AX, 824(SP)
	MOVQ     out+56(FP), AX
	MOVQ     AX, 800(SP)
	MOVQ     ·f16Table(SB), R13
	LEAQ     (DX)(DX*2), BX
	LEAQ     31(SP), R11
	ANDQ     $~31, R11
	VPCMPEQW Y15, Y15, Y15
	VPSRLW   $15, Y15, Y15
	CMPQ     808(SP), $0
	JLE      q8tdone

q8tgroup:
	MOVQ    SI, R8
	LEAQ    (SI)(DX*4), R12
	LEAQ    (SI)(DX*8), AX
	MOVQ    AX, 816(SP)
	MOVQ    R10, DI
	MOVQ    nb+48(FP), CX
	VXORPS  Y0, Y0, Y0
	VMOVAPS Y0, 512(R11)
	VMOVAPS Y0, 544(R11)
	VMOVAPS Y0, 576(R11)
	VMOVAPS Y0, 608(R11)
	VMOVAPS Y0, 640(R11)
	VMOVAPS Y0, 672(R11)
	VMOVAPS Y0, 704(R11)
	VMOVAPS Y0, 736(R11)
	TESTQ   CX, CX
	JZ      q8tstore

q8tloop:
	// Fetch the next row group ahead, as q8_0Rows8 does.
	MOVQ       816(SP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	PREFETCHT0 192(AX)
	PREFETCHT0 256(AX)
	ADDQ       $320, AX
	MOVQ       AX, 816(SP)
	MOVWLZX    (R8), AX
	VMOVD      AX, X14
	VPINSRW    $1, (R8)(DX*1), X14, X14
	VPINSRW    $2, (R8)(DX*2), X14, X14
	VPINSRW    $3, (R8)(BX*1), X14, X14
	VPINSRW    $4, (R12), X14, X14
	VPINSRW    $5, (R12)(DX*1), X14, X14
	VPINSRW    $6, (R12)(DX*2), X14, X14
	VPINSRW    $7, (R12)(BX*1), X14, X14
	VCVTPH2PS  X14, Y14

	// Transpose the eight rows' quants as 8×8 dwords: u_j (Y0-Y3) hold
	// dwords j and j+4 of rows 0-3, v_j (Y4-Y7) those of rows 4-7.
	VMOVDQU     2(R8), Y0
	VMOVDQU     2(R8)(DX*1), Y1
	VMOVDQU     2(R8)(DX*2), Y2
	VMOVDQU     2(R8)(BX*1), Y3
	VMOVDQU     2(R12), Y4
	VMOVDQU     2(R12)(DX*1), Y5
	VMOVDQU     2(R12)(DX*2), Y6
	VMOVDQU     2(R12)(BX*1), Y7
	VPUNPCKLDQ  Y1, Y0, Y8
	VPUNPCKHDQ  Y1, Y0, Y9
	VPUNPCKLDQ  Y3, Y2, Y10
	VPUNPCKHDQ  Y3, Y2, Y11
	VPUNPCKLQDQ Y10, Y8, Y0
	VPUNPCKHQDQ Y10, Y8, Y1
	VPUNPCKLQDQ Y11, Y9, Y2
	VPUNPCKHQDQ Y11, Y9, Y3
	VPUNPCKLDQ  Y5, Y4, Y8
	VPUNPCKHDQ  Y5, Y4, Y9
	VPUNPCKLDQ  Y7, Y6, Y10
	VPUNPCKHDQ  Y7, Y6, Y11
	VPUNPCKLQDQ Y10, Y8, Y4
	VPUNPCKHQDQ Y10, Y8, Y5
	VPUNPCKLQDQ Y11, Y9, Y6
	VPUNPCKHQDQ Y11, Y9, Y7
	VPERM2I128 $0x20, Y4, Y0, Y10
	VPERM2I128 $0x31, Y4, Y0, Y4
	VMOVDQA    Y10, 0(R11)
	VMOVDQA    Y4, 128(R11)
	VPABSB     Y10, Y10
	VPABSB     Y4, Y4
	VPERM2I128 $0x20, Y5, Y1, Y11
	VPERM2I128 $0x31, Y5, Y1, Y5
	VMOVDQA    Y11, 32(R11)
	VMOVDQA    Y5, 160(R11)
	VPABSB     Y11, Y11
	VPABSB     Y5, Y5
	VPERM2I128 $0x20, Y6, Y2, Y12
	VPERM2I128 $0x31, Y6, Y2, Y8
	VMOVDQA    Y12, 64(R11)
	VMOVDQA    Y8, 192(R11)
	VPABSB     Y12, Y12
	VPABSB     Y8, Y8
	VPERM2I128 $0x20, Y7, Y3, Y13
	VPERM2I128 $0x31, Y7, Y3, Y9
	VMOVDQA    Y13, 96(R11)
	VMOVDQA    Y9, 224(R11)
	VPABSB     Y13, Y13
	VPABSB     Y9, Y9
	MOVQ        DI, R9
	XORQ        R15, R15

q8ttok:
	q8tFirst(2, 0, Y10, Y0, Y1, Y6)
	q8tFirst(6, 32, Y11, Y2, Y3, Y7)
	q8tNext(10, 64, Y12, Y0, Y1, Y6)
	q8tNext(14, 96, Y13, Y2, Y3, Y7)
	q8tNext(18, 128, Y4, Y0, Y1, Y6)
	q8tNext(22, 160, Y5, Y2, Y3, Y7)
	q8tNext(26, 192, Y8, Y0, Y1, Y6)
	q8tNext(30, 224, Y9, Y2, Y3, Y7)
	VPADDD       Y7, Y6, Y6
	VCVTDQ2PS    Y6, Y6
	MOVWLZX      (R9), AX
	VBROADCASTSS (R13)(AX*4), Y0
	VMULPS       Y14, Y0, Y0
	VMOVAPS      512(R11)(R15*1), Y2
	VFMADD231PS  Y0, Y6, Y2
	VMOVAPS      Y2, 512(R11)(R15*1)
	ADDQ         R14, R9
	ADDQ         $32, R15
	CMPQ         R15, 824(SP)
	JLT          q8ttok
	ADDQ         $34, R8
	ADDQ         $34, R12
	ADDQ         $34, DI
	DECQ         CX
	JNZ          q8tloop

q8tstore:
	MOVQ ostride+64(FP), CX
	SHLQ $2, CX
	MOVQ 800(SP), R9
	XORQ R15, R15

q8tstoretok:
	VMOVAPS 512(R11)(R15*1), Y0
	VMOVUPS Y0, (R9)
	ADDQ    CX, R9
	ADDQ    $32, R15
	CMPQ    R15, 824(SP)
	JLT     q8tstoretok
	ADDQ    $32, 800(SP)
	LEAQ    (SI)(DX*8), SI
	DECQ    808(SP)
	JNZ     q8tgroup

q8tdone:
	VZEROUPPER
	RET

// func q8_0LanesRows(w *byte, wstride, rows int, x *byte, nb int, out *float32)
TEXT ·q8_0LanesRows(SB), NOSPLIT, $0-48
	MOVQ     w+0(FP), SI
	MOVQ     wstride+8(FP), DX
	MOVQ     rows+16(FP), R9
	MOVQ     x+24(FP), R10
	MOVQ     out+40(FP), R11
	MOVQ     ·f16Table(SB), R13
	VPCMPEQW Y15, Y15, Y15
	VPSRLW   $15, Y15, Y15
	TESTQ    R9, R9
	JZ       q8ldone

q8lrow:
	MOVQ   SI, R8
	MOVQ   R10, DI
	MOVQ   nb+32(FP), CX
	VXORPS Y0, Y0, Y0
	TESTQ  CX, CX
	JZ     q8lrowdone

q8lloop:
	q8Weights
	q8Block((DI), 2(DI), Y0)
	ADDQ $34, R8
	ADDQ $34, DI
	DECQ CX
	JNZ  q8lloop

q8lrowdone:
	hsumStore(Y0, X0, (R11))
	ADDQ $4, R11
	ADDQ DX, SI
	DECQ R9
	JNZ  q8lrow

q8ldone:
	VZEROUPPER
	RET

// func q8_0LanesRows4(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)
//
// Four activation rows (x + t·xstride) at once: out[t·ostride + r]. Each
// weight block is decoded once for the four tokens.
TEXT ·q8_0LanesRows4(SB), NOSPLIT, $0-64
	MOVQ     w+0(FP), SI
	MOVQ     wstride+8(FP), DX
	MOVQ     rows+16(FP), R9
	MOVQ     x+24(FP), R10
	MOVQ     xstride+32(FP), R14
	MOVQ     out+48(FP), R11
	MOVQ     ·f16Table(SB), R13
	LEAQ     (R14)(R14*2), R12
	VPCMPEQW Y15, Y15, Y15
	VPSRLW   $15, Y15, Y15
	TESTQ    R9, R9
	JZ       q8lx4done

q8lx4row:
	MOVQ   SI, R8
	MOVQ   R10, DI
	MOVQ   nb+40(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	TESTQ  CX, CX
	JZ     q8lx4rowdone

q8lx4loop:
	q8Weights
	q8Block((DI), 2(DI), Y0)
	q8Block((DI)(R14*1), 2(DI)(R14*1), Y6)
	q8Block((DI)(R14*2), 2(DI)(R14*2), Y7)
	q8Block((DI)(R12*1), 2(DI)(R12*1), Y8)
	ADDQ $34, R8
	ADDQ $34, DI
	DECQ CX
	JNZ  q8lx4loop

q8lx4rowdone:
	MOVQ ostride+56(FP), AX
	SHLQ $2, AX
	LEAQ (R11)(AX*2), BX
	hsumStore(Y0, X0, (R11))
	hsumStore(Y6, X6, (R11)(AX*1))
	hsumStore(Y7, X7, (BX))
	hsumStore(Y8, X8, (BX)(AX*1))
	ADDQ $4, R11
	ADDQ DX, SI
	DECQ R9
	JNZ  q8lx4row

q8lx4done:
	VZEROUPPER
	RET

// permRows8 puts lanes ordered [r0 r2 r4 r6 r1 r3 r5 r7] back in row order
// (the eight-row Q4_0 and Q8_0 kernels here and in dotq_amd64.s).
DATA ·permRows8+0(SB)/4, $0
DATA ·permRows8+4(SB)/4, $4
DATA ·permRows8+8(SB)/4, $1
DATA ·permRows8+12(SB)/4, $5
DATA ·permRows8+16(SB)/4, $2
DATA ·permRows8+20(SB)/4, $6
DATA ·permRows8+24(SB)/4, $3
DATA ·permRows8+28(SB)/4, $7
GLOBL ·permRows8(SB), RODATA|NOPTR, $32


// func q4_0Rows8V1(w *byte, wstride, groups int, x *byte, nb int, out *float32)
//
// Groups of eight Q4_0 weight rows against one activation row in the
// q8VNNI layout (dotq_amd64.go: the quants at 0 and 16, the scale as
// float32 at 32, 40 bytes a block); each row has its own lane of the
// accumulator, updated once per block with acc = fma(float32(isum),
// d_w·d_x, acc), the order of dotQ4_0Generic. The one-token pass streams
// the weights, so it decodes rows in pairs (q4Pair) and prefetches rather
// than transposing as q4_0Rows8VT (dotq4t_amd64.s) does for several tokens.
TEXT ·q4_0Rows8V1(SB), NOSPLIT, $0-48
	MOVQ         w+0(FP), SI
	MOVQ         wstride+8(FP), DX
	MOVQ         groups+16(FP), R9
	MOVQ         x+24(FP), R10
	MOVQ         out+40(FP), R11
	MOVQ         ·f16Table(SB), R13
	LEAQ         (DX)(DX*2), BX
	MOVL         $0x0f0f0f0f, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	MOVL         $0x08080808, AX
	VMOVD        AX, X13
	VPBROADCASTD X13, Y13
	VPCMPEQW     Y14, Y14, Y14
	VPSRLW       $15, Y14, Y14
	VMOVDQU      ·permRows8(SB), Y12
	TESTQ        R9, R9
	JZ           q4v1done

q4v1group:
	MOVQ   SI, R8
	LEAQ   (SI)(DX*4), R12
	LEAQ   (SI)(DX*8), R14
	MOVQ   R10, DI
	MOVQ   nb+32(FP), CX
	VXORPS Y0, Y0, Y0
	TESTQ  CX, CX
	JZ     q4v1groupdone

q4v1loop:
	// Eight interleaved row streams defeat the hardware prefetcher: fetch
	// the next group's rows (contiguous when wstride is the row size)
	// ahead, 192 bytes per block against the 144 consumed. Prefetches
	// past the matrix are harmless.
	PREFETCHT0     (R14)
	PREFETCHT0     64(R14)
	PREFETCHT0     128(R14)
	ADDQ           $192, R14
	VBROADCASTI128 0(DI), Y1
	VBROADCASTI128 16(DI), Y2
	VPMADDUBSW     Y1, Y13, Y3
	VPMADDUBSW     Y2, Y13, Y4
	VPADDW         Y4, Y3, Y3
	q4Pair(2(R8), 2(R8)(DX*1), X6, Y6, Y7)
	q4Pair(2(R8)(DX*2), 2(R8)(BX*1), X8, Y8, Y7)
	q4Pair(2(R12), 2(R12)(DX*1), X9, Y9, Y4)
	q4Pair(2(R12)(DX*2), 2(R12)(BX*1), X10, Y10, Y4)
	VPHADDD        Y8, Y6, Y6
	VPHADDD        Y10, Y9, Y9
	VPHADDD        Y9, Y6, Y6
	VCVTDQ2PS      Y6, Y6
	MOVWLZX        (R8), AX
	VMOVD          AX, X11
	VPINSRW        $1, (R8)(DX*2), X11, X11
	VPINSRW        $2, (R12), X11, X11
	VPINSRW        $3, (R12)(DX*2), X11, X11
	VPINSRW        $4, (R8)(DX*1), X11, X11
	VPINSRW        $5, (R8)(BX*1), X11, X11
	VPINSRW        $6, (R12)(DX*1), X11, X11
	VPINSRW        $7, (R12)(BX*1), X11, X11
	VCVTPH2PS      X11, Y11
	VBROADCASTSS   32(DI), Y5
	VMULPS         Y5, Y11, Y11
	VFMADD231PS    Y11, Y6, Y0
	ADDQ           $18, R8
	ADDQ           $18, R12
	ADDQ           $40, DI
	DECQ           CX
	JNZ            q4v1loop

q4v1groupdone:
	VPERMPS Y0, Y12, Y0
	VMOVUPS Y0, (R11)
	ADDQ    $32, R11
	LEAQ    (SI)(DX*8), SI
	DECQ    R9
	JNZ     q4v1group

q4v1done:
	VZEROUPPER
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
