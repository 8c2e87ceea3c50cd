package engine

import (
	"fmt"
	"runtime"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/backend/cpu"
	"github.com/specd-dev/specd/backend/llamacpp"
	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/kvsync"
	"github.com/specd-dev/specd/model"
	"github.com/specd-dev/specd/stages"
	"github.com/specd-dev/specd/tensor"
	"github.com/specd-dev/specd/tokenizer"
)

// Cache makes a KV cache of m for seqs sequences of up to maxPos positions
// fed at most maxBatch tokens per pass, cut back by up to rollback
// positions behind a pass (a draft's), F32 if the Options say so. With a
// sliding window (Options.Window) shorter than maxPos it stores
// 2·window+rollback+maxBatch positions per sequence (if fewer than
// maxPos), so it slides once every window positions or so.
func (e *Engine) Cache(m *model.Model, seqs, maxPos, maxBatch, rollback int) (*kvsync.Cache, error) {
	w, f32 := e.opts.Window, e.opts.F32Cache
	store := 2*w + rollback + maxBatch
	switch {
	case w <= 0 || w >= maxPos: // no window, or one that never binds
		return m.NewCache(seqs, maxPos, f32)
	case store >= maxPos: // every position fits: the window never slides
		return m.NewWindowCache(seqs, maxPos, w, 0, f32)
	}
	return m.NewWindowCache(seqs, store, w, rollback, f32)
}

// Backend makes a CPU backend of m on a pool of its own with threads
// threads (closed by Close) and a cache from Cache.
func (e *Engine) Backend(m *model.Model, seqs, maxPos, maxBatch, rollback, threads int) (*cpu.Backend, error) {
	p := tensor.NewPool(threads)
	be, err := e.backend(m, seqs, maxPos, maxBatch, rollback, p)
	if err != nil {
		p.Close()
		return nil, err
	}
	e.mu.Lock()
	e.pools = append(e.pools, p)
	e.mu.Unlock()
	return be, nil
}

// backend is Backend on the caller's pool.
func (e *Engine) backend(m *model.Model, seqs, maxPos, maxBatch, rollback int, p *tensor.Pool) (*cpu.Backend, error) {
	kv, err := e.Cache(m, seqs, maxPos, maxBatch, rollback)
	if err != nil {
		return nil, err
	}
	return cpu.New(m.NewState(maxBatch, p), kv), nil
}

// TargetBackend makes a backend of the target for seqs sequences of up to
// maxPos positions and maxBatch tokens per pass: on llama.cpp (a context of
// Accel, on o's TargetThreads, or threads) when the engine's target runs
// there, else a CPU backend on threads threads (see Backend). Close
// releases it either way.
func (e *Engine) TargetBackend(o Options, seqs, maxPos, maxBatch, threads int) (backend.Backend, error) {
	if e.Accel == nil {
		return e.Backend(e.Target, seqs, maxPos, maxBatch, 0, threads)
	}
	return e.Accel.NewBackend(llamacpp.ContextParams{
		Seqs: seqs, MaxPos: maxPos, MaxBatch: maxBatch, Threads: o.targetThreads(threads), F32Cache: e.opts.F32Cache,
	})
}

// PipelineConfig builds a stages.Config for seqs sequences of up to maxPos
// positions, prefilled at most batch tokens per pass, from the engine's
// options: the target backend on VerifyThreads (or Threads) threads, the
// drafter (model draft on DraftThreads threads, n-gram, or none; always on
// the Go engine, the target on TargetBackend's), the
// draft-length policy, pre-drafting, VerifyBatch, sampling, and, when the
// target has a tokenizer, text prompts (BOS added as the vocabulary asks),
// end-of-generation stops and detokenizers.
func (e *Engine) PipelineConfig(seqs, maxPos, batch int) (stages.Config, error) {
	return e.PipelineConfigWith(e.opts, seqs, maxPos, batch)
}

// PipelineConfigWith is PipelineConfig with the pipeline options of o in
// place of the engine's: K, PMin, Adaptive, Auto, DraftCost, the thread counts,
// PreDraft, PreDraftMin and VerifyBatch. o's Draft is either the engine's
// or not Speculative (plain decoding); the models, Window and F32Cache are
// the engine's whatever o says.
func (e *Engine) PipelineConfigWith(o Options, seqs, maxPos, batch int) (stages.Config, error) {
	k := o.K
	if !o.Speculative() {
		k = 0
	} else if o.Draft != e.opts.Draft {
		return stages.Config{}, fmt.Errorf("engine: draft %q: the engine opened %q", o.Draft, e.opts.Draft)
	}
	if err := o.Check(); err != nil {
		return stages.Config{}, err
	}
	tb, err := e.TargetBackend(o, seqs, maxPos, max(batch, seqs*(k+1)), o.verifyThreads())
	if err != nil {
		return stages.Config{}, err
	}
	cfg := stages.Config{
		Target: tb, Slots: seqs, MaxPos: maxPos,
		Policy:      draft.Policy{K: k, Adaptive: o.Adaptive, Cost: o.DraftCost, Auto: o.Auto},
		NewSampler:  stages.NewSampler,
		PreDraft:    o.PreDraft,
		PreDraftMin: o.PreDraftMin,
		VerifyBatch: o.VerifyBatch,
	}
	if o.Auto && k > 0 {
		cfg.Costs = e.autoCosts(o, seqs, min(tb.MaxBatch(), seqs*(k+1)))
	}
	switch {
	case !o.Speculative():
	case o.Draft == DraftNGram:
		cfg.Drafter = draft.NewNGram()
	default:
		// The draft writes up to 2k positions (drafting and pre-drafting)
		// past the committed tokens before it is cut back.
		db, err := e.Backend(e.Draft, seqs, maxPos, max(batch, 1), 2*k+2, o.DraftThreads)
		if err != nil {
			return stages.Config{}, err
		}
		cfg.Drafter = draft.NewModel(db, float32(o.PMin))
		// The Go target's threads and the draft's, on the cores there are.
		cfg.SharedCores = (o.TargetBackend == "" || o.TargetBackend == BackendGo) &&
			o.verifyThreads()+o.DraftThreads > runtime.NumCPU()
	}
	if tok := e.tok; tok != nil {
		cfg.Tokenizer = textEncoder{tok}
		cfg.Stop = tok.IsEOG
		cfg.NewDetokenizer = func() stages.Detokenizer {
			d := tok.NewDecoder()
			d.SetStripLeadingSpace(false) // the completion continues the prompt
			return d
		}
	}
	return cfg, nil
}

// NewPipeline is stages.New of PipelineConfig.
func (e *Engine) NewPipeline(seqs, maxPos, batch int) (*stages.Pipeline, error) {
	cfg, err := e.PipelineConfig(seqs, maxPos, batch)
	if err != nil {
		return nil, err
	}
	return stages.New(cfg)
}

// textEncoder is stages.Tokenizer over a tokenizer: BOS as the vocabulary
// asks, special-token text taken literally.
type textEncoder struct{ tok *tokenizer.Tokenizer }

func (t textEncoder) Encode(text string) ([]int32, error) { return t.tok.Encode(text, true, false) }
