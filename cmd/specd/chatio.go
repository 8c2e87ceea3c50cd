package main

// specd chat's input: lines (a line ending in \ continues on the next),
// the slash commands, and Ctrl-C (SIGINT): the first stops the answer
// being decoded, a second in a row ends the chat.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// errInterrupted ends a chat on a second Ctrl-C.
var errInterrupted = errors.New("interrupted")

// notifyInterrupt is signal.Notify; tests replace it to send the
// interrupts themselves.
var notifyInterrupt = signal.Notify

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// interrupts turns SIGINT into stopping the current answer (the first) or
// ending the chat (a second without a message typed between).
type interrupts struct {
	mu     sync.Mutex
	turn   context.CancelCauseFunc // the answer being decoded, if any
	n      int                     // interrupts since the last message
	errw   io.Writer
	sig    chan os.Signal
	wg     sync.WaitGroup
	cancel context.CancelCauseFunc // the chat's
	prompt string                  // shown again after the hint at the prompt (interactive only)
	out    io.Writer
}

// newInterrupts watches SIGINT until ctx ends (or stop); a second
// interrupt cancels ctx (through cancel) with errInterrupted.
func newInterrupts(ctx context.Context, cancel context.CancelCauseFunc, errw io.Writer) *interrupts {
	in := &interrupts{errw: errw, sig: make(chan os.Signal, 2), cancel: cancel}
	notifyInterrupt(in.sig, os.Interrupt)
	in.wg.Add(1)
	go func() {
		defer in.wg.Done()
		for {
			select {
			case <-in.sig:
				in.interrupt()
			case <-ctx.Done():
				return
			}
		}
	}()
	return in
}

func (in *interrupts) interrupt() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.n++
	switch {
	case in.n >= 2:
		fmt.Fprintln(in.errw, "\n(interrupted: bye)")
		in.cancel(errInterrupted)
	case in.turn != nil:
		in.turn(context.Canceled)
	default:
		fmt.Fprintln(in.errw, "\n(Ctrl-C again or /exit to quit)")
		if in.prompt != "" {
			io.WriteString(in.out, in.prompt)
		}
	}
}

// answering records the cancel of the answer being decoded (nil: none).
func (in *interrupts) answering(cancel context.CancelCauseFunc) {
	in.mu.Lock()
	in.turn = cancel
	in.mu.Unlock()
}

// typed resets the count: a message came between two interrupts.
func (in *interrupts) typed() {
	in.mu.Lock()
	in.n = 0
	in.mu.Unlock()
}

// stop stops watching SIGINT and waits for the watcher (its ctx must have
// ended or end soon; runChat cancels it on return).
func (in *interrupts) stop() {
	signal.Stop(in.sig)
	in.cancel(nil)
	in.wg.Wait()
}

// readLines sends the lines of r (without their newline) until r ends,
// then closes the channel. Its goroutine may stay blocked in a read of a
// terminal after the chat ends: nothing can unblock it but input, and the
// process is exiting then.
func readLines(r io.Reader) <-chan string {
	lines := make(chan string)
	go func() {
		defer close(lines)
		br := bufio.NewReader(r)
		for {
			l, err := br.ReadString('\n')
			if l != "" || err == nil {
				lines <- strings.TrimRight(l, "\r\n")
			}
			if err != nil {
				return
			}
		}
	}()
	return lines
}

// loop reads messages and answers them until /exit, the end of input or
// a second interrupt.
func (c *chat) loop(ctx context.Context, stdin io.Reader) error {
	interactive := false
	if f, ok := stdin.(*os.File); ok && isTerminal(f) {
		interactive = true
		c.intr.mu.Lock()
		c.intr.prompt, c.intr.out = "> ", c.out
		c.intr.mu.Unlock()
		fmt.Fprintf(c.errw, "chat template %s; /stats, /reset, /exit; end a line with \\ to continue it; Ctrl-C stops an answer, twice quits\n", c.tmpl)
	}
	lines := readLines(stdin)
	var msg []string
	for {
		if interactive {
			p := "> "
			if len(msg) > 0 {
				p = "… "
			}
			io.WriteString(c.out, p)
		}
		var l string
		var ok bool
		select {
		case l, ok = <-lines:
		case <-ctx.Done():
			return nil // a second Ctrl-C
		}
		if !ok && len(msg) == 0 {
			return nil
		}
		c.intr.typed()
		if ok && strings.HasSuffix(l, `\`) {
			msg = append(msg, strings.TrimSuffix(l, `\`))
			continue
		}
		if ok {
			msg = append(msg, l)
		}
		text := strings.Join(msg, "\n")
		msg = msg[:0]
		if quit, err := c.message(ctx, text); err != nil || quit {
			if ctx.Err() != nil {
				return nil // a second Ctrl-C during the answer
			}
			return err
		}
		if !ok {
			return nil
		}
	}
}

// message handles one message: a slash command, or a turn of the chat.
func (c *chat) message(ctx context.Context, text string) (quit bool, err error) {
	switch cmd := strings.TrimSpace(text); {
	case cmd == "":
		return false, nil
	case cmd == "/exit" || cmd == "/quit":
		return true, nil
	case cmd == "/reset":
		c.msgs = nil
		fmt.Fprintln(c.errw, "(conversation forgotten)")
		return false, nil
	case cmd == "/stats":
		c.stats()
		return false, nil
	case strings.HasPrefix(cmd, "/") && !strings.Contains(cmd, " "):
		fmt.Fprintf(c.errw, "unknown command %s: /stats, /reset or /exit\n", cmd)
		return false, nil
	}
	return false, c.answer(ctx, text)
}

// stats prints the statistics of the turns so far: speed from the
// turns' own times, acceptance from the pipeline's counters.
func (c *chat) stats() {
	fmt.Fprintf(c.out, "turns %d, history %d messages, chat template %s\n", c.turns, len(c.msgs), c.tmpl)
	if c.turns == 0 {
		return
	}
	fmt.Fprintf(c.out, "generated %d tokens in %v (%.1f tok/s), mean TTFT %v\n", c.gen, c.busy.Round(time.Millisecond),
		rate(c.gen, c.busy), (c.ttft / time.Duration(c.turns)).Round(time.Microsecond))
	s := c.p.Metrics().Snapshot()
	if c.p.HasDrafter() || s.DraftTokens > 0 {
		fmt.Fprintf(c.out, "draft tokens %d, accepted %d (%.1f%%), mean accepted length %.2f, %d verify passes\n",
			s.DraftTokens, s.Accepted, 100*s.Acceptance(), s.MeanAcceptedLength(), s.Passes)
	}
}
