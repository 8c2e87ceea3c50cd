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
		for _, d := range []int{1, 7, 8, 24, 40, 63, 64, 65, 72, 80, 96, 128, 136, 200, 256} {
			for _, n := range []int{1, 2, 3, 17, 130} {
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

				// Weights and rescale factors as the online softmax makes
				// them: mostly ms = 1, sometimes a factor below 1 with vs = 1.
				vs, ms := make([]float32, n), make([]float32, n)
				for p := range n {
					vs[p], ms[p] = float32(x.next()%1000)/1000, 1
					if x.next()%4 == 0 {
						vs[p], ms[p] = 1, float32(x.next()%1000)/1000
					}
				}
				acc := make([]float32, d+8)
				for i := range acc {
					acc[i] = roundF16(float32(int64(x.next()%2001)-1000) / 1000 * scale)
				}
				want := append([]float32(nil), acc...)
				madRowsF16(acc[:d], v[:n*d], vs, ms)
				for p := range n {
					if ms[p] != 1 {
						scaleHalfGeneric(want[:d], ms[p])
					}
					madHalfF16Generic(want[:d], v[p*d:(p+1)*d], vs[p])
				}
				for i := range acc {
					if !sameBits(acc[i], want[i]) {
						t.Fatalf("lanes=%d d=%d n=%d: madRowsF16 acc[%d] = %v, want %v", lanes, d, n, i, acc[i], want[i])
					}
				}
			}
		}
	}
}

// TestAttnBlocked compares attnF16Blocked with attnF16 bit for bit over
// head sizes with tails, lengths across block boundaries, both ggml lane
// layouts, and value magnitudes that overflow the half accumulator.
func TestAttnBlocked(t *testing.T) {
	x := xorshift(11)
	for _, lanes := range []int{16, 8} {
		defer func(l int) { ggmlLanes = l }(ggmlLanes)
		ggmlLanes = lanes
		for _, d := range []int{8, 40, 64, 80, 128, 136} {
			for _, npos := range []int{1, 2, 5, 127, 128, 129, 300} {
				for _, scale := range []float32{1, 3e4} {
					k := attnTestHalves(&x, npos*d, 2)
					v := attnTestHalves(&x, npos*d, scale)
					q := make([]float32, d)
					for i := range q {
						q[i] = float32(int64(x.next()%2001)-1000) / 300
					}
					sc := 1 / float32(math.Sqrt(float64(d)))
					want := make([]float32, d)
					attnF16(want, q, k, v, npos, sc, make([]float32, d), make([]float32, d))
					w := newAttnWorkers(tensor.NewPool(1), d)
					got := make([]float32, d+1)
					got[d] = 12345
					attnF16Blocked(got[:d], q, k, v, npos, sc, &w.scratch[0])
					w.pool.Close()
					for i := range want {
						if !sameBits(got[i], want[i]) {
							t.Fatalf("lanes=%d d=%d npos=%d scale=%g: out[%d] = %v, attnF16 %v", lanes, d, npos, scale, i, got[i], want[i])
						}
					}
					if got[d] != 12345 {
						t.Fatalf("lanes=%d d=%d npos=%d: wrote past the output", lanes, d, npos)
					}
				}
			}
		}
	}
}

// TestAttnWorkersOneByOne runs a layer's attention through attnWorkers
// (batches of consecutive positions of several sequences, GQA groups of
// odd sizes, one and three threads) and compares every (token, query
// head) result with attnF16 computed for that query alone.
func TestAttnWorkersOneByOne(t *testing.T) {
	for _, tc := range []struct{ heads, kvHeads, hd, seqs, ctx, n, threads int }{
		{8, 4, 64, 1, 64, 5, 1},
		{8, 4, 64, 1, 200, 9, 3},
		{6, 2, 40, 2, 37, 7, 3},
		{5, 5, 80, 3, 3, 11, 1},
		{9, 3, 136, 2, 130, 4, 2},
		{3, 1, 24, 1, 0, 17, 3},
	} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			c := Config{Layers: 2, Heads: tc.heads, KVHeads: tc.kvHeads, HeadDim: tc.hd}
			maxPos := tc.ctx + tc.n + 3
			kv, err := kvsync.New(kvsync.Config{Layers: c.Layers, KVHeads: c.KVHeads, HeadDim: c.HeadDim, Seqs: tc.seqs, MaxPos: maxPos})
			if err != nil {
				t.Fatal(err)
			}
			x := xorshift(uint64(tc.heads*1000 + tc.hd))
			for l := range c.Layers {
				for s := range tc.seqs {
					for h := range c.KVHeads {
						k, v := kv.Head16(l, s, h)
						copy(k, attnTestHalves(&x, len(k), 2))
						copy(v, attnTestHalves(&x, len(v), 1))
					}
				}
			}
			// Tokens of the sequences interleaved in runs, each sequence at
			// consecutive positions from its own start.
			var b Batch
			next := make([]int, tc.seqs)
			for s := range next {
				next[s] = tc.ctx + s
			}
			for i := range tc.n {
				s := (i / 3) % tc.seqs
				b.Add(1, int32(next[s]), int32(s), true)
				next[s]++
			}
			qDim := c.Heads * c.HeadDim
			q := make([]float32, tc.n*qDim)
			for i := range q {
				q[i] = float32(int64(x.next()%2001)-1000) / 300
			}
			pool := tensor.NewPool(tc.threads)
			defer pool.Close()
			w := newAttnWorkers(pool, c.HeadDim)
			scale := 1 / float32(math.Sqrt(float64(c.HeadDim)))
			hd, group := c.HeadDim, c.Heads/c.KVHeads
			for l := range c.Layers {
				att := make([]float32, tc.n*qDim)
				w.run(l, &b, kv, q, att, &c, scale)
				want := make([]float32, hd)
				for tok := range tc.n {
					for h := range c.Heads {
						k, v := kv.Head16(l, int(b.Seq[tok]), h/group)
						qt := q[tok*qDim+h*hd : tok*qDim+(h+1)*hd]
						attnF16(want, qt, k, v, int(b.Pos[tok])+1, scale, make([]float32, hd), make([]float32, hd))
						for i := range want {
							if got := att[tok*qDim+h*hd+i]; !sameBits(got, want[i]) {
								t.Fatalf("layer %d token %d head %d: out[%d] = %v, alone %v", l, tok, h, i, got, want[i])
							}
						}
					}
				}
			}
		})
	}
}
