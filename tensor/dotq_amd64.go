//go:build amd64 && !noasm

package tensor

import (
	"encoding/binary"
	"math"
	"sync"
)

// Q8_0 and Q4_0 weights with AVX-512 VNNI. llama.cpp converts activations
// for both to Q8_0 blocks; the kernels here take the same quants and scale
// in a block laid out for VPDPBUSD, with the parts that depend on the
// activation alone computed once per MatMul by the conversion instead of
// once per weight row (or group of eight rows) and token:
//
//	block_q8_vnni {
//		qs   [32]int8   // the Q8_0 quants
//		off  [8]int32   // off[l] = -128·Σ qs[4l:4l+4]
//		d    float32    // F16ToF32 of the Q8_0 scale (so d_w·d_x is unchanged)
//		off8 int32      // -8·Σ qs
//	}                   // 72 bytes
//
// Q8_0 weights flip their quants to unsigned (w+128) once per block;
// VPDPBUSD's lane sums Σ (w+128)·x over groups of 4, started from off, are
// ggml's lane sums Σ w·x. Q4_0 weights keep their nibbles unsigned and start
// each row's whole sum from off8, giving Σ (q-8)·y. The float operations per
// output are those of dotQ8_0Generic and dotQ4_0Generic, in their order, so
// results are bit-identical to the ggml-layout kernels and to llama.cpp.
//
// The AVX2 kernels (dot_amd64.go) and the pure-Go ones keep the ggml Q8_0
// layout; ActType(Q8_0) and ActType(Q4_0) are q8VNNI only while useVNNI.

// q8VNNI is the activation type of Q8_0 and Q4_0 weights under useVNNI, an
// id ggml does not use; it is not a weight type (Supported is false).
const (
	q8VNNI     Type = 61
	q8VNNISize      = 72
)

func init() {
	types[q8VNNI] = typeInfo{"Q8_0 (VNNI activation layout)", qk, q8VNNISize, false}
	if hasVNNI {
		registerAct(q8VNNI, quantizeQ8VNNIAct)
	}
}

// registerQ0Kernels registers the Q8_0 and Q4_0 kernels of the form
// useVNNI selects (called from q8.go's init, after dot_amd64.go's has
// installed the AVX2 ones).
func registerQ0Kernels() { setVNNI(useVNNI) }

// setVNNI sets useVNNI (where hasVNNI) and registers the Q8_0 and Q4_0
// kernels of that form with their activation type. Tests flip the form
// through it.
func setVNNI(v bool) {
	useVNNI = v && hasVNNI
	if useVNNI {
		registerKernel(Q8_0, q8VNNI, dotQ8_0V)
		registerKernel(Q4_0, q8VNNI, dotQ4_0V)
		registerGemv(Q8_0, gemvQ8_0V)
		registerGemv(Q4_0, gemvQ4_0V)
		return
	}
	registerKernel(Q8_0, Q8_0, dotQ8_0)
	registerKernel(Q4_0, Q8_0, dotQ4_0)
	if hasAVX2FMA {
		registerGemv(Q8_0, gemvQ8_0)
		registerGemv(Q4_0, gemvQ4_0)
	}
}

// q8_0RowsV computes, over nb blocks, for ntok (1 to 8) q8VNNI activation
// rows in one pass over the weights,
//
//	for t := range ntok { for r := range rows {
//		out[t*ostride+r] = dotQ8_0Generic(w[r*wstride:], q8_0 form of x[t*xstride:], 32*nb) } }
//
// Where nb > q8vTabBlocks, tab holds 8*nb floats of scratch (the tokens'
// scales, gathered once per call; smaller tables live in its frame).
//
//go:noescape
func q8_0RowsV(w *byte, wstride, rows int, x *byte, xstride, ntok, nb int, out *float32, ostride int, tab *float32)

// q8_0RowsV1 is q8_0RowsV for one token (ntok 1, no table).
//
//go:noescape
func q8_0RowsV1(w *byte, wstride, rows int, x *byte, nb int, out *float32)

// q8_0Rows2x5V is q8_0RowsV for five tokens, with weight rows r and
// r+pairs (half bytes further) in pairs,
//
//	for t := range 5 { for r := range 2*pairs {
//		out[t*ostride+r] = dotQ8_0Generic(w[r%pairs*wstride+r/pairs*half:], q8_0 form of x[t*xstride:], 32*nb) } }
//
// tab holds the tokens' float32 scales, block i token t at 8*i+t, lanes 5
// to 7 zero (q8vScales5).
//
//go:noescape
func q8_0Rows2x5V(w *byte, wstride, pairs, half int, x *byte, xstride, nb int, tab *float32, out *float32, ostride int)

// q8Pairs5 selects q8_0Rows2x5V for five-token Q8_0 passes (benchmarks
// compare it with q8_0RowsV through it).
var q8Pairs5 = true

// q8vScales5 gathers five tokens' q8VNNI scales over nb blocks into tab
// (8*nb floats) in q8_0Rows2x5V's layout.
func q8vScales5(tab []float32, x []byte, xs, nb int) {
	for i := range nb {
		d := tab[8*i : 8*i+8]
		for t := range 5 {
			o := t*xs + i*q8VNNISize + 64
			d[t] = math.Float32frombits(binary.LittleEndian.Uint32(x[o : o+4]))
		}
		d[5], d[6], d[7] = 0, 0, 0
	}
}

// q8vTabBlocks is the number of blocks whose scale table fits in
// q8_0RowsV's frame (dotq_amd64.s).
const q8vTabBlocks = 512

// q4_0Rows8V computes, over nb blocks, for groups of eight weight rows and
// ntok (1 to 8) q8VNNI activation rows,
//
//	for t := range ntok { for r := range 8*groups {
//		out[t*ostride+r] = dotQ4_0Generic(w[r*wstride:], q8_0 form of x[t*xstride:], 32*nb) } }
//
//go:noescape
func q4_0Rows8V(w *byte, wstride, groups int, x *byte, xstride, ntok, nb int, out *float32, ostride int)

func dotQ8_0V(w, x []byte, n int) float32 {
	var o [1]float32
	gemvQ8_0V(w, 0, 1, x, 0, 1, n, o[:], 0)
	return o[0]
}

func dotQ4_0V(w, x []byte, n int) float32 {
	var o [1]float32
	gemvQ4_0V(w, 0, 1, x, 0, 1, n, o[:], 0)
	return o[0]
}

func gemvQ8_0V(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qk
	checkGemv(len(w), ws, rows, nb*q8_0Size, len(x), xs, ntok, nb*q8VNNISize, len(out), os)
	if ntok == 1 {
		q8_0RowsV1(ptr(w), ws, rows, &x[0], nb, &out[0])
		return
	}
	if ntok == 5 && q8Pairs5 && rows >= 2 && nb > 0 {
		p := q8vTable(nb)
		defer q8vTabs.Put(p)
		tab := *p
		q8vScales5(tab, x, xs, nb)
		pairs := rows / 2
		q8_0Rows2x5V(ptr(w), ws, pairs, pairs*ws, &x[0], xs, nb, &tab[0], &out[0], os)
		if rows%2 != 0 {
			// The odd last row through q8_0RowsV: the same arithmetic.
			r := rows - 1
			q8_0RowsV(&w[r*ws], ws, 1, &x[0], xs, 5, nb, &out[r], os, &tab[0])
		}
		return
	}
	var tab *float32
	if nb > q8vTabBlocks {
		// Rows wider than the kernel's frame table (FFN widths above
		// 16384, as in 7B-class models): a pooled table, so steady-state
		// passes still do not allocate.
		p := q8vTable(nb)
		defer q8vTabs.Put(p)
		tab = &(*p)[0]
	}
	for t := 0; t < ntok; t += 8 {
		q8_0RowsV(ptr(w), ws, rows, &x[t*xs], xs, min(8, ntok-t), nb, &out[t*os], os, tab)
	}
}

// q8vTabs holds gemvQ8_0V's scale tables that do not live in a kernel's
// frame.
var q8vTabs = sync.Pool{New: func() any { return new([]float32) }}

// q8vTable takes a table of 8*nb floats from q8vTabs (give it back with
// Put), so steady-state passes do not allocate.
func q8vTable(nb int) *[]float32 {
	p := q8vTabs.Get().(*[]float32)
	if cap(*p) < 8*nb {
		*p = make([]float32, 8*nb)
	}
	*p = (*p)[:8*nb]
	return p
}

func gemvQ4_0V(w []byte, ws, rows int, x []byte, xs, ntok, cols int, out []float32, os int) {
	nb := cols / qk
	checkGemv(len(w), ws, rows, nb*q4_0Size, len(x), xs, ntok, nb*q8VNNISize, len(out), os)
	groups := rows / 8
	for t := 0; t < ntok; t += 8 {
		nt := min(8, ntok-t)
		if groups > 0 {
			q4_0Rows8V(ptr(w), ws, groups, &x[t*xs], xs, nt, nb, &out[t*os], os)
		}
		for r := 8 * groups; r < rows; r++ {
			// A lone row runs as a group of eight copies of itself (stride
			// 0): the same arithmetic, so it matches its grouped neighbours.
			var o [8 * 8]float32
			q4_0Rows8V(&w[r*ws], 0, 1, &x[t*xs], xs, nt, nb, &o[0], 8)
			for i := range nt {
				out[(t+i)*os+r] = o[8*i]
			}
		}
	}
}

// q8VNNIFromQ8_0 converts nb Q8_0 blocks at src into q8VNNI blocks at dst:
// the layout in Go, and the reference the conversion and the kernels are
// tested against.
func q8VNNIFromQ8_0(dst, src []byte, nb int) {
	for i := range nb {
		s := src[i*q8_0Size : (i+1)*q8_0Size]
		d := dst[i*q8VNNISize : (i+1)*q8VNNISize]
		copy(d[:qk], s[2:])
		var all int32
		for l := range 8 {
			var sum int32
			for _, q := range s[2+4*l : 6+4*l] {
				sum += int32(int8(q))
			}
			binary.LittleEndian.PutUint32(d[32+4*l:], uint32(-128*sum))
			all += sum
		}
		binary.LittleEndian.PutUint32(d[64:], math.Float32bits(F16ToF32(le16(s))))
		binary.LittleEndian.PutUint32(d[68:], uint32(-8*all))
	}
}
