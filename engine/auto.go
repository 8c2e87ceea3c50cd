package engine

import "github.com/specd-dev/specd/draft"

// costTables are the engine's auto-policy cost tables (Options.Auto), by
// the target backend's shape: verify threads, sequences, batch.
type costTables map[[3]int]*draft.Costs

// autoCosts returns the cost table of a target backend of seqs sequences
// and maxBatch tokens on o's verify threads: one per shape for the
// engine's life, so that pipelines built one after another (specd bench's
// runs, a server's) share what calibration and their passes measured. The
// first pipeline to run on a new table calibrates it.
func (e *Engine) autoCosts(o Options, seqs, maxBatch int) *draft.Costs {
	key := [3]int{o.verifyThreads(), seqs, maxBatch}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.costs == nil {
		e.costs = costTables{}
	}
	c := e.costs[key]
	if c == nil {
		c = draft.NewCosts(maxBatch, seqs)
		e.costs[key] = c
	}
	return c
}
