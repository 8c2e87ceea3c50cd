package kvsync

import (
	"context"
	"errors"
	"sync"
)

// Slots hands out sequence slot numbers 0..n-1, one owner at a time.
// It is safe for concurrent use.
type Slots struct {
	mu   sync.Mutex
	free []int
	sig  chan struct{} // capacity 1: a slot was released
}

// NewSlots returns an allocator of n slots.
func NewSlots(n int) *Slots {
	s := &Slots{free: make([]int, n), sig: make(chan struct{}, 1)}
	for i := range s.free {
		s.free[i] = n - 1 - i // hand out 0 first
	}
	return s
}

// ErrNoSlot is returned by TryAcquire when every slot is taken.
var ErrNoSlot = errors.New("kvsync: no free sequence slot")

// TryAcquire takes a free slot without waiting.
func (s *Slots) TryAcquire() (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.free) == 0 {
		return -1, ErrNoSlot
	}
	n := s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	if len(s.free) > 0 {
		// Pass the wake-up on: another waiter may take the next slot.
		select {
		case s.sig <- struct{}{}:
		default:
		}
	}
	return n, nil
}

// Acquire waits for a free slot or for ctx to end.
func (s *Slots) Acquire(ctx context.Context) (int, error) {
	for {
		if err := ctx.Err(); err != nil {
			return -1, err
		}
		if n, err := s.TryAcquire(); err == nil {
			return n, nil
		}
		select {
		case <-s.sig:
		case <-ctx.Done():
			return -1, ctx.Err()
		}
	}
}

// Release returns slot n to the free list.
func (s *Slots) Release(n int) {
	s.mu.Lock()
	s.free = append(s.free, n)
	s.mu.Unlock()
	select {
	case s.sig <- struct{}{}:
	default:
	}
}

// Free is the number of free slots.
func (s *Slots) Free() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.free)
}
