// Package cpu is the pure-Go backend.Backend: a model.State (with its own
// tensor.Pool, so its own thread budget) over a kvsync.Cache. It runs the
// target on a development machine and the draft model everywhere.
package cpu

import (
	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/kvsync"
	"github.com/specd-dev/specd/model"
)

// Backend runs a model on the CPU.
type Backend struct {
	st *model.State
	kv *kvsync.Cache
}

// New returns a backend running st over kv.
func New(st *model.State, kv *kvsync.Cache) *Backend { return &Backend{st: st, kv: kv} }

// Vocab implements backend.Backend.
func (c *Backend) Vocab() int { return c.st.Model().Config.Vocab }

// MaxBatch implements backend.Backend.
func (c *Backend) MaxBatch() int { return c.st.MaxBatch() }

// Forward implements backend.Backend. It does not allocate.
func (c *Backend) Forward(b *backend.Batch, logits []float32) error {
	return c.st.Forward(b, c.kv, logits)
}

// Len implements backend.Backend.
func (c *Backend) Len(seq int) int { return c.kv.Len(seq) }

// Rollback implements backend.Backend in O(1).
func (c *Backend) Rollback(seq, n int) error { return c.kv.Rollback(seq, n) }

// Cache returns the backend's KV cache.
func (c *Backend) Cache() *kvsync.Cache { return c.kv }
