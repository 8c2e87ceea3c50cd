package main

// Speculative decoding from the command line: the flags generate takes when
// a draft is given, the speculative generate itself (through the stages
// pipeline), and specbench, which measures speculative against plain
// decoding side by side.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/kvsync"
	"github.com/specd-dev/specd/model"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/stages"
	"github.com/specd-dev/specd/tensor"
	"github.com/specd-dev/specd/tokenizer"
	"github.com/specd-dev/specd/verify"
)

// specOpts are the speculative-decoding flags.
type specOpts struct {
	draft         string
	k             int
	pmin          float64
	adaptive      bool
	cost          float64
	draftThreads  int
	verifyThreads int
	noShare       bool
	stats         bool
	preDraft      bool
	preDraftMin   float64
	verifyBatch   int
}

// addSpecFlags registers the speculative flags on fs.
func addSpecFlags(fs *flag.FlagSet) *specOpts {
	s := &specOpts{}
	for _, n := range []string{"d", "draft"} {
		fs.StringVar(&s.draft, n, "", "speculative draft: a GGUF model `file`, \"bundled\" (the bundled draft), \"ngram\" (prompt lookup) or \"none\"; default: the bundled draft when -m is absent, none otherwise")
	}
	fs.IntVar(&s.k, "k", 4, "draft tokens per step (the largest with --adaptive)")
	fs.Float64Var(&s.pmin, "p-min", 0, "stop a model draft early when its top token's probability is below `p`")
	fs.BoolVar(&s.adaptive, "adaptive", false, "choose each sequence's draft length from its recent acceptance")
	fs.Float64Var(&s.cost, "draft-cost", 0.1, "draft/target cost ratio `c` used by --adaptive")
	fs.IntVar(&s.draftThreads, "draft-threads", 1, "threads of the draft model")
	fs.IntVar(&s.verifyThreads, "verify-threads", 0, "threads of the target model (0: --threads)")
	fs.BoolVar(&s.noShare, "no-share-embd", false, "do not let the draft use the target's token embeddings")
	fs.BoolVar(&s.stats, "spec-stats", true, "print speculative-decoding statistics to stderr")
	fs.BoolVar(&s.preDraft, "pre-draft", true, "draft step n+1 while step n is verified, assuming full acceptance (see --pre-draft-min)")
	fs.Float64Var(&s.preDraftMin, "pre-draft-min", 0.5, "pre-draft a sequence only while the chance its pre-draft is used, α^(k+1) from its recent acceptance α, is at least `p` (0: every step)")
	fs.IntVar(&s.verifyBatch, "verify-batch", 0, "wait for the blocks of `n` sequences (or all in flight) before a verification pass; 0 verifies what is ready")
	return s
}

// enabled reports whether a draft was given.
func (s *specOpts) enabled() bool { return s.draft != "" && s.draft != "none" }

func (s *specOpts) check() error {
	switch {
	case s.k < 1 || s.k > 64:
		return fmt.Errorf("-k %d: must be in [1, 64]", s.k)
	case s.pmin < 0 || s.pmin >= 1:
		return fmt.Errorf("--p-min %g: must be in [0, 1)", s.pmin)
	case s.draftThreads < 1:
		return fmt.Errorf("--draft-threads %d: must be at least 1", s.draftThreads)
	case s.verifyThreads < 0:
		return fmt.Errorf("--verify-threads %d: must not be negative", s.verifyThreads)
	case s.cost < 0:
		return fmt.Errorf("--draft-cost %g: must not be negative", s.cost)
	case !(s.preDraftMin >= 0 && s.preDraftMin <= 1):
		return fmt.Errorf("--pre-draft-min %g: must be in [0, 1]", s.preDraftMin)
	}
	return nil
}

// specSetup is a loaded target (and draft) ready to build pipelines.
type specSetup struct {
	target, draft *model.Model
	tok           *tokenizer.Tokenizer // nil if the target has none
	tokErr        error
	shared        bool          // the draft uses the target's token embeddings
	sharing       model.Sharing // what ShareEmbeddings decided, and why
	pools         []*tensor.Pool

	targetName, draftName string // as shown to the user
	window                int    // sliding-window attention (0: none), for every cache made
}

func (su *specSetup) Close() {
	for _, p := range su.pools {
		p.Close()
	}
	if su.draft != nil && su.draft != su.target {
		su.draft.Close()
	}
	if su.target != nil {
		su.target.Close()
	}
}

// loadSpec loads the target model, its tokenizer and the draft model (if
// the draft is a model), checking that their vocabularies agree. An empty
// targetPath is the bundled target, a draft of bundledDraft the bundled
// draft.
func loadSpec(targetPath string, s *specOpts) (*specSetup, error) {
	su := &specSetup{}
	var err error
	if su.target, su.targetName, err = openModel(targetPath); err != nil {
		return nil, err
	}
	su.tok, su.tokErr = tokenizer.New(su.target.File)
	if su.tokErr == nil && su.tok.VocabSize() != su.target.Config.Vocab {
		su.tok, su.tokErr = nil, fmt.Errorf("vocabulary has %d tokens, the model %d", su.tok.VocabSize(), su.target.Config.Vocab)
	}
	if s.draft == "" || s.draft == "none" || s.draft == "ngram" {
		return su, nil
	}
	if s.draft == targetPath {
		su.draft = su.target
		return su, nil
	}
	if su.draft, su.draftName, err = openModel(s.draft); err != nil {
		su.Close()
		return nil, fmt.Errorf("draft: %w", err)
	}
	if dv, tv := su.draft.Config.Vocab, su.target.Config.Vocab; dv != tv {
		su.Close()
		return nil, fmt.Errorf("draft vocabulary has %d tokens, the target's %d: speculative decoding needs the same vocabulary", dv, tv)
	}
	if su.tok != nil {
		if dt, err := tokenizer.New(su.draft.File); err == nil {
			if err := tokenizer.CheckCompatible(su.tok, dt); err != nil {
				su.Close()
				return nil, err
			}
		}
	}
	if !s.noShare {
		su.sharing = su.draft.Share(su.target)
		su.shared = su.sharing.Embd
	}
	return su, nil
}

func (su *specSetup) pool(threads int) *tensor.Pool {
	p := tensor.NewPool(threads)
	su.pools = append(su.pools, p)
	return p
}

// cache makes a KV cache of m for seqs sequences of up to maxPos positions
// fed at most maxBatch tokens per pass, cut back by up to rollback
// positions behind a pass (a draft's). With a sliding window shorter than
// maxPos it stores 2·window+rollback+maxBatch positions per sequence (if
// fewer than maxPos), so it slides once every window positions or so.
func (su *specSetup) cache(m *model.Model, seqs, maxPos, maxBatch, rollback int, f32 bool) (*kvsync.Cache, error) {
	w, store := su.window, 2*su.window+rollback+maxBatch
	switch {
	case w <= 0 || w >= maxPos: // no window, or one that never binds
		return m.NewCache(seqs, maxPos, f32)
	case store >= maxPos: // every position fits: the window never slides
		return m.NewWindowCache(seqs, maxPos, w, 0, f32)
	}
	return m.NewWindowCache(seqs, store, w, rollback, f32)
}

// backend makes a CPU backend of m with its own pool and cache (see cache).
func (su *specSetup) backend(m *model.Model, seqs, maxPos, maxBatch, rollback, threads int, f32 bool) (*verify.CPU, error) {
	kv, err := su.cache(m, seqs, maxPos, maxBatch, rollback, f32)
	if err != nil {
		return nil, err
	}
	return verify.NewCPU(m.NewState(maxBatch, su.pool(threads)), kv), nil
}

// pipelineConfig builds a stages.Config for seqs sequences of maxPos.
func (su *specSetup) pipelineConfig(s *specOpts, seqs, maxPos, batch, verifyThreads int, f32 bool) (stages.Config, error) {
	k := s.k
	if !s.enabled() {
		k = 0
	}
	tb, err := su.backend(su.target, seqs, maxPos, max(batch, seqs*(k+1)), 0, verifyThreads, f32)
	if err != nil {
		return stages.Config{}, err
	}
	cfg := stages.Config{
		Target: tb, Slots: seqs, MaxPos: maxPos,
		Policy:      draft.Policy{K: k, Adaptive: s.adaptive, Cost: s.cost},
		NewSampler:  stages.NewSampler,
		PreDraft:    s.preDraft,
		PreDraftMin: s.preDraftMin,
		VerifyBatch: s.verifyBatch,
	}
	switch {
	case !s.enabled():
	case s.draft == "ngram":
		cfg.Drafter = draft.NewNGram()
	default:
		// The draft writes up to 2k positions (drafting and pre-drafting)
		// past the committed tokens before it is cut back.
		db, err := su.backend(su.draft, seqs, maxPos, max(batch, 1), 2*k+2, s.draftThreads, f32)
		if err != nil {
			return stages.Config{}, err
		}
		cfg.Drafter = draft.NewModel(db, float32(s.pmin))
	}
	if su.tok != nil {
		tok := su.tok
		cfg.Stop = tok.IsEOG
		cfg.NewDetokenizer = func() stages.Detokenizer {
			d := tok.NewDecoder()
			d.SetStripLeadingSpace(false)
			return d
		}
	}
	return cfg, nil
}

// openSpec checks the speculative flags of s when a draft is given, loads
// the models (loadSpec), names them on stderr and returns the prompt ids of
// o. Without a draft in s it loads the target alone, for plain decoding.
func openSpec(o generateOpts, s *specOpts, stderr io.Writer) (*specSetup, []int32, error) {
	if s.enabled() {
		if err := s.check(); err != nil {
			return nil, nil, err
		}
	}
	su, err := loadSpec(o.model, s)
	if err != nil {
		return nil, nil, err
	}
	su.window = o.window
	fmt.Fprintln(stderr, su.modelsLine(s))
	prompt, err := su.prompt(o)
	if err != nil {
		su.Close()
		return nil, nil, err
	}
	return su, prompt, nil
}

// prompt returns the prompt ids of generate's -p / --prompt-ids.
func (su *specSetup) prompt(o generateOpts) ([]int32, error) {
	var prompt []int32
	var err error
	if o.prompt != "" {
		if su.tokErr != nil {
			return nil, fmt.Errorf("-p needs the model's tokenizer: %w (use --prompt-ids)", su.tokErr)
		}
		if prompt, err = su.tok.Encode(o.prompt, !o.noBOS, false); err != nil {
			return nil, err
		}
	} else {
		if prompt, err = parseIDs(o.promptIDs, su.target.Config.Vocab); err != nil {
			return nil, err
		}
		if su.tok != nil && !o.noBOS && su.tok.AddBOS() && su.tok.BOS() >= 0 && prompt[0] != su.tok.BOS() {
			prompt = append([]int32{su.tok.BOS()}, prompt...)
		}
	}
	if len(prompt) == 0 {
		return nil, errors.New("the prompt is empty")
	}
	return prompt, nil
}

// generateSpec is specd generate with a draft: the completion streams to
// stdout block by block, statistics go to stderr.
func generateSpec(ctx context.Context, o generateOpts, s *specOpts, stdout, stderr io.Writer) error {
	su, prompt, err := openSpec(o, s, stderr)
	if err != nil {
		return err
	}
	defer su.Close()
	if !o.ids && su.tokErr != nil {
		return fmt.Errorf("cannot print text: %w (use --ids)", su.tokErr)
	}
	ctxLen := o.ctx
	if ctxLen == 0 {
		ctxLen = su.target.Config.CtxLen
	}
	if len(prompt) >= ctxLen {
		return fmt.Errorf("prompt of %d tokens does not fit the context of %d (see --ctx)", len(prompt), ctxLen)
	}
	maxPos := min(ctxLen, len(prompt)+o.n+s.k+1)
	vt := s.verifyThreads
	if vt == 0 {
		vt = o.threads
	}
	cfg, err := su.pipelineConfig(s, 1, maxPos, min(o.batch, len(prompt)), vt, o.f32Cache)
	if err != nil {
		return err
	}
	if o.ids {
		cfg.NewDetokenizer = nil
	}
	p, err := stages.New(cfg)
	if err != nil {
		return err
	}
	req := stages.Request{ID: "cli", PromptIDs: prompt, MaxTokens: min(o.n, maxPos-len(prompt)),
		Params: stages.Params{Temp: o.params.Temp, TopK: o.params.TopK, TopP: o.params.TopP, Seed: o.params.Seed}}
	if o.n == 0 {
		fmt.Fprintln(stdout)
		return nil
	}
	final, ids, err := runOne(ctx, p, req, func(c stages.Chunk) error {
		if o.ids {
			return nil
		}
		_, err := io.WriteString(stdout, c.Text)
		return err
	})
	if err != nil {
		return err
	}
	if o.ids {
		out := make([]string, len(ids))
		for i, t := range ids {
			out[i] = strconv.Itoa(int(t))
		}
		fmt.Fprintln(stdout, strings.Join(out, " "))
	} else {
		fmt.Fprintln(stdout)
	}
	if final.Err != nil {
		return final.Err
	}
	if s.stats {
		st := final.Stats
		fmt.Fprintf(stderr, "speculative: draft %s, k %d, shared embeddings %v\n", s.draft, s.k, su.shared)
		fmt.Fprintf(stderr, "decode: %d tokens in %v, %.1f tok/s (TTFT %v, ITL %v)\n", st.Generated,
			st.Duration.Round(time.Millisecond), float64(st.Generated)/st.Duration.Seconds(),
			st.TTFT.Round(time.Microsecond), st.ITL().Round(time.Microsecond))
		p.Metrics().Snapshot().Write(stderr)
		if final.Reason == "stop" {
			fmt.Fprintln(stderr, "stopped: end of generation")
		}
	}
	if o.memStats {
		var emb []byte
		if su.draft != nil && su.draft != su.target {
			if ti, ok := su.draft.File.Tensor("token_embd.weight"); ok {
				emb = ti.Data
			}
		}
		memReport(stderr, emb)
	}
	return nil
}

// runOne runs a pipeline for one request, calling onChunk for each
// non-final chunk, and returns the final chunk and all tokens.
func runOne(ctx context.Context, p *stages.Pipeline, req stages.Request, onChunk func(stages.Chunk) error) (stages.Chunk, []int32, error) {
	res, err := runMany(ctx, p, []stages.Request{req}, onChunk)
	if err != nil {
		return stages.Chunk{}, nil, err
	}
	return res[0].final, res[0].tokens, nil
}

type runResult struct {
	final  stages.Chunk
	tokens []int32
}

// runMany serves reqs through p and collects each request's tokens and
// final chunk, in request order.
func runMany(ctx context.Context, p *stages.Pipeline, reqs []stages.Request, onChunk func(stages.Chunk) error) ([]runResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := make(chan stages.Request, len(reqs))
	for _, r := range reqs {
		in <- r
	}
	close(in)
	out := make(chan stages.Chunk, 64)
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, in, out) }()
	idx := map[string]int{}
	for i, r := range reqs {
		idx[r.ID] = i
	}
	res := make([]runResult, len(reqs))
	take := func(c stages.Chunk) error {
		r := &res[idx[c.ID]]
		r.tokens = append(r.tokens, c.Tokens...)
		if c.Final {
			r.final = c
		}
		if onChunk != nil {
			return onChunk(c)
		}
		return nil
	}
	for {
		select {
		case c := <-out:
			if err := take(c); err != nil {
				return nil, err
			}
		case err := <-done:
			for len(out) > 0 {
				if err := take(<-out); err != nil {
					return nil, err
				}
			}
			return res, err
		}
	}
}

func init() {
	register(command{name: "specbench", summary: "measure speculative against plain decoding side by side", run: runSpecBench})
}

// runSpecBench measures, in one run on one target: plain decoding and
// speculative decoding of one sequence (tok/s, acceptance α, cost ratio c,
// predicted and measured speedup) for each draft length of --ks, with and
// without pre-drafting, then a batch of sequences through the concurrent
// pipeline and through the same pipeline run one stage at a time.
func runSpecBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o generateOpts
	fs := newFlagSet("specbench", stderr)
	fs.StringVar(&o.model, "m", "", "target model `file`; default: the bundled target (and then the bundled draft)")
	fs.StringVar(&o.prompt, "p", "", "prompt `text`")
	fs.StringVar(&o.promptIDs, "prompt-ids", "", "prompt as comma-separated token `ids`")
	fs.IntVar(&o.n, "n", 128, "tokens to generate per sequence")
	fs.IntVar(&o.threads, "threads", 1, "threads of plain decoding and default --verify-threads")
	seqs := fs.Int("seqs", 4, "sequences for the concurrent-versus-serial pipeline comparison (0 skips it)")
	temp := fs.Float64("temp", 0, "sampling temperature; 0 is greedy")
	seed := fs.Uint64("seed", 1, "random seed")
	reps := fs.Int("reps", 3, "runs of each configuration; the fastest is reported (the machine may be shared)")
	ksFlag := fs.String("ks", "", "comma-separated draft `lengths` to measure one after another, with a summary table (default: -k)")
	s := addSpecFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.params.Temp, o.params.Seed, o.batch = float32(*temp), *seed, 512
	defaultModels(&o, s)
	if err := o.checkPrompt(); err != nil {
		return err
	}
	ks := []int{s.k}
	if *ksFlag != "" {
		var err error
		if ks, err = parseInts(*ksFlag); err != nil {
			return fmt.Errorf("--ks: %w", err)
		}
		for _, k := range ks {
			if k < 1 || k > 64 {
				return fmt.Errorf("--ks: draft length %d not in [1, 64]", k)
			}
		}
		s.k = slices.Max(ks)
	}
	switch {
	case !s.enabled():
		return errors.New("-d DRAFT is required with -m (a GGUF file, bundled or ngram)")
	case o.n < 1 || o.threads < 1 || *seqs < 0 || *reps < 1:
		return errors.New("-n, --threads and --reps must be positive, --seqs not negative")
	}
	su, prompt, err := openSpec(o, s, stderr)
	if err != nil {
		return err
	}
	defer su.Close()
	b := &specBench{su: su, o: o, s: *s, prompt: prompt, reps: *reps, out: stdout,
		params: stages.Params{Temp: o.params.Temp, Seed: o.params.Seed}}
	b.vt = s.verifyThreads
	if b.vt == 0 {
		b.vt = o.threads
	}
	b.maxPos = len(prompt) + o.n + s.k + 2
	if b.maxPos > su.target.Config.CtxLen {
		return fmt.Errorf("prompt and -n need %d positions, the model has %d", b.maxPos, su.target.Config.CtxLen)
	}
	fmt.Fprintf(stdout, "target %s (%d layers, dim %d, vocab %d), draft %s (shared embeddings %v), prompt %d tokens, %d generated, verify threads %d, draft threads %d\n",
		su.targetName, su.target.Config.Layers, su.target.Config.Dim, su.target.Config.Vocab, s.draft, su.shared, len(prompt), o.n, b.vt, s.draftThreads)
	if err := b.costs(); err != nil {
		return err
	}
	if err := b.plain(ctx); err != nil {
		return err
	}
	var rows []kRow
	for _, k := range ks {
		r, err := b.speculative(ctx, k)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}
	if len(rows) > 1 {
		b.summary(rows)
	}
	if *seqs > 0 {
		return b.batch(ctx, *seqs)
	}
	return nil
}

// specBench holds one specbench run's models, options and shared figures.
type specBench struct {
	su     *specSetup
	o      generateOpts
	s      specOpts // as given; each draft length runs a copy with its own k
	prompt []int32
	params stages.Params
	reps   int
	vt     int // verify threads
	maxPos int
	out    io.Writer

	tt1, td1 time.Duration // 1-token forward passes of target and draft
	c        float64       // td1 / tt1 (0 for the n-gram draft)
	plainTok plainResult   // the plain loop, fastest of reps
	loopCPU  time.Duration
	lastCPU  time.Duration // CPU time of the latest run (least of its reps)
}

// kRow is one draft length's figures for the summary table.
type kRow struct {
	k                    int
	alpha, r, pred, meas float64
	predR                float64 // prediction with the measured (k+1)-token pass cost
	pre                  float64 // speedup with pre-drafting (0: not measured)
}

// costs measures the 1-token forward passes of target and draft.
func (b *specBench) costs() error {
	var err error
	if b.tt1, err = b.su.forwardCost(b.su.target, b.vt, 1, len(b.prompt)+b.o.n); err != nil {
		return err
	}
	if b.su.draft == nil {
		fmt.Fprintf(b.out, "cost: target 1 token %v, n-gram draft: c = 0\n", b.tt1.Round(time.Microsecond))
		return nil
	}
	if b.td1, err = b.su.forwardCost(b.su.draft, b.s.draftThreads, 1, len(b.prompt)+b.o.n); err != nil {
		return err
	}
	b.c = b.td1.Seconds() / b.tt1.Seconds()
	fmt.Fprintf(b.out, "cost: target 1 token %v, draft 1 token %v: c = %.3f\n",
		b.tt1.Round(time.Microsecond), b.td1.Round(time.Microsecond), b.c)
	return nil
}

// run repeats a pipeline configuration b.reps times and keeps the fastest
// run by wall time (and the least CPU time, separately, in b.lastCPU).
func (b *specBench) run(ctx context.Context, so *specOpts, n int, serial bool) (best stages.Snapshot, bestRes []runResult, err error) {
	bestCPU := time.Duration(-1)
	for r := 0; r < b.reps; r++ {
		c0 := cpuTime()
		m, res, err := b.runOnce(ctx, so, n, serial)
		c := cpuTime() - c0
		if err != nil {
			return m, res, err
		}
		if r == 0 || m.Wall < best.Wall {
			best, bestRes = m, res
		}
		if bestCPU < 0 || c < bestCPU {
			bestCPU = c
		}
	}
	b.lastCPU = bestCPU
	return best, bestRes, nil
}

func (b *specBench) runOnce(ctx context.Context, so *specOpts, n int, serial bool) (stages.Snapshot, []runResult, error) {
	cfg, err := b.su.pipelineConfig(so, n, b.maxPos, len(b.prompt), b.vt, false)
	if err != nil {
		return stages.Snapshot{}, nil, err
	}
	cfg.Serial = serial
	cfg.Stop = nil // fixed lengths for comparable figures
	p, err := stages.New(cfg)
	if err != nil {
		return stages.Snapshot{}, nil, err
	}
	var reqs []stages.Request
	for i := 0; i < n; i++ {
		pr := b.params
		pr.Seed += uint64(i)
		reqs = append(reqs, stages.Request{ID: fmt.Sprint(i), PromptIDs: rotate(b.prompt, i), MaxTokens: b.o.n, Params: pr})
	}
	res, err := runMany(ctx, p, reqs, nil)
	if err != nil {
		return stages.Snapshot{}, nil, err
	}
	for _, r := range res {
		if r.final.Err != nil {
			return stages.Snapshot{}, nil, r.final.Err
		}
	}
	return p.Metrics().Snapshot(), res, nil
}

func tps(m stages.Snapshot) float64 { return float64(m.Generated) / m.Wall.Seconds() }

func perCPU(m stages.Snapshot, c time.Duration) float64 {
	return float64(m.Generated) / max(c.Seconds(), 1e-9)
}

// plain measures plain decoding of one sequence: the loop of specd
// generate (the baseline of every speedup) and the same through the
// pipeline.
func (b *specBench) plain(ctx context.Context) error {
	b.loopCPU = -1
	for r := 0; r < b.reps; r++ {
		c0 := cpuTime()
		pt, err := b.su.plainDecode(ctx, b.prompt, b.o.n, b.o.threads, b.o.params)
		if err != nil {
			return err
		}
		if c := cpuTime() - c0; b.loopCPU < 0 || c < b.loopCPU {
			b.loopCPU = c
		}
		if pt.tps > b.plainTok.tps {
			b.plainTok = pt
		}
	}
	plainOpts := b.s
	plainOpts.draft = "none"
	plain, _, err := b.run(ctx, &plainOpts, 1, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(b.out, "plain decoding (loop):      %7.1f tok/s, %7.1f tok per CPU-second\n", b.plainTok.tps, float64(b.o.n)/max(b.loopCPU.Seconds(), 1e-9))
	fmt.Fprintf(b.out, "plain decoding (pipeline):  %7.1f tok/s, %7.1f tok per CPU-second\n", tps(plain), perCPU(plain, b.lastCPU))
	return nil
}

// speculative measures one sequence decoded speculatively with draft
// length k without pre-drafting, then (unless --pre-draft=false) with it.
func (b *specBench) speculative(ctx context.Context, k int) (kRow, error) {
	so := b.s
	so.k = k
	row := kRow{k: k}
	ttk, err := b.su.forwardCost(b.su.target, b.vt, k+1, len(b.prompt)+b.o.n)
	if err != nil {
		return row, err
	}
	row.r = ttk.Seconds() / b.tt1.Seconds()
	preOpts := so
	so.preDraft = false
	spec, specRes, err := b.run(ctx, &so, 1, false)
	if err != nil {
		return row, err
	}
	specCPU := b.lastCPU
	same := ""
	if b.o.params.Temp == 0 {
		same = ", output identical to plain decoding"
		if fmt.Sprint(specRes[0].tokens) != fmt.Sprint(b.plainTok.tokens) {
			same = ", OUTPUT DIFFERS FROM PLAIN DECODING"
		}
	}
	row.alpha = spec.Acceptance()
	row.pred = draft.Speedup(row.alpha, k, b.c)
	row.meas = tps(spec) / b.plainTok.tps
	e := draft.Speedup(row.alpha, k, 0)
	row.predR = e / (float64(k)*b.c + row.r)
	fmt.Fprintf(b.out, "k %d: target %d-token pass %v (%.2fx a 1-token pass)\n", k, k+1, ttk.Round(time.Microsecond), row.r)
	fmt.Fprintf(b.out, "speculative (pipeline):     %7.1f tok/s, %7.1f tok per CPU-second; speedup %.2fx over the loop%s\n",
		tps(spec), perCPU(spec, specCPU), row.meas, same)
	fmt.Fprintf(b.out, "alpha %.3f, mean accepted length %.2f, predicted speedup (1-a^(k+1))/((1-a)(kc+1)) = %.2fx; measured/predicted %.0f%%\n",
		row.alpha, spec.MeanAcceptedLength(), row.pred, 100*row.meas/row.pred)
	fmt.Fprintf(b.out, "  (that assumes a (k+1)-token pass costs one 1-token pass; with the measured %.2fx it predicts %.2fx: E/(kc+r) with E = %.2f tokens per step)\n",
		row.r, row.predR, e)
	spec.Write(prefixWriter{b.out, "  "})
	if bound := spec.PreDraftBound(); spec.Wall > 0 && preOpts.preDraft && b.su.draft != nil {
		fmt.Fprintf(b.out, "pre-drafting (draft step n+1 during verification of n) could save at most %v of %v (%.1f%%): %d of %d drafts accepted in full\n",
			bound.Round(time.Microsecond), spec.Wall.Round(time.Millisecond), 100*bound.Seconds()/spec.Wall.Seconds(), spec.FullAccepts, spec.Drafts)
		pre, _, err := b.run(ctx, &preOpts, 1, false)
		if err != nil {
			return row, err
		}
		row.pre = tps(pre) / b.plainTok.tps
		fmt.Fprintf(b.out, "speculative with pre-drafting (--pre-draft-min %g): %7.1f tok/s, %7.1f tok per CPU-second; speedup %.2fx over the loop (%.2fx without; %d pre-drafts, %d used, overlap %v)\n",
			preOpts.preDraftMin, tps(pre), perCPU(pre, b.lastCPU), row.pre, tps(pre)/tps(spec), pre.PreDrafts, pre.PreDraftHits, pre.Overlap.Round(time.Microsecond))
	}
	return row, nil
}

// summary prints one row per draft length and names the best k by the
// predicted speedup (the draft length Leviathan et al.'s formula picks)
// and by the measured one.
func (b *specBench) summary(rows []kRow) {
	bestPred, bestMeas := 0, 0
	for i, r := range rows {
		if r.pred > rows[bestPred].pred {
			bestPred = i
		}
		if max(r.meas, r.pre) > max(rows[bestMeas].meas, rows[bestMeas].pre) {
			bestMeas = i
		}
	}
	fmt.Fprintf(b.out, "\nsummary (c = %.3f; speedups over the plain loop at %.1f tok/s):\n", b.c, b.plainTok.tps)
	fmt.Fprintf(b.out, "| k | alpha | (k+1)-pass / 1-pass | predicted | measured | measured / predicted | with pre-drafting | / predicted |\n|---|---|---|---|---|---|---|---|\n")
	for i, r := range rows {
		mark := ""
		if i == bestPred {
			mark = " (best predicted)"
		}
		pre, preRatio := "n/a", "n/a"
		if r.pre > 0 {
			pre, preRatio = fmt.Sprintf("%.2fx", r.pre), fmt.Sprintf("%.0f%%", 100*r.pre/r.pred)
		}
		fmt.Fprintf(b.out, "| %d%s | %.3f | %.2f | %.2fx | %.2fx | %.0f%% | %s | %s |\n",
			r.k, mark, r.alpha, r.r, r.pred, r.meas, 100*r.meas/r.pred, pre, preRatio)
	}
	fmt.Fprintf(b.out, "fastest measured: k %d\n", rows[bestMeas].k)
}

// batch runs seqs sequences through the concurrent pipeline (verifying
// what is ready, and gathering every sequence per pass) and one stage at a
// time, with the largest draft length given.
func (b *specBench) batch(ctx context.Context, seqs int) error {
	line := func(name string, m stages.Snapshot, c time.Duration) {
		fmt.Fprintf(b.out, "%d sequences, %-34s %7.1f tok/s, %7.1f per CPU-s (alpha %.2f, %.1f blocks per pass, draft busy %v, verify busy %v, overlap %v)\n",
			seqs, name+":", tps(m), perCPU(m, c), m.Acceptance(), float64(m.Steps)/max(float64(m.Passes), 1), m.DraftBusy.Round(time.Millisecond),
			m.VerifyBusy.Round(time.Millisecond), m.Overlap.Round(time.Millisecond))
	}
	conc, _, err := b.run(ctx, &b.s, seqs, false)
	if err != nil {
		return err
	}
	concCPU := b.lastCPU
	gathered := b.s
	gathered.verifyBatch = seqs
	gath, _, err := b.run(ctx, &gathered, seqs, false)
	if err != nil {
		return err
	}
	gathCPU := b.lastCPU
	ser, _, err := b.run(ctx, &b.s, seqs, true)
	if err != nil {
		return err
	}
	fmt.Fprintf(b.out, "k %d:\n", b.s.k)
	line(fmt.Sprintf("concurrent (verify-batch %d)", b.s.verifyBatch), conc, concCPU)
	line(fmt.Sprintf("concurrent (verify-batch %d)", seqs), gath, gathCPU)
	line("one stage at a time", ser, b.lastCPU)
	fmt.Fprintf(b.out, "concurrency gain %.2fx (verify-batch %d), %.2fx (verify-batch %d)\n",
		tps(conc)/tps(ser), b.s.verifyBatch, tps(gath)/tps(ser), seqs)
	return nil
}

// rotate returns prompt with its tokens after the first rotated by i, so
// the sequences of a batch differ.
func rotate(prompt []int32, i int) []int32 {
	if i == 0 || len(prompt) < 3 {
		return prompt
	}
	out := append([]int32{}, prompt[:1]...)
	rest := prompt[1:]
	r := i % len(rest)
	out = append(out, rest[r:]...)
	return append(out, rest[:r]...)
}

type plainResult struct {
	tokens []int32
	tps    float64
}

// plainDecode is the plain loop of specd generate (prefill, then one token
// per forward pass), timed over the decode part.
func (su *specSetup) plainDecode(ctx context.Context, prompt []int32, n, threads int, params sample.Params) (plainResult, error) {
	m := su.target
	be, err := su.backend(m, 1, len(prompt)+n+1, len(prompt), 0, threads, false)
	if err != nil {
		return plainResult{}, err
	}
	lg := make([]float32, len(prompt)*m.Config.Vocab)
	var b verify.Batch
	for i, t := range prompt {
		b.Add(t, int32(i), 0, i == len(prompt)-1)
	}
	if err := be.Forward(&b, lg); err != nil {
		return plainResult{}, err
	}
	smp := sample.New(params)
	var out []int32
	start := time.Now()
	for len(out) < n {
		if err := ctx.Err(); err != nil {
			return plainResult{}, err
		}
		next := int32(smp.Sample(lg[:m.Config.Vocab]))
		out = append(out, next)
		if len(out) == n {
			break
		}
		b.Reset()
		b.Add(next, int32(len(prompt)+len(out)-1), 0, true)
		if err := be.Forward(&b, lg); err != nil {
			return plainResult{}, err
		}
	}
	return plainResult{out, float64(n) / time.Since(start).Seconds()}, nil
}

// forwardCost is the shortest of 16 timed forward passes over n tokens
// (logits for all) at positions near pos: the least disturbed by other
// work on the machine.
func (su *specSetup) forwardCost(m *model.Model, threads, n, pos int) (time.Duration, error) {
	maxPos := min(pos+n+1, m.Config.CtxLen)
	be, err := su.backend(m, 1, maxPos, n, 0, threads, false)
	if err != nil {
		return 0, err
	}
	start := max(0, min(pos, maxPos-n)-1)
	// Fill the cache up to start so attention spans a realistic length.
	var b verify.Batch
	lg := make([]float32, n*m.Config.Vocab)
	for p := 0; p < start; p += n {
		b.Reset()
		for i := p; i < min(p+n, start); i++ {
			b.Add(1, int32(i), 0, false)
		}
		if err := be.Forward(&b, lg); err != nil {
			return 0, err
		}
	}
	const reps = 16
	best := time.Duration(-1)
	for r := 0; r < reps+2; r++ {
		if err := be.Rollback(0, start); err != nil {
			return 0, err
		}
		b.Reset()
		for i := 0; i < n; i++ {
			b.Add(int32(1+i), int32(start+i), 0, true)
		}
		t0 := time.Now()
		if err := be.Forward(&b, lg); err != nil {
			return 0, err
		}
		if d := time.Since(t0); r >= 2 && (best < 0 || d < best) { // two warm-up passes
			best = d
		}
	}
	return best, nil
}

// prefixWriter indents every line written through it.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	lines := strings.SplitAfter(string(b), "\n")
	for _, l := range lines {
		if l == "" {
			continue
		}
		if _, err := io.WriteString(p.w, p.prefix+l); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// parseInts parses a comma-separated list of integers.
func parseInts(s string) ([]int, error) {
	var out []int
	for i, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("item %d (%q) is not an integer", i+1, f)
		}
		out = append(out, v)
	}
	return out, nil
}
