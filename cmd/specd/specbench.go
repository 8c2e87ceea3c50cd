package main

// specbench measures speculative against plain decoding side by side on
// one target: the cost ratio c of draft and target passes, acceptance α,
// predicted and measured speedups per draft length, pre-drafting, and a
// batch through the concurrent pipeline against the same pipeline run one
// stage at a time. This file holds the command and the harness that runs
// pipelines; specbench_measure.go the measurements and what they print.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/stages"
)

func init() {
	register(command{name: "specbench", summary: "measure speculative against plain decoding side by side", run: runSpecBench})
}

// runSpecBench measures, in one run on one target: plain decoding and
// speculative decoding of one sequence (tok/s, acceptance α, cost ratio c,
// predicted and measured speedup) for each draft length of --ks, with and
// without pre-drafting, then a batch of sequences through the concurrent
// pipeline and through the same pipeline run one stage at a time.
func runSpecBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o generateOpts
	fs := newFlagSet("specbench", stderr)
	eo := addSpecFlags(fs)
	fs.StringVar(&eo.Target, "m", "", "target model `file`; default: the bundled target (and then the bundled draft)")
	fs.StringVar(&o.prompt, "p", "", "prompt `text`")
	fs.StringVar(&o.promptIDs, "prompt-ids", "", "prompt as comma-separated token `ids`")
	fs.IntVar(&o.n, "n", 128, "tokens to generate per sequence")
	fs.IntVar(&eo.Threads, "threads", 1, "threads of plain decoding and default --verify-threads")
	seqs := fs.Int("seqs", 4, "sequences for the concurrent-versus-serial pipeline comparison (0 skips it)")
	temp := fs.Float64("temp", 0, "sampling temperature; 0 is greedy")
	seed := fs.Uint64("seed", 1, "random seed")
	reps := fs.Int("reps", 3, "runs of each configuration; the fastest is reported (the machine may be shared)")
	ksFlag := fs.String("ks", "", "comma-separated draft `lengths` to measure one after another, with a summary table (default: -k)")
	addStatsFlag(fs) // generate's; specbench prints its figures to stdout regardless
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.params.Temp, o.params.Seed, o.batch = float32(*temp), *seed, 512
	eo.ApplyDefaults()
	if err := o.checkPrompt(); err != nil {
		return err
	}
	ks := []int{eo.K}
	if *ksFlag != "" {
		var err error
		if ks, err = parseInts(*ksFlag); err != nil {
			return fmt.Errorf("--ks: %w", err)
		}
		for _, k := range ks {
			if k < 1 || k > 64 {
				return fmt.Errorf("--ks: draft length %d not in [1, 64]", k)
			}
		}
		eo.K = slices.Max(ks)
	}
	switch {
	case !eo.Speculative():
		return errors.New("-d DRAFT is required with -m (a GGUF file, bundled or ngram)")
	case o.n < 1 || eo.Threads < 1 || *seqs < 0 || *reps < 1:
		return errors.New("-n, --threads and --reps must be positive, --seqs not negative")
	}
	o.eng = *eo
	e, prompt, err := openSpec(o, stderr)
	if err != nil {
		return err
	}
	defer e.Close()
	s := e.Options()
	b := &specBench{e: e, o: o, s: s, prompt: prompt, reps: *reps, out: stdout,
		params: sample.Params{Temp: o.params.Temp, Seed: o.params.Seed}}
	b.vt = s.VerifyThreads
	if b.vt == 0 {
		b.vt = s.Threads
	}
	b.maxPos = len(prompt) + o.n + s.K + 2
	if b.maxPos > e.CtxLen() {
		return fmt.Errorf("prompt and -n need %d positions, the model has %d", b.maxPos, e.CtxLen())
	}
	t := e.Target.Config
	fmt.Fprintf(stdout, "target %s (%d layers, dim %d, vocab %d), draft %s (shared embeddings %v), prompt %d tokens, %d generated, verify threads %d, draft threads %d\n",
		e.TargetName, t.Layers, t.Dim, t.Vocab, s.Draft, e.Shared, len(prompt), o.n, b.vt, s.DraftThreads)
	if err := b.costs(); err != nil {
		return err
	}
	if err := b.plain(ctx); err != nil {
		return err
	}
	var rows []kRow
	for _, k := range ks {
		r, err := b.speculative(ctx, k)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}
	if len(rows) > 1 {
		b.summary(rows)
	}
	if *seqs > 0 {
		return b.batch(ctx, *seqs)
	}
	return nil
}

// specBench holds one specbench run's models, options and shared figures.
type specBench struct {
	e      *engine.Engine
	o      generateOpts
	s      engine.Options // as opened; each draft length runs a copy with its own K
	prompt []int32
	params sample.Params
	reps   int
	vt     int // verify threads
	maxPos int
	out    io.Writer

	tt1, td1 time.Duration      // 1-token forward passes of target and draft
	c        float64            // td1 / tt1 (0 for the n-gram draft)
	plainTok engine.PlainResult // the plain loop, fastest of reps
	loopCPU  time.Duration
	lastCPU  time.Duration // CPU time of the latest run (least of its reps)
}

// run repeats a pipeline configuration b.reps times and keeps the fastest
// run by wall time (and the least CPU time, separately, in b.lastCPU).
func (b *specBench) run(ctx context.Context, so *engine.Options, n int, serial bool) (best stages.Snapshot, bestRes []runResult, err error) {
	bestCPU := time.Duration(-1)
	for r := 0; r < b.reps; r++ {
		c0 := cpuTime()
		m, res, err := b.runOnce(ctx, so, n, serial)
		c := cpuTime() - c0
		if err != nil {
			return m, res, err
		}
		if r == 0 || m.Wall < best.Wall {
			best, bestRes = m, res
		}
		if bestCPU < 0 || c < bestCPU {
			bestCPU = c
		}
	}
	b.lastCPU = bestCPU
	return best, bestRes, nil
}

func (b *specBench) runOnce(ctx context.Context, so *engine.Options, n int, serial bool) (stages.Snapshot, []runResult, error) {
	cfg, err := b.e.PipelineConfigWith(*so, n, b.maxPos, len(b.prompt))
	if err != nil {
		return stages.Snapshot{}, nil, err
	}
	cfg.Serial = serial
	cfg.Stop = nil // fixed lengths for comparable figures
	p, err := stages.New(cfg)
	if err != nil {
		return stages.Snapshot{}, nil, err
	}
	var reqs []stages.Request
	for i := 0; i < n; i++ {
		pr := b.params
		pr.Seed += uint64(i)
		reqs = append(reqs, stages.Request{ID: fmt.Sprint(i), PromptIDs: rotate(b.prompt, i), MaxTokens: b.o.n, Params: pr})
	}
	res, err := runMany(ctx, p, reqs, nil)
	if err != nil {
		return stages.Snapshot{}, nil, err
	}
	for _, r := range res {
		if r.final.Err != nil {
			return stages.Snapshot{}, nil, r.final.Err
		}
	}
	return p.Metrics().Snapshot(), res, nil
}

func tps(m stages.Snapshot) float64 { return float64(m.Generated) / m.Wall.Seconds() }

func perCPU(m stages.Snapshot, c time.Duration) float64 {
	return float64(m.Generated) / max(c.Seconds(), 1e-9)
}

// rotate returns prompt with its tokens after the first rotated by i, so
// the sequences of a batch differ.
func rotate(prompt []int32, i int) []int32 {
	if i == 0 || len(prompt) < 3 {
		return prompt
	}
	out := append([]int32{}, prompt[:1]...)
	rest := prompt[1:]
	r := i % len(rest)
	out = append(out, rest[r:]...)
	return append(out, rest[:r]...)
}

// prefixWriter indents every line written through it.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	lines := strings.SplitAfter(string(b), "\n")
	for _, l := range lines {
		if l == "" {
			continue
		}
		if _, err := io.WriteString(p.w, p.prefix+l); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// parseInts parses a comma-separated list of integers.
func parseInts(s string) ([]int, error) {
	var out []int
	for i, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("item %d (%q) is not an integer", i+1, f)
		}
		out = append(out, v)
	}
	return out, nil
}
