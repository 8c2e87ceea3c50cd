package stages_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/stages"
	"github.com/specd-dev/specd/verify/verifytest"
)

// TestPlain checks the plain loop against the fake model's own one-token
// decoding: a prompt longer than a pass (prefill in several), the stop by
// emit, the context limit, and bad input.
func TestPlain(t *testing.T) {
	const vocab = 16
	greedy := func(lg []float32) int32 { return int32(sample.Greedy(lg)) }
	prompt := []int32{3, 1, 4, 1, 5, 9, 2}
	ref := verifytest.NewFake(vocab, 1, 64, 64, 0)
	want, err := ref.Greedy(0, prompt, 20)
	if err != nil {
		t.Fatal(err)
	}
	collect := func(out *[]int32, stopAt int) func(int32) (bool, error) {
		return func(tok int32) (bool, error) {
			*out = append(*out, tok)
			return len(*out) != stopAt, nil
		}
	}
	for _, tc := range []struct {
		name           string
		n, maxPos, at  int // at: emit says stop at this token (0: never)
		tokens, passes int
		full           bool
	}{
		{"all", 20, 0, 0, 20, 19, false},
		{"one", 1, 0, 0, 1, 0, false},
		{"emit stops", 20, 0, 5, 5, 4, false},
		// Positions 0..11: the prompt's 7, then 5 passes; the token
		// sampled from position 11's logits is emitted too.
		{"context full", 20, 12, 0, 6, 5, true},
		{"context and n meet", 6, 12, 0, 6, 5, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Passes of 3 tokens: the prompt takes 3; a stale position
			// that the loop must clear first.
			be := verifytest.NewFake(vocab, 2, 64, 3, 0)
			var stale backend.Batch
			stale.Add(9, 0, 1, false)
			if err := be.Forward(&stale, nil); err != nil {
				t.Fatal(err)
			}
			var out []int32
			st, err := stages.Plain(context.Background(), be, 1, prompt, tc.n, tc.maxPos, greedy, collect(&out, tc.at))
			if err != nil {
				t.Fatal(err)
			}
			if st.Tokens != tc.tokens || st.Passes != tc.passes || st.Full != tc.full {
				t.Fatalf("tokens %d, passes %d, full %v; want %d, %d, %v", st.Tokens, st.Passes, st.Full, tc.tokens, tc.passes, tc.full)
			}
			if fmt.Sprint(out) != fmt.Sprint(want[:tc.tokens]) {
				t.Fatalf("tokens %v, want %v", out, want[:tc.tokens])
			}
			if be.Calls != 3+tc.passes+1 || be.Len(1) != len(prompt)+tc.passes {
				t.Fatalf("%d passes, %d positions; want %d, %d", be.Calls, be.Len(1), 3+tc.passes+1, len(prompt)+tc.passes)
			}
			if st.Wall < st.Decode {
				t.Fatalf("wall %v shorter than the passes' %v", st.Wall, st.Decode)
			}
		})
	}
	be := verifytest.NewFake(vocab, 1, 64, 8, 0)
	if _, err := stages.Plain(context.Background(), be, 0, nil, 4, 0, greedy, nil); !errors.Is(err, stages.ErrRequest) {
		t.Errorf("empty prompt: %v", err)
	}
	if _, err := stages.Plain(context.Background(), be, 0, prompt, 4, 5, greedy, nil); !errors.Is(err, stages.ErrRequest) {
		t.Errorf("prompt past maxPos: %v", err)
	}
	boom := errors.New("boom")
	if _, err := stages.Plain(context.Background(), be, 0, prompt, 4, 0, greedy, func(int32) (bool, error) { return true, boom }); !errors.Is(err, boom) {
		t.Errorf("emit error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := stages.Plain(ctx, be, 0, prompt, 4, 0, greedy, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
