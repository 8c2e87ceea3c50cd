// Package kvsync owns the key/value caches of the target and draft models:
// one preallocated arena per model, a length per sequence slot, and O(1)
// commit and rollback by changing that length.
//
// Layout. For layer l, sequence slot s and KV head h the keys (and, alike,
// the values) of positions 0..MaxPos-1 are contiguous, position-major,
// HeadDim elements each, so attention for one head streams one block of
// memory. Storage is F16 (default) or F32.
package kvsync

import (
	"errors"
	"fmt"
)

// Errors returned by Cache methods.
var (
	ErrFull      = errors.New("kvsync: cache full")
	ErrBadSeq    = errors.New("kvsync: sequence slot out of range")
	ErrBadLength = errors.New("kvsync: length out of range")
)

// Config sizes a Cache.
type Config struct {
	Layers  int
	KVHeads int
	HeadDim int
	Seqs    int  // number of sequence slots
	MaxPos  int  // positions per slot (context length)
	F32     bool // store F32 instead of F16
}

// Cache is the KV arena of one model. It is not safe for concurrent use
// except that distinct sequence slots may be written by one forward pass.
type Cache struct {
	cfg  Config
	k16  []uint16
	v16  []uint16
	k32  []float32
	v32  []float32
	lens []int
}

// New allocates the whole arena up front; no method allocates afterwards.
func New(cfg Config) (*Cache, error) {
	if cfg.Layers <= 0 || cfg.KVHeads <= 0 || cfg.HeadDim <= 0 || cfg.Seqs <= 0 || cfg.MaxPos <= 0 {
		return nil, fmt.Errorf("kvsync: invalid config %+v", cfg)
	}
	n := cfg.Layers * cfg.Seqs * cfg.KVHeads * cfg.MaxPos * cfg.HeadDim
	if n/cfg.Layers/cfg.Seqs/cfg.KVHeads/cfg.MaxPos != cfg.HeadDim || n > 1<<34 {
		return nil, fmt.Errorf("kvsync: cache of %d elements is too large", n)
	}
	c := &Cache{cfg: cfg, lens: make([]int, cfg.Seqs)}
	if cfg.F32 {
		c.k32, c.v32 = make([]float32, n), make([]float32, n)
	} else {
		c.k16, c.v16 = make([]uint16, n), make([]uint16, n)
	}
	return c, nil
}

// Config returns the configuration the cache was made with.
func (c *Cache) Config() Config { return c.cfg }

// IsF32 reports whether entries are stored as F32 (else F16).
func (c *Cache) IsF32() bool { return c.cfg.F32 }

// Len is the number of positions held for sequence slot s.
func (c *Cache) Len(s int) int { return c.lens[s] }

// SetLen sets the number of valid positions of slot s: shrinking is a
// rollback (O(1), no copying); growing marks positions written by a forward
// pass as committed. It fails for n outside [0, MaxPos].
func (c *Cache) SetLen(s, n int) error {
	if s < 0 || s >= c.cfg.Seqs {
		return ErrBadSeq
	}
	if n < 0 || n > c.cfg.MaxPos {
		return ErrBadLength
	}
	c.lens[s] = n
	return nil
}

// offset is the element index of (layer l, slot s, head h, position 0).
func (c *Cache) offset(l, s, h int) int {
	return ((l*c.cfg.Seqs+s)*c.cfg.KVHeads + h) * c.cfg.MaxPos * c.cfg.HeadDim
}

// Head16 returns the F16 keys and values of (layer l, slot s, KV head h):
// MaxPos*HeadDim elements each, position-major. Only for F16 caches.
func (c *Cache) Head16(l, s, h int) (k, v []uint16) {
	o := c.offset(l, s, h)
	n := c.cfg.MaxPos * c.cfg.HeadDim
	return c.k16[o : o+n : o+n], c.v16[o : o+n : o+n]
}

// Head32 is Head16 for F32 caches.
func (c *Cache) Head32(l, s, h int) (k, v []float32) {
	o := c.offset(l, s, h)
	n := c.cfg.MaxPos * c.cfg.HeadDim
	return c.k32[o : o+n : o+n], c.v32[o : o+n : o+n]
}

// Grow returns ErrFull if n more positions do not fit after Len(s):
// callers check it before a forward pass that extends slot s by n.
func (c *Cache) Grow(s, n int) error {
	if s < 0 || s >= c.cfg.Seqs {
		return &SeqError{Op: "grow", Seq: s, Len: -1, Want: n, Err: ErrBadSeq}
	}
	if n < 0 || c.lens[s]+n > c.cfg.MaxPos {
		return &SeqError{Op: "grow", Seq: s, Len: c.lens[s], Want: c.lens[s] + n, Err: ErrFull}
	}
	return nil
}

// Commit marks positions [Len(s), n) of slot s, already written by a
// forward pass, as committed. It fails if n is below Len(s) (that is a
// Rollback) or beyond MaxPos (ErrFull).
func (c *Cache) Commit(s, n int) error {
	if s < 0 || s >= c.cfg.Seqs {
		return &SeqError{Op: "commit", Seq: s, Len: -1, Want: n, Err: ErrBadSeq}
	}
	if n > c.cfg.MaxPos {
		return &SeqError{Op: "commit", Seq: s, Len: c.lens[s], Want: n, Err: ErrFull}
	}
	if n < c.lens[s] {
		return &SeqError{Op: "commit", Seq: s, Len: c.lens[s], Want: n, Err: ErrBadLength}
	}
	c.lens[s] = n
	return nil
}

// Rollback cuts slot s back to its first n positions in O(1): only the
// length changes, the entries past it are left to be overwritten. It fails
// if n is negative or beyond Len(s).
func (c *Cache) Rollback(s, n int) error {
	if s < 0 || s >= c.cfg.Seqs {
		return &SeqError{Op: "rollback", Seq: s, Len: -1, Want: n, Err: ErrBadSeq}
	}
	if n < 0 || n > c.lens[s] {
		return &SeqError{Op: "rollback", Seq: s, Len: c.lens[s], Want: n, Err: ErrBadLength}
	}
	c.lens[s] = n
	return nil
}

// Reset empties slot s for a new sequence.
func (c *Cache) Reset(s int) error { return c.Rollback(s, 0) }

// SeqError reports a failed length change of one sequence slot.
type SeqError struct {
	Op   string // "grow", "commit", "rollback", "sync"
	Seq  int
	Len  int // length before the operation; -1 if the slot is invalid
	Want int // length asked for
	Err  error
}

func (e *SeqError) Error() string {
	return fmt.Sprintf("%v: %s slot %d from %d to %d", e.Err, e.Op, e.Seq, e.Len, e.Want)
}

func (e *SeqError) Unwrap() error { return e.Err }
