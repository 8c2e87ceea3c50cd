package stages_test

// Tests of the server-facing API: Serve, Submit and TrySubmit with their
// bounded priority queue, per-request Streams (ordering, cancellation,
// slow consumers), stop strings, per-request draft overrides, Close and
// CancelAll. Every wait is bounded by waitFor; where a test needs a
// request to hold its slot, its target is gated (decoding advances only
// when the test steps or opens it), so the outcome does not depend on
// scheduling.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/stages"
	"github.com/specd-dev/specd/verify/verifytest"
)

// waitFor bounds every wait of these tests.
const waitFor = 20 * time.Second

// noisyTerms make a fake draft that agrees with the default fake target
// on most, not all, argmaxes.
var noisyTerms = []verifytest.Term{{Seed: 1, Scale: 1}, {Seed: 3, Scale: 0.5}}

// server is a pipeline running Serve in the background.
type server struct {
	*stages.Pipeline
	cancel   context.CancelFunc // ends Serve's context
	finished chan struct{}      // closed when Serve has returned
	err      error              // Serve's result, once finished is closed
}

// startServer starts Serve on a new pipeline of cfg. At the end of the
// test it ends Serve's context and waits (bounded) for Serve to return.
func startServer(t *testing.T, cfg stages.Config) *server {
	t.Helper()
	p, err := stages.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{Pipeline: p, cancel: cancel, finished: make(chan struct{})}
	go func() {
		defer close(s.finished)
		s.err = p.Serve(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		timer := time.NewTimer(waitFor)
		defer timer.Stop()
		select {
		case <-s.finished:
		case <-timer.C:
			t.Error("Serve did not return after its context ended")
		}
	})
	return s
}

// wait waits for Serve to return and returns its error.
func (s *server) wait(t *testing.T) error {
	t.Helper()
	timer := time.NewTimer(waitFor)
	defer timer.Stop()
	select {
	case <-s.finished:
		return s.err
	case <-timer.C:
		t.Fatalf("Serve has not returned after %v (%d active, %d queued)", waitFor, s.Active(), s.Queued())
		return nil
	}
}

// drain closes the pipeline and checks that Serve returns nil and leaves
// no slot held and nothing queued.
func (s *server) drain(t *testing.T) {
	t.Helper()
	s.Close()
	if err := s.wait(t); err != nil {
		t.Fatalf("Serve = %v after Close, want nil", err)
	}
	if a, q := s.Active(), s.Queued(); a != 0 || q != 0 {
		t.Errorf("after Serve returned: %d active, %d queued; want none", a, q)
	}
}

// stillServing reports whether Serve is still running after d: a check
// that it does not return while a gated request cannot have finished.
func (s *server) stillServing(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-s.finished:
		return false
	case <-timer.C:
		return true
	}
}

// gated is a fake target whose verification passes (forward passes that
// want logits) each wait for a step from the test, or run freely once it
// is opened: a request on it decodes only as far as the test lets it.
// Prefill passes do not wait, and nothing waits once the test has ended.
type gated struct {
	*verifytest.Fake
	steps chan struct{}
	open  chan struct{}
	once  sync.Once
	end   <-chan struct{}
}

func newGated(t *testing.T, seqs, maxPos int) *gated {
	return &gated{Fake: verifytest.NewFake(vocab, seqs, maxPos, 64, 4),
		steps: make(chan struct{}), open: make(chan struct{}), end: t.Context().Done()}
}

func (g *gated) Forward(b *backend.Batch, logits []float32) error {
	if slices.Contains(b.Logits, true) {
		select {
		case <-g.steps:
		case <-g.open:
		case <-g.end:
		}
	}
	return g.Fake.Forward(b, logits)
}

// step lets one verification pass run.
func (g *gated) step(t *testing.T) {
	t.Helper()
	timer := time.NewTimer(waitFor)
	defer timer.Stop()
	select {
	case g.steps <- struct{}{}:
	case <-timer.C:
		t.Fatal("no verification pass is waiting for a step")
	}
}

// Open lets every pass run from now on.
func (g *gated) Open() { g.once.Do(func() { close(g.open) }) }

// streamed is what a reader saw of one stream.
type streamed struct {
	chunks []stages.Chunk
	tokens []int32
	text   string
	final  stages.Chunk
}

// take records c, checking that the chunks are numbered 0, 1, 2, …, that
// nothing follows the final one and that only the final one carries a
// reason, an error and stats.
func (r *streamed) take(id string, c stages.Chunk) error {
	switch {
	case r.final.Final:
		return fmt.Errorf("%s: chunk %d after the final chunk", id, c.Seq)
	case c.Seq != len(r.chunks):
		return fmt.Errorf("%s: chunk %d, want %d (numbering has a gap)", id, c.Seq, len(r.chunks))
	case c.ID != id:
		return fmt.Errorf("%s: chunk %d has the id %q", id, c.Seq, c.ID)
	case c.Final && c.Stats == nil:
		return fmt.Errorf("%s: final chunk without stats", id)
	case !c.Final && (c.Err != nil || c.Reason != "" || c.Stats != nil):
		return fmt.Errorf("%s: chunk %d is not final but has reason %q, error %v", id, c.Seq, c.Reason, c.Err)
	}
	r.chunks = append(r.chunks, c)
	r.tokens = append(r.tokens, c.Tokens...)
	r.text += c.Text
	if c.Final {
		r.final = c
	}
	return nil
}

// next reads one chunk of st into r.
func next(ctx context.Context, st *stages.Stream, r *streamed) error {
	c, err := st.Next(ctx)
	if err != nil {
		return fmt.Errorf("%s: chunk %d: %w", st.ID(), len(r.chunks), err)
	}
	return r.take(st.ID(), c)
}

// readAll reads the rest of st into r, with Next or with the Chunks
// iterator, then checks that the stream is over: Next says io.EOF and
// Done is closed.
func readAll(ctx context.Context, st *stages.Stream, r *streamed, iterate bool) error {
	if iterate {
		for c, err := range st.Chunks(ctx) {
			if err != nil {
				return fmt.Errorf("%s: chunk %d: %w", st.ID(), len(r.chunks), err)
			}
			if err := r.take(st.ID(), c); err != nil {
				return err
			}
		}
	}
	for !r.final.Final {
		if err := next(ctx, st, r); err != nil {
			return err
		}
	}
	if c, err := st.Next(ctx); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: after the final chunk Next = %+v, %v; want io.EOF", st.ID(), c, err)
	}
	select {
	case <-st.Done():
	default:
		return fmt.Errorf("%s: Done is open after the final chunk", st.ID())
	}
	return nil
}

// mustRead reads st (from chunk len(r.chunks) on, r may be nil) to its
// end.
func mustRead(t *testing.T, st *stages.Stream, r *streamed) *streamed {
	t.Helper()
	if r == nil {
		r = &streamed{}
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	if err := readAll(ctx, st, r, false); err != nil {
		t.Fatal(err)
	}
	return r
}

// waitDone waits for st's final chunk to be queued.
func waitDone(t *testing.T, st *stages.Stream, why string) {
	t.Helper()
	timer := time.NewTimer(waitFor)
	defer timer.Stop()
	select {
	case <-st.Done():
	case <-timer.C:
		t.Fatalf("%s: stream not done after %v (%s)", st.ID(), waitFor, why)
	}
}

// admit submits r with ctx to s, whose target is g, lets one verification
// pass run and reads the request's first chunk: the request then holds a
// slot, and decodes no further until g steps or opens.
func admit(t *testing.T, ctx context.Context, s *server, g *gated, r stages.Request) (*stages.Stream, *streamed) {
	t.Helper()
	st, err := s.TrySubmit(ctx, r)
	if err != nil {
		t.Fatalf("%s: TrySubmit: %v", r.ID, err)
	}
	g.step(t)
	rctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	rd := &streamed{}
	if err := next(rctx, st, rd); err != nil {
		t.Fatal(err)
	}
	if rd.final.Final || len(rd.tokens) != 1 {
		t.Fatalf("%s: first chunk %+v, want one token and not final", r.ID, rd.chunks[0])
	}
	return st, rd
}

// greedy is plain greedy decoding of the default fake target.
func greedy(t *testing.T, prompt []int32, n int) []int32 {
	t.Helper()
	want, err := verifytest.NewFake(vocab, 1, 512, 512, 4).Greedy(0, prompt, n)
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// checkDone checks that r ended normally ("length") with the greedy
// tokens of prompt.
func checkDone(t *testing.T, r *streamed, prompt []int32, n int) {
	t.Helper()
	f := r.final
	if f.Err != nil || f.Reason != "length" {
		t.Errorf("%s: final chunk: reason %q, error %v; want length", f.ID, f.Reason, f.Err)
	}
	if want := greedy(t, prompt, n); !slices.Equal(r.tokens, want) {
		t.Errorf("%s: tokens\n got  %v\n want %v", f.ID, r.tokens, want)
	}
	if f.Stats != nil && f.Stats.Generated != len(r.tokens) {
		t.Errorf("%s: stats say %d tokens, %d published", f.ID, f.Stats.Generated, len(r.tokens))
	}
}

// checkFailed checks that r ended with an error matching want.
func checkFailed(t *testing.T, r *streamed, want error) {
	t.Helper()
	if f := r.final; f.Reason != "error" || !errors.Is(f.Err, want) {
		t.Errorf("%s: final chunk: reason %q, error %v; want error %v", f.ID, f.Reason, f.Err, want)
	}
}

// TestServeConcurrent submits 16 requests at once to 4 slots with a queue
// of 4 (so most Submits wait), reading half of the streams with Next and
// half with Chunks: every stream is numbered without gaps and ends in one
// final chunk, and every request's tokens equal plain greedy decoding.
func TestServeConcurrent(t *testing.T) {
	const slots, n = 4, 16
	for _, tc := range []struct {
		name    string
		drafter func() draft.Drafter // nil: plain decoding
		k       int
		pre     bool
		batch   int // Config.VerifyBatch
	}{
		{name: "plain"},
		{name: "noisy/k4", k: 4, drafter: func() draft.Drafter {
			return draft.NewModel(verifytest.NewFake(vocab, slots, 512, 64, 4, noisyTerms...), 0)
		}},
		{name: "self/k3/pre", k: 3, pre: true, drafter: func() draft.Drafter {
			return draft.NewModel(verifytest.NewFake(vocab, slots, 512, 64, 4), 0)
		}},
		{name: "ngram/k2/gather", k: 2, batch: slots, drafter: func() draft.Drafter { return draft.NewNGram() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := stages.Config{
				Target: verifytest.NewFake(vocab, slots, 512, 64, 4), Policy: draft.Policy{K: tc.k},
				Slots: slots, MaxPos: 512, Queue: slots, PreDraft: tc.pre, VerifyBatch: tc.batch,
			}
			if tc.drafter != nil {
				cfg.Drafter = tc.drafter()
			}
			s := startServer(t, cfg)
			ctx, cancel := context.WithTimeout(t.Context(), waitFor)
			defer cancel()
			ps := prompts(n)
			gen := func(i int) int { return 12 + i%5 }
			got := make([]*streamed, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					r := stages.Request{ID: fmt.Sprint(i), PromptIDs: ps[i], MaxTokens: gen(i), Priority: i % 3}
					st, err := s.Submit(ctx, r)
					if err != nil {
						t.Errorf("request %d: Submit: %v", i, err)
						return
					}
					if st.ID() != r.ID {
						t.Errorf("request %d: stream id %q", i, st.ID())
					}
					rd := &streamed{}
					if err := readAll(ctx, st, rd, i%2 == 0); err != nil {
						t.Error(err)
						return
					}
					if a := s.Active(); a > slots {
						t.Errorf("%d requests active on %d slots", a, slots)
					}
					got[i] = rd
				})
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			s.drain(t)
			for i, r := range got {
				checkDone(t, r, ps[i], gen(i))
			}
			if m := s.Metrics().Snapshot(); m.Requests != n || m.Failed != 0 {
				t.Errorf("metrics: %d requests, %d failed; want %d, 0", m.Requests, m.Failed, n)
			}
		})
	}
}

// TestQueueFull fills the queue behind a request holding the only slot:
// TrySubmit then says ErrBusy at once, and Submit waits, until its
// context ends (with the context's cause) or until a queued request
// leaves (one waiter per place freed); the waiters that got in run to
// their end once the slot frees.
func TestQueueFull(t *testing.T) {
	errLeft := errors.New("client left the queue")
	errStop := errors.New("stop the busy request")
	for _, queue := range []int{1, 3} {
		t.Run(fmt.Sprintf("queue%d", queue), func(t *testing.T) {
			g := newGated(t, 1, 512)
			s := startServer(t, stages.Config{Target: g, Slots: 1, MaxPos: 512, Queue: queue})
			ctx, cancel := context.WithTimeout(t.Context(), waitFor)
			defer cancel()
			busy, busyRead := admit(t, ctx, s, g, stages.Request{ID: "busy", PromptIDs: []int32{1}, MaxTokens: 100})

			ps := prompts(2*queue + 1)
			promptOf := map[string][]int32{}
			short := func(i int) stages.Request {
				promptOf[fmt.Sprint(i)] = ps[i]
				return stages.Request{ID: fmt.Sprint(i), PromptIDs: ps[i], MaxTokens: 6}
			}
			var queued []*stages.Stream
			for i := range queue {
				st, err := s.TrySubmit(ctx, short(i))
				if err != nil {
					t.Fatalf("TrySubmit %d of a queue of %d: %v", i, queue, err)
				}
				queued = append(queued, st)
			}
			if q := s.Queued(); q != queue {
				t.Fatalf("Queued = %d, want %d", q, queue)
			}
			if st, err := s.TrySubmit(ctx, short(queue)); !errors.Is(err, stages.ErrBusy) || st != nil {
				t.Fatalf("TrySubmit on a full queue = %v, %v; want ErrBusy", st, err)
			}
			// Submit waits while the queue is full, until its context ends.
			errWaited := errors.New("waited for a place")
			wctx, wcancel := context.WithTimeoutCause(ctx, 20*time.Millisecond, errWaited)
			st, err := s.Submit(wctx, short(queue))
			wcancel()
			if !errors.Is(err, errWaited) || st != nil {
				t.Fatalf("Submit on a full queue until its context ends = %v, %v; want the context's cause", st, err)
			}
			if q, a := s.Queued(), s.Active(); q != queue || a != 1 {
				t.Fatalf("after a refused request: %d queued, %d active; want %d, 1", q, a, queue)
			}

			// As many Submits as the queue holds wait; each gets in when a
			// queued request leaves, one per place (and a place freed while
			// one waiter is getting in is passed on to the next).
			type submitted struct {
				st  *stages.Stream
				err error
			}
			res := make(chan submitted, queue)
			for i := range queue {
				r := short(queue + 1 + i)
				go func() {
					st, err := s.Submit(ctx, r)
					res <- submitted{st, err}
				}()
			}
			// Nothing can free a place while the gate is shut: every Submit
			// must still be waiting after a while.
			quiet := func(why string) {
				t.Helper()
				select {
				case r := <-res:
					t.Fatalf("Submit returned %v, %v %s", r.st, r.err, why)
				case <-time.After(50 * time.Millisecond):
				}
			}
			quiet("with the queue full")
			timer := time.NewTimer(waitFor)
			defer timer.Stop()
			var waiters []*stages.Stream
			getIn := func(n int) {
				t.Helper()
				for range n {
					select {
					case r := <-res:
						if r.err != nil {
							t.Fatalf("waiting Submit: %v", r.err)
						}
						waiters = append(waiters, r.st)
					case <-timer.C:
						t.Fatalf("%d Submits still wait after places freed", queue-len(waiters))
					}
				}
			}
			queued[0].Cancel(errLeft)
			getIn(1)
			if queue > 1 {
				quiet("when only one place freed")
				for _, st := range queued[1:] {
					st.Cancel(errLeft)
				}
				getIn(queue - 1)
			}
			for _, st := range queued {
				left := mustRead(t, st, nil)
				checkFailed(t, left, errLeft)
				if len(left.chunks) != 1 || len(left.tokens) != 0 {
					t.Errorf("request cancelled in the queue: %d chunks, tokens %v; want only the final", len(left.chunks), left.tokens)
				}
			}
			if q := s.Queued(); q != queue {
				t.Errorf("Queued = %d, want %d (the waiters took the free places)", q, queue)
			}

			busy.Cancel(errStop)
			g.Open()
			checkFailed(t, mustRead(t, busy, busyRead), errStop)
			for _, st := range waiters {
				checkDone(t, mustRead(t, st, nil), promptOf[st.ID()], 6)
			}
			s.drain(t)
		})
	}
}

// orderTokenizer records the prompts it encodes: the tokenize stage takes
// requests in the order intake admits them.
type orderTokenizer struct {
	mu   sync.Mutex
	seen []string
}

func (o *orderTokenizer) Encode(text string) ([]int32, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen = append(o.seen, text)
	return []int32{int32(len(o.seen)) % vocab}, nil
}

func (o *orderTokenizer) order() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.seen)
}

// TestPriority queues requests behind one holding the only slot and
// checks the order intake admits them in once it frees: highest priority
// first, first come first among equals.
func TestPriority(t *testing.T) {
	type queued struct {
		id       string
		priority int
	}
	for _, tc := range []struct {
		name  string
		queue []queued
		want  []string
	}{
		{"high after low", []queued{{"low", 0}, {"high", 1}}, []string{"high", "low"}},
		{"equal: first come", []queued{{"a", 0}, {"b", 0}, {"c", 0}}, []string{"a", "b", "c"}},
		{"mixed", []queued{{"a", 0}, {"b", 2}, {"c", 1}, {"d", 2}, {"e", -1}, {"f", 1}}, []string{"b", "d", "c", "f", "a", "e"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := &orderTokenizer{}
			g := newGated(t, 1, 512)
			s := startServer(t, stages.Config{Target: g, Slots: 1, MaxPos: 512, Tokenizer: tok, Queue: 8})
			ctx, cancel := context.WithTimeout(t.Context(), waitFor)
			defer cancel()
			busy, busyRead := admit(t, ctx, s, g, stages.Request{ID: "busy", Prompt: "busy", MaxTokens: 100})
			var streams []*stages.Stream
			for _, q := range tc.queue {
				st, err := s.TrySubmit(ctx, stages.Request{ID: q.id, Prompt: q.id, MaxTokens: 3, Priority: q.priority})
				if err != nil {
					t.Fatal(err)
				}
				streams = append(streams, st)
			}
			if q := s.Queued(); q != len(tc.queue) {
				t.Fatalf("Queued = %d, want %d", q, len(tc.queue))
			}
			errStop := errors.New("stop the busy request")
			busy.Cancel(errStop)
			g.Open()
			checkFailed(t, mustRead(t, busy, busyRead), errStop)
			for _, st := range streams {
				r := mustRead(t, st, nil)
				if r.final.Err != nil || len(r.tokens) != 3 {
					t.Errorf("%s: %d tokens, error %v", st.ID(), len(r.tokens), r.final.Err)
				}
			}
			s.drain(t)
			if got, want := tok.order(), append([]string{"busy"}, tc.want...); !slices.Equal(got, want) {
				t.Errorf("admitted in the order %q, want %q", got, want)
			}
		})
	}
}

// TestStreamCancel ends a request waiting in the queue or decoding, by
// Stream.Cancel or through its context: the stream ends with one final
// chunk carrying the cause (at once in the queue: the gated pipeline
// cannot move meanwhile), the slot frees for the request behind it, and
// no slot or queue entry is left when Serve returns.
func TestStreamCancel(t *testing.T) {
	errCause := errors.New("client went away")
	errStop := errors.New("stop the busy request")
	for _, where := range []string{"queued", "decoding"} {
		for _, how := range []struct {
			name   string
			cancel func(st *stages.Stream, ctxCancel context.CancelCauseFunc)
			want   error
		}{
			{"Cancel", func(st *stages.Stream, _ context.CancelCauseFunc) { st.Cancel(errCause) }, errCause},
			{"Cancel(nil)", func(st *stages.Stream, _ context.CancelCauseFunc) { st.Cancel(nil) }, context.Canceled},
			{"context", func(_ *stages.Stream, cancel context.CancelCauseFunc) { cancel(errCause) }, errCause},
		} {
			t.Run(where+"/"+how.name, func(t *testing.T) {
				g := newGated(t, 1, 512)
				s := startServer(t, stages.Config{Target: g, Slots: 1, MaxPos: 512})
				ctx, cancel := context.WithTimeout(t.Context(), waitFor)
				defer cancel()
				rctx, rcancel := context.WithCancelCause(ctx)
				defer rcancel(nil)
				victim := stages.Request{ID: "victim", PromptIDs: []int32{3, 4}, MaxTokens: 100}
				behind := stages.Request{ID: "behind", PromptIDs: []int32{5, 6, 7}, MaxTokens: 8}

				switch where {
				case "queued":
					busy, busyRead := admit(t, ctx, s, g, stages.Request{ID: "busy", PromptIDs: []int32{1}, MaxTokens: 100})
					st, err := s.TrySubmit(rctx, victim)
					if err != nil {
						t.Fatal(err)
					}
					how.cancel(st, rcancel)
					waitDone(t, st, "cancelled in the queue")
					r := mustRead(t, st, nil)
					checkFailed(t, r, how.want)
					if len(r.chunks) != 1 || len(r.tokens) != 0 {
						t.Errorf("cancelled in the queue: %d chunks, tokens %v; want only the final", len(r.chunks), r.tokens)
					}
					if q, a := s.Queued(), s.Active(); q != 0 || a != 1 {
						t.Errorf("after the cancel: %d queued, %d active; want 0, 1", q, a)
					}
					bst, err := s.TrySubmit(ctx, behind)
					if err != nil {
						t.Fatal(err)
					}
					busy.Cancel(errStop)
					g.Open()
					checkFailed(t, mustRead(t, busy, busyRead), errStop)
					checkDone(t, mustRead(t, bst, nil), behind.PromptIDs, behind.MaxTokens)

				case "decoding":
					st, r := admit(t, rctx, s, g, victim)
					g.step(t) // one more block, read before the cancel
					if err := next(ctx, st, r); err != nil {
						t.Fatal(err)
					}
					bst, err := s.TrySubmit(ctx, behind)
					if err != nil {
						t.Fatal(err)
					}
					how.cancel(st, rcancel)
					if a := s.Active(); a != 1 {
						t.Errorf("Active = %d while the cancelled request waits for its pass, want 1", a)
					}
					g.Open()
					waitDone(t, st, "cancelled while decoding")
					mustRead(t, st, r)
					checkFailed(t, r, how.want)
					if want := greedy(t, victim.PromptIDs, len(r.tokens)); len(r.tokens) < 2 || !slices.Equal(r.tokens, want) {
						t.Errorf("cancelled while decoding: tokens %v, want at least 2 of greedy %v", r.tokens, want)
					}
					// The slot freed: the request behind runs.
					checkDone(t, mustRead(t, bst, nil), behind.PromptIDs, behind.MaxTokens)
				}
				s.drain(t)
				// queued: busy, victim and behind; decoding: victim and behind.
				reqs := map[string]int{"queued": 3, "decoding": 2}[where]
				if m := s.Metrics().Snapshot(); m.Failed != reqs-1 || m.Requests != reqs {
					t.Errorf("metrics: %d requests, %d failed; want %d, %d", m.Requests, m.Failed, reqs, reqs-1)
				}
			})
		}
	}
	t.Run("ended context", func(t *testing.T) {
		s := startServer(t, stages.Config{Target: verifytest.NewFake(vocab, 1, 64, 8, 4), Slots: 1, MaxPos: 64})
		ctx, cancel := context.WithCancelCause(t.Context())
		cancel(errCause)
		for name, submit := range map[string]func(context.Context, stages.Request) (*stages.Stream, error){"Submit": s.Submit, "TrySubmit": s.TrySubmit} {
			if st, err := submit(ctx, stages.Request{ID: "x", PromptIDs: []int32{1}, MaxTokens: 2}); st != nil || !errors.Is(err, errCause) {
				t.Errorf("%s with an ended context = %v, %v; want its cause", name, st, err)
			}
		}
		s.drain(t)
	})
}

// TestSlowConsumer: with StreamBuffer n, a request nobody reads until its
// stream is done ends with ErrSlowConsumer after exactly n chunks (then
// the final, numbered n); requests of the same pipeline that never hold
// more than n unread chunks (read at once, or only after they are done)
// complete normally.
func TestSlowConsumer(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		t.Run(fmt.Sprintf("buffer%d", n), func(t *testing.T) {
			// No drafter: every chunk is one token.
			s := startServer(t, stages.Config{Target: verifytest.NewFake(vocab, 3, 512, 64, 4), Slots: 3, MaxPos: 512, StreamBuffer: n})
			ctx, cancel := context.WithTimeout(t.Context(), waitFor)
			defer cancel()
			slowP, laterP, promptP := []int32{1, 2}, []int32{3}, []int32{4, 5, 6}
			slow, err := s.TrySubmit(ctx, stages.Request{ID: "slow", PromptIDs: slowP, MaxTokens: 300})
			if err != nil {
				t.Fatal(err)
			}
			later, err := s.TrySubmit(ctx, stages.Request{ID: "later", PromptIDs: laterP, MaxTokens: n})
			if err != nil {
				t.Fatal(err)
			}
			prompt, err := s.TrySubmit(ctx, stages.Request{ID: "prompt", PromptIDs: promptP, MaxTokens: n})
			if err != nil {
				t.Fatal(err)
			}
			promptRead := make(chan error, 1)
			pr := &streamed{}
			go func() { promptRead <- readAll(ctx, prompt, pr, true) }()

			waitDone(t, slow, "its reader fell behind")
			r := mustRead(t, slow, nil)
			checkFailed(t, r, stages.ErrSlowConsumer)
			if len(r.chunks) != n+1 {
				t.Errorf("slow consumer got %d chunks, want %d and the final", len(r.chunks), n)
			}
			if want := greedy(t, slowP, n); !slices.Equal(r.tokens, want) {
				t.Errorf("slow consumer's tokens %v, want the first %d of greedy: %v", r.tokens, n, want)
			}
			waitDone(t, later, "within its buffer")
			checkDone(t, mustRead(t, later, nil), laterP, n)
			timer := time.NewTimer(waitFor)
			defer timer.Stop()
			select {
			case err := <-promptRead:
				if err != nil {
					t.Fatal(err)
				}
			case <-timer.C:
				t.Fatal("prompt reader did not finish")
			}
			checkDone(t, pr, promptP, n)
			s.drain(t)
		})
	}
}

// letters is a detokenizer that spells token i as the letter 'a'+i.
type letters struct{}

func (letters) Add(id int32) string { return string(rune('a' + id)) }
func (letters) Flush() string       { return "" }

func spell(ids []int32) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(letters{}.Add(id))
	}
	return b.String()
}

// stopCut is the reference for stop strings: the text up to the first of
// stops to appear in full as the text grows (the earliest-starting one if
// several complete on the same letter), and whether one did.
func stopCut(full string, stops []string) (string, bool) {
	for end := 1; end <= len(full); end++ {
		cut := -1
		for _, st := range stops {
			if i := strings.Index(full[:end], st); st != "" && i >= 0 && (cut < 0 || i < cut) {
				cut = i
			}
		}
		if cut >= 0 {
			return full[:cut], true
		}
	}
	return full, false
}

// TestStopStrings checks that text is cut before the first stop string
// to appear, also across chunks, with reason "stop", and that text held
// back as the start of a stop string that never completes is flushed in
// full by the final chunk.
func TestStopStrings(t *testing.T) {
	prompt := []int32{1, 2, 3}
	const gen = 40
	want := greedy(t, prompt, gen)
	full := spell(want)
	t.Logf("greedy text %q", full)
	for _, tc := range []struct {
		name  string
		stops []string
		held  string // the final chunk's text, where no stop completes
	}{
		{name: "none"},
		{name: "one", stops: []string{full[20:23]}},
		{name: "first of two", stops: []string{full[25:27], full[9:12]}},
		{name: "two end together", stops: []string{full[11:13], full[10:13]}},
		{name: "at the start", stops: []string{full[:2]}},
		{name: "empty ignored", stops: []string{""}},
		{name: "never completes", stops: []string{full[gen-1:] + "z"}, held: full[gen-1:]},
		{name: "longer partial", stops: []string{full[gen-3:] + "zz", "zzz"}, held: full[gen-3:]},
	} {
		for _, k := range []int{0, 4} {
			t.Run(fmt.Sprintf("%s/k%d", tc.name, k), func(t *testing.T) {
				cfg := stages.Config{
					Target: verifytest.NewFake(vocab, 2, 512, 64, 4), Slots: 2, MaxPos: 512,
					NewDetokenizer: func() stages.Detokenizer { return letters{} },
				}
				if k > 0 {
					// The target as its own draft: blocks of k+1 tokens.
					cfg.Drafter, cfg.Policy = draft.NewModel(verifytest.NewFake(vocab, 2, 512, 64, 4), 0), draft.Policy{K: k}
				}
				s := startServer(t, cfg)
				ctx, cancel := context.WithTimeout(t.Context(), waitFor)
				defer cancel()
				st, err := s.Submit(ctx, stages.Request{ID: "a", PromptIDs: prompt, MaxTokens: gen, Stop: tc.stops})
				if err != nil {
					t.Fatal(err)
				}
				r := mustRead(t, st, nil)
				s.drain(t)
				wantText, stopped := stopCut(full, tc.stops)
				if r.text != wantText {
					t.Errorf("text %q, want %q", r.text, wantText)
				}
				if len(r.tokens) > gen || !slices.Equal(r.tokens, want[:len(r.tokens)]) || len(r.tokens) < len(wantText) {
					t.Errorf("tokens %v: want a prefix of greedy %v covering the text", r.tokens, want)
				}
				switch {
				case stopped:
					if r.final.Reason != "stop" || r.final.Err != nil || r.final.Text != "" {
						t.Errorf("final chunk %+v, want reason stop and no text", r.final)
					}
				default:
					if r.final.Reason != "length" || r.final.Err != nil || !slices.Equal(r.tokens, want) {
						t.Errorf("final chunk %+v after %d tokens, want reason length after %d", r.final, len(r.tokens), gen)
					}
					if r.final.Text != tc.held {
						t.Errorf("final chunk's text %q, want the held-back %q", r.final.Text, tc.held)
					}
				}
			})
		}
	}
}

// TestDraftOverrides runs requests with per-request draft modes and
// speculation overrides side by side: every request that can run decodes
// the target's greedy tokens, drafting as asked; one asking for a drafter
// the pipeline lacks fails alone with ErrRequest naming it; the pipeline
// serves a request submitted after the failures.
func TestDraftOverrides(t *testing.T) {
	const slots, k, gen = 3, 4, 20
	noisy := func(pmin float32) draft.Drafter {
		return draft.NewModel(verifytest.NewFake(vocab, slots, 512, 64, 4, noisyTerms...), pmin)
	}
	type req struct {
		r       stages.Request
		drafts  bool   // some draft tokens proposed
		failure string // in the error (ErrRequest); "": it runs
	}
	for _, tc := range []struct {
		name string
		cfg  stages.Config
		reqs []req
	}{
		{"model", stages.Config{Drafter: noisy(0), Policy: draft.Policy{K: k, Cost: 0.2}}, []req{
			{r: stages.Request{ID: "default"}, drafts: true},
			{r: stages.Request{ID: "model", Draft: stages.DraftModel}, drafts: true},
			{r: stages.Request{ID: "none", Draft: stages.DraftNone}},
			{r: stages.Request{ID: "ngram", Draft: stages.DraftNGram}, failure: `"ngram"`},
			{r: stages.Request{ID: "bogus", Draft: "bogus"}, failure: `"bogus"`},
			{r: stages.Request{ID: "pmin1", PMin: new(float32(1))}}, // no proposal is that sure
			{r: stages.Request{ID: "adaptive", Adaptive: new(true)}, drafts: true},
		}},
		{"model+ngram", stages.Config{Drafter: noisy(1), NGram: draft.NewNGram(), Policy: draft.Policy{K: k}}, []req{
			{r: stages.Request{ID: "default"}}, // the pipeline's p_min 1: no proposals
			{r: stages.Request{ID: "pmin0", PMin: new(float32(0))}, drafts: true},
			{r: stages.Request{ID: "ngram", Draft: stages.DraftNGram}, drafts: true},
			{r: stages.Request{ID: "none", Draft: stages.DraftNone}},
		}},
		{"no drafter", stages.Config{}, []req{
			{r: stages.Request{ID: "default"}},
			{r: stages.Request{ID: "none", Draft: stages.DraftNone}},
			{r: stages.Request{ID: "model", Draft: stages.DraftModel}, failure: `"model"`},
			{r: stages.Request{ID: "ngram", Draft: stages.DraftNGram}, failure: `"ngram"`},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Target, cfg.Slots, cfg.MaxPos = verifytest.NewFake(vocab, slots, 512, 64, 4), slots, 512
			s := startServer(t, cfg)
			ctx, cancel := context.WithTimeout(t.Context(), waitFor)
			defer cancel()
			ps := prompts(len(tc.reqs) + 1)
			var streams []*stages.Stream
			for i, q := range tc.reqs {
				q.r.PromptIDs, q.r.MaxTokens = ps[i], gen
				st, err := s.Submit(ctx, q.r)
				if err != nil {
					t.Fatal(err)
				}
				streams = append(streams, st)
			}
			for i, q := range tc.reqs {
				r := mustRead(t, streams[i], nil)
				st := r.final.Stats
				switch {
				case q.failure != "":
					checkFailed(t, r, stages.ErrRequest)
					if r.final.Err != nil && !strings.Contains(r.final.Err.Error(), q.failure) {
						t.Errorf("%s: error %q does not name %s", q.r.ID, r.final.Err, q.failure)
					}
					if len(r.tokens) != 0 {
						t.Errorf("%s: failed request published tokens %v", q.r.ID, r.tokens)
					}
				default:
					checkDone(t, r, ps[i], gen)
					if (st.DraftTokens > 0) != q.drafts {
						t.Errorf("%s: %d draft tokens in %d steps; want drafting: %v", q.r.ID, st.DraftTokens, st.Steps, q.drafts)
					}
				}
			}
			// The pipeline goes on serving.
			last := len(tc.reqs)
			st, err := s.Submit(ctx, stages.Request{ID: "after", PromptIDs: ps[last], MaxTokens: gen})
			if err != nil {
				t.Fatal(err)
			}
			checkDone(t, mustRead(t, st, nil), ps[last], gen)
			s.drain(t)
		})
	}
}

// TestShutdown ends a pipeline with a request decoding and one queued, by
// Close (both finish, then Serve returns nil), CancelAll (both end with
// its cause) or by ending Serve's context (both end with its error): new
// requests are refused with ErrClosed from the Close on.
func TestShutdown(t *testing.T) {
	errDrain := errors.New("drain ran out of time")
	closed := func(t *testing.T, s *server) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), waitFor)
		defer cancel()
		r := stages.Request{ID: "late", PromptIDs: []int32{1}, MaxTokens: 2}
		if st, err := s.TrySubmit(ctx, r); st != nil || !errors.Is(err, stages.ErrClosed) {
			t.Errorf("TrySubmit after Close = %v, %v; want ErrClosed", st, err)
		}
		if st, err := s.Submit(ctx, r); st != nil || !errors.Is(err, stages.ErrClosed) {
			t.Errorf("Submit after Close = %v, %v; want ErrClosed", st, err)
		}
	}
	for _, tc := range []struct {
		name string
		end  func(t *testing.T, s *server, g *gated)
		want error // of both requests; nil: they run to their end
	}{
		{"Close", func(t *testing.T, s *server, g *gated) {
			s.Close()
			closed(t, s)
			if !s.stillServing(50 * time.Millisecond) {
				t.Fatal("Serve returned after Close with requests in flight")
			}
			g.Open()
			if err := s.wait(t); err != nil {
				t.Errorf("Serve = %v after Close, want nil", err)
			}
		}, nil},
		{"CancelAll", func(t *testing.T, s *server, g *gated) {
			s.CancelAll(errDrain)
			g.Open()
			s.Close()
			closed(t, s)
			if err := s.wait(t); err != nil {
				t.Errorf("Serve = %v after Close, want nil", err)
			}
		}, errDrain},
		{"context", func(t *testing.T, s *server, g *gated) {
			s.cancel()
			g.Open()
			if err := s.wait(t); !errors.Is(err, context.Canceled) {
				t.Errorf("Serve = %v after its context ended, want context.Canceled", err)
			}
			closed(t, s)
		}, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGated(t, 1, 512)
			s := startServer(t, stages.Config{Target: g, Slots: 1, MaxPos: 512})
			ctx, cancel := context.WithTimeout(t.Context(), waitFor)
			defer cancel()
			a := stages.Request{ID: "decoding", PromptIDs: []int32{1, 2}, MaxTokens: 30}
			b := stages.Request{ID: "queued", PromptIDs: []int32{3}, MaxTokens: 10}
			ast, ar := admit(t, ctx, s, g, a)
			bst, err := s.TrySubmit(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			tc.end(t, s, g)
			mustRead(t, ast, ar)
			br := mustRead(t, bst, nil)
			if tc.want == nil {
				checkDone(t, ar, a.PromptIDs, a.MaxTokens)
				checkDone(t, br, b.PromptIDs, b.MaxTokens)
			} else {
				checkFailed(t, ar, tc.want)
				checkFailed(t, br, tc.want)
				if len(br.tokens) != 0 {
					t.Errorf("queued request published tokens %v", br.tokens)
				}
			}
			if a, q := s.Active(), s.Queued(); a != 0 || q != 0 {
				t.Errorf("after Serve returned: %d active, %d queued; want none", a, q)
			}
		})
	}
	t.Run("idle", func(t *testing.T) {
		s := startServer(t, stages.Config{Target: verifytest.NewFake(vocab, 1, 64, 8, 4), Slots: 1, MaxPos: 64})
		s.drain(t)
		closed(t, s)
		if err := s.Serve(t.Context()); !errors.Is(err, stages.ErrRan) {
			t.Errorf("second Serve = %v, want ErrRan", err)
		}
	})
}

// TestChunkProvenance: each chunk says how many of its tokens, and how
// much of its text, came from accepted draft tokens, also when a stop
// token cuts a block before the target's own token.
func TestChunkProvenance(t *testing.T) {
	ref := verifytest.NewFake(vocab, 1, 512, 512, 4)
	prompt := []int32{1, 2, 3}
	base, err := ref.Greedy(0, prompt, 40)
	if err != nil {
		t.Fatal(err)
	}
	for _, stopAt := range []int{6, 7, 12} { // inside the second and third blocks of 5
		t.Run(fmt.Sprint(stopAt), func(t *testing.T) {
			eos := base[stopAt]
			first := slices.Index(base, eos)
			cfg := stages.Config{
				Target: verifytest.NewFake(vocab, 1, 512, 64, 4), Drafter: draft.NewModel(verifytest.NewFake(vocab, 1, 512, 64, 4), 0),
				Policy: draft.Policy{K: 4}, Slots: 1, MaxPos: 512,
				Stop:           func(t int32) bool { return t == eos },
				NewDetokenizer: func() stages.Detokenizer { return letters{} },
			}
			p, err := stages.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			served := make(chan error, 1)
			go func() { served <- p.Serve(ctx) }()
			st, err := p.Submit(ctx, stages.Request{ID: "r", PromptIDs: prompt, MaxTokens: 40})
			if err != nil {
				t.Fatal(err)
			}
			var got []int32
			for c, err := range st.Chunks(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				if c.Final {
					if c.Reason != "stop" {
						t.Fatalf("final %+v, want stop", c)
					}
					continue
				}
				got = append(got, c.Tokens...)
				cut := len(got) == first // the block the stop token cut
				// The self-draft is accepted in full: the target's own
				// token ends each block, unless the stop cut it off.
				wantAcc, wantLen := len(c.Tokens)-1, len(c.Text)-1
				if cut {
					wantAcc, wantLen = len(c.Tokens), len(c.Text)
				}
				if c.Accepted != wantAcc || c.DraftLen != wantLen || c.Accepted > len(c.Tokens) || c.DraftLen > len(c.Text) {
					t.Errorf("chunk %d (%d tokens %q, cut %v): accepted %d, draft text %d bytes; want %d and %d",
						c.Seq, len(c.Tokens), c.Text, cut, c.Accepted, c.DraftLen, wantAcc, wantLen)
				}
			}
			if !slices.Equal(got, base[:first]) {
				t.Fatalf("tokens %v, want %v", got, base[:first])
			}
			p.Close()
			if err := <-served; err != nil {
				t.Fatal(err)
			}
		})
	}
}
