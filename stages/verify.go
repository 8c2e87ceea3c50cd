package stages

import (
	"context"
	"fmt"
	"time"

	"github.com/specd-dev/specd/graph"
	"github.com/specd-dev/specd/verify"
)

// verifyStage takes every drafted sequence that is ready (up to the
// target's batch size) and verifies them in one pass. With
// Config.VerifyBatch, or while no sequence in flight drafts, it waits for
// more while the draft stage (a graph.Loop) has that many sequences in
// flight, re-reading its Live, and the count of those that draft, when
// the stage wakes it (a sequence left, or began to draft).
func (p *Pipeline) verifyStage(ctx context.Context, st *graph.Stage, in, out *graph.Pipe[*seq], drafts *graph.Stage) error {
	maxBatch := p.cfg.Target.MaxBatch()
	v := verify.New(p.cfg.Target)
	batch := make([]*seq, 0, p.cfg.Slots)
	blocks := make([]*verify.Block, 0, p.cfg.Slots)
	var pending *seq
	closed := false
	for !closed {
		batch, blocks = batch[:0], blocks[:0]
		tokens := 0
		for {
			if pending == nil {
				if s, ok, c := in.TryRecv(); ok {
					pending = s
				} else if c {
					closed = true
					break
				}
			}
			if pending != nil {
				if pending.done {
					// Nothing to verify: pass it on for its final chunk.
					s := pending
					pending = nil
					if err := out.Send(ctx, s); err != nil {
						return err
					}
					continue
				}
				need := len(pending.block.Draft) + 1
				if tokens+need > maxBatch {
					break // full: pending opens the next batch
				}
				batch = append(batch, pending)
				blocks = append(blocks, &pending.block)
				tokens += need
				pending = nil
				continue
			}
			// Nothing queued: verify now, or wait for more sequences
			// (Config.VerifyBatch) as long as enough are in flight. While
			// no sequence drafts (all decode plainly: the auto policy's
			// k = 0), there is nothing for the pass to overlap, and it
			// waits for every one in flight, so that they share one pass
			// instead of taking turns.
			want := drafts.Live()
			if p.drafting.Load() > 0 {
				want = min(p.cfg.VerifyBatch, want)
			}
			if len(batch) >= max(want, 1) || tokens >= maxBatch {
				break
			}
			s, ok, woke, err := in.RecvOr(ctx, drafts.Left())
			if err != nil {
				return err
			}
			if !ok && !woke {
				closed = true
				break
			}
			pending = s
		}
		if len(batch) == 0 {
			continue
		}
		var err error
		var busy, cost time.Duration
		p.serialize(func() {
			p.device.Lock()
			t0 := time.Now()
			var c0 time.Duration
			if p.costs != nil && p.cfg.Clock != nil {
				c0 = p.targetNow()
			}
			p.overlap.enter(1)
			err = v.Verify(blocks)
			p.overlap.leave(1)
			busy = time.Since(t0)
			cost = busy
			if p.costs != nil && p.cfg.Clock != nil {
				cost = p.targetNow() - c0
			}
			p.device.Unlock()
		})
		st.AddBusy(busy)
		if err == nil && p.costs != nil {
			p.observePass(blocks, tokens, cost, busy)
		}
		if err != nil {
			// The pass failed: its sequences end with the error, the
			// others go on (their caches are untouched by it).
			for _, s := range batch {
				s.fail(fmt.Errorf("stages: verify: %w", err))
			}
		} else {
			p.metrics.batch(len(batch), tokens)
		}
		for _, s := range batch {
			if err := out.Send(ctx, s); err != nil {
				return err
			}
		}
	}
	return nil
}
