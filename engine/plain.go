package engine

import (
	"context"
	"time"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/backend/llamacpp"
	"github.com/specd-dev/specd/model"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/tensor"
)

// PlainResult is what PlainDecode decoded and how fast.
type PlainResult struct {
	Tokens []int32
	TPS    float64 // tokens per second over the decode part (prefill excluded)
}

// PlainDecode is the plain loop of specd generate on the target: prefill
// the prompt in one pass, then one token per forward pass, n tokens
// sampled with p (no stop at end of generation), on threads threads of a
// pool it closes before returning (on llama.cpp: a context it frees, on
// TargetThreads or threads threads).
func (e *Engine) PlainDecode(ctx context.Context, prompt []int32, n, threads int, p sample.Params) (PlainResult, error) {
	if len(prompt) == 0 {
		return PlainResult{}, ErrEmptyPrompt
	}
	m := e.Target
	be, done, err := e.scratchBackend(m, len(prompt)+n+1, len(prompt), threads)
	if err != nil {
		return PlainResult{}, err
	}
	defer done()
	lg := make([]float32, len(prompt)*m.Config.Vocab)
	var b backend.Batch
	for i, t := range prompt {
		b.Add(t, int32(i), 0, i == len(prompt)-1)
	}
	if err := be.Forward(&b, lg); err != nil {
		return PlainResult{}, err
	}
	smp := sample.New(p)
	var out []int32
	start := time.Now()
	for len(out) < n {
		if err := ctx.Err(); err != nil {
			return PlainResult{}, err
		}
		next := int32(smp.Sample(lg[:m.Config.Vocab]))
		out = append(out, next)
		if len(out) == n {
			break
		}
		b.Reset()
		b.Add(next, int32(len(prompt)+len(out)-1), 0, true)
		if err := be.Forward(&b, lg); err != nil {
			return PlainResult{}, err
		}
	}
	return PlainResult{out, float64(n) / time.Since(start).Seconds()}, nil
}

// ForwardCost is the shortest of 16 timed forward passes of m over n
// tokens (logits for all) at positions near pos, on threads threads (m the
// target on llama.cpp: there, on TargetThreads or threads): the least
// disturbed by other work on the machine. It costs about pos/n+18 passes.
func (e *Engine) ForwardCost(m *model.Model, threads, n, pos int) (time.Duration, error) {
	maxPos := min(pos+n+1, m.Config.CtxLen)
	be, done, err := e.scratchBackend(m, maxPos, n, threads)
	if err != nil {
		return 0, err
	}
	defer done()
	start := max(0, min(pos, maxPos-n)-1)
	// Fill the cache up to start so attention spans a realistic length.
	var b backend.Batch
	lg := make([]float32, n*m.Config.Vocab)
	for p := 0; p < start; p += n {
		b.Reset()
		for i := p; i < min(p+n, start); i++ {
			b.Add(1, int32(i), 0, false)
		}
		if err := be.Forward(&b, lg); err != nil {
			return 0, err
		}
	}
	const reps = 16
	best := time.Duration(-1)
	for r := 0; r < reps+2; r++ {
		if err := be.Rollback(0, start); err != nil {
			return 0, err
		}
		b.Reset()
		for i := 0; i < n; i++ {
			b.Add(int32(1+i), int32(start+i), 0, true)
		}
		t0 := time.Now()
		if err := be.Forward(&b, lg); err != nil {
			return 0, err
		}
		if d := time.Since(t0); r >= 2 && (best < 0 || d < best) { // two warm-up passes
			best = d
		}
	}
	return best, nil
}

// scratchBackend is a one-sequence backend of m for maxPos positions and
// batches of maxBatch, and the function that releases it: on llama.cpp
// when m is the target and the target runs there, else on a pool of
// threads threads of its own.
func (e *Engine) scratchBackend(m *model.Model, maxPos, maxBatch, threads int) (backend.Backend, func(), error) {
	if m == e.Target && e.Accel != nil {
		be, err := e.Accel.NewBackend(llamacpp.ContextParams{
			Seqs: 1, MaxPos: maxPos, MaxBatch: maxBatch, Threads: e.opts.targetThreads(threads), F32Cache: e.opts.F32Cache,
		})
		if err != nil {
			return nil, nil, err
		}
		return be, func() { be.Close() }, nil
	}
	pool := tensor.NewPool(threads)
	be, err := e.backend(m, 1, maxPos, maxBatch, 0, pool)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return be, pool.Close, nil
}
