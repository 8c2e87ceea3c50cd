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

// TestCycle runs a loop a → b → a with a stage that ends the loop by
// counting items in flight, the shape of the speculative pipeline.
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
	// router merges fresh and loop items; items reaching a multiple of 10
	// plus 5 are finished and dropped. It returns when fresh is closed and
	// nothing is in flight, which closes work and, in turn, loop.
	g.Go("router", func(ctx context.Context, s *Stage) error {
		inflight, freshOpen := 0, true
		for freshOpen || inflight > 0 {
			var v int
			select {
			case x, ok := <-fresh.Chan():
				if !ok {
					freshOpen = false
					continue
				}
				fresh.Took()
				inflight++
				v = x
			case x, ok := <-loop.Chan():
				if !ok {
					return errors.New("loop closed early")
				}
				loop.Took()
				if x%10 == 5 {
					inflight--
					continue
				}
				v = x
			case <-ctx.Done():
				return ctx.Err()
			}
			s.AddIn(1)
			if err := work.Send(ctx, v); err != nil {
				return err
			}
		}
		return nil
	}, work)
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
	if s := g.Stage("step").Stats(); s.In != 4*5 {
		t.Fatalf("step ran %d times, want 20", s.In)
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
