package bench

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/specd-dev/specd/api"
)

// fakeService is a specd micro service that answers every generate
// request with three blocks (2 draft tokens each, 1 accepted, so 2
// tokens per block), a done message and the empty end-of-stream, and
// counts what it served in its $SRV.STATS data.
type fakeService struct {
	mu    sync.Mutex
	stats api.Stats
	fail  string // a prompt that gets an error reply
}

// startFake runs an embedded nats-server and the fake service on it.
func startFake(t *testing.T, f *fakeService) *nats.Conn {
	t.Helper()
	opts := &server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true}
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start() // shut down in Cleanup
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	srv, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	svc, err := micro.AddService(srv, micro.Config{Name: api.ServiceName, Version: api.ServiceVersion, QueueGroup: api.QueueGroup,
		StatsHandler: func(*micro.Endpoint) any { f.mu.Lock(); defer f.mu.Unlock(); return f.stats }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Stop() })
	// An endpoint carries the stats data; generate itself is a plain
	// queue subscription that publishes several replies per request to
	// the request's inbox, as specd serve does.
	if err := svc.AddEndpoint("stats", micro.HandlerFunc(func(micro.Request) {}), micro.WithEndpointSubject("specd.fake.stats")); err != nil {
		t.Fatal(err)
	}
	sub, err := srv.QueueSubscribe(api.SubjectGenerate, api.QueueGroup, func(m *nats.Msg) {
		var req api.Request
		if err := json.Unmarshal(m.Data, &req); err != nil {
			t.Errorf("bad request: %v", err)
			return
		}
		hdr := func(seq int, status string) nats.Header {
			h := nats.Header{}
			h.Set(api.HeaderRequestID, req.ID)
			h.Set(api.HeaderSeq, strconv.Itoa(seq))
			h.Set(api.HeaderStatus, status)
			return h
		}
		if req.Prompt == f.fail {
			h := hdr(1, api.StatusError)
			h.Set(api.HeaderError, "busy")
			h.Set(api.HeaderErrorCode, "503")
			srv.PublishMsg(&nats.Msg{Subject: m.Reply, Header: h, Data: []byte(`{"code":503,"error":"busy"}`)})
			srv.Publish(m.Reply, nil)
			return
		}
		for i := 1; i <= 3; i++ {
			h := hdr(i, api.StatusToken)
			h.Set(api.HeaderDrafted, "2")
			h.Set(api.HeaderAccepted, "1")
			srv.PublishMsg(&nats.Msg{Subject: m.Reply, Header: h, Data: []byte(`{"text":"ab","tokens":[1,2]}`)})
		}
		body, _ := json.Marshal(api.Summary{ID: req.ID, FinishReason: "length", Text: "ababab"})
		srv.PublishMsg(&nats.Msg{Subject: m.Reply, Header: hdr(4, api.StatusDone), Data: body})
		srv.Publish(m.Reply, nil)
		f.mu.Lock()
		f.stats.Requests++
		f.stats.Generated += 6
		f.stats.Drafts += 3
		f.stats.DraftTokens += 6
		f.stats.Accepted += 3
		f.mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	srv.Flush()
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func TestLoad(t *testing.T) {
	f := &fakeService{fail: "bad", stats: api.Stats{Acceptance: api.Acceptance{Drafts: 10, DraftTokens: 40, Accepted: 5}, Requests: 7}}
	nc := startFake(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ps := []Prompt{{ID: "a", Text: "hello"}, {ID: "b", Text: "world"}, {ID: "c", Text: "bad"}}
	var prog int
	res, err := Load(ctx, nc, LoadOptions{Prompts: ps, Clients: 3, Requests: 9, MaxTokens: 6, Seed: 1}, func(done, total int, _ string) {
		prog = done
		if total != 9 {
			t.Errorf("progress total %d", total)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every third request (prompt "bad") fails; the others bring 3 blocks
	// of 2 tokens, 1 of 2 drafts accepted.
	if res.Requests != 9 || res.Errors != 3 || res.Tokens != 36 || res.Drafted != 36 || res.Accepted != 18 || prog != 9 {
		t.Errorf("requests %d errors %d tokens %d drafted %d accepted %d progress %d", res.Requests, res.Errors, res.Tokens, res.Drafted, res.Accepted, prog)
	}
	if res.Rate != 0.5 || res.MeanLen != 2 || !strings.Contains(res.FirstErr, "busy") {
		t.Errorf("rate %v mean length %v first error %q", res.Rate, res.MeanLen, res.FirstErr)
	}
	if !(res.TTFT.P50 > 0 && res.E2E.P99 >= res.E2E.P50 && res.ITL.P50 >= 0 && res.TokS > 0) {
		t.Errorf("latencies %+v %+v %+v tok/s %v", res.TTFT, res.ITL, res.E2E, res.TokS)
	}
	// The server's figures over the run: 6 requests, 18 of 36 accepted.
	s := res.ServerRun
	if s == nil || s.Requests != 6 || s.DraftTokens != 36 || s.Accepted != 18 || s.Rate != 0.5 || s.MeanAcceptanceLength != 2 {
		t.Errorf("server run %+v", s)
	}
	var sb strings.Builder
	res.WriteLoad(&sb)
	if !strings.Contains(sb.String(), "9 requests (3 failed) by 3 clients, closed loop") {
		t.Errorf("WriteLoad:\n%s", sb.String())
	}
	// An open loop at a high rate gets there too.
	res, err = Load(ctx, nc, LoadOptions{Prompts: ps[:1], Clients: 2, Rate: 500, Requests: 4, MaxTokens: 6, Seed: 2}, nil)
	if err != nil || res.Errors != 0 || res.Tokens != 24 {
		t.Errorf("open loop: %v %+v", err, res)
	}
	if _, err := Load(ctx, nc, LoadOptions{Prompts: []Prompt{{ID: "x", IDs: []int32{1}}}, Clients: 1, Requests: 1}, nil); err == nil {
		t.Error("id prompts accepted in load mode")
	}
}
