package serve

// The HTTP gateway: OpenAI-compatible chat and text completions (whole
// and streamed as server-sent events), models, health, Prometheus
// metrics and the page at /. It shares the pipeline, admission, limits
// and metrics with the NATS service.

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/specd-dev/specd/api"
	"github.com/specd-dev/specd/stages"
)

//go:embed page/index.html
var page embed.FS

// ModelID is the id the HTTP API serves the target under: its file name
// without directory and .gguf ("specd-target" for the bundled one).
func ModelID(target string) string {
	name := strings.TrimPrefix(target, "bundled ")
	return strings.TrimSuffix(filepath.Base(name), ".gguf")
}

// Gateway is the HTTP listener of specd serve. ListenHTTP opens it before
// the models load, so that /health answers 503 "loading" (and everything
// else 503) until a Server takes it over.
type Gateway struct {
	ln   net.Listener
	srv  *http.Server
	h    atomic.Pointer[http.Handler]
	done chan error

	closeOnce sync.Once
}

// ListenHTTP listens on addr and serves the loading answers.
func ListenHTTP(addr string) (*Gateway, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: --http %s: %w", addr, err)
	}
	g := &Gateway{ln: ln, done: make(chan error, 1)}
	loading := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "loading"})
			return
		}
		writeError(w, http.StatusServiceUnavailable, errors.New("specd is loading its models; try again shortly"))
	}))
	g.h.Store(&loading)
	g.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*g.h.Load()).ServeHTTP(w, r) })}
	go func() { g.done <- g.srv.Serve(ln) }()
	return g, nil
}

// Addr is the address the gateway listens on.
func (g *Gateway) Addr() string { return g.ln.Addr().String() }

func (g *Gateway) serve(h http.Handler) { g.h.Store(&h) }

// Close stops the gateway, letting requests in progress finish for up to
// five seconds. Later calls do nothing.
func (g *Gateway) Close() {
	g.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = g.srv.Shutdown(ctx)
		<-g.done
	})
}

// HTTPAddr is the address the HTTP gateway listens on ("" if off). Valid
// after Ready.
func (s *Server) HTTPAddr() string {
	if s.gw == nil {
		return ""
	}
	return s.gw.Addr()
}

func (s *Server) httpHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.auth(func(w http.ResponseWriter, r *http.Request) { s.completion(w, r, true) }))
	mux.HandleFunc("POST /v1/completions", s.auth(func(w http.ResponseWriter, r *http.Request) { s.completion(w, r, false) }))
	mux.HandleFunc("GET /v1/models", s.auth(s.models))
	mux.HandleFunc("GET /health", s.health)
	mux.Handle("GET /metrics", s.auth(promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}).ServeHTTP))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		b, _ := page.ReadFile("page/index.html")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(b)
	})
	// A known path with another method is a 405: the catch-all "/" below
	// matches every method, so ServeMux would answer 404 instead.
	for path, allow := range map[string]string{"/v1/chat/completions": "POST", "/v1/completions": "POST",
		"/v1/models": "GET, HEAD", "/health": "GET, HEAD", "/metrics": "GET, HEAD", "/{$}": "GET, HEAD"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("method %s is not allowed on %s: use %s", r.Method, r.URL.Path, allow))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Errorf("no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	return mux
}

// modelError is a request for a model this server does not serve (404,
// code model_not_found).
type modelError struct{ model, serves string }

func (e *modelError) Error() string {
	return fmt.Sprintf("model %q not found: this server serves %q", e.model, e.serves)
}

// auth requires the bearer key, if one is set.
func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	if s.cfg.APIKey == "" {
		return h
	}
	want := []byte("Bearer " + s.cfg.APIKey)
	return func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			writeError(w, http.StatusUnauthorized, errors.New("missing or wrong API key: send Authorization: Bearer <key>"))
			return
		}
		h(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, errorBody(status, err))
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	select {
	case <-s.ready:
	default:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "loading"})
		return
	}
	s.mu.Lock()
	draining := s.draining
	s.mu.Unlock()
	if draining {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "slots": s.p.Slots(), "slots_in_use": s.p.Active(), "queued": s.p.Queued()})
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []map[string]any{{
		"id": s.modelID, "object": "model", "created": s.started.Unix(), "owned_by": "specd",
		"meta": map[string]any{"target": s.cfg.TargetModel, "draft": s.cfg.DraftModel, "k": s.p.K(), "auto": s.p.Auto(), "slots": s.p.Slots()},
	}}})
}

// httpStatus is the HTTP status of an error code of the NATS protocol.
func httpStatus(err error) int {
	if errors.Is(err, stages.ErrBusy) {
		return http.StatusTooManyRequests
	}
	return codeOf(err)
}

// completion serves the two completion endpoints; chat tells which.
func (s *Server) completion(w http.ResponseWriter, r *http.Request, chat bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, api.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("request body over the limit of %d bytes", mbe.Limit))
			return
		}
		writeError(w, http.StatusBadRequest, fmt.Errorf("reading the request body: %w", err))
		return
	}
	var oa oaRequest
	if err := api.DecodeStrict(body, &oa); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if oa.Model != "" && oa.Model != s.modelID {
		writeError(w, http.StatusNotFound, &modelError{model: oa.Model, serves: s.modelID})
		return
	}
	req, err := oa.toAPI(chat)
	if err == nil {
		err = req.Validate(s.limits())
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	g, err := s.admit(req, admitOpts{parent: r.Context(), own: true, http: true})
	if err != nil {
		writeError(w, httpStatus(err), err)
		return
	}
	defer s.forget(g)
	defer g.cancel()
	out := &oaWriter{w: w, chat: chat, model: s.modelID, created: time.Now().Unix(), stream: oa.Stream,
		usage: oa.StreamOptions != nil && oa.StreamOptions.IncludeUsage}
	out.id = "cmpl-" + g.id
	if chat {
		out.id = "chatcmpl-" + g.id
	}
	if out.stream {
		out.start()
	}
	for {
		c, err := g.stream.Next(r.Context())
		if err != nil {
			// The client went away: its context ended the generation.
			// Wait for the final chunk (one decoding step) to account for it.
			s.abandon(g)
			return
		}
		if !c.Final {
			s.observeBlock(g, c)
			g.text.WriteString(c.Text)
			out.block(c)
			continue
		}
		g.text.WriteString(c.Text)
		sum := s.summarize(g, c)
		if c.Err != nil {
			out.fail(httpStatus(c.Err), c.Err)
			return
		}
		out.done(c, &sum)
		return
	}
}

// abandon ends a request whose HTTP client is gone: its context already
// cancelled it; the final chunk follows within one decoding step.
func (s *Server) abandon(g *gen) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		c, err := g.stream.Next(ctx)
		if err != nil {
			return
		}
		if c.Final {
			s.summarize(g, c)
			return
		}
	}
}

// oaWriter writes one OpenAI response, whole or as server-sent events.
type oaWriter struct {
	w       http.ResponseWriter
	chat    bool
	stream  bool
	usage   bool // stream_options.include_usage
	id      string
	model   string
	created int64
	sent    bool // the first streamed chunk (with the role) is out
}

func (o *oaWriter) start() {
	h := o.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	o.w.WriteHeader(http.StatusOK)
	o.flush()
}

func (o *oaWriter) flush() {
	if f, ok := o.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (o *oaWriter) event(v any) {
	b, _ := json.Marshal(v)
	_, _ = fmt.Fprintf(o.w, "data: %s\n\n", b)
	o.flush()
}

func (o *oaWriter) object() string {
	switch {
	case o.chat && o.stream:
		return "chat.completion.chunk"
	case o.chat:
		return "chat.completion"
	}
	return "text_completion"
}

// choice is a streamed choice carrying text.
func (o *oaWriter) choice(text string, finish *string) oaChoice {
	ch := oaChoice{FinishReason: finish}
	if o.chat {
		d := &oaOut{}
		if text != "" || finish == nil {
			d.Content = &text
		}
		if !o.sent {
			d.Role = "assistant"
		}
		ch.Delta = d
	} else {
		ch.Text = &text
	}
	o.sent = true
	return ch
}

// block streams one verified block (nothing when not streaming: the text
// is collected in the request).
func (o *oaWriter) block(c stages.Chunk) {
	if !o.stream {
		return
	}
	ch := o.choice(c.Text, nil)
	dl := min(max(c.DraftLen, 0), len(c.Text))
	ch.Specd = &oaSpecBlk{Draft: c.Text[:dl], Target: c.Text[dl:], Drafted: c.Drafted, Accepted: c.Accepted}
	o.event(oaResponse{ID: o.id, Object: o.object(), Created: o.created, Model: o.model, Choices: []oaChoice{ch}})
}

func (o *oaWriter) done(c stages.Chunk, sum *api.Summary) {
	reason := sum.FinishReason
	usage := &oaUsage{PromptTokens: sum.Usage.PromptTokens, CompletionTokens: sum.Usage.CompletionTokens, TotalTokens: sum.Usage.TotalTokens}
	t := timings(sum)
	if !o.stream {
		ch := oaChoice{FinishReason: &reason}
		if o.chat {
			ch.Message = &oaOut{Role: "assistant", Content: &sum.Text}
		} else {
			ch.Text = &sum.Text
		}
		writeJSON(o.w, http.StatusOK, oaResponse{ID: o.id, Object: o.object(), Created: o.created, Model: o.model,
			Choices: []oaChoice{ch}, Usage: usage, Timings: &t})
		return
	}
	ch := o.choice(c.Text, &reason)
	o.event(oaResponse{ID: o.id, Object: o.object(), Created: o.created, Model: o.model, Choices: []oaChoice{ch}, Timings: &t})
	if o.usage {
		o.event(oaResponse{ID: o.id, Object: o.object(), Created: o.created, Model: o.model, Choices: []oaChoice{}, Usage: usage})
	}
	_, _ = io.WriteString(o.w, "data: [DONE]\n\n")
	o.flush()
}

func (o *oaWriter) fail(status int, err error) {
	if !o.stream {
		writeError(o.w, status, err)
		return
	}
	o.event(errorBody(status, err))
	_, _ = io.WriteString(o.w, "data: [DONE]\n\n")
	o.flush()
}
