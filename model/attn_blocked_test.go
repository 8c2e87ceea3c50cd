package model

import (
	"fmt"
	"math"
	"testing"

	"github.com/specd-dev/specd/kvsync"
	"github.com/specd-dev/specd/tensor"
)

// attnTestHalves returns n random halves with magnitudes up to scale.
func attnTestHalves(x *xorshift, n int, scale float32) []uint16 {
	h := make([]uint16, n)
	for i := range h {
		h[i] = tensor.F32ToF16(float32(int64(x.next()%20001)-10000) / 10000 * scale)
	}
	return h
}

// sameBits reports whether a and b hold the same float32 bits (any NaN
// matching any NaN).
func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b
}

// TestAttnRowKernels checks dotRowsF16 and madRowsF16 (assembly where
// available) against one-row-at-a-time dotAttnF16 and scaleHalfGeneric +
// madHalfF16Generic, bit for bit, at head sizes with and without tails,
// with guard values past every row and past the accumulator.
func TestAttnRowKernels(t *testing.T) {
	x := xorshift(7)
	for _, lanes := range []int{16, 8} {
		defer func(l int) { ggmlLanes = l }(ggmlLanes)
		ggmlLanes = lanes
		for _, d := range []int{1, 7, 8, 24, 32, 40, 48, 63, 64, 65, 72, 80, 96, 128, 136, 200, 256} {
			for _, n := range []int{1, 2, 3, 17, 33} {
				scale := []float32{1, 1e-3, 300, 3e4}[(d+n)%4]
				k := attnTestHalves(&x, n*d+8, 1)
				v := attnTestHalves(&x, n*d+8, scale)
				q := make([]float32, d)
				for i := range q {
					q[i] = roundF16(float32(int64(x.next()%2001)-1000) / 1000)
				}
				got := make([]float32, n+1)
				got[n] = 12345
				dotRowsF16(got[:n], k[:n*d], q)
				for r := range n {
					if want := dotAttnF16(k[r*d:(r+1)*d], q); !sameBits(got[r], want) {
						t.Fatalf("lanes=%d d=%d n=%d: dotRowsF16 row %d = %v, want %v", lanes, d, n, r, got[r], want)
					}
				}
				if got[n] != 12345 {
					t.Fatalf("lanes=%d d=%d n=%d: dotRowsF16 wrote past the end", lanes, d, n)
				}

				// Exponentials and flags as the online softmax makes them:
				// mostly flag 1 (a weight), sometimes 0 (a rescale factor
				// for the accumulator, the value weighted 1).
				e, flag := make([]float32, n), make([]float32, n)
				for p := range n {
					e[p], flag[p] = float32(x.next()%1000)/1000, 1
					if x.next()%4 == 0 {
						flag[p] = 0
					}
				}
				acc := make([]float32, d+8)
				for i := range acc {
					acc[i] = roundF16(float32(int64(x.next()%2001)-1000) / 1000 * scale)
				}
				want := append([]float32(nil), acc...)
				s0 := float32(x.next()%5000) / 1000
				sum := madRowsF16(acc[:d], v[:n*d], e, flag, s0)
				ws := s0
				for p := range n {
					ms, vs := float32(1), e[p]
					if flag[p] == 0 {
						ms, vs = e[p], 1
						scaleHalfGeneric(want[:d], ms)
					}
					madHalfF16Generic(want[:d], v[p*d:(p+1)*d], vs)
					ws = fma32(ws, ms, vs)
				}
				for i := range acc {
					if !sameBits(acc[i], want[i]) {
						t.Fatalf("lanes=%d d=%d n=%d: madRowsF16 acc[%d] = %v, want %v", lanes, d, n, i, acc[i], want[i])
					}
				}
				if !sameBits(sum, ws) {
					t.Fatalf("lanes=%d d=%d n=%d: madRowsF16 sum %v, want %v", lanes, d, n, sum, ws)
				}
			}
		}
	}
}

// TestAttnWorkersOneByOne runs a layer's attention through attnWorkers
// (batches of consecutive positions of several sequences, GQA groups of
// odd sizes, contexts across block boundaries, head sizes with tails, with
// and without a sliding window, value magnitudes that overflow the half
// accumulator, both ggml lane layouts, one to three threads) and compares
// every (token, query head) result with attnF16 computed for that query
// alone over the positions it sees.
func TestAttnWorkersOneByOne(t *testing.T) {
	type tcase struct {
		heads, kvHeads, hd, seqs, ctx, n, threads, window int
		vscale                                            float32
	}
	cases := []tcase{
		{8, 4, 64, 1, 64, 5, 1, 0, 1},
		{8, 4, 64, 1, 200, 9, 3, 0, 1},
		{8, 4, 64, 2, 100, 12, 2, 40, 1},
		{6, 2, 40, 2, 37, 7, 3, 0, 1},
		{5, 5, 80, 3, 3, 11, 1, 0, 3e4},
		{9, 3, 136, 2, 130, 4, 2, 0, 1},
		{3, 1, 24, 1, 0, 17, 3, 0, 1},
		{4, 2, 8, 1, 31, 2, 1, 5, 300},
		{2, 1, 128, 1, 95, 6, 1, 0, 3e4},
	}
	for _, lanes := range []int{16, 8} {
		defer func(l int) { ggmlLanes = l }(ggmlLanes)
		ggmlLanes = lanes
		for _, tc := range cases {
			t.Run(fmt.Sprintf("lanes=%d/%+v", lanes, tc), func(t *testing.T) {
				testAttnWorkers(t, tc.heads, tc.kvHeads, tc.hd, tc.seqs, tc.ctx, tc.n, tc.threads, tc.window, tc.vscale)
			})
		}
	}
}

func testAttnWorkers(t *testing.T, heads, kvHeads, hd, seqs, ctx, n, threads, window int, vscale float32) {
	c := Config{Layers: 2, Heads: heads, KVHeads: kvHeads, HeadDim: hd}
	maxPos := ctx + n + seqs
	kv, err := kvsync.New(kvsync.Config{Layers: c.Layers, KVHeads: c.KVHeads, HeadDim: c.HeadDim, Seqs: seqs, MaxPos: maxPos, Window: window})
	if err != nil {
		t.Fatal(err)
	}
	x := xorshift(uint64(heads*1000 + hd))
	for l := range c.Layers {
		for s := range seqs {
			for h := range c.KVHeads {
				k, v := kv.Head16(l, s, h)
				copy(k, attnTestHalves(&x, len(k), 2))
				copy(v, attnTestHalves(&x, len(v), vscale))
			}
		}
	}
	// Tokens of the sequences interleaved in runs of three, each sequence
	// at consecutive positions from its own start.
	var b Batch
	next := make([]int, seqs)
	for s := range next {
		next[s] = ctx + s
	}
	for i := range n {
		s := (i / 3) % seqs
		b.Add(1, int32(next[s]), int32(s), true)
		next[s]++
	}
	qDim := c.Heads * c.HeadDim
	q := make([]float32, n*qDim)
	for i := range q {
		q[i] = float32(int64(x.next()%2001)-1000) / 300
	}
	pool := tensor.NewPool(threads)
	defer pool.Close()
	w := newAttnWorkers(pool, &c)
	scale := 1 / float32(math.Sqrt(float64(c.HeadDim)))
	group := c.Heads / c.KVHeads
	for l := range c.Layers {
		att := make([]float32, n*qDim+1)
		att[n*qDim] = 12345
		w.run(l, &b, kv, q, att[:n*qDim], &c, scale)
		if att[n*qDim] != 12345 {
			t.Fatal("wrote past the output")
		}
		want := make([]float32, hd)
		for tok := range n {
			seq, pos := int(b.Seq[tok]), int(b.Pos[tok])
			lo := pos - window + 1
			if window == 0 || lo < 0 {
				lo = 0
			}
			for h := range c.Heads {
				k, v := kv.Head16(l, seq, h/group)
				qt := q[tok*qDim+h*hd : tok*qDim+(h+1)*hd]
				attnF16(want, qt, k[lo*hd:], v[lo*hd:], pos+1-lo, scale, make([]float32, hd), make([]float32, hd))
				for i := range want {
					if got := att[tok*qDim+h*hd+i]; !sameBits(got, want[i]) {
						t.Fatalf("layer %d token %d (pos %d) head %d: out[%d] = %v, alone %v", l, tok, pos, h, i, got, want[i])
					}
				}
			}
		}
	}
}

// TestExpfs checks expfs (assembly where available) against expf bit for
// bit: a sweep over float32 bit patterns of both signs, the thresholds of
// expf's special cases and their neighbours, ±0, ±Inf and NaNs, at lengths
// with and without a tail and with a guard value after the end.
func TestExpfs(t *testing.T) {
	var in []float32
	for u := uint32(0); u < 0xffffffff-4093; u += 4093 {
		in = append(in, math.Float32frombits(u))
	}
	for _, u := range []uint32{0x42b17217, 0xc2cff1b4, 0x42b00000, 0xc2b00000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 0, 0x80000000, 0x00000001, 0x80000001} {
		for d := -2; d <= 2; d++ {
			in = append(in, math.Float32frombits(u+uint32(d)))
		}
	}
	x := xorshift(5)
	for range 20000 { // the arguments attention uses: x - max <= 0
		in = append(in, -float32(x.next()%100000)/1000)
	}
	for _, n := range []int{len(in), len(in) - 1, len(in) - 2, len(in) - 3, 1, 2, 3, 5} {
		got := append([]float32(nil), in[:n]...)
		got = append(got, 12345)
		expfs(got[:n])
		for i, v := range in[:n] {
			if want := expf(v); !sameBits(got[i], want) {
				t.Fatalf("n=%d: expfs(%#08x) = %#08x, expf %#08x", n, math.Float32bits(v), math.Float32bits(got[i]), math.Float32bits(want))
			}
		}
		if got[n] != 12345 {
			t.Fatalf("n=%d: wrote past the end", n)
		}
	}
}
