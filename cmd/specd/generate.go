package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/model"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/tensor"
	"github.com/specd-dev/specd/tokenizer"
)

func init() {
	register(command{name: "generate", summary: "complete a prompt, by default with speculative decoding on the bundled model pair", run: runGenerate})
}

// generateOpts are the flags of specd generate.
type generateOpts struct {
	eng       engine.Options // -m, --threads, --window, --f32-cache and the speculative flags
	prompt    string
	promptIDs string
	n         int
	params    sample.Params
	ids       bool
	noBOS     bool
	ctx       int
	batch     int
	memStats  bool
	stats     bool // --spec-stats
	q8Order   string
}

func runGenerate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o generateOpts
	fs := newFlagSet("generate", stderr)
	eo := addSpecFlags(fs) // speculative decoding (flags.go)
	fs.StringVar(&eo.Target, "m", "", "target model `file` (GGUF, llama or qwen2 architecture); default: the bundled target, drafted for by the bundled draft unless -d says otherwise")
	fs.StringVar(&o.prompt, "p", "", "prompt `text`, tokenized with the model's vocabulary")
	fs.StringVar(&o.promptIDs, "prompt-ids", "", "prompt as comma-separated token `ids` instead of -p")
	fs.IntVar(&o.n, "n", 64, "maximum number of tokens to generate (stops earlier at end of generation)")
	temp := fs.Float64("temp", 0, "sampling temperature; 0 is greedy (argmax)")
	fs.IntVar(&o.params.TopK, "top-k", 0, "keep only the `k` most likely tokens; 0 keeps all")
	topP := fs.Float64("top-p", 1, "keep the smallest set of tokens with probability >= `p`; 1 keeps all")
	seed := fs.Uint64("seed", 0, "random seed for sampling")
	fs.IntVar(&eo.Threads, "threads", runtime.NumCPU(), "threads for matrix multiplication")
	fs.BoolVar(&o.ids, "ids", false, "print the generated token ids on one line, space-separated, instead of text")
	fs.BoolVar(&o.noBOS, "no-bos", false, "do not add the BOS token, even if the vocabulary asks for it")
	fs.IntVar(&o.ctx, "ctx", 0, "context size in tokens, prompt included; 0 means the model's training context")
	fs.IntVar(&o.batch, "batch", 512, "maximum tokens per forward pass while processing the prompt")
	fs.BoolVar(&eo.F32Cache, "f32-cache", false, "keep the KV cache in F32 instead of F16")
	fs.IntVar(&eo.Window, "window", 0, "sliding-window attention over the last `n` positions: the KV cache then holds about 2n positions however long the sequence (0: full attention; outputs differ from full attention past n positions unless the model was trained with that window)")
	fs.StringVar(&o.q8Order, "q8-order", "rows", "summation order of Q8_0 dot products: rows (one accumulator per weight row; fast multi-token passes) or lanes (llama.cpp's x86 order: logits bit-identical to llama.cpp's CPU backend)")
	fs.BoolVar(&o.memStats, "mem-stats", false, "print peak and current resident memory at the end, and how much of the draft's own embedding table is resident (Linux)")
	stats := addStatsFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: specd generate [-m MODEL.gguf] [-d DRAFT] (-p TEXT | --prompt-ids 1,2,3) [-n N] [flags]")
		fmt.Fprintln(stderr, "\nCompletes a prompt. Without -m: speculative decoding with the bundled target and")
		fmt.Fprintln(stderr, "draft (built into specd; -d none for plain decoding, -d ngram for prompt lookup).")
		fmt.Fprintln(stderr, "With -m: plain decoding with that model, speculative when -d names a draft.")
		fmt.Fprintln(stderr, "The completion goes to stdout; the models in use, speeds and statistics to stderr.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "specd generate: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	o.params.Temp, o.params.TopP, o.params.Seed = float32(*temp), float32(*topP), *seed
	o.eng, o.stats = *eo, *stats
	o.eng.ApplyDefaults()
	if err := o.checkPrompt(); err != nil {
		return err
	}
	switch {
	case o.n < 0:
		return fmt.Errorf("-n %d: must not be negative", o.n)
	case o.eng.Threads < 1:
		return fmt.Errorf("--threads %d: must be at least 1", o.eng.Threads)
	case o.batch < 1:
		return fmt.Errorf("--batch %d: must be at least 1", o.batch)
	case o.ctx < 0:
		return fmt.Errorf("--ctx %d: must not be negative", o.ctx)
	case o.eng.Window < 0:
		return fmt.Errorf("--window %d: must not be negative", o.eng.Window)
	case *temp < 0 || *topP < 0 || *topP > 1:
		return fmt.Errorf("--temp %g --top-p %g: temperature must be >= 0 and top-p in [0, 1]", *temp, *topP)
	}
	switch o.q8Order {
	case "rows":
		tensor.SetQ8_0Order(tensor.Q8_0Rows)
	case "lanes":
		tensor.SetQ8_0Order(tensor.Q8_0Lanes)
	default:
		return fmt.Errorf("--q8-order %q: must be rows or lanes", o.q8Order)
	}
	if o.eng.Speculative() || o.eng.TargetBackend == engine.BackendLlamaCpp {
		return generateSpec(ctx, o, stdout, stderr) // the pipeline, which also decodes plainly on llama.cpp
	}
	return generate(ctx, o, stdout, stderr)
}

// checkPrompt checks that exactly one of -p and --prompt-ids was given.
func (o *generateOpts) checkPrompt() error {
	switch {
	case o.prompt == "" && o.promptIDs == "":
		return errors.New("a prompt is required: give -p TEXT or --prompt-ids IDS")
	case o.prompt != "" && o.promptIDs != "":
		return errors.New("give exactly one of -p TEXT and --prompt-ids IDS, not both")
	}
	return nil
}

// generate is plain decoding: one token per forward pass of one model.
func generate(ctx context.Context, o generateOpts, stdout, stderr io.Writer) error {
	o.eng.Draft = engine.DraftNone // not the bundled draft by default
	e, prompt, err := openSpec(o, stderr)
	if err != nil {
		return err
	}
	defer e.Close()
	m := e.Target
	tok, tokErr := e.Tokenizer()
	c := m.Config
	if !o.ids && tokErr != nil {
		return fmt.Errorf("cannot print text: %w (use --ids)", tokErr)
	}

	ctxLen := o.ctx
	if ctxLen == 0 {
		ctxLen = c.CtxLen
	}
	if len(prompt) >= ctxLen {
		return fmt.Errorf("prompt of %d tokens does not fit the context of %d (see --ctx)", len(prompt), ctxLen)
	}
	maxPos := min(ctxLen, len(prompt)+o.n)
	kv, err := e.Cache(m, 1, maxPos, min(o.batch, len(prompt)), 0)
	if err != nil {
		return err
	}
	pool := tensor.NewPool(o.eng.Threads)
	defer pool.Close()
	st := m.NewState(min(o.batch, len(prompt)), pool)
	logits := make([]float32, c.Vocab)
	smp := sample.New(o.params)

	// Prefill in chunks of at most --batch tokens; logits for the last.
	var b model.Batch
	start := time.Now()
	for i := 0; i < len(prompt); i += st.MaxBatch() {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.Reset()
		end := min(i+st.MaxBatch(), len(prompt))
		for j := i; j < end; j++ {
			b.Add(prompt[j], int32(j), 0, j == len(prompt)-1)
		}
		if err := st.Forward(&b, kv, logits); err != nil {
			return err
		}
	}
	prefill := time.Since(start)

	var dec *tokenizer.Decoder
	if !o.ids {
		dec = tok.NewDecoder()
		dec.SetStripLeadingSpace(false) // the completion continues the prompt
	}
	var (
		out     []string
		decoded int
		decode  time.Duration
		stop    string
	)
	pos := len(prompt)
	for gen := 0; gen < o.n; gen++ {
		next := int32(smp.Sample(logits))
		if tokErr == nil && tok.IsEOG(next) {
			stop = "end of generation"
			break
		}
		if o.ids {
			out = append(out, strconv.Itoa(int(next)))
		} else if _, err := io.WriteString(stdout, dec.Add(next)); err != nil {
			return err
		}
		if gen == o.n-1 {
			break
		}
		if pos >= maxPos {
			stop = "context full"
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		t0 := time.Now()
		b.Reset()
		b.Add(next, int32(pos), 0, true)
		if err := st.Forward(&b, kv, logits); err != nil {
			return err
		}
		decode += time.Since(t0)
		decoded++
		pos++
	}
	if o.ids {
		fmt.Fprintln(stdout, strings.Join(out, " "))
	} else {
		fmt.Fprintln(stdout, dec.Flush())
	}
	fmt.Fprintf(stderr, "prefill: %d tokens, %.1f tok/s\n", len(prompt), rate(len(prompt), prefill))
	fmt.Fprintf(stderr, "decode: %d tokens, %.1f tok/s\n", decoded, rate(decoded, decode))
	if stop != "" {
		fmt.Fprintf(stderr, "stopped: %s\n", stop)
	}
	if o.memStats {
		memReport(stderr, nil)
	}
	return nil
}

func rate(n int, d time.Duration) float64 {
	if n == 0 || d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}
