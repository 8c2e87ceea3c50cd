package main

// Processes, not goroutines: specd serve workers run as child processes
// (this test binary re-executed as specd) against real nats-servers in the
// test process, and are killed the way production kills them.

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/specd-dev/specd/api"
)

// TestMain lets the test binary run as specd itself (SPECD_TEST_MAIN=1),
// so process tests need no separate build.
func TestMain(m *testing.M) {
	if os.Getenv("SPECD_TEST_MAIN") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// worker is a specd serve child process.
type worker struct {
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	log  []string // its stderr lines
}

// startWorker starts specd serve with args; it is killed at cleanup.
func startWorker(t *testing.T, args ...string) *worker {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--log-format", "json", "--threads", "1", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "SPECD_TEST_MAIN=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &worker{cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			w.mu.Lock()
			w.log = append(w.log, sc.Text())
			w.mu.Unlock()
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		select {
		case <-w.done:
		case <-time.After(10 * time.Second):
			t.Errorf("worker %d did not exit", cmd.Process.Pid)
		}
		if t.Failed() {
			w.mu.Lock()
			t.Logf("worker %d log:\n%s", cmd.Process.Pid, strings.Join(w.log, "\n"))
			w.mu.Unlock()
		}
	})
	return w
}

// served counts the requests the worker logged as finished.
func (w *worker) served() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, l := range w.log {
		if strings.Contains(l, `"message":"request"`) {
			n++
		}
	}
	return n
}

// natsServer starts a nats-server in the test process.
func natsServer(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	if opts.Host == "" {
		opts.Host, opts.Port = "127.0.0.1", -1
	}
	opts.NoLog, opts.NoSigs = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(s.Shutdown)
	return s
}

// connectInstances connects to the NATS server at url (closed when the
// test ends) and waits until n specd service instances answer there.
func connectInstances(t *testing.T, url string, n int) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	waitInstances(t, nc, n)
	return nc
}

// waitInstances waits until n specd service instances answer $SRV.PING.
func waitInstances(t *testing.T, nc *nats.Conn, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		inbox := nats.NewInbox()
		sub, err := nc.SubscribeSync(inbox)
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.PublishRequest("$SRV.PING.specd", inbox, nil); err != nil {
			t.Fatal(err)
		}
		got := 0
		for {
			if _, err := sub.NextMsg(300 * time.Millisecond); err != nil {
				break
			}
			got++
		}
		_ = sub.Unsubscribe()
		if got >= n {
			return
		}
	}
	t.Fatalf("fewer than %d specd instances answered $SRV.PING within 60 s", n)
}

// outcome is how one request's stream ended.
type outcome struct {
	done    bool
	err     error
	attempt int
	text    string
}

func drive(replies func(yield func(api.Reply, error) bool), err error) outcome {
	if err != nil {
		return outcome{err: err}
	}
	var o outcome
	var text strings.Builder
	for r, err := range replies {
		if err != nil {
			o.err = err
			break
		}
		switch r.Status {
		case api.StatusRestart:
			text.Reset()
		case api.StatusToken:
			text.WriteString(r.Chunk.Text)
		case api.StatusDone:
			o.done, o.attempt = true, r.Attempt
		}
	}
	o.text = text.String()
	return o
}

func TestServeWorkersShareLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes (-short)")
	}
	ns := natsServer(t, &server.Options{})
	url := ns.ClientURL()
	for range 2 {
		startWorker(t, "--nats", url, "--slots", "1", "--queue", "32")
	}
	nc := connectInstances(t, url, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const n = 12
	results := make([]outcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			m := 24
			results[i] = drive(api.Generate(ctx, nc, api.Request{Prompt: "The jury said", MaxTokens: &m}))
		})
	}
	wg.Wait()
	for i, r := range results {
		if !r.done || r.err != nil {
			t.Errorf("request %d: done %v, err %v", i, r.done, r.err)
		}
	}
	// Both instances served some: their stats count the requests.
	counts := instanceRequests(t, nc)
	if len(counts) != 2 {
		t.Fatalf("stats from %d instances, want 2", len(counts))
	}
	total := 0
	for id, c := range counts {
		if c == 0 {
			t.Errorf("instance %s served no request of %d (queue group not shared)", id, n)
		}
		total += c
	}
	if total != n {
		t.Errorf("instances served %d requests, want %d", total, n)
	}
}

// instanceRequests asks every specd instance for its stats: the generate
// endpoint's request count by instance id.
func instanceRequests(t *testing.T, nc *nats.Conn) map[string]int {
	t.Helper()
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest("$SRV.STATS.specd", inbox, nil); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for {
		m, err := sub.NextMsg(time.Second)
		if err != nil {
			break
		}
		var st struct {
			ID        string `json:"id"`
			Endpoints []struct {
				Name        string `json:"name"`
				NumRequests int    `json:"num_requests"`
			} `json:"endpoints"`
		}
		if err := json.Unmarshal(m.Data, &st); err != nil {
			t.Fatalf("stats reply: %v", err)
		}
		for _, e := range st.Endpoints {
			if e.Name == "generate" {
				out[st.ID] = e.NumRequests
			}
		}
	}
	return out
}
