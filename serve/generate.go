package serve

// The generate endpoint: admission (decode, validate, tokenize, limits,
// deduplication, queue), the pump that streams one request's reply, and
// cancel by request id.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/nats-io/nuid"

	"github.com/specd-dev/specd/api"
	"github.com/specd-dev/specd/stages"
)

// gen is one request in flight, owned by its pump.
type gen struct {
	id, session string
	reply       string // the generate request's reply subject ("" for sessions)
	stream      *stages.Stream
	cancel      context.CancelFunc
	prompt      int // prompt tokens
	arrived     time.Time
	firstToken  time.Time
	lastBlock   time.Time

	seq       int // messages published on the reply or tokens subject
	speechSeq int // on the speech subject
	text      strings.Builder
	speech    *speechCutter // sessions only
	job       *durableJob   // durable requests only
	http      bool          // an HTTP request (its handler reads the stream)
	done      chan struct{} // closed when the pump has finished
	result    *api.Summary  // set before done closes (nil on error)
	err       error
}

// requestError is an admission failure with its wire code.
type requestError struct {
	code int
	err  error
}

func (e *requestError) Error() string { return e.err.Error() }
func (e *requestError) Unwrap() error { return e.err }

func reqErr(code int, format string, args ...any) error {
	return &requestError{code: code, err: fmt.Errorf(format, args...)}
}

func (s *Server) limits() api.Limits {
	return api.Limits{MaxTokens: s.cfg.MaxTokens, K: s.p.K(), Auto: s.p.Auto()}
}

// handleGenerate serves specd.v1.generate. It returns at once: the reply
// streams from the request's pump.
func (s *Server) handleGenerate(req micro.Request) {
	r, err := api.DecodeRequest(req.Data())
	if err == nil {
		err = r.Validate(s.limits())
	}
	if err == nil {
		_, err = s.admit(r, admitOpts{reply: req.Reply()})
	}
	if err != nil {
		id := r.ID
		code := codeOf(err)
		s.log.Info().Str("id", id).Int("code", code).Err(err).Msg("request refused")
		h := micro.Headers{api.HeaderStatus: {api.StatusError}, api.HeaderSeq: {"1"}}
		if id != "" {
			h[api.HeaderRequestID] = []string{id}
		}
		body, _ := json.Marshal(api.ErrorBody{ID: id, Code: code, Error: err.Error()})
		_ = req.Error(strconv.Itoa(code), err.Error(), body, micro.WithHeaders(h))
		_ = req.Respond(nil) // end of stream
	}
}

// admitOpts say where a request came from and where its reply goes.
type admitOpts struct {
	reply   string      // the reply subject of a generate request
	session *session    // the session of a session prompt (reply unused)
	text    string      // the prompt, already rendered ("": from the request)
	job     *durableJob // the JetStream message of a durable request
	// parent, if set, is the request's context (an HTTP request's: its
	// end cancels the generation).
	parent context.Context
	// own: the caller reads the stream itself (HTTP); no pump is started.
	own bool
	// http marks an HTTP request (in logs).
	http bool
}

// admit turns a validated request into a pipeline request, queues it and
// starts its pump.
func (s *Server) admit(r api.Request, o admitOpts) (*gen, error) {
	sess, reply, text := o.session, o.reply, o.text
	id := r.ID
	if id == "" {
		id = nuid.Next()
	}
	if text == "" {
		text = r.Prompt
		if len(r.Messages) > 0 {
			var err error
			if text, err = s.cfg.Render(r.Messages); err != nil {
				return nil, reqErr(api.CodeBadRequest, "messages: %v", err)
			}
		}
	}
	ids, err := s.cfg.Encode(text)
	if err != nil {
		return nil, reqErr(api.CodeBadRequest, "prompt: %v", err)
	}
	if len(ids) == 0 {
		return nil, reqErr(api.CodeBadRequest, "prompt: no tokens")
	}
	if len(ids) > s.cfg.MaxPromptTokens {
		return nil, reqErr(api.CodeBadRequest, "prompt of %d tokens is over the limit of %d", len(ids), s.cfg.MaxPromptTokens)
	}
	sr := stages.Request{ID: id, PromptIDs: ids, MaxTokens: s.cfg.DefaultMaxTokens, Stop: r.Stop, Priority: r.Priority}
	if r.MaxTokens != nil {
		sr.MaxTokens = *r.MaxTokens
	}
	sr.Params.TopP = 1
	if r.Temperature != nil {
		sr.Params.Temp = float32(*r.Temperature)
	}
	if r.TopK != nil {
		sr.Params.TopK = *r.TopK
	}
	if r.TopP != nil {
		sr.Params.TopP = float32(*r.TopP)
	}
	if r.Seed != nil {
		sr.Params.Seed = *r.Seed
	} else {
		sr.Params.Seed = rand.Uint64()
	}
	if sp := r.Speculative; sp != nil {
		if sp.K != nil {
			sr.K = *sp.K
			if sr.K == 0 {
				sr.Draft = stages.DraftNone
			}
		}
		if sp.PMin != nil {
			v := float32(*sp.PMin)
			sr.PMin = &v
		}
		sr.Adaptive, sr.Auto = sp.Adaptive, sp.Auto
		if sp.Draft != "" && sr.Draft == "" {
			sr.Draft = stages.DraftMode(sp.Draft)
		}
		if sr.Draft == stages.DraftModel && !s.p.HasDrafter() {
			return nil, reqErr(api.CodeBadRequest, "speculative.draft %q: this server has no draft model", sp.Draft)
		}
	}
	timeout := s.cfg.RequestTimeout
	if r.TimeoutMS > 0 {
		timeout = time.Duration(r.TimeoutMS) * time.Millisecond
	}
	g := &gen{id: id, reply: reply, prompt: len(ids), arrived: time.Now(), done: make(chan struct{}), job: o.job, http: o.http}
	if sess != nil {
		g.session, g.speech = sess.id, &speechCutter{}
	}
	s.mu.Lock()
	switch {
	case s.draining:
		s.mu.Unlock()
		return nil, reqErr(api.CodeUnavailable, "%v", ErrShutdown)
	case s.active[id] != nil:
		s.mu.Unlock()
		return nil, reqErr(api.CodeConflict, "request id %q is already generating", id)
	}
	s.active[id] = g
	s.mu.Unlock()
	parent := o.parent
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithTimeoutCause(parent, timeout, fmt.Errorf("deadline of %v passed: %w", timeout, context.DeadlineExceeded))
	st, err := s.p.TrySubmit(ctx, sr)
	if err != nil {
		cancel()
		s.forget(g)
		switch {
		case errors.Is(err, stages.ErrBusy):
			return nil, &requestError{code: api.CodeUnavailable, err: fmt.Errorf("busy: %d requests are waiting for %d slots; try again: %w", s.p.Queued(), s.p.Slots(), stages.ErrBusy)}
		case errors.Is(err, stages.ErrClosed):
			return nil, reqErr(api.CodeUnavailable, "%v", ErrShutdown)
		}
		return nil, err
	}
	g.stream, g.cancel = st, cancel
	if !o.own {
		s.pumps.Go(func() { s.pump(g) })
	}
	return g, nil
}

// observeBlock notes a block's arrival (TTFT, inter-token latency).
func (s *Server) observeBlock(g *gen, c stages.Chunk) {
	now := time.Now()
	first := g.firstToken.IsZero()
	since := g.lastBlock
	if first {
		g.firstToken, since = now, g.arrived
	}
	g.lastBlock = now
	s.metrics.block(first, now.Sub(since), len(c.Tokens))
}

func (s *Server) forget(g *gen) {
	s.mu.Lock()
	if s.active[g.id] == g {
		delete(s.active, g.id)
	}
	s.mu.Unlock()
}

// clientCheck is how often a pump waiting for its next block checks that
// its client is still there.
const clientCheck = time.Second

// pump streams g's chunks until its final one.
func (s *Server) pump(g *gen) {
	defer close(g.done)
	defer s.forget(g)
	defer g.cancel()
	for {
		g.job.keepAlive()
		ctx, cancel := context.WithTimeout(context.Background(), clientCheck)
		c, err := g.stream.Next(ctx)
		cancel()
		switch {
		case errors.Is(err, io.EOF):
			return
		case err != nil: // no block for a while: is anyone listening?
			if s.gone(g) {
				g.stream.Cancel(ErrClientGone)
			}
			continue
		}
		if c.Final {
			if g.job.retry(c.Err) {
				continue // redelivered to another worker: no final message from this one
			}
			s.finish(g, c)
			g.job.ack()
			continue // Next returns io.EOF
		}
		s.observeBlock(g, c)
		s.publishBlock(g, c.Text, c.Tokens, c.Drafted, c.Accepted)
		if s.gone(g) {
			g.stream.Cancel(ErrClientGone)
		}
	}
}

// gone reports whether g's client has vanished: on the embedded server,
// nobody is subscribed to its reply subject any more. (Joined to a
// deployment, specd cannot see other clients' subscriptions; the
// request's deadline bounds it there.)
func (s *Server) gone(g *gen) bool {
	return s.acc != nil && g.reply != "" && !s.acc.SubscriptionInterest(g.reply)
}

// subject is where g's stream goes.
func (s *Server) subject(g *gen) string {
	if g.session != "" {
		return api.SessionSubject(g.session, api.SessionTokens)
	}
	return g.reply
}

func (s *Server) header(g *gen, seq int, status string) nats.Header {
	h := nats.Header{
		api.HeaderRequestID: {g.id},
		api.HeaderSeq:       {strconv.Itoa(seq)},
		api.HeaderStatus:    {status},
	}
	if g.job != nil {
		h[api.HeaderAttempt] = []string{strconv.Itoa(g.job.attempt)}
	}
	if g.session != "" {
		h[api.HeaderSession] = []string{g.session}
	}
	return h
}

func (s *Server) publish(subject string, h nats.Header, data []byte) {
	if err := s.nc.PublishMsg(&nats.Msg{Subject: subject, Header: h, Data: data}); err != nil {
		s.log.Warn().Err(err).Str("subject", subject).Msg("publish failed")
	}
}

// publishBlock sends one token message (and, in a session, the speech
// segments it completes).
func (s *Server) publishBlock(g *gen, text string, tokens []int32, drafted, accepted int) {
	g.text.WriteString(text)
	if tokens == nil {
		tokens = []int32{}
	}
	body, _ := json.Marshal(api.Chunk{Text: text, Tokens: tokens})
	g.seq++
	h := s.header(g, g.seq, api.StatusToken)
	h[api.HeaderDrafted] = []string{strconv.Itoa(drafted)}
	h[api.HeaderAccepted] = []string{strconv.Itoa(accepted)}
	s.publish(s.subject(g), h, body)
	if g.speech != nil {
		for _, seg := range g.speech.add(text) {
			s.publishSpeech(g, seg)
		}
	}
}

func (s *Server) publishSpeech(g *gen, seg string) {
	body, _ := json.Marshal(api.Chunk{Text: seg, Tokens: []int32{}})
	g.speechSeq++
	s.publish(api.SessionSubject(g.session, api.SessionSpeech), s.header(g, g.speechSeq, api.StatusToken), body)
}

// finish publishes g's final message (done or error) and the empty
// end-of-stream message, and logs the request.
func (s *Server) finish(g *gen, c stages.Chunk) {
	if c.Text != "" {
		s.publishBlock(g, c.Text, nil, 0, 0)
	}
	if g.speech != nil {
		if seg := g.speech.flush(); seg != "" {
			s.publishSpeech(g, seg)
		}
	}
	sum := s.summarize(g, c)
	subject := s.subject(g)
	if c.Err != nil {
		g.seq++
		h := s.header(g, g.seq, api.StatusError)
		body := errorMsg(h, g.id, c.Err)
		s.publish(subject, h, body)
		if g.speech != nil {
			g.speechSeq++
			s.publish(api.SessionSubject(g.session, api.SessionSpeech), h, body)
		}
	} else {
		body, _ := json.Marshal(sum)
		g.seq++
		s.publish(subject, s.header(g, g.seq, api.StatusDone), body)
		if g.speech != nil {
			g.speechSeq++
			s.publish(api.SessionSubject(g.session, api.SessionSpeech), s.header(g, g.speechSeq, api.StatusDone), body)
		}
	}
	s.publish(subject, nil, nil)
	if g.speech != nil {
		s.publish(api.SessionSubject(g.session, api.SessionSpeech), nil, nil)
	}
}

// summarize makes g's summary from its final chunk c, observes the
// request's metrics and logs its line: every front end ends a request
// through here.
func (s *Server) summarize(g *gen, c stages.Chunk) api.Summary {
	st := c.Stats
	if st == nil {
		st = &stages.RequestStats{}
	}
	dur := time.Since(g.arrived)
	sum := api.Summary{
		ID: g.id, Session: g.session, FinishReason: c.Reason, Text: g.text.String(),
		Usage:      api.Usage{PromptTokens: g.prompt, CompletionTokens: st.Generated, TotalTokens: g.prompt + st.Generated},
		Acceptance: acceptance(st.Drafts, st.DraftTokens, st.Accepted, st.AcceptedAt),
		DurationMS: ms(dur),
	}
	if !g.firstToken.IsZero() {
		sum.TTFTMS = ms(g.firstToken.Sub(g.arrived))
	}
	if dur > 0 {
		sum.TokensPerSecond = float64(st.Generated) / dur.Seconds()
	}
	g.result, g.err = &sum, c.Err
	s.metrics.finish(g.prompt, c.Reason, st, dur)
	ev := s.log.Info()
	if c.Err != nil {
		ev = ev.Err(c.Err).Int("code", codeOf(c.Err))
	}
	ev.Str("id", g.id).Str("session", g.session).Str("via", g.via()).Int("prompt_tokens", g.prompt).Int("generated", st.Generated).
		Float64("acceptance", sum.Acceptance.Rate).Float64("ttft_ms", sum.TTFTMS).Float64("tok_s", sum.TokensPerSecond).
		Str("finish", c.Reason).Msg("request")
	return sum
}

// via names g's front end in the log.
func (g *gen) via() string {
	switch {
	case g.http:
		return "http"
	case g.job != nil:
		return "durable"
	case g.session != "":
		return "session"
	}
	return "nats"
}

// errorMsg completes h (a reply message's headers) as an error message for
// err, with micro's error headers, and returns its body.
func errorMsg(h nats.Header, id string, err error) []byte {
	code := codeOf(err)
	h[api.HeaderStatus] = []string{api.StatusError}
	h[api.HeaderError] = []string{err.Error()}
	h[api.HeaderErrorCode] = []string{strconv.Itoa(code)}
	body, _ := json.Marshal(api.ErrorBody{ID: id, Code: code, Error: err.Error()})
	return body
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// codeOf maps an error to its wire code.
func codeOf(err error) int {
	var re *requestError
	switch {
	case errors.As(err, &re):
		return re.code
	case errors.Is(err, api.ErrBadRequest), errors.Is(err, stages.ErrRequest):
		return api.CodeBadRequest
	case errors.Is(err, context.DeadlineExceeded):
		return api.CodeTimeout
	case errors.Is(err, ErrCancelled), errors.Is(err, ErrBargeIn), errors.Is(err, ErrClientGone), errors.Is(err, context.Canceled):
		return api.CodeCancelled
	case errors.Is(err, ErrShutdown), errors.Is(err, ErrOutage), errors.Is(err, stages.ErrBusy), errors.Is(err, stages.ErrClosed):
		return api.CodeUnavailable
	}
	return api.CodeInternal
}

// handleCancel serves specd.v1.cancel.<id>: every worker hears it, the
// one running the request cancels it (and answers, if asked).
func (s *Server) handleCancel(m *nats.Msg) {
	id := strings.TrimPrefix(m.Subject, api.SubjectCancelPrefix)
	s.mu.Lock()
	g := s.active[id]
	s.mu.Unlock()
	if g == nil {
		return
	}
	g.stream.Cancel(ErrCancelled)
	s.log.Info().Str("id", id).Msg("cancel")
	if m.Reply != "" {
		_ = m.Respond([]byte(`{"cancelled":true,"id":` + strconv.Quote(id) + `}`))
	}
}
