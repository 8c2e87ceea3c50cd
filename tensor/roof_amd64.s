//go:build amd64 && !noasm

#include "textflag.h"
#include "q4_amd64.h"

// The roofline probes: register-only loops that run one instruction kind
// back to back with enough independent accumulators to hide its latency,
// and a streaming read. They measure what this core can do at best.

// peak8 issues OP Y8, Y9, Yk for k = 0..7: eight independent
// accumulations into Y0-Y7.
#define peak8(OP) \
	OP Y8, Y9, Y0 \
	OP Y8, Y9, Y1 \
	OP Y8, Y9, Y2 \
	OP Y8, Y9, Y3 \
	OP Y8, Y9, Y4 \
	OP Y8, Y9, Y5 \
	OP Y8, Y9, Y6 \
	OP Y8, Y9, Y7

// peakLoop clears Y0-Y9 with ZERO, runs CX iterations of peak8(OP) and
// clears the upper halves; LOOP and DONE name its labels.
#define peakLoop(ZERO, OP, LOOP, DONE) \
	zeroY0to9(ZERO) \
	TESTQ CX, CX \
	JZ    DONE \
LOOP: \
	peak8(OP) \
	DECQ  CX \
	JNZ   LOOP \
DONE: \
	VZEROUPPER

// func peakFMA(n int)
//
// n iterations of 8 independent VFMADD231PS on 256-bit registers: 64
// float32 multiply-adds per iteration.
TEXT ·peakFMA(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), CX
	peakLoop(VXORPS, VFMADD231PS, fmaloop, fmadone)
	RET

// func peakDPBUSD(n int)
//
// n iterations of 8 independent VPDPBUSD on 256-bit registers (AVX-512
// VNNI with VL): 256 int8 multiply-adds per iteration.
TEXT ·peakDPBUSD(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), CX
	peakLoop(VPXORD, VPDPBUSD, dploop, dpdone)
	RET

// func streamRead(p *byte, n int) uint32
//
// Reads n bytes (a multiple of 128) with 256-bit loads, folding them into
// a checksum so the loads cannot be dropped.
TEXT ·streamRead(SB), NOSPLIT, $0-20
	MOVQ   p+0(FP), SI
	MOVQ   n+8(FP), CX
	SHRQ   $7, CX
	VPXOR  Y0, Y0, Y0
	VPXOR  Y1, Y1, Y1
	VPXOR  Y2, Y2, Y2
	VPXOR  Y3, Y3, Y3
	TESTQ  CX, CX
	JZ     rddone

rdloop:
	VPXOR (SI), Y0, Y0
	VPXOR 32(SI), Y1, Y1
	VPXOR 64(SI), Y2, Y2
	VPXOR 96(SI), Y3, Y3
	ADDQ  $128, SI
	DECQ  CX
	JNZ   rdloop

rddone:
	VPXOR        Y1, Y0, Y0
	VPXOR        Y3, Y2, Y2
	VPXOR        Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPXOR        X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPXOR        X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPXOR        X1, X0, X0
	VMOVD        X0, AX
	MOVL         AX, ret+16(FP)
	VZEROUPPER
	RET
