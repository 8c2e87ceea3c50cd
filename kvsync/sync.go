package kvsync

import (
	"context"
	"errors"
	"sync"
)

// Draft↔target consistency.
//
// A sequence has committed tokens t[0..n). Between steps the target cache
// of its slot holds exactly the first n-1 of them: the last committed token
// is fed, at position n-1, as the first entry of the next verification
// block [t[n-1], d1..dk], which writes positions n-1..n+k-1. If a of the k
// draft tokens are accepted, one more token (the correction, or the bonus
// when a == k) is committed, so n' = n+a+1, and the target keeps positions
// [0, n+a) = [0, n'-1): everything it wrote for t[n-1], d1..da, nothing for
// the rejected d(a+1).. (O(1) rollback).
//
// The draft cache must never hold a position whose token is not committed.
// While drafting it fed t[n-1], d1..d(k-1) (positions up to n+k-2), so after
// the verification it keeps min(its length, n'-1) positions, the accepted
// prefix, and its next draft first feeds the committed tokens it lacks
// (the correction token; or dk and the bonus token after a full acceptance).

// ErrAhead reports a cache holding positions past the committed tokens.
var ErrAhead = errors.New("kvsync: cache ahead of committed tokens")

// Sync applies the consistency rule to slot s after a verification that
// left committed tokens: the target keeps committed-1 positions (it must
// have written at least that many) and the draft, if not nil, is cut back
// to at most committed-1.
func Sync(target, draft *Cache, s, committed int) error {
	if committed < 1 {
		return &SeqError{Op: "sync", Seq: s, Len: -1, Want: committed - 1, Err: ErrBadLength}
	}
	keep := committed - 1
	if target != nil {
		if s < 0 || s >= target.cfg.Seqs {
			return &SeqError{Op: "sync", Seq: s, Len: -1, Want: keep, Err: ErrBadSeq}
		}
		if target.lens[s] < keep {
			// The target never wrote a position that is now committed.
			return &SeqError{Op: "sync", Seq: s, Len: target.lens[s], Want: keep, Err: ErrBadLength}
		}
		target.lens[s] = keep
	}
	if draft != nil {
		if s < 0 || s >= draft.cfg.Seqs {
			return &SeqError{Op: "sync", Seq: s, Len: -1, Want: keep, Err: ErrBadSeq}
		}
		if draft.lens[s] > keep {
			draft.lens[s] = keep
		}
	}
	return nil
}

// Check reports ErrAhead if slot s of c holds more than committed-1
// positions, the invariant between steps.
func Check(c *Cache, s, committed int) error {
	if c.Len(s) > committed-1 {
		return &SeqError{Op: "check", Seq: s, Len: c.Len(s), Want: committed - 1, Err: ErrAhead}
	}
	return nil
}

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
