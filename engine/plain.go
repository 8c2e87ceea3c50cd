package engine

import (
	"context"
	"time"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/backend/llamacpp"
	"github.com/specd-dev/specd/model"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/stages"
	"github.com/specd-dev/specd/tensor"
)

// PlainResult is what PlainDecode decoded and how fast.
type PlainResult struct {
	Tokens []int32
	TPS    float64 // tokens per second over the decode part (prefill excluded)
}

// PlainDecode is the plain loop on the target (Plain): the prompt in one
// pass, then n tokens sampled with p, one per forward pass (no stop at end
// of generation), on threads threads.
func (e *Engine) PlainDecode(ctx context.Context, prompt []int32, n, threads int, p sample.Params) (PlainResult, error) {
	out := make([]int32, 0, n)
	st, err := e.Plain(ctx, prompt, n, len(prompt)+n+1, len(prompt), threads, p, func(t int32) (bool, error) {
		out = append(out, t)
		return true, nil
	})
	if err != nil {
		return PlainResult{}, err
	}
	return PlainResult{out, float64(n) / st.Wall.Seconds()}, nil
}

// Plain decodes on the target alone with the plain loop, stages.Plain:
// up to n tokens sampled with p (a seeded sampler.New) and handed to emit,
// on a one-sequence backend of its own for maxPos positions, fed at most
// batch prompt tokens a pass, on threads threads of a pool it closes
// before returning (on llama.cpp: a context it frees, on TargetThreads or
// threads threads).
func (e *Engine) Plain(ctx context.Context, prompt []int32, n, maxPos, batch, threads int, p sample.Params, emit func(int32) (bool, error)) (stages.PlainStats, error) {
	if len(prompt) == 0 {
		return stages.PlainStats{}, ErrEmptyPrompt
	}
	be, done, err := e.scratchBackend(e.Target, maxPos, max(1, min(batch, len(prompt))), threads)
	if err != nil {
		return stages.PlainStats{}, err
	}
	defer done()
	smp := sample.New(p)
	pick := func(lg []float32) int32 { return int32(smp.Sample(lg)) }
	return stages.Plain(ctx, be, 0, prompt, n, maxPos, pick, emit)
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
