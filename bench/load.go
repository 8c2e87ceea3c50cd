package bench

// Load mode (specd bench --nats URL): clients of a running specd serve
// over NATS, as vLLM's `bench serve` is for an OpenAI server.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/specd-dev/specd/api"
)

// LoadOptions configure a load run.
type LoadOptions struct {
	Prompts []Prompt // text prompts, sent in turn
	// Clients is the number of concurrent clients. Without Rate each
	// sends its next request when its last one ends (a closed loop).
	Clients int
	// Rate, if positive, is the mean arrival rate in requests per second
	// (exponential gaps, an open loop); Clients then caps the requests in
	// flight, and an arrival finding every client busy waits.
	Rate     float64
	Requests int // requests in all
	// MaxTokens, Temp and Speculative go into every request (nil
	// Speculative: the server's defaults).
	MaxTokens   int
	Temp        float64
	Speculative *api.Speculative
	Seed        uint64 // request i samples with Seed+i, and seeds the arrivals
}

// LoadResult is what a load run measured, client-side and from the
// server's $SRV.STATS before and after.
type LoadResult struct {
	Options   LoadOptions   `json:"options"`
	Requests  int           `json:"requests"`
	Errors    int           `json:"errors"`
	FirstErr  string        `json:"first_error,omitempty"`
	Tokens    int           `json:"tokens"`
	Wall      time.Duration `json:"wall_ns"`
	TokS      Num           `json:"tok_s"`
	ReqS      Num           `json:"req_s"`
	TTFT      Percentiles   `json:"ttft_ms"` // send to first token message
	ITL       Percentiles   `json:"itl_ms"`  // between token messages (one per verified block)
	E2E       Percentiles   `json:"e2e_ms"`  // send to done
	Drafted   int           `json:"drafted"` // from the Specd-Drafted/-Accepted headers
	Accepted  int           `json:"accepted"`
	Rate      Num           `json:"acceptance_rate"`
	MeanLen   Num           `json:"mean_accepted_length"` // 1 + accepted / blocks with a draft
	Server    *api.Stats    `json:"server,omitempty"`     // after the run
	ServerRun *api.Stats    `json:"server_run,omitempty"` // after minus before: this run's share
}

// Percentiles are p50, p90 and p99 in milliseconds.
type Percentiles struct {
	P50 Num `json:"p50"`
	P90 Num `json:"p90"`
	P99 Num `json:"p99"`
}

func percentiles(ds []time.Duration) Percentiles {
	if len(ds) == 0 {
		return Percentiles{Num(nan), Num(nan), Num(nan)}
	}
	q := func(x float64) Num { return dms(DurationQuantile(ds, x)) }
	return Percentiles{q(0.5), q(0.9), q(0.99)}
}

// ServiceStats asks the specd service for its $SRV.STATS and returns the
// data of its generate endpoint (the first worker to answer).
func ServiceStats(ctx context.Context, nc *nats.Conn) (*api.Stats, error) {
	m, err := nc.RequestWithContext(ctx, "$SRV.STATS."+api.ServiceName, nil)
	if err != nil {
		return nil, fmt.Errorf("bench: $SRV.STATS.%s: %w", api.ServiceName, err)
	}
	var st micro.Stats
	if err := json.Unmarshal(m.Data, &st); err != nil {
		return nil, fmt.Errorf("bench: $SRV.STATS: %w", err)
	}
	for _, e := range st.Endpoints {
		if len(e.Data) > 0 && string(e.Data) != "null" {
			var s api.Stats
			if err := json.Unmarshal(e.Data, &s); err != nil {
				return nil, fmt.Errorf("bench: $SRV.STATS data of %s: %w", e.Name, err)
			}
			return &s, nil
		}
	}
	return nil, errors.New("bench: $SRV.STATS: no endpoint carries specd's stats")
}

// statsDelta is after minus before for the counters of api.Stats.
func statsDelta(before, after *api.Stats) *api.Stats {
	d := *after
	d.Requests -= before.Requests
	d.Failed -= before.Failed
	d.Generated -= before.Generated
	d.Drafts -= before.Drafts
	d.DraftTokens -= before.DraftTokens
	d.Accepted -= before.Accepted
	d.PerPosition = nil // not additive
	d.Rate, d.MeanAcceptanceLength = 0, 1
	if d.DraftTokens > 0 {
		d.Rate = float64(d.Accepted) / float64(d.DraftTokens)
	}
	if d.Drafts > 0 {
		d.MeanAcceptanceLength = 1 + float64(d.Accepted)/float64(d.Drafts)
	}
	return &d
}

// loadReq is one request's client-side figures.
type loadReq struct {
	err                   error
	ttft, e2e             time.Duration
	gaps                  []time.Duration
	tokens                int
	drafted, accepted, nb int
}

// Load runs o's requests against the specd service on nc and returns the
// throughput, latency percentiles and acceptance it saw, and the
// server's acceptance over the run. A request that fails is counted (the
// first error kept), not fatal; Load fails only if it cannot start or ctx
// ends.
func Load(ctx context.Context, nc *nats.Conn, o LoadOptions, progress Progress) (*LoadResult, error) {
	switch {
	case o.Clients < 1 || o.Requests < 1:
		return nil, fmt.Errorf("%w: load needs at least one client and one request", ErrGrid)
	case len(o.Prompts) == 0:
		return nil, fmt.Errorf("%w: no prompts", ErrPrompts)
	}
	for _, p := range o.Prompts {
		if p.Text == "" {
			return nil, fmt.Errorf("%w: prompt %s: load mode sends text (the server tokenizes)", ErrPrompts, p.ID)
		}
	}
	before, err := ServiceStats(ctx, nc)
	if err != nil {
		return nil, err
	}
	res := &LoadResult{Options: o}
	rng := rand.New(rand.NewPCG(o.Seed, 0x10ad))
	jobs := make(chan int)
	out := make([]loadReq, o.Requests)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	start := time.Now()
	for range o.Clients {
		wg.Add(1)
		go func() { // joined by wg.Wait below
			defer wg.Done()
			for i := range jobs {
				out[i] = oneRequest(ctx, nc, o, i)
				if progress != nil {
					mu.Lock()
					done++
					progress(done, o.Requests, fmt.Sprintf("request %d", i))
					mu.Unlock()
				}
			}
		}()
	}
	next := start
feed:
	for i := range o.Requests {
		if o.Rate > 0 {
			next = next.Add(time.Duration(rng.ExpFloat64() / o.Rate * float64(time.Second)))
			t := time.NewTimer(time.Until(next))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				break feed
			}
		}
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	res.Wall = time.Since(start)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var ttft, gaps, e2e []time.Duration
	nb := 0
	for _, r := range out {
		res.Requests++
		if r.err != nil {
			res.Errors++
			if res.FirstErr == "" {
				res.FirstErr = r.err.Error()
			}
			continue
		}
		res.Tokens += r.tokens
		ttft, e2e, gaps = append(ttft, r.ttft), append(e2e, r.e2e), append(gaps, r.gaps...)
		res.Drafted, res.Accepted, nb = res.Drafted+r.drafted, res.Accepted+r.accepted, nb+r.nb
	}
	res.TokS = Num(float64(res.Tokens) / res.Wall.Seconds())
	res.ReqS = Num(float64(res.Requests-res.Errors) / res.Wall.Seconds())
	res.TTFT, res.ITL, res.E2E = percentiles(ttft), percentiles(gaps), percentiles(e2e)
	res.Rate, res.MeanLen = Num(nan), Num(nan)
	if res.Drafted > 0 {
		res.Rate = Num(float64(res.Accepted) / float64(res.Drafted))
	}
	if nb > 0 {
		res.MeanLen = Num(1 + float64(res.Accepted)/float64(nb))
	}
	after, err := ServiceStats(ctx, nc)
	if err != nil {
		return nil, err
	}
	res.Server, res.ServerRun = after, statsDelta(before, after)
	return res, nil
}

// oneRequest sends request i and reads its stream.
func oneRequest(ctx context.Context, nc *nats.Conn, o LoadOptions, i int) loadReq {
	p := o.Prompts[i%len(o.Prompts)]
	mt, temp, seed := o.MaxTokens, o.Temp, o.Seed+uint64(i)
	req := api.Request{Prompt: p.Text, MaxTokens: &mt, Temperature: &temp, Seed: &seed, Speculative: o.Speculative}
	var r loadReq
	t0 := time.Now()
	stream, err := api.Generate(ctx, nc, req)
	if err != nil {
		r.err = err
		return r
	}
	last := t0
	for m, err := range stream {
		if err != nil {
			r.err = err
			return r
		}
		now := time.Now()
		switch m.Status {
		case api.StatusToken:
			if r.nb == 0 && r.tokens == 0 {
				r.ttft = now.Sub(t0)
			} else {
				r.gaps = append(r.gaps, now.Sub(last))
			}
			last = now
			r.tokens += len(m.Chunk.Tokens)
			if m.Drafted > 0 {
				r.nb++
				r.drafted += m.Drafted
				r.accepted += m.Accepted
			}
		case api.StatusDone:
			r.e2e = now.Sub(t0)
		}
	}
	return r
}

// WriteLoad prints a load result as a few lines.
func (l *LoadResult) WriteLoad(w io.Writer) {
	o := l.Options
	mode := "closed loop"
	if o.Rate > 0 {
		mode = fmt.Sprintf("%.2f req/s Poisson arrivals", o.Rate)
	}
	fmt.Fprintf(w, "load: %d requests (%d failed) by %d clients, %s, %d tokens each: %s tok/s, %s req/s over %.1f s\n",
		l.Requests, l.Errors, o.Clients, mode, o.MaxTokens, fd(l.TokS, 1), fd(l.ReqS, 2), l.Wall.Seconds())
	pp := func(name string, p Percentiles) {
		fmt.Fprintf(w, "  %-4s ms: p50 %s  p90 %s  p99 %s\n", name, fd(p.P50, 1), fd(p.P90, 1), fd(p.P99, 1))
	}
	pp("TTFT", l.TTFT)
	pp("ITL", l.ITL)
	pp("E2E", l.E2E)
	fmt.Fprintf(w, "  acceptance (client, from headers): %d of %d draft tokens (%s), mean accepted length %s\n",
		l.Accepted, l.Drafted, pct(l.Rate), fd(l.MeanLen, 2))
	if s := l.ServerRun; s != nil {
		fmt.Fprintf(w, "  acceptance (server $SRV.STATS over the run): %d of %d (%.0f%%), mean accepted length %.2f; %d requests, %d generated tokens\n",
			s.Accepted, s.DraftTokens, 100*s.Rate, s.MeanAcceptanceLength, s.Requests, s.Generated)
	}
	if l.FirstErr != "" {
		fmt.Fprintf(w, "  first error: %s\n", strings.TrimSpace(l.FirstErr))
	}
}
