//go:build unix

package engine

import (
	"context"
	"flag"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/stages"
)

// cpuTime is the process's user and system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// overheadTarget is a GGUF target BenchmarkPipelineOverhead also measures.
var overheadTarget = flag.String("overhead-target", "", "a GGUF target that BenchmarkPipelineOverhead measures too (prompted by token ids)")

// BenchmarkPipelineOverhead measures what the concurrent pipeline costs
// over the plain loop when it decodes plainly: one greedy sequence of the
// bundled target on one thread, n tokens, through Plain, through a
// pipeline without a draft (k = 0), and through the bundled pair's
// pipeline under -k auto (which chooses k = 0 on this pair nearly always;
// auto-k0-share), interleaved (one of each per iteration, the order
// alternating), all detokenizing every token. Time per token is, for Plain, its wall
// time after the prompt over n-1 tokens, and for the pipeline the time
// from its first token to its last over n-1 (RequestStats.ITLSum): the
// steady state, prompt excluded on both sides. The process's CPU time
// per token over each whole run is measured too: on a machine that other
// work loads, the wall times favour the pipeline (its goroutines sleep
// and wake each step, which the kernel's scheduler rewards over a thread
// that never sleeps), while CPU time counts only the work each side does.
// Reported: each side's median tok/s, the median of the pairs' ratios
// pipeline/plain by wall time and by CPU time (goal ≥ 0.97; auto-… the
// same for the auto pipeline), the extra
// CPU time per pipeline step, and where a pipeline step's time goes, per step, from the
// graph's stage counters: verify (the forward pass, the greedy rule and
// the rollback), accept (commit, detokenize, stops), draft (choosing k =
// 0), and the rest of the mean step, the handoffs between the three goroutines (pipe sends
// and receives, wake-ups) and the device lock. Run it with -benchtime=Nx
// for N pairs:
//
//	go test -run '^$' -bench PipelineOverhead -benchtime 21x ./engine/
func BenchmarkPipelineOverhead(b *testing.B) {
	b.Run("bundled", func(b *testing.B) { pipelineOverhead(b, "") })
	if *overheadTarget != "" {
		b.Run("target", func(b *testing.B) { pipelineOverhead(b, *overheadTarget) })
	}
}

// pipelineOverhead is BenchmarkPipelineOverhead on the bundled pair
// (target "") or on target alone.
func pipelineOverhead(b *testing.B, target string) {
	const n = 256
	o := bundled()
	o.Target, o.Draft = target, DraftNone
	e, err := Open(o)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	tok, _ := e.Tokenizer() // nil for a model without a vocabulary: nothing detokenized
	prompt := []int32{1, 2, 3, 4, 5, 6, 7, 8}
	if target == "" {
		if prompt, err = e.Encode("The jury said", true); err != nil {
			b.Fatal(err)
		}
	}
	maxPos := len(prompt) + n + 1
	ctx := context.Background()
	var want []int32

	plain := func() (time.Duration, time.Duration) {
		add := func(int32) {}
		if tok != nil {
			dec := tok.NewDecoder()
			add = func(t int32) { _ = dec.Add(t) }
		}
		c0 := cpuTime(b)
		var out []int32
		st, err := e.Plain(ctx, prompt, n, maxPos, len(prompt), 1, sample.Params{}, func(t int32) (bool, error) {
			out = append(out, t)
			add(t)
			return true, nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if want == nil {
			want = out
		} else if !slices.Equal(out, want) {
			b.Fatal("the plain loop decoded other tokens")
		}
		return st.Wall / (n - 1), (cpuTime(b) - c0) / n
	}
	// ea is the bundled pair under -k auto: a pipeline with the draft
	// model whose policy mostly chooses k = 0 on this pair (the cost table
	// is the engine's, calibrated by the warm-up run).
	var ea *Engine
	if target == "" {
		oa := bundled()
		oa.Draft, oa.Auto, oa.K = DraftBundled, true, 8 // the draft must be named: "" decodes plainly
		if ea, err = Open(oa); err != nil {
			b.Fatal(err)
		}
		defer ea.Close()
	}
	var verify, accept, drafting, steps time.Duration
	var autoSteps, autoK0 int
	run := func(e *Engine, auto bool) (time.Duration, time.Duration) {
		cfg, err := e.PipelineConfig(1, maxPos+8, len(prompt))
		if err != nil {
			b.Fatal(err)
		}
		cfg.Stop = nil // n tokens, as the plain loop
		p, err := stages.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		in := make(chan stages.Request, 1)
		in <- stages.Request{ID: "r", PromptIDs: prompt, MaxTokens: n}
		close(in)
		out := make(chan stages.Chunk, n+1)
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		c0 := cpuTime(b)
		if err := p.Run(rctx, in, out); err != nil {
			b.Fatal(err)
		}
		cpu := (cpuTime(b) - c0) / n
		close(out)
		var toks []int32
		var final stages.Chunk
		for c := range out {
			toks = append(toks, c.Tokens...)
			if c.Final {
				final = c
			}
		}
		if final.Err != nil || final.Stats == nil || !slices.Equal(toks, want) {
			b.Fatalf("pipeline: %v, %d tokens (want the plain loop's %d)", final.Err, len(toks), len(want))
		}
		if auto {
			autoSteps += final.Stats.Steps
			autoK0 += final.Stats.KChosen[0]
			return final.Stats.ITLSum / time.Duration(final.Stats.Generated-1), cpu
		}
		g := p.Graph()
		verify += g.Stage("verify").Stats().Busy
		accept += g.Stage("accept").Stats().Busy
		drafting += g.Stage("draft").Stats().Busy
		steps += time.Duration(final.Stats.Steps)
		return final.Stats.ITLSum / time.Duration(final.Stats.Generated-1), cpu
	}

	pipeline := func() (time.Duration, time.Duration) { return run(e, false) }
	autoRun := func() (time.Duration, time.Duration) {
		if ea == nil {
			return 0, 0
		}
		return run(ea, true)
	}
	plain() // warm up, and the reference tokens
	pipeline()
	autoRun() // and the auto policy's calibration
	verify, accept, drafting, steps, autoSteps, autoK0 = 0, 0, 0, 0, 0, 0
	var plainStep, pipeStep, ratio, plainCPU, pipeCPU, cpuRatio, autoRatio, autoCPURatio []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var a, p, au, ac, pc, auc time.Duration
		if i%2 == 0 {
			a, ac = plain()
			p, pc = pipeline()
			au, auc = autoRun()
		} else {
			au, auc = autoRun()
			p, pc = pipeline()
			a, ac = plain()
		}
		plainStep = append(plainStep, a.Seconds())
		pipeStep = append(pipeStep, p.Seconds())
		ratio = append(ratio, a.Seconds()/p.Seconds())
		plainCPU = append(plainCPU, ac.Seconds())
		pipeCPU = append(pipeCPU, pc.Seconds())
		cpuRatio = append(cpuRatio, ac.Seconds()/pc.Seconds())
		if ea != nil {
			autoRatio = append(autoRatio, a.Seconds()/au.Seconds())
			autoCPURatio = append(autoCPURatio, ac.Seconds()/auc.Seconds())
		}
	}
	b.StopTimer()
	median := func(x []float64) float64 {
		x = slices.Clone(x)
		slices.Sort(x)
		if len(x)%2 == 1 {
			return x[len(x)/2]
		}
		return (x[len(x)/2-1] + x[len(x)/2]) / 2
	}
	pipeMed := median(pipeStep)
	b.ReportMetric(1/median(plainStep), "plain-tok/s")
	b.ReportMetric(1/pipeMed, "pipeline-tok/s")
	b.ReportMetric(median(ratio), "ratio-median")
	b.ReportMetric(median(cpuRatio), "cpu-ratio-median")
	if ea != nil {
		b.ReportMetric(median(autoRatio), "auto-ratio-median")
		b.ReportMetric(median(autoCPURatio), "auto-cpu-ratio-median")
		b.ReportMetric(float64(autoK0)/float64(max(autoSteps, 1)), "auto-k0-share")
	}
	b.ReportMetric(median(plainCPU)*1e6, "plain-cpu-µs/tok")
	b.ReportMetric(median(pipeCPU)*1e6, "pipeline-cpu-µs/tok")
	us := func(d time.Duration) float64 { return d.Seconds() * 1e6 / float64(steps) }
	b.ReportMetric(median(plainStep)*1e6, "plain-µs/step")
	b.ReportMetric(pipeMed*1e6, "pipeline-µs/step")
	b.ReportMetric(us(verify), "verify-µs/step")
	b.ReportMetric(us(accept), "accept-µs/step")
	b.ReportMetric(us(drafting), "draft-µs/step")
	mean := 0.0
	for _, x := range pipeStep {
		mean += x / float64(len(pipeStep))
	}
	b.ReportMetric(mean*1e6-us(verify)-us(accept)-us(drafting), "handoff-µs/step")
}
