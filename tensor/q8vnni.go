//go:build (amd64 || arm64) && !noasm

package tensor

import (
	"encoding/binary"
	"math"
)

// The q8VNNI activation layout (named for the amd64 VNNI kernels that
// introduced it; dotq_amd64.go) serves the AVX2, AVX-512 VNNI and arm64
// Q4_0 kernels: a Q8_0 block with its scale as a float32 and the part of
// every row's sum that depends on the activation alone, computed once per
// MatMul by the conversion instead of once per group of rows and token.

//	block_q8_vnni {
//		qs  [32]int8  // the Q8_0 quants
//		d   float32   // F16ToF32 of the Q8_0 scale (so d_w·d_x is unchanged)
//		off int32     // -8·Σ qs for Q4_0 weights, -128·Σ qs for Q8_0 weights
//	}                 // 40 bytes

// q8VNNI is the activation type of Q4_0 weights (amd64: q8VNNI128 that of
// Q8_0 under the VNNI kernels), an id ggml does not use; it is not a
// weight type (Supported is false).
const q8VNNI Type = 61

// q8VNNISize is a q8VNNI block's bytes.
const q8VNNISize = 40

// q8VNNIFromQ8_0 converts nb Q8_0 blocks at src into q8VNNI blocks at dst,
// with off = -(Σ qs) << shift (3 for Q4_0 weights, 7 for Q8_0): the layout
// in Go, and the reference the conversion and the kernels are tested
// against.
func q8VNNIFromQ8_0(dst, src []byte, nb, shift int) {
	for i := range nb {
		s := src[i*q8_0Size : (i+1)*q8_0Size]
		d := dst[i*q8VNNISize : (i+1)*q8VNNISize]
		copy(d[:qk], s[2:])
		var all int32
		for _, q := range s[2:] {
			all += int32(int8(q))
		}
		binary.LittleEndian.PutUint32(d[32:], math.Float32bits(F16ToF32(le16(s))))
		binary.LittleEndian.PutUint32(d[36:], uint32(-all<<shift))
	}
}

// q8VNNIInPlace converts the nb Q8_0 blocks at the end of dst (from byte
// nb·(q8VNNISize-q8_0Size)) into q8VNNI blocks from its start, with off =
// -(Σ qs) << shift. Block i's source starts at or after the end of
// destination block i-1 and is read before block i is written, so nothing
// is overwritten before it is read.
func q8VNNIInPlace(dst []byte, nb, shift int) {
	base := nb * (q8VNNISize - q8_0Size)
	for i := range nb {
		s := dst[base+i*q8_0Size : base+(i+1)*q8_0Size]
		d := F16ToF32(le16(s))
		var all int32
		for _, v := range s[2:] {
			all += int32(int8(v))
		}
		o := dst[i*q8VNNISize : (i+1)*q8VNNISize]
		copy(o[:qk], s[2:])
		binary.LittleEndian.PutUint32(o[32:], math.Float32bits(d))
		binary.LittleEndian.PutUint32(o[36:], uint32(-all<<shift))
	}
}
