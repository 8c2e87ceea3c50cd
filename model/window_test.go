package model

import (
	"math"
	"testing"

	"github.com/specd-dev/specd/kvsync"
	"github.com/specd-dev/specd/tensor"
)

// TestSlidingWindow checks attention with a sliding-window cache:
//   - a window longer than the sequence gives the bits of full attention;
//   - a cache too small for the sequence, which slides during the run,
//     gives the bits of one large enough never to slide, with the same
//     window, through prefill chunks, speculative-shaped passes and
//     rollbacks, in F16 and F32 storage and with 1 and 2 threads;
//   - the window is applied: past it, logits differ from full attention.
func TestSlidingWindow(t *testing.T) {
	const window, n = 6, 40
	m := writeModel(t, tiny)
	V := m.Config.Vocab
	toks := testTokens(n+8, V, 5)
	for _, f32 := range []bool{false, true} {
		for _, threads := range []int{1, 2} {
			pool := tensor.NewPool(threads)
			defer pool.Close()
			st := m.NewState(8, pool)
			// run decodes toks[:n] with passes shaped like verification:
			// feed [t(n-1), 3 more], keep a varying prefix, repeat. It
			// returns the logits of every committed position's first token
			// after the prompt.
			run := func(kv *kvsync.Cache) [][]float32 {
				out := make([][]float32, n)
				var b Batch
				for p := 0; p < 5; p++ { // a 5-token prompt
					b.Add(toks[p], int32(p), 0, p == 4)
				}
				lg := make([]float32, 8*V)
				if err := st.Forward(&b, kv, lg); err != nil {
					t.Fatal(err)
				}
				out[4] = append([]float32(nil), lg[:V]...)
				have := 5 // committed tokens; the cache holds have positions
				for step := 0; have < n; step++ {
					b.Reset()
					k := min(4, n-have)
					for i := range k {
						b.Add(toks[have+i], int32(have+i), 0, true)
					}
					if err := st.Forward(&b, kv, lg); err != nil {
						t.Fatalf("step %d: %v", step, err)
					}
					keep := 1 + step%k // accepted positions of this pass
					for i := range keep {
						out[have+i] = append([]float32(nil), lg[i*V:(i+1)*V]...)
					}
					have += keep
					if err := kv.Rollback(0, have); err != nil {
						t.Fatal(err)
					}
				}
				return out
			}
			full, err := m.NewCache(1, n+8, f32)
			if err != nil {
				t.Fatal(err)
			}
			ref := run(full)
			wide, err := m.NewWindowCache(1, n+8, n+4, 0, f32)
			if err != nil {
				t.Fatal(err)
			}
			assertSame(t, "window longer than the sequence", run(wide), ref, 4)
			still, err := m.NewWindowCache(1, n+8, window, 0, f32)
			if err != nil {
				t.Fatal(err)
			}
			want := run(still)
			small, err := m.NewWindowCache(1, window+5, window, 0, f32)
			if err != nil {
				t.Fatal(err)
			}
			assertSame(t, "sliding cache", run(small), want, 4)
			if small.Base(0) == 0 {
				t.Errorf("the small cache never slid (base 0 after %d positions)", n)
			}
			// Inside the window the results are full attention's; past it
			// they must differ.
			assertSame(t, "first window", want[:window], ref[:window], 4)
			if same(want[n-1], ref[n-1]) {
				t.Errorf("f32=%v threads=%d: logits at %d equal full attention's: window not applied", f32, threads, n-1)
			}
		}
	}
}

func same(a, b []float32) bool {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func assertSame(t *testing.T, what string, got, want [][]float32, from int) {
	t.Helper()
	for p := from; p < len(want); p++ {
		if want[p] == nil {
			continue
		}
		if !same(got[p], want[p]) {
			t.Fatalf("%s: logits at position %d differ", what, p)
		}
	}
}
