// Package stages wires the speculative decoding pipeline out of graph stages:
//
//	intake → tokenize → prefill → draft ⇄ verify → accept → detokenize → publish
//	                                 ▲                 │
//	                                 └──── loop ───────┘
//
// intake admits a request when a sequence slot is free (back-pressure on
// the caller); tokenize turns its prompt into ids; prefill runs the target
// over the prompt; draft proposes k tokens per sequence on the draft's own
// thread budget; verify checks the blocks of every sequence that is ready
// in one batched target pass; accept commits the accepted tokens, applies
// stop conditions and sends the sequence back to draft (continuous
// batching: sequences join and leave between steps); detokenize and
// publish turn each verified block into one numbered chunk.
//
// Draft and verify are separate goroutines, so with several sequences the
// draft works on one while the target verifies others. The target is one
// device: prefill and verify take turns on it under a mutex. The draft
// model's KV cache is touched only by the draft stage (including the
// rollback to the accepted prefix, done when a sequence comes back), the
// target's only under the device lock.
package stages

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/graph"
	"github.com/specd-dev/specd/kvsync"
	"github.com/specd-dev/specd/verify"
)

// Params are a request's sampling parameters. Temp 0 is greedy.
type Params struct {
	Temp float32
	TopK int
	TopP float32
	Seed uint64
}

// Request is one generation request.
type Request struct {
	ID        string
	Prompt    string  // tokenized by Config.Tokenizer unless PromptIDs is set
	PromptIDs []int32 // prompt token ids
	MaxTokens int     // tokens to generate (> 0)
	K         int     // if > 0, at most K draft tokens per step (the pipeline's policy caps it too)
	Params    Params
	// Ctx, if set, cancels this request alone: it ends with its error.
	Ctx context.Context
}

// Chunk is one published message: the tokens of one verified block.
// Every request gets chunks numbered 0, 1, 2, … ending in exactly one
// chunk with Final set (carrying Err, if the request failed, and Stats).
type Chunk struct {
	ID     string
	Seq    int
	Tokens []int32
	Text   string
	Final  bool
	Reason string // on the final chunk: "length", "stop" or "error"
	Err    error
	Stats  *RequestStats // on the final chunk

	key uint64 // unique per request within a pipeline
}

// Tokenizer turns prompt text into token ids.
type Tokenizer interface {
	Encode(text string) ([]int32, error)
}

// Detokenizer turns a stream of ids into text, holding back incomplete
// UTF-8 (tokenizer.Decoder satisfies it).
type Detokenizer interface {
	Add(id int32) string
	Flush() string
}

// Config configures a Pipeline.
type Config struct {
	Target  verify.Backend // the target model on its own thread pool
	Drafter draft.Drafter  // nil: plain decoding (k = 0); a model draft's cache needs Slots slots of MaxPos
	Policy  draft.Policy
	Slots   int // sequences decoded at once (KV cache slots of both models)
	MaxPos  int // positions per slot

	Tokenizer      Tokenizer                           // needed for text prompts
	NewDetokenizer func() Detokenizer                  // nil: chunks carry no text
	NewSampler     func(Params, uint64) verify.Sampler // for Temp > 0; the second argument is a stream id
	Stop           func(tok int32) bool                // end-of-generation tokens (not emitted); nil: none

	// Serial runs the busy part of every stage under one lock, so stages
	// never overlap: the baseline for measuring what concurrency gains.
	Serial bool

	// PreDraft lets the draft stage, when no other sequence is waiting,
	// draft step n+1 of a sequence while step n is being verified, on the
	// assumption that step n is accepted in full and the bonus token is
	// the draft's own next token. A miss costs only draft time (the draft
	// cache is cut back as usual); a hit skips the draft step.
	PreDraft bool

	// PreDraftMin, with PreDraft, pre-drafts a sequence only while the
	// chance that its pre-draft is used, estimated as α^(k+1) from its
	// recent acceptance α (k draft tokens accepted and the bonus token
	// guessed), is at least this. 0 pre-drafts every step. A pre-draft that
	// misses still occupies the draft's threads when the next real draft is
	// due, so with low acceptance it slows decoding down.
	PreDraftMin float64

	// VerifyBatch makes verify wait until it holds the blocks of this many
	// sequences (or of all in flight, if fewer) before a pass: larger
	// passes amortise the target's weights over more tokens, at the cost
	// of less overlap between draft and verify. 0 or 1: verify whatever is
	// ready.
	VerifyBatch int
}

// Errors.
var (
	ErrConfig  = errors.New("stages: invalid configuration")
	ErrRequest = errors.New("stages: invalid request")
	ErrRan     = errors.New("stages: pipeline already run")
)

// Pipeline runs requests through the stages. Run it once.
type Pipeline struct {
	cfg     Config
	slots   *kvsync.Slots
	device  sync.Mutex // the target backend: prefill and verify
	serial  sync.Mutex // Config.Serial
	metrics *Metrics
	graph   atomic.Pointer[graph.Graph]
	overlap overlap
	ran     atomic.Bool

	// inflight counts admitted sequences not yet finished; the draft stage
	// keeps it and signals inflightDown (capacity 1) when it drops, so a
	// verify stage waiting for a fuller batch re-checks.
	inflight     atomic.Int64
	inflightDown chan struct{}
}

// New validates cfg and returns a pipeline.
func New(cfg Config) (*Pipeline, error) {
	if cfg.Target == nil || cfg.Slots <= 0 || cfg.MaxPos <= 0 {
		return nil, fmt.Errorf("%w: target, slots and positions are required", ErrConfig)
	}
	if cfg.Drafter == nil {
		cfg.Policy.K = 0
	}
	if cfg.Policy.K < 0 {
		return nil, fmt.Errorf("%w: negative draft length %d", ErrConfig, cfg.Policy.K)
	}
	if !(cfg.PreDraftMin >= 0 && cfg.PreDraftMin <= 1) {
		return nil, fmt.Errorf("%w: pre-draft threshold %g outside [0, 1]", ErrConfig, cfg.PreDraftMin)
	}
	if v := cfg.Drafter; v != nil && v.Vocab() != 0 && v.Vocab() != cfg.Target.Vocab() {
		return nil, fmt.Errorf("%w: draft vocabulary %d differs from target's %d", ErrConfig, v.Vocab(), cfg.Target.Vocab())
	}
	if need := cfg.Policy.K + 1; cfg.Target.MaxBatch() < need {
		return nil, fmt.Errorf("%w: target batch %d is smaller than k+1 = %d", ErrConfig, cfg.Target.MaxBatch(), need)
	}
	return &Pipeline{cfg: cfg, slots: kvsync.NewSlots(cfg.Slots), metrics: newMetrics(cfg.Policy.K), inflightDown: make(chan struct{}, 1)}, nil
}

// Metrics returns the pipeline's global metrics (safe while running).
func (p *Pipeline) Metrics() *Metrics { return p.metrics }

// Graph returns the running graph (for its per-stage counters), or nil
// before Run.
func (p *Pipeline) Graph() *graph.Graph { return p.graph.Load() }

// seq is one sequence in flight. It is owned by one stage at a time (it
// travels through the pipes), so it needs no lock.
type seq struct {
	req     Request
	ctx     context.Context
	slot    int
	tokens  []int32 // committed: prompt then generated
	nPrompt int
	gen     int // generated tokens published

	policy draft.Acceptance
	dreq   draft.Request
	ext    draft.Request // extends a partial pre-draft (Config.PreDraft)
	block  verify.Block
	key    uint64

	done   bool
	reason string
	err    error
	chunks int

	stats     RequestStats
	start     time.Time
	lastToken time.Time
}

// Run serves requests from in until it is closed (and every admitted
// request has finished) or ctx ends, publishing chunks on out. It returns
// the first stage error (a request's own errors end only that request).
// out is not closed.
func (p *Pipeline) Run(ctx context.Context, in <-chan Request, out chan<- Chunk) error {
	if !p.ran.CompareAndSwap(false, true) {
		return ErrRan
	}
	cfg := p.cfg
	g := graph.New()
	p.graph.Store(g)
	n := cfg.Slots
	admitted := graph.NewPipe[*seq](g, "admitted", n)
	tokenized := graph.NewPipe[*seq](g, "tokenized", n)
	fresh := graph.NewPipe[*seq](g, "prefilled", n)
	blocks := graph.NewPipe[*seq](g, "drafted", n)
	verified := graph.NewPipe[*seq](g, "verified", n)
	loop := graph.NewPipe[*seq](g, "loop", n)
	chunks := graph.NewPipe[Chunk](g, "chunks", 4*n)
	texts := graph.NewPipe[Chunk](g, "texts", 4*n)

	graph.Source(g, "intake", admitted, func(ctx context.Context, emit func(*seq) error) error {
		var key uint64
		for {
			var r Request
			var ok bool
			select {
			case r, ok = <-in:
				if !ok {
					return nil
				}
			case <-ctx.Done():
				return ctx.Err()
			}
			slot, err := p.slots.Acquire(ctx)
			if err != nil {
				return err
			}
			key++
			if err := emit(p.newSeq(r, slot, key)); err != nil {
				return err
			}
		}
	})
	graph.Map(g, "tokenize", admitted, tokenized, func(ctx context.Context, s *seq) (*seq, error) {
		p.serialize(func() { p.tokenize(s) })
		return s, nil
	})
	graph.Map(g, "prefill", tokenized, fresh, func(ctx context.Context, s *seq) (*seq, error) {
		p.serialize(func() { p.prefill(s) })
		return s, nil
	})
	g.Go("draft", func(ctx context.Context, st *graph.Stage) error {
		return p.draftStage(ctx, st, fresh, loop, blocks)
	}, blocks)
	g.Go("verify", func(ctx context.Context, st *graph.Stage) error {
		return p.verifyStage(ctx, st, blocks, verified)
	}, verified)
	g.Go("accept", func(ctx context.Context, st *graph.Stage) error {
		return p.acceptStage(ctx, st, verified, loop, chunks)
	}, loop, chunks)
	decoders := map[uint64]Detokenizer{} // owned by the detokenize stage
	graph.Map(g, "detokenize", chunks, texts, func(ctx context.Context, c Chunk) (Chunk, error) {
		if p.cfg.NewDetokenizer == nil {
			return c, nil
		}
		d := decoders[c.key]
		if d == nil {
			d = p.cfg.NewDetokenizer()
			decoders[c.key] = d
		}
		for _, t := range c.Tokens {
			c.Text += d.Add(t)
		}
		if c.Final {
			c.Text += d.Flush()
			delete(decoders, c.key)
		}
		return c, nil
	})
	graph.Sink(g, "publish", texts, func(ctx context.Context, c Chunk) error {
		select {
		case out <- c:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	start := time.Now()
	err := g.Run(ctx)
	p.metrics.setWall(time.Since(start), p.overlap.both())
	busy := func(name string) time.Duration { return g.Stage(name).Stats().Busy }
	p.metrics.setBusy(busy("draft"), busy("verify"), busy("prefill"))
	return err
}

// serialize runs f, under the global lock in Serial mode, and returns how
// long f ran (not counting the wait for the lock).
func (p *Pipeline) serialize(f func()) time.Duration {
	if p.cfg.Serial {
		p.serial.Lock()
		defer p.serial.Unlock()
	}
	t0 := time.Now()
	f()
	return time.Since(t0)
}

func (p *Pipeline) newSeq(r Request, slot int, key uint64) *seq {
	s := &seq{req: r, slot: slot, key: key, start: time.Now()}
	s.ctx = r.Ctx
	if s.ctx == nil {
		s.ctx = context.Background()
	}
	s.stats.AcceptedAt = make([]int, p.cfg.Policy.K)
	return s
}

// fail ends s with err (a request error, not a pipeline error).
func (s *seq) fail(err error) {
	if !s.done {
		s.done, s.reason, s.err = true, "error", err
	}
}

func (p *Pipeline) tokenize(s *seq) {
	r := &s.req
	if err := s.ctx.Err(); err != nil {
		s.fail(err) // cancelled while waiting for a slot
		return
	}
	ids := r.PromptIDs
	if len(ids) == 0 {
		if r.Prompt == "" {
			s.fail(fmt.Errorf("%w %q: empty prompt", ErrRequest, r.ID))
			return
		}
		if p.cfg.Tokenizer == nil {
			s.fail(fmt.Errorf("%w %q: text prompt but no tokenizer", ErrRequest, r.ID))
			return
		}
		var err error
		if ids, err = p.cfg.Tokenizer.Encode(r.Prompt); err != nil {
			s.fail(fmt.Errorf("%w %q: %v", ErrRequest, r.ID, err))
			return
		}
		if len(ids) == 0 {
			s.fail(fmt.Errorf("%w %q: prompt has no tokens", ErrRequest, r.ID))
			return
		}
	}
	vocab := p.cfg.Target.Vocab()
	for _, t := range ids {
		if t < 0 || int(t) >= vocab {
			s.fail(fmt.Errorf("%w %q: prompt token %d outside vocabulary %d", ErrRequest, r.ID, t, vocab))
			return
		}
	}
	if r.MaxTokens <= 0 {
		s.fail(fmt.Errorf("%w %q: max tokens %d", ErrRequest, r.ID, r.MaxTokens))
		return
	}
	k := p.cfg.Policy.K
	if len(ids)+k+1 > p.cfg.MaxPos {
		s.fail(fmt.Errorf("%w %q: prompt of %d tokens does not fit %d positions", ErrRequest, r.ID, len(ids), p.cfg.MaxPos))
		return
	}
	// Everything a step needs is allocated here, once per request.
	s.tokens = make([]int32, 0, len(ids)+r.MaxTokens+k+1)
	s.tokens = append(s.tokens, ids...)
	s.nPrompt = len(ids)
	s.dreq = draft.Request{Slot: s.slot, K: k, Out: make([]int32, 0, k)}
	s.ext = draft.Request{Slot: s.slot, Out: make([]int32, 0, k), Tokens: make([]int32, 0, cap(s.tokens))}
	s.block = verify.Block{Seq: int32(s.slot), Draft: make([]int32, 0, k), Tokens: make([]int32, 0, k+1)}
	if r.Params.Temp > 0 {
		if p.cfg.NewSampler == nil {
			s.fail(fmt.Errorf("%w %q: sampling requested but not configured", ErrRequest, r.ID))
			return
		}
		s.block.Sampler = p.cfg.NewSampler(r.Params, 0)
		s.dreq.Sampler = p.cfg.NewSampler(r.Params, 1) // the draft's own random stream
		s.ext.Sampler = s.dreq.Sampler
		if k > 0 {
			s.dreq.Q = make([]float32, 0, k*vocab)
			s.ext.Q = make([]float32, 0, k*vocab)
		}
	}
}

// prefill writes the target KV of all prompt tokens but the last, which
// opens the first verification block.
func (p *Pipeline) prefill(s *seq) {
	if s.done {
		return
	}
	be := p.cfg.Target
	p.device.Lock()
	err := be.Rollback(s.slot, 0)
	p.device.Unlock()
	if err != nil {
		s.fail(err)
		return
	}
	// One chunk per turn on the device, so that a long prompt does not
	// hold up the verification of sequences already decoding.
	chunk := min(be.MaxBatch(), prefillChunk)
	var b verify.Batch
	for have := 0; have < s.nPrompt-1; {
		b.Reset()
		end := min(s.nPrompt-1, have+chunk)
		for i := have; i < end; i++ {
			b.Add(s.tokens[i], int32(i), int32(s.slot), false)
		}
		p.device.Lock()
		err := be.Forward(&b, nil)
		p.device.Unlock()
		if err != nil {
			s.fail(fmt.Errorf("stages: prefill: %w", err))
			return
		}
		have = end
	}
}

// prefillChunk is the most prompt tokens prefill runs in one pass.
const prefillChunk = 64

// draftStage merges new sequences and sequences coming back from accept,
// drafts k tokens for each and sends it to verify. It owns the drafter and
// the count of sequences in flight; it returns when no more can arrive.
func (p *Pipeline) draftStage(ctx context.Context, st *graph.Stage, fresh, loop, out *graph.Pipe[*seq]) error {
	inflight, freshOpen := 0, true
	freshC := fresh.Chan()
	pre := make([]preDraft, p.cfg.Slots) // per slot, owned by this stage
	// A pre-draft stops as soon as a sequence comes back from verification
	// or a new one arrives: it must not delay real work.
	stopPre := func() bool { return len(loop.Chan()) > 0 || (freshC != nil && len(freshC) > 0) }
	for freshOpen || inflight > 0 {
		var s *seq
		select {
		case x, ok := <-freshC:
			if !ok {
				freshOpen, freshC = false, nil
				continue
			}
			fresh.Took()
			inflight++
			p.inflight.Add(1)
			s = x
			if s.done {
				// Failed before decoding: accept publishes its final
				// chunk and sends it back here to free the slot.
				if err := out.Send(ctx, s); err != nil {
					return err
				}
				continue
			}
			pre[s.slot].valid = false
			if p.cfg.Drafter != nil {
				if err := p.cfg.Drafter.Reset(s.slot); err != nil {
					return fmt.Errorf("stages: draft reset: %w", err)
				}
			}
		case x, ok := <-loop.Chan():
			if !ok {
				return errors.New("stages: loop closed with sequences in flight")
			}
			loop.Took()
			s = x
		case <-ctx.Done():
			return ctx.Err()
		}
		st.AddIn(1)
		if s.done {
			// Finished: the slot becomes free for intake.
			inflight--
			p.inflight.Add(-1)
			select {
			case p.inflightDown <- struct{}{}:
			default:
			}
			pre[s.slot].valid = false
			p.slots.Release(s.slot)
			continue
		}
		var err error
		pr := &pre[s.slot]
		st.AddBusy(p.serialize(func() {
			p.overlap.enter(0)
			err = p.draft(s, pr)
			p.overlap.leave(0)
		}))
		if err != nil {
			return err
		}
		// Remember what step n+1 would start from if step n is accepted in
		// full; s belongs to verify once sent.
		k := len(s.block.Draft)
		// A pre-draft feeds the draft cache up to position n+2k-1.
		canPre := p.cfg.PreDraft && p.cfg.Drafter != nil && k > 0 && s.gen+k+2 < s.req.MaxTokens &&
			len(s.tokens)+2*k+1 < p.cfg.MaxPos &&
			(p.cfg.PreDraftMin <= 0 || math.Pow(s.policy.Alpha(), float64(k+1)) >= p.cfg.PreDraftMin)
		if canPre {
			pr.base = len(s.tokens)
			pr.tokens = append(append(pr.tokens[:0], s.tokens...), s.block.Draft...)
			pr.req.Slot, pr.req.Sampler, pr.req.K, pr.req.Stop = s.slot, s.dreq.Sampler, k+1, stopPre
		}
		if err := out.Send(ctx, s); err != nil {
			return err
		}
		st.AddOut(1)
		if canPre && len(loop.Chan()) == 0 && (freshC == nil || len(freshC) == 0) {
			st.AddBusy(p.serialize(func() {
				p.overlap.enter(0)
				err = p.preDraft(pr)
				p.overlap.leave(0)
			}))
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// preDraft is a speculative draft of step n+1 (see Config.PreDraft).
type preDraft struct {
	valid  bool
	base   int     // committed tokens when step n was drafted
	tokens []int32 // those tokens and step n's draft
	req    draft.Request
}

// preDraft drafts up to k+1 tokens after step n's draft: a guess of the
// bonus token and then step n+1's draft. It stops early when other work
// arrives (Request.Stop); the next draft uses what it made and drafts the
// rest.
func (p *Pipeline) preDraft(pr *preDraft) error {
	pr.req.Tokens = pr.tokens
	if err := p.cfg.Drafter.Draft(&pr.req); err != nil {
		return fmt.Errorf("stages: pre-draft: %w", err)
	}
	pr.valid = len(pr.req.Out) > 0
	p.metrics.preDraft(false)
	return nil
}

// draft fills s.block for the next verification: from the pre-draft pr
// if it guessed right (as far as it got), the rest by drafting.
func (p *Pipeline) draft(s *seq, pr *preDraft) error {
	n := len(s.tokens)
	b := &s.block
	b.Pos, b.Last = int32(n-1), s.tokens[n-1]
	b.Draft, b.Q = b.Draft[:0], nil
	d := p.cfg.Drafter
	if d == nil {
		return nil
	}
	k := p.cfg.Policy.Next(&s.policy)
	if s.req.K > 0 {
		k = min(k, s.req.K)
	}
	// Do not draft past the tokens still wanted or the cache.
	k = min(k, s.req.MaxTokens-s.gen-1, p.cfg.MaxPos-n-1)
	hit := false
	if pr.valid {
		pr.valid = false
		pk := len(pr.tokens) - pr.base
		// Step n was accepted in full and the bonus token guessed: the
		// draft cache holds what drafting would feed, and the pre-draft's
		// further tokens are this step's first proposals.
		hit = n == pr.base+pk+1 && slices.Equal(s.tokens[pr.base:n-1], pr.tokens[pr.base:]) && s.tokens[n-1] == pr.req.Out[0]
		if hit {
			p.metrics.preDraft(true)
		}
	}
	if !hit {
		// The draft cache keeps only the accepted prefix (kvsync rule).
		if err := d.Accept(s.slot, n); err != nil {
			return fmt.Errorf("stages: draft rollback: %w", err)
		}
	}
	if k <= 0 {
		return nil
	}
	kk := 0 // proposals taken from the pre-draft
	if hit {
		kk = min(len(pr.req.Out)-1, k)
		b.Draft = append(b.Draft, pr.req.Out[1:1+kk]...)
		if pr.req.Q != nil && kk > 0 {
			// Copied: the next pre-draft reuses pr's buffer while this
			// block is being verified.
			v := p.cfg.Target.Vocab()
			s.dreq.Q = append(s.dreq.Q[:0], pr.req.Q[v:(1+kk)*v]...)
			b.Q = s.dreq.Q
		}
		if kk == k {
			return nil
		}
	}
	r := &s.dreq
	if kk > 0 {
		// Continue the pre-draft: its proposals are fed like committed
		// tokens (the cache holds all but the last already).
		r = &s.ext
		r.Tokens = append(append(r.Tokens[:0], s.tokens...), b.Draft...)
	} else {
		r.Tokens = s.tokens
	}
	r.K = k - kk
	if err := d.Draft(r); err != nil {
		return fmt.Errorf("stages: draft: %w", err)
	}
	b.Draft = append(b.Draft, r.Out...)
	switch {
	case r.Q == nil: // greedy proposals
	case kk == 0:
		b.Q = r.Q
	default:
		s.dreq.Q = append(s.dreq.Q, r.Q...)
		b.Q = s.dreq.Q
	}
	return nil
}

// verifyStage takes every drafted sequence that is ready (up to the
// target's batch size) and verifies them in one pass.
func (p *Pipeline) verifyStage(ctx context.Context, st *graph.Stage, in, out *graph.Pipe[*seq]) error {
	maxBatch := p.cfg.Target.MaxBatch()
	v := verify.New(p.cfg.Target)
	batch := make([]*seq, 0, p.cfg.Slots)
	blocks := make([]*verify.Block, 0, p.cfg.Slots)
	var pending *seq
	closed := false
	for !closed {
		batch, blocks = batch[:0], blocks[:0]
		tokens := 0
		for {
			if pending == nil {
				if s, ok, c := in.TryRecv(); ok {
					pending = s
				} else if c {
					closed = true
					break
				}
			}
			if pending != nil {
				if pending.done {
					// Nothing to verify: pass it on for its final chunk.
					s := pending
					pending = nil
					if err := out.Send(ctx, s); err != nil {
						return err
					}
					continue
				}
				need := len(pending.block.Draft) + 1
				if tokens+need > maxBatch {
					break // full: pending opens the next batch
				}
				batch = append(batch, pending)
				blocks = append(blocks, &pending.block)
				tokens += need
				pending = nil
				continue
			}
			// Nothing queued: verify now, or wait for more sequences
			// (Config.VerifyBatch) as long as enough are in flight.
			want := max(1, min(p.cfg.VerifyBatch, int(p.inflight.Load())))
			if len(batch) >= want {
				break
			}
			select {
			case s, ok := <-in.Chan():
				if !ok {
					closed = true
					break
				}
				in.Took()
				pending = s
			case <-p.inflightDown:
			case <-ctx.Done():
				return ctx.Err()
			}
			if closed {
				break
			}
		}
		if len(batch) == 0 {
			continue
		}
		st.AddIn(len(batch))
		var err error
		var busy time.Duration
		p.serialize(func() {
			p.device.Lock()
			t0 := time.Now()
			p.overlap.enter(1)
			err = v.Verify(blocks)
			p.overlap.leave(1)
			busy = time.Since(t0)
			p.device.Unlock()
		})
		st.AddBusy(busy)
		if err != nil {
			return fmt.Errorf("stages: verify: %w", err)
		}
		p.metrics.batch(len(batch), tokens)
		for _, s := range batch {
			if err := out.Send(ctx, s); err != nil {
				return err
			}
			st.AddOut(1)
		}
	}
	return nil
}

// acceptStage commits each verified block, publishes it as a chunk and
// sends the sequence back to draft (finished or not).
func (p *Pipeline) acceptStage(ctx context.Context, st *graph.Stage, in, loop *graph.Pipe[*seq], chunks *graph.Pipe[Chunk]) error {
	for {
		s, ok, err := in.Recv(ctx)
		if err != nil || !ok {
			return err
		}
		st.AddIn(1)
		if !s.done {
			var c Chunk
			st.AddBusy(p.serialize(func() { c = p.accept(s) }))
			if len(c.Tokens) > 0 {
				if err := chunks.Send(ctx, c); err != nil {
					return err
				}
			}
		}
		if s.done {
			if err := p.final(ctx, s, chunks); err != nil {
				return err
			}
		}
		st.AddOut(1)
		if err := loop.Send(ctx, s); err != nil {
			return err
		}
	}
}

// accept commits the block's tokens and returns its chunk.
func (p *Pipeline) accept(s *seq) Chunk {
	b := &s.block
	now := time.Now()
	k := len(b.Draft)
	if k > 0 {
		s.stats.Drafts++
		s.stats.DraftTokens += k
		s.stats.Accepted += b.Accepted
		for i := 0; i < b.Accepted; i++ {
			s.stats.AcceptedAt[i]++
		}
		s.policy.Update(k, b.Accepted)
	}
	s.stats.Steps++
	p.metrics.block(k, b.Accepted)
	c := Chunk{ID: s.req.ID, key: s.key}
	for _, t := range b.Tokens {
		if s.gen >= s.req.MaxTokens {
			s.done, s.reason = true, "length"
			break
		}
		if p.cfg.Stop != nil && p.cfg.Stop(t) {
			s.done, s.reason = true, "stop"
			break
		}
		s.tokens = append(s.tokens, t)
		s.gen++
		c.Tokens = append(c.Tokens, t)
	}
	if !s.done && (s.gen >= s.req.MaxTokens || len(s.tokens) >= p.cfg.MaxPos) {
		// Enough tokens, or the context is full: the next block would
		// need position MaxPos.
		s.done, s.reason = true, "length"
	}
	if len(c.Tokens) > 0 {
		c.Seq = s.chunks
		s.chunks++
		if s.stats.Generated == 0 {
			s.stats.TTFT = now.Sub(s.start)
		} else {
			// Inter-token latency: the block's wait spread over its tokens.
			s.stats.ITLSum += now.Sub(s.lastToken)
		}
		s.stats.Generated += len(c.Tokens)
		s.lastToken = now
		p.metrics.tokens(len(c.Tokens), s.stats.Generated == len(c.Tokens), now.Sub(s.start))
	}
	if err := s.ctx.Err(); err != nil && !s.done {
		s.fail(err)
	}
	return c
}

// final publishes the last chunk of s.
func (p *Pipeline) final(ctx context.Context, s *seq, chunks *graph.Pipe[Chunk]) error {
	c := Chunk{ID: s.req.ID, key: s.key, Seq: s.chunks, Final: true, Reason: s.reason, Err: s.err}
	s.chunks++
	s.stats.Duration = time.Since(s.start)
	st := s.stats
	c.Stats = &st
	p.metrics.finish(s.err != nil, &st)
	return chunks.Send(ctx, c)
}
