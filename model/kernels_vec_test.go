package model

import (
	"math"
	"testing"

	"github.com/specd-dev/specd/tensor"
)

// The tests below hold the vector kernels behind the attention, SwiGLU
// and RMSNorm wrappers (AVX2/AVX-512 on amd64, NEON on arm64, none under
// noasm) to their pure-Go references bit for bit, at odd lengths (the
// wrappers' tails), at offsets into a larger buffer, over special values
// (±0, ±Inf, NaN, subnormals, the edges of the half range), with guard
// values after the end that must neither be read into a result nor
// written. Any NaN matches any NaN (a NaN's payload may change when it is
// rounded to half, as the hardware conversions do).

// vecTestLens are the lengths: below, at and around every block size the
// kernels use (4, 8, 16, 32, 64) and a head size with a tail.
var vecTestLens = []int{0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 96, 127, 128, 129, 200, 257}

// vecGuard is the value past the end of every input and output: large
// enough that reading it into a sum shows, and an unlikely result.
const vecGuard = float32(-1.2345e30)

// vecTestFloats returns off+n+4 floats: guards in [0, off) and from off+n
// on, and between them values of magnitude up to scale, about one in
// sixteen of them special when specials is set.
func vecTestFloats(x *xorshift, off, n int, scale float32, specials bool) []float32 {
	sp := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		65504, -65504, 65519, 65520, 65535, 1e-7, -1e-7, 6e-8, 2.9e-8, 3e-8, 6.1e-5, 1e-40, 1e30, -1e30}
	v := make([]float32, off+n+4)
	for i := range v {
		v[i] = vecGuard
	}
	for i := range n {
		f := float32(int64(x.next()%20001)-10000) / 10000 * scale
		if specials && x.next()%16 == 0 {
			f = sp[x.next()%uint64(len(sp))]
		}
		v[off+i] = f
	}
	return v
}

// vecTestHalves is vecTestFloats rounded to halves (guards included: a
// guard half is -Inf).
func vecTestHalves(x *xorshift, off, n int, scale float32, specials bool) []uint16 {
	return halves(vecTestFloats(x, off, n, scale, specials))
}

// checkGuards fails if any element outside [off, off+n) of v is no longer
// vecGuard.
func checkGuards(t *testing.T, what string, v []float32, off, n int) {
	t.Helper()
	for i, f := range v {
		if (i < off || i >= off+n) && math.Float32bits(f) != math.Float32bits(vecGuard) {
			t.Fatalf("%s: element %d outside [%d, %d) changed to %v", what, i, off, off+n, f)
		}
	}
}

func TestVecDotKernels(t *testing.T) {
	x := xorshift(11)
	for _, n := range vecTestLens {
		for _, off := range []int{0, 1, 3} {
			k := vecTestFloats(&x, off, n, 1, false)
			q := vecTestFloats(&x, off, n, 1, false)
			for i := off; i < off+n; i++ {
				k[i], q[i] = roundF16(k[i]), roundF16(q[i])
			}
			kh := halves(k)
			n32, n64 := n&^31, n&^63
			k32, q32 := k[off:off+n32], q[off:off+n32]
			k64, q64 := k[off:off+n64], q[off:off+n64]
			for _, c := range []struct {
				name      string
				got, want float32
			}{
				{"dot32", dot32(k32, q32), dot32Generic(k32, q32)},
				{"dot64", dot64(k64, q64), dot64Generic(k64, q64)},
				{"dot32F16", dot32F16(kh[off:off+n32], q32), dot32F16Generic(kh[off:off+n32], q32)},
				{"dot64F16", dot64F16(kh[off:off+n64], q64), dot64F16Generic(kh[off:off+n64], q64)},
				{"dot32F16 = dot32", dot32F16Generic(kh[off:off+n32], q32), dot32Generic(k32, q32)},
			} {
				if !sameBits(c.got, c.want) {
					t.Fatalf("n=%d off=%d: %s = %v (%#08x), reference %v (%#08x)", n, off, c.name,
						c.got, math.Float32bits(c.got), c.want, math.Float32bits(c.want))
				}
			}
			// Special values: the kernels must still agree (NaN with NaN).
			ks := vecTestFloats(&x, off, n, 100, true)
			qs := vecTestFloats(&x, off, n, 100, true)
			ksh := halves(ks)
			if a, b := dot32(ks[off:off+n32], qs[off:off+n32]), dot32Generic(ks[off:off+n32], qs[off:off+n32]); !sameBits(a, b) {
				t.Fatalf("n=%d off=%d specials: dot32 %v, reference %v", n, off, a, b)
			}
			if a, b := dot64F16(ksh[off:off+n64], qs[off:off+n64]), dot64F16Generic(ksh[off:off+n64], qs[off:off+n64]); !sameBits(a, b) {
				t.Fatalf("n=%d off=%d specials: dot64F16 %v, reference %v", n, off, a, b)
			}
		}
	}
}

func TestVecHalfAccumulators(t *testing.T) {
	x := xorshift(12)
	for _, n := range vecTestLens {
		for _, off := range []int{0, 1, 5} {
			for _, scale := range []float32{1, 1e-5, 3e4} {
				acc := vecTestFloats(&x, off, n, scale, true)
				for i := off; i < off+n; i++ {
					acc[i] = roundF16(acc[i])
				}
				v := vecTestHalves(&x, off, n, scale, true)
				s := float32(int64(x.next()%4001)-2000) / 1000
				if x.next()%8 == 0 {
					s = 40 // values overflow the half accumulator
				}
				got := append([]float32(nil), acc...)
				want := append([]float32(nil), acc...)
				madHalfF16(got[off:off+n], v[off:off+n], s)
				madHalfF16Generic(want[off:off+n], v[off:off+n], s)
				for i := range got {
					if !sameBits(got[i], want[i]) {
						t.Fatalf("n=%d off=%d scale=%g s=%g: madHalfF16 acc[%d] = %v, reference %v (acc %v, v %#04x)",
							n, off, scale, s, i, got[i], want[i], acc[i], v[i])
					}
				}
				checkGuards(t, "madHalfF16", got, off, n)
				scaleHalf(got[off:off+n], s)
				scaleHalfGeneric(want[off:off+n], s)
				for i := range got {
					if !sameBits(got[i], want[i]) {
						t.Fatalf("n=%d off=%d scale=%g s=%g: scaleHalf acc[%d] = %v, reference %v", n, off, scale, s, i, got[i], want[i])
					}
				}
				checkGuards(t, "scaleHalf", got, off, n)
			}
		}
	}
}

func TestVecRowKernels(t *testing.T) {
	x := xorshift(13)
	for _, d := range []int{1, 8, 31, 32, 33, 64, 72, 100, 128, 136} {
		for _, rows := range []int{1, 2, 5} {
			off := int(x.next() % 3)
			k := vecTestHalves(&x, off, rows*d, 1, false)
			v := vecTestHalves(&x, off, rows*d, 300, true)
			q := make([]float32, d)
			for i := range q {
				q[i] = roundF16(float32(int64(x.next()%2001)-1000) / 1000)
			}
			got := vecTestFloats(&x, off, rows, 0, false)
			want := append([]float32(nil), got...)
			dotRowsF16(got[off:off+rows], k[off:off+rows*d], q)
			dotRowsF16Generic(want[off:off+rows], k[off:off+rows*d], q)
			for i := range got {
				if !sameBits(got[i], want[i]) {
					t.Fatalf("d=%d rows=%d off=%d: dotRowsF16 out[%d] = %v, reference %v", d, rows, off, i, got[i], want[i])
				}
			}
			checkGuards(t, "dotRowsF16", got, off, rows)

			e, flag := make([]float32, rows), make([]float32, rows)
			for p := range rows {
				e[p], flag[p] = float32(x.next()%1000)/1000, float32(x.next()%3)
			}
			acc := vecTestFloats(&x, off, d, 300, false)
			for i := off; i < off+d; i++ {
				acc[i] = roundF16(acc[i])
			}
			accWant := append([]float32(nil), acc...)
			s0 := float32(x.next()%5000) / 1000
			s := madRowsF16(acc[off:off+d], v[off:off+rows*d], e, flag, s0)
			sWant := madRowsF16Generic(accWant[off:off+d], v[off:off+rows*d], e, flag, d, s0)
			for i := range acc {
				if !sameBits(acc[i], accWant[i]) {
					t.Fatalf("d=%d rows=%d off=%d: madRowsF16 acc[%d] = %v, reference %v", d, rows, off, i, acc[i], accWant[i])
				}
			}
			checkGuards(t, "madRowsF16", acc, off, d)
			if !sameBits(s, sWant) {
				t.Fatalf("d=%d rows=%d off=%d: madRowsF16 sum %v, reference %v", d, rows, off, s, sWant)
			}
		}
	}
}

func TestVecExpfs(t *testing.T) {
	x := xorshift(14)
	for _, n := range vecTestLens {
		for _, off := range []int{0, 1, 2, 3} {
			in := vecTestFloats(&x, off, n, 110, true)
			got := append([]float32(nil), in...)
			want := append([]float32(nil), in...)
			expfs(got[off : off+n])
			expfsGeneric(want[off : off+n])
			for i := range got {
				if !sameBits(got[i], want[i]) {
					t.Fatalf("n=%d off=%d: expfs(%v) = %#08x, expf %#08x", n, off, in[i], math.Float32bits(got[i]), math.Float32bits(want[i]))
				}
			}
			checkGuards(t, "expfs", got, off, n)
		}
	}
}

// TestVecSwiglu compares swiglu (its vector prefix where there is one)
// with swigluGeneric under both lane layouts ggml has: 8-lane vexpf runs
// and, where the CPU has the AVX-512 kernel, 16-lane vexpf512 runs.
func TestVecSwiglu(t *testing.T) {
	defer func(v bool) { ggmlSilu16 = v }(ggmlSilu16)
	x := xorshift(15)
	for _, silu16 := range []bool{false, ggmlSilu16} {
		ggmlSilu16 = silu16
		for _, n := range vecTestLens {
			for _, scale := range []float32{3, 120, 300} {
				off := int(x.next() % 4)
				g := vecTestFloats(&x, off, n, scale, true)
				u := vecTestFloats(&x, off, n, 2, true)
				got := append([]float32(nil), g...)
				want := append([]float32(nil), g...)
				swiglu(got[off:off+n], u[off:off+n])
				swigluGeneric(want[off:off+n], u[off:off+n])
				for i := range got {
					if !sameBits(got[i], want[i]) {
						t.Fatalf("silu16=%v n=%d off=%d: swiglu(%v, %v) = %v (%#08x), reference %v (%#08x)", silu16, n, off,
							g[i], u[i], got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
				}
				checkGuards(t, "swiglu", got, off, n)
			}
		}
	}
}

func TestVecRMSScale(t *testing.T) {
	x := xorshift(16)
	for _, n := range vecTestLens {
		off := int(x.next() % 4)
		in := vecTestFloats(&x, off, n, 50, true)
		w := vecTestFloats(&x, off, n, 2, true)
		got := vecTestFloats(&x, off, n, 0, false)
		want := append([]float32(nil), got...)
		scale := float32(0.37)
		rmsScale(got[off:off+n], in[off:off+n], w[off:off+n], scale)
		rmsScaleGeneric(want[off:off+n], in[off:off+n], w[off:off+n], scale)
		for i := range got {
			if !sameBits(got[i], want[i]) {
				t.Fatalf("n=%d off=%d: rmsScale out[%d] = %v, reference %v", n, off, i, got[i], want[i])
			}
		}
		checkGuards(t, "rmsScale", got, off, n)
	}
}

// FuzzDot32F16 checks dot32F16 (the vector kernel where there is one)
// against dot32F16Generic on arbitrary half keys and float32 queries:
// data supplies 6 bytes per element, a key half and a query float.
func FuzzDot32F16(f *testing.F) {
	seed := make([]byte, 6*64)
	x := xorshift(17)
	for i := range seed {
		seed[i] = byte(x.next())
	}
	f.Add(seed)
	f.Add(make([]byte, 6*32))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := len(data) / 6 &^ 31
		k, q := make([]uint16, n), make([]float32, n)
		for i := range n {
			b := data[6*i:]
			k[i] = uint16(b[0]) | uint16(b[1])<<8
			q[i] = math.Float32frombits(uint32(b[2]) | uint32(b[3])<<8 | uint32(b[4])<<16 | uint32(b[5])<<24)
		}
		if a, b := dot32F16(k, q), dot32F16Generic(k, q); !sameBits(a, b) {
			t.Fatalf("n=%d: dot32F16 %v (%#08x), reference %v (%#08x)", n, a, math.Float32bits(a), b, math.Float32bits(b))
		}
		// The same keys widened: the float32 kernel must agree too.
		kf := make([]float32, n)
		for i, h := range k {
			kf[i] = tensor.F16ToF32(h)
		}
		if a, b := dot32(kf, q), dot32Generic(kf, q); !sameBits(a, b) {
			t.Fatalf("n=%d: dot32 %v, reference %v", n, a, b)
		}
	})
}

// expfsGeneric is expfs as a Go loop.
func expfsGeneric(x []float32) {
	for i, v := range x {
		x[i] = expf(v)
	}
}
