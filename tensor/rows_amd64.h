// rows_amd64.h: macros shared by the eight-row block kernels of
// dot_amd64.s (Q8_0, Q4_0) and dotq32_amd64.s (IQ4_NL).
//
// Those kernels take the weight rows in groups of eight: SI is the group's
// first row, DX the row stride, BX three strides; rows 0-3 of the group
// are at R8 + r·DX and rows 4-7 at R12 + r·DX, each pointing at the
// current block. DI is the activation row's current block, R11 the
// outputs, R13 f16Table, CX the blocks left. The macros here read no
// arguments (no name+off(FP) operand), so every argument load stays in a
// TEXT body, where go vet checks it.

// bcastL sets every dword of Y to the constant V (X is Y's low half).
// Clobbers AX.
#define bcastL(V, X, Y) \
	MOVL         V, AX \
	VMOVD        AX, X \
	VPBROADCASTD X, Y

// int16Ones sets every int16 of Y to 1.
#define int16Ones(Y) \
	VPCMPEQW Y, Y, Y \
	VPSRLW   $15, Y, Y

// scales8 gathers the float16 scales of the group's current blocks into Y
// as float32: lane 0 from (R8), lane j from Aj. Clobbers AX, X (Y's low
// half).
#define scales8(X, Y, A1, A2, A3, A4, A5, A6, A7) \
	MOVWLZX   (R8), AX \
	VMOVD     AX, X \
	VPINSRW   $1, A1, X, X \
	VPINSRW   $2, A2, X, X \
	VPINSRW   $3, A3, X, X \
	VPINSRW   $4, A4, X, X \
	VPINSRW   $5, A5, X, X \
	VPINSRW   $6, A6, X, X \
	VPINSRW   $7, A7, X, X \
	VCVTPH2PS X, Y

// rowScales is scales8 in row order (lane r holds row r's scale).
#define rowScales(X, Y) \
	scales8(X, Y, (R8)(DX*1), (R8)(DX*2), (R8)(BX*1), (R12), (R12)(DX*1), (R12)(DX*2), (R12)(BX*1))

// laneScales is scales8 in the lane order of the row-pair kernels: lane l
// holds row p(l), p = [0 2 4 6 1 3 5 7]; permRows8 restores row order.
#define laneScales(X, Y) \
	scales8(X, Y, (R8)(DX*2), (R12), (R12)(DX*2), (R8)(DX*1), (R8)(BX*1), (R12)(DX*1), (R12)(BX*1))

// nibbles splits the 4-bit quants of the two blocks at P and Q (16 bytes
// each) into YD, bytes 0-15 from P and 16-31 from Q, holding the low
// nibbles (elements 0-15 of each block) and YT the high (16-31). XD is
// YD's low half; Y15 holds 0x0f bytes.
#define nibbles(P, Q, XD, YD, YT) \
	VMOVDQU     P, XD \
	VINSERTI128 $1, Q, YD, YD \
	VPSRLW      $4, YD, YT \
	VPAND       Y15, YD, YD \
	VPAND       Y15, YT, YT

// groupPtrs points R8 and R12 at the rows 0 and 4 of the group at SI and P
// at the next group.
#define groupPtrs(P) \
	MOVQ SI, R8 \
	LEAQ (SI)(DX*4), R12 \
	LEAQ (SI)(DX*8), P

// fetch8 prefetches the 192 bytes at P and advances P past them. Eight
// interleaved row streams defeat the hardware prefetcher, so the kernels
// of 18-byte blocks fetch the next group's rows (contiguous when wstride
// is the row size) ahead, 192 bytes per block against the 144 consumed.
// Prefetches past the matrix are harmless.
#define fetch8(P) \
	PREFETCHT0 (P) \
	PREFETCHT0 64(P) \
	PREFETCHT0 128(P) \
	ADDQ       $192, P

// next8 advances the eight rows' pointers (R8, R12) by WB bytes and DI by
// XB bytes, and loops to LOOP while blocks are left (CX).
#define next8(WB, XB, LOOP) \
	ADDQ $WB, R8 \
	ADDQ $WB, R12 \
	ADDQ $XB, DI \
	DECQ CX \
	JNZ  LOOP

// ROWS8X1 is the loop of the one-token eight-row kernels over the groups
// of rows (R9 of them) with 18-byte weight blocks: for each group, Y0
// accumulates BLOCK once per block (NB blocks; BLOCK leaves DI, R8 and R12
// on the block and may clobber AX, Y1-Y11), R14 prefetching the next
// group, and DI advancing by XB bytes a block; then Y0, its lanes in the
// order of laneScales, goes out in row order as out[0:8] and R11 moves on.
// Y12 holds permRows8. Named in capitals, as vet reads a macro call as an
// instruction and checks the NB argument only after an upper-case opcode
// (one without a size suffix).
#define ROWS8X1(NB, BLOCK, XB) \
	VMOVDQU ·permRows8(SB), Y12 \
	TESTQ   R9, R9 \
	JZ      done \
group: \
	groupPtrs(R14) \
	MOVQ    R10, DI \
	MOVQ    NB, CX \
	VXORPS  Y0, Y0, Y0 \
	TESTQ   CX, CX \
	JZ      groupdone \
loop: \
	fetch8(R14) \
	BLOCK \
	next8(18, XB, loop) \
groupdone: \
	VPERMPS Y0, Y12, Y0 \
	VMOVUPS Y0, (R11) \
	ADDQ    $32, R11 \
	LEAQ    (SI)(DX*8), SI \
	DECQ    R9 \
	JNZ     group \
done:
