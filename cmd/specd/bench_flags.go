package main

// The flags of specd bench, and the grid of configurations they list.

import (
	"fmt"
	"io"
	"strings"

	"github.com/specd-dev/specd/bench"
	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/serve"
)

// benchOpts are the flags of specd bench.
type benchOpts struct {
	target, draft        string
	prompts              string
	nPrompts, n          int
	ks, pmins, drafts    string
	temps, batches, ths  string
	adaptive             bool
	reps, warmup         int
	seed                 uint64
	out                  string
	synthetic            string
	driftTol             float64
	draftThreads         int
	preDraft             bool
	preDraftMin          float64
	verifyBatch          int
	noProgress, noFigs   bool
	noTimeline, noShareE bool
	profile              bool
	replot, peerBin      string
	natsURLs             string
	nats                 serve.NATSConfig
	clients, requests    int
	rate                 float64
}

// benchFlags registers specd bench's flags on fs: into o, and where the
// target runs into dev.
func benchFlags(fs *flagSet, o *benchOpts, dev *engine.Options, stderr io.Writer) {
	d := engine.DefaultOptions()
	fs.StringVar(&o.target, "m", "", "`PATH|bundled|bundled-draft`: target model: a GGUF file or a bundled model; default: the bundled target, with the bundled draft")
	fs.StringVar(&o.draft, "d", "", "`PATH|bundled|ngram`: draft model: a GGUF file, the bundled draft or prompt lookup (with -m, required for --draft model)")
	fs.StringVar(&o.prompts, "prompts", bench.SetAll, "prompt set: brown (held-out Brown sentences), assistant (short requests), all, or a JSON-lines `file` of {\"id\", \"category\", \"text\" or \"ids\"}")
	fs.IntVar(&o.nPrompts, "n-prompts", 8, "prompts decoded per run, taken in turn from each category (0: all)")
	fs.IntVar(&o.n, "n", 64, "tokens generated per prompt (no stop at end of text: every configuration does the same work)")
	fs.StringVar(&o.ks, "k", "1,2,4,8", "draft `lengths`, comma-separated; auto adds the cost-aware policy (k in [0, the largest k], or [0, 8] alone): 1,2,4,8,auto")
	fs.StringVar(&o.pmins, "p-min", "0", "confidence stops of the draft model, comma-separated `list` (0: none)")
	fs.BoolVar(&o.adaptive, "adaptive", false, "also measure adaptive k (up to the largest --k, with the measured c) for each combination")
	fs.StringVar(&o.drafts, "draft", "", "draft `modes`: model, ngram or model,ngram (default: model with a draft model, else ngram)")
	fs.StringVar(&o.temps, "temp", "0", "sampling `temperatures`, comma-separated (0: greedy, checked token for token against plain decoding)")
	fs.StringVar(&o.batches, "batch", "1", "batch `sizes` (sequences decoded at once), comma-separated")
	fs.StringVar(&o.ths, "threads", "1", "target thread `counts`, comma-separated (plain decoding uses the same)")
	addTargetFlags(fs, dev)
	fs.IntVar(&o.draftThreads, "draft-threads", d.DraftThreads, "threads of the draft model")
	fs.IntVar(&o.reps, "reps", 3, "timed A/B pairs (baseline and configuration) per configuration")
	fs.IntVar(&o.warmup, "warmup", 1, "untimed A/B pairs first")
	fs.Uint64Var(&o.seed, "seed", 1, "sampling seed: prompt i samples with seed+i; also the synthetic acceptance's")
	fs.StringVar(&o.out, "out", "bench-out", "`directory` for results.csv, results.json, report.md and the PNGs")
	fs.StringVar(&o.synthetic, "synthetic-acceptance", "", "accept each draft token with probability `α` (or per-position rates a1,a2,…, the last repeating) whatever it is: the target computes for real; exactness is not checked")
	fs.Float64Var(&o.driftTol, "drift-tol", 0.10, "flag a pair whose baseline is more than this `fraction` from the median of its baseline")
	fs.BoolVar(&o.preDraft, "pre-draft", d.PreDraft, "draft step n+1 while step n is verified (see specd generate)")
	fs.Float64Var(&o.preDraftMin, "pre-draft-min", d.PreDraftMin, "pre-draft only while α^(k+1) is at least `p`")
	fs.IntVar(&o.verifyBatch, "verify-batch", d.VerifyBatch, "wait for the blocks of `n` sequences before a verification pass (0: verify what is ready)")
	fs.BoolVar(&o.noShareE, "no-share-embd", false, "do not let the draft use the target's token embeddings")
	fs.BoolVar(&o.noProgress, "no-progress", false, "no progress bar on stderr")
	fs.BoolVar(&o.noFigs, "no-plots", false, "write no PNG figures")
	fs.BoolVar(&o.noTimeline, "no-timeline", false, "skip the extra run of the best configuration that records the timeline")
	addNATSFlags(fs, &o.nats, &o.natsURLs)
	fs.IntVar(&o.clients, "clients", 4, "with --nats: concurrent clients")
	fs.Float64Var(&o.rate, "rate", 0, "with --nats: mean arrival rate in requests per `second` (Poisson; 0: each client sends its next request when its last ends)")
	fs.IntVar(&o.requests, "requests", 32, "with --nats: requests in all")
	fs.BoolVar(&o.profile, "profile", false, "also profile one target step and one draft step stage by stage (projections, attention, FFN, norms, output head, KV, sampling, pipeline overhead) against the machine's measured memory bandwidth")
	fs.StringVar(&o.peerBin, "peer-bin", "", "also run llama.cpp's llama-bench and llama-speculative-simple from `directory` (e.g. .cache/llama.cpp/build/bin) on the same models, prompts, k, temperatures and threads at batch 1, beside specd in the tables and plots")
	fs.StringVar(&o.replot, "replot", "", "measure nothing: redraw report.md and the PNGs of `directory` from its results.json")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: specd bench [-m TARGET -d DRAFT] [--prompts SET|FILE.jsonl] [--k 1,2,4,8] [--p-min …] [--adaptive]")
		fmt.Fprintln(stderr, "                   [--draft model,ngram] [--temp 0,0.8] [--batch 1,4,8] [--threads 1] [--reps 3] [--out DIR]")
		fmt.Fprintln(stderr, "       specd bench --nats URL [--clients 4] [--rate R] [--requests 32] [-n 64] [--prompts SET|FILE] [--k K] [--out DIR]")
		fmt.Fprintln(stderr, "\nMeasures every combination of the lists against plain decoding of the same target, in one")
		fmt.Fprintln(stderr, "process, as interleaved A/B pairs after warm-up; flags a baseline that drifted; checks greedy")
		fmt.Fprintln(stderr, "output token for token. Without -m: the bundled pair. The best configuration goes to stdout;")
		fmt.Fprintln(stderr, "everything to --out (report.md, results.csv, results.json, PNGs). With --nats: load a running")
		fmt.Fprintln(stderr, "specd serve with concurrent clients instead (throughput, TTFT/ITL/E2E percentiles, acceptance")
		fmt.Fprintln(stderr, "seen by the clients and in the server's $SRV.STATS; --out DIR/load.json).\n\nflags:")
		fs.PrintDefaults()
	}
}

// grid parses the list flags.
func (o *benchOpts) grid() (bench.Grid, []float64, error) {
	var g bench.Grid
	var err error
	if g.K, g.Auto, err = bench.ParseKs(o.ks); err != nil {
		return g, nil, fmt.Errorf("--k: %w", err)
	}
	if g.PMin, err = bench.ParseFloats(o.pmins); err != nil {
		return g, nil, fmt.Errorf("--p-min: %w", err)
	}
	if g.Temps, err = bench.ParseFloats(o.temps); err != nil {
		return g, nil, fmt.Errorf("--temp: %w", err)
	}
	if g.Batches, err = bench.ParseInts(o.batches); err != nil {
		return g, nil, fmt.Errorf("--batch: %w", err)
	}
	if g.Threads, err = bench.ParseInts(o.ths); err != nil {
		return g, nil, fmt.Errorf("--threads: %w", err)
	}
	g.Adaptive = o.adaptive
	switch {
	case o.drafts != "":
		for _, d := range strings.Split(o.drafts, ",") {
			g.Drafts = append(g.Drafts, strings.TrimSpace(d))
		}
	case o.draft == engine.DraftNGram:
		g.Drafts = []string{bench.DraftNGram}
	case o.target != "" && o.draft == "":
		g.Drafts = []string{bench.DraftNGram} // an explicit target without -d: prompt lookup
	default:
		g.Drafts = []string{bench.DraftModel}
	}
	var synth []float64
	if o.synthetic != "" {
		if synth, err = bench.ParseFloats(o.synthetic); err != nil {
			return g, nil, fmt.Errorf("--synthetic-acceptance: %w", err)
		}
		for _, a := range synth {
			if !(a >= 0 && a <= 1) {
				return g, nil, fmt.Errorf("--synthetic-acceptance: %g not in [0, 1]", a)
			}
		}
	}
	return g, synth, g.Check()
}
