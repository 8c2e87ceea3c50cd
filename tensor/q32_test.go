package tensor

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestQ32Golden checks the Q8_0 and Q8_1 activation converters, the Q4_1,
// Q5_0, Q5_1 and IQ4_NL quantizers and dequantizers bit for bit against
// llama.cpp's own functions, and the dots — the registered kernels, the
// references and MatMul of the four tokens — bit for bit against what
// llama.cpp's CPU backend computes for each type: vec_dot for Q4_1 and
// Q5_1 (for every batch), vec_dot and llamafile's batch kernel for Q5_0,
// the repacked gemv and gemm for IQ4_NL. The golden file is made by
// testdata/q32_golden.c (see there to regenerate it).
func TestQ32Golden(t *testing.T) {
	r, hdr := openRefFile(t, "q32.golden", "Q32GLD1\n", 4)
	nb, rows, ntok, ntypes := hdr[0], hdr[1], hdr[2], hdr[3]
	n := nb * qk
	x := r.floats(ntok * n)
	q8_0 := r.bytes(ntok * nb * q8_0Size)
	q8_1 := r.bytes(ntok * nb * q8_1Size)
	wf := r.floats(rows * n)
	type golden struct {
		typ          Type
		q            []byte
		deq, dot, mm []float32
	}
	var gs []golden
	for range ntypes {
		g := golden{typ: Type(r.u32())}
		g.q = r.bytes(rows * RowSize(g.typ, n))
		g.deq = r.floats(rows * n)
		g.dot = r.floats(ntok * rows)
		g.mm = r.floats(ntok * rows)
		gs = append(gs, g)
	}
	gemvNL := r.floats(ntok * rows)
	gemmNL := r.floats(ntok * rows)
	r.done()

	acts := map[Type][]byte{Q8_0: q8_0, Q8_1: q8_1}
	for _, c := range []struct {
		act  Type
		name string
		f    ActQuant
	}{
		{Q8_0, "Q8_0", quantizeQ8_0Act}, {Q8_1, "Q8_1", quantizeQ8_1Act}, {Q8_1, "Q8_1 reference", quantizeQ8_1ActGeneric},
	} {
		ab := RowSize(c.act, n)
		got := make([]byte, ab)
		for tok := range ntok {
			c.f(got, x[tok*n:(tok+1)*n])
			if want := acts[c.act][tok*ab : (tok+1)*ab]; !bytes.Equal(got, want) {
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%s activations, token %d: byte %d (block %d, offset %d) = %#x, llama.cpp %#x", c.name, tok, i, i/c.act.TypeSize(), i%c.act.TypeSize(), got[i], want[i])
					}
				}
			}
		}
	}

	p := NewPool(2)
	defer p.Close()
	for _, g := range gs {
		rb := RowSize(g.typ, n)
		got := make([]byte, rb)
		y := make([]float32, n)
		for r := range rows {
			if err := QuantizeRow(got, g.typ, wf[r*n:(r+1)*n]); err != nil {
				t.Fatal(err)
			}
			want := g.q[r*rb : (r+1)*rb]
			for i := range got {
				if got[i] != want[i] {
					bs := g.typ.TypeSize()
					t.Fatalf("%v row %d: quantized byte %d (block %d, offset %d) = %#x, llama.cpp %#x", g.typ, r, i, i/bs, i%bs, got[i], want[i])
				}
			}
			DequantizeRow(y, g.typ, want)
			for i, v := range g.deq[r*n : (r+1)*n] {
				if math.Float32bits(y[i]) != math.Float32bits(v) {
					t.Fatalf("%v row %d: dequantized element %d = %v, llama.cpp %v", g.typ, r, i, y[i], v)
				}
			}
		}

		// What llama.cpp computes for a model's matrices of this type.
		exact := [][]float32{g.dot, g.mm}
		switch g.typ {
		case IQ4_NL:
			exact = [][]float32{gemvNL, gemmNL}
		}
		k, _ := kernelFor(g.typ)
		ref := map[Type]VecDot{Q4_1: dotQ4_1Generic, Q5_0: dotQ5_0Generic, Q5_1: dotQ5_1Generic, IQ4_NL: dotIQ4_NLGeneric}[g.typ]
		// ggml's activations (the converters reproduce them, above), in
		// the registered kernel's layout (the VNNI ones differ).
		refAct := Q8_0
		if g.typ == Q4_1 || g.typ == Q5_1 {
			refAct = Q8_1
		}
		ab, rab := RowSize(k.act, n), RowSize(refAct, n)
		kact := PrepareActivations(nil, k.act, x, n, ntok)
		m := &Matrix{Type: g.typ, Rows: rows, Cols: n, Data: g.q}
		out := make([]float32, ntok*rows)
		p.MatMul(out, m, x, ntok)
		var maxOther float64
		for tok := range ntok {
			a := acts[refAct][tok*rab : (tok+1)*rab]
			ka := kact[tok*ab : (tok+1)*ab]
			for r := range rows {
				w := g.q[r*rb : (r+1)*rb]
				want := exact[0][tok*rows+r]
				for _, e := range exact[1:] {
					if math.Float32bits(e[tok*rows+r]) != math.Float32bits(want) {
						t.Errorf("%v token %d row %d: llama.cpp's own kernels disagree: %v and %v", g.typ, tok, r, want, e[tok*rows+r])
					}
				}
				for _, c := range []struct {
					name string
					got  float32
				}{{"registered dot", k.dot(w, ka, n)}, {"reference dot", ref(w, a, n)}, {"MatMul", out[tok*rows+r]}} {
					if math.Float32bits(c.got) != math.Float32bits(want) {
						t.Errorf("%v token %d row %d: %s %v (%#x), llama.cpp %v (%#x)", g.typ, tok, r, c.name, c.got, math.Float32bits(c.got), want, math.Float32bits(want))
					}
				}
				if g.typ == IQ4_NL {
					// llama.cpp's unrepacked IQ4_NL kernels (vec_dot for
					// row counts not a multiple of 8, tinyBLAS) sum in lanes.
					_, mag := exactDot(g.typ, Q8_0, w, a, n)
					for _, o := range []float32{g.dot[tok*rows+r], g.mm[tok*rows+r]} {
						maxOther = max(maxOther, math.Abs(float64(o)-float64(want))/mag)
					}
				}
			}
		}
		if g.typ == IQ4_NL {
			t.Logf("IQ4_NL: llama.cpp's unrepacked kernels differ from its repacked ones (and specd) by up to %.2g of Σ|w·x|", maxOther)
		}
	}
}

// q8_1OffsetError is how far the Q4_1 and Q5_1 dots (blocks with d and m
// at bytes 0 and 2) move from the dot of the dequantized rows because they
// take Σ m·x as m·s, with Q8_1's s = f16(d·Σq) rounded to a half: Σ over
// blocks of m·(s − f16(d)·Σq), in float64.
func q8_1OffsetError(w, x []byte, n int) float64 {
	bsize := len(w) / (n / qk)
	var e float64
	for i := range n / qk {
		xb := x[i*q8_1Size : (i+1)*q8_1Size]
		var sum int32
		for _, q := range xb[4:] {
			sum += int32(int8(q))
		}
		m := float64(F16ToF32(le16(w[i*bsize+2:])))
		e += m * (float64(F16ToF32(le16(xb[2:]))) - float64(F16ToF32(le16(xb)))*float64(sum))
	}
	return e
}

// TestQ32ExtremeQuants runs the multi-row kernels of Q4_1, Q5_0, Q5_1 and
// IQ4_NL on Q8_0 and Q8_1 activations (IQ4_NL's VNNI form:
// TestIQ4_NLVNNI) on blocks of arbitrary quant bytes (every nibble and high bit,
// so IQ4_NL's ±127 levels and Q5_0's -16) against activations of ±127,
// where an int16 intermediate would overflow if the kernels added products
// in the wrong order. Scales are 1 (and Q4_1/Q5_1's m and s 1 and 3), so
// every result is an integer below 2^24 and must equal the exact dot.
func TestQ32ExtremeQuants(t *testing.T) {
	const cols = 512
	nb := cols / qk
	one, three := F32ToF16(1), F32ToF16(3)
	r := rand.New(rand.NewPCG(51, 52))
	for _, k := range []struct {
		typ, act Type
		dot      VecDot
		gemv     gemv
	}{
		{Q4_1, Q8_1, dotQ4_1, gemvQ4_1}, {Q5_0, Q8_0, dotQ5_0, gemvQ5_0},
		{Q5_1, Q8_1, dotQ5_1, gemvQ5_1}, {IQ4_NL, Q8_0, dotIQ4_NL, gemvIQ4_NL},
	} {
		typ := k.typ
		bs, as := typ.TypeSize(), k.act.TypeSize()
		for _, shape := range [][2]int{{1, 1}, {9, 1}, {9, 5}, {17, 4}} {
			rows, ntok := shape[0], shape[1]
			w := make([]byte, rows*nb*bs)
			for i := range w {
				w[i] = byte(r.Uint32())
			}
			if rows == 9 { // all the largest magnitudes
				for i := range w {
					w[i] = 0xff * byte(i%2)
				}
			}
			x := make([]byte, ntok*nb*as)
			for b := range ntok * nb {
				blk := x[b*as : (b+1)*as]
				binary.LittleEndian.PutUint16(blk, one)
				q := blk[2:]
				if k.act == Q8_1 {
					binary.LittleEndian.PutUint16(blk[2:], three)
					q = blk[4:]
				}
				for j := range q {
					q[j] = byte(int8(127 - 254*int((j+b)/3%2)))
				}
			}
			for b := range rows * nb {
				blk := w[b*bs : (b+1)*bs]
				binary.LittleEndian.PutUint16(blk, one)
				if typ == Q4_1 || typ == Q5_1 {
					binary.LittleEndian.PutUint16(blk[2:], one)
				}
			}
			out := make([]float32, ntok*rows)
			if k.gemv != nil {
				k.gemv(w, nb*bs, rows, x, nb*as, ntok, cols, out, rows)
			} else {
				for ti := range ntok {
					for ri := range rows {
						out[ti*rows+ri] = k.dot(w[ri*nb*bs:(ri+1)*nb*bs], x[ti*nb*as:(ti+1)*nb*as], cols)
					}
				}
			}
			wf := make([]float32, cols)
			for ti := range ntok {
				xa := x[ti*nb*as : (ti+1)*nb*as]
				xf := make([]float32, cols)
				DequantizeRow(xf, k.act, xa)
				for ri := range rows {
					wr := w[ri*nb*bs : (ri+1)*nb*bs]
					DequantizeRow(wf, typ, wr)
					var want float64
					for j := range cols {
						want += float64(wf[j]) * float64(xf[j])
					}
					if k.act == Q8_1 {
						want += q8_1OffsetError(wr, xa, cols)
					}
					if got := out[ti*rows+ri]; float64(got) != want {
						t.Fatalf("%v rows=%d ntok=%d: out[%d,%d] = %g, exact dot %g", typ, rows, ntok, ti, ri, got, want)
					}
					if got := k.dot(wr, xa, cols); float64(got) != want {
						t.Fatalf("%v: dot[%d,%d] = %g, exact dot %g", typ, ti, ri, got, want)
					}
				}
			}
		}
	}
}

// awkwardActs returns nb blocks of 32 activations for a converter test,
// random at scale 2^(trial%40−20), and by kind 1: the first block zero,
// 2: exact ties (halves) and a 127 in the first block, 3: a subnormal and
// a value near −MaxFloat32 in it; other kinds leave them all random.
func awkwardActs(r *rand.Rand, nb, trial, kind int) []float32 {
	src := randFloats(r, 32*nb, math.Ldexp(1, trial%40-20))
	switch kind {
	case 1:
		clear(src[:32])
	case 2:
		for i := range 32 {
			src[i] = float32(i-16) / 2
		}
		src[0] = 127
	case 3:
		src[3] = 1e-40
		src[4] = -3e38
	}
	return src
}

// TestQ8_1Act checks the Q8_1 converter in use against the reference loop
// byte for byte over scales from tiny to huge, zero blocks and exact ties.
func TestQ8_1Act(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	for trial := range 200 {
		nb := 1 + trial%7
		src := awkwardActs(r, nb, trial, trial%5)
		got := make([]byte, nb*q8_1Size+5)
		want := make([]byte, nb*q8_1Size+5)
		for i := nb * q8_1Size; i < len(got); i++ {
			got[i], want[i] = 0xa5, 0xa5
		}
		quantizeQ8_1Act(got, src)
		quantizeQ8_1ActGeneric(want, src)
		if !bytes.Equal(got, want) {
			t.Fatalf("trial %d: Q8_1 activations differ from the reference:\n got %v\nwant %v", trial, got, want)
		}
	}
}

// TestQ32Registered checks that the four types have their kernels, their
// activation types and, with assembly, a multi-row kernel.
func TestQ32Registered(t *testing.T) {
	for typ, act := range map[Type]Type{Q4_1: Q8_1, Q5_0: Q8_0, Q5_1: Q8_1, IQ4_NL: Q8_0} {
		if a, ok := ActType(typ); !ok || a != act && !strings.Contains(a.String(), "VNNI") {
			t.Errorf("%v: ActType = %v, %v; want %v", typ, a, ok, act)
		}
		if !typ.Supported() || !CanDequantize(typ) || typ.BlockSize() != 32 {
			t.Errorf("%v: Supported %v, CanDequantize %v, block size %d", typ, typ.Supported(), CanDequantize(typ), typ.BlockSize())
		}
		if q32Multirow && gemvs[typ] == nil {
			t.Errorf("%v: no multi-row kernel", typ)
		}
	}
	if IQ4_NL.String() != "IQ4_NL" || IQ4_NL.TypeSize() != 18 {
		t.Errorf("IQ4_NL: %v, %d bytes", IQ4_NL, IQ4_NL.TypeSize())
	}
}
