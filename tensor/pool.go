package tensor

// Design of the Pool. A matrix product of a decode step takes 10–50 µs, so
// handing work to a helper must cost far less than that: a helper parked
// on a channel needs a futex wake and a trip through the scheduler (several
// µs, and often more than the whole product), so it would join too late to
// help. Helpers therefore spin on an atomic job counter for a while after
// each job (spinTime, with PAUSE and an occasional runtime.Gosched so other
// goroutines on their P still run), which keeps them hot across the
// consecutive products of a forward pass; only after spinTime without work
// do they park, and the caller wakes parked helpers on the next job.
//
// A job is open while job.state has no jobClosed bit; its low bits count
// the helpers inside it. A helper joins by incrementing the count while the
// job is open. The caller computes a share itself (work is claimed in
// chunks by atomic add, so whoever comes gets some), then closes the job
// and waits only for the helpers that joined: a helper the OS runs late
// finds the job closed and costs nothing. The caller spins on that wait
// too, and sleeps on done only when a helper stays inside beyond spinTime.

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Pool is a set of worker goroutines that share matrix products (and other
// Tasks). A Pool is used by one goroutine at a time; the calling goroutine
// works as thread 0. Its scratch buffers grow to the largest call seen and
// are then reused, so MatMul does not allocate after warm-up.
type Pool struct {
	threads int
	helpers []helperState
	gen     atomic.Uint64 // number of jobs opened to helpers so far
	quit    atomic.Bool
	done    chan struct{} // the last helper out of a job the caller sleeps on signals here
	exited  sync.WaitGroup
	closed  bool

	job     job
	scratch []byte // activation rows converted for the current job
}

// helperState is one helper's parking place, padded to its own cache line.
type helperState struct {
	parked atomic.Int32 // 1 while the helper sleeps (or is about to) on wake
	wake   chan struct{}
	_      [64 - 8 - 4]byte
}

// Task is work that the threads of a pool share (see Pool.Parallel).
type Task interface {
	// Run computes a share of the work as thread thread. It claims work
	// items (with an atomic counter, say) until none are left, so the task
	// completes whichever threads take part. Run is not called concurrently
	// with itself for the same thread number.
	Run(thread int)
}

// job is the description of the running job, shared by all threads.
type job struct {
	// MatMul's operands (task == nil).
	out     []float32
	w       []byte
	wRow    int // bytes per weight row
	rows    int
	cols    int
	act     []byte
	aRow    int // bytes per activation row
	n       int
	dot     VecDot
	gemv    gemv
	chunk   int          // rows per work item
	next    atomic.Int64 // next unclaimed work item
	nChunks int

	task Task   // Parallel's task, or nil for a MatMul
	gen  uint64 // the job's number (Pool.gen when it was opened)

	// want is the number of helpers that may join (helper i, thread i,
	// joins if i ≤ want).
	want atomic.Int64
	// state is jobClosed while no job is open (helpers must not touch the
	// fields above), plus callerAsleep once the caller sleeps on done, plus
	// the number of helpers working on the job.
	state atomic.Int64
}

const (
	jobClosed    = 1 << 62 // job.state: the job takes no more helpers
	callerAsleep = 1 << 61 // job.state: the caller waits on done
)

// spinTime is how long a helper polls for the next job, and the caller for
// helpers to finish, before sleeping. It spans the gaps between the
// products of a forward pass (norms, attention: microseconds) and a
// sampling step between decode passes, while bounding the CPU an idle pool
// burns. Longer spins gained nothing on an idle machine and cost more when
// two pools share two busy cores (200 µs: 10% slower decode there).
const spinTime = 50 * time.Microsecond

// NewPool starts a pool of threads (≥ 1) computing threads; threads-1 helper
// goroutines are started, which run until Close.
func NewPool(threads int) *Pool {
	threads = max(threads, 1)
	p := &Pool{threads: threads, helpers: make([]helperState, threads-1), done: make(chan struct{}, 1)}
	p.job.state.Store(jobClosed)
	for i := range p.helpers {
		p.helpers[i].wake = make(chan struct{}, 1)
		p.exited.Add(1)
		go p.helper(i + 1)
	}
	return p
}

// Threads returns the number of threads the pool computes with.
func (p *Pool) Threads() int { return p.threads }

// Close stops the helper goroutines and waits for them to exit. The pool
// must not be used afterwards.
func (p *Pool) Close() {
	if p.closed {
		return
	}
	p.closed = true
	p.quit.Store(true)
	p.wakeParked(len(p.helpers))
	p.exited.Wait()
}

// wakeParked wakes those of the first k helpers that sleep. A helper sets
// parked before it checks gen and quit, and the caller changes gen or quit
// before it checks parked, so a helper either sees the change or is woken.
func (p *Pool) wakeParked(k int) {
	for i := range p.helpers[:k] {
		h := &p.helpers[i]
		if h.parked.Load() != 0 && h.parked.CompareAndSwap(1, 0) {
			h.wake <- struct{}{} // capacity 1, and one token per park: never blocks
		}
	}
}

// helper runs as thread id (≥ 1): it waits for jobs and joins each one that
// is still open and wants it.
func (p *Pool) helper(id int) {
	defer p.exited.Done()
	h := &p.helpers[id-1]
	j := &p.job
	var seen uint64
	for p.await(h, seen) {
		seen = p.gen.Load()
		for {
			s := j.state.Load()
			if s&jobClosed != 0 || int64(id) > j.want.Load() {
				break
			}
			if j.state.CompareAndSwap(s, s+1) {
				seen = j.gen // stable while joined
				if int64(id) > j.want.Load() {
					// A newer job opened between the checks above
					// and it does not want this helper.
				} else if j.task != nil {
					j.task.Run(id)
				} else {
					j.work()
				}
				if j.state.Add(-1) == jobClosed|callerAsleep {
					p.done <- struct{}{}
				}
				break
			}
		}
	}
}

// spin polls done with PAUSE for up to spinTime and reports whether it
// became true. Every 64 polls it yields (runtime.Gosched), so that a
// goroutine waiting for this P (a helper of another pool, say) runs instead
// of waiting for preemption.
func spin(done func() bool) bool {
	var deadline time.Time
	for i := 1; ; i++ {
		if done() {
			return true
		}
		spinPause(4)
		if i%64 == 0 {
			now := time.Now()
			if deadline.IsZero() {
				deadline = now.Add(spinTime)
			} else if now.After(deadline) {
				return false
			}
			runtime.Gosched()
		}
	}
}

// await returns true when a job newer than seen has been opened, and false
// when the pool is closing. It spins for up to spinTime, then parks.
func (p *Pool) await(h *helperState, seen uint64) bool {
	for {
		if p.gen.Load() != seen {
			return true
		}
		if spin(func() bool { return p.gen.Load() != seen || p.quit.Load() }) {
			return p.gen.Load() != seen
		}
		h.parked.Store(1)
		if p.gen.Load() != seen || p.quit.Load() {
			if h.parked.CompareAndSwap(1, 0) {
				continue // not woken: nothing to consume
			}
		}
		<-h.wake
	}
}

// dispatch runs the prepared job (j.task or the MatMul operands) on the
// caller and up to helpers helpers, and returns when it is complete.
func (p *Pool) dispatch(helpers int) {
	j := &p.job
	if helpers <= 0 {
		p.runCaller()
		return
	}
	j.want.Store(int64(helpers))
	j.gen = p.gen.Load() + 1
	j.state.Store(0) // open: publishes the fields above to joining helpers
	p.gen.Store(j.gen)
	p.wakeParked(helpers)
	p.runCaller()
	prev := j.state.Or(jobClosed)
	if prev == 0 {
		return
	}
	// Helpers still inside: spin until they leave, then sleep.
	if j.state.Load() == jobClosed || spin(func() bool { return j.state.Load() == jobClosed }) {
		return
	}
	if j.state.Or(callerAsleep) != jobClosed {
		<-p.done // the last helper out signals
	}
}

func (p *Pool) runCaller() {
	if t := p.job.task; t != nil {
		t.Run(0)
	} else {
		p.job.work()
	}
}

// Parallel runs t on up to threads of the pool's threads (thread numbers
// 0 to threads-1; the caller is thread 0) and returns when every call of
// t.Run has returned. A helper that is late does not take part, so t must
// claim its work dynamically (see Task). Parallel does not allocate.
func (p *Pool) Parallel(t Task, threads int) {
	threads = min(max(threads, 1), p.threads)
	p.job.task = t
	p.dispatch(threads - 1)
	p.job.task = nil
}
