package stages

// Intake: the admission queue of Submit, each request's own Stream of
// chunks, and the intake and publish stages at the two ends of the
// pipeline.
//
// One request, one owner: a Stream receives exactly one final chunk on
// every path (done, stop, error, cancel while queued or decoding, slow
// consumer, pipeline shutdown), and the request's slot is freed when the
// sequence leaves the pipeline.

import (
	"container/heap"
	"context"
	"errors"
	"io"
	"iter"
	"sync"
	"time"
)

// Submit queues r and returns its stream. It waits while the queue is
// full (see TrySubmit for the variant that says ErrBusy at once). ctx is
// the request's context: ending it ends the request, waiting or decoding,
// with context.Cause(ctx) as its error.
func (p *Pipeline) Submit(ctx context.Context, r Request) (*Stream, error) {
	for {
		st, err := p.TrySubmit(ctx, r)
		if !errors.Is(err, ErrBusy) {
			return st, err
		}
		select {
		case <-p.queue.room:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// TrySubmit is Submit without waiting: a full queue is ErrBusy, a closed
// pipeline ErrClosed.
func (p *Pipeline) TrySubmit(ctx context.Context, r Request) (*Stream, error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	sctx, cancel := context.WithCancelCause(ctx)
	st := &Stream{id: r.ID, ctx: sctx, cancel: cancel, limit: p.cfg.StreamBuffer,
		sig: make(chan struct{}, 1), done: make(chan struct{})}
	r.Ctx = sctx
	pd := &pending{req: r, stream: st, at: time.Now()}
	p.streams.add(st)
	if err := p.queue.push(pd); err != nil {
		p.streams.remove(st)
		cancel(err)
		return nil, err
	}
	stop := context.AfterFunc(sctx, func() {
		if p.queue.remove(pd) {
			p.endQueued(pd, context.Cause(sctx))
		}
	})
	st.mu.Lock()
	st.unhook = stop
	st.mu.Unlock()
	return st, nil
}

// Close stops the pipeline taking requests: Submit then returns
// ErrClosed. Requests already queued or decoding run to their end, after
// which Serve returns.
func (p *Pipeline) Close() { p.queue.shut(nil) }

// CancelAll ends every request queued or decoding with cause (the last
// step of a drain that ran out of time).
func (p *Pipeline) CancelAll(cause error) {
	for _, st := range p.streams.list() {
		st.Cancel(cause)
	}
}

// endQueued ends a request that never got a slot.
func (p *Pipeline) endQueued(pd *pending, err error) {
	if err == nil {
		err = ErrClosed
	}
	st := RequestStats{Duration: time.Since(pd.at)}
	p.metrics.finish(true, &st)
	pd.stream.push(Chunk{ID: pd.req.ID, Final: true, Reason: "error", Err: err, Stats: &st})
	p.streams.remove(pd.stream)
}

// intake admits requests: it takes a free slot, then the first request of
// the queue (highest priority first) or of in, and emits its sequence.
// With in (Run) it returns when in is closed; without (Serve), when the
// queue is closed and empty.
func (p *Pipeline) intake(ctx context.Context, in <-chan Request, emit func(*seq) error) error {
	var key uint64
	serve := in == nil
	for {
		slot, err := p.slots.Acquire(ctx)
		if err != nil {
			return err
		}
		var s *seq
		for s == nil {
			pd, closed := p.queue.pop()
			if pd != nil {
				key++
				s = p.newSeq(pd.req, pd.stream, slot, key, pd.at)
				break
			}
			if closed && serve {
				p.slots.Release(slot)
				return nil
			}
			select {
			case r, ok := <-in:
				if !ok {
					p.slots.Release(slot)
					return nil
				}
				key++
				s = p.newSeq(r, nil, slot, key, time.Now())
			case <-p.queue.sig:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := emit(s); err != nil {
			return err
		}
	}
}

// publish hands c to its request's stream, or to out (Run's requests).
func (p *Pipeline) publish(ctx context.Context, c Chunk, out chan<- Chunk) error {
	if c.stream != nil {
		c.stream.push(c)
		if c.Final {
			p.streams.remove(c.stream)
		}
		return nil
	}
	select {
	case out <- c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stream is one request's chunks, in order, ending in exactly one final
// chunk. It buffers up to Config.StreamBuffer unread chunks; a reader that
// falls further behind ends its own request with ErrSlowConsumer (the
// chunks it missed are dropped, the numbering stays gapless), and never
// slows the pipeline. Methods are safe for concurrent use.
type Stream struct {
	id     string
	ctx    context.Context
	cancel context.CancelCauseFunc
	limit  int
	sig    chan struct{} // capacity 1: a chunk was pushed
	done   chan struct{} // closed with the final chunk

	mu     sync.Mutex
	q      []Chunk
	next   int  // Seq of the next chunk pushed
	over   bool // overflowed: non-final chunks are dropped
	final  bool // the final chunk is queued
	read   bool // the final chunk was returned by Next
	unhook func() bool
}

// ID is the request's id.
func (s *Stream) ID() string { return s.id }

// Cancel ends the request with cause (context.Canceled if nil), whether it
// is waiting or decoding; its slot is freed within one decoding step.
func (s *Stream) Cancel(cause error) {
	if cause == nil {
		cause = context.Canceled
	}
	s.cancel(cause)
}

// Done is closed once the final chunk is queued.
func (s *Stream) Done() <-chan struct{} { return s.done }

// Next returns the next chunk, waiting for it until ctx ends. After the
// final chunk it returns io.EOF.
func (s *Stream) Next(ctx context.Context) (Chunk, error) {
	for {
		s.mu.Lock()
		if len(s.q) > 0 {
			c := s.q[0]
			s.q[0] = Chunk{}
			s.q = s.q[1:]
			if c.Final {
				s.read = true
			}
			s.mu.Unlock()
			return c, nil
		}
		read := s.read
		s.mu.Unlock()
		if read {
			return Chunk{}, io.EOF
		}
		select {
		case <-s.sig:
		case <-ctx.Done():
			return Chunk{}, context.Cause(ctx)
		}
	}
}

// Chunks iterates over the stream's chunks up to and including the final
// one; it yields an error (and stops) if ctx ends first.
func (s *Stream) Chunks(ctx context.Context) iter.Seq2[Chunk, error] {
	return func(yield func(Chunk, error) bool) {
		for {
			c, err := s.Next(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(c, err) || err != nil {
				return
			}
		}
	}
}

// push queues c, numbering it. It never blocks.
func (s *Stream) push(c Chunk) {
	s.mu.Lock()
	if s.final || (s.over && !c.Final) {
		s.mu.Unlock()
		return
	}
	if !c.Final && len(s.q) >= s.limit {
		s.over = true
		s.mu.Unlock()
		s.cancel(ErrSlowConsumer)
		return
	}
	c.Seq, c.stream = s.next, nil
	s.next++
	s.q = append(s.q, c)
	unhook := s.unhook
	if c.Final {
		s.final = true
		close(s.done)
	}
	s.mu.Unlock()
	if c.Final {
		if unhook != nil {
			unhook()
		}
		s.cancel(errFinished) // releases the request's context
	}
	select {
	case s.sig <- struct{}{}:
	default:
	}
}

var errFinished = errors.New("stages: request finished")

// streams are the Streams whose final chunk is not yet queued.
type streams struct {
	mu sync.Mutex
	m  map[*Stream]struct{}
}

func (ss *streams) add(s *Stream) {
	ss.mu.Lock()
	if ss.m == nil {
		ss.m = map[*Stream]struct{}{}
	}
	ss.m[s] = struct{}{}
	ss.mu.Unlock()
}

func (ss *streams) remove(s *Stream) {
	ss.mu.Lock()
	delete(ss.m, s)
	ss.mu.Unlock()
}

func (ss *streams) list() []*Stream {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := make([]*Stream, 0, len(ss.m))
	for s := range ss.m {
		out = append(out, s)
	}
	return out
}

// endAll gives every open stream a final error chunk (the pipeline
// stopped).
func (ss *streams) endAll(err error) {
	for _, s := range ss.list() {
		s.push(Chunk{ID: s.id, Final: true, Reason: "error", Err: err, Stats: &RequestStats{}})
		ss.remove(s)
	}
}

// pending is a request waiting in the queue.
type pending struct {
	req    Request
	stream *Stream
	at     time.Time
	order  uint64
	index  int // in the heap; -1 once out of it
}

// queue is the bounded priority queue of Submit.
type queue struct {
	mu     sync.Mutex
	h      pendingHeap
	limit  int
	order  uint64
	closed bool
	sig    chan struct{} // capacity 1: a request arrived or the queue closed
	room   chan struct{} // capacity 1: a request left the queue
}

func (q *queue) init(limit int) {
	q.limit = limit
	q.sig = make(chan struct{}, 1)
	q.room = make(chan struct{}, 1)
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (q *queue) push(pd *pending) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.closed:
		return ErrClosed
	case len(q.h) >= q.limit:
		return ErrBusy
	}
	q.order++
	pd.order = q.order
	heap.Push(&q.h, pd)
	signal(q.sig)
	if len(q.h) < q.limit {
		signal(q.room) // pass the room on to another waiting Submit
	}
	return nil
}

// pop takes the first request, if any, and reports whether the queue is
// closed.
func (q *queue) pop() (*pending, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.h) == 0 {
		return nil, q.closed
	}
	pd := heap.Pop(&q.h).(*pending)
	signal(q.room)
	return pd, q.closed
}

// remove takes pd out of the queue if it is still there.
func (q *queue) remove(pd *pending) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if pd.index < 0 || pd.index >= len(q.h) || q.h[pd.index] != pd {
		return false
	}
	heap.Remove(&q.h, pd.index)
	signal(q.room)
	return true
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.h)
}

// shut closes the queue to new requests; with err (the pipeline stopped)
// it also ends every queued request with err.
func (q *queue) shut(err error) {
	q.mu.Lock()
	q.closed = true
	var left []*pending
	if err != nil {
		left = append(left, q.h...)
		q.h = q.h[:0]
		for _, pd := range left {
			pd.index = -1
		}
	}
	q.mu.Unlock()
	signal(q.sig)
	for _, pd := range left {
		pd.stream.push(Chunk{ID: pd.req.ID, Final: true, Reason: "error", Err: err, Stats: &RequestStats{Duration: time.Since(pd.at)}})
	}
}

// pendingHeap orders requests by priority, then arrival.
type pendingHeap []*pending

func (h pendingHeap) Len() int { return len(h) }
func (h pendingHeap) Less(i, j int) bool {
	if h[i].req.Priority != h[j].req.Priority {
		return h[i].req.Priority > h[j].req.Priority
	}
	return h[i].order < h[j].order
}
func (h pendingHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *pendingHeap) Push(x any) {
	pd := x.(*pending)
	pd.index = len(*h)
	*h = append(*h, pd)
}
func (h *pendingHeap) Pop() any {
	old := *h
	pd := old[len(old)-1]
	old[len(old)-1] = nil
	pd.index = -1
	*h = old[:len(old)-1]
	return pd
}
