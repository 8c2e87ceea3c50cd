package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Tests of the Q2_K, Q3_K, Q5_K and IQ4_XS kernels (q2k.go, q3k.go, q5k.go,
// iq4xs.go); the helpers are those of kquants_test.go.

// k2Type describes one of these weight types for the table-driven tests.
type k2Type struct {
	typ       Type
	bs        int    // bytes per block
	fast, ref VecDot // the registered kernel and the reference loop
	dOff      [2]int // F16 scale offsets in a block (−1: none)
}

func (c k2Type) gen(r *rand.Rand, nb int) []byte { return kRandBlocks(r, nb, c.bs, c.dOff) }

var k2Types = []k2Type{
	{Q2_K, q2KBytes, dotQ2K, dotQ2KRef, [2]int{q2KD, q2KD + 2}},
	{Q3_K, q3KBytes, dotQ3K, dotQ3KRef, [2]int{q3KD, -1}},
	{Q5_K, q5KBytes, dotQ5K, dotQ5KRef, [2]int{0, 2}},
	{IQ4_XS, iq4XSBytes, dotIQ4XS, dotIQ4XSRef, [2]int{0, -1}},
}

// kRandBlocks returns nb blocks of size bs of random bytes (every bit
// pattern of quants and scales is a valid block of these types) with F16
// super-block scales of a realistic size at dOff: the first of either sign,
// the second (a min's scale) positive.
func kRandBlocks(r *rand.Rand, nb, bs int, dOff [2]int) []byte {
	b := make([]byte, nb*bs)
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	for i := 0; i < nb; i++ {
		blk := b[i*bs : (i+1)*bs]
		for k, off := range dOff {
			if off < 0 {
				continue
			}
			d := 0.0005 + 0.01*r.Float32()
			if k == 0 && r.IntN(2) == 0 {
				d = -d
			}
			binary.LittleEndian.PutUint16(blk[off:], F32ToF16(d))
		}
	}
	return b
}

func TestKQuants2Registered(t *testing.T) {
	for _, c := range k2Types {
		if act, ok := ActType(c.typ); !ok || act != Q8_K {
			t.Errorf("ActType(%v) = %v, %v; want Q8_K, true", c.typ, act, ok)
		}
		if !CanDequantize(c.typ) || !c.typ.Supported() || c.typ.BlockSize() != qkK || c.typ.TypeSize() != c.bs {
			t.Errorf("%v: dequantize %v, supported %v, block %d×%d bytes", c.typ, CanDequantize(c.typ), c.typ.Supported(), c.typ.BlockSize(), c.typ.TypeSize())
		}
	}
	if IQ4_XS != 23 || IQ4_XS.String() != "IQ4_XS" {
		t.Errorf("IQ4_XS = %d %q", uint32(IQ4_XS), IQ4_XS.String())
	}
}

// TestDotK2MatchesDequant checks each reference dot against
// Σ dequant(w)·dequant(x) in float64.
func TestDotK2MatchesDequant(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, nb := range []int{1, 2, 5, 16} {
		n := nb * qkK
		x := kRandQ8K(r, nb)
		xf := make([]float32, n)
		dequantizeRowQ8K(xf, x)
		for _, c := range k2Types {
			w := c.gen(r, nb)
			wf := make([]float32, n)
			DequantizeRow(wf, c.typ, w)
			var want, mag float64
			for i := range wf {
				want += float64(wf[i]) * float64(xf[i])
				mag += math.Abs(float64(wf[i]) * float64(xf[i]))
			}
			got := c.ref(w, x, n)
			if err := math.Abs(float64(got) - want); err > 1e-5*mag {
				t.Errorf("%v nb=%d: dot %v, dequantized sum %v (|err| %g, scale %g)", c.typ, nb, got, want, err, mag)
			}
		}
	}
}

// TestDequantK2HandComputed checks one block of each type against values
// written out from the format's definition.
func TestDequantK2HandComputed(t *testing.T) {
	y := make([]float32, qkK)
	// Q2_K: d = 0.5, dmin = 0.25, sub-block s has scale s%16 and min 15−s;
	// element e is e%4 (so each qs byte holds four equal quants).
	w := make([]byte, q2KBytes)
	for s := 0; s < 16; s++ {
		w[s] = byte(s) | byte(15-s)<<4
	}
	for j := 0; j < 2; j++ {
		for k := 0; k < 4; k++ {
			for l := 0; l < 32; l++ {
				e := 128*j + 32*k + l
				w[q2KQs+32*j+l] |= byte(e%4) << (2 * k)
			}
		}
	}
	binary.LittleEndian.PutUint16(w[q2KD:], F32ToF16(0.5))
	binary.LittleEndian.PutUint16(w[q2KD+2:], F32ToF16(0.25))
	dequantizeRowQ2K(y, w)
	for e, v := range y {
		s := e / 16
		if want := 0.5*float32(s)*float32(e%4) - 0.25*float32(15-s); v != want {
			t.Fatalf("Q2_K element %d = %v, want %v", e, v, want)
		}
	}
	// Q3_K: d = 0.125, scale s−32 = s−8, element e is e%8 − 4.
	w = make([]byte, q3KBytes)
	for s := 0; s < 16; s++ {
		v := byte(s - 8 + 32)
		if s < 8 {
			w[q3KScales+s] |= v & 0xf
		} else {
			w[q3KScales+s-8] |= (v & 0xf) << 4
		}
		w[q3KScales+8+s%4] |= (v >> 4) << (2 * (s / 4))
	}
	for e := 0; e < qkK; e++ {
		u := e % 8 // q+4
		j, k, l := e/128, e%128/32, e%32
		w[q3KQs+32*j+l] |= byte(u&3) << (2 * k)
		if u >= 4 {
			w[l] |= 1 << (4*j + k)
		}
	}
	binary.LittleEndian.PutUint16(w[q3KD:], F32ToF16(0.125))
	dequantizeRowQ3K(y, w)
	for e, v := range y {
		if want := 0.125 * float32(e/16-8) * float32(e%8-4); v != want {
			t.Fatalf("Q3_K element %d = %v, want %v", e, v, want)
		}
	}
	// Q5_K: d = 0.5, dmin = 0.25, scales 1..8, mins 2·s, element e is e%32.
	w = make([]byte, q5KBytes)
	binary.LittleEndian.PutUint16(w, F32ToF16(0.5))
	binary.LittleEndian.PutUint16(w[2:], F32ToF16(0.25))
	for j := 0; j < 4; j++ {
		w[q5KScales+j] = byte(j + 1)
		w[q5KScales+4+j] = byte(2 * j)
		w[q5KScales+8+j] = byte(j+5) | byte(2*(j+4))<<4
	}
	for e := 0; e < qkK; e++ {
		u := e % 32
		j, half, l := e/64, e%64/32, e%32
		w[q5KQs+32*j+l] |= byte(u&15) << (4 * half)
		if u >= 16 {
			w[q5KQh+l] |= 1 << (2*j + half)
		}
	}
	dequantizeRowQ5K(y, w)
	for e, v := range y {
		s := e / 32
		if want := 0.5*float32(s+1)*float32(e%32) - 0.25*float32(2*s); v != want {
			t.Fatalf("Q5_K element %d = %v, want %v", e, v, want)
		}
	}
	// IQ4_XS: d = 0.25, scale of sub-block s is 8s−31 (6 bits), element e
	// picks level e%16.
	w = make([]byte, iq4XSBytes)
	binary.LittleEndian.PutUint16(w, F32ToF16(0.25))
	var sh uint16
	for s := 0; s < 8; s++ {
		v := byte(8*s + 1)
		w[4+s/2] |= (v & 0xf) << (4 * (s % 2))
		sh |= uint16(v>>4) << (2 * s)
	}
	binary.LittleEndian.PutUint16(w[2:], sh)
	for e := 0; e < qkK; e++ {
		s, l := e/32, e%32
		w[iq4XSQs+16*s+l%16] |= byte(e%16) << (4 * (l / 16))
	}
	dequantizeRowIQ4XS(y, w)
	for e, v := range y {
		if want := 0.25 * float32(8*(e/32)-31) * float32(kvaluesIQ4NL[e%16]); v != want {
			t.Fatalf("IQ4_XS element %d = %v, want %v", e, v, want)
		}
	}
}

func TestDotK2FastMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	for _, nb := range []int{1, 2, 3, 7, 16, 33} {
		for off := 0; off < 4; off++ {
			x := kRandQ8K(r, nb)
			rx := make([]byte, nb*q8KBytes)
			for i := range rx {
				rx[i] = byte(r.IntN(256))
			}
			for _, c := range k2Types {
				name := c.typ.String()
				kCheckFast(t, name, c.fast, c.ref, c.gen(r, nb), x, nb, off)
				// Arbitrary bytes: activation quants of −128, bsums that
				// disagree with them, NaN and infinite scales.
				rw := make([]byte, nb*c.bs)
				for i := range rw {
					rw[i] = byte(r.IntN(256))
				}
				kCheckFast(t, name+"/raw", c.fast, c.ref, rw, rx, nb, off)
			}
		}
	}
	// Extremes: all-ones weight bytes (largest quants and scales) against
	// activations of all −128 and all 127.
	for _, q := range []int8{-128, 127} {
		x := kUnitQ8K(q)
		for _, c := range k2Types {
			w := make([]byte, c.bs)
			for i := range w {
				w[i] = 0xff
			}
			for _, off := range c.dOff {
				if off >= 0 {
					binary.LittleEndian.PutUint16(w[off:], F32ToF16(1))
				}
			}
			kCheckFast(t, c.typ.String()+"/extreme", c.fast, c.ref, w, x, 1, 1)
		}
	}
}

func kFuzzDot2(f *testing.F, c k2Type) { kFuzzDot(f, c.typ.String(), c.bs, c.fast, c.ref) }

// TestDotQ2KRepacked checks the Q2KRepacked kernel against its reference
// (as TestDotK2FastMatchesReference) and against Σ dequant(w)·dequant(x),
// and that SetQ2KOrder switches the registered kernel and MatMul, every
// output bit-identical to the reference whatever the batch.
func TestDotQ2KRepacked(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, nb := range []int{1, 2, 3, 7, 16} {
		for off := 0; off < 3; off++ {
			x := kRandQ8K(r, nb)
			w := k2Types[0].gen(r, nb)
			kCheckFast(t, "Q2_K/repacked", dotQ2KR, dotQ2KRepackedRef, w, x, nb, off)
			rw, rx := make([]byte, nb*q2KBytes), make([]byte, nb*q8KBytes)
			for _, b := range [][]byte{rw, rx} {
				for i := range b {
					b[i] = byte(r.IntN(256))
				}
			}
			kCheckFast(t, "Q2_K/repacked/raw", dotQ2KR, dotQ2KRepackedRef, rw, rx, nb, off)

			n := nb * qkK
			wf, xf := make([]float32, n), make([]float32, n)
			dequantizeRowQ2K(wf, w)
			dequantizeRowQ8K(xf, x)
			var want, mag float64
			for i := range wf {
				want += float64(wf[i]) * float64(xf[i])
				mag += math.Abs(float64(wf[i]) * float64(xf[i]))
			}
			if got := dotQ2KRepackedRef(w, x, n); math.Abs(float64(got)-want) > 1e-5*mag {
				t.Errorf("nb=%d: repacked-order dot %v, dequantized sum %v", nb, got, want)
			}
		}
	}
	for _, q := range []int8{-128, 127} {
		w := make([]byte, q2KBytes)
		for i := range w {
			w[i] = 0xff
		}
		binary.LittleEndian.PutUint16(w[q2KD:], F32ToF16(1))
		binary.LittleEndian.PutUint16(w[q2KD+2:], F32ToF16(1))
		kCheckFast(t, "Q2_K/repacked/extreme", dotQ2KR, dotQ2KRepackedRef, w, kUnitQ8K(q), 1, 1)
	}

	defer SetQ2KOrder(q2Order)
	SetQ2KOrder(Q2KRepacked)
	if k, _ := kernelFor(Q2_K); k.dot == nil {
		t.Fatal("no Q2_K kernel")
	}
	p := NewPool(2)
	defer p.Close()
	const rows, maxN = 37, 9
	cols := 2 * qkK
	m := &Matrix{Type: Q2_K, Rows: rows, Cols: cols, Data: k2Types[0].gen(r, rows*2)}
	xs := kRandFloats(r, maxN*cols)
	a := make([]byte, RowSize(Q8_K, cols))
	for n := 1; n <= maxN; n++ {
		out := make([]float32, n*rows)
		p.MatMul(out, m, xs, n)
		for tok := range n {
			quantizeRowQ8K(a, xs[tok*cols:(tok+1)*cols])
			for row := range rows {
				if want := dotQ2KRepackedRef(m.Row(row), a, cols); !kSameBits(out[tok*rows+row], want) {
					t.Fatalf("n=%d: out[%d, %d] = %v, repacked-order reference %v", n, tok, row, out[tok*rows+row], want)
				}
			}
		}
	}
	SetQ2KOrder(Q2KLanes)
	out := make([]float32, rows)
	p.MatMul(out, m, xs, 1)
	quantizeRowQ8K(a, xs[:cols])
	if want := dotQ2KRef(m.Row(0), a, cols); !kSameBits(out[0], want) {
		t.Fatalf("after SetQ2KOrder(Q2KLanes): %v, lanes-order reference %v", out[0], want)
	}
}

func FuzzDotQ2_KRepacked(f *testing.F) {
	kFuzzDot(f, "Q2_K/repacked", q2KBytes, dotQ2KR, dotQ2KRepackedRef)
}

func FuzzDotQ2_K(f *testing.F)   { kFuzzDot2(f, k2Types[0]) }
func FuzzDotQ3_K(f *testing.F)   { kFuzzDot2(f, k2Types[1]) }
func FuzzDotQ5_K(f *testing.F)   { kFuzzDot2(f, k2Types[2]) }
func FuzzDotIQ4_XS(f *testing.F) { kFuzzDot2(f, k2Types[3]) }

// TestKQuants2MatMul runs matrices of these types through MatMul (Q8_K
// activation conversion, the gemv kernels where present, 1-3 threads, 1-12
// tokens) and checks every output against the reference dot, bit for bit.
func TestKQuants2MatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	pools := []*Pool{NewPool(1), NewPool(2), NewPool(3)}
	defer func() {
		for _, p := range pools {
			p.Close()
		}
	}()
	const rows, maxN = 67, 12
	for _, c := range k2Types {
		for _, nb := range []int{1, 3} {
			cols := nb * qkK
			m := &Matrix{Type: c.typ, Rows: rows, Cols: cols, Data: c.gen(r, rows*nb)}
			if err := m.Check(); err != nil {
				t.Fatal(err)
			}
			x := kRandFloats(r, maxN*cols)
			want := make([]float32, maxN*rows)
			a := make([]byte, RowSize(Q8_K, cols))
			for tok := range maxN {
				quantizeRowQ8K(a, x[tok*cols:(tok+1)*cols])
				for row := range rows {
					want[tok*rows+row] = c.ref(m.Row(row), a, cols)
				}
			}
			for _, p := range pools {
				for n := 1; n <= maxN; n++ {
					start := (n * 5) % (maxN - n + 1)
					out := make([]float32, n*rows+1)
					out[n*rows] = 7
					p.MatMul(out, m, x[start*cols:(start+n)*cols], n)
					for i := range n * rows {
						if !kSameBits(out[i], want[start*rows+i]) {
							t.Fatalf("%v cols=%d threads=%d n=%d: out[%d] = %g, single dot %g", c.typ, cols, p.Threads(), n, i, out[i], want[start*rows+i])
						}
					}
					if out[n*rows] != 7 {
						t.Fatalf("%v threads=%d n=%d: wrote past the output", c.typ, p.Threads(), n)
					}
				}
			}
		}
	}
}

func TestKQuants2NoAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	const nb = 4
	x := kRandQ8K(r, nb)
	f := make([]float32, nb*qkK)
	p := NewPool(2)
	defer p.Close()
	for _, c := range k2Types {
		w := c.gen(r, nb)
		var sink float32
		if a := testing.AllocsPerRun(20, func() {
			sink += c.fast(w, x, nb*qkK)
			DequantizeRow(f, c.typ, w)
		}); a != 0 {
			t.Errorf("%v: %v allocations per dot and dequantize, want 0", c.typ, a)
		}
		_ = sink
		m := &Matrix{Type: c.typ, Rows: 8, Cols: nb * qkK, Data: c.gen(r, 8*nb)}
		xs := kRandFloats(r, 7*m.Cols)
		out := make([]float32, 7*m.Rows)
		p.MatMul(out, m, xs, 7)
		for _, n := range []int{1, 3, 7} {
			if a := testing.AllocsPerRun(10, func() { p.MatMul(out, m, xs, n) }); a != 0 {
				t.Errorf("%v MatMul with %d tokens: %v allocations per run, want 0", c.typ, n, a)
			}
		}
	}
}

// TestQuantizeK2RoundTrip quantizes random rows through QuantizeRow and
// checks the dequantized error against each format's resolution.
func TestQuantizeK2RoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(39, 40))
	for _, c := range []struct {
		typ Type
		tol float64 // allowed RMS error relative to the row's RMS
	}{{Q2_K, 0.5}, {Q3_K, 0.25}, {Q5_K, 0.08}, {IQ4_XS, 0.15}} {
		checkKRoundTrip(t, r, c.typ, c.tol)
	}
}

// TestKQuants2Golden checks the quantizers and dequantizers of Q2_K, Q3_K,
// Q5_K and IQ4_XS bit for bit against llama.cpp's own functions, and the dot
// products bit for bit against its AVX2 vec_dot kernels, on quantized and
// on arbitrary blocks. It also measures the rounding differences against
// the other arithmetic llama.cpp uses for two of these types: the repacked
// Q2_K gemv and gemm of its AVX-512 builds, and IQ4_XS's panel gemm for
// batches of 8 or more. The golden file is made by
// testdata/kquants2_golden.c (see there to regenerate it).
func TestKQuants2Golden(t *testing.T) {
	r, hdr := openRefFile(t, "kquants2.golden", "KQGOLD2\n", 2)
	nb, rows := hdr[0], hdr[1]
	n := nb * qkK
	x := r.floats(n)
	q8 := r.bytes(nb * q8KBytes)
	wf := r.floats(rows * n)
	q8raw := r.bytes(nb * q8KBytes)

	got := make([]byte, len(q8))
	quantizeQ8K(got, x)
	if string(got) != string(q8) {
		t.Fatal("Q8_K activations differ from llama.cpp's")
	}
	xf := make([]float32, n)
	dequantizeRowQ8K(xf, q8)

	quants := map[Type][]byte{}
	y := make([]float32, n)
	for _, c := range k2Types {
		rb := nb * c.bs
		q := r.bytes(rows * rb)
		deq := r.floats(rows * n)
		dots := r.floats(rows)
		raw := r.bytes(rows * rb)
		rawDots := r.floats(rows)
		rawDots8 := r.floats(rows)
		quants[c.typ] = q
		b := make([]byte, rb)
		for r := 0; r < rows; r++ {
			if err := QuantizeRow(b, c.typ, wf[r*n:(r+1)*n]); err != nil {
				t.Fatal(err)
			}
			want := q[r*rb : (r+1)*rb]
			for i := range b {
				if b[i] != want[i] {
					t.Fatalf("%v row %d: quantized byte %d (block %d, offset %d) = %#x, llama.cpp %#x", c.typ, r, i, i/c.bs, i%c.bs, b[i], want[i])
				}
			}
			DequantizeRow(y, c.typ, want)
			for i := range y {
				if math.Float32bits(y[i]) != math.Float32bits(deq[r*n+i]) {
					t.Fatalf("%v row %d: dequantized element %d = %v, llama.cpp %v", c.typ, r, i, y[i], deq[r*n+i])
				}
			}
			for _, d := range []struct {
				name string
				w, x []byte
				want float32
			}{
				{"quantized", want, q8, dots[r]},
				{"raw", raw[r*rb : (r+1)*rb], q8, rawDots[r]},
				{"raw/raw q8", raw[r*rb : (r+1)*rb], q8raw, rawDots8[r]},
			} {
				for _, impl := range []struct {
					name string
					dot  VecDot
				}{{"reference", c.ref}, {"registered", c.fast}} {
					if g := impl.dot(d.w, d.x, n); !kSameBits(g, d.want) {
						t.Errorf("%v row %d %s: %s dot %v (%#x), llama.cpp vec_dot %v (%#x)", c.typ, r, d.name, impl.name, g, math.Float32bits(g), d.want, math.Float32bits(d.want))
					}
				}
			}
		}
	}
	gemv2 := r.floats(rows)
	gemm2 := r.floats(rows)
	mm1 := r.floats(rows)
	mm8 := r.floats(rows)
	r.done()
	// In the Q2KRepacked order Q2_K follows the repacked gemv bit for bit.
	q2 := quants[Q2_K]
	for r := 0; r < rows; r++ {
		w := q2[r*nb*q2KBytes : (r+1)*nb*q2KBytes]
		for _, impl := range []struct {
			name string
			dot  VecDot
		}{{"reference", dotQ2KRepackedRef}, {"registered", dotQ2KR}} {
			if g := impl.dot(w, q8, n); !kSameBits(g, gemv2[r]) {
				t.Errorf("Q2_K row %d: %s repacked-order dot %v (%#x), llama.cpp repacked gemv %v (%#x)", r, impl.name, g, math.Float32bits(g), gemv2[r], math.Float32bits(gemv2[r]))
			}
		}
	}
	for _, c := range []struct {
		typ   Type
		name  string
		want  []float32
		exact bool
	}{
		{Q2_K, "repacked gemv (AVX-512 builds)", gemv2, false},
		{Q2_K, "repacked gemm (AVX-512 builds, 4 tokens)", gemm2, false},
		{IQ4_XS, "ggml_mul_mat, 1 token", mm1, true},
		{IQ4_XS, "ggml_mul_mat, 8 tokens (panel gemm)", mm8, false},
	} {
		rb := RowSize(c.typ, n)
		var worst float64
		for r := 0; r < rows; r++ {
			w := quants[c.typ][r*rb : (r+1)*rb]
			wd := make([]float32, n)
			DequantizeRow(wd, c.typ, w)
			var mag float64
			for i := range wd {
				mag += math.Abs(float64(wd[i]) * float64(xf[i]))
			}
			g := dotK2(c.typ)(w, q8, n)
			d := math.Abs(float64(g) - float64(c.want[r]))
			if c.exact && !kSameBits(g, c.want[r]) || d > 1e-6*mag {
				t.Errorf("%v row %d: dot %v, llama.cpp %s %v (|diff| %g, scale %g)", c.typ, r, g, c.name, c.want[r], d, mag)
			}
			if mag > 0 {
				worst = max(worst, d/mag)
			}
		}
		t.Logf("%v against llama.cpp's %s: largest |diff| %.2g of Σ|w·x|", c.typ, c.name, worst)
	}
}

// dotK2 returns the registered kernel of t (one of k2Types).
func dotK2(t Type) VecDot {
	for _, c := range k2Types {
		if c.typ == t {
			return c.fast
		}
	}
	panic(fmt.Sprintf("dotK2(%v)", t))
}

func BenchmarkDotQ2_K(b *testing.B)      { kBenchDot2(b, k2Types[0], false) }
func BenchmarkDotQ2_KRef(b *testing.B)   { kBenchDot2(b, k2Types[0], true) }
func BenchmarkDotQ3_K(b *testing.B)      { kBenchDot2(b, k2Types[1], false) }
func BenchmarkDotQ3_KRef(b *testing.B)   { kBenchDot2(b, k2Types[1], true) }
func BenchmarkDotQ5_K(b *testing.B)      { kBenchDot2(b, k2Types[2], false) }
func BenchmarkDotQ5_KRef(b *testing.B)   { kBenchDot2(b, k2Types[2], true) }
func BenchmarkDotIQ4_XS(b *testing.B)    { kBenchDot2(b, k2Types[3], false) }
func BenchmarkDotIQ4_XSRef(b *testing.B) { kBenchDot2(b, k2Types[3], true) }

func kBenchDot2(b *testing.B, c k2Type, ref bool) {
	dot := c.fast
	if ref {
		dot = c.ref
	}
	kBenchDot(b, c.bs, dot, c.gen)
}
