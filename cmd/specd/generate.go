package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/rs/zerolog"

	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/tensor"
)

func init() {
	register(command{name: "generate", summary: "complete a prompt, by default with speculative decoding on the bundled model pair", runIn: runGenerate})
}

// generateOpts are the flags of specd generate.
type generateOpts struct {
	eng        engine.Options // -m, --threads, --window, --f32-cache and the speculative flags
	prompt     string         // -p (text, or "-": stdin)
	promptFile string         // -f
	promptIDs  string
	chat       bool // --chat: the prompt is a user message in the chat template
	system     string
	stops      []string // --stop
	echo       bool
	n          int
	params     sample.Params
	ids        bool
	noBOS      bool
	ctx        int
	batch      int
	memStats   bool
	stats      bool // --spec-stats
	q8Order    string
	log        zerolog.Logger
}

// stringsFlag is a repeatable string flag.
type stringsFlag struct{ v *[]string }

func (f stringsFlag) String() string {
	if f.v == nil {
		return ""
	}
	return strings.Join(*f.v, ",")
}

func (f stringsFlag) Set(s string) error {
	if s == "" {
		return fmt.Errorf("an empty stop string would stop at once")
	}
	*f.v = append(*f.v, s)
	return nil
}

// addPromptFlags registers the prompt flags generate and chat share.
func addPromptFlags(fs *flagSet, o *generateOpts, eo *engine.Options) {
	fs.IntVar(&o.n, "n", 64, "maximum number of tokens to generate (stops earlier at end of generation, a --stop string or a full context)")
	fs.IntVar(&eo.Threads, "threads", runtime.NumCPU(), "threads for matrix multiplication")
	fs.IntVar(&o.ctx, "ctx", 0, "context size in tokens, prompt included; 0 means the model's training context")
	fs.IntVar(&o.batch, "batch", 512, "maximum tokens per forward pass while processing the prompt")
	fs.BoolVar(&eo.F32Cache, "f32-cache", false, "keep the KV cache in F32 instead of F16")
	fs.IntVar(&eo.Window, "window", 0, "sliding-window attention over the last `N` positions: the KV cache then holds about 2n positions however long the sequence (0: full attention; outputs differ from full attention past n positions unless the model was trained with that window)")
	fs.StringVar(&o.system, "system", "", "system prompt `TEXT` of the chat template")
	fs.Var(stringsFlag{&o.stops}, "stop", "stop when the output contains `STR` (not printed; repeat the flag for several)")
	fs.BoolVar(&o.noBOS, "no-bos", false, "do not add the BOS token, even if the vocabulary asks for it")
}

func runGenerate(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o := generateOpts{}
	fs := newFlagSet("generate", stderr)
	eo := addSpecFlags(fs) // speculative decoding (flags.go)
	addModelFlag(fs, &eo.Target)
	addPromptFlags(fs, &o, eo)
	fs.StringVar(&o.prompt, "p", "", "prompt `TEXT`, tokenized with the model's vocabulary; - reads it from stdin")
	fs.StringVar(&o.promptFile, "f", "", "read the prompt from `FILE` (bytes exactly)")
	fs.StringVar(&o.promptIDs, "prompt-ids", "", "prompt as comma-separated token `IDS` instead of -p")
	fs.BoolVar(&o.chat, "chat", false, "the prompt is a user message: apply the model's chat template (the bundled pair's is plain text), with --system")
	fs.BoolVar(&o.echo, "echo", false, "print the prompt (as the model reads it) before the completion")
	sf := addSampleFlags(fs)
	fs.BoolVar(&o.ids, "ids", false, "print the generated token ids on one line, space-separated, instead of text")
	fs.StringVar(&o.q8Order, "q8-order", "rows", "`rows|lanes`: summation order of Q8_0 dot products: one accumulator per weight row (fast multi-token passes), or llama.cpp's x86 order (logits bit-identical to llama.cpp's CPU backend)")
	fs.BoolVar(&o.memStats, "mem-stats", false, "print peak and current resident memory at the end, and how much of the draft's own embedding table is resident (Linux)")
	stats := addStatsFlag(fs)
	lf := addLogFlags(fs)
	fs.Usage = fs.usageFunc([]string{"specd generate [-m MODEL] [-d DRAFT] (-p TEXT | -p - | -f FILE | --prompt-ids 1,2,3) [-n N] [flags]"},
		"Completes a prompt. Without -m: speculative decoding with the bundled target and\n"+
			"draft (built into specd; -d none for plain decoding, -d ngram for prompt lookup).\n"+
			"With -m: plain decoding with that model, speculative when -d names a draft.\n"+
			"The completion goes to stdout; the models in use, speeds, statistics and why it\n"+
			"stopped to stderr.")
	if err := fs.parseFlagsOnly(args, stderr, ""); err != nil {
		return err
	}
	o.eng, o.stats = *eo, *stats
	resolveModels(fs, &o.eng)
	var err error
	if o.log, err = lf.logger(stderr); err != nil {
		return err
	}
	if err := o.readPrompt(stdin); err != nil {
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
	case o.ids && len(o.stops) > 0:
		return fmt.Errorf("--stop needs text output: it cannot be used with --ids")
	case o.system != "" && !o.chat:
		return fmt.Errorf("--system needs --chat (the system prompt is part of the chat template)")
	}
	if o.params, err = sf.params(stderr, o.eng); err != nil {
		return err
	}
	if err := setQ8Order(o.q8Order); err != nil {
		return err
	}
	if o.eng.Speculative() || o.eng.TargetBackend == engine.BackendLlamaCpp {
		return generateSpec(ctx, o, stdout, stderr) // the pipeline, which also decodes plainly on llama.cpp
	}
	return generate(ctx, o, stdout, stderr)
}

// setQ8Order applies --q8-order.
func setQ8Order(order string) error {
	switch order {
	case "rows":
		tensor.SetQ8_0Order(tensor.Q8_0Rows)
	case "lanes":
		tensor.SetQ8_0Order(tensor.Q8_0Lanes)
	default:
		return fmt.Errorf("--q8-order %q: must be rows or lanes", order)
	}
	return nil
}
