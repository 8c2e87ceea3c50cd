package serve_test

// Tests of the NATS service end to end, with nothing faked: the bundled
// model pair (engine.Open), a real pipeline, an embedded nats-server on a
// random loopback port and real nats.go clients. Every wait is bounded
// (bound; refusal for what is answered at once; poll for slot
// accounting).
//
// Some paths (cancel, barge-in, a vanished client, a full queue) need a
// request to be still generating when the test acts. A request of 240
// tokens runs for hundreds of milliseconds against a test that acts
// within a message round trip, but on a loaded machine it might finish
// first; such a test then tries again (attempts), and fails only if it
// never sees the path it is after.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/nats-io/nuid"
	"github.com/rs/zerolog"
	"github.com/synadia-io/orbit.go/natsext"

	"github.com/specd-dev/specd/api"
	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/serve"
	"github.com/specd-dev/specd/stages"
)

// bound limits every wait for the server or a stream: generous, since
// under the race detector on two cores decoding is many times slower.
const bound = 2 * time.Minute

// long is max_tokens of a request that should still be generating when
// the test acts on it (the slots have 256 positions).
const long = 240

func ptr[T any](v T) *T { return &v }

// syncBuffer is the server's log, written by its goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// setup configures a test server.
type setup struct {
	slots, queue, ctx int
	maxPromptTokens   int
	nats              serve.NATSConfig // Listen defaults to 127.0.0.1:-1
	client            []nats.Option    // options of the fixture's client
	// natsErrors: the embedded nats-server may log errors (refused
	// logins, permission violations); serve's own log still may not.
	natsErrors bool
	http       bool   // also serve the HTTP gateway on a free loopback port (fixture.base)
	apiKey     string // the HTTP API's bearer key
	durable    bool   // durable intake and session replay (JetStream; set nats.StoreDir)
	// gateway, if set, is an HTTP gateway opened before the server (as
	// specd serve opens it before loading the models).
	gateway *serve.Gateway
	auto    bool // the engine's -k auto (engine.Options.Auto, k up to 8)
}

func defaults() setup { return setup{slots: 4, queue: 16, ctx: 256} }

// fixture is a running server and a client connected to it.
type fixture struct {
	e   *engine.Engine
	srv *serve.Server
	nc  *client
	log *syncBuffer
	url string
	// base is the HTTP gateway's URL, http://HOST:PORT (setup.http).
	base string
}

// client is a connection with the asynchronous errors it was told of.
type client struct {
	*nats.Conn
	errs chan error
}

// openEngine opens the bundled pair on one target and one draft thread,
// with the auto draft-length policy (the default) if auto (one value) is
// true, else at a fixed k of 4, so that every step drafts.
func openEngine(t *testing.T, auto ...bool) *engine.Engine {
	t.Helper()
	o := engine.DefaultOptions()
	o.ApplyDefaults()
	o.Threads, o.DraftThreads = 1, 1
	o.Auto, o.K = false, 4
	if len(auto) == 1 && auto[0] {
		o.Auto, o.K = true, engine.AutoK
	}
	e, err := engine.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// start runs a server of s (as specd serve assembles one) until the test
// ends, and connects a client to it.
func start(t *testing.T, s setup) *fixture {
	t.Helper()
	e := openEngine(t, s.auto)
	pc, err := e.PipelineConfig(s.slots, s.ctx, min(512, s.ctx))
	if err != nil {
		t.Fatal(err)
	}
	pc.Queue = s.queue
	pc.NGram = draft.NewNGram()
	p, err := stages.New(pc)
	if err != nil {
		t.Fatal(err)
	}
	render, _ := e.ChatRenderer()
	if s.nats.Listen == "" {
		s.nats.Listen = "127.0.0.1:-1"
	}
	logs := &syncBuffer{}
	httpAddr := ""
	if s.http {
		httpAddr = "127.0.0.1:0"
	}
	srv, err := serve.New(serve.Config{
		Pipeline:        p,
		Encode:          func(text string) ([]int32, error) { return e.Encode(text, true) },
		Render:          render,
		TargetModel:     e.TargetName,
		DraftModel:      e.DraftName,
		NATS:            s.nats,
		MaxPromptTokens: s.maxPromptTokens,
		DrainTimeout:    10 * time.Second,
		HTTPAddr:        httpAddr,
		HTTP:            s.gateway,
		APIKey:          s.apiKey,
		Durable:         s.durable,
		Log:             zerolog.New(logs).Level(zerolog.DebugLevel),
	})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{e: e, srv: srv, log: logs}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	var runErr error
	go func() {
		defer close(ran)
		runErr = srv.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-ran:
			if runErr != nil {
				t.Errorf("Run: %v", runErr)
			}
		case <-time.After(bound):
			t.Errorf("Run did not return within %v of the end of its context", bound)
		}
		f.checkLog(t, s.natsErrors)
		if t.Failed() {
			t.Logf("server log:\n%s", logs)
		}
	})
	select {
	case <-srv.Ready():
	case <-ran:
		t.Fatalf("Run returned before it was ready: %v", runErr)
	case <-time.After(bound):
		t.Fatalf("the server was not ready within %v", bound)
	}
	f.url = srv.ClientURL()
	if f.url == "" {
		t.Fatal("no client URL for the embedded server")
	}
	if s.http || s.gateway != nil {
		if f.base = srv.HTTPAddr(); f.base == "" {
			t.Fatal("no HTTP address")
		}
		f.base = "http://" + f.base
	}
	f.nc = f.connect(t, s.client...)
	return f
}

// connect connects a client, closed at the end of the test.
func (f *fixture) connect(t *testing.T, opts ...nats.Option) *client {
	t.Helper()
	c := &client{errs: make(chan error, 64)}
	opts = append([]nats.Option{
		nats.Timeout(10 * time.Second),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case c.errs <- err:
			default:
			}
		}),
	}, opts...)
	nc, err := nats.Connect(f.url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	c.Conn = nc
	return c
}

// refusal bounds the wait for what the server answers at once (a
// permissions violation: one round trip).
const refusal = 10 * time.Second

// asyncError waits for an asynchronous error of c that wraps want.
func (c *client) asyncError(t *testing.T, want error) error {
	t.Helper()
	timer := time.NewTimer(refusal)
	defer timer.Stop()
	for {
		select {
		case err := <-c.errs:
			if errors.Is(err, want) {
				return err
			}
		case <-timer.C:
			t.Fatalf("no asynchronous %v within %v", want, refusal)
		}
	}
}

// entries are the server's log lines.
func (f *fixture) entries(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(f.log.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("log line %q: %v", line, err)
			continue
		}
		out = append(out, m)
	}
	return out
}

// checkLog fails the test on a fatal or panic log line, and on error
// lines (serve's own, and the nats-server's unless natsErrors).
func (f *fixture) checkLog(t *testing.T, natsErrors bool) {
	for _, m := range f.entries(t) {
		level, _ := m["level"].(string)
		switch {
		case level == "fatal" || level == "panic":
		case level == "error" && (!natsErrors || m["component"] != "nats-server"):
		default:
			continue
		}
		t.Errorf("server logged at level %s: %v", level, m)
	}
}

// requestLog is the server's "request" log line of request id.
func (f *fixture) requestLog(t *testing.T, id string) map[string]any {
	t.Helper()
	var entry map[string]any
	// The handler writes the line after the stream's end, which may come
	// after the slot is free: wait for it (poll fails the test after 10 s).
	poll(t, "the request log line of "+id, func() bool {
		for _, m := range f.entries(t) {
			if m["message"] == "request" && m["id"] == id {
				entry = m
				return true
			}
		}
		return false
	})
	return entry
}

// poll waits until cond holds, checking every few milliseconds, for at
// most ten seconds (slot accounting settles within a decoding step).
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		<-tick.C
	}
}

func (f *fixture) idle(t *testing.T) {
	t.Helper()
	p := f.srv.Pipeline()
	poll(t, "every slot free", func() bool { return p.Active() == 0 && p.Queued() == 0 })
}

// attempts runs try up to n times until it reports that it saw what it
// was after (a request still generating when the test acted).
func attempts(t *testing.T, n int, what string, try func(i int) bool) {
	t.Helper()
	for i := range n {
		if try(i) {
			return
		}
		t.Logf("attempt %d: the request finished before the test acted; trying again", i+1)
	}
	t.Fatalf("%s: the request always finished first in %d attempts", what, n)
}

// stream is one generation as api.Generate yields it.
type stream struct {
	replies []api.Reply // token replies, then the done reply
	sum     *api.Summary
	err     error // the error that ended it (nil: done)
	tokens  []int32
	text    string
}

// collect reads a whole api.Generate stream, calling each (if not nil) on
// every reply.
func collect(ctx context.Context, nc *nats.Conn, req api.Request, each func(api.Reply)) stream {
	var s stream
	seq, err := api.Generate(ctx, nc, req)
	if err != nil {
		s.err = err
		return s
	}
	for r, err := range seq {
		if err != nil {
			s.err = err
			break
		}
		s.replies = append(s.replies, r)
		s.tokens = append(s.tokens, r.Chunk.Tokens...)
		s.text += r.Chunk.Text
		if r.Summary != nil {
			s.sum = r.Summary
		}
		if each != nil {
			each(r)
		}
	}
	return s
}

// checkDone checks that s is a gapless stream of token replies ending in
// exactly one done reply whose summary adds up.
func checkDone(t *testing.T, id string, s stream) {
	t.Helper()
	if s.err != nil {
		t.Errorf("%s: %v", id, s.err)
		return
	}
	n := len(s.replies)
	if n < 2 {
		t.Errorf("%s: %d replies, want tokens then done", id, n)
		return
	}
	for i, r := range s.replies {
		want := api.StatusToken
		if i == n-1 {
			want = api.StatusDone
		}
		if r.Seq != i+1 || r.Status != want || r.RequestID != id {
			t.Errorf("%s: reply %d: seq %d, status %q, id %q; want %d, %q, %q", id, i, r.Seq, r.Status, r.RequestID, i+1, want, id)
		}
		if r.Drafted < 0 || r.Accepted < 0 || r.Accepted > r.Drafted {
			t.Errorf("%s: reply %d: %d of %d draft tokens accepted", id, i, r.Accepted, r.Drafted)
		}
	}
	sum := s.sum
	if sum == nil {
		t.Errorf("%s: no summary", id)
		return
	}
	if sum.ID != id || sum.Text != s.text || sum.Usage.CompletionTokens != len(s.tokens) ||
		sum.Usage.TotalTokens != sum.Usage.PromptTokens+sum.Usage.CompletionTokens || sum.Usage.PromptTokens < 1 {
		t.Errorf("%s: summary %+v does not add up: %d tokens, text %q", id, sum, len(s.tokens), s.text)
	}
	if sum.FinishReason != "length" && sum.FinishReason != "stop" {
		t.Errorf("%s: finish reason %q", id, sum.FinishReason)
	}
	checkAcceptance(t, id, sum.Acceptance)
}

func checkAcceptance(t *testing.T, what string, a api.Acceptance) {
	t.Helper()
	if a.Drafts < 0 || a.DraftTokens < a.Drafts || a.Accepted < 0 || a.Accepted > a.DraftTokens {
		t.Errorf("%s: acceptance %+v", what, a)
	}
	if a.DraftTokens > 0 && a.Rate != float64(a.Accepted)/float64(a.DraftTokens) {
		t.Errorf("%s: rate %g, want %d/%d", what, a.Rate, a.Accepted, a.DraftTokens)
	}
	if a.Drafts > 0 && a.MeanAcceptanceLength != 1+float64(a.Accepted)/float64(a.Drafts) {
		t.Errorf("%s: mean acceptance length %g", what, a.MeanAcceptanceLength)
	}
	for i, v := range a.PerPosition {
		if v < 0 || v > 1 || (i > 0 && v > a.PerPosition[i-1]) {
			t.Errorf("%s: per-position acceptance %v: want non-increasing fractions", what, a.PerPosition)
			break
		}
	}
}

// plain is what plain decoding of prompt gives, greedy: n tokens, cut
// before the first end-of-generation token (where the pipeline stops).
func plain(t *testing.T, e *engine.Engine, prompt string, n int) []int32 {
	t.Helper()
	ids, err := e.Encode(prompt, true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	r, err := e.PlainDecode(ctx, ids, n, 1, sample.Params{})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := e.Tokenizer()
	for i, id := range r.Tokens {
		if tok.IsEOG(id) {
			return r.Tokens[:i]
		}
	}
	return r.Tokens
}

// rawEnd is a request's reply as natsext.RequestMany sees it: every message
// before the empty end-of-stream one, and whether that one came.
func rawEnd(t *testing.T, nc *nats.Conn, body []byte) (msgs []*nats.Msg, ended bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	// The stall ends a stream that never sends its end message sooner
	// than bound would (a refusal's end follows it at once).
	seq, err := natsext.RequestMany(ctx, nc, api.SubjectGenerate, body, natsext.RequestManyStall(refusal), natsext.RequestManySentinel(func(m *nats.Msg) bool {
		if len(m.Data) == 0 {
			ended = true
			if len(m.Header) != 0 {
				t.Errorf("the end-of-stream message has headers %v", m.Header)
			}
			return true
		}
		return false
	}))
	if err != nil {
		t.Fatal(err)
	}
	for m, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	return msgs, ended
}

func body(t *testing.T, r api.Request) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func genCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	t.Cleanup(cancel)
	return ctx
}

var prompts = []string{
	"The jury said", "Once upon a time", "The committee", "He said that", "In the morning", "She was", "The city of",
	"It is not", "When the war", "They had been", "The new law", "A man who", "There is no", "We must", "The first", "After the game",
}

// TestConcurrentStreams: 16 clients at once (4 slots, the rest queued)
// each get a gapless stream ending in exactly one done, whose summary adds
// up; greedy requests get plain decoding's tokens whatever they share a
// batch with and whichever drafter they ask for; a raw request-many
// client sees the empty end-of-stream message last.
func TestConcurrentStreams(t *testing.T) {
	f := start(t, defaults())
	const n = 32
	reqs := make([]api.Request, len(prompts))
	for i, p := range prompts {
		r := api.Request{ID: fmt.Sprintf("c%02d", i), Prompt: p, MaxTokens: ptr(n)}
		switch i % 4 {
		case 1:
			r.Speculative = &api.Speculative{Draft: api.DraftNGram}
		case 2:
			r.Speculative = &api.Speculative{K: ptr(0)}
		case 3: // sampled: its own seeded randomness, not plain decoding's tokens
			r.Temperature, r.TopP, r.Seed = ptr(0.8), ptr(0.95), ptr(uint64(i))
			r.Speculative = &api.Speculative{K: ptr(2)}
		}
		reqs[i] = r
	}
	ctx := genCtx(t)
	got := make([]stream, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Go(func() { got[i] = collect(ctx, f.nc.Conn, r, nil) })
	}
	wg.Wait()
	for i, r := range reqs {
		checkDone(t, r.ID, got[i])
		if r.Temperature != nil || got[i].err != nil {
			continue
		}
		if want := plain(t, f.e, r.Prompt, n); !slices.Equal(got[i].tokens, want) {
			t.Errorf("%s (%q, speculative %+v):\n got   %v\n plain %v", r.ID, r.Prompt, r.Speculative, got[i].tokens, want)
		}
	}

	msgs, ended := rawEnd(t, f.nc.Conn, body(t, api.Request{ID: "raw", Prompt: prompts[0], MaxTokens: ptr(n)}))
	if !ended {
		t.Fatalf("no empty end-of-stream message after %d messages", len(msgs))
	}
	done := 0
	for i, m := range msgs {
		if api.Seq(m) != i+1 || m.Header.Get(api.HeaderRequestID) != "raw" {
			t.Errorf("raw message %d: seq %d, id %q", i, api.Seq(m), m.Header.Get(api.HeaderRequestID))
		}
		if api.Status(m) == api.StatusDone {
			done++
		}
	}
	if done != 1 || api.Status(msgs[len(msgs)-1]) != api.StatusDone {
		t.Errorf("%d done messages, the last before the end is %q; want exactly one, last", done, api.Status(msgs[len(msgs)-1]))
	}
	f.idle(t)
}

// TestGreedyMatchesGenerate: greedy, the text over NATS is the text of the
// same request run in-process through a pipeline built as specd generate
// builds it (one slot, positions for the prompt, n tokens and a block),
// and the tokens are plain decoding's (which specd generate -d none prints
// and which speculative generate is pinned to), with every drafter.
func TestGreedyMatchesGenerate(t *testing.T) {
	f := start(t, defaults())
	const prompt, n = "The jury said", 48
	want := plain(t, f.e, prompt, n)
	tok, _ := f.e.Tokenizer()
	dec := tok.NewDecoder()
	dec.SetStripLeadingSpace(false) // as generate's plain loop
	var plainText string
	for _, id := range want {
		plainText += dec.Add(id)
	}
	plainText += dec.Flush()

	ids, err := f.e.Encode(prompt, true)
	if err != nil {
		t.Fatal(err)
	}
	k := f.e.Options().K
	p, err := f.e.NewPipeline(1, len(ids)+n+k+1, len(ids))
	if err != nil {
		t.Fatal(err)
	}
	ctx := genCtx(t)
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx) }()
	st, err := p.Submit(ctx, stages.Request{ID: "cli", PromptIDs: ids, MaxTokens: n, Params: sample.Params{TopP: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var inTokens []int32
	var inText string
	for c, err := range st.Chunks(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if c.Err != nil {
			t.Fatalf("in-process: %v", c.Err)
		}
		inTokens = append(inTokens, c.Tokens...)
		inText += c.Text
	}
	p.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(bound):
		t.Fatal("the in-process pipeline did not stop")
	}
	if !slices.Equal(inTokens, want) || inText != plainText {
		t.Fatalf("in-process pipeline %v %q\nplain decoding %v %q", inTokens, inText, want, plainText)
	}

	for _, sp := range []*api.Speculative{nil, {Draft: api.DraftModel, K: ptr(1)}, {Draft: api.DraftNGram}, {Draft: api.DraftNone}, {K: ptr(0)}, {Adaptive: ptr(true), PMin: ptr(0.3)}} {
		id := nuid.Next()
		s := collect(ctx, f.nc.Conn, api.Request{ID: id, Prompt: prompt, MaxTokens: ptr(n), Speculative: sp}, nil)
		checkDone(t, id, s)
		if s.sum == nil {
			continue
		}
		if !slices.Equal(s.tokens, want) || s.sum.Text != inText {
			t.Errorf("speculative %+v: over NATS %v %q\nin-process %v %q", sp, s.tokens, s.sum.Text, want, inText)
		}
		if s.sum.Usage.PromptTokens != len(ids) {
			t.Errorf("prompt tokens %d, want %d", s.sum.Usage.PromptTokens, len(ids))
		}
	}
}

// TestSlowConsumer: a client that never reads its reply subject (and whose
// connection drops what overflows a tiny pending limit) costs the others
// nothing: they complete, and the slow request still ends and frees its
// slot.
func TestSlowConsumer(t *testing.T) {
	f := start(t, defaults())
	slow := f.connect(t)
	inbox := nats.NewInbox()
	sub, err := slow.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.SetPendingLimits(2, 1<<10); err != nil {
		t.Fatal(err)
	}
	if err := slow.PublishRequest(api.SubjectGenerate, inbox, body(t, api.Request{ID: "slow", Prompt: prompts[1], MaxTokens: ptr(long)})); err != nil {
		t.Fatal(err)
	}
	if err := slow.Flush(); err != nil {
		t.Fatal(err)
	}
	ctx := genCtx(t)
	got := make([]stream, 6)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			got[i] = collect(ctx, f.nc.Conn, api.Request{ID: fmt.Sprint("fast", i), Prompt: prompts[2+i], MaxTokens: ptr(48)}, nil)
		})
	}
	wg.Wait()
	for i := range got {
		checkDone(t, fmt.Sprint("fast", i), got[i])
	}
	slow.asyncError(t, nats.ErrSlowConsumer)
	f.idle(t)
	f.requestLog(t, "slow") // fails the test when the line never comes
}

// TestCancel: a cancel on specd.v1.cancel.<id> mid-generation is
// acknowledged, ends the stream with a 499 error reply after its tokens
// (still gapless), and frees the slot.
func TestCancel(t *testing.T) {
	f := start(t, defaults())
	attempts(t, 3, "cancel", func(i int) bool {
		id := fmt.Sprint("cancel", i)
		ack := make(chan error, 1)
		s := collect(genCtx(t), f.nc.Conn, api.Request{ID: id, Prompt: prompts[i], MaxTokens: ptr(long)}, func(r api.Reply) {
			if r.Seq != 1 {
				return
			}
			m, err := f.nc.Request(api.CancelSubject(id), nil, 10*time.Second)
			if err == nil && !strings.Contains(string(m.Data), `"cancelled":true`) {
				err = fmt.Errorf("cancel answered %s", m.Data)
			}
			ack <- err
		})
		if s.err == nil {
			return false // done first
		}
		var se *api.ServiceError
		if !errors.As(s.err, &se) {
			t.Fatalf("stream ended with %v, want a service error", s.err)
		}
		if se.Code != api.CodeCancelled || !strings.Contains(se.Message, "cancelled") || se.RequestID != id {
			t.Errorf("error reply %+v, want 499 cancelled for %s", se, id)
		}
		if len(s.replies) == 0 || len(s.tokens) >= long {
			t.Errorf("%d replies, %d tokens before the cancel", len(s.replies), len(s.tokens))
		}
		select {
		case err := <-ack:
			if err != nil {
				t.Errorf("cancel: %v", err)
			}
		default:
			t.Error("the cancel was not acknowledged before the stream ended")
		}
		f.idle(t)
		if m := f.requestLog(t, id); m == nil || m["code"] != float64(api.CodeCancelled) {
			t.Errorf("request log %v, want code 499", m)
		}
		return true
	})
	// Cancelling what is not running is not an error (and not answered).
	if err := f.nc.Publish(api.CancelSubject("nothing"), nil); err != nil {
		t.Fatal(err)
	}
	checkDone(t, "after", collect(genCtx(t), f.nc.Conn, api.Request{ID: "after", Prompt: prompts[5], MaxTokens: ptr(8)}, nil))
}

// TestVanishedClient: a client that closes its connection mid-generation
// loses its request: the slot frees, the request ends as "client went
// away" (499), and nothing is logged at error level.
func TestVanishedClient(t *testing.T) {
	f := start(t, defaults())
	attempts(t, 3, "vanished client", func(i int) bool {
		id := fmt.Sprint("gone", i)
		c := f.connect(t)
		inbox := nats.NewInbox()
		sub, err := c.SubscribeSync(inbox)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.PublishRequest(api.SubjectGenerate, inbox, body(t, api.Request{ID: id, Prompt: prompts[i], MaxTokens: ptr(long)})); err != nil {
			t.Fatal(err)
		}
		m, err := sub.NextMsg(bound)
		if err != nil {
			t.Fatal(err)
		}
		if api.Status(m) != api.StatusToken || api.Seq(m) != 1 {
			t.Fatalf("first message: status %q, seq %d", api.Status(m), api.Seq(m))
		}
		c.Close()
		f.idle(t)
		entry := f.requestLog(t, id)
		if entry["finish"] == "length" {
			return false
		}
		if entry["code"] != float64(api.CodeCancelled) || !strings.Contains(fmt.Sprint(entry["error"]), "went away") {
			t.Errorf("request log %v, want 499, client went away", entry)
		}
		return true
	})
	// The server goes on serving.
	checkDone(t, "next", collect(genCtx(t), f.nc.Conn, api.Request{ID: "next", Prompt: prompts[4], MaxTokens: ptr(8)}, nil))
}

// listener pulls one kind of a session's replies.
type listener struct {
	next func() (api.Reply, error, bool)
	stop func()
}

func listen(t *testing.T, sess *api.Session, kind string) *listener {
	t.Helper()
	seq, err := sess.Listen(genCtx(t), kind)
	if err != nil {
		t.Fatal(err)
	}
	next, stop := iter.Pull2(seq)
	t.Cleanup(stop)
	return &listener{next, stop}
}

// generation reads one generation's replies up to its final one (done or
// error); each, if not nil, is called on every token reply.
func (l *listener) generation(t *testing.T, each func(api.Reply)) (chunks []api.Reply, sum *api.Summary, err error) {
	t.Helper()
	for {
		r, err, ok := l.next()
		if !ok {
			t.Fatal("the session's subscription ended before the generation's final message")
		}
		if err != nil {
			return chunks, nil, err
		}
		if r.Seq != len(chunks)+1 {
			t.Errorf("session reply seq %d, want %d", r.Seq, len(chunks)+1)
		}
		if r.Summary != nil {
			return chunks, r.Summary, nil
		}
		chunks = append(chunks, r)
		if each != nil {
			each(r)
		}
	}
}

func joinText(rs []api.Reply) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.Chunk.Text)
	}
	return b.String()
}

// TestSession: a session's second prompt sees the first turn (its prompt
// is the rendered conversation user, assistant, user); the speech subject
// carries the same text cut into segments; barge-in on .cancel ends the
// running generation with 499 and frees the slot.
func TestSession(t *testing.T) {
	f := start(t, defaults())
	render, _ := f.e.ChatRenderer()
	sess, err := api.NewSession(f.nc.Conn, "s1")
	if err != nil {
		t.Fatal(err)
	}
	tokens, speech := listen(t, sess, api.SessionTokens), listen(t, sess, api.SessionSpeech)
	turn := func(prompt string) (*api.Summary, string) {
		t.Helper()
		if err := sess.Post(api.Request{Prompt: prompt, MaxTokens: ptr(24)}); err != nil {
			t.Fatal(err)
		}
		chunks, sum, err := tokens.generation(t, nil)
		if err != nil {
			t.Fatalf("%q: %v", prompt, err)
		}
		if sum.Session != "s1" || sum.Text != joinText(chunks) || sum.Usage.CompletionTokens == 0 {
			t.Errorf("%q: summary %+v of chunks %q", prompt, sum, joinText(chunks))
		}
		for _, c := range chunks {
			if c.Session != "s1" || c.RequestID != sum.ID {
				t.Errorf("token reply of session %q, request %q; want s1, %s", c.Session, c.RequestID, sum.ID)
			}
		}
		segs, ssum, err := speech.generation(t, nil)
		if err != nil {
			t.Fatalf("%q: speech: %v", prompt, err)
		}
		if ssum.ID != sum.ID || ssum.Text != sum.Text {
			t.Errorf("speech done %+v, tokens done %+v", ssum, sum)
		}
		return sum, joinText(segs)
	}
	sum1, said1 := turn("The committee")
	if said1 != sum1.Text {
		t.Errorf("speech segments %q, want the text %q", said1, sum1.Text)
	}
	sum2, said2 := turn("He said that")
	if said2 != sum2.Text {
		t.Errorf("speech segments %q, want the text %q", said2, sum2.Text)
	}
	conv, err := render([]api.Message{{Role: "user", Content: "The committee"}, {Role: "assistant", Content: sum1.Text}, {Role: "user", Content: "He said that"}})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := f.e.Encode(conv, true)
	if err != nil {
		t.Fatal(err)
	}
	if sum2.Usage.PromptTokens != len(ids) {
		t.Errorf("second turn: %d prompt tokens, want %d (the conversation %q)", sum2.Usage.PromptTokens, len(ids), conv)
	}
	first, err := f.e.Encode("He said that", true)
	if err != nil {
		t.Fatal(err)
	}
	if sum2.Usage.PromptTokens <= len(first) {
		t.Errorf("second turn: %d prompt tokens: it does not see the first turn", sum2.Usage.PromptTokens)
	}
	// Plain text is a user turn too.
	if err := sess.PostText("The jury said"); err != nil {
		t.Fatal(err)
	}
	if _, sum, err := tokens.generation(t, nil); err != nil || sum.Usage.PromptTokens <= sum2.Usage.TotalTokens {
		t.Errorf("plain-text turn: %+v, %v", sum, err)
	}
	if _, _, err := speech.generation(t, nil); err != nil {
		t.Errorf("plain-text turn, speech: %v", err)
	}
	// Bad prompts are answered on the tokens subject.
	for _, bad := range []struct{ data, want string }{
		{"caf\xe9", "not valid UTF-8"},
		{"  \n", "empty prompt"},
		{`{"prompt": "x", "max_tokens": 0}`, "max_tokens"},
		{`{"prompt": "x", "colour": "red"}`, "colour"},
	} {
		if err := f.nc.Publish(api.SessionSubject("s1", api.SessionPrompt), []byte(bad.data)); err != nil {
			t.Fatal(err)
		}
		var se *api.ServiceError
		if _, _, err := tokens.generation(t, nil); !errors.As(err, &se) || se.Code != api.CodeBadRequest || !strings.Contains(se.Message, bad.want) {
			t.Errorf("session prompt %q: %v, want 400 naming %q", bad.data, err, bad.want)
		}
	}
	f.idle(t)

	attempts(t, 3, "barge-in", func(i int) bool {
		b, err := api.NewSession(f.nc.Conn, fmt.Sprint("barge", i))
		if err != nil {
			t.Fatal(err)
		}
		bt, bs := listen(t, b, api.SessionTokens), listen(t, b, api.SessionSpeech)
		if err := b.Post(api.Request{Prompt: prompts[i], MaxTokens: ptr(long)}); err != nil {
			t.Fatal(err)
		}
		cancelled := false
		_, _, err = bt.generation(t, func(r api.Reply) {
			if !cancelled {
				cancelled = true
				if err := b.Cancel(); err != nil {
					t.Error(err)
				}
			}
		})
		if err == nil {
			if _, _, err := bs.generation(t, nil); err != nil {
				t.Errorf("speech: %v", err)
			}
			return false
		}
		var se *api.ServiceError
		if !errors.As(err, &se) || se.Code != api.CodeCancelled || !strings.Contains(se.Message, "barge-in") {
			t.Errorf("barge-in ended the generation with %v, want 499 barge-in", err)
		}
		if _, _, err := bs.generation(t, nil); !errors.As(err, &se) || se.Code != api.CodeCancelled {
			t.Errorf("barge-in: speech ended with %v, want 499", err)
		}
		f.idle(t)
		return true
	})
}

// TestSessionHistory: each of many quick turns, posted as soon as the
// previous one's done arrives, sees the whole conversation before it.
func TestSessionHistory(t *testing.T) {
	f := start(t, defaults())
	render, _ := f.e.ChatRenderer()
	sess, err := api.NewSession(f.nc.Conn, "history")
	if err != nil {
		t.Fatal(err)
	}
	tokens := listen(t, sess, api.SessionTokens)
	var conv []api.Message
	for i, p := range prompts[:10] {
		if err := sess.Post(api.Request{Prompt: p, MaxTokens: ptr(4)}); err != nil {
			t.Fatal(err)
		}
		_, sum, err := tokens.generation(t, nil)
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		conv = append(conv, api.Message{Role: "user", Content: p})
		text, err := render(conv)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := f.e.Encode(text, true)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Usage.PromptTokens != len(ids) {
			t.Fatalf("turn %d: %d prompt tokens, want %d: the conversation so far, %q", i, sum.Usage.PromptTokens, len(ids), text)
		}
		conv = append(conv, api.Message{Role: "assistant", Content: sum.Text})
	}
}

// errorReply checks that msgs are exactly one error reply (seq 1) with
// code and a message containing want, before the end of the stream.
func errorReply(t *testing.T, what string, msgs []*nats.Msg, ended bool, code int, want string) {
	t.Helper()
	if !ended || len(msgs) != 1 {
		t.Errorf("%s: %d messages, end of stream %v; want one error reply, then the end", what, len(msgs), ended)
		if len(msgs) == 0 {
			return
		}
	}
	m := msgs[0]
	if api.Status(m) != api.StatusError || api.Seq(m) != 1 || m.Header.Get(api.HeaderErrorCode) != strconv.Itoa(code) {
		t.Errorf("%s: status %q, seq %d, code %q; want error, 1, %d", what, api.Status(m), api.Seq(m), m.Header.Get(api.HeaderErrorCode), code)
	}
	var eb api.ErrorBody
	if err := json.Unmarshal(m.Data, &eb); err != nil {
		t.Errorf("%s: error body %q: %v", what, m.Data, err)
	}
	if eb.Code != code || !strings.Contains(eb.Error, want) || !strings.Contains(m.Header.Get(api.HeaderError), want) {
		t.Errorf("%s: error %d %q (header %q), want %d with %q", what, eb.Code, eb.Error, m.Header.Get(api.HeaderError), code, want)
	}
	_, err := api.ParseReply(m)
	var se *api.ServiceError
	if !errors.As(err, &se) || se.Code != code {
		t.Errorf("%s: ParseReply: %v", what, err)
	}
}

// TestBadInput: every kind of bad request is answered at once with one
// error reply that names the problem, while a good request streams on.
func TestBadInput(t *testing.T) {
	s := defaults()
	s.maxPromptTokens = 16
	f := start(t, s)
	ctx := genCtx(t)
	good := make(chan stream, 1)
	go func() {
		good <- collect(ctx, f.nc.Conn, api.Request{ID: "good", Prompt: prompts[0], MaxTokens: ptr(160)}, nil)
	}()

	for _, tc := range []struct {
		name, body, want string
	}{
		{"malformed JSON", `{"prompt": "x"`, "malformed JSON"},
		{"plain text", `hello`, "malformed JSON"},
		{"NaN", `{"prompt": "x", "temperature": NaN}`, "malformed JSON"},
		{"wrong type", `{"prompt": "x", "max_tokens": "x"}`, "max_tokens"},
		{"unknown field", `{"prompt": "x", "max_token": 3}`, `"max_token": unknown field`},
		{"empty body", ``, "empty request body"},
		{"empty prompt", `{"prompt": ""}`, "empty prompt"},
		{"no prompt", `{"max_tokens": 3}`, "empty prompt"},
		{"invalid UTF-8", "{\"prompt\": \"\xff\xfe\"}", "not valid UTF-8"},
		{"prompt over the limit", `{"prompt": "` + strings.Repeat("The jury said that the city was not ", 4) + `"}`, "over the limit of 16"},
		{"prompt and messages", `{"prompt": "x", "messages": [{"role": "user", "content": "y"}]}`, "not both"},
		{"bad role", `{"messages": [{"role": "robot", "content": "y"}]}`, "messages[0].role"},
		{"max_tokens 0", `{"prompt": "x", "max_tokens": 0}`, "max_tokens"},
		{"max_tokens huge", `{"prompt": "x", "max_tokens": 1000000}`, "max_tokens"},
		{"max_tokens over int", `{"prompt": "x", "max_tokens": 1e30}`, "max_tokens"},
		{"temperature negative", `{"prompt": "x", "temperature": -0.5}`, "temperature"},
		{"top_p 0", `{"prompt": "x", "top_p": 0}`, "top_p"},
		{"top_p 1.5", `{"prompt": "x", "top_p": 1.5}`, "top_p"},
		{"speculative.k negative", `{"prompt": "x", "speculative": {"k": -1}}`, "speculative.k"},
		{"speculative.k over the server's", `{"prompt": "x", "speculative": {"k": 5}}`, "speculative.k"},
		{"speculative.draft unknown", `{"prompt": "x", "speculative": {"draft": "bundled"}}`, "speculative.draft"},
		{"bad id", `{"prompt": "x", "id": "a.b"}`, `"id"`},
	} {
		msgs, ended := rawEnd(t, f.nc.Conn, []byte(tc.body))
		errorReply(t, tc.name, msgs, ended, api.CodeBadRequest, tc.want)
	}
	// A refused request keeps its id in the reply.
	if msgs, _ := rawEnd(t, f.nc.Conn, []byte(`{"id": "mine", "prompt": ""}`)); len(msgs) > 0 && msgs[0].Header.Get(api.HeaderRequestID) != "mine" {
		t.Errorf("refused request: id header %q, want mine", msgs[0].Header.Get(api.HeaderRequestID))
	}

	select {
	case s := <-good:
		checkDone(t, "good", s)
		if s.sum != nil && s.sum.Usage.CompletionTokens != 160 {
			t.Errorf("good request: %d tokens, want 160", s.sum.Usage.CompletionTokens)
		}
	case <-time.After(bound):
		t.Fatal("the good request did not finish")
	}
	f.idle(t)
}

// TestBusy: with one slot and a queue of one, a third request is refused
// at once with 503 busy and a request reusing a waiting one's id with 409;
// cancelling the two frees everything.
func TestBusy(t *testing.T) {
	s := defaults()
	s.slots, s.queue = 1, 1
	f := start(t, s)
	p := f.srv.Pipeline()
	attempts(t, 3, "queue full", func(i int) bool {
		ctx := genCtx(t)
		running, queued := fmt.Sprint("running", i), fmt.Sprint("queued", i)
		first := make(chan struct{})
		ends := make(chan stream, 2)
		go func() {
			var once sync.Once
			ends <- collect(ctx, f.nc.Conn, api.Request{ID: running, Prompt: prompts[0], MaxTokens: ptr(long)}, func(api.Reply) { once.Do(func() { close(first) }) })
		}()
		select {
		case <-first:
		case <-time.After(bound):
			t.Fatal("no first token")
		}
		go func() {
			ends <- collect(ctx, f.nc.Conn, api.Request{ID: queued, Prompt: prompts[1], MaxTokens: ptr(long)}, nil)
		}()
		poll(t, "the second request queued", func() bool { return p.Queued() == 1 || p.Active() == 0 })
		busyMsgs, busyEnded := rawEnd(t, f.nc.Conn, body(t, api.Request{ID: fmt.Sprint("third", i), Prompt: prompts[2], MaxTokens: ptr(8)}))
		dupMsgs, dupEnded := rawEnd(t, f.nc.Conn, body(t, api.Request{ID: queued, Prompt: prompts[2], MaxTokens: ptr(8)}))
		stillBusy := p.Active() == 1 && p.Queued() == 1
		for _, id := range []string{running, queued} {
			if err := f.nc.Publish(api.CancelSubject(id), nil); err != nil {
				t.Fatal(err)
			}
		}
		var results []stream
		for range 2 {
			select {
			case s := <-ends:
				results = append(results, s)
			case <-time.After(bound):
				t.Fatal("the cancelled requests did not end")
			}
		}
		f.idle(t)
		if !stillBusy {
			return false
		}
		errorReply(t, "queue full", busyMsgs, busyEnded, api.CodeUnavailable, "busy")
		errorReply(t, "id in use", dupMsgs, dupEnded, api.CodeConflict, queued)
		for _, s := range results {
			var se *api.ServiceError
			if !errors.As(s.err, &se) || se.Code != api.CodeCancelled {
				t.Errorf("cancelled request ended with %v (%d replies), want 499", s.err, len(s.replies))
			}
		}
		return true
	})
	checkDone(t, "after", collect(genCtx(t), f.nc.Conn, api.Request{ID: "after", Prompt: prompts[3], MaxTokens: ptr(8)}, nil))
}

// TestStats: $SRV.PING, $SRV.INFO and $SRV.STATS of the micro service
// "specd" answer; the stats data carry the acceptance figures and the slot
// usage (one slot in use while a request generates, none after).
func TestStats(t *testing.T) {
	f := start(t, defaults())
	var ping micro.Ping
	request(t, f.nc.Conn, "$SRV.PING.specd", &ping)
	if ping.Name != api.ServiceName || ping.Version != api.ServiceVersion || ping.Type != micro.PingResponseType || ping.ID == "" {
		t.Errorf("ping %+v", ping)
	}
	var info micro.Info
	request(t, f.nc.Conn, "$SRV.INFO.specd", &info)
	if len(info.Endpoints) != 1 || info.Endpoints[0].Subject != api.SubjectGenerate || info.Endpoints[0].QueueGroup != api.QueueGroup {
		t.Errorf("info endpoints %+v", info.Endpoints)
	}

	ctx := genCtx(t)
	for i := range 3 {
		checkDone(t, fmt.Sprint("r", i), collect(ctx, f.nc.Conn, api.Request{ID: fmt.Sprint("r", i), Prompt: prompts[i], MaxTokens: ptr(32)}, nil))
	}
	msgs, _ := rawEnd(t, f.nc.Conn, []byte(`{}`)) // one refused request
	if len(msgs) != 1 {
		t.Fatalf("refused request: %d messages", len(msgs))
	}
	// The done message goes out as the sequence leaves the pipeline; its
	// slot is free a decoding step later at most.
	var st api.Stats
	poll(t, "the slots free in the stats", func() bool { st = stats(t, f.nc.Conn); return st.SlotsInUse == 0 })
	if st.Requests != 3 || st.Failed != 0 || st.Generated != 96 || st.Slots != 4 || st.SlotsInUse != 0 || st.Queued != 0 ||
		st.QueueLimit != 16 || st.K != 4 || st.TargetModel != f.e.TargetName || st.DraftModel != f.e.DraftName {
		t.Errorf("stats %+v", st)
	}
	if st.Drafts == 0 || st.DraftTokens == 0 || len(st.PerPosition) != 4 || st.Rate <= 0 {
		t.Errorf("stats acceptance %+v: want the model draft's figures", st.Acceptance)
	}
	checkAcceptance(t, "stats", st.Acceptance)

	attempts(t, 3, "slots in use", func(i int) bool {
		id := fmt.Sprint("busy", i)
		var during api.Stats
		s := collect(ctx, f.nc.Conn, api.Request{ID: id, Prompt: prompts[i], MaxTokens: ptr(long)}, func(r api.Reply) {
			if r.Seq == 1 {
				during = stats(t, f.nc.Conn)
				if err := f.nc.Publish(api.CancelSubject(id), nil); err != nil {
					t.Error(err)
				}
			}
		})
		if s.err == nil {
			return false
		}
		// Cancelled: the request held its slot from before its first token
		// until after the cancel, so also when the stats were taken.
		if during.SlotsInUse != 1 {
			t.Errorf("stats during a request: %d slots in use, want 1", during.SlotsInUse)
		}
		return true
	})
	f.idle(t)
	if st := stats(t, f.nc.Conn); st.SlotsInUse != 0 || st.Failed == 0 {
		t.Errorf("stats after: %+v", st)
	}
}

func request(t *testing.T, nc *nats.Conn, subject string, v any) {
	t.Helper()
	m, err := nc.Request(subject, nil, bound)
	if err != nil {
		t.Fatalf("%s: %v", subject, err)
	}
	if err := json.Unmarshal(m.Data, v); err != nil {
		t.Fatalf("%s: %q: %v", subject, m.Data, err)
	}
}

// stats are the data of the generate endpoint in $SRV.STATS.specd.
func stats(t *testing.T, nc *nats.Conn) api.Stats {
	t.Helper()
	var ms micro.Stats
	request(t, nc, "$SRV.STATS.specd", &ms)
	if ms.Name != api.ServiceName || len(ms.Endpoints) != 1 {
		t.Fatalf("stats %+v", ms)
	}
	var st api.Stats
	if err := json.Unmarshal(ms.Endpoints[0].Data, &st); err != nil {
		t.Fatalf("stats data %s: %v", ms.Endpoints[0].Data, err)
	}
	return st
}

// TestSecureConfig runs the embedded server with docs/nats-secure.conf
// (specd joins as user specd): a connection without credentials is
// refused; alice may not publish to or subscribe to bob's session, nor
// read other users' replies, but her own session and generate requests
// work end to end.
func TestSecureConfig(t *testing.T) {
	s := defaults()
	s.nats = serve.NATSConfig{Listen: "127.0.0.1:-1", ConfigFile: "../docs/nats-secure.conf", User: "specd", Password: "specd-secret"}
	s.client = []nats.Option{
		nats.UserInfo("alice", "alice-secret"),
		nats.CustomInboxPrefix("_INBOX.alice"),
		nats.PermissionErrOnSubscribe(true),
	}
	s.natsErrors = true // the refused logins below
	f := start(t, s)
	alice := f.nc

	for _, opts := range [][]nats.Option{nil, {nats.UserInfo("alice", "wrong")}, {nats.UserInfo("mallory", "x")}} {
		if nc, err := nats.Connect(f.url, append(opts, nats.Timeout(10*time.Second))...); !errors.Is(err, nats.ErrAuthorization) {
			if nc != nil {
				nc.Close()
			}
			t.Errorf("connect with %d options: %v, want an authorization violation", len(opts), err)
		}
	}

	// Alice's own session and a generate request.
	sess, err := api.NewSession(alice.Conn, "alice")
	if err != nil {
		t.Fatal(err)
	}
	tokens := listen(t, sess, api.SessionTokens)
	if err := sess.Post(api.Request{Prompt: prompts[0], MaxTokens: ptr(16)}); err != nil {
		t.Fatal(err)
	}
	if chunks, sum, err := tokens.generation(t, nil); err != nil || sum.Text != joinText(chunks) || sum.Session != "alice" {
		t.Fatalf("alice's session: %+v, %v", sum, err)
	}
	checkDone(t, "alice-gen", collect(genCtx(t), alice.Conn, api.Request{ID: "alice-gen", Prompt: prompts[1], MaxTokens: ptr(16)}, nil))

	// Bob's session is closed to her, both ways.
	if err := alice.Publish(api.SessionSubject("bob", api.SessionPrompt), []byte("hello bob")); err != nil {
		t.Fatal(err)
	}
	if err := alice.asyncError(t, nats.ErrPermissionViolation); !strings.Contains(err.Error(), "specd.v1.session.bob.prompt") {
		t.Errorf("publish to bob's prompt: %v", err)
	}
	if err := alice.Publish(api.SessionSubject("bob", api.SessionCancel), nil); err != nil {
		t.Fatal(err)
	}
	if err := alice.asyncError(t, nats.ErrPermissionViolation); !strings.Contains(err.Error(), "specd.v1.session.bob.cancel") {
		t.Errorf("publish to bob's cancel: %v", err)
	}
	for _, subject := range []string{api.SessionSubject("bob", api.SessionTokens), api.SubjectSessionPrefix + "*.tokens", "_INBOX.>", "_INBOX.bob.>"} {
		sub, err := alice.SubscribeSync(subject)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sub.NextMsg(refusal); !errors.Is(err, nats.ErrPermissionViolation) {
			t.Errorf("subscribe to %s: %v, want a permissions violation", subject, err)
		}
		_ = sub.Unsubscribe()
	}
	// Bob's own session still works for bob.
	bob := f.connect(t, nats.UserInfo("bob", "bob-secret"), nats.CustomInboxPrefix("_INBOX.bob"))
	bsess, err := api.NewSession(bob.Conn, "bob")
	if err != nil {
		t.Fatal(err)
	}
	btokens := listen(t, bsess, api.SessionTokens)
	if err := bsess.PostText(prompts[2]); err != nil {
		t.Fatal(err)
	}
	_, bsum, err := btokens.generation(t, nil)
	if err != nil || bsum.Session != "bob" {
		t.Fatalf("bob's session: %+v, %v", bsum, err)
	}
	// Alice's refused prompt never reached bob's session: his first turn
	// is his own prompt alone.
	if ids, _ := f.e.Encode(prompts[2], true); bsum.Usage.PromptTokens != len(ids) {
		t.Errorf("bob's first turn: %d prompt tokens, want %d (his prompt alone)", bsum.Usage.PromptTokens, len(ids))
	}
	f.idle(t)
}

// TestLongPromptFitsSlot: a speculative server admits every prompt plain
// decoding would (the pipeline shrinks the draft length near the end of
// the slot), and decodes it to a full context.
func TestLongPromptFitsSlot(t *testing.T) {
	s := defaults()
	s.slots, s.ctx = 1, 48
	f := start(t, s)
	words := strings.Fields(strings.Repeat("The jury said that the city was not ", 8))
	var prompt string
	n := 0
	for i := range words { // the longest prefix of at most ctx-2 tokens
		ids, err := f.e.Encode(strings.Join(words[:i+1], " "), true)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) > s.ctx-2 {
			break
		}
		prompt, n = strings.Join(words[:i+1], " "), len(ids)
	}
	if k := f.e.Options().K; n <= s.ctx-k-2 {
		t.Fatalf("prompt of %d tokens fits the old limit of ctx-k-2 = %d: the test needs a longer one", n, s.ctx-k-2)
	}
	st := collect(genCtx(t), f.nc.Conn, api.Request{ID: "long", Prompt: prompt}, nil)
	checkDone(t, "long", st)
	if st.sum == nil {
		return
	}
	if st.sum.Usage.PromptTokens != n || st.sum.FinishReason != "length" || len(st.tokens) != s.ctx-n+1 {
		t.Errorf("prompt of %d tokens in %d positions: %d prompt tokens, %d generated, finish %q; want %d generated, length",
			n, s.ctx, st.sum.Usage.PromptTokens, len(st.tokens), st.sum.FinishReason, s.ctx-n+1)
	}
}
