package main

// specd bench: a sweep of speculative against plain decoding of one
// target over a grid of configurations (package bench), with a progress
// bar on stderr, a short table on stdout, and results.csv, results.json,
// report.md and PNG figures in --out.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/specd-dev/specd/bench"
	"github.com/specd-dev/specd/engine"
)

func init() {
	register(command{name: "bench", summary: "sweep speculative against plain decoding (k, p-min, draft, temp, batch): tables, CSV/JSON, report.md and plots", run: runBench})
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o benchOpts
	d := engine.DefaultOptions()
	fs := newFlagSet("bench", stderr)
	var dev engine.Options // where the target runs
	benchFlags(fs, &o, &dev, stderr)
	if err := fs.parseFlagsOnly(args, stderr, ""); err != nil {
		return err
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
