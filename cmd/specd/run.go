package main

// specd run: a client of specd serve (package api).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/specd-dev/specd/api"
	"github.com/specd-dev/specd/serve"
)

func init() {
	register(command{name: "run", summary: "send a prompt to specd serve over NATS and print the tokens as they arrive", run: runRun})
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", stderr)
	var nc serve.NATSConfig
	var urls string
	addNATSFlags(fs, &nc, &urls)
	session := fs.String("session", "", "post the prompt to session `S` (a conversation: later prompts see earlier turns) and print its token stream")
	listen := fs.String("listen", "", "print session `S`'s stream (every generation, as a voice assistant sees it) until interrupted")
	speech := fs.Bool("speech", false, "with --listen or --session: print the speech subject (text cut at sentence and clause ends), one segment per line")
	asJSON := fs.Bool("json", false, "print every reply message as a JSON line (headers and body) instead of text")
	n := fs.Int("n", 0, "max_tokens (0: the server's default)")
	temp := fs.Float64("temp", 0, "sampling temperature; 0 is greedy")
	seed := fs.Uint64("seed", 0, "random seed for sampling")
	id := fs.String("id", "", "request id (for specd.v1.cancel.<id>); default: one is made")
	timeout := fs.Duration("timeout", api.DefaultTimeout, "give up after this long")
	lf := addLogFlags(fs)
	durable := fs.Bool("durable", false, "send through the JetStream work queue of specd serve --durable (survives a worker's death; the id deduplicates)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: specd run [--nats URL] [--session S] [--json] TEXT")
		fmt.Fprintln(stderr, "       specd run [--nats URL] --listen S [--speech]")
		fmt.Fprintln(stderr, "\nSends TEXT to specd serve (specd.v1.generate, or session S) and prints the")
		fmt.Fprintln(stderr, "completion as it streams; statistics go to stderr. --listen prints a session's")
		fmt.Fprintln(stderr, "stream. Default server: nats://127.0.0.1:4222 (specd serve's embedded one).\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	text := strings.Join(fs.Args(), " ")
	switch {
	case *listen != "" && (text != "" || *session != ""):
		return errors.New("--listen prints a session's stream: give no TEXT and no --session")
	case *listen == "" && text == "":
		fs.Usage()
		return errUsage
	case *n < 0:
		return fmt.Errorf("-n %d: must not be negative", *n)
	}
	log, err := lf.logger(stderr)
	if err != nil {
		return err
	}
	nc.URLs = splitURLs(urls)
	if len(nc.URLs) == 0 {
		nc.URLs = []string{nats.DefaultURL}
	}
	nc.Name = "specd run"
	conn, err := serve.Connect(nc)
	if err != nil {
		return err
	}
	defer conn.Close()
	log.Debug().Strs("nats", nc.URLs).Str("session", *session).Str("listen", *listen).Bool("durable", *durable).Msg("connected")
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	p := &printer{out: stdout, err: stderr, json: *asJSON}
	if *listen != "" {
		return p.listen(ctx, conn, *listen, *speech)
	}
	req := api.Request{Prompt: text, ID: *id}
	if *n > 0 {
		req.MaxTokens = n
	}
	if *temp != 0 {
		req.Temperature, req.Seed = temp, seed
	}
	if *session != "" {
		return p.session(ctx, conn, *session, *speech, req)
	}
	generate := api.Generate
	if *durable {
		generate = api.GenerateDurable
	}
	replies, err := generate(ctx, conn, req)
	if err != nil {
		return err
	}
	for r, err := range replies {
		if err != nil {
			return err
		}
		p.reply(r)
	}
	return nil
}

// printer prints replies as text (statistics on stderr) or JSON lines.
type printer struct {
	out, err io.Writer
	json     bool
}

func (p *printer) reply(r api.Reply) {
	if p.json {
		b, _ := json.Marshal(r)
		fmt.Fprintln(p.out, string(b))
		return
	}
	switch r.Status {
	case api.StatusToken:
		fmt.Fprint(p.out, r.Chunk.Text)
	case api.StatusRestart:
		fmt.Fprintf(p.err, "\n[worker lost: attempt %d starts over]\n", r.Attempt)
	case api.StatusDone:
		s := r.Summary
		fmt.Fprintln(p.out)
		fmt.Fprintf(p.err, "done (%s): %d prompt + %d generated tokens, TTFT %.1f ms, %.1f tok/s; acceptance %.1f%% of %d draft tokens, %.2f tokens per step\n",
			s.FinishReason, s.Usage.PromptTokens, s.Usage.CompletionTokens, s.TTFTMS, s.TokensPerSecond,
			100*s.Acceptance.Rate, s.Acceptance.DraftTokens, s.Acceptance.MeanAcceptanceLength)
	}
}

// listenSession subscribes to session sid's token stream, or its speech
// stream if speech.
func listenSession(ctx context.Context, nc *nats.Conn, sid string, speech bool) (*api.Session, string, iter.Seq2[api.Reply, error], error) {
	s, err := api.NewSession(nc, sid)
	if err != nil {
		return nil, "", nil, err
	}
	kind := api.SessionTokens
	if speech {
		kind = api.SessionSpeech
	}
	replies, err := s.Listen(ctx, kind)
	return s, kind, replies, err
}

// session posts req to session sid and prints that generation's stream.
func (p *printer) session(ctx context.Context, nc *nats.Conn, sid string, speech bool, req api.Request) error {
	s, _, replies, err := listenSession(ctx, nc, sid, speech)
	if err != nil {
		return err
	}
	if req.ID == "" {
		req.ID = nats.NewInbox()[len(nats.InboxPrefix):]
	}
	if err := s.Post(req); err != nil {
		return err
	}
	for r, err := range replies {
		if r.RequestID != "" && r.RequestID != req.ID {
			continue // another generation of the session
		}
		if err != nil {
			return err
		}
		p.speechOrReply(r, speech)
		if r.Status == api.StatusDone {
			return nil
		}
	}
	return fmt.Errorf("%w: %w", api.ErrIncomplete, context.Cause(ctx))
}

func (p *printer) speechOrReply(r api.Reply, speech bool) {
	if speech && r.Status == api.StatusToken && !p.json {
		fmt.Fprintln(p.out, strings.TrimSpace(r.Chunk.Text))
		return
	}
	p.reply(r)
}

// listen prints session sid's stream until ctx ends.
func (p *printer) listen(ctx context.Context, nc *nats.Conn, sid string, speech bool) error {
	_, kind, replies, err := listenSession(ctx, nc, sid, speech)
	if err != nil {
		return err
	}
	fmt.Fprintf(p.err, "listening to %s (interrupt to stop)\n", api.SessionSubject(sid, kind))
	for r, err := range replies {
		if err != nil {
			fmt.Fprintf(p.err, "error: %v\n", err)
			continue
		}
		p.speechOrReply(r, speech)
	}
	return nil
}
