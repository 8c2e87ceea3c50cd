// Package serve is specd's NATS service: protocol v1 (package api) over
// one long-running stages.Pipeline. It starts an embedded nats-server or
// joins a deployment, serves the micro service "specd" (endpoint
// specd.v1.generate in a queue group, so N processes share the load),
// sessions (prompt, tokens, speech, cancel), cancel by request id, and
// drains gracefully. It does no model maths: the pipeline, a tokenizer
// function and a chat renderer are given to it.
//
// One request, one owner: the goroutine that streams a request's reply
// (pump) owns it from admission to its final message, on every path
// (done, stop, error, cancel, client gone, deadline, shutdown).
package serve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/specd-dev/specd/api"
	"github.com/specd-dev/specd/stages"
)

// Config configures a Server.
type Config struct {
	Pipeline *stages.Pipeline // not yet running; the server runs it
	// Encode tokenizes a prompt (with the model's BOS rule).
	Encode func(text string) ([]int32, error)
	// Render renders chat messages as a prompt (the model's chat template).
	Render func(msgs []api.Message) (string, error)
	// TargetModel and DraftModel name the models in stats and logs.
	TargetModel, DraftModel string

	NATS NATSConfig

	MaxPromptTokens  int           // longest prompt (default: what fits a slot)
	MaxTokens        int           // largest max_tokens (default: a slot's positions)
	DefaultMaxTokens int           // max_tokens when a request has none (default 256)
	RequestTimeout   time.Duration // deadline of requests without timeout_ms (default 5 min)
	DrainTimeout     time.Duration // shutdown: time in-flight requests get to finish (default 30 s)
	MaxSessions      int           // sessions kept (default 1024)
	SessionIdle      time.Duration // a session idle this long is forgotten (default 30 min)

	// Durable also takes generate requests from the JetStream work queue
	// api.DurableStream (durable.go); the embedded server then runs
	// JetStream.
	Durable bool
	// AckWait is how long JetStream waits for a durable request's ack (or
	// a sign of progress) before it redelivers it (default 10 s).
	AckWait time.Duration
	// MaxAckPending bounds the durable requests all workers hold at once
	// (default 1024); each worker pulls only as many as it has free slots.
	MaxAckPending int
	// TokenStreamAge keeps session token streams for replay (Durable;
	// default 1 h).
	TokenStreamAge time.Duration

	// HTTPAddr is the OpenAI-compatible gateway's HOST:PORT ("": off),
	// unless HTTP, a gateway opened before the models loaded, is given.
	HTTPAddr string
	HTTP     *Gateway
	// APIKey, if set, is the bearer key the HTTP API requires (not /health).
	APIKey string
	// ModelID is the model's id in the HTTP API (default: ModelID of
	// TargetModel).
	ModelID string

	Log zerolog.Logger
}

// Errors that end requests.
var (
	ErrShutdown   = errors.New("serve: the server is shutting down")
	ErrCancelled  = errors.New("serve: cancelled by the client")
	ErrBargeIn    = errors.New("serve: cancelled: the session was interrupted (barge-in)")
	ErrClientGone = errors.New("serve: the client went away (no interest in the reply subject)")
	ErrOutage     = errors.New("serve: the NATS connection was lost")
)

// Server is a running specd NATS service.
type Server struct {
	cfg  Config
	p    *stages.Pipeline
	log  zerolog.Logger
	srv  *server.Server // embedded; nil when joining a deployment
	acc  *server.Account
	nc   *nats.Conn
	svc  micro.Service
	subs []*nats.Subscription

	mu       sync.Mutex
	active   map[string]*gen // by request id
	sessions map[string]*session
	started  time.Time
	draining bool

	pumps    sync.WaitGroup // one per request in flight
	ready    chan struct{}
	ncClosed chan struct{}
	dur      *durable
	metrics  *metrics
	modelID  string
	gw       *Gateway
}

// New checks cfg and returns a server; Run starts it.
func New(cfg Config) (*Server, error) {
	if cfg.Pipeline == nil || cfg.Encode == nil {
		return nil, errors.New("serve: a pipeline and a tokenizer are required")
	}
	p := cfg.Pipeline
	if cfg.MaxPromptTokens <= 0 {
		// What plain decoding admits: the pipeline shrinks a sequence's
		// draft length to the positions left near the end of its slot.
		cfg.MaxPromptTokens = p.MaxPos()
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = p.MaxPos()
	}
	if cfg.DefaultMaxTokens <= 0 {
		cfg.DefaultMaxTokens = min(256, cfg.MaxTokens)
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 5 * time.Minute
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 30 * time.Second
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = 1024
	}
	if cfg.SessionIdle <= 0 {
		cfg.SessionIdle = 30 * time.Minute
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = 10 * time.Second
	}
	if cfg.MaxAckPending <= 0 {
		cfg.MaxAckPending = 1024
	}
	if cfg.TokenStreamAge <= 0 {
		cfg.TokenStreamAge = time.Hour
	}
	cfg.NATS.JetStream = cfg.NATS.JetStream || cfg.Durable
	if cfg.Render == nil {
		return nil, errors.New("serve: a chat renderer is required")
	}
	s := &Server{cfg: cfg, p: p, log: cfg.Log, active: map[string]*gen{}, sessions: map[string]*session{}, ready: make(chan struct{}), ncClosed: make(chan struct{})}
	s.modelID = cfg.ModelID
	if s.modelID == "" {
		s.modelID = ModelID(cfg.TargetModel)
	}
	s.metrics = newMetrics(s)
	return s, nil
}

// Ready is closed once the server takes requests.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// ClientURL is the embedded server's client URL ("" when joining a
// deployment). Valid after Ready.
func (s *Server) ClientURL() string {
	if s.srv == nil {
		return ""
	}
	return s.srv.ClientURL()
}

// Conn is the server's own NATS connection. Valid after Ready.
func (s *Server) Conn() *nats.Conn { return s.nc }

// Pipeline is the pipeline the server runs.
func (s *Server) Pipeline() *stages.Pipeline { return s.p }

// Run serves until ctx ends, then drains: it stops taking requests, gives
// those in flight DrainTimeout to finish, ends the rest with ErrShutdown,
// and closes. It returns the pipeline's error, if it failed.
func (s *Server) Run(ctx context.Context) error {
	s.started = time.Now()
	s.gw = s.cfg.HTTP
	if s.gw == nil && s.cfg.HTTPAddr != "" {
		var err error
		if s.gw, err = ListenHTTP(s.cfg.HTTPAddr); err != nil {
			return err
		}
	}
	if s.gw != nil {
		s.gw.serve(s.httpHandler()) // /health says "loading" until Ready
		defer s.gw.Close()
	}
	if err := s.connect(); err != nil {
		return err
	}
	defer s.closeNATS()
	// The pipeline outlives ctx: draining needs it.
	pctx, pcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer pcancel()
	g, gctx := errgroup.WithContext(pctx)
	pipeDone := make(chan struct{})
	g.Go(func() error {
		defer close(pipeDone)
		return s.p.Serve(gctx)
	})
	if err := s.listen(); err != nil {
		s.p.Close()
		pcancel()
		_ = g.Wait()
		return err
	}
	g.Go(func() error { s.sweepSessions(gctx); return nil })
	s.log.Info().Str("nats", s.describeNATS()).Str("http", s.HTTPAddr()).Int("slots", s.p.Slots()).Int("k", s.p.K()).Bool("auto", s.p.Auto()).
		Str("target", s.cfg.TargetModel).Str("draft", s.cfg.DraftModel).Msg("serving")
	close(s.ready)

	select {
	case <-ctx.Done():
	case <-pipeDone:
	}
	s.drain(pipeDone)
	pcancel()
	err := g.Wait()
	s.pumps.Wait()
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// drain stops intake and waits for the requests in flight.
func (s *Server) drain(pipeDone <-chan struct{}) {
	s.mu.Lock()
	s.draining = true
	n := len(s.active)
	s.mu.Unlock()
	s.log.Info().Int("in_flight", n).Dur("drain_timeout", s.cfg.DrainTimeout).Msg("draining")
	if s.svc != nil {
		_ = s.svc.Stop()
	}
	for _, sub := range s.subs {
		if sub.Subject == api.SubjectCancelPrefix+"*" || sub.Subject == api.SubjectSessionPrefix+"*."+api.SessionCancel {
			continue // cancels still work while draining
		}
		_ = sub.Unsubscribe()
	}
	s.dur.stop()
	s.p.Close()
	t := time.NewTimer(s.cfg.DrainTimeout)
	defer t.Stop()
	select {
	case <-pipeDone:
		return
	case <-t.C:
	}
	s.mu.Lock()
	n = len(s.active)
	s.mu.Unlock()
	s.log.Warn().Int("in_flight", n).Msg("drain timeout: ending the remaining requests")
	s.p.CancelAll(ErrShutdown)
	<-pipeDone // every request ends within one decoding step
}

func (s *Server) describeNATS() string {
	if s.srv != nil {
		return "embedded " + s.srv.ClientURL()
	}
	return s.nc.ConnectedUrlRedacted()
}

// connect starts the embedded server (unless joining a deployment) and
// connects to NATS.
func (s *Server) connect() error {
	c := s.cfg.NATS
	opts, err := clientOptions(c)
	if err != nil {
		return err
	}
	opts = append(opts,
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if nc.IsDraining() || nc.IsClosed() {
				return // specd's own shutdown
			}
			s.log.Warn().Err(err).Msg("NATS connection lost: ending the requests in flight")
			s.cancelAll(ErrOutage)
		}),
		nats.ClosedHandler(func(*nats.Conn) { close(s.ncClosed) }),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			s.log.Info().Str("url", nc.ConnectedUrlRedacted()).Msg("NATS reconnected")
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subj := ""
			if sub != nil {
				subj = sub.Subject
			}
			s.log.Warn().Err(err).Str("subject", subj).Msg("NATS error")
		}),
	)
	url := joinURLs(c.URLs)
	if len(c.URLs) == 0 {
		if s.srv, err = startEmbedded(c, s.log); err != nil {
			return err
		}
		opts = append(opts, nats.InProcessServer(s.srv))
		url = s.srv.ClientURL()
	}
	if s.nc, err = nats.Connect(url, opts...); err != nil {
		if s.srv != nil {
			s.srv.Shutdown()
		}
		return fmt.Errorf("serve: connecting to NATS at %s: %w", url, err)
	}
	if s.srv != nil {
		s.acc = s.ownAccount()
	}
	return nil
}

// ownAccount is the embedded server's account of specd's connection,
// where the reply subjects of its clients live.
func (s *Server) ownAccount() *server.Account {
	cid, err := s.nc.GetClientID()
	if err == nil {
		if cz, err := s.srv.Connz(&server.ConnzOptions{CID: cid, Username: true}); err == nil && len(cz.Conns) == 1 {
			if acc, err := s.srv.LookupAccount(cz.Conns[0].Account); err == nil {
				return acc
			}
		}
	}
	return s.srv.GlobalAccount()
}

func (s *Server) closeNATS() {
	for _, sub := range s.subs {
		_ = sub.Unsubscribe()
	}
	if s.nc != nil {
		if s.nc.Drain() == nil {
			t := time.NewTimer(5 * time.Second)
			select {
			case <-s.ncClosed:
			case <-t.C:
			}
			t.Stop()
		}
		s.nc.Close()
	}
	if s.srv != nil {
		s.srv.Shutdown()
		s.srv.WaitForShutdown()
	}
}

// listen registers the micro service and the subscriptions.
func (s *Server) listen() error {
	svc, err := micro.AddService(s.nc, micro.Config{
		Name:         api.ServiceName,
		Version:      api.ServiceVersion,
		Description:  "speculative-decoding LLM: streamed generations, sessions, cancel",
		QueueGroup:   api.QueueGroup,
		StatsHandler: func(*micro.Endpoint) any { return s.Stats() },
		Metadata:     map[string]string{"target": s.cfg.TargetModel, "draft": s.cfg.DraftModel},
	})
	if err != nil {
		return fmt.Errorf("serve: micro service: %w", err)
	}
	s.svc = svc
	if err := svc.AddEndpoint("generate", micro.HandlerFunc(s.handleGenerate), micro.WithEndpointSubject(api.SubjectGenerate),
		micro.WithEndpointMetadata(map[string]string{"description": "stream a completion: one message per verified block, then done/error, then an empty message"})); err != nil {
		return fmt.Errorf("serve: endpoint %s: %w", api.SubjectGenerate, err)
	}
	type sub struct {
		subject, queue string
		h              nats.MsgHandler
	}
	for _, x := range []sub{
		{api.SubjectCancelPrefix + "*", "", s.handleCancel},
		{api.SubjectSessionPrefix + "*." + api.SessionPrompt, api.QueueGroup, s.handleSessionPrompt},
		{api.SubjectSessionPrefix + "*." + api.SessionCancel, "", s.handleSessionCancel},
	} {
		var ns *nats.Subscription
		if x.queue != "" {
			ns, err = s.nc.QueueSubscribe(x.subject, x.queue, x.h)
		} else {
			ns, err = s.nc.Subscribe(x.subject, x.h)
		}
		if err != nil {
			return fmt.Errorf("serve: subscribe %s: %w", x.subject, err)
		}
		s.subs = append(s.subs, ns)
	}
	if s.cfg.Durable {
		if s.dur, err = startDurable(s); err != nil {
			return err
		}
	}
	return s.nc.Flush()
}

// Stats are the service's figures ($SRV.STATS data).
func (s *Server) Stats() api.Stats {
	m := s.p.Metrics().Snapshot()
	s.mu.Lock()
	sessions := len(s.sessions)
	s.mu.Unlock()
	st := api.Stats{
		Acceptance:  acceptance(m.Drafts, m.DraftTokens, m.Accepted, m.AcceptedAt),
		Requests:    m.Requests,
		Failed:      m.Failed,
		Generated:   m.Generated,
		Slots:       s.p.Slots(),
		SlotsInUse:  s.p.Active(),
		Queued:      s.p.Queued(),
		QueueLimit:  s.p.QueueLimit(),
		Sessions:    sessions,
		K:           s.p.K(),
		Auto:        s.p.Auto(),
		TargetModel: s.cfg.TargetModel,
		DraftModel:  s.cfg.DraftModel,
	}
	return st
}

func acceptance(drafts, draftTokens, accepted int, at []int) api.Acceptance {
	a := api.Acceptance{Drafts: drafts, DraftTokens: draftTokens, Accepted: accepted, MeanAcceptanceLength: 1, PerPosition: []float64{}}
	if draftTokens > 0 {
		a.Rate = float64(accepted) / float64(draftTokens)
	}
	if drafts > 0 {
		a.MeanAcceptanceLength = 1 + float64(accepted)/float64(drafts)
		for _, n := range at {
			a.PerPosition = append(a.PerPosition, float64(n)/float64(drafts))
		}
	}
	return a
}

// cancelAll ends every request in flight with cause.
func (s *Server) cancelAll(cause error) {
	s.mu.Lock()
	gens := make([]*gen, 0, len(s.active))
	for _, g := range s.active {
		gens = append(gens, g)
	}
	s.mu.Unlock()
	for _, g := range gens {
		g.stream.Cancel(cause)
	}
}
