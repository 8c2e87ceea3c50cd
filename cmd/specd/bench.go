package main

// specd bench: a sweep of speculative against plain decoding of one
// target over a grid of configurations (package bench), with a progress
// bar on stderr, a short table on stdout, and results.csv, results.json,
// report.md and PNG figures in --out.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/specd-dev/specd/api"
	"github.com/specd-dev/specd/bench"
	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/serve"
)

func init() {
	register(command{name: "bench", summary: "sweep speculative against plain decoding (k, p-min, draft, temp, batch): tables, CSV/JSON, report.md and plots", run: runBench})
}

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

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o benchOpts
	d := engine.DefaultOptions()
	fs := newFlagSet("bench", stderr)
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
	var dev engine.Options // where the target runs
	addTargetFlags(fs, &dev)
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
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "specd bench: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	o.target, o.draft = targetPath(o.target), draftPath(o.draft) // bundled, bundled-draft
	if o.replot != "" {
		return replot(o.replot, stdout)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.natsURLs != "" {
		return benchLoad(ctx, &o, set, args, stdout, stderr)
	}
	g, synth, err := o.grid()
	if err != nil {
		return err
	}
	switch {
	case o.n < 1 || o.reps < 1 || o.warmup < 0 || o.nPrompts < 0 || o.draftThreads < 1:
		return errors.New("-n, --reps and --draft-threads must be positive, --warmup and --n-prompts not negative")
	case !(o.driftTol > 0):
		return fmt.Errorf("--drift-tol %g: must be positive", o.driftTol)
	}
	ps, err := loadPrompts(o.prompts)
	if err != nil {
		return err
	}
	ps = bench.Pick(ps, o.nPrompts)
	if o.peerBin != "" {
		if err := bench.CheckPeerBin(o.peerBin); err != nil {
			return err
		}
	}

	eo := d
	eo.Target, eo.Draft, eo.Threads, eo.DraftThreads = o.target, o.draft, g.Threads[0], o.draftThreads
	eo.PreDraft, eo.PreDraftMin, eo.VerifyBatch, eo.NoShareEmbd = o.preDraft, o.preDraftMin, o.verifyBatch, o.noShareE
	eo.K = g.MaxK()
	eo.TargetBackend, eo.LlamaLib, eo.TargetDevice, eo.NGPULayers, eo.TargetThreads = dev.TargetBackend, dev.LlamaLib, dev.TargetDevice, dev.NGPULayers, dev.TargetThreads
	eo.ApplyDefaults()
	model := slices.Contains(g.Drafts, bench.DraftModel)
	switch {
	case model && (eo.Draft == "" || eo.Draft == engine.DraftNone):
		return errors.New("--draft model needs a draft model: give -d DRAFT (a GGUF file or bundled), or --draft ngram")
	case model && eo.Draft == engine.DraftNGram:
		return errors.New("-d ngram has no draft model: use --draft ngram")
	case !model && (eo.Draft == "" || eo.Draft == engine.DraftNone):
		eo.Draft = engine.DraftNGram
	}
	e, err := engine.Open(eo)
	if err != nil {
		return err
	}
	defer e.Close()
	fmt.Fprintln(stderr, e.ModelsLine())
	eo = e.Options()

	res0 := &bench.Results{Machine: bench.MachineInfo(), Args: append([]string{"bench"}, args...)}
	if res0.Models, err = bench.ModelsInfo(e); err != nil {
		return err
	}
	r, err := bench.NewEngineRunner(e, bench.RunnerOptions{Base: eo, Prompts: ps, N: o.n, Seed: o.seed, Synthetic: synth, MaxK: eo.K})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	pl := bench.Plan{Points: g.Points(), Reps: o.reps, Warmup: o.warmup, DriftTol: o.driftTol, Synthetic: len(synth) > 0, Timeline: !o.noTimeline}
	fmt.Fprintf(stderr, "bench: %d configurations × %d A/B pairs (+%d warm-up) over %d prompts of %d tokens; %s\n",
		len(pl.Points), o.reps, o.warmup, len(ps), o.n, res0.Machine.CPULine())
	bar := progressbar.NewOptions(pl.Steps(), progressbar.OptionSetWriter(stderr), progressbar.OptionSetVisibility(!o.noProgress),
		progressbar.OptionSetWidth(28), progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionSetDescription("bench"),
		progressbar.OptionShowElapsedTimeOnFinish(), progressbar.OptionSetRenderBlankState(true))
	res, err := bench.Sweep(ctx, r, pl, func(done, total int, what string) {
		bar.Describe(fmt.Sprintf("%-30s", what))
		bar.Set(done)
	})
	bar.Finish()
	if !o.noProgress {
		fmt.Fprintln(stderr)
	}
	if err != nil {
		return err
	}
	res.Machine, res.Models, res.Args = res0.Machine, res0.Models, res0.Args
	res.Settings = bench.Settings{N: o.n, Reps: o.reps, Warmup: o.warmup, Seed: o.seed, Prompts: o.prompts, PromptCount: len(ps),
		DriftTol: o.driftTol, Synthetic: synth, DraftThreads: o.draftThreads, PreDraft: eo.PreDraft, PreDraftMin: eo.PreDraftMin, VerifyBatch: eo.VerifyBatch}
	if o.profile {
		if res.Profile, err = r.Profile(ctx); err != nil {
			return err
		}
	}
	var peerErr error
	if o.peerBin != "" {
		tmp, err := os.MkdirTemp("", "specd-peer") // the bundled models, as files for llama.cpp
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		po, err := bench.EnginePeerOptions(e, o.peerBin, tmp, ps, o.n, o.reps, o.seed)
		if err != nil {
			return err
		}
		if res.Peers, err = bench.RunPeers(ctx, po, pl.Points, func(done, total int, what string) {
			fmt.Fprintf(stderr, "peer %d/%d: %s\n", done, total, what)
		}); err != nil {
			peerErr = err // specd's results are written all the same
			fmt.Fprintf(stderr, "specd bench: llama.cpp: %v\n", err)
		}
	}
	if err := writeBench(res, o.out, !o.noFigs, stdout); err != nil {
		return err
	}
	return peerErr
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

// loadPrompts is a built-in set by name, else a JSON-lines file.
func loadPrompts(name string) ([]bench.Prompt, error) {
	switch name {
	case bench.SetBrown, bench.SetAssistant, bench.SetAll:
		return bench.Builtin(name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("--prompts: %w (or a built-in set: brown, assistant, all)", err)
	}
	defer f.Close()
	ps, err := bench.ReadPrompts(f)
	if err != nil {
		return nil, fmt.Errorf("--prompts %s: %w", name, err)
	}
	return ps, nil
}

// writeBench writes the outputs into dir and the summary to stdout.
func writeBench(res *bench.Results, dir string, figs bool, stdout io.Writer) error {
	write := func(name string, f func(io.Writer) error) error {
		path := filepath.Join(dir, name)
		w, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := f(w); err != nil {
			w.Close()
			return fmt.Errorf("%s: %w", path, err)
		}
		return w.Close()
	}
	if err := write("results.json", res.WriteJSON); err != nil {
		return err
	}
	if err := write("results.csv", res.WriteCSV); err != nil {
		return err
	}
	var names []string
	if figs {
		var err error
		if names, err = bench.WritePlots(res, dir); err != nil {
			return err
		}
	}
	if err := write("report.md", func(w io.Writer) error { return res.WriteReport(w, names) }); err != nil {
		return err
	}
	res.WriteSummary(stdout)
	fmt.Fprintf(stdout, "wrote %s: report.md, results.csv, results.json", dir)
	for _, n := range names {
		fmt.Fprintf(stdout, ", %s", n)
	}
	fmt.Fprintln(stdout)
	return nil
}

// replot redraws the report and figures of dir from its results.json.
func replot(dir string, stdout io.Writer) error {
	f, err := os.Open(filepath.Join(dir, "results.json"))
	if err != nil {
		return fmt.Errorf("--replot: %w", err)
	}
	res, err := bench.ReadJSON(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("--replot: %w", err)
	}
	return writeBench(res, dir, true, stdout)
}

// benchLoad is specd bench --nats: clients of a running specd serve. The
// speculation flags, if given, go into every request (one value each);
// otherwise the server's defaults apply.
func benchLoad(ctx context.Context, o *benchOpts, set map[string]bool, args []string, stdout, stderr io.Writer) error {
	one := func(name, v string) (string, error) {
		if strings.Contains(v, ",") {
			return "", fmt.Errorf("--%s %s: load mode takes one value", name, v)
		}
		return v, nil
	}
	lo := bench.LoadOptions{Clients: o.clients, Rate: o.rate, Requests: o.requests, MaxTokens: o.n, Seed: o.seed}
	if v, err := one("temp", o.temps); err != nil {
		return err
	} else if lo.Temp, err = strconv.ParseFloat(v, 64); err != nil || lo.Temp < 0 {
		return fmt.Errorf("--temp %s: not a temperature", v)
	}
	var spec api.Speculative
	speculate := false
	if set["k"] {
		v, err := one("k", o.ks)
		if err != nil {
			return err
		}
		k, err := strconv.Atoi(v)
		if err != nil || k < 0 {
			return fmt.Errorf("--k %s: not a draft length", v)
		}
		spec.K, speculate = &k, true
	}
	if set["p-min"] {
		v, err := one("p-min", o.pmins)
		if err != nil {
			return err
		}
		pm, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("--p-min %s: %w", v, err)
		}
		spec.PMin, speculate = &pm, true
	}
	if set["adaptive"] {
		spec.Adaptive, speculate = &o.adaptive, true
	}
	if set["draft"] {
		v, err := one("draft", o.drafts)
		if err != nil {
			return err
		}
		spec.Draft, speculate = v, true
	}
	if speculate {
		lo.Speculative = &spec
	}
	switch {
	case o.clients < 1 || o.requests < 1 || o.n < 1 || !(o.rate >= 0):
		return errors.New("--clients, --requests and -n must be positive, --rate not negative")
	case set["batch"] || set["threads"] || set["synthetic-acceptance"] || set["m"] || set["d"]:
		return errors.New("--nats loads a running specd serve: its models, batch and threads are the server's (-m, -d, --batch, --threads, --synthetic-acceptance do not apply)")
	}
	ps, err := loadPrompts(o.prompts)
	if err != nil {
		return err
	}
	lo.Prompts = ps
	o.nats.URLs, o.nats.Name = splitURLs(o.natsURLs), "specd bench"
	nc, err := serve.Connect(o.nats)
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	m := bench.MachineInfo()
	fmt.Fprintf(stderr, "bench: loading specd at %s: %d requests, %d clients; client machine %s\n", o.natsURLs, o.requests, o.clients, m.CPULine())
	bar := progressbar.NewOptions(o.requests, progressbar.OptionSetWriter(stderr), progressbar.OptionSetVisibility(!o.noProgress),
		progressbar.OptionSetWidth(28), progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionSetDescription("load"))
	res, err := bench.Load(ctx, nc, lo, func(done, total int, _ string) { bar.Set(done) })
	bar.Finish()
	if !o.noProgress {
		fmt.Fprintln(stderr)
	}
	if err != nil {
		return err
	}
	out := struct {
		Schema  string            `json:"schema"`
		Machine bench.Machine     `json:"client_machine"`
		Args    []string          `json:"args"`
		Load    *bench.LoadResult `json:"load"`
	}{bench.Schema, m, append([]string{"bench"}, args...), res}
	f, err := os.Create(filepath.Join(o.out, "load.json"))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	res.WriteLoad(stdout)
	fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(o.out, "load.json"))
	return nil
}
