package serve_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/specd-dev/specd/api"
	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/serve"
	"github.com/specd-dev/specd/stages"
)

// BenchmarkNATSOverhead measures what NATS adds: each iteration runs the
// same greedy request once through specd.v1.generate (embedded server,
// a real client) and once straight into the server's own pipeline
// (Submit), alternately, and reports the medians of time to first token
// and tokens/s of both, and their differences.
//
//	go test -run '^$' -bench NATSOverhead -benchtime 50x ./serve
func BenchmarkNATSOverhead(b *testing.B) {
	o := engine.DefaultOptions()
	o.Threads, o.DraftThreads = 1, 1
	e, err := engine.Open(o)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	cfg, err := e.PipelineConfig(1, 256, 256)
	if err != nil {
		b.Fatal(err)
	}
	p, err := stages.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	render, _ := e.ChatRenderer()
	srv, err := serve.New(serve.Config{Pipeline: p, Render: render, TargetModel: e.TargetName,
		Encode: func(t string) ([]int32, error) { return e.Encode(t, true) },
		NATS:   serve.NATSConfig{Listen: "127.0.0.1:-1"}, Log: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	select {
	case <-srv.Ready():
	case err := <-done:
		b.Fatal(err)
	case <-time.After(30 * time.Second):
		b.Fatal("server not ready")
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	const prompt, n = "The jury said", 64
	ids, err := e.Encode(prompt, true)
	if err != nil {
		b.Fatal(err)
	}
	viaNATS := func() (ttft, total time.Duration, tokens int) {
		m := n
		t0 := time.Now()
		replies, err := api.Generate(ctx, nc, api.Request{Prompt: prompt, MaxTokens: &m})
		if err != nil {
			b.Fatal(err)
		}
		for r, err := range replies {
			if err != nil {
				b.Fatal(err)
			}
			if r.Status == api.StatusToken && ttft == 0 {
				ttft = time.Since(t0)
			}
			if r.Status == api.StatusDone {
				tokens = r.Summary.Usage.CompletionTokens
			}
		}
		return ttft, time.Since(t0), tokens
	}
	inProcess := func() (ttft, total time.Duration, tokens int) {
		t0 := time.Now()
		st, err := p.Submit(ctx, stages.Request{ID: "inproc", PromptIDs: ids, MaxTokens: n, Params: sample.Params{TopP: 1}})
		if err != nil {
			b.Fatal(err)
		}
		for c, err := range st.Chunks(ctx) {
			if err != nil {
				b.Fatal(err)
			}
			if c.Err != nil {
				b.Fatal(c.Err)
			}
			if !c.Final && ttft == 0 {
				ttft = time.Since(t0)
			}
			tokens += len(c.Tokens)
		}
		return ttft, time.Since(t0), tokens
	}
	var ttftN, ttftP, tpsN, tpsP []float64
	b.ResetTimer()
	for range b.N {
		t, d, k := viaNATS()
		ttftN, tpsN = append(ttftN, ms(t)), append(tpsN, float64(k)/d.Seconds())
		t, d, k = inProcess()
		ttftP, tpsP = append(ttftP, ms(t)), append(tpsP, float64(k)/d.Seconds())
	}
	b.StopTimer()
	b.ReportMetric(median(ttftN), "ttft-nats-ms")
	b.ReportMetric(median(ttftP), "ttft-inproc-ms")
	b.ReportMetric(median(ttftN)-median(ttftP), "ttft-added-ms")
	b.ReportMetric(median(tpsN), "tok/s-nats")
	b.ReportMetric(median(tpsP), "tok/s-inproc")
	b.ReportMetric(100*(1-median(tpsN)/median(tpsP)), "tok/s-lost-%")
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
