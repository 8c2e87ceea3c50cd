// Package bench measures speculative decoding against plain decoding of
// the same target, side by side in one process, over a grid of
// configurations (draft length k, confidence stop p_min, adaptive k, draft
// model or n-gram, temperature, batch size, threads), and writes what it
// measured as CSV, JSON, a Markdown report and PNG plots.
//
// Design. A Sweep runs every configuration of a Plan as interleaved A/B
// pairs: the plain baseline of the same batch size, temperature and
// threads, then the configuration (the order flips every repeat), after
// warm-up runs, so slow drift of a shared machine hits both sides of each
// pair alike. Speedups are medians of the pairs' ratios; every baseline
// measurement is kept, and a pair whose baseline is more than 10% from the
// median of its kind is flagged. Greedy configurations are checked token
// for token against the plain baseline (Exactness).
//
// Files: grid.go (configurations), stats.go (the statistics, pure
// functions), sweep.go (the schedule, aggregation, drift and exactness),
// runner.go (running one configuration through a stages pipeline of an
// engine), synth.go (--synthetic-acceptance), timeline.go (busy intervals
// of one run), prompts.go (prompt sets), results.go (CSV and JSON),
// report.go (report.md and the stdout table), plot.go (PNGs).
package bench

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Draft modes of a Point.
const (
	DraftModel = "model" // the draft model
	DraftNGram = "ngram" // prompt lookup
	DraftNone  = "none"  // plain decoding: the baseline
)

// Point is one configuration of the grid.
type Point struct {
	Draft    string  `json:"draft"` // DraftModel, DraftNGram or DraftNone
	K        int     `json:"k"`     // draft length (the largest with Adaptive or Auto); 0 for DraftNone
	PMin     float64 `json:"p_min"` // confidence stop of the draft model (0: none)
	Adaptive bool    `json:"adaptive"`
	// Auto: the cost-aware policy chooses each step's k in [0, K]
	// (engine.Options.Auto, specd generate -k auto).
	Auto    bool    `json:"auto"`
	Temp    float64 `json:"temp"`
	Batch   int     `json:"batch"`   // sequences decoded at once
	Threads int     `json:"threads"` // target threads
}

// Baseline is the plain configuration p is compared with: no draft, the
// same temperature, batch size and threads.
func (p Point) Baseline() Point {
	return Point{Draft: DraftNone, Temp: p.Temp, Batch: p.Batch, Threads: p.Threads}
}

// Greedy reports whether p decodes greedily (temperature 0).
func (p Point) Greedy() bool { return p.Temp == 0 }

// String names p compactly, for tables and progress: "model k4 p0.3
// adaptive t0.8 b4 th1", "model auto≤8 t0 b1 th1"; fields at their
// neutral value are left out except k, batch and threads.
func (p Point) String() string {
	if p.Draft == DraftNone {
		return fmt.Sprintf("plain t%s b%d th%d", fnum(p.Temp), p.Batch, p.Threads)
	}
	var b strings.Builder
	if p.Auto {
		fmt.Fprintf(&b, "%s auto≤%d", p.Draft, p.K)
	} else {
		fmt.Fprintf(&b, "%s k%d", p.Draft, p.K)
	}
	if p.PMin > 0 {
		fmt.Fprintf(&b, " p%s", fnum(p.PMin))
	}
	if p.Adaptive {
		b.WriteString(" adaptive")
	}
	fmt.Fprintf(&b, " t%s b%d th%d", fnum(p.Temp), p.Batch, p.Threads)
	return b.String()
}

// Series is p without its draft length: the configurations that differ
// only in k form one line of a speedup-versus-k plot.
func (p Point) Series() Point {
	p.K = 0
	return p
}

// Fixed is p's series at fixed k: neither adaptive nor auto. An auto
// configuration is compared with the fixed ones of its Fixed series.
func (p Point) Fixed() Point {
	p.K, p.Adaptive, p.Auto = 0, false, false
	return p
}

func fnum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Grid is the set of configurations a sweep measures: every combination
// of its lists.
type Grid struct {
	K        []int     // fixed draft lengths (may be empty with Auto)
	PMin     []float64 // confidence stops (model draft only)
	Adaptive bool      // also an adaptive configuration (K = the largest k) per combination
	// Auto: also an auto configuration (the cost-aware policy, k in
	// [0, MaxK]) per combination.
	Auto    bool
	Drafts  []string // DraftModel, DraftNGram
	Temps   []float64
	Batches []int
	Threads []int
}

// ErrGrid reports an invalid grid.
var ErrGrid = errors.New("bench: invalid grid")

// Check reports the first invalid list of g, naming its flag.
func (g Grid) Check() error {
	bad := func(flag, why string) error { return fmt.Errorf("%w: --%s: %s", ErrGrid, flag, why) }
	switch {
	case len(g.K) == 0 && !g.Auto:
		return bad("k", "no draft length")
	case len(g.Drafts) == 0:
		return bad("draft", "no draft mode")
	case len(g.Temps) == 0:
		return bad("temp", "no temperature")
	case len(g.Batches) == 0:
		return bad("batch", "no batch size")
	case len(g.Threads) == 0:
		return bad("threads", "no thread count")
	}
	for _, k := range g.K {
		if k < 1 || k > 64 {
			return bad("k", fmt.Sprintf("draft length %d not in [1, 64]", k))
		}
	}
	for _, p := range g.PMin {
		if !(p >= 0 && p < 1) {
			return bad("p-min", fmt.Sprintf("%g not in [0, 1)", p))
		}
	}
	for _, d := range g.Drafts {
		if d != DraftModel && d != DraftNGram {
			return bad("draft", fmt.Sprintf("%q is neither model nor ngram", d))
		}
	}
	for _, t := range g.Temps {
		if !(t >= 0 && t <= 10) {
			return bad("temp", fmt.Sprintf("%g not in [0, 10]", t))
		}
	}
	for _, b := range g.Batches {
		if b < 1 || b > 256 {
			return bad("batch", fmt.Sprintf("%d not in [1, 256]", b))
		}
	}
	for _, t := range g.Threads {
		if t < 1 || t > 1024 {
			return bad("threads", fmt.Sprintf("%d not in [1, 1024]", t))
		}
	}
	return nil
}

// AutoK is the largest draft length of an auto configuration when the
// grid has no fixed one (as specd generate -k auto).
const AutoK = 8

// MaxK is the largest draft length of g: its largest fixed k, or AutoK
// with only auto.
func (g Grid) MaxK() int {
	if len(g.K) == 0 {
		return AutoK
	}
	return slices.Max(g.K)
}

// Points returns the speculative configurations of g in a fixed order
// (threads, temperature, draft, p_min, batch, then k; adaptive and auto
// after the fixed lengths, with the largest k as their cap), without
// duplicates: the n-gram draft has no p_min, so
// it gets one configuration per k whatever the p_min list.
func (g Grid) Points() []Point {
	pmins := g.PMin
	if len(pmins) == 0 {
		pmins = []float64{0}
	}
	var out []Point
	seen := map[Point]bool{}
	add := func(p Point) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	kmax := g.MaxK()
	for _, th := range g.Threads {
		for _, t := range g.Temps {
			for _, d := range g.Drafts {
				for _, pm := range pmins {
					if d == DraftNGram {
						pm = 0
					}
					for _, b := range g.Batches {
						for _, k := range g.K {
							add(Point{Draft: d, K: k, PMin: pm, Temp: t, Batch: b, Threads: th})
						}
						if g.Adaptive {
							add(Point{Draft: d, K: kmax, PMin: pm, Adaptive: true, Temp: t, Batch: b, Threads: th})
						}
						if g.Auto {
							add(Point{Draft: d, K: kmax, PMin: pm, Auto: true, Temp: t, Batch: b, Threads: th})
						}
					}
				}
			}
		}
	}
	return out
}

// ParseInts parses a comma-separated list of integers ("1,2,4").
func ParseInts(s string) ([]int, error) {
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

// ParseKs parses --k: a comma-separated list of draft lengths and "auto"
// ("1,2,4,8,auto"); auto reports whether "auto" was among them.
func ParseKs(s string) (ks []int, auto bool, err error) {
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "auto" {
			if auto {
				return nil, false, fmt.Errorf("item %d: auto given twice", i+1)
			}
			auto = true
			continue
		}
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, false, fmt.Errorf("item %d (%q) is neither a draft length nor auto", i+1, f)
		}
		ks = append(ks, v)
	}
	return ks, auto, nil
}

// ParseFloats parses a comma-separated list of numbers ("0,0.8").
func ParseFloats(s string) ([]float64, error) {
	var out []float64
	for i, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, fmt.Errorf("item %d (%q) is not a number", i+1, f)
		}
		out = append(out, v)
	}
	return out, nil
}
