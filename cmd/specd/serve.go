package main

// specd serve: the pipeline as a NATS service (package serve).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/serve"
	"github.com/specd-dev/specd/stages"
)

func init() {
	register(command{name: "serve", summary: "serve the model pair over NATS (embedded server by default)", run: runServe})
}

// natsFlags are the NATS client flags serve and run share, named as the
// nats CLI names them.
func addNATSFlags(fs *flagSet, c *serve.NATSConfig, urls *string) {
	fs.StringVar(urls, "nats", "", "join the NATS deployment at `URL[,URL…]` instead of starting an embedded server")
	fs.StringVar(&c.Creds, "creds", "", "NATS user credentials `file` (JWT and NKey seed)")
	fs.StringVar(&c.NKey, "nkey", "", "NATS NKey seed `file`")
	fs.StringVar(&c.User, "user", "", "NATS user name")
	fs.StringVar(&c.Password, "password", "", "NATS password")
	fs.StringVar(&c.Token, "token", "", "NATS authentication token")
	fs.StringVar(&c.TLSCert, "tlscert", "", "TLS client certificate `file`")
	fs.StringVar(&c.TLSKey, "tlskey", "", "TLS client key `file`")
	fs.StringVar(&c.TLSCA, "tlsca", "", "TLS CA certificate `file` to verify the server with")
}

func splitURLs(s string) []string {
	var out []string
	for _, u := range strings.Split(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", stderr)
	spec := addSpecFlags(fs)
	addModelFlag(fs, &spec.Target)
	fs.IntVar(&spec.Threads, "threads", runtime.NumCPU(), "threads of the target model (see --verify-threads)")
	fs.IntVar(&spec.Window, "window", 0, "sliding-window attention over the last `n` positions (0: full attention)")
	slots := fs.Int("slots", 4, "sequences decoded at once (KV cache slots of both models)")
	queue := fs.Int("queue", 16, "requests that may wait for a slot; beyond it requests are refused at once with 503 busy")
	ctxLen := fs.Int("ctx", 2048, "positions per slot (prompt, completion and a draft block), at most the model's context")
	var sc serve.Config
	fs.IntVar(&sc.MaxPromptTokens, "max-prompt-tokens", 0, "longest prompt in tokens (0: what fits a slot)")
	fs.IntVar(&sc.MaxTokens, "max-tokens", 0, "largest max_tokens a request may ask for (0: a slot's positions)")
	fs.IntVar(&sc.DefaultMaxTokens, "default-max-tokens", 256, "max_tokens of requests that give none")
	fs.DurationVar(&sc.RequestTimeout, "request-timeout", 5*time.Minute, "deadline of requests without timeout_ms; also how long a vanished client on a NATS deployment can hold a slot")
	fs.DurationVar(&sc.DrainTimeout, "drain-timeout", 30*time.Second, "on SIGINT/SIGTERM: time in-flight requests get to finish before they end with an error")
	fs.IntVar(&sc.MaxSessions, "max-sessions", 1024, "sessions (conversations) kept; the least recently used idle one is forgotten beyond it")
	fs.DurationVar(&sc.SessionIdle, "session-idle", 30*time.Minute, "a session idle this long is forgotten")
	var urls string
	addNATSFlags(fs, &sc.NATS, &urls)
	fs.StringVar(&sc.NATS.Listen, "nats-listen", "", "`HOST:PORT` of the embedded nats-server (default 127.0.0.1:4222, or the --nats-config file's; port -1 picks a free one, logged on the \"serving\" line)")
	fs.StringVar(&sc.NATS.ConfigFile, "nats-config", "", "nats-server configuration `file` for the embedded server (accounts, users, permissions, JetStream, cluster)")
	fs.BoolVar(&sc.Durable, "durable", false, "also take requests from the JetStream work queue SPECD_REQUESTS (subject specd.v1.durable.generate; created if missing): acked after the final message, redelivered to another worker if this one dies; session streams kept in SPECD_SESSIONS for replay")
	fs.DurationVar(&sc.AckWait, "ack-wait", 10*time.Second, "with --durable: how long JetStream waits for a sign of progress before it redelivers a request")
	fs.DurationVar(&sc.TokenStreamAge, "token-stream-age", time.Hour, "with --durable: how long session token streams are kept for replay")
	fs.StringVar(&sc.NATS.StoreDir, "nats-store", "", "JetStream store `dir` of the embedded server with --durable (default: the --nats-config file's, else the system temporary directory)")
	httpAddr := fs.String("http", "127.0.0.1:8080", "`HOST:PORT` of the OpenAI-compatible HTTP API, /metrics and the page at /; \"off\" disables it")
	fs.StringVar(&sc.APIKey, "api-key", os.Getenv("SPECD_API_KEY"), "bearer `key` the HTTP API requires (default $SPECD_API_KEY; /health stays open)")
	lf := addLogFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: specd serve [-m MODEL] [-d DRAFT] [--nats URL] [flags]")
		fmt.Fprintln(stderr, "\nServes the model pair over NATS until SIGINT/SIGTERM: the micro service \"specd\"")
		fmt.Fprintln(stderr, "(specd.v1.generate), sessions (specd.v1.session.<sid>.prompt/tokens/speech/cancel)")
		fmt.Fprintln(stderr, "and specd.v1.cancel.<id>; see docs/protocol.md. Without --nats it starts an embedded")
		fmt.Fprintln(stderr, "nats-server on 127.0.0.1:4222. The same pipeline serves the OpenAI-compatible HTTP API")
		fmt.Fprintln(stderr, "on --http (127.0.0.1:8080: /v1/chat/completions, /v1/completions, /v1/models,")
		fmt.Fprintln(stderr, "/health, /metrics, and a page at / that shows acceptance). Logs go to stderr.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.parseFlagsOnly(args, stderr, ""); err != nil {
		return err
	}
	log, err := newLogger(stderr, lf.level, lf.format)
	if err != nil {
		return err
	}
	switch {
	case *slots < 1:
		return fmt.Errorf("--slots %d: must be at least 1", *slots)
	case *queue < 1:
		return fmt.Errorf("--queue %d: must be at least 1", *queue)
	case *ctxLen < 8:
		return fmt.Errorf("--ctx %d: must be at least 8", *ctxLen)
	case spec.Threads < 1:
		return fmt.Errorf("--threads %d: must be at least 1", spec.Threads)
	}
	resolveModels(fs, spec)
	if spec.Speculative() {
		if err := spec.Check(); err != nil {
			return err
		}
	}
	if *httpAddr != "off" {
		// Listen before the models load: /health says "loading" meanwhile.
		gw, err := serve.ListenHTTP(*httpAddr)
		if err != nil {
			return err
		}
		sc.HTTP = gw
		defer gw.Close() // if serving never starts; Run closes it otherwise
	}
	sc.NATS.URLs = splitURLs(urls)
	if len(sc.NATS.URLs) > 0 && (sc.NATS.Listen != "" || sc.NATS.ConfigFile != "") {
		return errors.New("--nats joins a deployment: --nats-listen and --nats-config are for the embedded server")
	}
	e, err := engine.Open(*spec)
	if err != nil {
		return err
	}
	defer e.Close()
	log.Info().Msg(e.ModelsLine())
	if _, err := e.Tokenizer(); err != nil {
		return fmt.Errorf("serving needs the model's tokenizer: %w", err)
	}
	maxPos := min(*ctxLen, e.CtxLen())
	cfg, err := e.PipelineConfig(*slots, maxPos, min(512, maxPos))
	if err != nil {
		return err
	}
	cfg.Queue = *queue
	if cfg.Policy.K > 0 {
		cfg.NGram = draft.NewNGram()
	}
	p, err := stages.New(cfg)
	if err != nil {
		return err
	}
	render, tmpl := e.ChatRenderer()
	log.Info().Str("chat_template", tmpl).Int("slots", *slots).Int("ctx", maxPos).Int("queue", *queue).Msg("pipeline ready")
	sc.Pipeline, sc.Render, sc.Log = p, render, log
	sc.Encode = func(text string) ([]int32, error) { return e.Encode(text, true) }
	sc.TargetModel, sc.DraftModel = e.TargetName, e.DraftName
	if sc.DraftModel == "" && spec.Draft == engine.DraftNGram {
		sc.DraftModel = "ngram"
	}
	srv, err := serve.New(sc)
	if err != nil {
		return err
	}
	return srv.Run(ctx)
}
