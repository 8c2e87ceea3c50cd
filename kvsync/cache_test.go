package kvsync

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/specd-dev/specd/tensor"
)

func newTestCache(t *testing.T, seqs, maxPos int) *Cache {
	t.Helper()
	c, err := New(Config{Layers: 2, KVHeads: 1, HeadDim: 1, Seqs: seqs, MaxPos: maxPos, F32: true})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLengthErrors(t *testing.T) {
	c := newTestCache(t, 2, 4)
	var se *SeqError
	if err := c.Commit(0, 5); !errors.Is(err, ErrFull) || !errors.As(err, &se) || se.Want != 5 {
		t.Errorf("Commit past MaxPos = %v", err)
	}
	if err := c.Commit(0, 3); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(0, 2); !errors.Is(err, ErrBadLength) {
		t.Errorf("Commit backwards = %v", err)
	}
	if err := c.Rollback(0, 4); !errors.Is(err, ErrBadLength) {
		t.Errorf("Rollback forwards = %v", err)
	}
	if err := c.Rollback(0, -1); !errors.Is(err, ErrBadLength) {
		t.Errorf("Rollback negative = %v", err)
	}
	if err := c.Rollback(2, 0); !errors.Is(err, ErrBadSeq) {
		t.Errorf("Rollback bad slot = %v", err)
	}
	if err := c.Grow(0, 1); err != nil {
		t.Errorf("Grow 1 = %v", err)
	}
	if err := c.Grow(0, 2); !errors.Is(err, ErrFull) {
		t.Errorf("Grow 2 = %v", err)
	}
	if err := c.Grow(-1, 0); !errors.Is(err, ErrBadSeq) {
		t.Errorf("Grow bad slot = %v", err)
	}
	if err := c.Reset(0); err != nil || c.Len(0) != 0 {
		t.Errorf("Reset = %v, len %d", err, c.Len(0))
	}
	if _, err := New(Config{Layers: 1, KVHeads: 1, HeadDim: 1, Seqs: 1, MaxPos: 0}); err == nil {
		t.Error("New accepted MaxPos 0")
	}
	if _, err := New(Config{Layers: 1 << 20, KVHeads: 1 << 10, HeadDim: 1 << 10, Seqs: 1, MaxPos: 1 << 10}); err == nil {
		t.Error("New accepted a huge cache")
	}
}

func TestRollbackAllocs(t *testing.T) {
	c := newTestCache(t, 1, 16)
	if n := testing.AllocsPerRun(100, func() {
		_ = c.Commit(0, 10)
		_ = c.Rollback(0, 5)
		_ = c.Rollback(0, 0)
	}); n != 0 {
		t.Fatalf("%v allocations per rollback", n)
	}
}

func TestSlots(t *testing.T) {
	s := NewSlots(2)
	a, err := s.TryAcquire()
	if err != nil || a != 0 {
		t.Fatalf("first slot %d, %v", a, err)
	}
	b, _ := s.TryAcquire()
	if b != 1 {
		t.Fatalf("second slot %d", b)
	}
	if _, err := s.TryAcquire(); !errors.Is(err, ErrNoSlot) {
		t.Fatalf("TryAcquire on full = %v", err)
	}
	// Two waiters, two releases: both must get a slot.
	got := make(chan int, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := 0; i < 2; i++ {
		go func() {
			n, err := s.Acquire(ctx)
			if err != nil {
				n = -1
			}
			got <- n
		}()
	}
	s.Release(a)
	s.Release(b)
	seen := map[int]bool{}
	for i := 0; i < 2; i++ {
		select {
		case n := <-got:
			if n < 0 || seen[n] {
				t.Fatalf("waiter got %d (seen %v)", n, seen)
			}
			seen[n] = true
		case <-time.After(10 * time.Second):
			t.Fatal("waiter not woken")
		}
	}
	// A cancelled context ends a wait.
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if _, err := s.Acquire(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire on cancelled = %v", err)
	}
}

// TestSlidingWindow runs speculative-shaped passes (write positions
// [n-1, n+k), keep a random accepted prefix) far past MaxPos in a windowed
// cache, and checks after every Reserve that every position the pass's
// tokens can see is stored, with its own values, at Index(pos), in F16 and
// F32 storage; Reserve must not allocate.
func TestSlidingWindow(t *testing.T) {
	for _, f32 := range []bool{true, false} {
		const window, maxPos, k = 7, 12, 4
		c, err := New(Config{Layers: 2, KVHeads: 2, HeadDim: 3, Seqs: 2, MaxPos: maxPos, Window: window, F32: f32})
		if err != nil {
			t.Fatal(err)
		}
		// val is what position pos holds in element e of (layer, head).
		val := func(pos, e int) float32 { return float32(pos%256) + float32(e)/4 } // exact in F16
		put := func(s, pos int) {
			for l := range 2 {
				for h := range 2 {
					for e := range 3 {
						i := c.Index(s, pos)*3 + e
						x := val(pos, l*6+h*3+e)
						if f32 {
							kk, vv := c.Head32(l, s, h)
							kk[i], vv[i] = x, -x
						} else {
							kk, vv := c.Head16(l, s, h)
							kk[i], vv[i] = tensor.F32ToF16(x), tensor.F32ToF16(-x)
						}
					}
				}
			}
		}
		check := func(s, from, end int) {
			t.Helper()
			for pos := c.Visible(from); pos < from; pos++ {
				for l := range 2 {
					for h := range 2 {
						for e := range 3 {
							i := c.Index(s, pos)*3 + e
							want := val(pos, l*6+h*3+e)
							var gk, gv float32
							if f32 {
								kk, vv := c.Head32(l, s, h)
								gk, gv = kk[i], vv[i]
							} else {
								kk, vv := c.Head16(l, s, h)
								gk, gv = tensor.F16ToF32(kk[i]), tensor.F16ToF32(vv[i])
							}
							if gk != want || gv != -want {
								t.Fatalf("f32=%v: pass [%d, %d): position %d (index %d) holds %v/%v, want %v", f32, from, end, pos, c.Index(s, pos), gk, gv, want)
							}
						}
					}
				}
			}
		}
		s := 1
		n := 1 // committed tokens; the cache holds n-1 positions
		slides := 0
		for step := 0; n < 200; step++ {
			from, end := n-1, n+k
			b := c.Base(s)
			if err := c.Reserve(s, from, end); err != nil {
				t.Fatalf("step %d: reserve [%d, %d): %v", step, from, end, err)
			}
			if c.Base(s) != b {
				slides++
				if c.Base(s) != c.Visible(from) || c.Len(s) != from {
					t.Fatalf("slide: base %d len %d, want %d and the length unchanged, %d", c.Base(s), c.Len(s), c.Visible(from), from)
				}
			}
			check(s, from, end)
			for pos := from; pos < end; pos++ {
				put(s, pos)
			}
			if err := c.Commit(s, end); err != nil {
				t.Fatal(err)
			}
			a := (step * 7) % (k + 1) // accepted draft tokens
			n += a + 1
			if err := c.Rollback(s, n-1); err != nil {
				t.Fatal(err)
			}
		}
		if slides < 10 {
			t.Errorf("only %d slides over 200 positions", slides)
		}
		if a := testing.AllocsPerRun(20, func() {
			c.Rollback(s, c.Len(s)-1)
			c.Reserve(s, c.Len(s), c.Len(s)+k+1)
			c.Commit(s, c.Len(s)+k+1)
		}); a != 0 {
			t.Errorf("%v allocations per reserve", a)
		}

		// A pass larger than the storage allows, a rollback past the stored
		// range, and an empty slot starting over.
		if err := c.Reserve(s, c.Len(s), c.Len(s)+maxPos); !errors.Is(err, ErrFull) {
			t.Errorf("pass of %d positions: %v, want ErrFull", maxPos, err)
		}
		c.Rollback(s, c.Base(s)+1)
		if err := c.Reserve(s, c.Len(s), c.Len(s)+1); !errors.Is(err, ErrBadLength) {
			t.Errorf("rollback past the window: %v, want ErrBadLength", err)
		}
		if err := c.Reset(s); err != nil || c.Base(s) != 0 {
			t.Fatalf("reset: %v, base %d", err, c.Base(s))
		}
		if err := c.Reserve(s, 0, maxPos); err != nil {
			t.Errorf("full pass on an empty slot: %v", err)
		}
	}
	if _, err := New(Config{Layers: 1, KVHeads: 1, HeadDim: 1, Seqs: 1, MaxPos: 8, Window: 8}); err == nil {
		t.Error("window as large as the cache accepted")
	}
	c := newTestCache(t, 1, 8)
	if err := c.Reserve(0, 0, 9); !errors.Is(err, ErrFull) {
		t.Errorf("no window, 9 positions in 8: %v, want ErrFull", err)
	}
}

// TestSlidingWindowDraft writes a windowed cache the way a draft model
// does: one position at a time up to 2k ahead of the committed tokens
// (drafting and pre-drafting), then cut back to the accepted prefix. With
// Rollback = 2k+2 every position a fed token can see is still stored after
// every cut; with Rollback = 0 a cut reaches before the stored range and
// Reserve reports it (ErrBadLength), rather than letting attention read
// overwritten positions.
func TestSlidingWindowDraft(t *testing.T) {
	const window, k = 5, 3
	for _, rollback := range []int{2*k + 2, 0} {
		c, err := New(Config{Layers: 1, KVHeads: 1, HeadDim: 1, Seqs: 1, MaxPos: window + 2*k + 2 + 4, Window: window, Rollback: rollback, F32: true})
		if err != nil {
			t.Fatal(err)
		}
		feed := func(pos int) error {
			if err := c.Reserve(0, pos, pos+1); err != nil {
				return err
			}
			kk, _ := c.Head32(0, 0, 0)
			for p := c.Visible(pos); p < pos; p++ {
				if got := kk[c.Index(0, p)]; got != float32(p) {
					t.Fatalf("rollback %d: feeding %d: position %d holds %v", rollback, pos, p, got)
				}
			}
			kk[c.Index(0, pos)] = float32(pos)
			return c.Commit(0, pos+1)
		}
		n, failed := 1, false // committed tokens
		for step := 0; n < 120 && !failed; step++ {
			for p := c.Len(0); p < n-1+2*k; p++ { // draft and pre-draft
				if err := feed(p); err != nil {
					if rollback > 0 || !errors.Is(err, ErrBadLength) {
						t.Fatalf("rollback %d, step %d, position %d: %v", rollback, step, p, err)
					}
					failed = true
					break
				}
			}
			n += 1 + step%(k+1) // accepted draft tokens and the correction
			if err := c.Rollback(0, min(c.Len(0), n-1)); err != nil {
				t.Fatal(err)
			}
		}
		if failed != (rollback == 0) {
			t.Errorf("rollback %d: a cut past the stored range reported: %v", rollback, failed)
		}
	}
}
