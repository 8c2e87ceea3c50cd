//go:build amd64 && !noasm

package tensor

import (
	"math/rand/v2"
	"testing"
)

// kCheckX4 compares a four-row kernel with the single-row reference on rows
// of nb blocks placed at stride, starting at byte offset off.
func kCheckX4(t *testing.T, name string, x4 func(w, x []byte, stride, n int, out *[4]float32), ref VecDot, w []byte, rows [4][]byte, nb, stride, off int) {
	t.Helper()
	x := make([]byte, off+3*stride+nb*q8KBytes)
	for i := range x {
		x[i] = 0xa5 // guard and gap bytes must not matter
	}
	for r := range rows {
		copy(x[off+r*stride:], rows[r])
	}
	var out [4]float32
	x4(w, x[off:], stride, nb*qkK, &out)
	for r := range rows {
		if want := ref(w, rows[r], nb*qkK); !kSameBits(out[r], want) {
			t.Fatalf("%s nb=%d stride=%d off=%d: row %d = %v, single-row %v", name, nb, stride, off, r, out[r], want)
		}
	}
}

func TestDotKx4MatchesSingle(t *testing.T) {
	if !haveAVX2K {
		t.Skip("no AVX2 on this CPU")
	}
	r := rand.New(rand.NewPCG(13, 14))
	raw := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return b
	}
	for _, nb := range []int{1, 2, 3, 16} {
		for _, extra := range []int{0, 1, 37} {
			stride := nb*q8KBytes + extra
			off := extra % 5
			var rows, rawRows [4][]byte
			for i := range rows {
				rows[i] = kRandQ8K(r, nb)
				rawRows[i] = raw(nb * q8KBytes)
			}
			kCheckX4(t, "Q4_K", dotQ4Kx4, dotQ4KRef, kRandQ4K(r, nb), rows, nb, stride, off)
			kCheckX4(t, "Q6_K", dotQ6Kx4, dotQ6KRef, kRandQ6K(r, nb), rows, nb, stride, off)
			kCheckX4(t, "Q4_K/raw", dotQ4Kx4, dotQ4KRef, raw(nb*q4KBytes), rawRows, nb, stride, off)
			kCheckX4(t, "Q6_K/raw", dotQ6Kx4, dotQ6KRef, raw(nb*q6KBytes), rawRows, nb, stride, off)
		}
	}
}

func kBenchX4(b *testing.B, sz int, x4 func(w, x []byte, stride, n int, out *[4]float32), gen func(*rand.Rand, int) []byte) {
	const nb = 16
	r := rand.New(rand.NewPCG(9, 10))
	w := gen(r, nb)
	x := make([]byte, 0, 4*nb*q8KBytes)
	for range 4 {
		x = append(x, kRandQ8K(r, nb)...)
	}
	var out [4]float32
	b.SetBytes(int64(nb * sz))
	c0 := cpuNanos()
	for b.Loop() {
		x4(w, x, nb*q8KBytes, nb*qkK, &out)
	}
	reportCPU(b, c0, nb*sz)
}

// The x4 benchmarks report weight bytes per call (four tokens each).
func BenchmarkDotQ4_Kx4(b *testing.B) { kBenchX4(b, q4KBytes, dotQ4Kx4, kRandQ4K) }
func BenchmarkDotQ6_Kx4(b *testing.B) { kBenchX4(b, q6KBytes, dotQ6Kx4, kRandQ6K) }
