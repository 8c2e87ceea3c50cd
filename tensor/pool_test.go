package tensor

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// countTask claims items one at a time and records, per item, the thread
// that computed it; it flags concurrent runs of one thread number and
// thread numbers outside [0, limit).
type countTask struct {
	items   int
	limit   int
	next    atomic.Int64
	owner   []atomic.Int32 // thread+1 per item
	running []atomic.Int32 // per thread number: calls in progress
	bad     atomic.Value   // first error
}

func (c *countTask) Run(thread int) {
	if thread < 0 || thread >= c.limit {
		c.bad.CompareAndSwap(nil, fmt.Sprintf("thread %d outside [0, %d)", thread, c.limit))
		return
	}
	if c.running[thread].Add(1) != 1 {
		c.bad.CompareAndSwap(nil, fmt.Sprintf("thread %d runs twice at once", thread))
	}
	defer c.running[thread].Add(-1)
	for {
		i := int(c.next.Add(1) - 1)
		if i >= c.items {
			return
		}
		if !c.owner[i].CompareAndSwap(0, int32(thread+1)) {
			c.bad.CompareAndSwap(nil, fmt.Sprintf("item %d computed twice", i))
		}
	}
}

// TestPoolParallel runs many Parallel jobs of varying width, interleaved
// with MatMuls, and checks that every item is computed exactly once by a
// permitted thread, and that the calls return within a bounded time.
func TestPoolParallel(t *testing.T) {
	for _, threads := range []int{1, 2, 4} {
		p := NewPool(threads)
		done := make(chan string, 1)
		go func() {
			out := make([]float32, 16)
			m := &Matrix{Type: F32, Rows: 16, Cols: 32, Data: make([]byte, 16*32*4)}
			x := make([]float32, 32)
			for it := range 500 {
				c := &countTask{items: 1 + it%37, limit: 1 + it%4}
				c.owner = make([]atomic.Int32, c.items)
				c.running = make([]atomic.Int32, 4)
				p.Parallel(c, c.limit)
				if b := c.bad.Load(); b != nil {
					done <- fmt.Sprintf("iteration %d: %v", it, b)
					return
				}
				for i := range c.owner {
					if c.owner[i].Load() == 0 {
						done <- fmt.Sprintf("iteration %d: item %d not computed", it, i)
						return
					}
				}
				if it%100 == 99 {
					// Idle past spinTime so that the next job has
					// to wake parked helpers.
					time.Sleep(2 * spinTime)
				}
				p.MatMul(out, m, x, 1)
			}
			done <- ""
		}()
		select {
		case msg := <-done:
			if msg != "" {
				t.Errorf("threads=%d: %s", threads, msg)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("threads=%d: Parallel did not finish within 30 s", threads)
		}
		p.Close()
	}
}
