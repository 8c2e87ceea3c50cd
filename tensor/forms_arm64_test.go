//go:build arm64 && !noasm

package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// kernelForms lists the plain NEON kernels and, where the CPU has SDOT or
// FMLAL, the forms using them, and where it has I8MM too, those with the
// SMMLA forms; restore selects the forms in use before.
func kernelForms() (forms []kernelForm, restore func()) {
	d, f, m := useDot, useFHM, useMM
	forms = []kernelForm{{"neon", func() { setARM64Forms(false, false, false) }}}
	if cpuDotProd || cpuFHM {
		forms = append(forms, kernelForm{"dotprod+fhm", func() { setARM64Forms(true, true, false) }})
	}
	if cpuDotProd && cpuI8MM {
		forms = append(forms, kernelForm{"dotprod+fhm+i8mm", func() { setARM64Forms(true, true, true) }})
	}
	return forms, func() { setARM64Forms(d, f, m) }
}

// fromQ8_0Act converts nb ggml Q8_0 activation blocks at src into dst in
// activation type act's layout: on arm64 every Q8_0 kernel takes ggml's.
func fromQ8_0Act(act Type, dst, src []byte, nb int) { copy(dst[:nb*q8_0Size], src) }

// kGemvWideNB is the widest row (in blocks) the K-quant gemv tests try.
const kGemvWideNB = 64

// q8ActNaNExact is true: the NEON Q8_0 converter matches the reference on
// every input, NaNs included.
const q8ActNaNExact = true

// q32Multirow says whether Q4_1, Q5_0, Q5_1 and IQ4_NL have multi-row
// kernels here: the NEON kernels, which every arm64 CPU runs.
var q32Multirow = true

// TestSPECDCPU checks that SPECD_CPU=neon turns the extensions off and
// that anything else leaves what the CPU has.
func TestSPECDCPU(t *testing.T) {
	if d, f, m := arm64Forms("neon"); d || f || m {
		t.Errorf("SPECD_CPU=neon: dotprod %v, fhm %v, i8mm %v; want all off", d, f, m)
	}
	if d, f, m := arm64Forms(""); d != cpuDotProd || f != cpuFHM || m != (cpuI8MM && cpuDotProd) {
		t.Errorf("SPECD_CPU unset: dotprod %v, fhm %v, i8mm %v; the CPU has %v, %v, %v", d, f, m, cpuDotProd, cpuFHM, cpuI8MM)
	}
	dot, fhm, i8mm := ARM64Features()
	t.Logf("kernels in use: dotprod %v, fhm %v, i8mm %v (CPU: %v, %v, %v)", dot, fhm, i8mm, cpuDotProd, cpuFHM, cpuI8MM)
}

// TestQ0MMKernels calls the SMMLA forms of the four-row Q8_0 and Q4_0
// kernels directly, on blocks of any quants (-128 included) and scales,
// at unaligned addresses with gaps between the rows, the tokens and the
// outputs, and checks every output bit for bit against the SDOT form run
// token by token, within rounding against the pure-Go reference (on the
// Q8_0 blocks Q4_0's q8VNNI activations are made from), and that the guard
// values between and after the outputs stay.
func TestQ0MMKernels(t *testing.T) {
	if !cpuDotProd || !cpuI8MM {
		t.Skip("no I8MM (SMMLA) on this CPU")
	}
	r := rand.New(rand.NewPCG(31, 32))
	scale := func(b []byte) {
		h := F32ToF16(float32(math.Copysign(1e-3+0.1*r.Float64(), r.Float64()-0.5)))
		b[0], b[1] = byte(h), byte(h>>8)
	}
	const guard = -7.5
	type kernel = func(w *byte, wstride, groups int, x *byte, xstride, nb int, out *float32, ostride int)
	for _, c := range []struct {
		typ   Type
		T     int
		mm    kernel
		one   kernel
		bsize int
		ref   func(w, x []byte, n int) float32
	}{
		{Q8_0, 2, q8_0Rows4T2MM, q8_0Rows4T1Dot, q8_0Size, dotQ8_0Generic},
		{Q8_0, 3, q8_0Rows4T3MM, q8_0Rows4T1Dot, q8_0Size, dotQ8_0Generic},
		{Q8_0, 4, q8_0Rows4T4MM, q8_0Rows4T1Dot, q8_0Size, dotQ8_0Generic},
		{Q4_0, 4, q4_0Rows4T4MM, q4_0Rows4T1Dot, q4_0Size, dotQ4_0Generic},
	} {
		for _, groups := range []int{1, 2, 3} {
			for _, nb := range []int{1, 2, 5} {
				ws, xs, os := nb*c.bsize+5, nb*q8_0Size+3, 4*groups+3
				w := make([]byte, 1+4*groups*ws)
				x := make([]byte, 3+c.T*xs)
				for i := range w {
					w[i] = byte(r.Uint32())
				}
				for i := range x {
					x[i] = byte(r.Uint32())
				}
				wr := func(row int) []byte { return w[1+row*ws : 1+row*ws+nb*c.bsize] }
				xr := func(tok int) []byte { return x[3+tok*xs : 3+tok*xs+nb*q8_0Size] }
				for b := range nb {
					for row := range 4 * groups {
						scale(wr(row)[b*c.bsize:])
					}
					for tok := range c.T {
						scale(xr(tok)[b*q8_0Size:])
					}
				}
				// The kernels' activations: the Q8_0 blocks, or for Q4_0
				// their q8VNNI layout.
				kx, kxs := x, xs
				if c.typ == Q4_0 {
					kxs = nb*q8VNNISize + 3
					kx = make([]byte, 3+c.T*kxs)
					for tok := range c.T {
						q8VNNIFromQ8_0(kx[3+tok*kxs:], xr(tok), nb, 3)
					}
				}
				got := make([]float32, c.T*os+1)
				want := make([]float32, c.T*os+1)
				for i := range got {
					got[i], want[i] = guard, guard
				}
				c.mm(&w[1], ws, groups, &kx[3], kxs, nb, &got[0], os)
				for tok := range c.T {
					c.one(&w[1], ws, groups, &kx[3+tok*kxs], kxs, nb, &want[tok*os], os)
				}
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%v T=%d groups=%d nb=%d: out[%d] = %g, the SDOT form %g", c.typ, c.T, groups, nb, i, got[i], want[i])
					}
					tok, row := i/os, i%os
					if row >= 4*groups || tok == c.T {
						if got[i] != guard {
							t.Fatalf("%v T=%d groups=%d nb=%d: wrote the guard at %d", c.typ, c.T, groups, nb, i)
						}
						continue
					}
					ref := c.ref(wr(row), xr(tok), nb*qk)
					_, mag := exactDot(c.typ, Q8_0, wr(row), xr(tok), nb*qk)
					if d := math.Abs(float64(got[i]) - float64(ref)); !(d <= 1e-6*mag) {
						t.Fatalf("%v T=%d groups=%d nb=%d: out[%d,%d] = %g, reference %g", c.typ, c.T, groups, nb, tok, row, got[i], ref)
					}
				}
			}
		}
	}
}

// TestQ4KMMKernels calls the SMMLA forms of the Q4_K kernels directly, on
// valid blocks and on arbitrary bytes (any scales, mins, quants and bsums;
// NaN and infinite d), for one to three pairs of rows at unaligned
// addresses with gaps between the rows, the tokens and the outputs, and
// checks every output bit for bit against the SDOT form of the same token
// count on the same rows and against dotQ4KRef (NaNs counted equal), and
// that the guard values between and after the outputs stay.
func TestQ4KMMKernels(t *testing.T) {
	if !cpuDotProd || !cpuI8MM {
		t.Skip("no I8MM (SMMLA) on this CPU")
	}
	r := rand.New(rand.NewPCG(33, 34))
	const guard = -7.5
	type kernel = func(w *byte, wstride, rows int, x *byte, xstride, nb int, out *float32, ostride int)
	for _, c := range []struct {
		T       int
		mm, dot kernel
	}{
		{2, q4KRows2MM, q4KRows2Dot},
		{3, q4KRows3MM, q4KRows3Dot},
		{4, q4KRows4MM, q4KRows4Dot},
	} {
		for _, pairs := range []int{1, 2, 3} {
			for _, nb := range []int{1, 2, 5} {
				for _, raw := range []bool{false, true} {
					ws, xs, os := nb*q4KBytes+5, nb*q8KBytes+3, 2*pairs+3
					w := make([]byte, 1+2*pairs*ws)
					x := make([]byte, 3+c.T*xs)
					for i := range w {
						w[i] = byte(r.Uint32())
					}
					for i := range x {
						x[i] = byte(r.Uint32())
					}
					wr := func(row int) []byte { return w[1+row*ws : 1+row*ws+nb*q4KBytes] }
					xr := func(tok int) []byte { return x[3+tok*xs : 3+tok*xs+nb*q8KBytes] }
					if !raw {
						for row := range 2 * pairs {
							copy(wr(row), kRandQ4K(r, nb))
						}
						for tok := range c.T {
							copy(xr(tok), kRandQ8K(r, nb))
						}
					}
					got := make([]float32, c.T*os+1)
					want := make([]float32, c.T*os+1)
					for i := range got {
						got[i], want[i] = guard, guard
					}
					c.mm(&w[1], ws, pairs, &x[3], xs, nb, &got[0], os)
					c.dot(&w[1], ws, 2*pairs, &x[3], xs, nb, &want[0], os)
					what := fmt.Sprintf("T=%d pairs=%d nb=%d raw=%v", c.T, pairs, nb, raw)
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s: out[%d] = %g (%#08x), the SDOT form %g (%#08x)", what, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
						}
						tok, row := i/os, i%os
						if row >= 2*pairs || tok == c.T {
							if got[i] != guard {
								t.Fatalf("%s: wrote the guard at %d", what, i)
							}
							continue
						}
						if ref := dotQ4KRef(wr(row), xr(tok), nb*qkK); !kSameBits(got[i], ref) {
							t.Fatalf("%s: out[tok %d, row %d] = %g, reference %g", what, tok, row, got[i], ref)
						}
					}
				}
			}
		}
	}
}
