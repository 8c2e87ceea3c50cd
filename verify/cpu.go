package verify

import (
	"github.com/specd-dev/specd/kvsync"
	"github.com/specd-dev/specd/model"
)

// CPU is the pure-Go Backend: a model.State (with its own tensor.Pool, so
// its own thread budget) over a kvsync.Cache. It is also the draft model's
// backend.
type CPU struct {
	st *model.State
	kv *kvsync.Cache
}

// NewCPU returns a backend running st over kv.
func NewCPU(st *model.State, kv *kvsync.Cache) *CPU { return &CPU{st: st, kv: kv} }

// Vocab implements Backend.
func (c *CPU) Vocab() int { return c.st.Model().Config.Vocab }

// MaxBatch implements Backend.
func (c *CPU) MaxBatch() int { return c.st.MaxBatch() }

// Forward implements Backend. It does not allocate.
func (c *CPU) Forward(b *Batch, logits []float32) error {
	return c.st.Forward(b, c.kv, logits)
}

// Len implements Backend.
func (c *CPU) Len(seq int) int { return c.kv.Len(seq) }

// Rollback implements Backend in O(1).
func (c *CPU) Rollback(seq, n int) error { return c.kv.Rollback(seq, n) }

// Cache returns the backend's KV cache.
func (c *CPU) Cache() *kvsync.Cache { return c.kv }
