package bench

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPlotsRender draws every figure of the fake sweep and decodes each
// PNG: the right size, and not blank.
func TestPlotsRender(t *testing.T) {
	res := fakeResults(t)
	dir := t.TempDir()
	figs, err := WritePlots(res, dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{FigSpeedup, FigPositions, FigHistogram, FigBatch, FigTimeline, FigKChosen}; !slices.Equal(figs, want) {
		t.Fatalf("figures %v, want %v", figs, want)
	}
	for _, f := range figs {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		r := img.Bounds()
		if r.Dx() != 9*dpi || r.Dy() != 5*dpi {
			t.Errorf("%s: %v, want %dx%d", f, r, 9*dpi, 5*dpi)
		}
		// Some pixels are neither white nor black: the coloured data.
		colour := 0
		for y := r.Min.Y; y < r.Max.Y; y += 4 {
			for x := r.Min.X; x < r.Max.X; x += 4 {
				cr, cg, cb, _ := img.At(x, y).RGBA()
				if cr != cg || cg != cb {
					colour++
				}
			}
		}
		if colour < 50 {
			t.Errorf("%s: only %d coloured samples", f, colour)
		}
	}
	// Without a timeline or configurations there is nothing to draw.
	res.Timeline, res.Configs = nil, nil
	if figs, err := WritePlots(res, dir); err != nil || len(figs) != 0 {
		t.Errorf("empty results drew %v (%v)", figs, err)
	}
}

func TestOverlapOf(t *testing.T) {
	ms := time.Millisecond
	ivs := []Interval{
		{Kind: KindVerify, Start: 0, End: 4 * ms},
		{Kind: KindDraft, Start: 3 * ms, End: 6 * ms},    // 1 ms with the first pass
		{Kind: KindPreDraft, Start: 7 * ms, End: 9 * ms}, // 1 ms with the next
		{Kind: KindVerify, Start: 8 * ms, End: 12 * ms},
	}
	if got := overlapOf(ivs, 20*ms); got != 2*ms {
		t.Errorf("overlap %v, want 2ms", got)
	}
	if got := overlapOf(ivs, 3500*time.Microsecond); got != ms/2 {
		t.Errorf("overlap until 3.5ms %v, want 0.5ms", got)
	}
}

func TestReportAndSummary(t *testing.T) {
	res := fakeResults(t)
	var rep, sum bytes.Buffer
	if err := res.WriteReport(&rep, []string{FigSpeedup}); err != nil {
		t.Fatal(err)
	}
	r := rep.String()
	for _, want := range []string{"Test CPU (2 CPUs; avx2 yes, avx512_vnni no; linux/amd64, go1.x)", "sha256 `00ff`",
		"**Best: model k2 t0.8 b1 th1 at 1.20×", "knee is k 2", "| model k2 t0 b1 th1 |", "**NO** (2 requests)", "⚠1",
		"| plain t0 b1 th1 | 100.0 (70.0–100.0) | 100.0 100.0 100.0 100.0 70.0⚠ 100.0 |", "| news α | news speedup |", "![speedup against draft length"} {
		if !strings.Contains(r, want) {
			t.Errorf("report lacks %q:\n%s", want, r)
		}
	}
	res.WriteSummary(&sum)
	s := sum.String()
	for _, want := range []string{"best: model k2 t0.8 b1 th1 at 1.20x; knee at k 2", "INEXACT: model k2 t0 b1 th1: 2 requests", "drift: 1 pairs"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}

func TestParseCPUInfo(t *testing.T) {
	in := "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu sse4_2 avx fma avx2 avx512f avx512_vnni\n\nprocessor\t: 1\nmodel name\t: other\n"
	name, flags := parseCPUInfo(strings.NewReader(in))
	if name != "AMD EPYC 7B13" || !slices.Equal(flags, []string{"sse4_2", "avx", "fma", "avx2", "avx512f", "avx512_vnni"}) {
		t.Errorf("%q %v", name, flags)
	}
}
