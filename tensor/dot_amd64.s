//go:build amd64 && !noasm

#include "textflag.h"
#include "rows_amd64.h"

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
//
// The float kernels of each shape share one loop (ROWS1, ROWSN), given
// the type's steps as macros. Those loops take the arguments they reload
// (n, ostride) as name+off(FP) operands written in the TEXT bodies, and
// are named in capitals: go vet reads a macro call as an instruction, and
// checks such an operand's offset after an upper-case opcode (its size
// not, the names ending in no size letter). The macros all come first, as
// vet checks the stack offsets in any line against the TEXT above it.

// fold4 starts reducing four accumulators s0-s3 (s0 in YA, low half XA;
// s1 in YB; s2, s3 in A2, A3) as GGML_F32x8_REDUCE: (s0+s2)+(s1+s3) in
// YA, then its halves added into XA. T is the temporary.
#define fold4(T, YA, YB, XA, A2, A3) \
	VADDPS       A2, YA, YA \
	VADDPS       A3, YB, YB \
	VADDPS       YB, YA, YA \
	VEXTRACTF128 $1, YA, T \
	VADDPS       T, XA, XA

// reduce4x8 folds accumulators Y0..Y3 into X0 as GGML_F32x8_REDUCE:
// fold4, then two horizontal adds. Clobbers X1.
#define reduce4x8 \
	fold4(X1, Y0, Y1, X0, Y2, Y3) \
	VHADDPS X0, X0, X0 \
	VHADDPS X0, X0, X0

// hsumTail ends hsum_float_8 on the four floats in X (movehl, then
// movehdup) and stores the float at DST. T is the temporary.
#define hsumTail(T, X, DST) \
	VMOVHLPS  X, X, T \
	VADDPS    T, X, X \
	VMOVSHDUP X, T \
	VADDSS    T, X, X \
	MOVSS     X, DST

// hsumStore reduces accumulator Y (low half X) as hsum_float_8 (halves,
// then hsumTail) and stores the float at DST. Clobbers X1.
#define hsumStore(Y, X, DST) \
	VEXTRACTF128 $1, Y, X1 \
	VADDPS       X, X1, X \
	hsumTail(X1, X, DST)

// zero4 and zero8 clear the accumulators Y0-Y3 and Y0-Y7.
#define zero4 \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y3, Y3, Y3

#define zero8 \
	zero4 \
	VXORPS Y4, Y4, Y4 \
	VXORPS Y5, Y5, Y5 \
	VXORPS Y6, Y6, Y6 \
	VXORPS Y7, Y7, Y7

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

// passStart resets the pointers (R8 to the row, DI to the first token's
// activations), the counter (N/32 steps) and the accumulators (ZERO) for
// one pass over the current row; it jumps to DONE if N < 32.
#define passStart(N, ZERO, DONE) \
	MOVQ SI, R8 \
	MOVQ R10, DI \
	MOVQ N, CX \
	ZERO \
	SHRQ $5, CX \
	JZ   DONE

// One-token float kernels (f32Rows, f16Rows, bf16Rows): each step takes
// 32 elements of the row into the four accumulators Y0-Y3.

// f32Step32 accumulates the 32 float32 weights at R8 times the 32
// activations at DI into Y0-Y3 and advances R8, DI. Clobbers Y4-Y7.
#define f32Step32 \
	VMOVUPS     (R8), Y4 \
	VMOVUPS     32(R8), Y5 \
	VMOVUPS     64(R8), Y6 \
	VMOVUPS     96(R8), Y7 \
	VFMADD231PS (DI), Y4, Y0 \
	VFMADD231PS 32(DI), Y5, Y1 \
	VFMADD231PS 64(DI), Y6, Y2 \
	VFMADD231PS 96(DI), Y7, Y3 \
	ADDQ        $128, R8 \
	ADDQ        $128, DI

// f16Step32 is f32Step32 for float16 weights and activations, both
// widened. Clobbers Y4-Y11.
#define f16Step32 \
	VCVTPH2PS   (R8), Y4 \
	VCVTPH2PS   16(R8), Y5 \
	VCVTPH2PS   32(R8), Y6 \
	VCVTPH2PS   48(R8), Y7 \
	VCVTPH2PS   (DI), Y8 \
	VCVTPH2PS   16(DI), Y9 \
	VCVTPH2PS   32(DI), Y10 \
	VCVTPH2PS   48(DI), Y11 \
	VFMADD231PS Y8, Y4, Y0 \
	VFMADD231PS Y9, Y5, Y1 \
	VFMADD231PS Y10, Y6, Y2 \
	VFMADD231PS Y11, Y7, Y3 \
	ADDQ        $64, R8 \
	ADDQ        $64, DI

// bf16Step32 is f32Step32 for bfloat16 weights (widened) against widened
// activations (bf16Wide), multiplied and added unfused as
// ggml_vec_dot_bf16. Clobbers Y4-Y7.
#define bf16Step32 \
	VPMOVZXWD (R8), Y4 \
	VPMOVZXWD 16(R8), Y5 \
	VPMOVZXWD 32(R8), Y6 \
	VPMOVZXWD 48(R8), Y7 \
	VPSLLD    $16, Y4, Y4 \
	VPSLLD    $16, Y5, Y5 \
	VPSLLD    $16, Y6, Y6 \
	VPSLLD    $16, Y7, Y7 \
	VMULPS    (DI), Y4, Y4 \
	VMULPS    32(DI), Y5, Y5 \
	VMULPS    64(DI), Y6, Y6 \
	VMULPS    96(DI), Y7, Y7 \
	VADDPS    Y4, Y0, Y0 \
	VADDPS    Y5, Y1, Y1 \
	VADDPS    Y6, Y2, Y2 \
	VADDPS    Y7, Y3, Y3 \
	ADDQ      $64, R8 \
	ADDQ      $128, DI

// store1 stores the row's dot, reduce4x8 of Y0-Y3, at (R11). Clobbers X1.
#define store1 \
	reduce4x8 \
	MOVSS X0, (R11)

// store1BF16 is store1 with ggml_vec_dot_bf16's (AVX2) reduction:
// (c1+c3)+(c2+c4), then as hsum_float_8.
#define store1BF16 \
	VADDPS Y2, Y0, Y0 \
	VADDPS Y3, Y1, Y1 \
	VADDPS Y1, Y0, Y0 \
	hsumStore(Y0, X0, (R11))

// ROWS1 is the loop of the one-token float kernels over the rows (SI the
// first, DX the stride, R9 the count, R10 the activations, R11 the
// outputs): for each row, N/32 steps of STEP from zeroed Y0-Y3, then STORE
// stores the row's dot at (R11). It ends at its label done.
#define ROWS1(N, STEP, STORE) \
	TESTQ R9, R9 \
	JZ    done \
row: \
	passStart(N, zero4, reduce) \
loop: \
	STEP \
	DECQ  CX \
	JNZ   loop \
reduce: \
	STORE \
	ADDQ  $4, R11 \
	ADDQ  DX, SI \
	DECQ  R9 \
	JNZ   row \
done:

// Multi-token float kernels (Rows4, Rows5, RowsxT) run two passes over
// each weight row: the first accumulates the elements 0-15 of every 32
// (accumulators 0 and 1 of the single-token kernel), the second elements
// 16-31 (accumulators 2 and 3), so each token keeps the single-token
// kernel's four accumulators with 2 registers live per token and pass. The
// first pass's accumulators wait on the stack (token t at 64t).

#define spill8 \
	VMOVUPS Y0, 0(SP) \
	VMOVUPS Y1, 32(SP) \
	VMOVUPS Y2, 64(SP) \
	VMOVUPS Y3, 96(SP) \
	VMOVUPS Y4, 128(SP) \
	VMOVUPS Y5, 160(SP) \
	VMOVUPS Y6, 192(SP) \
	VMOVUPS Y7, 224(SP)

// spill10 is spill8 with the fifth token's Y8, Y9 (f16Rows5).
#define spill10 \
	spill8 \
	VMOVUPS Y8, 256(SP) \
	VMOVUPS Y9, 288(SP)

// f32Tok is one token's step of the F32 kernels: the 16 activations at A
// and B FMA'd with the weights in Y8, Y9 into ACCA, ACCB.
#define f32Tok(A, B, ACCA, ACCB) \
	VFMADD231PS A, Y8, ACCA \
	VFMADD231PS B, Y9, ACCB

// cvtFma is one token's step of the F16 kernel: the 16 halves at A and B
// widened and FMA'd with the weights in Y8, Y9 into ACCA, ACCB.
#define cvtFma(A, B, ACCA, ACCB) \
	VCVTPH2PS   A, Y10 \
	VCVTPH2PS   B, Y11 \
	VFMADD231PS Y10, Y8, ACCA \
	VFMADD231PS Y11, Y9, ACCB

// cvtFma5 is cvtFma with the weights in Y10, Y11 and Y12, Y13 for the
// widened activations (f16Rows5 keeps ten accumulators in Y0-Y9).
#define cvtFma5(A, B, ACCA, ACCB) \
	VCVTPH2PS   A, Y12 \
	VCVTPH2PS   B, Y13 \
	VFMADD231PS Y12, Y10, ACCA \
	VFMADD231PS Y13, Y11, ACCB

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

// tok4 is one step of the four tokens (DI, DI + R14, DI + 2·R14, DI +
// R12): the token step TOK (f32Tok, cvtFma, bf16Step, cvtFma5) on each
// token's activations at OFF and OFF2, token t accumulating in Y2t, Y2t+1.
#define tok4(TOK, OFF, OFF2) \
	TOK(OFF(DI), OFF2(DI), Y0, Y1) \
	TOK(OFF(DI)(R14*1), OFF2(DI)(R14*1), Y2, Y3) \
	TOK(OFF(DI)(R14*2), OFF2(DI)(R14*2), Y4, Y5) \
	TOK(OFF(DI)(R12*1), OFF2(DI)(R12*1), Y6, Y7)

// tok5 is tok4 with cvtFma5 and the fifth token (DI + 4·R14) in Y8, Y9.
#define tok5(OFF, OFF2) \
	tok4(cvtFma5, OFF, OFF2) \
	cvtFma5(OFF(DI)(R14*4), OFF2(DI)(R14*4), Y8, Y9)

// ntokLE jumps to DONE if there are at most T tokens (BX).
#define ntokLE(T, DONE) \
	CMPQ BX, $T \
	JLE  DONE

// tokxT is one step of the first BX (1 to 8) tokens (x + t·xstride): TOK
// on each token's activations at OFF and OFF2, token t accumulating in
// Y16+2t, Y17+2t (AVX-512 VL registers). Tokens 4-7 are addressed from R9
// = DI + 4·R14; R13 is three strides. It ends at the label DONE.
#define tokxT(TOK, OFF, OFF2, DONE) \
	LEAQ (DI)(R14*4), R9 \
	TOK(OFF(DI), OFF2(DI), Y16, Y17) \
	ntokLE(1, DONE) \
	TOK(OFF(DI)(R14*1), OFF2(DI)(R14*1), Y18, Y19) \
	ntokLE(2, DONE) \
	TOK(OFF(DI)(R14*2), OFF2(DI)(R14*2), Y20, Y21) \
	ntokLE(3, DONE) \
	TOK(OFF(DI)(R13*1), OFF2(DI)(R13*1), Y22, Y23) \
	ntokLE(4, DONE) \
	TOK(OFF(R9), OFF2(R9), Y24, Y25) \
	ntokLE(5, DONE) \
	TOK(OFF(R9)(R14*1), OFF2(R9)(R14*1), Y26, Y27) \
	ntokLE(6, DONE) \
	TOK(OFF(R9)(R14*2), OFF2(R9)(R14*2), Y28, Y29) \
	ntokLE(7, DONE) \
	TOK(OFF(R9)(R13*1), OFF2(R9)(R13*1), Y30, Y31) \
DONE:

// tokxTa and tokxTb are tokxT for passes A and B, each with its label.
#define tokxTa(TOK, OFF, OFF2) tokxT(TOK, OFF, OFF2, atok)
#define tokxTb(TOK, OFF, OFF2) tokxT(TOK, OFF, OFF2, btok)

// The steps of the two passes, by type: f32Pass(TOKS, OFF) takes the 16
// weights at OFF of every 32 (0 in pass A, 16 elements on in pass B) into
// Y8, Y9, runs TOKS(f32Tok, OFF, OFF2) over the tokens (TOKS is tok4 or
// tokxTa/tokxTb; their activations at OFF, OFF2), then advances R8 and
// DI past the 32 elements. f16Pass is the same for halves; bf16Pass takes
// the weights at W and widened (float32) activations at X.
#define f32Pass(TOKS, OFF) \
	VMOVUPS OFF(R8), Y8 \
	VMOVUPS OFF+32(R8), Y9 \
	TOKS(f32Tok, OFF, OFF+32) \
	ADDQ    $128, R8 \
	ADDQ    $128, DI

#define f16Pass(TOKS, OFF) \
	VCVTPH2PS OFF(R8), Y8 \
	VCVTPH2PS OFF+16(R8), Y9 \
	TOKS(cvtFma, OFF, OFF+16) \
	ADDQ      $64, R8 \
	ADDQ      $64, DI

#define bf16Pass(TOKS, W, X) \
	bf16Weights(W(R8), W+16(R8)) \
	TOKS(bf16Step, X, X+32) \
	ADDQ $64, R8 \
	ADDQ $128, DI

// f16x5Pass is f16Pass(tok4) for five tokens, with the weights in Y10,
// Y11 (tok5).
#define f16x5Pass(OFF) \
	VCVTPH2PS OFF(R8), Y10 \
	VCVTPH2PS OFF+16(R8), Y11 \
	tok5(OFF, OFF+16) \
	ADDQ      $64, R8 \
	ADDQ      $64, DI

// f32A and f32B (f16A, f16B, bf16A, bf16B, f16x5A, f16x5B) are the steps
// of passes A and B. Pass A reads the even cache lines of the row; f32A
// fetches the odd ones for pass B, and the next row, while streaming. The
// other A steps fetch the next row.
#define f32A(TOKS) \
	PREFETCHT0 64(R8) \
	PREFETCHT0 (R8)(DX*1) \
	PREFETCHT0 64(R8)(DX*1) \
	f32Pass(TOKS, 0)

#define f32B(TOKS) f32Pass(TOKS, 64)

#define f16A(TOKS) \
	PREFETCHT0 (R8)(DX*1) \
	f16Pass(TOKS, 0)

#define f16B(TOKS) f16Pass(TOKS, 32)

#define bf16A(TOKS) \
	PREFETCHT0 (R8)(DX*1) \
	bf16Pass(TOKS, 0, 0)

#define bf16B(TOKS) bf16Pass(TOKS, 32, 64)

#define f16x5A \
	PREFETCHT0 (R8)(DX*1) \
	f16x5Pass(0)

#define f16x5B f16x5Pass(32)

// start4, start5 and startxT begin one pass over the row for four, five
// and up to eight tokens: passStart with their accumulators (start5 clears
// the fifth token's Y8, Y9 first).
#define start4(N, DONE) passStart(N, zero8, DONE)

#define start5(N, DONE) \
	VXORPS Y8, Y8, Y8 \
	VXORPS Y9, Y9, Y9 \
	passStart(N, zero8, DONE)

#define startxT(N, DONE) passStart(N, zeroHi16, DONE)

// redT finishes one token with the temporary T: YA, YB hold its
// accumulators 2 and 3, OA, OB the stack slots of 0 and 1; (s0+s2)+(s1+s3),
// halves, two horizontal adds (GGML_F32x8_REDUCE), stored at DST. red4 is
// redT with X8, red5 with X12 (X8 is token 4's there).
#define redT(T, YA, YB, XA, OA, OB, DST) \
	fold4(T, YA, YB, XA, OA, OB) \
	VHADDPS XA, XA, XA \
	VHADDPS XA, XA, XA \
	MOVSS   XA, DST

#define red4(YA, YB, XA, OA, OB, DST) redT(X8, YA, YB, XA, OA, OB, DST)
#define red5(YA, YB, XA, OA, OB, DST) redT(X12, YA, YB, XA, OA, OB, DST)

// redBF16 is red4 with ggml_vec_dot_bf16's final steps (hsumTail).
#define redBF16(YA, YB, XA, OA, OB, DST) \
	fold4(X8, YA, YB, XA, OA, OB) \
	hsumTail(X8, XA, DST)

// store4 finishes the four tokens with RED (red4, redBF16): token t's
// output at R11 + t·AX (AX the output stride in bytes); sets BX to token
// 2's output.
#define store4(RED) \
	LEAQ (R11)(AX*2), BX \
	RED(Y0, Y1, X0, 0(SP), 32(SP), (R11)) \
	RED(Y2, Y3, X2, 64(SP), 96(SP), (R11)(AX*1)) \
	RED(Y4, Y5, X4, 128(SP), 160(SP), (BX)) \
	RED(Y6, Y7, X6, 192(SP), 224(SP), (BX)(AX*1))

// store5 is store4 with red5, then the fifth token.
#define store5 \
	store4(red5) \
	red5(Y8, Y9, X8, 256(SP), 288(SP), (R11)(AX*4))

// outTok finishes one of the eight-token kernels' tokens with RED (red4,
// redBF16): its accumulators YA, YB (pass B) and the stack slots OA, OB
// (pass A), its output at (R9).
#define outTok(RED, YA, YB, OA, OB) \
	VMOVAPS YA, Y0 \
	VMOVAPS YB, Y1 \
	RED(Y0, Y1, X0, OA(SP), OB(SP), (R9))

// nextOut ends the outputs (at the label stored) after T tokens, else
// moves R9 to the next token's output.
#define nextOut(T) \
	ntokLE(T, stored) \
	ADDQ AX, R9

// storexT finishes the first BX tokens with RED, token t's output at R11 +
// t·AX (AX the output stride in bytes), and ends at the label stored.
#define storexT(RED) \
	MOVQ R11, R9 \
	outTok(RED, Y16, Y17, 0, 32) \
	nextOut(1) \
	outTok(RED, Y18, Y19, 64, 96) \
	nextOut(2) \
	outTok(RED, Y20, Y21, 128, 160) \
	nextOut(3) \
	outTok(RED, Y22, Y23, 192, 224) \
	nextOut(4) \
	outTok(RED, Y24, Y25, 256, 288) \
	nextOut(5) \
	outTok(RED, Y26, Y27, 320, 352) \
	nextOut(6) \
	outTok(RED, Y28, Y29, 384, 416) \
	nextOut(7) \
	outTok(RED, Y30, Y31, 448, 480) \
stored:

// ROWSN is the loop of the multi-token float kernels over the weight rows
// (SI the first, DX the stride, ROWS the count, R10 the first token's
// activations, R14 the token stride, R11 the outputs), in the two passes:
// for each row, START(N, DONE) sets up pass A, N/32 steps of PASSA, SPILL
// keeps its accumulators, START again for pass B, N/32 steps of PASSB;
// then, with AX the output stride OSTRIDE in bytes, STORE finishes each
// token's dot of the row, out[t·ostride + r]. It ends at its label done.
#define ROWSN(N, OSTRIDE, ROWS, START, PASSA, SPILL, PASSB, STORE) \
	TESTQ ROWS, ROWS \
	JZ    done \
row: \
	START(N, passa) \
loopa: \
	PASSA \
	DECQ  CX \
	JNZ   loopa \
passa: \
	SPILL \
	START(N, passb) \
loopb: \
	PASSB \
	DECQ  CX \
	JNZ   loopb \
passb: \
	MOVQ  OSTRIDE, AX \
	SHLQ  $2, AX \
	STORE \
	ADDQ  $4, R11 \
	ADDQ  DX, SI \
	DECQ  ROWS \
	JNZ   row \
done:

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

// q8Fetch fetches the next row group ahead for the eight-row Q8_0
// kernels, as q4_0Rows8V1 does: 320 bytes per block against the 272
// consumed, from the pointer kept at SLOT, which it advances. Clobbers AX.
#define q8Fetch(SLOT) \
	MOVQ       SLOT, AX \
	PREFETCHT0 (AX) \
	PREFETCHT0 64(AX) \
	PREFETCHT0 128(AX) \
	PREFETCHT0 192(AX) \
	PREFETCHT0 256(AX) \
	ADDQ       $320, AX \
	MOVQ       AX, SLOT

// clear8 stores Y0 (zero) with MOV (VMOVUPS, VMOVAPS) into the eight
// tokens' 32-byte accumulators from OFF(B).
#define clear8(MOV, OFF, B) \
	MOV Y0, OFF+0(B) \
	MOV Y0, OFF+32(B) \
	MOV Y0, OFF+64(B) \
	MOV Y0, OFF+96(B) \
	MOV Y0, OFF+128(B) \
	MOV Y0, OFF+160(B) \
	MOV Y0, OFF+192(B) \
	MOV Y0, OFF+224(B)

// Q8GROUP starts a group of the eight-row Q8_0 kernels: the rows'
// pointers (groupPtrs), the next group's address at SLOT (for q8Fetch),
// DI at the activations, CX = NB blocks and the eight tokens'
// accumulators (MOV into OFF(B), clear8) zeroed; it jumps to STORE if NB
// is 0.
#define Q8GROUP(NB, SLOT, MOV, OFF, B, STORE) \
	groupPtrs(AX) \
	MOVQ   AX, SLOT \
	MOVQ   R10, DI \
	MOVQ   NB, CX \
	VXORPS Y0, Y0, Y0 \
	clear8(MOV, OFF, B) \
	TESTQ  CX, CX \
	JZ     STORE

// q8Acc adds the token at R9 into its accumulator ACC (read and written
// with MOV): ACC = fma(S, d_w·d_x, ACC), S the eight rows' block sums as
// float32, Y14 their scales, the token's scale at (R9). Clobbers AX, Y0,
// Y2.
#define q8Acc(S, MOV, ACC) \
	MOVWLZX      (R9), AX \
	VBROADCASTSS (R13)(AX*4), Y0 \
	VMULPS       Y14, Y0, Y0 \
	MOV          ACC, Y2 \
	VFMADD231PS  Y0, S, Y2 \
	MOV          Y2, ACC

// unpack4 transposes A, B, C, D (the dwords of four rows) as 4×4 dwords
// within each 128-bit lane: afterwards A holds dwords 0 (and 4) of the
// four rows, B dwords 1 (5), C 2 (6), D 3 (7). Clobbers Y8-Y11.
#define unpack4(A, B, C, D) \
	VPUNPCKLDQ  B, A, Y8 \
	VPUNPCKHDQ  B, A, Y9 \
	VPUNPCKLDQ  D, C, Y10 \
	VPUNPCKHDQ  D, C, Y11 \
	VPUNPCKLQDQ Y10, Y8, A \
	VPUNPCKHQDQ Y10, Y8, B \
	VPUNPCKLQDQ Y11, Y9, C \
	VPUNPCKHQDQ Y11, Y9, D

// joinRows joins u_j (U, rows 0-3) and v_j (V, rows 4-7) into the
// transpose's vectors j (LO) and j+4 (HI), stores them at OFF and
// OFF+128(R11), and leaves their absolute values in LO, HI.
#define joinRows(U, V, LO, HI, OFF) \
	VPERM2I128 $0x20, V, U, LO \
	VPERM2I128 $0x31, V, U, HI \
	VMOVDQA    LO, OFF(R11) \
	VMOVDQA    HI, OFF+128(R11) \
	VPABSB     LO, LO \
	VPABSB     HI, HI

// q8tDot leaves in D the exact dots of the transpose's vector j with the
// token's activation quants 4j..4j+3 (at X(R9)), in int32 lane r for row
// r: the quants broadcast into T, given the signs of the vector (at
// W(R11)), times its absolute values ABS, in pairs (U) then fours. Y15
// holds int16 ones.
#define q8tDot(X, W, ABS, T, U, D) \
	VPBROADCASTD X(R9), T \
	VPSIGNB      W(R11), T, T \
	VPMADDUBSW   T, ABS, U \
	VPMADDWD     Y15, U, D

// q8tAcc is q8tDot added into ACC.
#define q8tAcc(X, W, ABS, T, U, ACC) \
	q8tDot(X, W, ABS, T, U, U) \
	VPADDD U, ACC, ACC

// q4Pair computes the exact integer dots of two Q4_0 block rows, whose
// quants are at P and Q, with the activation block (Y1 = y[0:16] twice,
// Y2 = y[16:32] twice, Y3 = 8·(y pair sums) as int16), leaving 4 int32
// partial sums per row in YD (row P low half, row Q high half). Nibbles
// are used unsigned and 8·Σy subtracted, so the sums are Σ (q-8)·y exactly.
// Y15 = 0x0f bytes, Y14 = int16 ones.
#define q4Pair(P, Q, XD, YD, YT) \
	nibbles(P, Q, XD, YD, YT) \
	VPMADDUBSW  Y1, YD, YD \
	VPMADDUBSW  Y2, YT, YT \
	VPADDW      YT, YD, YD \
	VPSUBW      Y3, YD, YD \
	VPMADDWD    Y14, YD, YD

// q4v1Block accumulates one block of q4_0Rows8V1's eight rows (ROWS8X1)
// into Y0: the activation block at DI (quants at 0 and 16, the scale as
// float32 at 32) against the row pairs (q4Pair), the rows' sums in lane
// order, then acc = fma(float32(isum), d_w·d_x, acc). Y13 holds 0x08
// bytes. Clobbers AX, Y1-Y11.
#define q4v1Block \
	VBROADCASTI128 0(DI), Y1 \
	VBROADCASTI128 16(DI), Y2 \
	VPMADDUBSW     Y1, Y13, Y3 \
	VPMADDUBSW     Y2, Y13, Y4 \
	VPADDW         Y4, Y3, Y3 \
	q4Pair(2(R8), 2(R8)(DX*1), X6, Y6, Y7) \
	q4Pair(2(R8)(DX*2), 2(R8)(BX*1), X8, Y8, Y7) \
	q4Pair(2(R12), 2(R12)(DX*1), X9, Y9, Y4) \
	q4Pair(2(R12)(DX*2), 2(R12)(BX*1), X10, Y10, Y4) \
	VPHADDD        Y8, Y6, Y6 \
	VPHADDD        Y10, Y9, Y9 \
	VPHADDD        Y9, Y6, Y6 \
	VCVTDQ2PS      Y6, Y6 \
	laneScales(X11, Y11) \
	VBROADCASTSS   32(DI), Y5 \
	VMULPS         Y5, Y11, Y11 \
	VFMADD231PS    Y11, Y6, Y0

// func f32Rows(w *byte, wstride, rows int, x *byte, n int, out *float32)
TEXT ·f32Rows(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), DX
	MOVQ rows+16(FP), R9
	MOVQ x+24(FP), R10
	MOVQ out+40(FP), R11
	ROWS1(n+32(FP), f32Step32, store1)
	VZEROUPPER
	RET

// func f16Rows(w *byte, wstride, rows int, x *byte, n int, out *float32)
TEXT ·f16Rows(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), DX
	MOVQ rows+16(FP), R9
	MOVQ x+24(FP), R10
	MOVQ out+40(FP), R11
	ROWS1(n+32(FP), f16Step32, store1)
	VZEROUPPER
	RET

// func bf16Rows(w *byte, wstride, rows int, x *byte, n int, out *float32)
//
// x holds widened activations (bf16Wide: n float32s, each exactly a
// bfloat16), so only the weights are converted.
TEXT ·bf16Rows(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), DX
	MOVQ rows+16(FP), R9
	MOVQ x+24(FP), R10
	MOVQ out+40(FP), R11
	ROWS1(n+32(FP), bf16Step32, store1BF16)
	VZEROUPPER
	RET

// func f32Rows4(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)
TEXT ·f32Rows4(SB), NOSPLIT, $256-64
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), DX
	MOVQ rows+16(FP), R9
	MOVQ x+24(FP), R10
	MOVQ xstride+32(FP), R14
	MOVQ out+48(FP), R11
	LEAQ (R14)(R14*2), R12
	ROWSN(n+40(FP), ostride+56(FP), R9, start4, f32A(tok4), spill8, f32B(tok4), store4(red4))
	VZEROUPPER
	RET

// func f16Rows4(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)
TEXT ·f16Rows4(SB), NOSPLIT, $256-64
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), DX
	MOVQ rows+16(FP), R9
	MOVQ x+24(FP), R10
	MOVQ xstride+32(FP), R14
	MOVQ out+48(FP), R11
	LEAQ (R14)(R14*2), R12
	ROWSN(n+40(FP), ostride+56(FP), R9, start4, f16A(tok4), spill8, f16B(tok4), store4(red4))
	VZEROUPPER
	RET

// func f16Rows5(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)
//
// f16Rows4 for five tokens (x + t·xstride, t < 5): the two passes over
// each row keep ten accumulators (two per token) in Y0-Y9; the first
// pass's wait on the stack (token t at 64t).
TEXT ·f16Rows5(SB), NOSPLIT, $320-64
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), DX
	MOVQ rows+16(FP), R9
	MOVQ x+24(FP), R10
	MOVQ xstride+32(FP), R14
	MOVQ out+48(FP), R11
	LEAQ (R14)(R14*2), R12
	ROWSN(n+40(FP), ostride+56(FP), R9, start5, f16x5A, spill10, f16x5B, store5)
	VZEROUPPER
	RET

// func bf16Rows4(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)
TEXT ·bf16Rows4(SB), NOSPLIT, $256-64
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), DX
	MOVQ rows+16(FP), R9
	MOVQ x+24(FP), R10
	MOVQ xstride+32(FP), R14
	MOVQ out+48(FP), R11
	LEAQ (R14)(R14*2), R12
	ROWSN(n+40(FP), ostride+56(FP), R9, start4, bf16A(tok4), spill8, bf16B(tok4), store4(redBF16))
	VZEROUPPER
	RET

// func f32RowsxT(w *byte, wstride, rows int, x *byte, xstride, ntok, n int, out *float32, ostride int)
//
// The four-token two-pass scheme for 1 to 8 tokens (x + t·xstride, t <
// ntok) in one pass pair over each weight row, out[t·ostride + r]; token t
// accumulates in Y16+2t and Y17+2t (AVX-512 VL registers). n is a multiple
// of 32. BX holds ntok, R13 three token strides, R9 token 4's row, R12 the
// rows left.
TEXT ·f32RowsxT(SB), NOSPLIT, $512-72
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), DX
	MOVQ rows+16(FP), R12
	MOVQ x+24(FP), R10
	MOVQ xstride+32(FP), R14
	MOVQ ntok+40(FP), BX
	MOVQ out+56(FP), R11
	LEAQ (R14)(R14*2), R13
	ROWSN(n+48(FP), ostride+64(FP), R12, startxT, f32A(tokxTa), spillHi16, f32B(tokxTb), storexT(red4))
	VZEROUPPER
	RET

// func f16RowsxT(w *byte, wstride, rows int, x *byte, xstride, ntok, n int, out *float32, ostride int)
//
// f32RowsxT for float16 weights and activations (cvtFma).
TEXT ·f16RowsxT(SB), NOSPLIT, $512-72
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), DX
	MOVQ rows+16(FP), R12
	MOVQ x+24(FP), R10
	MOVQ xstride+32(FP), R14
	MOVQ ntok+40(FP), BX
	MOVQ out+56(FP), R11
	LEAQ (R14)(R14*2), R13
	ROWSN(n+48(FP), ostride+64(FP), R12, startxT, f16A(tokxTa), spillHi16, f16B(tokxTb), storexT(red4))
	VZEROUPPER
	RET

// func bf16RowsxT(w *byte, wstride, rows int, x *byte, xstride, ntok, n int, out *float32, ostride int)
//
// f32RowsxT with BF16's arithmetic (bf16Step, redBF16) on bfloat16
// weights and widened activations (bf16Wide).
TEXT ·bf16RowsxT(SB), NOSPLIT, $512-72
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), DX
	MOVQ rows+16(FP), R12
	MOVQ x+24(FP), R10
	MOVQ xstride+32(FP), R14
	MOVQ ntok+40(FP), BX
	MOVQ out+56(FP), R11
	LEAQ (R14)(R14*2), R13
	ROWSN(n+48(FP), ostride+64(FP), R12, startxT, bf16A(tokxTa), spillHi16, bf16B(tokxTb), storexT(redBF16))
	VZEROUPPER
	RET

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
	int16Ones(Y15)
	CMPQ     264(SP), $0
	JLE      q8gdone

q8group:
	Q8GROUP(nb+48(FP), 256(SP), VMOVUPS, 0, SP, q8gstore)

q8gloop:
	q8Fetch(256(SP))
	rowScales(X14, Y14)
	MOVQ DI, R9
	XORQ R15, R15

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
	q8Acc(Y5, VMOVUPS, (SP)(R15*1))
	ADDQ         R14, R9
	ADDQ         $32, R15
	MOVQ         ntok+40(FP), AX
	SHLQ         $5, AX
	CMPQ         R15, AX
	JLT          q8gtok
	next8(34, 34, q8gloop)

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
	int16Ones(Y15)
	CMPQ     808(SP), $0
	JLE      q8tdone

q8tgroup:
	Q8GROUP(nb+48(FP), 816(SP), VMOVAPS, 512, R11, q8tstore)

q8tloop:
	q8Fetch(816(SP))
	rowScales(X14, Y14)

	// Transpose the eight rows' quants as 8×8 dwords: u_j (Y0-Y3) hold
	// dwords j and j+4 of rows 0-3, v_j (Y4-Y7) those of rows 4-7.
	VMOVDQU 2(R8), Y0
	VMOVDQU 2(R8)(DX*1), Y1
	VMOVDQU 2(R8)(DX*2), Y2
	VMOVDQU 2(R8)(BX*1), Y3
	VMOVDQU 2(R12), Y4
	VMOVDQU 2(R12)(DX*1), Y5
	VMOVDQU 2(R12)(DX*2), Y6
	VMOVDQU 2(R12)(BX*1), Y7
	unpack4(Y0, Y1, Y2, Y3)
	unpack4(Y4, Y5, Y6, Y7)
	joinRows(Y0, Y4, Y10, Y4, 0)
	joinRows(Y1, Y5, Y11, Y5, 32)
	joinRows(Y2, Y6, Y12, Y8, 64)
	joinRows(Y3, Y7, Y13, Y9, 96)
	MOVQ    DI, R9
	XORQ    R15, R15

q8ttok:
	q8tDot(2, 0, Y10, Y0, Y1, Y6)
	q8tDot(6, 32, Y11, Y2, Y3, Y7)
	q8tAcc(10, 64, Y12, Y0, Y1, Y6)
	q8tAcc(14, 96, Y13, Y2, Y3, Y7)
	q8tAcc(18, 128, Y4, Y0, Y1, Y6)
	q8tAcc(22, 160, Y5, Y2, Y3, Y7)
	q8tAcc(26, 192, Y8, Y0, Y1, Y6)
	q8tAcc(30, 224, Y9, Y2, Y3, Y7)
	VPADDD    Y7, Y6, Y6
	VCVTDQ2PS Y6, Y6
	q8Acc(Y6, VMOVAPS, 512(R11)(R15*1))
	ADDQ      R14, R9
	ADDQ      $32, R15
	CMPQ      R15, 824(SP)
	JLT       q8ttok
	next8(34, 34, q8tloop)

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
	int16Ones(Y15)
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
	int16Ones(Y15)
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
	MOVQ w+0(FP), SI
	MOVQ wstride+8(FP), DX
	MOVQ groups+16(FP), R9
	MOVQ x+24(FP), R10
	MOVQ out+40(FP), R11
	MOVQ ·f16Table(SB), R13
	LEAQ (DX)(DX*2), BX
	bcastL($0x0f0f0f0f, X15, Y15)
	bcastL($0x08080808, X13, Y13)
	int16Ones(Y14)
	ROWS8X1(nb+32(FP), q4v1Block, 40)
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
