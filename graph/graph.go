// Package graph is a small stage runtime: typed stages connected by bounded
// channels (Pipes), started and joined together by Run.
//
// Design. A Graph is built first and run once. Every Pipe has exactly one
// writer stage, which the graph closes after that stage returns, so readers
// see end-of-stream without any stage closing channels by hand. Pipes are
// made before the stages that use them, so graphs may contain cycles (the
// speculative loop draft → verify → accept → draft); a cycle must be ended by
// one of its stages returning, which closes its outputs in turn.
//
// Run starts one goroutine per stage and waits for all of them. The first
// stage error cancels the context of the others and is what Run returns;
// cancelling the parent context stops every stage blocked in Send or Recv.
//
// Stage authors write synchronous functions: Map and FlatMap adapt a
// Process(ctx, in) function to channels, Source produces items, Sink
// consumes them, Loop is the entry of a cycle (it merges new items with
// those coming back and keeps the count of items inside the cycle), and
// Go runs an arbitrary stage body. Counters (items in and out, items in a
// cycle, busy time, calls) and queue depths are atomics, readable with
// Stats while the graph runs; they are kept by the pipes and adapters
// alone: a send counts on the pipe's writer stage, a receive on its reader
// stage (Map, FlatMap, Sink and Loop declare their input; a Go stage
// declares its inputs with From), so a stage body never counts by hand.
package graph

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// Errors returned by Graph methods.
var (
	ErrRunning   = errors.New("graph: already run")
	ErrNoStages  = errors.New("graph: no stages")
	ErrNoWriter  = errors.New("graph: pipe has no writer stage")
	ErrTwoWriter = errors.New("graph: pipe has more than one writer stage")
	ErrTwoReader = errors.New("graph: pipe has more than one reader stage")
	ErrLoop      = errors.New("graph: a cycle's return pipe closed with items inside")
)

// Graph is a set of stages and the pipes between them.
type Graph struct {
	mu     sync.Mutex
	stages []*Stage
	pipes  []pipe
	ran    bool
	errs   []error // construction errors, reported by Run
}

// New returns an empty graph.
func New() *Graph { return &Graph{} }

// pipe is the untyped view of a Pipe the graph needs.
type pipe interface {
	pipeName() string
	close()
	stats() PipeStats
	writer() **Stage
	reader() **Stage
}

// Port is a pipe as a stage's input or output (any *Pipe).
type Port interface{ pipeName() string }

// Stage is one running stage: a name, a body and its counters. Stage
// bodies written with Go receive it to record busy time.
type Stage struct {
	g       *Graph
	name    string
	body    func(ctx context.Context) error
	outputs []pipe

	in, out, calls atomic.Int64
	busy           atomic.Int64  // nanoseconds
	live, retired  atomic.Int64  // Loop: items inside its cycle, items it retired
	left           chan struct{} // Loop: capacity 1, signalled when live drops
}

// Name returns the stage's name.
func (s *Stage) Name() string { return s.name }

// From declares the stage's inputs: their receives count as its In. Each
// pipe has at most one reader stage. It returns s.
func (s *Stage) From(inputs ...Port) *Stage {
	s.g.mu.Lock()
	defer s.g.mu.Unlock()
	for _, i := range inputs {
		p, ok := i.(pipe)
		if !ok {
			s.g.errs = append(s.g.errs, fmt.Errorf("graph: stage %s: input %s is not a pipe", s.name, i.pipeName()))
			continue
		}
		r := p.reader()
		if *r != nil && *r != s {
			s.g.errs = append(s.g.errs, fmt.Errorf("%w: %s (stages %s and %s)", ErrTwoReader, p.pipeName(), (*r).name, s.name))
			continue
		}
		*r = s
	}
	return s
}

// Live is the number of items inside the cycle that the Loop stage s
// enters: received from its input and not yet retired (0 for other
// stages). Safe while running; it costs one atomic load.
func (s *Stage) Live() int { return int(s.live.Load()) }

// Left is signalled (capacity 1: wake-ups merge, none is lost) each time
// an item leaves the cycle of the Loop stage s, so that a stage waiting
// for more of the cycle's items re-reads Live. nil for other stages.
func (s *Stage) Left() <-chan struct{} { return s.left }

// Wake signals Left without an item leaving (wake-ups merge as
// retirements' do): for a stage that waits on Left for a condition
// besides Live, which the Loop stage's body calls when it changes that
// condition. A no-op on other stages.
func (s *Stage) Wake() {
	if s.left == nil {
		return
	}
	select {
	case s.left <- struct{}{}:
	default:
	}
}

// Busy runs f and adds its duration to the stage's busy time; it counts one
// call. Stages call it around their work, not around waits.
func (s *Stage) Busy(f func() error) error {
	t := time.Now()
	err := f()
	s.AddBusy(time.Since(t))
	return err
}

// AddBusy adds d to the stage's busy time and counts one call.
func (s *Stage) AddBusy(d time.Duration) {
	s.busy.Add(int64(d))
	s.calls.Add(1)
}

// Pipe is a bounded channel between stages, carrying values of type T.
// Send blocks while it is full (back-pressure).
type Pipe[T any] struct {
	name      string
	ch        chan T
	w, r      *Stage // writer and reader stages (r may be nil: Go without From)
	sent, got atomic.Int64
}

// NewPipe makes a pipe of the given capacity (0 = unbuffered) in g.
func NewPipe[T any](g *Graph, name string, capacity int) *Pipe[T] {
	if capacity < 0 {
		capacity = 0
	}
	p := &Pipe[T]{name: name, ch: make(chan T, capacity)}
	g.mu.Lock()
	g.pipes = append(g.pipes, p)
	g.mu.Unlock()
	return p
}

func (p *Pipe[T]) pipeName() string { return p.name }
func (p *Pipe[T]) close()           { close(p.ch) }
func (p *Pipe[T]) writer() **Stage  { return &p.w }
func (p *Pipe[T]) reader() **Stage  { return &p.r }
func (p *Pipe[T]) stats() PipeStats {
	return PipeStats{Name: p.name, Len: len(p.ch), Cap: cap(p.ch), Sent: p.sent.Load(), Received: p.got.Load()}
}

// Name returns the pipe's name.
func (p *Pipe[T]) Name() string { return p.name }

// Len is the number of items queued in the pipe.
func (p *Pipe[T]) Len() int { return len(p.ch) }

// Send queues v, blocking while the pipe is full; it returns ctx.Err() if
// ctx ends first. Only the pipe's writer stage may send. The item counts
// in the pipe's Sent once queued, and as the writer stage's Out from
// before (a send that fails takes it back), so a reader that has received
// an item never sees its writer's Out without it.
func (p *Pipe[T]) Send(ctx context.Context, v T) error {
	if p.w != nil {
		p.w.out.Add(1)
	}
	select {
	case p.ch <- v:
		p.sent.Add(1)
		return nil
	case <-ctx.Done():
		if p.w != nil {
			p.w.out.Add(-1)
		}
		return ctx.Err()
	}
}

// took counts one received item, on the pipe and as its reader's In.
func (p *Pipe[T]) took() {
	p.got.Add(1)
	if p.r != nil {
		p.r.in.Add(1)
	}
}

// Recv waits for the next item. ok is false once the pipe is closed and
// drained; err is ctx.Err() if ctx ends first.
func (p *Pipe[T]) Recv(ctx context.Context) (v T, ok bool, err error) {
	select {
	case v, ok = <-p.ch:
		if ok {
			p.took()
		}
		return v, ok, nil
	case <-ctx.Done():
		return v, false, ctx.Err()
	}
}

// RecvOr waits for the next item or for wake, whichever comes first
// (woke: wake fired and no item was taken). ok is false once the pipe is
// closed and drained; err is ctx.Err() if ctx ends first.
func (p *Pipe[T]) RecvOr(ctx context.Context, wake <-chan struct{}) (v T, ok, woke bool, err error) {
	select {
	case v, ok = <-p.ch:
		if ok {
			p.took()
		}
		return v, ok, false, nil
	case <-wake:
		return v, false, true, nil
	case <-ctx.Done():
		return v, false, false, ctx.Err()
	}
}

// TryRecv returns the next item if one is queued, without waiting.
// closed is true once the pipe is closed and drained.
func (p *Pipe[T]) TryRecv() (v T, ok, closed bool) {
	select {
	case v, ok = <-p.ch:
		if ok {
			p.took()
		}
		return v, ok, !ok
	default:
		return v, false, false
	}
}

// Go adds a stage whose body is fn; the graph closes outputs after fn
// returns. Each pipe must be the output of exactly one stage.
func (g *Graph) Go(name string, fn func(ctx context.Context, s *Stage) error, outputs ...Port) *Stage {
	s := &Stage{g: g, name: name}
	s.body = func(ctx context.Context) error { return fn(ctx, s) }
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, o := range outputs {
		p, ok := o.(pipe)
		if !ok {
			g.errs = append(g.errs, fmt.Errorf("graph: stage %s: output %s is not a pipe", name, o.pipeName()))
			continue
		}
		w := p.writer()
		if *w != nil {
			g.errs = append(g.errs, fmt.Errorf("%w: %s (stages %s and %s)", ErrTwoWriter, p.pipeName(), (*w).name, name))
			continue
		}
		*w = s
		s.outputs = append(s.outputs, p)
	}
	g.stages = append(g.stages, s)
	return s
}

// Source adds a stage that produces items with fn, which calls emit for
// each one; out is closed when fn returns.
func Source[O any](g *Graph, name string, out *Pipe[O], fn func(ctx context.Context, emit func(O) error) error) *Stage {
	return g.Go(name, func(ctx context.Context, s *Stage) error {
		return fn(ctx, func(v O) error { return out.Send(ctx, v) })
	}, out)
}

// Map adds a stage that applies fn to every item of in and sends the
// result to out. Busy time is the time spent inside fn.
func Map[I, O any](g *Graph, name string, in *Pipe[I], out *Pipe[O], fn func(ctx context.Context, v I) (O, error)) *Stage {
	return g.Go(name, func(ctx context.Context, s *Stage) error {
		for {
			v, ok, err := in.Recv(ctx)
			if err != nil || !ok {
				return err
			}
			var r O
			if err := s.Busy(func() (err error) { r, err = fn(ctx, v); return }); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if err := out.Send(ctx, r); err != nil {
				return err
			}
		}
	}, out).From(in)
}

// FlatMap adds a stage that calls fn for every item of in; fn may emit any
// number of results. Time spent blocked in emit is not counted as busy.
func FlatMap[I, O any](g *Graph, name string, in *Pipe[I], out *Pipe[O], fn func(ctx context.Context, v I, emit func(O) error) error) *Stage {
	return g.Go(name, func(ctx context.Context, s *Stage) error {
		var blocked time.Duration
		emit := func(r O) error {
			t := time.Now()
			err := out.Send(ctx, r)
			blocked += time.Since(t)
			return err
		}
		for {
			v, ok, err := in.Recv(ctx)
			if err != nil || !ok {
				return err
			}
			blocked = 0
			t := time.Now()
			err = fn(ctx, v, emit)
			s.AddBusy(time.Since(t) - blocked)
			if err != nil {
				if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
					return err
				}
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}, out).From(in)
}

// Sink adds a stage that calls fn for every item of in.
func Sink[I any](g *Graph, name string, in *Pipe[I], fn func(ctx context.Context, v I) error) *Stage {
	return g.Go(name, func(ctx context.Context, s *Stage) error {
		for {
			v, ok, err := in.Recv(ctx)
			if err != nil || !ok {
				return err
			}
			if err := s.Busy(func() error { return fn(ctx, v) }); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}).From(in)
}

// Loop adds the stage that enters a cycle (out → … → back → this stage):
// it takes new items from in and items coming back from back, whichever
// is ready, and calls fn for each (fresh: it came from in).
// fn passes an item on into the cycle with emit or, by returning without
// emitting it, retires it: the item leaves the cycle. Live counts the
// items inside: received from in and not retired; Retired (in Stats)
// those that left; Left signals each retirement. The stage returns once
// in is closed and the cycle is empty, which closes out and, stage by
// stage, back; back closing while items are inside is ErrLoop. fn records its own busy time on s (Busy,
// AddBusy), so that what it waits for in emit or on locks is left out.
func Loop[T any](g *Graph, name string, in, back, out *Pipe[T], fn func(ctx context.Context, s *Stage, v T, fresh bool, emit func(T) error) error) *Stage {
	st := g.Go(name, func(ctx context.Context, s *Stage) error {
		emitted := 0
		emit := func(v T) error {
			if err := out.Send(ctx, v); err != nil {
				return err
			}
			emitted++
			return nil
		}
		inC := in.ch
		for inC != nil || s.live.Load() > 0 {
			var v T
			fresh := false
			select {
			case x, ok := <-inC:
				if !ok {
					inC = nil
					continue
				}
				in.took()
				s.live.Add(1)
				v, fresh = x, true
			case x, ok := <-back.ch:
				if !ok {
					return fmt.Errorf("%w: %s, %d items", ErrLoop, back.name, s.live.Load())
				}
				back.took()
				v = x
			case <-ctx.Done():
				return ctx.Err()
			}
			emitted = 0
			err := fn(ctx, s, v, fresh, emit)
			// Each item is one inside the cycle: emitting it keeps it
			// there (emitting more adds some), not emitting retires it.
			if d := emitted - 1; d != 0 {
				s.live.Add(int64(d))
				if d < 0 {
					s.retired.Add(int64(-d))
					s.Wake()
				}
			}
			if err != nil {
				if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
					return err
				}
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	}, out).From(in, back)
	st.left = make(chan struct{}, 1)
	return st
}

// Run starts every stage and waits for all of them to return. The first
// error (a stage's, or ctx's when it ends first) cancels the others and is
// returned. A graph runs once.
func (g *Graph) Run(ctx context.Context) error {
	g.mu.Lock()
	if g.ran {
		g.mu.Unlock()
		return ErrRunning
	}
	g.ran = true
	if len(g.errs) > 0 {
		g.mu.Unlock()
		return errors.Join(g.errs...)
	}
	if len(g.stages) == 0 {
		g.mu.Unlock()
		return ErrNoStages
	}
	for _, p := range g.pipes {
		if *p.writer() == nil {
			g.mu.Unlock()
			return fmt.Errorf("%w: %s", ErrNoWriter, p.pipeName())
		}
	}
	stages := g.stages
	g.mu.Unlock()

	// errgroup: the first error cancels the others (as the context's
	// cause) and is what Wait returns.
	eg, gctx := errgroup.WithContext(ctx)
	for _, s := range stages {
		eg.Go(func() error { return s.run(gctx) })
	}
	if err := eg.Wait(); err != nil {
		// A stage that saw the cancellation reports context.Canceled;
		// the error that caused it is the one to return.
		if cause := context.Cause(gctx); errors.Is(err, context.Canceled) && cause != nil && !errors.Is(cause, context.Canceled) {
			return cause
		}
		return err
	}
	return ctx.Err()
}

// run executes the stage body, converting a panic into an error, and
// closes its outputs.
func (s *Stage) run(ctx context.Context) (err error) {
	defer func() {
		for _, p := range s.outputs {
			p.close()
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("graph: stage %s panicked: %v", s.name, r)
		}
	}()
	return s.body(ctx)
}

// StageStats is a snapshot of one stage's counters.
type StageStats struct {
	Name    string
	In, Out int64
	Live    int64 // Loop: items inside its cycle
	Retired int64 // Loop: items that left the cycle
	Calls   int64
	Busy    time.Duration
}

// PipeStats is a snapshot of one pipe.
type PipeStats struct {
	Name           string
	Len, Cap       int
	Sent, Received int64
}

// Stats returns a snapshot of every stage's counters and every pipe's
// queue depth, in the order they were added. Safe while running.
func (g *Graph) Stats() ([]StageStats, []PipeStats) {
	g.mu.Lock()
	stages, pipes := g.stages, g.pipes
	g.mu.Unlock()
	ss := make([]StageStats, len(stages))
	for i, s := range stages {
		ss[i] = s.Stats()
	}
	ps := make([]PipeStats, len(pipes))
	for i, p := range pipes {
		ps[i] = p.stats()
	}
	return ss, ps
}

// Stage returns the stage named name, or nil.
func (g *Graph) Stage(name string) *Stage {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, s := range g.stages {
		if s.name == name {
			return s
		}
	}
	return nil
}

// Stats returns a snapshot of s's counters.
func (s *Stage) Stats() StageStats {
	return StageStats{Name: s.name, In: s.in.Load(), Out: s.out.Load(), Live: s.live.Load(), Retired: s.retired.Load(), Calls: s.calls.Load(), Busy: time.Duration(s.busy.Load())}
}
