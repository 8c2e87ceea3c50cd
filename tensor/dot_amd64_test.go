//go:build amd64 && !noasm

package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestVNNIAndAVX2Forms runs the multi-row kernel checks and the MatMul
// invariance test with the VNNI kernels both on and off, so that both forms
// are tested on a machine that has VNNI (and agree with each other, since
// both must match the single dot and the reference bit for bit).
func TestVNNIAndAVX2Forms(t *testing.T) {
	if !hasVNNI {
		t.Skip("no AVX-512 VNNI on this CPU: only the AVX2 forms run")
	}
	defer setVNNI(useVNNI)
	for _, v := range []bool{false, true} {
		setVNNI(v)
		checkGemvKernels(t)
		TestMatMulBatchInvariant(t)
		TestMatMulNoAllocs(t)
	}
}

// BenchmarkVNNI compares the AVX-512 forms of the gemv kernels (useVNNI: the
// VNNI Q4_0 and Q8_0 kernels on their activation layout, eight tokens per
// pass for Q4_0, Q8_0, F32 and F16) with the AVX2 ones on the 1536×512
// matrix of BenchmarkMatMul, in CPU time.
func BenchmarkVNNI(b *testing.B) {
	if !hasVNNI {
		b.Skip("no AVX-512 VNNI on this CPU")
	}
	defer setVNNI(useVNNI)
	r := rand.New(rand.NewPCG(39, 40))
	for _, typ := range []Type{Q4_0, Q8_0, F32, F16} {
		m := randMatrix(b, r, typ, 1536, 512)
		p := NewPool(1)
		for _, n := range []int{1, 5} {
			x := randFloats(r, n*512, 1)
			out := make([]float32, n*1536)
			for _, v := range []bool{false, true} {
				b.Run(fmt.Sprintf("%v/n=%d/vnni=%v", typ, n, v), func(b *testing.B) {
					setVNNI(v)
					b.SetBytes(int64(len(m.Data)))
					c0 := cpuNanos()
					for b.Loop() {
						p.MatMul(out, m, x, n)
					}
					reportCPU(b, c0, len(m.Data))
				})
			}
		}
		p.Close()
	}
}

// TestQ8_0ExtremeQuants checks the Q8_0 multi-token kernels on blocks of
// extreme quants (±127, and -128 in the weights, which llama.cpp's
// quantizer never writes but a file may hold), where an int16 or int8
// intermediate would saturate or wrap. Scales are 1 and the sums are
// integers below 2^24, so every result is exact and must equal the exact
// integer dot.
func TestQ8_0ExtremeQuants(t *testing.T) {
	defer SetQ8_0Order(q8Order)
	defer setVNNI(useVNNI)
	const cols, rows, ntok = 512, 9, 5
	nb := cols / qk
	one := F32ToF16(1)
	wv := []int8{127, -127, -128, 127, -128, 0}
	xv := []int8{127, -127, 127, -127, 1}
	w := make([]byte, rows*nb*q8_0Size)
	x := make([]byte, ntok*nb*q8_0Size)
	fill := func(b []byte, i int, vals []int8, k int) {
		blk := b[i*q8_0Size : (i+1)*q8_0Size]
		blk[0], blk[1] = byte(one), byte(one>>8)
		for j := range qk {
			blk[2+j] = byte(vals[(k+j/8)%len(vals)])
		}
	}
	for i := range rows * nb {
		fill(w, i, wv, i%3)
	}
	for i := range ntok * nb {
		fill(x, i, xv, i%2)
	}
	for _, c := range []struct {
		vnni  bool
		order Q8_0Order
	}{{false, Q8_0Rows}, {true, Q8_0Rows}, {false, Q8_0Lanes}} {
		SetQ8_0Order(c.order)
		setVNNI(c.vnni)
		act, _ := ActType(Q8_0)
		xa := make([]byte, ntok*RowSize(act, cols))
		fromQ8_0Act(act, xa, x, ntok*nb)
		out := make([]float32, ntok*rows)
		gemvs[Q8_0](w, nb*q8_0Size, rows, xa, RowSize(act, cols), ntok, cols, out, rows)
		for ti := range ntok {
			for r := range rows {
				var want int64
				for j := range cols {
					b, k := j/qk, 2+j%qk
					want += int64(int8(w[(r*nb+b)*q8_0Size+k])) * int64(int8(x[(ti*nb+b)*q8_0Size+k]))
				}
				if got := out[ti*rows+r]; got != float32(want) {
					t.Fatalf("vnni=%v order=%d: out[%d,%d] = %g, exact dot %d", useVNNI, q8Order, ti, r, got, want)
				}
			}
		}
	}
}
