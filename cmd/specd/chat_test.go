package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestChatPipe chats through a pipe: two turns with a stop string, then
// /stats. Each answer must be what generate gives for the conversation so
// far rendered with the bundled pair's template (the messages one per
// line), cut at the stop string or the newline that ends a message; the
// second turn sees the first.
func TestChatPipe(t *testing.T) {
	const stop = "Research"
	in := "The jury said\nShe went to the \\\nmarket\n/stats\n/exit\nnever read\n"
	out, errOut := mustRun(t, in, "chat", "--threads", "1", "-n", "48", "--stop", stop)
	lines := strings.Split(out, "\n")
	if len(lines) < 5 {
		t.Fatalf("chat output:\n%s\nstderr:\n%s", out, errOut)
	}
	a1, a2 := lines[0], lines[1]
	gen := func(prompt string) string {
		t.Helper()
		o, _ := mustRun(t, "", "generate", "--chat", "-p", prompt, "--threads", "1", "-n", "48", "--stop", stop, "--stop", "\n")
		return strings.TrimSuffix(o, "\n")
	}
	if want := gen("The jury said"); a1 != want || a1 == "" || strings.Contains(a1, stop) {
		t.Errorf("first answer %q, want %q (without %q)", a1, want, stop)
	}
	// The second message spans two lines (the first ends in \).
	if want := gen("The jury said\n" + strings.TrimSpace(a1) + "\nShe went to the \nmarket"); a2 != want {
		t.Errorf("second answer %q, want %q", a2, want)
	}
	stats := strings.Join(lines[2:], "\n")
	for _, w := range []string{"turns 2, history 4 messages, chat template raw", "tok/s", "mean accepted length"} {
		if !strings.Contains(stats, w) {
			t.Errorf("/stats lacks %q:\n%s", w, stats)
		}
	}
	if strings.Contains(out, "never read") || strings.Contains(out, "> ") {
		t.Errorf("input after /exit answered, or a prompt shown on a pipe:\n%s", out)
	}
}

// TestChatCommands: /reset forgets the conversation, an unknown command is
// named, the end of input ends the chat, --system must be plain text, and
// --show-draft --color always highlights accepted draft text.
func TestChatCommands(t *testing.T) {
	out, errOut := mustRun(t, "The jury said\n/reset\n/nope\n/stats", "chat", "--threads", "1", "-n", "24", "-k", "4", "--show-draft", "--color", "always")
	if !strings.Contains(out, "turns 1, history 0 messages") || !strings.Contains(errOut, "(conversation forgotten)") ||
		!strings.Contains(errOut, "unknown command /nope") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, errOut)
	}
	if !strings.Contains(out, "\x1b[36m") || !strings.Contains(out, "\x1b[0m") {
		t.Errorf("--show-draft --color always: no highlighted draft text in %q", out)
	}
	plain, _ := mustRun(t, "The jury said\n", "chat", "--threads", "1", "-n", "24", "-k", "4", "--show-draft")
	if strings.Contains(plain, "\x1b[") {
		t.Errorf("--show-draft on a pipe (--color auto) wrote ANSI: %q", plain)
	}
	if code, _, errOut := runIn("", "chat", "--color", "pink"); code == 0 || !strings.Contains(errOut, `--color "pink"`) {
		t.Errorf("--color pink: exit %d, %s", code, errOut)
	}
}

// TestChatInterrupts: the first SIGINT during an answer cancels that
// answer alone, one at the prompt prints the hint, a second in a row
// ends the chat; a message typed between resets the count.
func TestChatInterrupts(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var errw syncBuffer
	in := newInterrupts(ctx, cancel, &errw)
	defer in.stop()
	wait := func(what string, done <-chan struct{}) {
		t.Helper()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not within 10 s", what)
		}
	}
	turn, stopTurn := context.WithCancelCause(ctx)
	in.answering(stopTurn)
	in.sig <- os.Interrupt
	wait("the answer stopped", turn.Done())
	if ctx.Err() != nil {
		t.Fatal("the first interrupt ended the chat")
	}
	in.answering(nil)
	in.typed()
	in.sig <- os.Interrupt // at the prompt, after a message: the first again
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(errw.String(), "(Ctrl-C again or /exit to quit)") {
		if time.Now().After(deadline) {
			t.Fatalf("no hint within 10 s: %q", errw.String())
		}
		time.Sleep(time.Millisecond)
	}
	if ctx.Err() != nil {
		t.Fatal("an interrupt after a message ended the chat")
	}
	in.sig <- os.Interrupt
	wait("the chat ended", ctx.Done())
	if !errors.Is(context.Cause(ctx), errInterrupted) {
		t.Errorf("chat ended with %v, want errInterrupted", context.Cause(ctx))
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestChatStopsAnswer: an interrupt while an answer streams stops that
// answer (what came so far stays in the history) and the chat goes on.
func TestChatStopsAnswer(t *testing.T) {
	var sig chan<- os.Signal
	notifyInterrupt = func(c chan<- os.Signal, _ ...os.Signal) { sig = c }
	defer func() { notifyInterrupt = signal.Notify }()
	// The first text of the answer interrupts it (from the goroutine that
	// writes it, so the answer is still being decoded).
	out := &onWrite{f: func() {
		select {
		case sig <- os.Interrupt:
		default:
		}
	}}
	var errb bytes.Buffer
	code := runMainIn(context.Background(), []string{"chat", "--threads", "1", "-n", "128"},
		strings.NewReader("The jury said\n/stats\n"), out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	m := regexp.MustCompile(`generated (\d+) tokens`).FindStringSubmatch(out.b.String())
	if !strings.Contains(errb.String(), "(answer stopped)") || m == nil || m[1] == "128" ||
		!strings.Contains(out.b.String(), "turns 1, history 2 messages") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out.b.String(), errb.String())
	}
}

// onWrite is a buffer that calls f on its first write.
type onWrite struct {
	b    bytes.Buffer
	f    func()
	done bool
}

func (w *onWrite) Write(p []byte) (int, error) {
	if !w.done && len(bytes.TrimSpace(p)) > 0 {
		w.done = true
		w.f()
	}
	return w.b.Write(p)
}
