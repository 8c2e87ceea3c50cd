// Package engine builds a ready pipeline from model files and options: it
// loads the target and the draft (from GGUF files, or the bundled pair of
// package models without copying), checks that their vocabularies agree,
// lets the draft share the target's embeddings, and makes the KV caches,
// CPU backends and stages.Config every command (generate, specbench,
// serve) decodes with.
//
// An Engine owns the models and every thread pool it creates; Close
// releases them all.
package engine

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/specd-dev/specd/backend/llamacpp"
	"github.com/specd-dev/specd/model"
	"github.com/specd-dev/specd/model/gguf"
	"github.com/specd-dev/specd/models"
	"github.com/specd-dev/specd/tensor"
	"github.com/specd-dev/specd/tokenizer"
)

// Draft values with a meaning of their own; any other non-empty Draft is a
// GGUF file.
const (
	DraftBundled = "bundled" // the bundled draft (package models)
	DraftNGram   = "ngram"   // prompt lookup, no draft model
	DraftNone    = "none"    // plain decoding
)

// Errors.
var (
	ErrNoTokenizer = errors.New("engine: the target has no usable tokenizer")
	ErrEmptyPrompt = errors.New("engine: the prompt is empty")
)

// Options are everything needed to load a target (and draft) and build
// pipelines; start from DefaultOptions. The error messages of Check name
// the specd flag of each field.
type Options struct {
	Target string // GGUF path; "" = the bundled target
	// Draft is a GGUF path, DraftBundled, DraftNGram, DraftNone, or "":
	// the bundled draft when Target is "" too (see ApplyDefaults), no
	// draft otherwise. The Target's own path makes the target draft for
	// itself.
	Draft         string
	K             int     // draft tokens per step (the largest with Adaptive or Auto); default AutoK
	PMin          float64 // stop a model draft early below this top-token probability
	Adaptive      bool    // choose each sequence's draft length from its recent acceptance
	Auto          bool    // choose each step's k in [0, K] from measured costs and acceptance (-k auto, the default; before Adaptive)
	DraftCost     float64 // c, the draft/target cost ratio, for Adaptive (default 0.1)
	Threads       int     // target threads when VerifyThreads is 0
	DraftThreads  int     // threads of the draft model (default 1)
	VerifyThreads int     // threads of the target in pipelines (0: Threads)
	NoShareEmbd   bool    // do not let the draft use the target's token embeddings
	PreDraft      bool    // stages.Config.PreDraft
	PreDraftMin   float64 // stages.Config.PreDraftMin
	VerifyBatch   int     // stages.Config.VerifyBatch
	Window        int     // sliding-window attention over the last Window positions (0: none), for every cache made
	F32Cache      bool    // keep KV caches in F32 instead of F16

	// TargetBackend is where the target runs: BackendGo ("" too), specd's
	// CPU engine, or BackendLlamaCpp, llama.cpp's libllama (package
	// backend/llamacpp) on the device it was built for. The draft always
	// runs on the Go engine.
	TargetBackend string
	LlamaLib      string // libllama file or directory for BackendLlamaCpp; "": $SPECD_LLAMA_LIB
	TargetDevice  string // ggml device of the llama.cpp target (e.g. "HTP0"); "": llama.cpp's choice
	NGPULayers    int    // target layers llama.cpp offloads to the device; negative: all (DefaultOptions: -1)
	TargetThreads int    // CPU threads of the llama.cpp target (0: VerifyThreads, else Threads)
}

// Target backends (Options.TargetBackend).
const (
	BackendGo       = "go"
	BackendLlamaCpp = "llamacpp"
)

// LlamaLibEnv is the environment variable that names libllama when
// Options.LlamaLib is empty.
const LlamaLibEnv = "SPECD_LLAMA_LIB"

// AutoK is the largest draft length of the auto policy (-k auto).
const AutoK = 8

// DefaultOptions returns the defaults of specd's flags: the bundled target
// (and, after ApplyDefaults, the bundled draft), the auto draft length (k
// in [0, AutoK] each step, from measured costs and acceptance: a pair that
// does not pay decodes plainly), c 0.1, one draft thread, a target thread
// per CPU, pre-drafting while α^(k+1) ≥ 0.5.
func DefaultOptions() Options {
	return Options{K: AutoK, Auto: true, DraftCost: 0.1, Threads: runtime.NumCPU(), DraftThreads: 1, PreDraft: true,
		PreDraftMin: 0.5, TargetBackend: BackendGo, NGPULayers: -1}
}

// ApplyDefaults fills in the default draft: without Target and without
// Draft, Draft becomes DraftBundled, so the bundled pair decodes
// speculatively. An explicit Target without a Draft decodes plainly.
func (o *Options) ApplyDefaults() {
	if o.Target == "" && o.Draft == "" {
		o.Draft = DraftBundled
	}
}

// Speculative reports whether a draft is given (Draft is neither "" nor
// DraftNone).
func (o Options) Speculative() bool { return o.Draft != "" && o.Draft != DraftNone }

// Check reports the first invalid option, naming its flag (-k, --p-min …).
// Threads and Window are always checked; the speculative options only when
// o is Speculative, since plain decoding ignores them.
func (o Options) Check() error {
	switch {
	case o.Threads < 1:
		return fmt.Errorf("--threads %d: must be at least 1", o.Threads)
	case o.Window < 0:
		return fmt.Errorf("--window %d: must not be negative", o.Window)
	case o.TargetBackend != "" && o.TargetBackend != BackendGo && o.TargetBackend != BackendLlamaCpp:
		return fmt.Errorf("--target-backend %q: must be %s or %s", o.TargetBackend, BackendGo, BackendLlamaCpp)
	case o.TargetThreads < 0:
		return fmt.Errorf("--target-threads %d: must not be negative", o.TargetThreads)
	case o.onLlamaCpp() && o.Window > 0:
		return fmt.Errorf("--window %d: the llama.cpp target has no sliding window (use --target-backend go)", o.Window)
	case !o.Speculative():
		return nil
	case o.Auto && o.Adaptive:
		return fmt.Errorf("-k auto and --adaptive: choose one draft-length policy")
	case o.K < 1 || o.K > 64:
		return fmt.Errorf("-k %d: must be in [1, 64]", o.K)
	case o.PMin < 0 || o.PMin >= 1:
		return fmt.Errorf("--p-min %g: must be in [0, 1)", o.PMin)
	case o.DraftThreads < 1:
		return fmt.Errorf("--draft-threads %d: must be at least 1", o.DraftThreads)
	case o.VerifyThreads < 0:
		return fmt.Errorf("--verify-threads %d: must not be negative", o.VerifyThreads)
	case o.DraftCost < 0:
		return fmt.Errorf("--draft-cost %g: must not be negative", o.DraftCost)
	case !(o.PreDraftMin >= 0 && o.PreDraftMin <= 1):
		return fmt.Errorf("--pre-draft-min %g: must be in [0, 1]", o.PreDraftMin)
	}
	return nil
}

// verifyThreads is the target's thread count in pipelines.
func (o Options) verifyThreads() int {
	if o.VerifyThreads != 0 {
		return o.VerifyThreads
	}
	return o.Threads
}

// onLlamaCpp reports whether the target runs on llama.cpp.
func (o Options) onLlamaCpp() bool { return o.TargetBackend == BackendLlamaCpp }

// targetThreads is the llama.cpp target's thread count where the Go
// target would run on goThreads.
func (o Options) targetThreads(goThreads int) int {
	if o.TargetThreads != 0 {
		return o.TargetThreads
	}
	return goThreads
}

// Engine is a loaded target (and draft) ready to build pipelines. Open
// sets its exported fields; they are read only. Its methods may be called
// from several goroutines, but not Close while another runs.
type Engine struct {
	Target *model.Model
	// Draft is the draft model: nil without one (plain decoding, or the
	// n-gram draft), Target itself when the target drafts for itself.
	Draft *model.Model

	TargetName string // as shown to the user: the path, or "bundled <file>"
	DraftName  string // likewise; "" without a draft model

	Shared  bool          // the draft uses the target's token embeddings (Sharing.Embd)
	Sharing model.Sharing // what model.Share decided, and why

	// Accel is the target on llama.cpp (Options.TargetBackend
	// BackendLlamaCpp), nil on the Go engine. Target is then still loaded
	// (memory-mapped, its weights untouched but for the rows of
	// embeddings a sharing draft reads) for the tokenizer, the
	// configuration and the draft's shared embeddings.
	Accel *llamacpp.Model

	opts   Options
	tok    *tokenizer.Tokenizer // nil if the target has none
	tokErr error

	mu    sync.Mutex
	pools []*tensor.Pool
	costs costTables // autoCosts, under mu
}

// Open checks o (after ApplyDefaults), loads the target, its tokenizer and
// the draft model (if the draft is a model) and checks that their
// vocabularies agree. Bundled models are parsed from the executable's
// embedded bytes without copying. Unless o.NoShareEmbd, the draft shares
// the target's token embeddings (and output projection) where they are
// equal. A target without a usable tokenizer still opens: Tokenizer
// reports why, and prompts must be given as ids.
func Open(o Options) (*Engine, error) {
	o.ApplyDefaults()
	if err := o.Check(); err != nil {
		return nil, err
	}
	e := &Engine{opts: o}
	var err error
	if e.Target, e.TargetName, err = openModel(o.Target); err != nil {
		return nil, err
	}
	e.tok, e.tokErr = tokenizer.New(e.Target.File)
	if e.tokErr == nil && e.tok.VocabSize() != e.Target.Config.Vocab {
		e.tok, e.tokErr = nil, fmt.Errorf("vocabulary has %d tokens, the model %d", e.tok.VocabSize(), e.Target.Config.Vocab)
	}
	if o.onLlamaCpp() {
		if e.Accel, err = openAccel(o); err != nil {
			e.Close()
			return nil, err
		}
		if av, tv := e.Accel.Vocab(), e.Target.Config.Vocab; av != tv {
			e.Close()
			return nil, fmt.Errorf("llama.cpp reads a vocabulary of %d tokens from the target, specd %d", av, tv)
		}
	}
	if !o.Speculative() || o.Draft == DraftNGram {
		return e, nil
	}
	if o.Draft == o.Target {
		e.Draft, e.DraftName = e.Target, e.TargetName
		return e, nil
	}
	if e.Draft, e.DraftName, err = openModel(o.Draft); err != nil {
		e.Close()
		return nil, fmt.Errorf("draft: %w", err)
	}
	if dv, tv := e.Draft.Config.Vocab, e.Target.Config.Vocab; dv != tv {
		e.Close()
		return nil, fmt.Errorf("draft vocabulary has %d tokens, the target's %d: speculative decoding needs the same vocabulary", dv, tv)
	}
	if e.tok != nil {
		if dt, err := tokenizer.New(e.Draft.File); err == nil {
			if err := tokenizer.CheckCompatible(e.tok, dt); err != nil {
				e.Close()
				return nil, err
			}
		}
	}
	if !o.NoShareEmbd {
		e.Sharing = e.Draft.Share(e.Target)
		e.Shared = e.Sharing.Embd
	}
	return e, nil
}

// openAccel loads libllama (o.LlamaLib, else $SPECD_LLAMA_LIB) and the
// target in it, placed as o says. The bundled target, which exists only as
// bytes in the executable, is written to a temporary file for llama.cpp to
// map, and the file is removed once loaded.
func openAccel(o Options) (*llamacpp.Model, error) {
	path := o.LlamaLib
	if path == "" {
		path = os.Getenv(LlamaLibEnv)
	}
	if path == "" {
		return nil, fmt.Errorf("--target-backend %s needs libllama: give --llama-lib PATH or set %s", BackendLlamaCpp, LlamaLibEnv)
	}
	lib, err := llamacpp.Load(path)
	if err != nil {
		return nil, err
	}
	target := o.Target
	if target == "" {
		b, name := models.Target()
		f, err := os.CreateTemp("", "specd-*-"+name)
		if err != nil {
			return nil, fmt.Errorf("bundled target for llama.cpp: %w", err)
		}
		defer os.Remove(f.Name())
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("bundled target for llama.cpp: %w", err)
		}
		target = f.Name()
	}
	return lib.LoadModel(target, llamacpp.ModelParams{NGPULayers: o.NGPULayers, Device: o.TargetDevice})
}

// openModel loads the model file at path, or the bundled target when path
// is empty, or the bundled draft when path is DraftBundled. name is how
// the model is shown to the user.
func openModel(path string) (m *model.Model, name string, err error) {
	var get func() ([]byte, string)
	switch path {
	case "":
		get = models.Target
	case DraftBundled:
		get = models.Draft
	default:
		m, err := model.Load(path)
		return m, path, err
	}
	b, file := get()
	f, err := gguf.Parse(b)
	if err != nil {
		return nil, "", fmt.Errorf("bundled %s: %w", file, err)
	}
	if m, err = model.New(f); err != nil {
		return nil, "", fmt.Errorf("bundled %s: %w", file, err)
	}
	return m, "bundled " + file, nil
}

// Close closes every pool the engine made and the models it loaded. No
// pipeline or backend of the engine may be used after.
func (e *Engine) Close() {
	e.mu.Lock()
	pools := e.pools
	e.pools = nil
	e.mu.Unlock()
	for _, p := range pools {
		p.Close()
	}
	if e.Accel != nil {
		e.Accel.Close() // and every backend made on it
	}
	if e.Draft != nil && e.Draft != e.Target {
		e.Draft.Close()
	}
	if e.Target != nil {
		e.Target.Close()
	}
}

// Options returns the options the engine was opened with, defaults
// applied.
func (e *Engine) Options() Options { return e.opts }

// Tokenizer returns the target's tokenizer, or why it has none.
func (e *Engine) Tokenizer() (*tokenizer.Tokenizer, error) { return e.tok, e.tokErr }

// CtxLen is the target's training context in tokens.
func (e *Engine) CtxLen() int { return e.Target.Config.CtxLen }

// ModelsLine is the "models: ..." line generate and specbench print on
// stderr: which target and draft are in use, and whether the draft shares
// the target's embeddings (and why not); with the target on llama.cpp,
// where it runs, and that the accelerator holds its own copy of any
// embeddings the draft shares.
func (e *Engine) ModelsLine() string {
	line := e.modelsLine()
	if e.Accel == nil {
		return line
	}
	line += "; target on " + e.Accel.String()
	if e.Draft != nil && e.Draft != e.Target && (e.Sharing.Embd || e.Sharing.Output) {
		line += " (the accelerator holds its own copy of the shared embeddings)"
	}
	return line
}

// modelsLine is ModelsLine without the accelerator.
func (e *Engine) modelsLine() string {
	switch {
	case !e.opts.Speculative():
		return fmt.Sprintf("models: %s, no draft (plain decoding)", e.TargetName)
	case e.opts.Draft == DraftNGram:
		return fmt.Sprintf("models: %s + n-gram prompt-lookup draft", e.TargetName)
	case e.Draft == e.Target:
		return fmt.Sprintf("models: %s, drafting for itself", e.TargetName)
	}
	line := fmt.Sprintf("models: %s + %s", e.TargetName, e.DraftName)
	if e.TargetName == "bundled "+models.TargetName && e.DraftName == "bundled "+models.DraftName {
		line = fmt.Sprintf("models: bundled %s + %s", models.TargetName, models.DraftName)
	}
	sh := e.Sharing
	switch {
	case e.opts.NoShareEmbd:
		return line + " (embeddings not shared: --no-share-embd)"
	case sh.Embd && sh.Output:
		return line + fmt.Sprintf(" (draft shares target embeddings: %s; output projection: %s)", sh.EmbdHow, sh.OutputHow)
	case sh.Embd:
		return line + fmt.Sprintf(" (draft shares target embeddings: %s; own output projection: %s)", sh.EmbdHow, sh.OutputHow)
	case sh.Output:
		return line + fmt.Sprintf(" (draft shares the target's output projection: %s; own embeddings: %s)", sh.OutputHow, sh.EmbdHow)
	}
	return line + fmt.Sprintf(" (embeddings not shared: %s)", sh.EmbdHow)
}
