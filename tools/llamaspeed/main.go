// Command llamaspeed measures, in one run, the target on llama.cpp's
// libllama against the target on specd's Go engine, alone and with
// speculative decoding (the draft always on the Go engine), so
// scripts/llamaspeed.sh can print the four figures side by side:
//
//	go run ./tools/llamaspeed -m target.gguf -d draft.gguf --llama-lib DIR -n 128 -k 3 --seqs 4
//
// For each target backend (go, llamacpp) it opens an engine and measures
// the shortest target pass over 1 and k+1 tokens (engine.ForwardCost), and,
// best of --reps runs each: the target alone (engine.PlainDecode: prompt
// in one pass, then one token per pass, decode tok/s); speculative
// decoding of one request through the concurrent pipeline (tok/s over the
// request's decode time, acceptance, and the time draft and verify
// computed at once, draft∥verify overlap); the same with --seqs requests
// at once (tokens of all over the pipeline's wall time); and that with
// the stages serialised (stages.Config.Serial), the baseline the overlap
// is measured against. Greedy; the outputs of both backends are compared.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/stages"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "llamaspeed:", err)
		os.Exit(1)
	}
}

// opts are the command's flags.
type opts struct {
	target, draft, lib string
	prompt             []int32
	n, k, seqs, reps   int
	threads, dThreads  int
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("llamaspeed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o opts
	fs.StringVar(&o.target, "m", "", "target model GGUF (required)")
	fs.StringVar(&o.draft, "d", "", "draft model GGUF (required)")
	fs.StringVar(&o.lib, "llama-lib", os.Getenv(engine.LlamaLibEnv), "libllama file or directory")
	ids := fs.String("prompt-ids", "1,2,3,4,5,6,7,8", "prompt token ids")
	fs.IntVar(&o.n, "n", 128, "tokens generated per request")
	fs.IntVar(&o.k, "k", 3, "draft tokens per step")
	fs.IntVar(&o.seqs, "seqs", 4, "requests decoded at once in the batched run")
	fs.IntVar(&o.reps, "reps", 3, "runs of each measurement (the best counts)")
	fs.IntVar(&o.threads, "threads", 1, "threads of the target (both backends)")
	fs.IntVar(&o.dThreads, "draft-threads", 1, "threads of the draft")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.target == "" || o.draft == "" || o.lib == "" {
		return errors.New("-m, -d and --llama-lib (or " + engine.LlamaLibEnv + ") are required")
	}
	for _, f := range strings.Split(*ids, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("--prompt-ids: %w", err)
		}
		o.prompt = append(o.prompt, int32(v))
	}
	if o.reps < 1 || o.n < 1 || o.k < 1 || o.seqs < 1 {
		return errors.New("-n, -k, --seqs and --reps must be at least 1")
	}
	fmt.Fprintf(stderr, "llamaspeed: %s, GOARCH %s, %d CPUs; load average before %s\n", cpuModel(), runtime.GOARCH, runtime.NumCPU(), loadAvg())
	var rows []row
	var outs [][]int32
	for _, be := range []string{engine.BackendGo, engine.BackendLlamaCpp} {
		r, out, err := measure(o, be, stderr)
		if err != nil {
			return fmt.Errorf("%s: %w", be, err)
		}
		rows, outs = append(rows, r), append(outs, out)
	}
	fmt.Fprintf(stderr, "llamaspeed: load average after %s\n", loadAvg())
	same := "the same tokens"
	if !slices.Equal(outs[0], outs[1]) {
		i := 0
		for i < min(len(outs[0]), len(outs[1])) && outs[0][i] == outs[1][i] {
			i++
		}
		// Each backend's speculative output is its own plain output (checked
		// in measure); the two backends' arithmetic differs in the last bits
		// (F16 products, summation order), which can swap a near-tie.
		same = fmt.Sprintf("the same first %d tokens, then parted (a near-tie decided differently)", i)
	}
	fmt.Fprintf(stdout, "\n%d tokens after a %d-token prompt, k %d, target %d thread(s), draft %d thread(s), greedy; both backends decoded %s\n\n",
		o.n, len(o.prompt), o.k, o.threads, o.dThreads, same)
	fmt.Fprintf(stdout, "| target on | target pass: 1 token, %d tokens | target alone tok/s | speculative, 1 seq: tok/s (× alone) | acceptance | draft∥verify overlap | speculative, %d seqs: tok/s | overlap | serialised stages: tok/s |\n", o.k+1, o.seqs)
	fmt.Fprintln(stdout, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(stdout, "| %s | %s, %s | %.1f | %.1f (%.2f×) | %.2f | %s (%.0f%%) | %.1f | %s (%.0f%%) | %.1f |\n",
			r.backend, ms(r.pass1), ms(r.passK), r.plain, r.spec1, r.spec1/r.plain, r.alpha, r.ov1.Round(time.Millisecond), 100*r.ov1Frac,
			r.specN, r.ovN.Round(time.Millisecond), 100*r.ovNFrac, r.serialN)
	}
	fmt.Fprintf(stdout, "\ndraft (Go engine) pass: 1 token %s\n", ms(rows[0].draft1))
	return nil
}

// row is one backend's figures.
type row struct {
	backend             string
	plain, spec1, specN float64 // tok/s
	serialN             float64
	alpha               float64
	ov1, ovN            time.Duration
	ov1Frac, ovNFrac    float64 // overlap / wall
	pass1, passK        time.Duration
	draft1              time.Duration
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

// measure opens an engine with the target on be and takes its figures; it
// returns them and the speculative output of the one-request run.
func measure(o opts, be string, stderr io.Writer) (row, []int32, error) {
	eo := engine.DefaultOptions()
	eo.Target, eo.Draft, eo.K = o.target, o.draft, o.k
	eo.Threads, eo.VerifyThreads, eo.DraftThreads, eo.TargetThreads = o.threads, o.threads, o.dThreads, o.threads
	eo.PreDraft = true
	eo.TargetBackend, eo.LlamaLib = be, o.lib
	e, err := engine.Open(eo)
	if err != nil {
		return row{}, nil, err
	}
	defer e.Close()
	fmt.Fprintln(stderr, e.ModelsLine())
	if e.Accel != nil {
		fmt.Fprintln(stderr, "llamaspeed: "+e.Accel.Lib().SystemInfo)
	}
	r := row{backend: be}
	ctx := context.Background()
	maxPos := len(o.prompt) + o.n + 2*o.k + 2
	// The cost of one target pass over 1 and k+1 tokens (a verification)
	// half way through a request, and of a draft token.
	if r.pass1, err = e.ForwardCost(e.Target, o.threads, 1, len(o.prompt)+o.n/2); err != nil {
		return r, nil, err
	}
	if r.passK, err = e.ForwardCost(e.Target, o.threads, o.k+1, len(o.prompt)+o.n/2); err != nil {
		return r, nil, err
	}
	if r.draft1, err = e.ForwardCost(e.Draft, o.dThreads, 1, len(o.prompt)+o.n/2); err != nil {
		return r, nil, err
	}
	var out []int32
	for range o.reps {
		p, err := e.PlainDecode(ctx, o.prompt, o.n, o.threads, sample.Params{})
		if err != nil {
			return r, nil, err
		}
		r.plain = max(r.plain, p.TPS)

		// One request.
		snap, toks, err := pipeline(e, eo, 1, maxPos, o, false)
		if err != nil {
			return r, nil, err
		}
		if tps := float64(snap.Generated) / decodeTime(snap); tps > r.spec1 {
			r.spec1, r.alpha, r.ov1, r.ov1Frac = tps, snap.Acceptance(), snap.Overlap, frac(snap.Overlap, snap.Wall)
		}
		out = toks[0]
		if !slices.Equal(out, p.Tokens) {
			fmt.Fprintf(stderr, "llamaspeed: %s: speculative output differs from plain decoding\n", be)
		}

		// o.seqs requests at once, concurrent stages and serialised.
		snap, _, err = pipeline(e, eo, o.seqs, maxPos, o, false)
		if err != nil {
			return r, nil, err
		}
		if tps := float64(snap.Generated) / snap.Wall.Seconds(); tps > r.specN {
			r.specN, r.ovN, r.ovNFrac = tps, snap.Overlap, frac(snap.Overlap, snap.Wall)
		}
		snap, _, err = pipeline(e, eo, o.seqs, maxPos, o, true)
		if err != nil {
			return r, nil, err
		}
		r.serialN = max(r.serialN, float64(snap.Generated)/snap.Wall.Seconds())
	}
	return r, out, nil
}

// decodeTime is a one-request run's time after its first token (as
// PlainDecode's rate excludes the prefill).
func decodeTime(s stages.Snapshot) float64 {
	d := s.Wall
	if s.TTFTN > 0 {
		d -= s.TTFTSum / time.Duration(s.TTFTN)
	}
	return max(d.Seconds(), 1e-9)
}

func frac(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// pipeline runs seqs greedy requests of o.n tokens on a fresh pipeline of
// e and returns its metrics and every request's tokens.
func pipeline(e *engine.Engine, eo engine.Options, seqs, maxPos int, o opts, serial bool) (stages.Snapshot, [][]int32, error) {
	cfg, err := e.PipelineConfigWith(eo, seqs, maxPos, len(o.prompt))
	if err != nil {
		return stages.Snapshot{}, nil, err
	}
	cfg.Serial = serial
	cfg.Stop, cfg.NewDetokenizer = nil, nil // a fixed number of tokens, no text
	p, err := stages.New(cfg)
	if err != nil {
		return stages.Snapshot{}, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	in := make(chan stages.Request, seqs)
	for i := range seqs {
		in <- stages.Request{ID: strconv.Itoa(i), PromptIDs: o.prompt, MaxTokens: o.n}
	}
	close(in)
	out := make(chan stages.Chunk, 64)
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, in, out) }()
	toks := make([][]int32, seqs)
	take := func(c stages.Chunk) error {
		i, _ := strconv.Atoi(c.ID)
		toks[i] = append(toks[i], c.Tokens...)
		if c.Final && c.Err != nil {
			return c.Err
		}
		return nil
	}
	for {
		select {
		case c := <-out:
			if err := take(c); err != nil {
				return stages.Snapshot{}, nil, err
			}
		case err := <-done:
			for len(out) > 0 {
				if err := take(<-out); err != nil {
					return stages.Snapshot{}, nil, err
				}
			}
			return p.Metrics().Snapshot(), toks, err
		}
	}
}

// cpuModel is the CPU's model name and SIMD flags of interest (Linux).
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	var name string
	var flags []string
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			if name == "" {
				name = strings.TrimSpace(v)
			}
		case "flags", "Features":
			if flags == nil {
				for _, f := range strings.Fields(v) {
					if f == "avx2" || f == "fma" || f == "f16c" || strings.HasPrefix(f, "avx512") || f == "asimd" || f == "asimddp" || f == "i8mm" || f == "sve" {
						flags = append(flags, f)
					}
				}
			}
		}
	}
	return name + " (" + strings.Join(flags, " ") + ")"
}

// loadAvg is /proc/loadavg's first three fields.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
