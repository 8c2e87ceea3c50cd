//go:build unix

package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/stages"
)

// BenchmarkAutoShort measures what -k auto costs over plain decoding
// through the pipeline on short requests, as specd bench runs them: the
// bundled pair, one slot, four greedy requests of n tokens queued at once
// into one pipeline, which is built afresh for each run (its draft backend
// and auto state new, the engine's cost table shared and calibrated by the
// warm-up). Plain is the same engine's pipeline with -d none (bench's
// baseline). The two runs alternate in order, one of each per iteration.
// Reported: the medians of the pairs' ratios plain/auto by the process's
// CPU time per token over the whole run (prefill included; less disturbed
// than wall time by other work on the machine) and by wall time, each
// side's CPU µs per token, and the share of auto's steps at k = 0 and of
// its probes. Run it with -benchtime=Nx for N pairs:
//
//	go test -run '^$' -bench AutoShort -benchtime 21x ./engine/
func BenchmarkAutoShort(b *testing.B) {
	for _, n := range []int{64, 256} {
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) { benchAutoShort(b, n) })
	}
}

func benchAutoShort(b *testing.B, n int) {
	o := bundled()
	o.Draft, o.Auto, o.K = DraftBundled, true, 8
	e, err := Open(o)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	texts := []string{ // prompts of specd bench's set (bench/prompts)
		"Ierulli will replace Desmond D. Connall who has been called to active military service but is expected back on the job by March 31.",
		"What is the difference between a comet and an asteroid?",
		"The Dreadnought was built on designs supplied by the United States in 1959 and was launched last year. It is a killer sub -- that is, a hunter of enemy subs.",
		"Why does the sky look blue during the day?",
	}
	var prompts [][]int32
	maxPrompt := 0
	for _, t := range texts {
		ids, err := e.Encode(t, true)
		if err != nil {
			b.Fatal(err)
		}
		prompts = append(prompts, ids)
		maxPrompt = max(maxPrompt, len(ids))
	}
	maxPos := maxPrompt + n + 2*o.K + 2
	plainOpts := o
	plainOpts.Draft, plainOpts.Auto = DraftNone, false
	var want [][]int32
	var steps, k0, probes int
	run := func(opts Options, auto bool) (cpu, wall time.Duration) {
		cfg, err := e.PipelineConfigWith(opts, 1, maxPos, maxPrompt)
		if err != nil {
			b.Fatal(err)
		}
		cfg.Stop = nil
		p, err := stages.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		in := make(chan stages.Request, len(prompts))
		for i, ids := range prompts {
			in <- stages.Request{ID: fmt.Sprint(i), PromptIDs: ids, MaxTokens: n, Params: sample.Params{}}
		}
		close(in)
		out := make(chan stages.Chunk, len(prompts)*(n+1))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c0, w0 := cpuTime(b), time.Now()
		if err := p.Run(ctx, in, out); err != nil {
			b.Fatal(err)
		}
		cpu, wall = cpuTime(b)-c0, time.Since(w0)
		close(out)
		got := make([][]int32, len(prompts))
		for c := range out {
			var i int
			fmt.Sscan(c.ID, &i)
			got[i] = append(got[i], c.Tokens...)
			if c.Final {
				if c.Err != nil || c.Stats == nil {
					b.Fatalf("request %s: %v", c.ID, c.Err)
				}
				if auto {
					steps += c.Stats.Steps
					k0 += c.Stats.KChosen[0]
					probes += c.Stats.Probes
				}
			}
		}
		if want == nil {
			want = got
		} else if !slices.EqualFunc(got, want, slices.Equal) {
			b.Fatal("auto decoded other tokens than plain decoding")
		}
		tokens := time.Duration(len(prompts) * n)
		return cpu / tokens, wall / tokens
	}
	run(plainOpts, false) // warm-up, the reference tokens
	run(o, true)          // and the cost table's calibration
	steps, k0, probes = 0, 0, 0
	var cpuRatio, wallRatio, plainCPU, autoCPU []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var pc, pw, ac, aw time.Duration
		if i%2 == 0 {
			pc, pw = run(plainOpts, false)
			ac, aw = run(o, true)
		} else {
			ac, aw = run(o, true)
			pc, pw = run(plainOpts, false)
		}
		cpuRatio = append(cpuRatio, pc.Seconds()/ac.Seconds())
		wallRatio = append(wallRatio, pw.Seconds()/aw.Seconds())
		plainCPU = append(plainCPU, pc.Seconds())
		autoCPU = append(autoCPU, ac.Seconds())
	}
	b.StopTimer()
	b.ReportMetric(medianOf(cpuRatio), "auto-cpu-ratio-median")
	b.ReportMetric(medianOf(wallRatio), "auto-wall-ratio-median")
	b.ReportMetric(medianOf(plainCPU)*1e6, "plain-cpu-µs/tok")
	b.ReportMetric(medianOf(autoCPU)*1e6, "auto-cpu-µs/tok")
	b.ReportMetric(float64(k0)/float64(max(steps, 1)), "auto-k0-share")
	b.ReportMetric(float64(probes)/float64(max(steps, 1)), "auto-probe-share")
}

func medianOf(x []float64) float64 {
	x = slices.Clone(x)
	slices.Sort(x)
	if len(x)%2 == 1 {
		return x[len(x)/2]
	}
	return (x[len(x)/2-1] + x[len(x)/2]) / 2
}
