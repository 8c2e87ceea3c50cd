//go:build amd64 && !noasm

package tensor

import (
	"encoding/binary"
	"math"
)

// The VNNI forms of the lanes types Q4_1, Q5_0 and Q5_1 (AVX-512 VL and
// VNNI; the kernels are in dotq32_amd64.s). One pass over a weight row
// serves up to eight tokens, each taking per block one VPDPBUSD for its
// eight lane sums, one conversion, one multiply for d_w·d_x and one FMA, so
// the activations come in layouts that have d_x (and s_x) as float32 and,
// for Q5_0, whose weights VPDPBUSD must take unsigned (as q+16), each
// lane's -16·Σy:
//
//	block_q8_1_vnni  { qs [32]int8; d, s float32 }                 40 bytes
//	block_q8_lanes   { qs [32]int8; off [8]int32; d float32 }      68 bytes
//	                   off[l] = -16·(qs[4l]+qs[4l+1]+qs[4l+2]+qs[4l+3])
//
// d and s are the F16 values of the Q8_0/Q8_1 blocks they come from, made
// float32, so every product and sum is the AVX2 kernels': bit-identical
// results. These are activation types only (Supported is false).

const (
	q8_1VNNI        Type = 59
	q8LanesVNNI     Type = 58
	q8_1VNNISize         = 40
	q8LanesVNNISize      = 68
)

// registerQ32VNNITypes registers the converters into the two layouts where
// the VNNI set may run (their names are in registerArchTypeInfos).
func registerQ32VNNITypes() {
	if hasVNNI {
		registerAct(q8_1VNNI, quantizeQ8_1VNNIAct)
		registerAct(q8LanesVNNI, quantizeQ8LanesVNNIAct)
	}
}

// q4_1RowsV, q5_0RowsV and q5_1RowsV are generated (asm/q32.go) into
// dotq32_lanes_amd64.s and declared in dotq32_lanes_stubs_amd64.go.

func gemvQ4_1V(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvLanesV(q4_1RowsV, q4_1Size, q8_1VNNISize, w, ws, rows, x, xs, ntok, cols, out, os)
}

func gemvQ5_0V(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvLanesV(q5_0RowsV, q5_0Size, q8LanesVNNISize, w, ws, rows, x, xs, ntok, cols, out, os)
}

func gemvQ5_1V(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	gemvLanesV(q5_1RowsV, q5_1Size, q8_1VNNISize, w, ws, rows, x, xs, ntok, cols, out, os)
}

// gemvLanesV runs a VNNI lanes kernel over the tokens eight at a time.
func gemvLanesV(kern rowsN, bsize, asize int, w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qk
	checkGemv(len(w), ws, rows, nb*bsize, len(x), xs, ntok, nb*asize, len(out), os)
	for t := 0; t < ntok; t += 8 {
		kern(ptr(w), ws, rows, &x[t*xs], xs, min(8, ntok-t), nb, &out[t*os], os)
	}
}

func dotQ4_1V(w, x []byte, n int) float32 { return gemvDot(gemvQ4_1V, w, x, n) }
func dotQ5_0V(w, x []byte, n int) float32 { return gemvDot(gemvQ5_0V, w, x, n) }
func dotQ5_1V(w, x []byte, n int) float32 { return gemvDot(gemvQ5_1V, w, x, n) }

// quantizeQ8_1VNNIAct converts activations to q8_1VNNI: the AVX2 Q8_0
// converter's quants and d, laid out in place from the last block down,
// with s as quantizeQ8_1ActGeneric computes it.
func quantizeQ8_1VNNIAct(dst []byte, src []float32) {
	dst, nb := quantizeQ8_0Head(dst, src, q8_1VNNISize)
	for i := nb - 1; i >= 0; i-- {
		d, b := q8_0Unpack(dst, i, q8_1VNNISize)
		var amax float32
		for _, v := range src[i*qk : (i+1)*qk] {
			if a := abs32(v); a > amax {
				amax = a
			}
		}
		var sum int32
		for _, q := range b[:qk] {
			sum += int32(int8(q))
		}
		s := F16ToF32(F32ToF16(float32(float32(amax/127) * float32(sum))))
		binary.LittleEndian.PutUint32(b[32:], math.Float32bits(d))
		binary.LittleEndian.PutUint32(b[36:], math.Float32bits(s))
	}
}

// quantizeQ8LanesVNNIAct converts activations to q8LanesVNNI: the AVX2
// Q8_0 converter's quants and d, laid out in place from the last block
// down, with the lane offsets.
func quantizeQ8LanesVNNIAct(dst []byte, src []float32) {
	dst, nb := quantizeQ8_0Head(dst, src, q8LanesVNNISize)
	for i := nb - 1; i >= 0; i-- {
		d, b := q8_0Unpack(dst, i, q8LanesVNNISize)
		q8LanesOffsets(b)
		binary.LittleEndian.PutUint32(b[64:], math.Float32bits(d))
	}
}

// q8_0Unpack moves the quants of the Q8_0 block i at the start of dst to
// the start of the block i of size bytes (size ≥ q8_0Size, so the move
// from the last block down overwrites only blocks already moved) and
// returns the block's d and its new bytes.
func q8_0Unpack(dst []byte, i, size int) (float32, []byte) {
	d := F16ToF32(le16(dst[i*q8_0Size:]))
	b := dst[i*size : (i+1)*size]
	copy(b[:qk], dst[i*q8_0Size+2:(i+1)*q8_0Size])
	return d, b
}

// q8LanesOffsets writes a q8LanesVNNI block's lane offsets from its quants.
func q8LanesOffsets(b []byte) {
	for l := range 8 {
		var s int32
		for _, q := range b[4*l : 4*l+4] {
			s += int32(int8(q))
		}
		binary.LittleEndian.PutUint32(b[32+4*l:], uint32(-16*s))
	}
}

// q8_1VNNIFromQ8_1 and q8LanesVNNIFromQ8_0 convert nb ggml Q8_1 or Q8_0
// blocks at src into the VNNI layouts at dst: the layouts in Go, and the
// references the converters and the kernels are tested against.
func q8_1VNNIFromQ8_1(dst, src []byte, nb int) {
	for i := range nb {
		s := src[i*q8_1Size : (i+1)*q8_1Size]
		b := dst[i*q8_1VNNISize : (i+1)*q8_1VNNISize]
		copy(b[:qk], s[4:])
		binary.LittleEndian.PutUint32(b[32:], math.Float32bits(F16ToF32(le16(s))))
		binary.LittleEndian.PutUint32(b[36:], math.Float32bits(F16ToF32(le16(s[2:]))))
	}
}

func q8LanesVNNIFromQ8_0(dst, src []byte, nb int) {
	for i := range nb {
		s := src[i*q8_0Size : (i+1)*q8_0Size]
		b := dst[i*q8LanesVNNISize : (i+1)*q8LanesVNNISize]
		copy(b[:qk], s[2:])
		q8LanesOffsets(b)
		binary.LittleEndian.PutUint32(b[64:], math.Float32bits(F16ToF32(le16(s))))
	}
}
