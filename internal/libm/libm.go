// Package libm holds single-precision expf, sinf and cosf as glibc computes
// them, in Go: the model's forward pass needs llama.cpp's results bit for
// bit, and sampling's softmax takes the same expf (faster than math.Exp
// through float64, and the same on every platform).
package libm

import (
	"math"
	"math/big"
)

// Single-precision expf, sinf and cosf as computed by glibc (2.28 and later,
// x86-64, the FMA variants selected on CPUs with FMA) — the libm that
// llama.cpp's CPU backend calls for RoPE angles (cosf, sinf) and for the
// online softmax of flash attention (expf). Go's math functions are
// correctly rounded, glibc's are not quite (about 2% of RoPE angles and
// 0.07% of softmax terms differ by one ulp), and a one-ulp difference in a
// rotated key or an attention weight is enough to make greedy decoding
// diverge from llama.cpp after a few dozen tokens. Each function evaluates
// the same double-precision range reduction and polynomial, with the same
// fused multiply-adds; TestLibm pins them to values from glibc.

// Expf returns e^x rounded as glibc's expf: x/ln2 = (k + r)/32 with a
// 32-entry table for 2^(k/32) and a cubic in r, in double precision.
func Expf(x float32) float32 {
	const (
		n       = 32
		shift   = 0x1.8p+52
		invLn2N = 0x1.71547652b82fep+0 * n
		c0      = 0x1.c6af84b912394p-5 / n / n / n
		c1      = 0x1.ebfce50fac4f3p-3 / n / n
		c2      = 0x1.62e42ff0c52d6p-1 / n
	)
	u := math.Float32bits(x)
	if abstop := (u >> 20) & 0x7ff; abstop >= 0x42b { // |x| >= 88 or NaN
		switch {
		case u == 0xff800000: // -Inf
			return 0
		case abstop >= 0x7f8: // +Inf or NaN
			return x + x
		case x > 0x1.62e42ep6: // overflow
			return float32(math.Inf(1))
		case x < -0x1.9fe368p6: // underflow
			return 0
		}
	}
	xd := float64(x)
	// The conversion keeps z rounded: targets that fuse multiply-adds
	// (arm64) would otherwise compute z + shift and z - kd unrounded.
	z := float64(invLn2N * xd)
	kd := z + shift
	ki := math.Float64bits(kd)
	kd -= shift
	r := z - kd
	s := math.Float64frombits(Exp2Table[ki%n] + ki<<(52-5))
	p := math.FMA(c0, r, c1)
	r2 := r * r
	y := math.FMA(c2, r, 1)
	y = math.FMA(p, r2, y)
	return float32(y * s)
}

// Exp2Table[i] holds the bits of 2^(i/32), correctly rounded to double,
// minus i<<47, so that adding k<<47 scales it by 2^(k/32 rounded down).
var Exp2Table = func() (t [32]uint64) {
	// 2^(1/32) by five square roots at high precision, then its powers.
	const prec = 256
	root := new(big.Float).SetPrec(prec).SetInt64(2)
	for range 5 {
		root.Sqrt(root)
	}
	v := new(big.Float).SetPrec(prec).SetInt64(1)
	for i := range t {
		f, _ := v.Float64() // round to nearest even
		t[i] = math.Float64bits(f) - uint64(i)<<47
		v.Mul(v, root)
	}
	return t
}()

// sincosfPoly holds the polynomials of glibc's sinf/cosf; the second
// entry has the cosine polynomial negated.
type sincosfPoly struct {
	sign               [4]float64 // sign of the sine in quadrants 0..3
	c0, c1, c2, c3, c4 float64    // cosine
	s1, s2, s3         float64    // sine
}

var sincosfTab = [2]sincosfPoly{
	{[4]float64{1, -1, -1, 1}, 1, -0x1.ffffffd0c621cp-2, 0x1.55553e1068f19p-5, -0x1.6c087e89a359dp-10, 0x1.99343027bf8c3p-16,
		-0x1.555545995a603p-3, 0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13},
	{[4]float64{1, -1, -1, 1}, -1, 0x1.ffffffd0c621cp-2, -0x1.55553e1068f19p-5, 0x1.6c087e89a359dp-10, -0x1.99343027bf8c3p-16,
		-0x1.555545995a603p-3, 0x1.1107605230bc4p-7, -0x1.994eb3774cf24p-13},
}

const (
	hpiInv = 0x1.45f306dc9c883p+23 // 2/π · 2^24
	hpi    = 0x1.921fb54442d18p0   // π/2
	pi63   = 0x1.921fb54442d18p-62 // 2π · 2^-64
)

// sinfPoly evaluates the sine (n even) or cosine (n odd) polynomial at x
// with x2 = x².
func sinfPoly(x, x2 float64, p *sincosfPoly, n int) float32 {
	if n&1 == 0 {
		x3 := x * x2
		s1 := math.FMA(x2, p.s3, p.s2)
		x7 := x3 * x2
		s := math.FMA(x3, p.s1, x)
		return float32(math.FMA(x7, s1, s))
	}
	x4 := x2 * x2
	c2 := math.FMA(x2, p.c4, p.c3)
	c1 := math.FMA(x2, p.c1, p.c0)
	x6 := x4 * x2
	c := math.FMA(x4, p.c2, c1)
	return float32(math.FMA(x6, c2, c))
}

// reduceFast returns x mod π/2 in [-π/4, π/4] and the quadrant, for
// |x| < 120 (a single multiply-subtract; 2/π is prescaled by 2^24).
func reduceFast(x float64) (float64, int) {
	r := x * hpiInv
	n := (int32(r) + 0x800000) >> 24
	return math.FMA(-float64(n), hpi, x), int(n)
}

// reduceLarge is the range reduction for |x| >= 120: a 32×96-bit multiply
// by bits of 4/π gives the exact fixed-point remainder. xi are the bits of
// the float argument (sign ignored).
func reduceLarge(xi uint32) (float64, int) {
	arr := invPio4[(xi>>26)&15:]
	shift := (xi >> 23) & 7
	xi = (xi&0xffffff | 0x800000) << shift
	res0 := uint64(xi * arr[0]) // 32-bit product, as in C
	res1 := uint64(xi) * uint64(arr[4])
	res2 := uint64(xi) * uint64(arr[8])
	res0 = res2>>32 | res0<<32
	res0 += res1
	n := (res0 + 1<<61) >> 62
	res0 -= n << 62
	return float64(int64(res0)) * pi63, int(n)
}

// invPio4 is a sliding 32-bit window over the bits of 2/π (equivalently
// 4/π), advancing 8 bits per entry: entry k holds bits 8k-24 .. 8k+7.
var invPio4 = func() (t [24]uint32) {
	// The first 224 bits of 2/π = 0.A2F9836E 4E441529 FC2757D1 ...
	words := [7]uint64{0xA2F9836E, 0x4E441529, 0xFC2757D1, 0xF534DDC0, 0xDB629599, 0x3C439041, 0xFE5163AB}
	bits := new(big.Int)
	for _, w := range words {
		bits.Lsh(bits, 32)
		bits.Or(bits, new(big.Int).SetUint64(w))
	}
	mask := big.NewInt(0xffffffff)
	for k := range t {
		// Bits [0, 8k+8) of the expansion, as an integer, low 32 bits.
		v := new(big.Int).Rsh(bits, uint(224-(8*k+8)))
		t[k] = uint32(v.And(v, mask).Uint64())
	}
	return t
}()

func abstop12(x float32) uint32 { return (math.Float32bits(x) >> 20) & 0x7ff }

var (
	abstopPio4 = abstop12(0x1.921fb6p-1) // π/4
	abstopTiny = abstop12(0x1p-12)
	abstop120  = abstop12(120)
	abstopInf  = abstop12(float32(math.Inf(1)))
)

// Sinf returns sin(y) as glibc's sinf.
func Sinf(y float32) float32 { return sinCosf(y, 0) }

// Cosf returns cos(y) as glibc's cosf.
func Cosf(y float32) float32 { return sinCosf(y, 1) }

// sinCosf is glibc's sinf (q = 0) or cosf (q = 1): the two share the range
// reduction and the sign, and cos evaluates the polynomial one quadrant on.
func sinCosf(y float32, q int) float32 {
	x := float64(y)
	p := &sincosfTab[0]
	switch a := abstop12(y); {
	case a < abstopPio4:
		if a < abstopTiny {
			if q == 0 {
				return y
			}
			return 1
		}
		return sinfPoly(x, x*x, p, q)
	case a < abstop120:
		x, n := reduceFast(x)
		s := p.sign[n&3]
		if n&2 != 0 {
			p = &sincosfTab[1]
		}
		return sinfPoly(x*s, x*x, p, n^q)
	case a < abstopInf:
		xi := math.Float32bits(y)
		sign := int(xi >> 31)
		x, n := reduceLarge(xi)
		s := p.sign[(n+sign)&3]
		if (n+sign)&2 != 0 {
			p = &sincosfTab[1]
		}
		return sinfPoly(x*s, x*x, p, n^q)
	}
	return float32(math.NaN())
}
