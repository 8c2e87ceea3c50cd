package graph

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// runWithin runs g and fails the test if it does not return within d.
func runWithin(t *testing.T, ctx context.Context, g *Graph, d time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		t.Fatalf("graph did not finish within %v", d)
		return nil
	}
}

func TestLinearPipeline(t *testing.T) {
	g := New()
	nums := NewPipe[int](g, "nums", 2)
	sq := NewPipe[string](g, "squares", 2)
	Source(g, "gen", nums, func(ctx context.Context, emit func(int) error) error {
		for i := 1; i <= 100; i++ {
			if err := emit(i); err != nil {
				return err
			}
		}
		return nil
	})
	Map(g, "square", nums, sq, func(ctx context.Context, v int) (string, error) {
		return fmt.Sprint(v * v), nil
	})
	var got []string
	Sink(g, "collect", sq, func(ctx context.Context, v string) error {
		got = append(got, v)
		return nil
	})
	if err := runWithin(t, context.Background(), g, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 {
		t.Fatalf("got %d items, want 100", len(got))
	}
	for i, s := range got {
		if want := fmt.Sprint((i + 1) * (i + 1)); s != want {
			t.Fatalf("item %d = %s, want %s", i, s, want)
		}
	}
	ss, ps := g.Stats()
	if ss[1].In != 100 || ss[1].Out != 100 || ss[1].Calls != 100 || ss[2].In != 100 || ss[0].Out != 100 {
		t.Errorf("stage counters %+v", ss)
	}
	if ps[0].Sent != 100 || ps[0].Received != 100 || ps[1].Sent != 100 || ps[0].Len != 0 {
		t.Errorf("pipe counters %+v", ps)
	}
	if err := g.Run(context.Background()); !errors.Is(err, ErrRunning) {
		t.Errorf("second Run = %v, want ErrRunning", err)
	}
}

func TestFlatMap(t *testing.T) {
	g := New()
	in := NewPipe[int](g, "in", 0)
	out := NewPipe[int](g, "out", 0)
	Source(g, "gen", in, func(ctx context.Context, emit func(int) error) error {
		for i := 0; i < 5; i++ {
			if err := emit(i); err != nil {
				return err
			}
		}
		return nil
	})
	FlatMap(g, "repeat", in, out, func(ctx context.Context, v int, emit func(int) error) error {
		for j := 0; j < v; j++ {
			if err := emit(v); err != nil {
				return err
			}
		}
		return nil
	})
	sum, n := 0, 0
	Sink(g, "sum", out, func(ctx context.Context, v int) error { sum += v; n++; return nil })
	if err := runWithin(t, context.Background(), g, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if n != 10 || sum != 0+1+4+9+16 {
		t.Fatalf("n=%d sum=%d, want 10 and 30", n, sum)
	}
	if s := g.Stage("repeat").Stats(); s.In != 5 || s.Out != 10 {
		t.Errorf("repeat stats %+v", s)
	}
}

// TestFirstErrorCancels checks that one stage's error stops a source that
// would otherwise run forever, and that Run returns that error.
func TestFirstErrorCancels(t *testing.T) {
	boom := errors.New("boom")
	g := New()
	in := NewPipe[int](g, "in", 1)
	Source(g, "forever", in, func(ctx context.Context, emit func(int) error) error {
		for i := 0; ; i++ {
			if err := emit(i); err != nil {
				return err
			}
		}
	})
	Sink(g, "fail", in, func(ctx context.Context, v int) error {
		if v == 3 {
			return boom
		}
		return nil
	})
	err := runWithin(t, context.Background(), g, 10*time.Second)
	if !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want boom", err)
	}
}

func TestParentCancel(t *testing.T) {
	g := New()
	in := NewPipe[int](g, "in", 0)
	started := make(chan struct{})
	Source(g, "forever", in, func(ctx context.Context, emit func(int) error) error {
		close(started)
		for {
			if err := emit(1); err != nil {
				return err
			}
		}
	})
	// The sink never reads after the first item: the source blocks on a
	// full pipe until the context is cancelled.
	Sink(g, "stuck", in, func(ctx context.Context, v int) error {
		<-ctx.Done()
		return ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case <-started:
	case <-timer.C:
		t.Fatal("source did not start")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v, want context.Canceled", err)
		}
	case <-timer.C:
		t.Fatal("Run did not return after cancel")
	}
}

// TestBackPressure checks that a full pipe blocks its writer: with a
// capacity-2 pipe and a sink that has not yet read, the source can have
// sent at most 2 items.
func TestBackPressure(t *testing.T) {
	g := New()
	in := NewPipe[int](g, "in", 2)
	release := make(chan struct{})
	Source(g, "gen", in, func(ctx context.Context, emit func(int) error) error {
		for i := 0; i < 10; i++ {
			if err := emit(i); err != nil {
				return err
			}
		}
		return nil
	})
	first := true
	Sink(g, "slow", in, func(ctx context.Context, v int) error {
		if first {
			first = false
			select {
			case <-release:
			case <-time.After(10 * time.Second):
				return errors.New("never released")
			}
		}
		return nil
	})
	done := make(chan error, 1)
	go func() { done <- g.Run(context.Background()) }()
	// Wait until the source is blocked: 1 item taken by the sink and 2
	// queued.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, ps := g.Stats()
		if ps[0].Sent == 3 && ps[0].Len == 2 {
			break
		}
		if ps[0].Sent > 3 {
			t.Fatalf("source sent %d items past a full pipe", ps[0].Sent)
		}
		if time.Now().After(deadline) {
			t.Fatalf("pipe never filled: %+v", ps[0])
		}
		time.Sleep(time.Millisecond)
	}
	// Give the source a chance to (wrongly) send more, then check again.
	time.Sleep(20 * time.Millisecond)
	if _, ps := g.Stats(); ps[0].Sent != 3 {
		t.Fatalf("source sent %d items, want 3 while blocked", ps[0].Sent)
	}
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("graph did not finish")
	}
	if _, ps := g.Stats(); ps[0].Sent != 10 {
		t.Fatalf("sent %d, want 10", ps[0].Sent)
	}
}

// TestCycle runs a loop a → b → a entered by a Loop stage, the shape of
// the speculative pipeline: the Loop ends once its input is closed and
// every item has been retired, and the counters come from the pipes.
func TestCycle(t *testing.T) {
	g := New()
	fresh := NewPipe[int](g, "fresh", 4)
	work := NewPipe[int](g, "work", 4)
	loop := NewPipe[int](g, "loop", 4)
	done := NewPipe[int](g, "done", 4)
	Source(g, "intake", fresh, func(ctx context.Context, emit func(int) error) error {
		for i := 0; i < 4; i++ {
			if err := emit(i * 10); err != nil {
				return err
			}
		}
		return nil
	})
	// router passes items on until they reach a multiple of 10 plus 5,
	// which it retires.
	maxLive := 0
	router := Loop(g, "router", fresh, loop, work, func(ctx context.Context, s *Stage, v int, isFresh bool, emit func(int) error) error {
		if isFresh != (v%10 == 0) {
			return fmt.Errorf("item %d: fresh %v", v, isFresh)
		}
		maxLive = max(maxLive, s.Live())
		if v%10 == 5 {
			return nil
		}
		return emit(v)
	})
	FlatMap(g, "step", work, loop, func(ctx context.Context, v int, emit func(int) error) error {
		return emit(v + 1)
	})
	// done is written by a stage that never sends, to test that a
	// declared but unused output still closes.
	g.Go("idle", func(ctx context.Context, s *Stage) error { return nil }, done)
	Sink(g, "drain", done, func(ctx context.Context, v int) error { return errors.New("unexpected item") })
	if err := runWithin(t, context.Background(), g, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if s := g.Stage("step").Stats(); s.In != 4*5 || s.Out != 4*5 {
		t.Fatalf("step: in %d, out %d, want 20 and 20", s.In, s.Out)
	}
	// The router took 4 fresh items and 20 back, passed 20 on and retired 4.
	if s := router.Stats(); s.In != 24 || s.Out != 20 || s.Live != 0 || s.Retired != 4 {
		t.Fatalf("router: in %d, out %d, live %d, retired %d; want 24, 20, 0, 4", s.In, s.Out, s.Live, s.Retired)
	}
	if maxLive < 1 || maxLive > 4 {
		t.Fatalf("most items inside the cycle %d, want 1 to 4", maxLive)
	}
}

// TestLoopLeft: a stage that waits for more of the cycle's items (as
// verification waits for a fuller batch) is woken by Left when one is
// retired, and reads the lower Live.
func TestLoopLeft(t *testing.T) {
	g := New()
	fresh := NewPipe[int](g, "fresh", 2)
	work := NewPipe[int](g, "work", 2)
	back := NewPipe[int](g, "back", 2)
	woken := make(chan struct{})
	// intake keeps the cycle open until gather has been woken.
	Source(g, "intake", fresh, func(ctx context.Context, emit func(int) error) error {
		if err := emit(7); err != nil {
			return err
		}
		select {
		case <-woken:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	// The item goes round once, then is retired.
	router := Loop(g, "router", fresh, back, work, func(ctx context.Context, s *Stage, v int, isFresh bool, emit func(int) error) error {
		if !isFresh {
			return nil
		}
		return emit(v)
	})
	g.Go("gather", func(ctx context.Context, s *Stage) error {
		v, ok, w, err := work.RecvOr(ctx, nil)
		if err != nil || !ok || w {
			return fmt.Errorf("first receive: %d %v %v %v", v, ok, w, err)
		}
		if n := router.Live(); n != 1 {
			return fmt.Errorf("live %d with the item taken, want 1", n)
		}
		if err := back.Send(ctx, v); err != nil {
			return err
		}
		// Nothing more can come: only the retirement wakes this wait.
		_, ok, w, err = work.RecvOr(ctx, router.Left())
		if err != nil || ok || !w {
			return fmt.Errorf("second receive: ok %v, woke %v, %v", ok, w, err)
		}
		if n := router.Live(); n != 0 {
			return fmt.Errorf("live %d after the wake, want 0", n)
		}
		close(woken)
		if _, ok, err := work.Recv(ctx); ok || err != nil {
			return fmt.Errorf("work not closed: %v %v", ok, err)
		}
		return nil
	}, back).From(work)
	if err := runWithin(t, context.Background(), g, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if s := g.Stage("gather").Stats(); s.In != 1 || s.Out != 1 {
		t.Fatalf("gather: in %d, out %d, want 1 and 1", s.In, s.Out)
	}
}

// TestStageWake: Wake signals a Loop stage's Left as a retirement does,
// wake-ups merging (two give one), and is a no-op on other stages.
func TestStageWake(t *testing.T) {
	g := New()
	fresh := NewPipe[int](g, "fresh", 1)
	work := NewPipe[int](g, "work", 1)
	back := NewPipe[int](g, "back", 1)
	router := Loop(g, "router", fresh, back, work, func(ctx context.Context, s *Stage, v int, isFresh bool, emit func(int) error) error {
		return emit(v)
	})
	other := g.Go("other", func(ctx context.Context, s *Stage) error { return nil }, back)
	other.Wake()
	if other.Left() != nil {
		t.Fatal("a stage that is not a Loop has a Left")
	}
	woken := func() bool {
		select {
		case <-router.Left():
			return true
		default:
			return false
		}
	}
	if woken() {
		t.Fatal("Left signalled before any Wake")
	}
	router.Wake()
	router.Wake()
	if !woken() {
		t.Fatal("Wake did not signal Left")
	}
	if woken() {
		t.Fatal("two Wakes signalled Left twice")
	}
}

// TestLoopBackClosed: the cycle's return pipe closing with items inside
// is an error, not a hang.
func TestLoopBackClosed(t *testing.T) {
	g := New()
	fresh := NewPipe[int](g, "fresh", 1)
	work := NewPipe[int](g, "work", 1)
	back := NewPipe[int](g, "back", 1)
	Source(g, "intake", fresh, func(ctx context.Context, emit func(int) error) error { return emit(1) })
	Loop(g, "router", fresh, back, work, func(ctx context.Context, s *Stage, v int, isFresh bool, emit func(int) error) error {
		return emit(v)
	})
	// quit returns at once, closing back while the item is inside.
	g.Go("quit", func(ctx context.Context, s *Stage) error { return nil }, back)
	Sink(g, "drain", work, func(ctx context.Context, v int) error { return nil })
	if err := runWithin(t, context.Background(), g, 10*time.Second); !errors.Is(err, ErrLoop) {
		t.Fatalf("Run = %v, want ErrLoop", err)
	}
}

func TestBuildErrors(t *testing.T) {
	g := New()
	p := NewPipe[int](g, "p", 0)
	Sink(g, "s", p, func(ctx context.Context, v int) error { return nil })
	if err := g.Run(context.Background()); !errors.Is(err, ErrNoWriter) {
		t.Errorf("Run = %v, want ErrNoWriter", err)
	}
	g = New()
	p = NewPipe[int](g, "p", 0)
	Source(g, "a", p, func(ctx context.Context, emit func(int) error) error { return nil })
	Source(g, "b", p, func(ctx context.Context, emit func(int) error) error { return nil })
	if err := g.Run(context.Background()); !errors.Is(err, ErrTwoWriter) {
		t.Errorf("Run = %v, want ErrTwoWriter", err)
	}
	g = New()
	p = NewPipe[int](g, "p", 0)
	Source(g, "a", p, func(ctx context.Context, emit func(int) error) error { return nil })
	Sink(g, "s", p, func(ctx context.Context, v int) error { return nil })
	g.Go("t", func(ctx context.Context, s *Stage) error { return nil }).From(p)
	if err := g.Run(context.Background()); !errors.Is(err, ErrTwoReader) {
		t.Errorf("Run = %v, want ErrTwoReader", err)
	}
	if err := New().Run(context.Background()); !errors.Is(err, ErrNoStages) {
		t.Errorf("Run = %v, want ErrNoStages", err)
	}
}

func TestPanicBecomesError(t *testing.T) {
	g := New()
	p := NewPipe[int](g, "p", 0)
	Source(g, "a", p, func(ctx context.Context, emit func(int) error) error { return emit(1) })
	Sink(g, "s", p, func(ctx context.Context, v int) error { panic("bad") })
	err := runWithin(t, context.Background(), g, 10*time.Second)
	if err == nil || err.Error() != "graph: stage s panicked: bad" {
		t.Fatalf("Run = %v", err)
	}
}

func TestBusyTime(t *testing.T) {
	g := New()
	p := NewPipe[int](g, "p", 0)
	Source(g, "a", p, func(ctx context.Context, emit func(int) error) error { return emit(1) })
	Sink(g, "s", p, func(ctx context.Context, v int) error {
		t0 := time.Now()
		for time.Since(t0) < 5*time.Millisecond {
		}
		return nil
	})
	if err := runWithin(t, context.Background(), g, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if b := g.Stage("s").Stats().Busy; b < 5*time.Millisecond {
		t.Fatalf("busy %v, want >= 5ms", b)
	}
}

// BenchmarkCycleHandoff passes one item round a cycle of three stages, as
// the speculative pipeline's draft → verify → accept → draft does with
// one sequence, with no work in the stages: the time per round is what
// the three handoffs (a pipe send and receive each, and the wake-ups of
// the goroutines) cost a decoding step.
func BenchmarkCycleHandoff(b *testing.B) {
	g := New()
	fresh := NewPipe[int](g, "fresh", 1)
	work := NewPipe[int](g, "work", 1)
	done := NewPipe[int](g, "done", 1)
	back := NewPipe[int](g, "back", 1)
	Source(g, "intake", fresh, func(ctx context.Context, emit func(int) error) error { return emit(0) })
	Loop(g, "draft", fresh, back, work, func(ctx context.Context, s *Stage, v int, isFresh bool, emit func(int) error) error {
		if v == b.N {
			return nil
		}
		return emit(v)
	})
	Map(g, "verify", work, done, func(ctx context.Context, v int) (int, error) { return v + 1, nil })
	Map(g, "accept", done, back, func(ctx context.Context, v int) (int, error) { return v, nil })
	b.ResetTimer()
	if err := g.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
}
