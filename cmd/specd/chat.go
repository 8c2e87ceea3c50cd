package main

// specd chat: a conversation in the terminal. Each turn renders the whole
// conversation (system prompt, earlier turns, the new message) with the
// model's chat template and decodes the answer through one pipeline
// (speculative with the draft), streaming it; the answer joins the
// history. Input, interrupts and commands are in chatio.go.

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/specd-dev/specd/api"
	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/stages"
)

func init() {
	register(command{name: "chat", summary: "chat in the terminal with the model's chat template, speculative by default", runIn: runChat, interrupts: true})
}

// chat is one conversation.
type chat struct {
	e      *engine.Engine
	p      *stages.Pipeline
	o      generateOpts
	params sample.Params
	tmpl   string
	stops  []string
	msgs   []api.Message // the turns so far (user, assistant, …), without the system prompt
	turns  int
	gen    int           // tokens generated in all turns
	busy   time.Duration // their decoding time, TTFT included
	ttft   time.Duration // the sum of the turns' TTFTs
	out    io.Writer
	errw   io.Writer
	color  bool // highlight accepted draft text with ANSI
	show   bool // --show-draft
	intr   *interrupts
}

func runChat(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o := generateOpts{}
	fs := newFlagSet("chat", stderr)
	eo := addSpecFlags(fs)
	addModelFlag(fs, &eo.Target)
	addPromptFlags(fs, &o, eo)
	fs.Lookup("n").DefValue, o.n = "128", 128 // an answer
	sf := addSampleFlags(fs)
	showDraft := fs.Bool("show-draft", false, "highlight the text of accepted draft tokens (on a terminal, see --color)")
	color := fs.String("color", "auto", "`auto|always|never`: ANSI colours for --show-draft (auto: when stdout is a terminal and TERM is not dumb, and NO_COLOR is unset)")
	lf := addLogFlags(fs)
	fs.Usage = fs.usageFunc([]string{"specd chat [-m MODEL] [-d DRAFT] [--system TEXT] [--stop STR] [--show-draft] [flags]"},
		"Chats with the model: each line you type is a message (end a line with \\ to continue it\n"+
			"on the next); the answer streams as it is decoded, speculatively by default. The model's\n"+
			"chat template renders the conversation (the bundled pair has none: the messages one\n"+
			"per line, and an answer ends at a newline). /stats prints the statistics so far, /reset\n"+
			"forgets the conversation, /exit (or end of input) quits. Ctrl-C stops an answer; a\n"+
			"second Ctrl-C quits. With stdin not a terminal, each line is one message.")
	if err := fs.parseFlagsOnly(args, stderr, "type messages after it starts"); err != nil {
		return err
	}
	o.eng = *eo
	resolveModels(fs, &o.eng)
	var err error
	if o.log, err = lf.logger(stderr); err != nil {
		return err
	}
	switch {
	case o.n < 1:
		return fmt.Errorf("-n %d: must be at least 1", o.n)
	case o.eng.Threads < 1:
		return fmt.Errorf("--threads %d: must be at least 1", o.eng.Threads)
	case o.batch < 1 || o.ctx < 0:
		return fmt.Errorf("--batch %d --ctx %d: the batch must be at least 1, the context not negative", o.batch, o.ctx)
	case *color != "auto" && *color != "always" && *color != "never":
		return fmt.Errorf("--color %q: want auto, always or never", *color)
	}
	params, err := sf.params(stderr, o.eng)
	if err != nil {
		return err
	}
	e, err := engine.Open(o.eng)
	if err != nil {
		return err
	}
	defer e.Close()
	fmt.Fprintln(stderr, e.ModelsLine())
	printAutoLine(stderr, o.eng)
	if _, err := e.Tokenizer(); err != nil {
		return fmt.Errorf("chat needs the model's tokenizer: %w", err)
	}
	maxPos := e.CtxLen()
	if o.ctx > 0 {
		maxPos = min(o.ctx, maxPos)
	}
	cfg, err := e.PipelineConfig(1, maxPos, min(o.batch, maxPos))
	if err != nil {
		return err
	}
	p, err := stages.New(cfg)
	if err != nil {
		return err
	}
	_, tmpl := e.ChatRenderer()
	c := &chat{e: e, p: p, o: o, params: params, tmpl: tmpl, stops: o.stops, out: stdout, errw: stderr,
		show: *showDraft, color: *color == "always" || *color == "auto" && colorTerminal(stdout)}
	if tmpl == "raw" {
		c.stops = append(c.stops, "\n") // one message a line
	}
	// The pipeline serves every turn; it ends when the chat does.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx) }()
	defer func() {
		p.Close()
		<-served
	}()
	c.intr = newInterrupts(ctx, cancel, stderr)
	defer c.intr.stop()
	return c.loop(ctx, stdin)
}

// colorTerminal reports whether w is a terminal that takes ANSI colours.
func colorTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f) && os.Getenv("TERM") != "dumb" && os.Getenv("NO_COLOR") == ""
}

// prompt returns the ids of the conversation with msg as the next user
// message, dropping the oldest turns while it leaves no room for an
// answer.
func (c *chat) prompt(msg string) ([]int32, error) {
	k := c.e.Options().K
	reserve := min(c.o.n, c.p.MaxPos()/2) + k + 1
	turn := append(c.msgs[:len(c.msgs):len(c.msgs)], api.Message{Role: "user", Content: msg})
	for {
		var msgs []api.Message
		if c.o.system != "" {
			msgs = append(msgs, api.Message{Role: "system", Content: c.o.system})
		}
		ids, err := chatIDs(c.e, append(msgs, turn...), !c.o.noBOS)
		if err != nil {
			return nil, err
		}
		if len(ids)+reserve <= c.p.MaxPos() {
			return ids, nil
		}
		if len(turn) <= 1 {
			return nil, fmt.Errorf("the message (%d tokens with the system prompt) leaves no room for an answer in the context of %d (see --ctx, -n)", len(ids), c.p.MaxPos())
		}
		turn = turn[min(2, len(turn)-1):] // the oldest exchange
		fmt.Fprintln(c.errw, "(the oldest turn is forgotten: the conversation no longer fits the context)")
	}
}

// answer decodes the answer to msg, streaming it to c.out, and adds the
// exchange to the history. An interrupt stops it (the partial answer is
// kept).
func (c *chat) answer(ctx context.Context, msg string) error {
	ids, err := c.prompt(msg)
	if err != nil {
		fmt.Fprintln(c.errw, "error:", err)
		return nil
	}
	c.turns++
	tctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c.intr.answering(cancel)
	defer c.intr.answering(nil)
	st, err := c.p.Submit(tctx, stages.Request{ID: fmt.Sprintf("turn-%d", c.turns), PromptIDs: ids,
		MaxTokens: min(c.o.n, c.p.MaxPos()-len(ids)+1), Params: c.params, Stop: c.stops})
	if err != nil {
		return err
	}
	var text strings.Builder
	var final stages.Chunk
	for ch, err := range st.Chunks(ctx) {
		if err != nil {
			return err
		}
		c.write(ch)
		text.WriteString(ch.Text)
		if ch.Final {
			final = ch
		}
	}
	fmt.Fprintln(c.out)
	if st := final.Stats; st != nil {
		c.gen, c.busy, c.ttft = c.gen+st.Generated, c.busy+st.Duration, c.ttft+st.TTFT
		c.o.log.Debug().Int("turn", c.turns).Int("prompt_tokens", len(ids)).Int("tokens", st.Generated).Str("reason", final.Reason).
			Dur("duration", st.Duration).Dur("ttft", st.TTFT).Int("accepted", st.Accepted).Msg("answer")
	}
	switch {
	case final.Err != nil && tctx.Err() != nil && ctx.Err() == nil:
		fmt.Fprintln(c.errw, "(answer stopped)")
	case final.Err != nil:
		return final.Err
	case final.Reason == "length" && final.Stats != nil && final.Stats.Generated >= c.o.n:
		fmt.Fprintf(c.errw, "(answer cut at %d tokens: see -n)\n", c.o.n)
	case final.Reason == "length":
		fmt.Fprintln(c.errw, "(answer cut: the context is full; /reset starts over)")
	}
	c.msgs = append(c.msgs, api.Message{Role: "user", Content: msg}, api.Message{Role: "assistant", Content: strings.TrimSpace(text.String())})
	return nil
}

// write prints a chunk's text, its accepted draft part highlighted with
// --show-draft on a colour terminal.
func (c *chat) write(ch stages.Chunk) {
	t := ch.Text
	if c.show && c.color && ch.DraftLen > 0 && ch.DraftLen <= len(t) {
		t = "\x1b[36m" + t[:ch.DraftLen] + "\x1b[0m" + t[ch.DraftLen:]
	}
	io.WriteString(c.out, t)
}
