package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/model/gguf"
	"github.com/specd-dev/specd/model/modeltest"
	"github.com/specd-dev/specd/models"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/stages"
	"github.com/specd-dev/specd/tensor"
)

// bundled returns the default options on one thread: the bundled pair.
func bundled() Options {
	o := DefaultOptions()
	o.Threads = 1
	return o
}

func open(t *testing.T, o Options) *Engine {
	t.Helper()
	e, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// writeModel writes a small random llama with a synthetic 400-token
// vocabulary (BOS 1) and returns its path.
func writeModel(t *testing.T, name string, dim int, seed uint64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	o := modeltest.Options{Dim: dim, Layers: 1, Heads: 2, KVHeads: 1, FFN: 2 * dim, Vocab: 400, CtxLen: 64, Seed: seed, Type: tensor.Q8_0}
	if err := modeltest.Write(path, o); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenBundled(t *testing.T) {
	e := open(t, bundled())
	if got := e.Options().Draft; got != DraftBundled {
		t.Errorf("default draft %q, want %q", got, DraftBundled)
	}
	if e.Draft == nil || e.Draft == e.Target {
		t.Fatalf("draft %p, target %p: want a draft model of its own", e.Draft, e.Target)
	}
	if dv, tv := e.Draft.Config.Vocab, e.Target.Config.Vocab; dv != tv {
		t.Errorf("vocabularies %d (draft) and %d (target)", dv, tv)
	}
	if !e.Shared || !e.Sharing.Embd || !e.Sharing.Output {
		t.Errorf("shared %v, sharing %v: want embeddings and output shared", e.Shared, e.Sharing)
	}
	if e.TargetName != "bundled "+models.TargetName || e.DraftName != "bundled "+models.DraftName {
		t.Errorf("names %q, %q", e.TargetName, e.DraftName)
	}
	want := fmt.Sprintf("models: bundled %s + %s (draft shares target embeddings: equal %s; output projection: tied to token_embd)",
		models.TargetName, models.DraftName, models.SharedEmbdKey)
	if got := e.ModelsLine(); got != want {
		t.Errorf("ModelsLine\n got  %s\n want %s", got, want)
	}
	if e.CtxLen() != e.Target.Config.CtxLen || e.CtxLen() < 64 {
		t.Errorf("CtxLen %d, target's %d", e.CtxLen(), e.Target.Config.CtxLen)
	}
	tok, err := e.Tokenizer()
	if err != nil || tok.VocabSize() != e.Target.Config.Vocab {
		t.Fatalf("tokenizer %v, %v", tok, err)
	}
	ids, err := e.Encode("The jury said", true)
	if err != nil || len(ids) < 2 {
		t.Fatalf("Encode: %v, %v", ids, err)
	}
	plain, err := e.Encode("The jury said", false)
	if err != nil {
		t.Fatal(err)
	}
	if tok.AddBOS() {
		if ids[0] != tok.BOS() || !slices.Equal(ids[1:], plain) {
			t.Errorf("Encode with BOS %v, without %v", ids, plain)
		}
	} else if !slices.Equal(ids, plain) {
		t.Errorf("Encode with BOS %v, without %v: the vocabulary adds none", ids, plain)
	}
	if _, err := e.Encode("", false); !errors.Is(err, ErrEmptyPrompt) {
		t.Errorf("Encode of nothing: %v, want ErrEmptyPrompt", err)
	}
}

func TestModelsLine(t *testing.T) {
	target := writeModel(t, "target.gguf", 32, 3)
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Draft: DraftNone, Threads: 1}, "models: bundled " + models.TargetName + ", no draft (plain decoding)"},
		{Options{Draft: DraftNGram, K: 3, DraftThreads: 1, Threads: 1}, "models: bundled " + models.TargetName + " + n-gram prompt-lookup draft"},
		{func() Options { o := bundled(); o.NoShareEmbd = true; return o }(),
			"models: bundled " + models.TargetName + " + " + models.DraftName + " (embeddings not shared: --no-share-embd)"},
		{Options{Target: target, Threads: 1}, "models: " + target + ", no draft (plain decoding)"},
		{Options{Target: target, Draft: target, K: 4, DraftThreads: 1, Threads: 1}, "models: " + target + ", drafting for itself"},
	} {
		e := open(t, tc.o)
		if got := e.ModelsLine(); got != tc.want {
			t.Errorf("%+v:\n got  %s\n want %s", tc.o, got, tc.want)
		}
		if self := tc.o.Target != "" && tc.o.Draft == tc.o.Target; self != (e.Draft == e.Target) {
			t.Errorf("%+v: draft is target %v, want %v", tc.o, e.Draft == e.Target, self)
		}
		if tc.o.NoShareEmbd && (e.Shared || e.Sharing.Embd) {
			t.Errorf("%+v: shared embeddings", tc.o)
		}
	}
}

func TestOptionsCheck(t *testing.T) {
	for _, tc := range []struct {
		change func(*Options)
		want   string // "" is valid
	}{
		{func(o *Options) {}, ""},
		{func(o *Options) { o.K = 0 }, "-k 0: must be in [1, 64]"},
		{func(o *Options) { o.K = 65 }, "-k 65"},
		{func(o *Options) { o.PMin = 1 }, "--p-min 1: must be in [0, 1)"},
		{func(o *Options) { o.PMin = -0.5 }, "--p-min -0.5"},
		{func(o *Options) { o.DraftThreads = 0 }, "--draft-threads 0: must be at least 1"},
		{func(o *Options) { o.VerifyThreads = -1 }, "--verify-threads -1: must not be negative"},
		{func(o *Options) { o.DraftCost = -1 }, "--draft-cost -1: must not be negative"},
		{func(o *Options) { o.PreDraftMin = 1.5 }, "--pre-draft-min 1.5: must be in [0, 1]"},
		{func(o *Options) { o.PreDraftMin = math.NaN() }, "--pre-draft-min NaN"},
		{func(o *Options) { o.Threads = 0 }, "--threads 0: must be at least 1"},
		{func(o *Options) { o.Window = -1 }, "--window -1: must not be negative"},
		// Plain decoding ignores the draft options, but not threads or window.
		{func(o *Options) { o.Draft, o.K, o.DraftThreads, o.PMin = DraftNone, 0, 0, 2 }, ""},
		{func(o *Options) { o.Target, o.Draft, o.K, o.VerifyThreads = "t.gguf", "", 0, -1 }, ""},
		{func(o *Options) { o.Draft, o.Threads = DraftNone, 0 }, "--threads 0"},
	} {
		o := bundled()
		o.Draft = DraftNGram
		tc.change(&o)
		err := o.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", o, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want one naming %q", o, err, tc.want)
		case tc.want != "":
			// Open checks before it loads anything: the missing file is
			// not what it reports.
			o.Target = filepath.Join(t.TempDir(), "missing.gguf")
			if _, oerr := Open(o); oerr == nil || oerr.Error() != err.Error() {
				t.Errorf("%+v: Open says %v, want %v", o, oerr, err)
			}
		}
	}
}

func TestDefaults(t *testing.T) {
	d := DefaultOptions()
	if d.K != AutoK || !d.Auto || d.Adaptive || d.DraftCost != 0.1 || d.DraftThreads != 1 || !d.PreDraft || d.PreDraftMin != 0.5 || d.Threads < 1 || d.Draft != "" {
		t.Errorf("DefaultOptions %+v", d)
	}
	for _, tc := range []struct {
		target, draft, want string
		spec                bool
	}{
		{"", "", DraftBundled, true},
		{"", DraftNone, DraftNone, false},
		{"", DraftNGram, DraftNGram, true},
		{"t.gguf", "", "", false},
		{"t.gguf", DraftBundled, DraftBundled, true},
	} {
		o := Options{Target: tc.target, Draft: tc.draft}
		o.ApplyDefaults()
		if o.Draft != tc.want || o.Speculative() != tc.spec {
			t.Errorf("-m %q -d %q: draft %q, speculative %v; want %q, %v", tc.target, tc.draft, o.Draft, o.Speculative(), tc.want, tc.spec)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.gguf")
	small := writeModel(t, "small.gguf", 32, 3)
	for _, tc := range []struct {
		o    Options
		want []string
	}{
		{Options{Target: missing, Threads: 1}, []string{missing, "no such file"}},
		{Options{Target: small, Draft: missing, K: 4, DraftThreads: 1, Threads: 1}, []string{"draft: ", missing}},
		// The random model's vocabulary (400) is not the bundled draft's.
		{Options{Target: small, Draft: DraftBundled, K: 4, DraftThreads: 1, Threads: 1},
			[]string{"draft vocabulary has 4096 tokens, the target's 400: speculative decoding needs the same vocabulary"}},
	} {
		e, err := Open(tc.o)
		if err == nil {
			e.Close()
			t.Errorf("%+v: opened", tc.o)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error %q lacks %q", tc.o, err, w)
			}
		}
	}
}

func TestPromptIDs(t *testing.T) {
	e := open(t, Options{Target: writeModel(t, "m.gguf", 32, 3), Threads: 1})
	tok, err := e.Tokenizer()
	if err != nil || !tok.AddBOS() || tok.BOS() != 1 {
		t.Fatalf("the synthetic vocabulary should add BOS 1: %v", err)
	}
	for _, tc := range []struct {
		s      string
		addBOS bool
		want   []int32
	}{
		{"5, 6,7", true, []int32{1, 5, 6, 7}},
		{"1,5", true, []int32{1, 5}},
		{"5,6", false, []int32{5, 6}},
		{"399", false, []int32{399}},
	} {
		got, err := e.PromptIDs(tc.s, tc.addBOS)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("PromptIDs(%q, %v) = %v, %v; want %v", tc.s, tc.addBOS, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		s, msg string
		item   int
		notInt bool
	}{
		{"1,x", `item 2 ("x") is not a token id`, 2, true},
		{"", `item 1 ("") is not a token id`, 1, true},
		{"1,2,400", "id 400 is outside the vocabulary [0, 400)", 3, false},
		{"-3", "id -3 is outside the vocabulary [0, 400)", 1, false},
		{"9999999999", `item 1 ("9999999999") is not a token id`, 1, true},
	} {
		_, err := e.PromptIDs(tc.s, true)
		var ie *IDError
		if !errors.As(err, &ie) || err.Error() != tc.msg || ie.Item != tc.item || ie.Vocab != 400 {
			t.Errorf("PromptIDs(%q): %v (%+v), want %q at item %d", tc.s, err, ie, tc.msg, tc.item)
			continue
		}
		var ne *strconv.NumError
		if errors.As(err, &ne) != tc.notInt {
			t.Errorf("PromptIDs(%q): unwraps to a strconv error: %v, want %v", tc.s, !tc.notInt, tc.notInt)
		}
	}
}

// TestNoTokenizer opens a target whose file has no tokenizer metadata: it
// opens, prompts must be ids, and pipelines carry no text.
func TestNoTokenizer(t *testing.T) {
	b, err := modeltest.Encode(modeltest.Options{Dim: 32, Layers: 1, Heads: 2, FFN: 64, Vocab: 300, CtxLen: 32, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	w := gguf.NewWriter()
	for _, kv := range f.KV {
		if !strings.HasPrefix(kv.Key, "tokenizer.") {
			w.Set(kv.Key, kv.Value)
		}
	}
	for _, ti := range f.Tensors {
		if err := w.AddTensor(ti.Name, ti.Type, ti.Dims, ti.Data); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "notok.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	e := open(t, Options{Target: path, Threads: 1})
	if tok, err := e.Tokenizer(); tok != nil || err == nil {
		t.Fatalf("Tokenizer: %v, %v; want none and why", tok, err)
	}
	if _, err := e.Encode("hello", true); !errors.Is(err, ErrNoTokenizer) {
		t.Errorf("Encode: %v, want ErrNoTokenizer", err)
	}
	if ids, err := e.PromptIDs("4,5", true); err != nil || !slices.Equal(ids, []int32{4, 5}) {
		t.Errorf("PromptIDs without a tokenizer: %v, %v (no BOS to add)", ids, err)
	}
	cfg, err := e.PipelineConfig(1, 16, 4)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Tokenizer != nil || cfg.NewDetokenizer != nil || cfg.Stop != nil || cfg.Drafter != nil {
		t.Errorf("config without a tokenizer or draft: %+v", cfg)
	}
}

// runPipeline runs one greedy request of n tokens through p and returns
// its tokens and final chunk; it fails the test after a minute.
func runPipeline(t *testing.T, p *stages.Pipeline, prompt []int32, n int) ([]int32, stages.Chunk) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in := make(chan stages.Request, 1)
	in <- stages.Request{ID: "r", PromptIDs: prompt, MaxTokens: n}
	close(in)
	out := make(chan stages.Chunk, 16)
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, in, out) }()
	var toks []int32
	var final stages.Chunk
	for {
		select {
		case c := <-out:
			toks = append(toks, c.Tokens...)
			if c.Final {
				final = c
			}
		case err := <-done:
			for len(out) > 0 {
				c := <-out
				toks = append(toks, c.Tokens...)
				if c.Final {
					final = c
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if !final.Final || final.Err != nil {
				t.Fatalf("final chunk %+v", final)
			}
			return toks, final
		case <-ctx.Done():
			t.Fatal("the pipeline did not finish within a minute")
		}
	}
}

// TestNewPipelineMatchesPlainDecode: greedy, a request through the
// pipeline yields PlainDecode's tokens with every draft (exactness), up to
// an end-of-generation token, where the pipeline stops.
func TestNewPipelineMatchesPlainDecode(t *testing.T) {
	const n = 24
	for _, d := range []string{DraftBundled, DraftNGram, DraftNone} {
		t.Run(d, func(t *testing.T) {
			o := bundled()
			o.Draft = d
			o.Auto, o.K = false, 4 // every step drafts (auto may decode plainly)
			e := open(t, o)
			prompt, err := e.Encode("The jury said", true)
			if err != nil {
				t.Fatal(err)
			}
			want, err := e.PlainDecode(context.Background(), prompt, n, 1, sample.Params{})
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Tokens) != n || want.TPS <= 0 {
				t.Fatalf("PlainDecode: %d tokens at %.1f tok/s", len(want.Tokens), want.TPS)
			}
			p, err := e.NewPipeline(1, len(prompt)+n+o.K+1, len(prompt))
			if err != nil {
				t.Fatal(err)
			}
			got, final := runPipeline(t, p, prompt, n)
			tok, _ := e.Tokenizer()
			if final.Reason == "stop" {
				if len(got) >= n || !tok.IsEOG(want.Tokens[len(got)]) {
					t.Fatalf("stopped after %d tokens %v; plain %v", len(got), got, want.Tokens)
				}
				want.Tokens = want.Tokens[:len(got)]
			}
			if !slices.Equal(got, want.Tokens) {
				t.Errorf("pipeline\n %v\nplain\n %v", got, want.Tokens)
			}
			if st := p.Metrics().Snapshot(); (d == DraftNone) != (st.Drafts == 0) {
				t.Errorf("draft %s: %d drafts", d, st.Drafts)
			}
		})
	}
}

func TestPipelineConfigWith(t *testing.T) {
	e := open(t, bundled())
	o := e.Options()
	o.Draft = DraftNGram
	if _, err := e.PipelineConfigWith(o, 1, 32, 8); err == nil || !strings.Contains(err.Error(), `draft "ngram"`) {
		t.Errorf("a draft the engine did not open: %v", err)
	}
	o = e.Options()
	o.K = 0
	if _, err := e.PipelineConfigWith(o, 1, 32, 8); err == nil || !strings.Contains(err.Error(), "-k 0") {
		t.Errorf("k 0: %v", err)
	}
	o.Draft = DraftNone
	cfg, err := e.PipelineConfigWith(o, 2, 32, 8)
	if err != nil || cfg.Drafter != nil || cfg.Policy.K != 0 || cfg.Slots != 2 || cfg.MaxPos != 32 {
		t.Errorf("plain: %+v, %v", cfg, err)
	}
	o = e.Options()
	o.K, o.Auto, o.Adaptive, o.DraftCost, o.PreDraft, o.PreDraftMin, o.VerifyBatch = 7, false, true, 0.3, false, 0.25, 2
	cfg, err = e.PipelineConfigWith(o, 2, 32, 8)
	if err != nil || cfg.Drafter == nil || cfg.Policy.K != 7 || !cfg.Policy.Adaptive || cfg.Policy.Cost != 0.3 ||
		cfg.PreDraft || cfg.PreDraftMin != 0.25 || cfg.VerifyBatch != 2 || cfg.Tokenizer == nil || cfg.Stop == nil {
		t.Errorf("speculative: %+v, %v", cfg, err)
	}
	if mb := cfg.Target.MaxBatch(); mb < 2*(7+1) {
		t.Errorf("target passes of %d tokens, want room for 2 blocks of k+1", mb)
	}
}

func TestForwardCost(t *testing.T) {
	e := open(t, bundled())
	for _, m := range []struct {
		name string
		n    int
	}{{"target", 1}, {"target", 3}, {"draft", 1}} {
		mm := e.Target
		if m.name == "draft" {
			mm = e.Draft
		}
		d, err := e.ForwardCost(mm, 1, m.n, 20)
		if err != nil || d <= 0 {
			t.Errorf("%s, %d tokens: %v, %v", m.name, m.n, d, err)
		}
	}
}

// poolHelpers counts the goroutines tensor.NewPool started, run or not.
func poolHelpers() int {
	buf := make([]byte, 1<<20)
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), "created by github.com/specd-dev/specd/tensor.NewPool ")
}

// settledHelpers is poolHelpers once it is at most want, or after ten
// seconds: a closed pool's helpers have returned (Close waits for that),
// but their goroutines end just after.
func settledHelpers(want int) int {
	deadline := time.Now().Add(10 * time.Second)
	n := poolHelpers()
	for ; n > want && time.Now().Before(deadline); n = poolHelpers() {
		runtime.Gosched()
	}
	return n
}

// TestClosePools: the pools of an engine's pipelines are closed by Close.
// The package's other tests close their engines (and PlainDecode and
// ForwardCost their pools), so no helper outlives them.
func TestClosePools(t *testing.T) {
	if n := settledHelpers(0); n != 0 {
		t.Fatalf("%d pool helpers left by earlier tests", n)
	}
	o := bundled()
	o.VerifyThreads, o.DraftThreads = 3, 2
	e, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.NewPipeline(1, 32, 8); err != nil {
		e.Close()
		t.Fatal(err)
	}
	if got := poolHelpers(); got != 3 {
		t.Errorf("%d pool helpers, want 3 (2 of the target's, 1 of the draft's)", got)
	}
	e.Close()
	if got := settledHelpers(0); got != 0 {
		t.Errorf("%d pool helpers left after Close", got)
	}
}
