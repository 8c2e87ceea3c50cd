package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/specd-dev/specd/tensor"
)

// xorshift is a tiny deterministic generator for test inputs.
type xorshift uint64

func (x *xorshift) next() uint64 {
	*x ^= *x << 13
	*x ^= *x >> 7
	*x ^= *x << 17
	return uint64(*x)
}

func TestRoundF16(t *testing.T) {
	check := func(f float32) {
		want := tensor.F16ToF32(tensor.F32ToF16(f))
		got := roundF16(f)
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("roundF16(%g = %#08x) = %g (%#08x), want %g (%#08x)",
				f, math.Float32bits(f), got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	// Every float32 exponent, with mantissas at and around the rounding
	// boundaries (ties, ties±1) and random ones.
	for e := uint32(0); e < 256; e++ {
		for _, m := range []uint32{0, 1, 0x0fff, 0x1000, 0x1001, 0x2000, 0x3000, 0x7fffff, 0x7ff000, 0x7fefff} {
			check(math.Float32frombits(e<<23 | m))
			check(math.Float32frombits(1<<31 | e<<23 | m))
		}
	}
	for _, f := range []float32{65504, 65519.99, 65520, 65536, 6.1e-5, 5.96e-8, 2.98e-8, 2.99e-8, float32(math.Inf(1))} {
		check(f)
		check(-f)
	}
	x := xorshift(88172645463325252)
	for range 2_000_000 {
		check(math.Float32frombits(uint32(x.next())))
	}
}

// vexpfGolden pairs float32 bits of x with those of ggml_v_expf(x) from
// ggml's AVX2+FMA build (compiled with gcc -O2 -mavx2 -mfma), over
// [-110, 95], reaching the flush-to-zero, subnormal, and overflow paths.
var vexpfGolden = [][2]uint32{
	{0xc2dc0000, 0x00000000},
	{0xc2d30395, 0x00000000},
	{0xc2ca072b, 0x0000000a},
	{0xc2c1c7ae, 0x00000253},
	{0xc2b8cb44, 0x0000cfd6},
	{0xc2afced9, 0x0048925e},
	{0xc2a78f5c, 0x030c2af5},
	{0xc29e92f2, 0x0643c5c6},
	{0xc2959687, 0x0988b80a},
	{0xc28d570a, 0x0c840833},
	{0xc2845aa0, 0x0fb868c7},
	{0xc276bc6b, 0x1300c867},
	{0xc2663d71, 0x15f8bc6a},
	{0xc254449c, 0x192db4a2},
	{0xc2424bc7, 0x1c729da0},
	{0xc231cccd, 0x1f6a4c6f},
	{0xc21fd3f8, 0x22a39f88},
	{0xc20ddb24, 0x25e4885c},
	{0xc1fab853, 0x28dcb2de},
	{0xc1d6c6a9, 0x2c1a202b},
	{0xc1b2d4ff, 0x2f5744af},
	{0xc191d70c, 0x324fe365},
	{0xc15bcac3, 0x35912df8},
	{0xc113e76f, 0x38cac5f4},
	{0xc0a3d710, 0x3bc3d261},
	{0xbf208342, 0x3f08c0b4},
	{0x40776c7f, 0x423f00e2},
	{0x40ffae0e, 0x4538749c},
	{0x4147ba5b, 0x4880d0aa},
	{0x4187ced7, 0x4bb3eaac},
	{0x41a8cccb, 0x4eadbfbc},
	{0x41ccbe75, 0x51f2ad21},
	{0x41f0b01f, 0x5529794a},
	{0x4208d709, 0x5823a9e8},
	{0x421acfde, 0x5b649713},
	{0x422cc8b3, 0x5e9fa2fc},
	{0x423d47ad, 0x619a2a04},
	{0x424f4082, 0x64d75271},
	{0x42613957, 0x68165eef},
	{0x4271b851, 0x6b113748},
	{0x4281d893, 0x6e4ad2f6},
	{0x428ad4fe, 0x718da4b4},
	{0x4293147a, 0x7488c961},
	{0x429c10e5, 0x77bf0d32},
	{0x42a50d50, 0x7b056c05},
	{0x42ad4ccc, 0x7e00d8dd},
	{0x42b64937, 0x7f800000},
	{0x42bf45a1, 0x7f800000},
}

// vexpf512Golden is vexpfGolden for ggml_v_expf's AVX-512 version
// (gcc -O2 -mavx512f -mavx512dq), over the same inputs and a few more.
var vexpf512Golden = [][2]uint32{
	{0xc2dc0000, 0x00000000},
	{0xc2d30395, 0x00000000},
	{0xc2ca072b, 0x0000000a},
	{0xc2c1c7ae, 0x00000253},
	{0xc2b8cb44, 0x0000cfd6},
	{0xc2afced9, 0x0048925e},
	{0xc2a78f5c, 0x030c2af5},
	{0xc29e92f2, 0x0643c5c5},
	{0xc2959687, 0x0988b80a},
	{0xc28d570a, 0x0c840832},
	{0xc2845aa0, 0x0fb868c7},
	{0xc276bc6b, 0x1300c867},
	{0xc2663d71, 0x15f8bc6a},
	{0xc254449c, 0x192db4a2},
	{0xc2424bc7, 0x1c729d9f},
	{0xc231cccd, 0x1f6a4c6f},
	{0xc21fd3f8, 0x22a39f88},
	{0xc20ddb24, 0x25e4885c},
	{0xc1fab853, 0x28dcb2de},
	{0xc1d6c6a9, 0x2c1a202a},
	{0xc1b2d4ff, 0x2f5744af},
	{0xc191d70c, 0x324fe365},
	{0xc15bcac3, 0x35912df8},
	{0xc113e76f, 0x38cac5f5},
	{0xc0a3d710, 0x3bc3d261},
	{0xbf208342, 0x3f08c0b5},
	{0x40776c7f, 0x423f00e2},
	{0x40ffae0e, 0x4538749c},
	{0x4147ba5b, 0x4880d0a9},
	{0x4187ced7, 0x4bb3eaac},
	{0x41a8cccb, 0x4eadbfbc},
	{0x41ccbe75, 0x51f2ad21},
	{0x41f0b01f, 0x55297949},
	{0x4208d709, 0x5823a9e9},
	{0x421acfde, 0x5b649713},
	{0x422cc8b3, 0x5e9fa2fc},
	{0x423d47ad, 0x619a2a04},
	{0x424f4082, 0x64d75271},
	{0x42613957, 0x68165eef},
	{0x4271b851, 0x6b113749},
	{0x4281d893, 0x6e4ad2f6},
	{0x428ad4fe, 0x718da4b4},
	{0x4293147a, 0x7488c961},
	{0x429c10e5, 0x77bf0d31},
	{0x42a50d50, 0x7b056c06},
	{0x42ad4ccc, 0x7e00d8dd},
	{0x42b64937, 0x7f800000},
	{0x42bf45a1, 0x7f800000},
	{0xc2ab92e4, 0x0196b6d0},
	{0x00000000, 0x3f800000},
	{0xbf800000, 0x3ebc5ab3},
	{0x3f800000, 0x402df855},
	{0x41280000, 0x470ddb80},
	{0xc2490000, 0x1b35981c},
	{0x42b00000, 0x7ef882b7},
	{0xc2c80000, 0x0000001b},
	{0xc2ce0000, 0x00000001},
	{0x42af0000, 0x7e96bab2},
	{0x3dfcb924, 0x3f90cfa5},
	{0xbf46e979, 0x3eeb68b7},
	{0x40533333, 0x41d8e6ae},
	{0xc1a00000, 0x310da432},
	{0x42700000, 0x6abcede6},
	{0xc2b40000, 0x0008ec28},
}

func TestVexpf(t *testing.T) {
	for _, g := range vexpfGolden {
		x := math.Float32frombits(g[0])
		if got := math.Float32bits(vexpf(x)); got != g[1] {
			t.Errorf("vexpf(%g) = %#08x, ggml gives %#08x", x, got, g[1])
		}
	}
	for _, g := range vexpf512Golden {
		x := math.Float32frombits(g[0])
		if got := math.Float32bits(vexpf512(x)); got != g[1] {
			t.Errorf("vexpf512(%g) = %#08x, ggml gives %#08x", x, got, g[1])
		}
	}
	// Accuracy against exp over the normal range: a few ulp (the
	// approximation's error grows near the bottom of the range).
	x := xorshift(1)
	for range 200_000 {
		v := float32(x.next()%1_700_000)/10_000 - 85 // [-85, 85)
		got := float64(vexpf(v))
		want := math.Exp(float64(v))
		ulp := float64(math.Nextafter32(float32(want), float32(math.Inf(1))) - float32(want))
		if d := math.Abs(got - want); d > 8*ulp {
			t.Fatalf("vexpf(%g) = %g, exp = %g: off by %.2f ulp", v, got, want, d/ulp)
		}
	}
	for _, tc := range []struct{ in, want float32 }{
		{0, 1}, {-200, 0}, {200, float32(math.Inf(1))}, {float32(math.Inf(-1)), 0},
	} {
		if got := vexpf(tc.in); got != tc.want {
			t.Errorf("vexpf(%g) = %g, want %g", tc.in, got, tc.want)
		}
	}
}

func TestSwiglu(t *testing.T) {
	// 8-element runs use the vector expf, the tail libm's; both close to
	// the exact silu(g)*u.
	g := []float32{-3, -1, -0.5, 0, 0.25, 1, 2, 8, 0.7, -0.7, 3}
	u := []float32{1, 2, -1, 5, 1, 1, 0.5, 1, 2, 3, -1}
	want := make([]float64, len(g))
	for i := range g {
		want[i] = float64(g[i]) / (1 + math.Exp(-float64(g[i]))) * float64(u[i])
	}
	swiglu(g, u)
	for i := range g {
		if d := math.Abs(float64(g[i]) - want[i]); d > 1e-6*math.Max(1, math.Abs(want[i])) {
			t.Errorf("swiglu[%d] = %v, want %v", i, g[i], want[i])
		}
	}
}

func TestRopeAngles(t *testing.T) {
	// θ_i is a running float32 product, as ggml_rope_cache_init.
	const d = 64
	scale := ropeThetaScale(10000, d)
	if want := float32(math.Pow(10000, -2.0/d)); scale != want {
		t.Fatalf("theta scale %v, want %v", scale, want)
	}
	cs := make([]float32, d)
	ropeAngles(cs, 37, scale)
	theta := float32(37)
	for i := 0; i < d/2; i++ {
		if cs[2*i] != cosf(theta) || cs[2*i+1] != sinf(theta) {
			t.Fatalf("pair %d: (%v, %v) for θ=%v", i, cs[2*i], cs[2*i+1], theta)
		}
		theta *= scale
	}
	// Rotation pairs: NORM rotates (0,1), NEOX (0, d/2); both keep the norm.
	x := make([]float32, d)
	x[0], x[1], x[d/2] = 1, 0, 0
	y := append([]float32(nil), x...)
	rope(x, cs, ropeNorm)
	rope(y, cs, ropeNeox)
	if x[0] != cs[0] || x[1] != cs[1] || x[d/2] != 0 {
		t.Errorf("NORM rotation of e0: %v %v %v", x[0], x[1], x[d/2])
	}
	if y[0] != cs[0] || y[d/2] != cs[1] || y[1] != 0 {
		t.Errorf("NEOX rotation of e0: %v %v %v", y[0], y[d/2], y[1])
	}
}

func TestRMSNorm(t *testing.T) {
	x := []float32{1, -2, 3, -4}
	w := []float32{1, 0.5, 2, 1}
	out := make([]float32, 4)
	rmsnorm(out, x, w, 1e-5)
	s := 1 / math.Sqrt((1+4+9+16)/4.0+1e-5)
	for i := range x {
		if d := math.Abs(float64(out[i]) - float64(x[i])*s*float64(w[i])); d > 1e-6 {
			t.Errorf("out[%d] = %v", i, out[i])
		}
	}
}

// TestAttention compares the flash-attention kernels with a float64
// softmax attention over the same (half-rounded) inputs.
func TestAttention(t *testing.T) {
	for _, d := range []int{64, 40} { // 40: the non-multiple-of-32 tails
		const npos = 23
		x := xorshift(uint64(d))
		rnd := func() float32 { return float32(int64(x.next()%2001)-1000) / 500 }
		k, v, q := make([]float32, npos*d), make([]float32, npos*d), make([]float32, d)
		for i := range k {
			k[i], v[i] = roundF16(rnd()), roundF16(rnd())
		}
		for i := range q {
			q[i] = rnd()
		}
		scale := 1 / float32(math.Sqrt(float64(d)))
		want := make([]float64, d)
		sc := make([]float64, npos)
		mx, sum := math.Inf(-1), 0.0
		for p := range npos {
			for i := range d {
				sc[p] += float64(roundF16(q[i])) * float64(k[p*d+i])
			}
			sc[p] *= float64(scale)
			mx = math.Max(mx, sc[p])
		}
		for p := range npos {
			sc[p] = math.Exp(sc[p] - mx)
			sum += sc[p]
		}
		for p := range npos {
			for i := range d {
				want[i] += sc[p] / sum * float64(v[p*d+i])
			}
		}
		out16, out32 := make([]float32, d), make([]float32, d)
		attnF16(out16, q, halves(k), halves(v), npos, scale, make([]float32, d), make([]float32, d))
		attnF32(out32, q, k, v, npos, scale, make([]float32, d))
		for i := range d {
			if e := math.Abs(float64(out16[i]) - want[i]); e > 5e-3 {
				t.Errorf("d=%d F16 out[%d] = %v, want %v", d, i, out16[i], want[i])
			}
			// The F32 kernel does not round q: compare loosely.
			if e := math.Abs(float64(out32[i]) - want[i]); e > 5e-3 {
				t.Errorf("d=%d F32 out[%d] = %v, want %v", d, i, out32[i], want[i])
			}
		}
	}
}

// TestAttnKernels checks the dispatched attention loops (assembly where
// available) against the generic ones bit for bit, over lengths with and
// without tails, with guard values past the end.
func TestAttnKernels(t *testing.T) {
	x := xorshift(99)
	rnd := func(scale float32) float32 { return float32(int64(x.next()%20001)-10000) / 10000 * scale }
	for _, n := range []int{0, 8, 24, 32, 40, 64, 96, 128, 136, 192, 200} {
		for trial := range 20 {
			scale := []float32{1, 1e-4, 3e4, 1e-6}[trial%4]
			k, q := make([]float32, n+8), make([]float32, n+8)
			acc1, v := make([]float32, n+8), make([]float32, n+8)
			for i := range n + 8 {
				k[i], q[i] = roundF16(rnd(1)), roundF16(rnd(1))
				acc1[i], v[i] = roundF16(rnd(scale)), roundF16(rnd(scale))
			}
			acc2 := append([]float32(nil), acc1...)
			s := rnd(2)
			n32 := n &^ 31
			if a, b := dot32(k[:n32], q[:n32]), dot32Generic(k[:n32], q[:n32]); math.Float32bits(a) != math.Float32bits(b) {
				t.Fatalf("n=%d: dot32 %v, generic %v", n, a, b)
			}
			n64 := n &^ 63
			if a, b := dot64(k[:n64], q[:n64]), dot64Generic(k[:n64], q[:n64]); math.Float32bits(a) != math.Float32bits(b) {
				t.Fatalf("n=%d: dot64 %v, generic %v", n, a, b)
			}
			k16, v16 := halves(k), halves(v)
			if a, b := dot32F16(k16[:n32], q[:n32]), dot32Generic(k[:n32], q[:n32]); math.Float32bits(a) != math.Float32bits(b) {
				t.Fatalf("n=%d: dot32F16 %v, generic %v", n, a, b)
			}
			if a, b := dot64F16(k16[:n64], q[:n64]), dot64Generic(k[:n64], q[:n64]); math.Float32bits(a) != math.Float32bits(b) {
				t.Fatalf("n=%d: dot64F16 %v, generic %v", n, a, b)
			}
			if a, b := dot32F16Generic(k16[:n32], q[:n32]), dot32Generic(k[:n32], q[:n32]); math.Float32bits(a) != math.Float32bits(b) {
				t.Fatalf("n=%d: dot32F16Generic %v, generic %v", n, a, b)
			}
			if a, b := dot64F16Generic(k16[:n64], q[:n64]), dot64Generic(k[:n64], q[:n64]); math.Float32bits(a) != math.Float32bits(b) {
				t.Fatalf("n=%d: dot64F16Generic %v, generic %v", n, a, b)
			}
			acc3 := append([]float32(nil), acc1...)
			acc4 := append([]float32(nil), acc1...)
			madHalfF16(acc3[:n], v16[:n], s)
			madHalfF16Generic(acc4[:n], v16[:n], s)
			madHalfGeneric(acc1[:n], v[:n], s)
			madHalfGeneric(acc2[:n], v[:n], s)
			for i := range acc1 {
				if math.Float32bits(acc1[i]) != math.Float32bits(acc3[i]) || math.Float32bits(acc1[i]) != math.Float32bits(acc4[i]) {
					t.Fatalf("n=%d: madHalfF16 acc[%d] = %v / %v, float version %v", n, i, acc3[i], acc4[i], acc1[i])
				}
			}
			scaleHalf(acc1[:n], s)
			scaleHalfGeneric(acc2[:n], s)
			for i := range acc1 {
				if math.Float32bits(acc1[i]) != math.Float32bits(acc2[i]) {
					t.Fatalf("n=%d scale=%g: acc[%d] = %v, generic %v", n, scale, i, acc1[i], acc2[i])
				}
			}
		}
	}
}

// TestFlashAttnGolden runs attnF16 with ggml's AVX-512 layout on inputs
// whose outputs were recorded from ggml_flash_attn_ext (F16 K and V, one
// thread, llama.cpp built with -march=native on an AVX-512 CPU), in
// testdata/flash_attn_avx512.golden: per case a line "D NPOS", a line of q
// (float32 bits) then K and V (half bits), and a line of the D outputs.
// Head sizes 32–128 (80 has a tail), up to 48 positions, and magnitudes
// that exercise half-precision overflow in the value accumulator.
func TestFlashAttnGolden(t *testing.T) {
	raw, err := os.ReadFile("testdata/flash_attn_avx512.golden")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines)%3 != 0 || len(lines) == 0 {
		t.Fatalf("golden file has %d lines", len(lines))
	}
	defer func(l int) { ggmlLanes = l }(ggmlLanes)
	ggmlLanes = 16
	hex := func(s string) uint32 {
		v, err := strconv.ParseUint(s, 16, 32)
		if err != nil {
			t.Fatal(err)
		}
		return uint32(v)
	}
	for c := 0; c < len(lines); c += 3 {
		var d, npos int
		if _, err := fmt.Sscanf(lines[c], "%d %d", &d, &npos); err != nil {
			t.Fatal(err)
		}
		in, want := strings.Fields(lines[c+1]), strings.Fields(lines[c+2])
		if len(in) != d+2*d*npos || len(want) != d {
			t.Fatalf("case %d: %d inputs, %d outputs", c/3, len(in), len(want))
		}
		q, k, v := make([]float32, d), make([]uint16, d*npos), make([]uint16, d*npos)
		for i := range q {
			q[i] = math.Float32frombits(hex(in[i]))
		}
		for i := range k {
			k[i] = uint16(hex(in[d+i]))
			v[i] = uint16(hex(in[d+d*npos+i]))
		}
		out := make([]float32, d)
		attnF16(out, q, k, v, npos, 1/float32(math.Sqrt(float64(d))), make([]float32, d), make([]float32, d))
		for i := range out {
			w := hex(want[i])
			if math.Float32bits(out[i]) != w && !(out[i] != out[i] && math.Float32frombits(w) != math.Float32frombits(w)) {
				t.Errorf("case %d (d=%d, npos=%d): out[%d] = %#08x, ggml %#08x", c/3, d, npos, i, math.Float32bits(out[i]), w)
				break
			}
		}
	}
}

// TestRopeGolden compares ropeAngles+rope with ggml_rope_ext (llama.cpp's
// CPU backend, one thread) on recorded inputs, testdata/rope.golden: per
// case a line "MODE HEADDIM HEADS POS BASE" (mode 0 = NORM, 2 = NEOX; base
// as float32 bits), a line of inputs and one of outputs (float32 bits),
// positions up to 4097 (glibc's large-argument range reduction).
func TestRopeGolden(t *testing.T) {
	raw, err := os.ReadFile("testdata/rope.golden")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines)%3 != 0 || len(lines) == 0 {
		t.Fatalf("golden file has %d lines", len(lines))
	}
	for c := 0; c < len(lines); c += 3 {
		var gmode, d, heads int
		var pos int32
		var baseBits uint32
		if _, err := fmt.Sscanf(lines[c], "%d %d %d %d %x", &gmode, &d, &heads, &pos, &baseBits); err != nil {
			t.Fatal(err)
		}
		mode := ropeNorm
		if gmode == 2 {
			mode = ropeNeox
		}
		in, want := strings.Fields(lines[c+1]), strings.Fields(lines[c+2])
		if len(in) != d*heads || len(want) != d*heads {
			t.Fatalf("case %d: %d inputs, %d outputs", c/3, len(in), len(want))
		}
		x := make([]float32, d*heads)
		for i := range x {
			v, _ := strconv.ParseUint(in[i], 16, 32)
			x[i] = math.Float32frombits(uint32(v))
		}
		cs := make([]float32, d)
		ropeAngles(cs, pos, ropeThetaScale(math.Float32frombits(baseBits), d))
		for h := range heads {
			rope(x[h*d:(h+1)*d], cs, mode)
		}
		for i := range x {
			w, _ := strconv.ParseUint(want[i], 16, 32)
			if math.Float32bits(x[i]) != uint32(w) {
				t.Errorf("case %d (mode %d, d=%d, pos %d): out[%d] = %v, ggml %v", c/3, gmode, d, pos, i, x[i], math.Float32frombits(uint32(w)))
				break
			}
		}
	}
}

// halves converts float32 values that are exact halves to their bits.
func halves(x []float32) []uint16 {
	h := make([]uint16, len(x))
	tensor.F32ToF16s(h, x)
	return h
}

// TestSwigluVec checks the vector SwiGLU kernels (where the CPU has them:
// AVX-512's 16-lane runs of vexpf512, AVX2's 8-lane runs of vexpf, each
// under the layout it serves) bit for bit against the scalar loop over
// ordinary, huge, tiny and special gate values, on lengths with and
// without a scalar tail.
func TestSwigluVec(t *testing.T) {
	defer func(v bool) { ggmlSilu16 = v }(ggmlSilu16)
	var layouts []bool // the ggmlSilu16 values with a kernel
	if ggmlSilu16 {
		layouts = append(layouts, true)
	}
	ggmlSilu16 = false
	if swigluVec(make([]float32, 8), make([]float32, 8)) == 8 {
		layouts = append(layouts, false)
	}
	if len(layouts) == 0 {
		t.Skip("no vector SwiGLU kernel on this CPU")
	}
	for _, silu16 := range layouts {
		ggmlSilu16 = silu16
		t.Run(fmt.Sprint("silu16=", silu16), swigluVecCheck)
	}
}

// swigluVecCheck is TestSwigluVec under the layout ggmlSilu16 sets.
func swigluVecCheck(t *testing.T) {
	lanes, vexp := 8, vexpf
	if ggmlSilu16 {
		lanes, vexp = 16, vexpf512
	}
	r := rand.New(rand.NewPCG(41, 42))
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		87, 88, 89, 100, 103, 104, 105, 150, 192, 193, -87, -88, -89, -100, -150, -192, -193, 1e-40, -1e-40, 1e30, -1e30}
	for _, n := range []int{16, 48, 1536, 1541} {
		for _, scale := range []float64{1, 10, 100, 1000} {
			g := make([]float32, n)
			u := make([]float32, n)
			for i := range g {
				g[i] = float32(r.NormFloat64() * scale)
				u[i] = float32(r.NormFloat64())
			}
			copy(g, specials[:min(len(specials), n)])
			want := make([]float32, n)
			for i, x := range g {
				want[i] = float32(x/(1+vexp(-x))) * u[i]
			}
			got := append([]float32(nil), g...)
			m := swigluVec(got, u)
			if want := n &^ (lanes - 1); m != want {
				t.Fatalf("n=%d: vector kernel took %d elements, want %d", n, m, want)
			}
			for i := range m {
				a, b := got[i], want[i]
				if math.Float32bits(a) != math.Float32bits(b) && !(a != a && b != b) {
					t.Fatalf("n=%d scale=%g: element %d (gate %g): got %g (%#08x), want %g (%#08x)",
						n, scale, i, g[i], a, math.Float32bits(a), b, math.Float32bits(b))
				}
			}
			for i := m; i < n; i++ {
				if math.Float32bits(got[i]) != math.Float32bits(g[i]) {
					t.Fatalf("n=%d: element %d past the vector part changed", n, i)
				}
			}
		}
	}
}
