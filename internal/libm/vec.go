package libm

// The vector forms of Expf: in assembly where the CPU has the instructions
// (vec_amd64.s with AVX2 and FMA, vec_arm64.s with NEON), each lane
// computing Expf's double-precision evaluation exactly, so every result is
// Expf's, bit for bit; in Go elsewhere. The assembly takes four floats at
// a time and Go the rest.

// Expfs sets x[i] = Expf(x[i]) for every i.
func Expfs(x []float32) {
	n4 := 0
	if vector {
		n4 = len(x) &^ 3
		if n4 > 0 {
			expfsAsm(&x[0], n4)
		}
	}
	for i := n4; i < len(x); i++ {
		x[i] = Expf(x[i])
	}
}

// ExpSum sets dst[i] = Expf(x[i]/temp - m) for every i of x (len(dst) ≥
// len(x)) and returns their sum, added one at a time in order in float32:
// a softmax's numerators and denominator, as
//
//	for i := range x { e := Expf(x[i]/temp - m); dst[i] = e; sum += e }
//
// computes them.
func ExpSum(dst, x []float32, temp, m float32) float32 {
	dst = dst[:len(x)]
	var sum float32
	n4 := 0
	if vector {
		n4 = len(x) &^ 3
		if n4 > 0 {
			sum = expSumAsm(&dst[0], &x[0], n4, temp, m)
		}
	}
	for i := n4; i < len(x); i++ {
		e := Expf(x[i]/temp - m)
		dst[i] = e
		sum += e
	}
	return sum
}

// DivAll sets x[i] /= d for every i, each quotient rounded once as the
// scalar division rounds it.
func DivAll(x []float32, d float32) {
	n4 := 0
	if vector {
		n4 = len(x) &^ 3
		if n4 > 0 {
			divAsm(&x[0], n4, d)
		}
	}
	for i := n4; i < len(x); i++ {
		x[i] /= d
	}
}

// Vector reports whether Expfs, ExpSum and DivAll run their assembly.
func Vector() bool { return vector }
