//go:build amd64 && !noasm

#include "textflag.h"

// The roofline probes: register-only loops that run one instruction kind
// back to back with enough independent accumulators to hide its latency,
// and a streaming read. They measure what this core can do at best.

// func peakFMA(n int)
//
// n iterations of 8 independent VFMADD231PS on 256-bit registers: 64
// float32 multiply-adds per iteration.
TEXT ·peakFMA(SB), NOSPLIT, $0-8
	MOVQ   n+0(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	TESTQ  CX, CX
	JZ     fmadone

fmaloop:
	VFMADD231PS Y8, Y9, Y0
	VFMADD231PS Y8, Y9, Y1
	VFMADD231PS Y8, Y9, Y2
	VFMADD231PS Y8, Y9, Y3
	VFMADD231PS Y8, Y9, Y4
	VFMADD231PS Y8, Y9, Y5
	VFMADD231PS Y8, Y9, Y6
	VFMADD231PS Y8, Y9, Y7
	DECQ        CX
	JNZ         fmaloop

fmadone:
	VZEROUPPER
	RET

// func peakDPBUSD(n int)
//
// n iterations of 8 independent VPDPBUSD on 256-bit registers (AVX-512
// VNNI with VL): 256 int8 multiply-adds per iteration.
TEXT ·peakDPBUSD(SB), NOSPLIT, $0-8
	MOVQ   n+0(FP), CX
	VPXORD Y0, Y0, Y0
	VPXORD Y1, Y1, Y1
	VPXORD Y2, Y2, Y2
	VPXORD Y3, Y3, Y3
	VPXORD Y4, Y4, Y4
	VPXORD Y5, Y5, Y5
	VPXORD Y6, Y6, Y6
	VPXORD Y7, Y7, Y7
	VPXORD Y8, Y8, Y8
	VPXORD Y9, Y9, Y9
	TESTQ  CX, CX
	JZ     dpdone

dploop:
	VPDPBUSD Y8, Y9, Y0
	VPDPBUSD Y8, Y9, Y1
	VPDPBUSD Y8, Y9, Y2
	VPDPBUSD Y8, Y9, Y3
	VPDPBUSD Y8, Y9, Y4
	VPDPBUSD Y8, Y9, Y5
	VPDPBUSD Y8, Y9, Y6
	VPDPBUSD Y8, Y9, Y7
	DECQ     CX
	JNZ      dploop

dpdone:
	VZEROUPPER
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
