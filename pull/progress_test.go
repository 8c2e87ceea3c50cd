package pull

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// fakeClock advances only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestProgressTTY(t *testing.T) {
	var buf bytes.Buffer
	clk := &fakeClock{t: time.Unix(1000, 0)}
	p := NewProgress(&buf, true)
	p.now = clk.now
	p.Start("m.gguf", 0, 100<<20)
	clk.t = clk.t.Add(2 * time.Second)
	p.Add(20 << 20) // 10 MiB/s, 80 MiB left: 8 s
	if got, want := p.Line(), "m.gguf:  20% 20.0 MiB / 100.0 MiB  10.0 MiB/s  ETA 8s"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	n := strings.Count(buf.String(), "\r")
	p.Add(1 << 20) // no time has passed: no redraw
	if strings.Count(buf.String(), "\r") != n {
		t.Error("redrawn without time passing")
	}
	clk.t = clk.t.Add(100 * time.Second)
	p.Add(79 << 20)
	p.Stop()
	out := buf.String()
	if !strings.HasSuffix(out, "\r\x1b[Km.gguf: 100% 100.0 MiB / 100.0 MiB  1003.9 KiB/s\n") {
		t.Errorf("final output %q", out)
	}
}

func TestProgressPlain(t *testing.T) {
	var buf bytes.Buffer
	clk := &fakeClock{t: time.Unix(0, 0)}
	p := NewProgress(&buf, false)
	p.now = clk.now
	p.Start("m.gguf", 50<<20, 150<<20)
	for i := 0; i < 10; i++ {
		clk.t = clk.t.Add(3 * time.Second)
		p.Add(1 << 20)
	}
	p.Stop()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	// Resume line, a line each 10 s (at 12 s, 24 s), the final line.
	want := []string{
		"m.gguf: resuming at 50.0 MiB of 150.0 MiB",
		"m.gguf:  36% 54.0 MiB / 150.0 MiB  341.3 KiB/s  ETA 4m48s",
		"m.gguf:  38% 58.0 MiB / 150.0 MiB  341.3 KiB/s  ETA 4m36s",
		"m.gguf:  40% 60.0 MiB / 150.0 MiB  341.3 KiB/s  ETA 4m30s",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(buf.String(), "\r") {
		t.Error("carriage return on a non-terminal")
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {1 << 30, "1.0 GiB"}, {1894532128, "1.8 GiB"}} {
		if got := fmtBytes(tc.n); got != tc.want {
			t.Errorf("fmtBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{{0, "0s"}, {59 * time.Second, "59s"}, {61 * time.Second, "1m01s"}, {3*time.Hour + 5*time.Minute, "3h05m"}, {200 * time.Hour, "--"}} {
		if got := fmtDuration(tc.d); got != tc.want {
			t.Errorf("fmtDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
