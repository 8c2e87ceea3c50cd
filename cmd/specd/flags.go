package main

// The speculative-decoding flags every command that decodes shares
// (generate, specbench, serve). A command registers its own -m and
// --threads (their help and defaults differ) into the options returned.

import (
	"flag"

	"github.com/specd-dev/specd/engine"
)

// addSpecFlags registers the speculative-decoding flags on fs, with the
// defaults of engine.DefaultOptions, and returns the options they set.
// Target, Threads, Window and F32Cache are left to the caller's own flags
// (Threads starts at DefaultOptions', a thread per CPU). The caller applies
// the default draft after parsing (engine.Options.ApplyDefaults).
func addSpecFlags(fs *flag.FlagSet) *engine.Options {
	d := engine.DefaultOptions()
	o := &engine.Options{Threads: d.Threads}
	for _, n := range []string{"d", "draft"} {
		fs.StringVar(&o.Draft, n, d.Draft, "speculative draft: a GGUF model `file`, \"bundled\" (the bundled draft), \"ngram\" (prompt lookup) or \"none\"; default: the bundled draft when -m is absent, none otherwise")
	}
	o.K, o.Auto = d.K, d.Auto
	fs.Var(kFlag{o}, "k", "draft tokens per step `N` (the largest with --adaptive), or auto: each step's k in 0..8 (0: plain decoding) from measured pass costs and acceptance")
	fs.Float64Var(&o.PMin, "p-min", d.PMin, "stop a model draft early when its top token's probability is below `p`")
	fs.BoolVar(&o.Adaptive, "adaptive", d.Adaptive, "choose each sequence's draft length from its recent acceptance")
	fs.Float64Var(&o.DraftCost, "draft-cost", d.DraftCost, "draft/target cost ratio `c` used by --adaptive")
	fs.IntVar(&o.DraftThreads, "draft-threads", d.DraftThreads, "threads of the draft model")
	fs.IntVar(&o.VerifyThreads, "verify-threads", d.VerifyThreads, "threads of the target model (0: --threads)")
	fs.BoolVar(&o.NoShareEmbd, "no-share-embd", d.NoShareEmbd, "do not let the draft use the target's token embeddings")
	fs.BoolVar(&o.PreDraft, "pre-draft", d.PreDraft, "draft step n+1 while step n is verified, assuming full acceptance (see --pre-draft-min)")
	fs.Float64Var(&o.PreDraftMin, "pre-draft-min", d.PreDraftMin, "pre-draft a sequence only while the chance its pre-draft is used, α^(k+1) from its recent acceptance α, is at least `p` (0: every step)")
	fs.IntVar(&o.VerifyBatch, "verify-batch", d.VerifyBatch, "wait for the blocks of `n` sequences (or all in flight) before a verification pass; 0 verifies what is ready")
	addTargetFlags(fs, o)
	return o
}

// addTargetFlags registers the flags that choose where the target runs:
// specd's Go engine, or llama.cpp's libllama on a device (the draft stays
// on the Go engine).
func addTargetFlags(fs *flag.FlagSet, o *engine.Options) {
	d := engine.DefaultOptions()
	fs.StringVar(&o.TargetBackend, "target-backend", d.TargetBackend, "where the target runs: go (specd's CPU engine) or llamacpp (llama.cpp's libllama, see --llama-lib; the draft stays on the Go engine)")
	fs.StringVar(&o.LlamaLib, "llama-lib", "", "libllama `path` (the file, or its directory) for --target-backend llamacpp; default $"+engine.LlamaLibEnv)
	fs.StringVar(&o.TargetDevice, "target-device", "", "ggml `device` of the llama.cpp target, e.g. HTP0 (Hexagon NPU) or CPU; default: llama.cpp's choice")
	fs.IntVar(&o.NGPULayers, "n-gpu-layers", d.NGPULayers, "target layers llama.cpp offloads to --target-device (-1: all)")
	fs.IntVar(&o.TargetThreads, "target-threads", d.TargetThreads, "CPU threads of the llama.cpp target (0: --verify-threads, else --threads)")
}

// addStatsFlag registers --spec-stats on fs.
func addStatsFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("spec-stats", true, "print speculative-decoding statistics to stderr")
}
