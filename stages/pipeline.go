// Package stages wires the speculative decoding pipeline out of graph stages:
//
//	intake → tokenize → prefill → draft ⇄ verify → accept → publish
//	                                 ▲                 │
//	                                 └──── loop ───────┘
//
// intake admits a request when a sequence slot is free, highest priority
// first, from a bounded queue (Submit waits, TrySubmit says ErrBusy) or
// from Run's channel (intake.go); tokenize turns its prompt into ids and
// prefill runs the target over it (prefill.go); draft proposes k tokens
// per sequence on the draft's own thread budget (draft.go), k fixed,
// adaptive, or chosen each step from measured costs (Policy.Auto, auto.go:
// verify times its passes, draft its steps); verify checks
// the blocks of every sequence that is ready in one batched target pass
// (verify.go); accept commits the accepted tokens, detokenizes them,
// applies stop tokens and stop strings and sends the sequence back to
// draft (continuous batching: sequences join and leave between steps);
// publish hands each verified block, as one numbered chunk, to the
// request's own Stream (accept.go, intake.go).
//
// Files follow the flow: pipeline.go (types, configuration, wiring),
// intake.go, prefill.go, draft.go, verify.go, accept.go, metrics.go; and
// auto.go.
//
// Draft and verify are separate goroutines, so with several sequences the
// draft works on one while the target verifies others. The target is one
// device: prefill and verify take turns on it under a mutex. The draft
// model's KV cache is touched only by the draft stage (including the
// rollback to the accepted prefix, done when a sequence comes back), the
// target's only under the device lock.
//
// KV rule. A sequence has committed tokens t[0..n). Between steps the
// target's cache of its slot holds exactly the first n-1 of them (prefill
// writes all prompt tokens but the last): the last committed token is fed,
// at position n-1, as the first entry of the next verification block
// [t[n-1], d1..dk], which writes positions n-1..n+k-1. If a of the k draft
// tokens are accepted, one more token (the correction, or the bonus when
// a == k) is committed, so n' = n+a+1, and the target keeps positions
// [0, n'-1): what it wrote for t[n-1], d1..da, nothing of the rejected
// d(a+1).. — an O(1) rollback, done by verify.Verify under the device
// lock. The draft cache never holds a position whose token is not
// committed: drafting fed t[n-1], d1..d(k-1) (positions up to n+k-2), so
// when the sequence comes back the draft stage cuts it to min(its length,
// n'-1) positions, the accepted prefix (draft.Drafter.Accept; skipped when
// a pre-draft guessed the step, whose cache then holds exactly what
// drafting would feed), and the next draft first feeds the committed
// tokens it lacks. kv_test.go checks the rule for every k and a.
package stages

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/graph"
	"github.com/specd-dev/specd/kvsync"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/verify"
)

// Request is one generation request.
type Request struct {
	ID        string
	Prompt    string        // tokenized by Config.Tokenizer unless PromptIDs is set
	PromptIDs []int32       // prompt token ids
	MaxTokens int           // tokens to generate (> 0)
	K         int           // if > 0, at most K draft tokens per step (the pipeline's policy caps it too)
	Params    sample.Params // Temp 0 is greedy
	// Ctx, if set, cancels this request alone: it ends with its error
	// (context.Cause of it). Submit sets it.
	Ctx context.Context

	// Stop ends the generation at the first of these strings in the text
	// (not emitted; the chunk text is cut before it). Text that may be the
	// start of a stop string is held back until it is not.
	Stop []string
	// Priority orders the queue of Submit: higher first, then first come.
	Priority int

	// Speculation overrides for this request alone (nil: the pipeline's).
	PMin *float32 // confidence stop of a model draft
	// Adaptive, if set, replaces the pipeline's draft-length policy (auto
	// included) for this request: draft length from recent acceptance
	// (true) or fixed at K (false).
	Adaptive *bool
	// Auto, if set, turns the cost-aware draft length (Policy.Auto: each
	// step's k in 0..K) on or off for this request; on needs a pipeline
	// whose policy is auto (Pipeline.Auto), and not Adaptive too. Off
	// leaves the pipeline's fixed or adaptive policy.
	Auto  *bool
	Draft DraftMode // which drafter proposes
}

// DraftMode names the drafter a request uses.
type DraftMode string

// Draft modes. The zero value is the pipeline's drafter.
const (
	DraftDefault DraftMode = ""
	DraftModel   DraftMode = "model" // the pipeline's Drafter (it must have one)
	DraftNGram   DraftMode = "ngram" // prompt lookup (Config.NGram)
	DraftNone    DraftMode = "none"  // plain decoding
)

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
	// Drafted is the block's draft tokens; Accepted how many of the
	// emitted Tokens are accepted draft tokens (the target accepted them;
	// a stop or the length may have cut the block before the rest).
	Drafted, Accepted int
	// DraftLen is how many bytes at the start of Text came from accepted
	// draft tokens (the rest from the target's own token).
	DraftLen int
	// PromptTokens is the prompt's length, on the final chunk.
	PromptTokens int

	key    uint64  // unique per request within a pipeline
	stream *Stream // the request's own stream (Submit); nil: Run's out
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
	Target  backend.Backend // the target model on its own thread pool
	Drafter draft.Drafter   // nil: plain decoding (k = 0); a model draft's cache needs Slots slots of MaxPos
	Policy  draft.Policy
	Slots   int // sequences decoded at once (KV cache slots of both models)
	MaxPos  int // positions per slot

	Tokenizer      Tokenizer                                   // needed for text prompts
	NewDetokenizer func() Detokenizer                          // nil: chunks carry no text
	NewSampler     func(sample.Params, uint64) backend.Sampler // for Temp > 0; the second argument is a stream id
	Stop           func(tok int32) bool                        // end-of-generation tokens (not emitted); nil: none

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

	// NGram is the drafter of requests that ask for prompt lookup
	// (DraftNGram); nil: such requests fail.
	NGram draft.Drafter

	// Costs, with Policy.Auto, is the table of the target's measured pass
	// costs that the auto policy reads and verification refines; share it
	// between pipelines on the same backend (and threads) to keep what it
	// learnt. nil: the pipeline makes its own, for passes of up to
	// Slots·(K+1) tokens. If it is not calibrated, Run first times target
	// passes of 1 to that many tokens on slot 0 (a hundred passes or so;
	// Metrics' Wall excludes them).
	Costs *draft.Costs
	// Clock, if set, is what the auto policy's measurements read instead
	// of the wall clock (tests: synthetic cost models).
	Clock *Clock
	// SharedCores, with Policy.Auto, says that the draft's threads run on
	// cores the target's threads use too (they outnumber the cores
	// together): draft work that overlaps a verification pass then slows
	// the pass down instead of hiding behind it, and the policy counts the
	// draft's time in full (no measured overlap hides it).
	SharedCores bool

	// Queue is the most requests Submit holds waiting for a slot (beyond
	// it, TrySubmit says ErrBusy); 0 means 4·Slots.
	Queue int
	// StreamBuffer is the most chunks a Stream holds unread before its
	// request ends with ErrSlowConsumer; 0 means 256.
	StreamBuffer int
}

// Errors.
var (
	ErrConfig  = errors.New("stages: invalid configuration")
	ErrRequest = errors.New("stages: invalid request")
	ErrRan     = errors.New("stages: pipeline already run")

	// ErrBusy: the request queue is full (TrySubmit).
	ErrBusy = errors.New("stages: busy: the request queue is full")
	// ErrClosed: the pipeline no longer takes requests (Close, or it has
	// stopped).
	ErrClosed = errors.New("stages: the pipeline is not taking requests")
	// ErrSlowConsumer: a Stream's reader fell more than
	// Config.StreamBuffer chunks behind; its request was ended.
	ErrSlowConsumer = errors.New("stages: slow consumer: the stream's reader fell too far behind")
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

	queue   queue       // requests given to Submit, waiting for a slot
	streams streams     // Streams whose final chunk has not been delivered
	failed  atomic.Bool // Run ended with an error: no slot is held

	// The auto policy (Policy.Auto; auto.go): costs is shared by verify
	// (writes) and draft (reads); auto belongs to the draft stage, passMean
	// to verify, which publishes it in passSeqs (float64 bits) and its
	// busy time in verifyWall (ns).
	epoch      time.Time
	costs      *draft.Costs
	auto       *autoState
	passMean   mean
	passSeqs   atomic.Uint64
	verifyWall atomic.Int64
	// prefill passes run: a step during which one ran does not teach
	// the auto policy its k's cost
	prefills atomic.Int64
	// drafting is the sequences in flight whose block has draft tokens
	// (the draft stage counts them, verify reads it): while it is 0 there
	// is no draft work for verification to overlap, and verify batches
	// every sequence in flight into one pass, as plain decoding does.
	drafting atomic.Int64
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
	if cfg.Queue <= 0 {
		cfg.Queue = 4 * cfg.Slots
	}
	if cfg.StreamBuffer <= 0 {
		cfg.StreamBuffer = 256
	}
	p := &Pipeline{cfg: cfg, slots: kvsync.NewSlots(cfg.Slots), metrics: newMetrics(cfg.Policy.K), epoch: time.Now()}
	if cfg.Policy.Auto && cfg.Policy.K > 0 {
		p.costs = cfg.Costs
		if p.costs == nil {
			p.costs = draft.NewCosts(min(cfg.Target.MaxBatch(), cfg.Slots*(cfg.Policy.K+1)), cfg.Slots)
		}
		p.auto = newAutoState(cfg.Policy.K)
		p.costs.LoadAcceptance(p.auto.prior) // what pipelines before this one on the table saw
	}
	p.queue.init(cfg.Queue)
	return p, nil
}

// Metrics returns the pipeline's global metrics (safe while running).
func (p *Pipeline) Metrics() *Metrics { return p.metrics }

// Active is the number of requests holding a sequence slot: admitted
// (sent on by intake) and not yet finished (retired by the draft stage),
// from the graph's counters.
func (p *Pipeline) Active() int {
	g := p.graph.Load()
	if g == nil || p.failed.Load() {
		return 0
	}
	// graph counts intake's send before the sequence is queued, so one
	// that is decoding (or retired) has always been counted.
	return max(0, int(g.Stage("intake").Stats().Out-g.Stage("draft").Stats().Retired))
}

// Queued is the number of requests waiting for a slot.
func (p *Pipeline) Queued() int { return p.queue.len() }

// QueueLimit is the most requests that wait for a slot (Config.Queue).
func (p *Pipeline) QueueLimit() int { return p.cfg.Queue }

// Slots is the number of sequence slots.
func (p *Pipeline) Slots() int { return p.cfg.Slots }

// MaxPos is the number of positions of a slot (prompt, generated tokens
// and a draft block).
func (p *Pipeline) MaxPos() int { return p.cfg.MaxPos }

// K is the pipeline's largest draft length (0: plain decoding).
func (p *Pipeline) K() int { return p.cfg.Policy.K }

// Auto reports whether the pipeline chooses draft lengths by cost
// (Policy.Auto with a drafter), so that requests may ask for it.
func (p *Pipeline) Auto() bool { return p.auto != nil }

// HasDrafter reports whether requests may ask for DraftModel.
func (p *Pipeline) HasDrafter() bool { return p.cfg.Drafter != nil }

// Busy returns the time the draft, verify and prefill stages have
// computed so far, and the time draft and verify computed at once (live,
// while the pipeline runs).
func (p *Pipeline) Busy() (draft, verify, prefill, overlap time.Duration) {
	g := p.graph.Load()
	if g == nil {
		return 0, 0, 0, 0
	}
	busy := func(name string) time.Duration { return g.Stage(name).Stats().Busy }
	return busy("draft"), busy("verify"), busy("prefill"), p.overlap.both()
}

// Graph returns the running graph (for its per-stage counters), or nil
// before Run.
func (p *Pipeline) Graph() *graph.Graph { return p.graph.Load() }

// seq is one sequence in flight. It is owned by one stage at a time (it
// travels through the pipes), so it needs no lock.
type seq struct {
	req    Request
	ctx    context.Context
	stream *Stream     // nil for requests that came through Run's channel
	dec    Detokenizer // nil: chunks carry no text
	held   string      // text held back while it may begin a stop string
	// stopString: a stop string ended the request (its text is cut).
	stopString bool
	slot       int
	tokens     []int32 // committed: prompt then generated
	nPrompt    int
	gen        int // generated tokens published

	policy  draft.Acceptance
	auto    draft.Positions // acceptance per position, for Policy.Auto
	step    stepChoice      // the draft length chosen for the block in flight
	pol     draft.Policy    // the pipeline's, with the request's overrides
	drafter draft.Drafter   // nil: plain decoding
	dreq    draft.Request
	ext     draft.Request // extends a partial pre-draft (Config.PreDraft)
	block   verify.Block
	key     uint64
	// the auto policy's prediction for the step in flight
	autoStep stepTiming
	// drafting: the block in flight has draft tokens (counted in the
	// pipeline's drafting)
	drafting bool

	done   bool
	reason string
	err    error
	chunks int

	stats     RequestStats
	start     time.Time
	lastToken time.Time
}

// Run serves requests from in until it is closed (and every admitted
// request has finished) or ctx ends, publishing on out the chunks of the
// requests that came through in (requests given to Submit get their own
// Stream). It returns the first stage error (a request's own errors end
// only that request). out is not closed. A pipeline runs once: Run or
// Serve.
func (p *Pipeline) Run(ctx context.Context, in <-chan Request, out chan<- Chunk) error {
	return p.run(ctx, in, out)
}

// Serve runs the pipeline for requests given to Submit and TrySubmit until
// Close has been called and every request taken has finished (it then
// returns nil), or until ctx ends.
func (p *Pipeline) Serve(ctx context.Context) error {
	return p.run(ctx, nil, nil)
}

func (p *Pipeline) run(ctx context.Context, in <-chan Request, out chan<- Chunk) error {
	if !p.ran.CompareAndSwap(false, true) {
		return ErrRan
	}
	defer p.queue.shut(ErrClosed)
	cfg := p.cfg
	if p.costs != nil && !p.costs.Calibrated() {
		if err := p.calibrate(); err != nil {
			p.queue.shut(err)
			p.streams.endAll(err)
			return err
		}
	}
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

	graph.Source(g, "intake", admitted, func(ctx context.Context, emit func(*seq) error) error {
		return p.intake(ctx, in, emit)
	})
	graph.Map(g, "tokenize", admitted, tokenized, func(ctx context.Context, s *seq) (*seq, error) {
		p.serialize(func() { p.tokenize(s) })
		return s, nil
	})
	graph.Map(g, "prefill", tokenized, fresh, func(ctx context.Context, s *seq) (*seq, error) {
		p.serialize(func() { p.prefill(s) })
		return s, nil
	})
	drafts := graph.Loop(g, "draft", fresh, loop, blocks, p.draftStage(fresh, loop))
	g.Go("verify", func(ctx context.Context, st *graph.Stage) error {
		return p.verifyStage(ctx, st, blocks, verified, drafts)
	}, verified).From(blocks)
	g.Go("accept", func(ctx context.Context, st *graph.Stage) error {
		return p.acceptStage(ctx, st, verified, loop, chunks)
	}, loop, chunks).From(verified)
	graph.Sink(g, "publish", chunks, func(ctx context.Context, c Chunk) error {
		return p.publish(ctx, c, out)
	})
	start := time.Now()
	err := g.Run(ctx)
	p.metrics.setWall(time.Since(start), p.overlap.both())
	busy := func(name string) time.Duration { return g.Stage(name).Stats().Busy }
	p.metrics.setBusy(busy("draft"), busy("verify"), busy("prefill"))
	if err != nil {
		// Requests still queued or decoding never get a final chunk from
		// the stages: end their streams here. Every stage has returned,
		// so none of them holds a slot any more.
		p.queue.shut(err)
		p.streams.endAll(err)
		p.failed.Store(true)
	}
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

func (p *Pipeline) newSeq(r Request, st *Stream, slot int, key uint64, queued time.Time) *seq {
	s := &seq{req: r, stream: st, slot: slot, key: key, start: queued}
	s.ctx = r.Ctx
	if s.ctx == nil {
		s.ctx = context.Background()
	}
	s.stats.AcceptedAt = make([]int, p.cfg.Policy.K)
	s.stats.KChosen = make([]int, p.cfg.Policy.K+1)
	s.stats.Queue = time.Since(queued)
	if p.cfg.NewDetokenizer != nil {
		s.dec = p.cfg.NewDetokenizer()
	}
	return s
}
