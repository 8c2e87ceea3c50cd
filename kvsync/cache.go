// Package kvsync owns the key/value caches of the target and draft models:
// one preallocated arena per model, a length per sequence slot, and O(1)
// commit and rollback by changing that length. Which lengths the two
// caches of a sequence keep between steps (the KV rule) is the pipeline's
// to keep: package stages states it, verify and draft apply it.
//
// Layout. For layer l, sequence slot s and KV head h the keys (and, alike,
// the values) of positions 0..MaxPos-1 are contiguous, position-major,
// HeadDim elements each, so attention for one head streams one block of
// memory. Storage is F16 (default) or F32.
//
// Sliding window. With Config.Window = W > 0 a token at position p attends
// to positions [p-W+1, p] only, and a slot's storage of MaxPos positions
// holds a moving range of them: position p lives at index p - Base(s).
// Reserve, called before a forward pass writes new positions, slides the
// range forward when it would overflow, copying the W-1 positions the
// pass's tokens can still see to the front (amortised O(W / (MaxPos-W))
// copies per token). Rollback stays O(1): the pass's positions are never
// needed by a token before them, and the copy keeps every position the
// first token of the pass can see, so cutting back to any length reached
// since then leaves the window of the next token intact; Config.Rollback
// extends that to lengths up to Rollback positions before the pass (a draft
// cache, written ahead of the committed tokens). A sequence is then bounded
// by the model's context, not by MaxPos.
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
	MaxPos  int  // positions stored per slot (the context length without Window)
	F32     bool // store F32 instead of F16

	// Window, if > 0, limits attention to the last Window positions and
	// lets a slot's positions run past MaxPos (see the package comment).
	// It must leave room for a pass: Window < MaxPos.
	Window int

	// Rollback, with Window, is how far back a sequence may be cut after
	// positions were written past its last slide point: a slide keeps that
	// many extra positions before the window. A draft cache written token
	// by token k (and, pre-drafting, 2k) positions ahead of the committed
	// tokens needs 2k+2; a target cache fed one verification block at a
	// time from its committed length needs none.
	Rollback int
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
	base []int // per slot, the position stored at index 0 (0 without Window)
}

// New allocates the whole arena up front; no method allocates afterwards.
func New(cfg Config) (*Cache, error) {
	if cfg.Layers <= 0 || cfg.KVHeads <= 0 || cfg.HeadDim <= 0 || cfg.Seqs <= 0 || cfg.MaxPos <= 0 {
		return nil, fmt.Errorf("kvsync: invalid config %+v", cfg)
	}
	if cfg.Window < 0 || cfg.Rollback < 0 || (cfg.Window > 0 && cfg.Window+cfg.Rollback >= cfg.MaxPos) {
		return nil, fmt.Errorf("kvsync: window of %d positions and rollback of %d need a cache of more than %d positions, has %d",
			cfg.Window, cfg.Rollback, cfg.Window+cfg.Rollback, cfg.MaxPos)
	}
	n := cfg.Layers * cfg.Seqs * cfg.KVHeads * cfg.MaxPos * cfg.HeadDim
	if n/cfg.Layers/cfg.Seqs/cfg.KVHeads/cfg.MaxPos != cfg.HeadDim || n > 1<<34 {
		return nil, fmt.Errorf("kvsync: cache of %d elements is too large", n)
	}
	c := &Cache{cfg: cfg, lens: make([]int, cfg.Seqs), base: make([]int, cfg.Seqs)}
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
// pass as committed. It fails for n outside [0, MaxPos] (with a window:
// outside the stored range).
func (c *Cache) SetLen(s, n int) error {
	if s < 0 || s >= c.cfg.Seqs {
		return ErrBadSeq
	}
	if n == 0 {
		c.lens[s], c.base[s] = 0, 0
		return nil
	}
	if n < c.base[s] || n-c.base[s] > c.cfg.MaxPos {
		return ErrBadLength
	}
	c.lens[s] = n
	return nil
}

// Base is the position stored at index 0 of slot s: 0 until a sliding
// window has moved.
func (c *Cache) Base(s int) int { return c.base[s] }

// Index is the storage index of position pos of slot s (in HeadDim units
// of Head16 and Head32), pos - Base(s).
func (c *Cache) Index(s, pos int) int { return pos - c.base[s] }

// Visible is the first position a token at pos attends to: pos-Window+1
// with a window, else 0.
func (c *Cache) Visible(pos int) int {
	if c.cfg.Window > 0 {
		return max(0, pos-c.cfg.Window+1)
	}
	return 0
}

// Reserve makes room in slot s for a forward pass whose tokens sit at
// positions [from, end): from must not exceed Len(s). Without a window it
// only checks that end fits (ErrFull). With one it slides the stored range
// so that it starts at Visible(from-Rollback), if it would otherwise
// overflow, copying the positions kept to the front;
// ErrFull if the pass needs more than MaxPos positions even so,
// ErrBadLength if Visible(from) is before the stored range (a rollback
// further back than the window allows).
func (c *Cache) Reserve(s, from, end int) error {
	if s < 0 || s >= c.cfg.Seqs {
		return &SeqError{Op: "reserve", Seq: s, Len: -1, Want: end, Err: ErrBadSeq}
	}
	if from < 0 || from > c.lens[s] || end < from {
		return &SeqError{Op: "reserve", Seq: s, Len: c.lens[s], Want: end, Err: ErrBadLength}
	}
	b := c.base[s]
	top := max(end, c.lens[s]) // the stored range must reach here
	if top-b <= c.cfg.MaxPos {
		if c.Visible(from) < b {
			return &SeqError{Op: "reserve", Seq: s, Len: c.lens[s], Want: end, Err: ErrBadLength}
		}
		return nil
	}
	nb := c.Visible(from - c.cfg.Rollback)
	if c.cfg.Window == 0 || top-nb > c.cfg.MaxPos {
		return &SeqError{Op: "reserve", Seq: s, Len: c.lens[s], Want: end, Err: ErrFull}
	}
	if nb < b {
		return &SeqError{Op: "reserve", Seq: s, Len: c.lens[s], Want: end, Err: ErrBadLength}
	}
	// Keep positions [nb, Len): the ones the pass's tokens can see (and
	// those of any length down to from-Rollback), and any the pass
	// overwrites only in part.
	hd := c.cfg.HeadDim
	lo, hi := (nb-b)*hd, (c.lens[s]-b)*hd
	for l := range c.cfg.Layers {
		for h := range c.cfg.KVHeads {
			if c.cfg.F32 {
				k, v := c.Head32(l, s, h)
				copy(k, k[lo:hi])
				copy(v, v[lo:hi])
			} else {
				k, v := c.Head16(l, s, h)
				copy(k, k[lo:hi])
				copy(v, v[lo:hi])
			}
		}
	}
	c.base[s] = nb
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
	if n < 0 {
		return &SeqError{Op: "grow", Seq: s, Len: c.lens[s], Want: c.lens[s] + n, Err: ErrBadLength}
	}
	if err := c.Reserve(s, c.lens[s], c.lens[s]+n); err != nil {
		e := err.(*SeqError)
		e.Op = "grow"
		return e
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
	if n-c.base[s] > c.cfg.MaxPos {
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
	if n == 0 {
		c.base[s] = 0 // an empty slot starts over (a new sequence)
	}
	return nil
}

// Reset empties slot s for a new sequence.
func (c *Cache) Reset(s int) error { return c.Rollback(s, 0) }

// SeqError reports a failed length change of one sequence slot.
type SeqError struct {
	Op   string // "grow", "reserve", "commit", "rollback", "sync"
	Seq  int
	Len  int // length before the operation; -1 if the slot is invalid
	Want int // length asked for
	Err  error
}

func (e *SeqError) Error() string {
	return fmt.Sprintf("%v: %s slot %d from %d to %d", e.Err, e.Op, e.Seq, e.Len, e.Want)
}

func (e *SeqError) Unwrap() error { return e.Err }
