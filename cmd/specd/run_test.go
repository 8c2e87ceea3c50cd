package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/specd-dev/specd/api"
)

// TestRunCommand drives specd run against a specd serve worker on a real
// nats-server: a greedy prompt prints the same completion twice and its
// statistics; --json prints one reply object a line, the last one done; a
// session turn prints its tokens while specd run --listen --speech, on the
// same session, prints the turn's speech segments; flags that do not go
// together are refused.
func TestRunCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a specd serve process (-short)")
	}
	url := natsServer(t, &server.Options{}).ClientURL()
	startWorker(t, "--nats", url)
	connectInstances(t, url, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(args ...string) (string, string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := runMain(ctx, append([]string{"run", "--nats", url}, args...), &out, &errb); code != 0 {
			t.Fatalf("specd run %v: exit %d: %s", args, code, errb.String())
		}
		return out.String(), errb.String()
	}

	text, stats := run("-n", "12", "The jury said")
	again, _ := run("-n", "12", "The jury said")
	if strings.TrimSpace(text) == "" || text != again || !strings.Contains(stats, "done (length): ") || !strings.Contains(stats, "12 generated tokens") {
		t.Errorf("greedy run: %q then %q; stderr %s", text, again, stats)
	}

	lines, _ := run("--json", "-n", "6", "The jury said")
	var last api.Reply
	n := 0
	for l := range strings.Lines(lines) {
		var r api.Reply
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("--json line %q: %v", l, err)
		}
		last, n = r, n+1
	}
	if n < 2 || last.Status != api.StatusDone || last.Summary == nil || last.Summary.Usage.CompletionTokens != 6 {
		t.Errorf("--json: %d lines, the last %+v", n, last)
	}

	// The listener's stdout is a pipe, read line by line.
	lctx, stop := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	var lerr bytes.Buffer
	listened := make(chan int, 1)
	go func() {
		listened <- runMain(lctx, []string{"run", "--nats", url, "--listen", "car1", "--speech"}, pw, &lerr)
		pw.Close()
	}()
	segs := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			segs <- sc.Text()
		}
		close(segs)
	}()
	// Post turns until the listener, subscribed by then, prints a segment.
	var seg string
	for turn := 0; seg == "" && turn < 5; turn++ {
		out, _ := run("--session", "car1", "-n", "24", "The jury said.")
		if strings.TrimSpace(out) == "" {
			t.Fatalf("session turn %d printed nothing", turn)
		}
		select {
		case seg = <-segs:
		case <-time.After(10 * time.Second):
		}
	}
	stop()
	select {
	case code := <-listened:
		if code != 0 {
			t.Errorf("--listen: exit %d: %s", code, lerr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("--listen did not stop with its context")
	}
	if strings.TrimSpace(seg) == "" || !strings.Contains(lerr.String(), "listening to specd.v1.session.car1.speech") {
		t.Errorf("--listen --speech: segment %q; stderr %s", seg, lerr.String())
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "car1", "text"}, "give no TEXT and no --session"},
		{[]string{"-n", "-1", "text"}, "-n -1: must not be negative"},
	} {
		var out, errb bytes.Buffer
		if code := runMain(ctx, append([]string{"run", "--nats", url}, tc.args...), &out, &errb); code == 0 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("specd run %v: exit %d: %s", tc.args, code, errb.String())
		}
	}
}
