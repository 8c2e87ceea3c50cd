package main

// Faults production meets: a worker killed with SIGKILL while it holds
// durable requests, and a three-node NATS cluster whose worker's node dies
// mid-stream. Every stream must end, completed or with an explicit error,
// never hang.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/specd-dev/specd/api"
)

// freePort returns a free loopback TCP port.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestClusterNodeKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes (-short)")
	}
	const nodes = 3
	routes := make([]int, nodes)
	for i := range routes {
		routes[i] = freePort(t)
	}
	var routeURLs []string
	for _, p := range routes {
		routeURLs = append(routeURLs, "nats-route://127.0.0.1:"+strconv.Itoa(p))
	}
	srv := make([]*server.Server, nodes)
	for i := range nodes {
		o := &server.Options{ServerName: fmt.Sprintf("n%d", i), Cluster: server.ClusterOpts{Name: "specd-test", Host: "127.0.0.1", Port: routes[i]}}
		o.Routes = server.RoutesFromStr(strings.Join(routeURLs, ","))
		srv[i] = natsServer(t, o)
	}
	for _, s := range srv {
		deadline := time.Now().Add(20 * time.Second)
		for s.NumRoutes() < nodes-1 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond) // nats-server has no route-formed event
		}
		if s.NumRoutes() < nodes-1 {
			t.Fatalf("cluster did not form: %d routes", s.NumRoutes())
		}
	}
	// The worker joins node 0 (and learns the others from it); the
	// clients use node 1.
	startWorker(t, "--nats", srv[0].ClientURL(), "--slots", "4")
	nc, err := nats.Connect(srv[1].ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	waitInstances(t, nc, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 8
	results := make([]outcome, n)
	started := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			m := 200
			replies, err := api.Generate(ctx, nc, api.Request{Prompt: "The jury said", MaxTokens: &m})
			if err != nil {
				results[i] = outcome{err: err}
				started <- struct{}{}
				return
			}
			first := true
			results[i] = drive(func(yield func(api.Reply, error) bool) {
				for r, err := range replies {
					if first {
						first = false
						started <- struct{}{}
					}
					if !yield(r, err) {
						return
					}
				}
				if first {
					started <- struct{}{}
				}
			}, nil)
		})
	}
	for range n {
		select {
		case <-started:
		case <-ctx.Done():
			t.Fatal("streams did not start")
		}
	}
	srv[0].Shutdown() // the worker's node dies mid-stream
	wg.Wait()
	completed, failed := 0, 0
	for i, r := range results {
		switch {
		case r.done && r.err == nil:
			completed++
		case r.err != nil:
			var se *api.ServiceError
			// Core NATS delivers at most once: messages in flight on the
			// dying node are lost, and the client says so (a gap, or a
			// stream ended early) instead of passing on a stream with a
			// hole in it.
			if !errors.As(r.err, &se) && !errors.Is(r.err, api.ErrIncomplete) && !errors.Is(r.err, api.ErrGap) {
				t.Errorf("request %d: unexplained error %v", i, r.err)
			}
			if errors.Is(r.err, context.DeadlineExceeded) || ctx.Err() != nil {
				t.Errorf("request %d hung until the test's deadline: %v", i, r.err)
			}
			failed++
		default:
			t.Errorf("request %d ended with neither done nor an error", i)
		}
	}
	t.Logf("node killed: %d streams completed, %d ended with an explicit error", completed, failed)
}

func TestDurableSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes (-short)")
	}
	ns := natsServer(t, &server.Options{JetStream: true, StoreDir: t.TempDir()})
	url := ns.ClientURL()
	args := []string{"--nats", url, "--durable", "--slots", "2", "--ack-wait", "2s"}
	a := startWorker(t, args...)
	startWorker(t, args...)
	nc := connectInstances(t, url, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const n = 100
	results := make([]outcome, n)
	var finished sync.WaitGroup
	doneCount := make(chan struct{}, n)
	for i := range n {
		finished.Go(func() {
			m := 48
			req := api.Request{Prompt: "The jury said", MaxTokens: &m, ID: fmt.Sprintf("durable-%d", i)}
			results[i] = drive(api.GenerateDurable(ctx, nc, req))
			doneCount <- struct{}{}
		})
	}
	// Kill worker a with SIGKILL once a tenth of the requests are done
	// and a has served some: it is then mid-request.
	killed := false
	for got := 0; got < n && !killed; got++ {
		select {
		case <-doneCount:
		case <-ctx.Done():
			t.Fatal("timed out before the kill")
		}
		if got >= n/10 && a.served() > 0 {
			if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	if !killed {
		t.Fatal("worker a served nothing before all requests finished")
	}
	finished.Wait()
	redelivered := 0
	for i, r := range results {
		if !r.done || r.err != nil {
			t.Errorf("request %d lost: done %v, err %v", i, r.done, r.err)
		}
		if r.attempt > 1 {
			redelivered++
		}
	}
	if redelivered == 0 {
		t.Errorf("no request was redelivered after the SIGKILL: it did not hit a request in flight")
	}
	t.Logf("%d of %d requests finished on the surviving worker after redelivery", redelivered, n)
}
