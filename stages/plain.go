package stages

import (
	"context"
	"fmt"
	"time"

	"github.com/specd-dev/specd/backend"
)

// PlainStats is what Plain decoded and how long it took.
type PlainStats struct {
	Tokens  int           // tokens given to emit
	Passes  int           // one-token forward passes after the prompt
	Full    bool          // it stopped because the next pass would need position maxPos
	Prefill time.Duration // the prompt's passes
	Decode  time.Duration // the one-token passes alone
	Wall    time.Duration // from the end of the prompt to the return: passes, pick and emit
}

// Plain is the plain decoding loop, one token per forward pass of one
// model: the reference the pipeline is held to (greedy, the same tokens;
// with k = 0, nearly the same speed). On slot of be, emptied first, it
// feeds prompt in passes of up to be.MaxBatch tokens (logits for the last
// only), then repeats: pick chooses a token from the Vocab logits, emit
// receives it and says whether to go on, and a pass feeds it. It stops
// after n tokens (without a pass for the last), when emit says so, or
// when the next pass would write position maxPos (maxPos ≤ 0: no limit
// but be's), with Full set. ctx is checked before every pass.
func Plain(ctx context.Context, be backend.Backend, slot int, prompt []int32, n, maxPos int, pick func(logits []float32) int32, emit func(tok int32) (bool, error)) (st PlainStats, err error) {
	if len(prompt) == 0 {
		return st, fmt.Errorf("%w: empty prompt", ErrRequest)
	}
	if maxPos > 0 && len(prompt) > maxPos {
		return st, fmt.Errorf("%w: prompt of %d tokens does not fit %d positions", ErrRequest, len(prompt), maxPos)
	}
	if err = be.Rollback(slot, 0); err != nil {
		return st, err
	}
	v, s := be.Vocab(), int32(slot)
	logits := make([]float32, v)
	b := backend.NewBatch(min(len(prompt), be.MaxBatch()))
	start := time.Now()
	for i := 0; i < len(prompt); i += be.MaxBatch() {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		b.Reset()
		end := min(i+be.MaxBatch(), len(prompt))
		for j := i; j < end; j++ {
			b.Add(prompt[j], int32(j), s, j == len(prompt)-1)
		}
		if err := be.Forward(&b, logits); err != nil {
			return st, err
		}
	}
	t0 := time.Now()
	st.Prefill = t0.Sub(start)
	defer func() { st.Wall = time.Since(t0) }()
	for pos := len(prompt); st.Tokens < n; pos++ {
		next := pick(logits)
		st.Tokens++
		var goOn bool
		if goOn, err = emit(next); err != nil || !goOn || st.Tokens == n {
			return st, err
		}
		if maxPos > 0 && pos >= maxPos {
			st.Full = true
			return st, nil
		}
		if err := ctx.Err(); err != nil {
			return st, err
		}
		tp := time.Now()
		b.Reset()
		b.Add(next, int32(pos), s, true)
		if err := be.Forward(&b, logits); err != nil {
			return st, err
		}
		st.Decode += time.Since(tp)
		st.Passes++
	}
	return st, nil
}
