package main

// The flags the commands share: the models (-m, -d and the speculative
// flags), sampling (--temp, --top-k, --top-p, --seed) and logging, each
// registered by one function so that a name means the same thing in every
// command (its aliases come from flagAliases, cli.go).

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/rs/zerolog"

	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/sample"
)

// Model names accepted wherever a model path is.
const (
	modelBundled      = "bundled"       // the bundled target
	modelBundledDraft = "bundled-draft" // the bundled draft model
)

// targetPath maps a -m value to engine.Options.Target: "bundled" is the
// bundled target (""), "bundled-draft" the bundled draft model.
func targetPath(m string) string {
	switch m {
	case modelBundled:
		return ""
	case modelBundledDraft:
		return engine.DraftBundled
	}
	return m
}

// draftPath maps a -d value to engine.Options.Draft ("bundled-draft" is
// the bundled draft, as "bundled" is).
func draftPath(d string) string {
	if d == modelBundledDraft {
		return engine.DraftBundled
	}
	return d
}

// addModelFlag registers -m/--model on fs into *target, with the help of
// a command that decodes.
func addModelFlag(fs *flagSet, target *string) {
	fs.StringVar(target, "m", "", "`PATH|bundled|bundled-draft`: target model: a GGUF file (llama or qwen2 architecture), bundled (the bundled target) or bundled-draft (the bundled draft model); default: the bundled target, drafted for by the bundled draft unless -d says otherwise")
}

// addSpecFlags registers the speculative-decoding flags on fs, with the
// defaults of engine.DefaultOptions, and returns the options they set.
// Target, Threads, Window and F32Cache are left to the caller's own flags
// (Threads starts at DefaultOptions', a thread per CPU). The caller applies
// the default draft after parsing (engine.Options.ApplyDefaults, after
// resolveModels).
func addSpecFlags(fs *flagSet) *engine.Options {
	d := engine.DefaultOptions()
	o := &engine.Options{Threads: d.Threads}
	fs.StringVar(&o.Draft, "d", d.Draft, "`PATH|bundled|ngram|none`: speculative draft: a GGUF model path, bundled (the bundled draft), ngram (prompt lookup) or none (plain decoding); default: the bundled draft when -m is absent, none otherwise")
	o.K, o.Auto = d.K, d.Auto
	fs.Var(kFlag{o}, "k", fmt.Sprintf("`N|auto`: draft tokens per step: N fixed (the largest with --adaptive), or auto: each step's k in 0..%d (0: plain decoding) from measured pass costs and acceptance", engine.AutoK))
	fs.Float64Var(&o.PMin, "p-min", d.PMin, "stop a model draft early when its top token's probability is below `P`")
	fs.BoolVar(&o.Adaptive, "adaptive", d.Adaptive, fmt.Sprintf("choose each sequence's draft length from its recent acceptance, up to -k's N (default %d; not with -k auto)", adaptiveK))
	fs.Float64Var(&o.DraftCost, "draft-cost", d.DraftCost, "draft/target cost ratio `C` used by --adaptive")
	fs.IntVar(&o.DraftThreads, "draft-threads", d.DraftThreads, "threads of the draft model")
	fs.IntVar(&o.VerifyThreads, "verify-threads", d.VerifyThreads, "threads of the target model (0: --threads)")
	fs.BoolVar(&o.NoShareEmbd, "no-share-embd", d.NoShareEmbd, "do not let the draft use the target's token embeddings")
	fs.BoolVar(&o.PreDraft, "pre-draft", d.PreDraft, "draft step n+1 while step n is verified, assuming full acceptance (see --pre-draft-min)")
	fs.Float64Var(&o.PreDraftMin, "pre-draft-min", d.PreDraftMin, "pre-draft a sequence only while the chance its pre-draft is used, α^(k+1) from its recent acceptance α, is at least `P` (0: every step)")
	fs.IntVar(&o.VerifyBatch, "verify-batch", d.VerifyBatch, "wait for the blocks of `N` sequences (or all in flight) before a verification pass; 0 verifies what is ready")
	addTargetFlags(fs, o)
	return o
}

// resolveModels maps the bundled names of -m and -d to the engine's
// (targetPath, draftPath) and applies the default draft; --adaptive
// without -k replaces the default auto draft length by adaptive ones of up
// to adaptiveK tokens (with -k auto, engine.Options.Check refuses it).
func resolveModels(fs *flagSet, o *engine.Options) {
	o.Target, o.Draft = targetPath(o.Target), draftPath(o.Draft)
	o.ApplyDefaults()
	if o.Adaptive && !fs.IsSet("k") {
		o.Auto, o.K = false, adaptiveK
	}
}

// addTargetFlags registers the flags that choose where the target runs:
// specd's Go engine, or llama.cpp's libllama on a device (the draft stays
// on the Go engine).
func addTargetFlags(fs *flagSet, o *engine.Options) {
	d := engine.DefaultOptions()
	fs.StringVar(&o.TargetBackend, "target-backend", d.TargetBackend, "`go|llamacpp`: where the target runs: specd's CPU engine, or llama.cpp's libllama (see --llama-lib; the draft stays on the Go engine)")
	fs.StringVar(&o.LlamaLib, "llama-lib", "", "libllama `PATH` (the file, or its directory) for --target-backend llamacpp; default $"+engine.LlamaLibEnv)
	fs.StringVar(&o.TargetDevice, "target-device", "", "ggml `DEVICE` of the llama.cpp target, e.g. HTP0 (Hexagon NPU) or CPU; default: llama.cpp's choice")
	fs.IntVar(&o.NGPULayers, "n-gpu-layers", d.NGPULayers, "target layers llama.cpp offloads to --target-device (-1: all)")
	fs.IntVar(&o.TargetThreads, "target-threads", d.TargetThreads, "CPU threads of the llama.cpp target (0: --verify-threads, else --threads)")
}

// addStatsFlag registers --spec-stats on fs.
func addStatsFlag(fs *flagSet) *bool {
	return fs.Bool("spec-stats", true, "print speculative-decoding statistics to stderr")
}

// sampleFlags are --temp, --top-k, --top-p and --seed.
type sampleFlags struct {
	fs         *flagSet
	temp, topP float64
	topK       int
	seed       uint64
}

// addSampleFlags registers the sampling flags on fs.
func addSampleFlags(fs *flagSet) *sampleFlags {
	s := &sampleFlags{fs: fs}
	fs.Float64Var(&s.temp, "temp", 0, "sampling temperature; 0 is greedy (argmax)")
	fs.IntVar(&s.topK, "top-k", 0, "keep only the `K` most likely tokens; 0 keeps all")
	fs.Float64Var(&s.topP, "top-p", 1, "keep the smallest set of tokens with probability >= `P`; 1 keeps all")
	fs.Uint64Var(&s.seed, "seed", 0, "random seed for sampling; default: a fresh one, printed to stderr so that the run can be repeated")
	return s
}

// params checks the sampling flags and returns them. Without --seed a
// sampled run (--temp > 0) gets a random seed, printed to stderr; for a
// speculative run under -k auto (o) with the advice to fix -k as well,
// since which tokens a seed samples depends on the draft lengths, and
// auto's follow measured timings.
func (s *sampleFlags) params(stderr io.Writer, o engine.Options) (sample.Params, error) {
	if s.temp < 0 || s.topP < 0 || s.topP > 1 {
		return sample.Params{}, fmt.Errorf("--temp %g --top-p %g: temperature must be >= 0 and top-p in [0, 1]", s.temp, s.topP)
	}
	p := sample.Params{Temp: float32(s.temp), TopK: s.topK, TopP: float32(s.topP), Seed: s.seed}
	if p.Temp > 0 && !s.fs.IsSet("seed") {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return p, fmt.Errorf("random seed: %w", err)
		}
		p.Seed = binary.LittleEndian.Uint64(b[:]) >> 1 // fits an int64 too
		also := ""
		if o.Auto && o.Speculative() {
			also = " and a fixed -k: under -k auto the draft lengths, which decide the sampled tokens, follow measured timings"
		}
		fmt.Fprintf(stderr, "seed: %d (repeat the run with --seed %d%s)\n", p.Seed, p.Seed, also)
	}
	return p, nil
}

// logFlags are --log-level and --log-format.
type logFlags struct{ level, format string }

// logger returns the command's logger on w (newLogger): structured
// records for machines at --log-level; status lines for people are plain
// text on stderr.
func (l *logFlags) logger(w io.Writer) (zerolog.Logger, error) {
	return newLogger(w, l.level, l.format)
}

// addLogFlags registers the logging flags on fs.
func addLogFlags(fs *flagSet) *logFlags {
	l := &logFlags{}
	fs.StringVar(&l.level, "log-level", "info", "`trace|debug|info|warn|error`: log level")
	fs.StringVar(&l.format, "log-format", "auto", "`auto|console|json`: log format (auto: console on a terminal, JSON lines otherwise)")
	return l
}
