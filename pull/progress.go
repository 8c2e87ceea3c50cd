package pull

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Progress reports a download on a writer (stderr): on a terminal, one line
// redrawn in place at most every 200 ms (percentage, bytes, rate, ETA);
// otherwise a plain line every 10 s and one at the end. It is used by one
// goroutine at a time.
type Progress struct {
	w        io.Writer
	tty      bool
	now      func() time.Time
	interval time.Duration

	name         string
	base, done   int64 // bytes at Start (resumed), bytes now
	total        int64 // -1 if unknown
	start, drawn time.Time
	active       bool
}

// NewProgress returns a Progress writing to w, redrawing in place if tty.
func NewProgress(w io.Writer, tty bool) *Progress {
	p := &Progress{w: w, tty: tty, now: time.Now, interval: 10 * time.Second}
	if tty {
		p.interval = 200 * time.Millisecond
	}
	return p
}

// IsTerminal reports whether w is a character device (a terminal).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Start begins a report for name, resuming at offset of total bytes
// (total < 0: unknown).
func (p *Progress) Start(name string, offset, total int64) {
	p.name, p.base, p.done, p.total = name, offset, offset, total
	p.start = p.now()
	p.drawn = p.start
	p.active = true
	if offset > 0 && !p.tty {
		fmt.Fprintf(p.w, "%s: resuming at %s of %s\n", name, fmtBytes(offset), fmtTotal(total))
	}
	if p.tty {
		p.draw(false)
	}
}

// Add records n more bytes written.
func (p *Progress) Add(n int64) {
	p.done += n
	if t := p.now(); t.Sub(p.drawn) >= p.interval {
		p.drawn = t
		p.draw(false)
	}
}

// Stop ends the report with a final line.
func (p *Progress) Stop() {
	if !p.active {
		return
	}
	p.active = false
	p.draw(true)
}

// Note prints a message on its own line.
func (p *Progress) Note(msg string) {
	if p.tty && p.active {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	fmt.Fprintln(p.w, msg)
	if p.tty && p.active {
		p.draw(false)
	}
}

// Line returns the status text: name, percentage, bytes, rate and ETA.
func (p *Progress) Line() string {
	var sb strings.Builder
	sb.WriteString(p.name)
	sb.WriteString(": ")
	if p.total > 0 {
		fmt.Fprintf(&sb, "%3d%% ", p.done*100/p.total)
	}
	sb.WriteString(fmtBytes(p.done))
	if p.total >= 0 {
		sb.WriteString(" / ")
		sb.WriteString(fmtBytes(p.total))
	}
	el := p.now().Sub(p.start).Seconds()
	got := p.done - p.base
	if el > 0 && got > 0 {
		rate := float64(got) / el
		fmt.Fprintf(&sb, "  %s/s", fmtBytes(int64(rate)))
		if p.total > p.done {
			fmt.Fprintf(&sb, "  ETA %s", fmtDuration(time.Duration(float64(p.total-p.done)/rate*float64(time.Second))))
		}
	}
	return sb.String()
}

func (p *Progress) draw(final bool) {
	switch {
	case p.tty && final:
		fmt.Fprintf(p.w, "\r\x1b[K%s\n", p.Line())
	case p.tty:
		fmt.Fprintf(p.w, "\r\x1b[K%s", p.Line())
	default:
		fmt.Fprintln(p.w, p.Line())
	}
}

func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), -1
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTP"[i])
}

func fmtTotal(n int64) string {
	if n < 0 {
		return "unknown size"
	}
	return fmtBytes(n)
}

func fmtDuration(d time.Duration) string {
	if d < 0 || d > 100*time.Hour {
		return "--"
	}
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%dh%02dm", h, m)
	}
	if m > 0 {
		return fmt.Sprintf("%dm%02ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}
