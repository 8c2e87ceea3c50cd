package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// dotPair is a fast kernel and the reference it must agree with; order is
// the Q8_0 summation order the pair's multi-row kernel needs registered.
type dotPair struct {
	weight, act Type
	fast, ref   func() VecDot // read at test time: init may swap kernels
	order       Q8_0Order
}

// dotPairs lists the kernels this file's tests cover; the K-quant kernels
// have their own tests.
var dotPairs = []dotPair{
	{F32, F32, func() VecDot { return dotF32 }, func() VecDot { return dotF32Generic }, Q8_0Rows},
	{F16, F16, func() VecDot { return dotF16 }, func() VecDot { return dotF16Generic }, Q8_0Rows},
	{BF16, BF16, func() VecDot { return dotBF16 }, func() VecDot { return dotBF16Generic }, Q8_0Rows},
	{Q8_0, Q8_0, func() VecDot { return dotQ8_0 }, func() VecDot { return dotQ8_0Generic }, Q8_0Rows},
	{Q8_0, Q8_0, func() VecDot { return dotQ8_0Lanes }, func() VecDot { return dotQ8_0LanesGeneric }, Q8_0Lanes},
	{Q4_0, Q8_0, func() VecDot { return dotQ4_0 }, func() VecDot { return dotQ4_0Generic }, Q8_0Rows},
	{Q4_1, Q8_1, func() VecDot { return dotQ4_1 }, func() VecDot { return dotQ4_1Generic }, Q8_0Rows},
	{Q5_0, Q8_0, func() VecDot { return dotQ5_0 }, func() VecDot { return dotQ5_0Generic }, Q8_0Rows},
	{Q5_1, Q8_1, func() VecDot { return dotQ5_1 }, func() VecDot { return dotQ5_1Generic }, Q8_0Rows},
	{IQ4_NL, Q8_0, func() VecDot { return dotIQ4_NL }, func() VecDot { return dotIQ4_NLGeneric }, Q8_0Rows},
}

func randFloats(r *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * scale)
	}
	return v
}

// quantized returns src in type t (weight-side quantizer) followed by guard
// bytes of 0xff (NaN for the float types, so a kernel reading past the end
// returns NaN), and the row without the guard.
func quantized(t *testing.T, typ Type, src []float32, offset int) []byte {
	t.Helper()
	rs := RowSize(typ, len(src))
	buf := make([]byte, offset+rs+64)
	for i := range buf {
		buf[i] = 0xff
	}
	if err := QuantizeRow(buf[offset:offset+rs], typ, src); err != nil {
		t.Fatal(err)
	}
	return buf[offset : offset+rs]
}

func activations(act Type, src []float32, offset int) []byte {
	rs := RowSize(act, len(src))
	buf := make([]byte, offset+rs+64)
	for i := range buf {
		buf[i] = 0xff
	}
	actQuants[act](buf[offset:offset+rs], src)
	return buf[offset : offset+rs]
}

// exactDot is the float64 dot of the dequantized rows, and the sum of the
// magnitudes of its terms (the scale for a rounding tolerance).
func exactDot(wt, at Type, w, x []byte, n int) (dot, mag float64) {
	wf := make([]float32, n)
	xf := make([]float32, n)
	DequantizeRow(wf, wt, w)
	DequantizeRow(xf, at, x)
	for i := range n {
		p := float64(wf[i]) * float64(xf[i])
		dot += p
		mag += math.Abs(p)
	}
	if at == Q8_1 {
		dot += q8_1OffsetError(w, x, n)
	}
	return dot, mag
}

func lengths(typ Type) []int {
	if typ.BlockSize() == 1 {
		return []int{1, 2, 7, 8, 15, 31, 32, 33, 63, 64, 65, 100, 255, 256, 257, 511, 512, 1536}
	}
	return []int{32, 64, 96, 160, 256, 288, 512, 544, 1536, 4096}
}

func TestDotReferenceAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, p := range dotPairs {
		for _, n := range lengths(p.weight) {
			w := quantized(t, p.weight, randFloats(r, n, 0.05), 0)
			x := activations(p.act, randFloats(r, n, 1), 0)
			got := float64(p.ref()(w, x, n))
			want, mag := exactDot(p.weight, p.act, w, x, n)
			if math.Abs(got-want) > 1e-6*mag+1e-30 {
				t.Errorf("%v n=%d: reference dot %g, float64 dot %g (magnitude %g)", p.weight, n, got, want, mag)
			}
		}
	}
}

// TestDotFastMatchesReference compares the kernels in use with the
// references over many lengths and unaligned offsets, with guard bytes past
// the end of both rows.
func TestDotFastMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range dotPairs {
		exact, total := 0, 0
		for _, n := range lengths(p.weight) {
			for _, off := range []int{0, 1, 3, 17} {
				w := quantized(t, p.weight, randFloats(r, n, 0.05), off)
				x := activations(p.act, randFloats(r, n, 1), (off*5)%7)
				got := p.fast()(w, x, n)
				want := p.ref()(w, x, n)
				_, mag := exactDot(p.weight, p.act, w, x, n)
				if d := math.Abs(float64(got) - float64(want)); d > 1e-6*mag || math.IsNaN(float64(got)) {
					t.Errorf("%v n=%d off=%d: fast %g, reference %g", p.weight, n, off, got, want)
				}
				total++
				if got == want {
					exact++
				}
			}
		}
		// The fast kernels keep the reference's summation structure, so
		// apart from rare double rounding in the reference's emulated FMA
		// they agree bit for bit; many differences mean a changed order.
		t.Logf("%v: %d/%d bit-identical to the reference", p.weight, exact, total)
		if exact < total*19/20 {
			t.Errorf("%v: only %d/%d results bit-identical to the reference", p.weight, exact, total)
		}
	}
}

func TestQ8_0ActRounding(t *testing.T) {
	src := make([]float32, 32)
	src[0] = 127 // amax 127: d = 1, multiplier 1
	copy(src[1:], []float32{2.5, -2.5, 3.5, 0.5, -0.5, 1.49, -126.5, 126.5})
	act := make([]byte, 34)
	quantizeQ8_0Act(act, src)
	ref := make([]byte, 34)
	quantizeQ8_0Ref(ref, src)
	wantAct := []int8{127, 2, -2, 4, 0, 0, 1, -126, 126}
	wantRef := []int8{127, 3, -3, 4, 1, -1, 1, -127, 127}
	for i := range wantAct {
		if got := int8(act[2+i]); got != wantAct[i] {
			t.Errorf("activation q[%d] of %g = %d, want %d (round half to even)", i, src[i], got, wantAct[i])
		}
		if got := int8(ref[2+i]); got != wantRef[i] {
			t.Errorf("reference q[%d] of %g = %d, want %d (round half away from zero)", i, src[i], got, wantRef[i])
		}
	}
	if d := le16(act); d != 0x3c00 {
		t.Errorf("scale = %#04x, want 1.0 (0x3c00)", d)
	}
	// An all-zero block has scale 0 and zero quants.
	zero := make([]float32, 32)
	quantizeQ8_0Act(act, zero)
	for i, b := range act {
		if b != 0 {
			t.Fatalf("zero block: byte %d = %d", i, b)
		}
	}
}

func TestQ4_0Reference(t *testing.T) {
	src := make([]float32, 32)
	for i := range src {
		src[i] = float32(i-16) / 2 // -8 .. 7.5; largest magnitude -8
	}
	dst := make([]byte, 18)
	if err := QuantizeRow(dst, Q4_0, src); err != nil {
		t.Fatal(err)
	}
	// d = -8 / -8 = 1, q = min(15, trunc(x + 8.5)).
	if d := F16ToF32(le16(dst)); d != 1 {
		t.Fatalf("d = %g, want 1", d)
	}
	back := make([]float32, 32)
	DequantizeRow(back, Q4_0, dst)
	for i, v := range src {
		want := float32(math.Min(15, math.Trunc(float64(v)+8.5))) - 8
		if back[i] != want {
			t.Errorf("x[%d] = %g dequantizes to %g, want %g", i, v, back[i], want)
		}
	}
}

func TestQuantizeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct {
		typ Type
		tol float64 // relative to the block's largest magnitude
	}{{F32, 0}, {F16, 1.0 / 1024}, {BF16, 1.0 / 128}, {Q8_0, 0.5/127 + 1e-3}, {Q4_0, 1.0/8 + 1e-3},
		// Q4_1 and Q5_1 relative to the amax, which bounds (max-min)/2.
		{Q4_1, 1.0/15 + 1e-3}, {Q5_0, 1.0/16 + 1e-3}, {Q5_1, 1.0/31 + 1e-3}, {IQ4_NL, 12.0 / 127}} {
		src := randFloats(r, 256, 1)
		dst := make([]byte, RowSize(c.typ, len(src)))
		if err := QuantizeRow(dst, c.typ, src); err != nil {
			t.Fatal(err)
		}
		back := make([]float32, len(src))
		DequantizeRow(back, c.typ, dst)
		for b := 0; b < len(src); b += 32 {
			var amax float64
			for _, v := range src[b : b+32] {
				amax = math.Max(amax, math.Abs(float64(v)))
			}
			for i := b; i < b+32; i++ {
				if d := math.Abs(float64(back[i] - src[i])); d > c.tol*amax*1.01 {
					t.Fatalf("%v: x[%d] = %g came back as %g", c.typ, i, src[i], back[i])
				}
			}
		}
	}
}

func TestQuantizeRowErrors(t *testing.T) {
	if err := QuantizeRow(make([]byte, 100), Q8_0, make([]float32, 33)); err == nil {
		t.Error("Q8_0 row of 33 elements: no error")
	}
	if err := QuantizeRow(make([]byte, 10), Q8_0, make([]float32, 32)); err == nil {
		t.Error("short destination: no error")
	}
	if err := QuantizeRow(make([]byte, 100), Q8_1, make([]float32, 32)); err == nil {
		t.Error("Q8_1 (an activation type): no error")
	}
}

// fuzzDot checks one pair on fuzzer-chosen weights and activations.
func fuzzDot(f *testing.F, typ Type, order Q8_0Order) {
	var p dotPair
	for _, q := range dotPairs {
		if q.weight == typ && q.order == order {
			p = q
		}
	}
	f.Add(uint64(1), uint16(3), uint8(0))
	f.Add(uint64(99), uint16(40), uint8(5))
	f.Fuzz(func(t *testing.T, seed uint64, size uint16, off uint8) {
		r := rand.New(rand.NewPCG(seed, uint64(size)))
		n := int(size%2048) + 1
		if bs := typ.BlockSize(); bs > 1 {
			n = (n + bs - 1) / bs * bs
		}
		scale := math.Ldexp(1, int(seed%20)-10)
		w := quantized(t, typ, randFloats(r, n, scale), int(off%32))
		x := activations(p.act, randFloats(r, n, 1), int(off/32))
		got, want := p.fast()(w, x, n), p.ref()(w, x, n)
		_, mag := exactDot(typ, p.act, w, x, n)
		if d := math.Abs(float64(got) - float64(want)); !(d <= 1e-6*mag) {
			t.Fatalf("%v n=%d: fast %g, reference %g", typ, n, got, want)
		}
	})
}

func FuzzDotF32(f *testing.F)       { fuzzDot(f, F32, Q8_0Rows) }
func FuzzDotF16(f *testing.F)       { fuzzDot(f, F16, Q8_0Rows) }
func FuzzDotBF16(f *testing.F)      { fuzzDot(f, BF16, Q8_0Rows) }
func FuzzDotQ8_0(f *testing.F)      { fuzzDot(f, Q8_0, Q8_0Rows) }
func FuzzDotQ8_0Lanes(f *testing.F) { fuzzDot(f, Q8_0, Q8_0Lanes) }
func FuzzDotQ4_0(f *testing.F)      { fuzzDot(f, Q4_0, Q8_0Rows) }
func FuzzDotQ4_1(f *testing.F)      { fuzzDot(f, Q4_1, Q8_0Rows) }
func FuzzDotQ5_0(f *testing.F)      { fuzzDot(f, Q5_0, Q8_0Rows) }
func FuzzDotQ5_1(f *testing.F)      { fuzzDot(f, Q5_1, Q8_0Rows) }
func FuzzDotIQ4_NL(f *testing.F)    { fuzzDot(f, IQ4_NL, Q8_0Rows) }

// BenchmarkDot reports each kernel's speed in bytes of weights per second
// over a 4096-element row (kept in cache: this is compute speed).
func BenchmarkDot(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, p := range dotPairs {
		n := 4096
		src := randFloats(r, n, 1)
		w := make([]byte, RowSize(p.weight, n))
		if err := QuantizeRow(w, p.weight, src); err != nil {
			b.Fatal(err)
		}
		x := make([]byte, RowSize(p.act, n))
		actQuants[p.act](x, randFloats(r, n, 1))
		for _, impl := range []struct {
			name string
			dot  VecDot
		}{{"fast", p.fast()}, {"generic", p.ref()}} {
			name := p.weight.String()
			if p.order == Q8_0Lanes {
				name += "-lanes"
			}
			b.Run(name+"/"+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				var s float32
				c0 := cpuNanos()
				for b.Loop() {
					s += impl.dot(w, x, n)
				}
				reportCPU(b, c0, len(w))
				_ = s
			})
		}
	}
}

// TestGemvMatchesDot checks the multi-row kernels against the single dot
// kernel (bit for bit) and the reference (as TestDotFastMatchesReference),
// over row and token counts that exercise every grouping, float tails, and
// strides with gaps and guard bytes.
func TestGemvMatchesDot(t *testing.T) { checkGemvKernels(t) }

func checkGemvKernels(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	defer SetQ8_0Order(q8Order)
	for _, p := range dotPairs {
		SetQ8_0Order(p.order)
		g := gemvs[p.weight]
		if g == nil {
			t.Logf("%v: no multi-row kernel on this machine", p.weight)
			continue
		}
		if k, _ := kernelFor(p.weight); k.act != p.act {
			// The VNNI Q8_0 and Q4_0 kernels (TestQ0VNNIKernels).
			t.Logf("%v: the multi-row kernel in use takes %v activations", p.weight, k.act)
			continue
		}
		cols := []int{32, 96, 512}
		if p.weight.BlockSize() == 1 {
			cols = append(cols, 1, 33, 100)
		}
		for _, c := range cols {
			for _, rows := range []int{1, 3, 8, 9, 17} {
				for _, ntok := range []int{1, 2, 3, 4, 5, 7, 8, 9} {
					wrb, xrb := RowSize(p.weight, c), RowSize(p.act, c)
					ws, xs, os := wrb+5, xrb+3, rows+2
					w := make([]byte, (rows-1)*ws+wrb+64)
					x := make([]byte, (ntok-1)*xs+xrb+64)
					for i := range w {
						w[i] = 0xff
					}
					for i := range x {
						x[i] = 0xff
					}
					for i := range rows {
						if err := QuantizeRow(w[i*ws:i*ws+wrb], p.weight, randFloats(r, c, 0.05)); err != nil {
							t.Fatal(err)
						}
					}
					for i := range ntok {
						actQuants[p.act](x[i*xs:i*xs+xrb], randFloats(r, c, 1))
					}
					out := make([]float32, (ntok-1)*os+rows+1)
					out[len(out)-1] = 13
					g(w, ws, rows, x, xs, ntok, c, out, os)
					exact := 0
					for ti := range ntok {
						for ri := range rows {
							wr, xr := w[ri*ws:ri*ws+wrb], x[ti*xs:ti*xs+xrb]
							got := out[ti*os+ri]
							if one := p.fast()(wr, xr, c); math.Float32bits(got) != math.Float32bits(one) {
								t.Fatalf("%v cols=%d rows=%d ntok=%d: out[%d,%d] = %g, single dot %g", p.weight, c, rows, ntok, ti, ri, got, one)
							}
							want := p.ref()(wr, xr, c)
							_, mag := exactDot(p.weight, p.act, wr, xr, c)
							if d := math.Abs(float64(got) - float64(want)); !(d <= 1e-6*mag) {
								t.Fatalf("%v cols=%d rows=%d ntok=%d: out[%d,%d] = %g, reference %g", p.weight, c, rows, ntok, ti, ri, got, want)
							}
							if got == want {
								exact++
							}
						}
					}
					if exact < rows*ntok*19/20 {
						t.Errorf("%v cols=%d rows=%d ntok=%d: %d/%d bit-identical to the reference", p.weight, c, rows, ntok, exact, rows*ntok)
					}
					if out[len(out)-1] != 13 {
						t.Fatalf("%v: gemv wrote past its outputs", p.weight)
					}
				}
			}
		}
	}
}
