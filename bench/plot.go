package bench

// The PNG figures of a sweep, drawn with gonum.org/v1/plot. Every figure
// has its legend in a strip to the right of the axes (never over the
// data) and a caption line naming the CPU.

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Figure file names.
const (
	FigSpeedup   = "speedup_vs_k.png"
	FigPositions = "acceptance_per_position.png"
	FigHistogram = "accepted_length.png"
	FigBatch     = "toks_vs_batch.png"
	FigTimeline  = "timeline.png"
	FigKChosen   = "k_chosen.png"
	FigPeer      = "peer_toks_vs_k.png"
)

// palette: distinguishable on white and in grey scale (Okabe and Ito).
var palette = []color.Color{
	color.RGBA{0, 114, 178, 255},   // blue
	color.RGBA{213, 94, 0, 255},    // vermillion
	color.RGBA{0, 158, 115, 255},   // green
	color.RGBA{204, 121, 167, 255}, // purple
	color.RGBA{230, 159, 0, 255},   // orange
	color.RGBA{86, 180, 233, 255},  // sky
	color.RGBA{120, 120, 120, 255}, // grey
	color.RGBA{60, 60, 140, 255},   // indigo (not yellow: too pale on white)
}

func colorAt(i int) color.Color { return palette[i%len(palette)] }

const (
	figW, figH = 9 * vg.Inch, 5 * vg.Inch
	dpi        = 144
)

// WritePlots draws the figures of res into dir and returns the names of
// those it wrote (a figure without data, such as the timeline of a sweep
// without one, is left out).
func WritePlots(res *Results, dir string) ([]string, error) {
	caption := res.Machine.CPULine()
	figs := []struct {
		name string
		draw func(*Results) (*figure, error)
	}{
		{FigSpeedup, speedupPlot}, {FigPositions, positionPlot}, {FigHistogram, histogramPlot},
		{FigBatch, batchPlot}, {FigTimeline, timelinePlot}, {FigKChosen, kChosenPlot}, {FigPeer, peerPlot},
	}
	var out []string
	for _, f := range figs {
		fig, err := f.draw(res)
		if err != nil {
			return out, fmt.Errorf("bench: %s: %w", f.name, err)
		}
		if fig == nil {
			continue
		}
		if err := fig.render(caption, filepath.Join(dir, f.name)); err != nil {
			return out, fmt.Errorf("bench: %s: %w", f.name, err)
		}
		out = append(out, f.name)
	}
	return out, nil
}

// sans is the typeface of every text in the figures.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// figure is a plot, its legend and its title (drawn across the whole
// image, above the plot and the legend).
type figure struct {
	p     *plot.Plot
	leg   *legend
	title string
}

// newFigure is a figure with readable fonts, a grid and an empty legend.
func newFigure(title, x, y string) *figure {
	p := plot.New()
	p.X.Label.Text, p.Y.Label.Text = x, y
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 13)
		a.Tick.Label.Font = font.From(sans, 11)
		a.Padding = 4
	}
	p.Y.Tick.Marker = niceTicks{}
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = color.Gray{225}, color.Gray{225}
	p.Add(g)
	l := &legend{Legend: plot.NewLegend()}
	l.TextStyle.Font = font.From(sans, 11)
	l.Top, l.Left = true, true
	l.ThumbnailWidth = vg.Points(26)
	l.Padding = vg.Points(3)
	return &figure{p: p, leg: l, title: title}
}

// render writes the figure as a PNG: the title on top, the legend to the
// right of the axes, caption at the bottom.
func (f *figure) render(caption, path string) error {
	img := vgimg.NewWith(vgimg.UseWH(figW, figH), vgimg.UseDPI(dpi))
	dc := draw.New(img)
	sty := func(size vg.Length, c color.Color) text.Style {
		return text.Style{Color: c, Font: font.From(sans, size), Handler: plot.DefaultTextHandler}
	}
	dc.FillText(sty(10, color.Gray{70}), vg.Point{X: dc.Min.X + vg.Points(8), Y: dc.Min.Y + vg.Points(6)}, caption)
	titleH := vg.Points(10)
	if f.title != "" {
		ts := sty(14, color.Black)
		ts.YAlign = draw.YTop
		dc.FillText(ts, vg.Point{X: dc.Min.X + vg.Points(8), Y: dc.Max.Y - vg.Points(8)}, f.title)
		titleH = ts.Height(f.title) + vg.Points(16)
	}
	area := draw.Crop(dc, vg.Points(4), 0, vg.Points(20), -titleH)
	if leg := f.leg; len(leg.names) > 0 {
		w := leg.width()
		leg.Draw(draw.Crop(area, area.Max.X-area.Min.X-w, -vg.Points(6), 0, -vg.Points(4)))
		area = draw.Crop(area, 0, -w-vg.Points(10), 0, 0)
	}
	f.p.Draw(area)
	w, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(w); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// legend is a plot.Legend that remembers its entries' names (plot.Legend
// keeps them private), so render can measure the strip it needs.
type legend struct {
	plot.Legend
	names []string
}

func (l *legend) add(name string, th ...plot.Thumbnailer) {
	l.Add(name, th...)
	l.names = append(l.names, name)
}

func (l *legend) width() vg.Length {
	w := vg.Length(0)
	for _, t := range l.names {
		w = max(w, l.TextStyle.Rectangle(t).Max.X)
	}
	return w + l.ThumbnailWidth + vg.Points(34)
}

// primary picks, from configurations, the ones the figures draw: the
// first temperature, thread count and (per draft) p_min of the sweep, at
// fixed k. It keeps the figures readable whatever the size of the grid;
// results.csv has everything.
func primary(cs []ConfigResult) []ConfigResult {
	if len(cs) == 0 {
		return nil
	}
	temp, th := cs[0].Temp, cs[0].Threads
	pmin := map[string]float64{}
	var out []ConfigResult
	for _, c := range cs {
		if _, ok := pmin[c.Draft]; !ok {
			pmin[c.Draft] = c.PMin
		}
		if c.Temp == temp && c.Threads == th && c.PMin == pmin[c.Draft] && !c.Adaptive && !c.Auto {
			out = append(out, c)
		}
	}
	return out
}

// groupBy groups configurations by key, in order of first appearance.
func groupBy[K comparable](cs []ConfigResult, key func(ConfigResult) K) ([]K, map[K][]ConfigResult) {
	var order []K
	m := map[K][]ConfigResult{}
	for _, c := range cs {
		k := key(c)
		if _, ok := m[k]; !ok {
			order = append(order, k)
		}
		m[k] = append(m[k], c)
	}
	return order, m
}

type dk struct {
	draft string
	batch int
}

// draftWord names a draft mode in a legend.
func draftWord(draft string) string {
	if draft == DraftNGram {
		return "n-gram"
	}
	return "model"
}

// niceTicks labels 4 to 8 round values (steps of 1, 2, 2.5 or 5 times a
// power of ten) with an unlabelled minor tick between them.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	prec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	if step/math.Pow(10, math.Floor(math.Log10(step))) == 2.5 {
		prec++
	}
	var ts []plot.Tick
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+1e-9*step; v += step {
		if math.Abs(v) < step*1e-9 {
			v = 0 // not "-0.0"
		}
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
		if m := v + step/2; m <= hi {
			ts = append(ts, plot.Tick{Value: m})
		}
	}
	return ts
}

// intTicks marks the integers vs on an axis.
func intTicks(vs []int) plot.ConstantTicks {
	var t plot.ConstantTicks
	for _, v := range vs {
		t = append(t, plot.Tick{Value: float64(v), Label: strconv.Itoa(v)})
	}
	return t
}

// summaryLine draws g, sorted by x, as one line named name: at each x the
// median of s, with bars from its least to its most. It returns the
// largest of those, and adds each x not yet in *seen to it.
func summaryLine(p *plot.Plot, leg *legend, name string, clr color.Color, g []ConfigResult, x func(ConfigResult) int, s func(ConfigResult) Summary, seen *[]int) (float64, error) {
	slices.SortFunc(g, func(a, b ConfigResult) int { return x(a) - x(b) })
	var xs, ys, lo, hi []float64
	top := 0.0
	for _, c := range g {
		v := s(c)
		xs, ys, lo, hi = append(xs, float64(x(c))), append(ys, v.Median), append(lo, v.Min), append(hi, v.Max)
		top = max(top, v.Max)
		if !slices.Contains(*seen, x(c)) {
			*seen = append(*seen, x(c))
		}
	}
	return top, lineWith(p, leg, name, clr, nil, xs, ys, lo, hi)
}

// lineWith adds a line with point markers and min–max error bars.
func lineWith(p *plot.Plot, leg *legend, name string, clr color.Color, dashes []vg.Length, xs, ys, lo, hi []float64) error {
	xy := make(plotter.XYs, len(xs))
	errs := make(plotter.YErrors, len(xs))
	for i := range xs {
		xy[i] = plotter.XY{X: xs[i], Y: ys[i]}
		if lo != nil {
			errs[i] = struct{ Low, High float64 }{ys[i] - lo[i], hi[i] - ys[i]}
		}
	}
	l, s, err := plotter.NewLinePoints(xy)
	if err != nil {
		return err
	}
	l.Color, l.Width, l.Dashes = clr, vg.Points(2), dashes
	s.Color, s.Shape, s.Radius = clr, draw.CircleGlyph{}, vg.Points(3)
	p.Add(l, s)
	if lo != nil {
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{xy, errs})
		if err != nil {
			return err
		}
		eb.Color, eb.Width, eb.CapWidth = clr, vg.Points(1.2), vg.Points(6)
		p.Add(eb)
	}
	leg.add(name, l, s)
	return nil
}

func plainLine(p *plot.Plot, leg *legend, y float64, name string) {
	l := plotter.NewFunction(func(float64) float64 { return y })
	l.Color, l.Width = color.Gray{110}, vg.Points(1.2)
	p.Add(l)
	leg.add(name, l)
}

// speedupPlot: measured speedup over plain decoding against k, one line
// per draft and batch size (median of the A/B pairs, bars from the least
// to the most), with Leviathan et al.'s prediction from the measured α
// and c (and with the measured (k+1)-pass cost) at the smallest batch.
func speedupPlot(res *Results) (*figure, error) {
	cs := primary(res.Configs)
	if len(cs) == 0 {
		return nil, nil
	}
	fig := newFigure(fmt.Sprintf("Speedup over plain decoding: %s, temperature %s\nmedian of the A/B pairs, bars from the least to the most; dashed: Leviathan et al.'s prediction", res.Models.Target.short(), fnum(cs[0].Temp)),
		"draft length k", "speedup over plain decoding (×)")
	p, leg := fig.p, fig.leg
	order, by := groupBy(cs, func(c ConfigResult) dk { return dk{c.Draft, c.Batch} })
	var ks []int
	ymax := 1.0
	for i, key := range order {
		top, err := summaryLine(p, leg, fmt.Sprintf("%s, batch %d", draftWord(key.draft), key.batch), colorAt(i), by[key],
			func(c ConfigResult) int { return c.K }, func(c ConfigResult) Summary { return c.Speedup }, &ks)
		if err != nil {
			return nil, err
		}
		ymax = max(ymax, top)
	}
	// Theory at each draft's smallest batch.
	dorder, dby := groupBy(cs, func(c ConfigResult) string { return c.Draft })
	for _, d := range dorder {
		g := dby[d]
		b := slices.MinFunc(g, func(a, b ConfigResult) int { return a.Batch - b.Batch }).Batch
		var t1, t2 plotter.XYs
		for _, c := range g {
			if c.Batch != b {
				continue
			}
			t1 = append(t1, plotter.XY{X: float64(c.K), Y: float64(c.Predicted)})
			if !math.IsNaN(float64(c.PredictedPass)) {
				t2 = append(t2, plotter.XY{X: float64(c.K), Y: float64(c.PredictedPass)})
			}
		}
		slices.SortFunc(t1, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		slices.SortFunc(t2, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		clr := colorAt(slices.Index(order, dk{d, b}))
		for i, t := range []plotter.XYs{t1, t2} {
			if len(t) == 0 {
				continue
			}
			l, err := plotter.NewLine(t)
			if err != nil {
				return nil, err
			}
			l.Color, l.Width = clr, vg.Points(1.4)
			name := fmt.Sprintf("theory, %s, batch %d (α, c measured)", draftWord(d), b)
			l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			if i == 1 {
				name = fmt.Sprintf("theory, %s, batch %d, with measured r", draftWord(d), b)
				l.Dashes = []vg.Length{vg.Points(1.5), vg.Points(2.5)}
			}
			for _, xy := range t {
				ymax = max(ymax, xy.Y)
			}
			p.Add(l)
			leg.add(name, l)
		}
	}
	plainLine(p, leg, 1, "plain decoding")
	slices.Sort(ks)
	xmin := float64(ks[0])
	// Auto: a triangle at its mean chosen k (bars from the least to the
	// most speedup) and a dash-dotted level across, in its series' colour.
	for i, key := range order {
		series := by[key][0].Point.Fixed()
		for _, c := range res.Configs {
			if !c.Auto || c.Point.Fixed() != series || math.IsNaN(c.Speedup.Median) {
				continue
			}
			clr := colorAt(i)
			x := float64(c.MeanK)
			if math.IsNaN(x) {
				x = float64(c.K)
			}
			xmin = min(xmin, x)
			ymax = max(ymax, c.Speedup.Max)
			xy := plotter.XYs{{X: x, Y: c.Speedup.Median}}
			s, err := plotter.NewScatter(xy)
			if err != nil {
				return nil, err
			}
			s.Color, s.Shape, s.Radius = clr, draw.PyramidGlyph{}, vg.Points(6)
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{xy, plotter.YErrors{{Low: c.Speedup.Median - c.Speedup.Min, High: c.Speedup.Max - c.Speedup.Median}}})
			if err != nil {
				return nil, err
			}
			eb.Color, eb.Width, eb.CapWidth = clr, vg.Points(1.2), vg.Points(6)
			y := c.Speedup.Median
			lvl := plotter.NewFunction(func(float64) float64 { return y })
			lvl.Color, lvl.Width, lvl.Dashes = clr, vg.Points(1.2), []vg.Length{vg.Points(8), vg.Points(2), vg.Points(1.5), vg.Points(2)}
			p.Add(lvl, eb, s)
			leg.add(fmt.Sprintf("auto, %s, batch %d: %.2f× at mean k %s", draftWord(key.draft), key.batch, y, fd(c.MeanK, 1)), lvl, s)
		}
	}
	// llama.cpp's llama-speculative-simple over its own k 0 (--peer-bin).
	var peer plotter.XYs
	for _, pr := range res.Peers {
		if pr.Tool == PeerSpecSimple && pr.Point.Draft == DraftModel && pr.Point.Temp == cs[0].Temp && pr.Point.Threads == cs[0].Threads &&
			!math.IsNaN(float64(pr.Speedup)) {
			peer = append(peer, plotter.XY{X: float64(pr.Point.K), Y: float64(pr.Speedup)})
			ymax = max(ymax, float64(pr.Speedup))
		}
	}
	if len(peer) > 0 {
		if err := peerLine(p, leg, "llama.cpp speculative-simple, batch 1", peer); err != nil {
			return nil, err
		}
	}
	if xmin < float64(ks[0]) {
		ks = append([]int{int(math.Floor(xmin))}, ks...) // a tick under auto's star
	}
	p.X.Tick.Marker = intTicks(ks)
	p.X.Min, p.X.Max = xmin-0.3, float64(ks[len(ks)-1])+0.3
	p.Y.Min, p.Y.Max = 0, ymax*1.08
	return fig, nil
}

// peerLine draws a llama.cpp series: black, dashed, square markers.
func peerLine(p *plot.Plot, leg *legend, name string, xy plotter.XYs) error {
	slices.SortFunc(xy, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
	l, sc, err := plotter.NewLinePoints(xy)
	if err != nil {
		return err
	}
	l.Color, l.Width, l.Dashes = color.Black, vg.Points(1.6), []vg.Length{vg.Points(5), vg.Points(2.5)}
	sc.Color, sc.Shape, sc.Radius = color.Black, draw.BoxGlyph{}, vg.Points(3.5)
	p.Add(l, sc)
	leg.add(name, l, sc)
	return nil
}

// peerPlot: tokens per second against k at batch 1, specd's and
// llama.cpp's, each with its plain decoding as a level (--peer-bin).
func peerPlot(res *Results) (*figure, error) {
	var spec plotter.XYs
	plainLlama, plainBench := math.NaN(), math.NaN()
	var temp float64
	th := -1
	for _, pr := range res.Peers {
		if pr.Tool != PeerLlamaBench && th < 0 {
			temp, th = pr.Point.Temp, pr.Point.Threads
		}
	}
	if th < 0 {
		return nil, nil
	}
	ymax := 0.0
	for _, pr := range res.Peers {
		switch {
		case pr.Tool == PeerLlamaBench && pr.Point.Threads == th:
			plainBench = pr.TokS.Median
		case pr.Tool == PeerLlamaBench || pr.Point.Temp != temp || pr.Point.Threads != th:
			continue
		case pr.Point.Draft == DraftNone:
			plainLlama = pr.TokS.Median
		default:
			spec = append(spec, plotter.XY{X: float64(pr.Point.K), Y: pr.TokS.Median})
		}
		ymax = max(ymax, pr.TokS.Max)
	}
	fig := newFigure(fmt.Sprintf("specd and llama.cpp on %s, batch 1, temperature %s, %d target thread(s)\ntokens per second of decoding; levels: each one's plain decoding", res.Models.Target.short(), fnum(temp), th),
		"draft length k", "tokens per second")
	p, leg := fig.p, fig.leg
	var xs, ys, lo, hi []float64
	var ks []int
	for _, c := range res.Configs {
		if c.Draft == DraftModel && c.Batch == 1 && c.Temp == temp && c.Threads == th && !c.Auto && !c.Adaptive && c.PMin == 0 {
			xs, ys, lo, hi = append(xs, float64(c.K)), append(ys, c.TokS.Median), append(lo, c.TokS.Min), append(hi, c.TokS.Max)
			ymax = max(ymax, c.TokS.Max)
			ks = append(ks, c.K)
		}
	}
	for _, xy := range spec {
		if !slices.Contains(ks, int(xy.X)) {
			ks = append(ks, int(xy.X))
		}
	}
	if len(ks) == 0 {
		return nil, nil
	}
	if len(xs) > 0 {
		if err := lineWith(p, leg, "specd, model draft", colorAt(0), nil, xs, ys, lo, hi); err != nil {
			return nil, err
		}
	}
	if len(spec) > 0 {
		if err := peerLine(p, leg, "llama.cpp speculative-simple", spec); err != nil {
			return nil, err
		}
	}
	level := func(y float64, name string, clr color.Color, dashes []vg.Length) {
		if math.IsNaN(y) {
			return
		}
		ymax = max(ymax, y)
		l := plotter.NewFunction(func(float64) float64 { return y })
		l.Color, l.Width, l.Dashes = clr, vg.Points(1.2), dashes
		p.Add(l)
		leg.add(name, l)
	}
	for _, b := range res.Baselines {
		if b.Batch == 1 && b.Temp == temp && b.Threads == th {
			level(b.Summary.Median, fmt.Sprintf("specd plain: %.1f tok/s", b.Summary.Median), colorAt(0), []vg.Length{vg.Points(8), vg.Points(2), vg.Points(1.5), vg.Points(2)})
		}
	}
	level(plainLlama, fmt.Sprintf("llama.cpp plain (llama-completion): %.1f tok/s", plainLlama), color.Gray{60}, []vg.Length{vg.Points(1.5), vg.Points(2.5)})
	level(plainBench, fmt.Sprintf("llama-bench tg: %.1f tok/s", plainBench), color.Gray{140}, nil)
	slices.Sort(ks)
	p.X.Tick.Marker = intTicks(ks)
	p.X.Min, p.X.Max = float64(ks[0])-0.3, float64(ks[len(ks)-1])+0.3
	p.Y.Min, p.Y.Max = 0, ymax*1.08
	return fig, nil
}

// kChosenPlot: the share of verified blocks at each draft length the auto
// policy chose (0: a plain step), per auto configuration at the first
// thread count (at most 8 configurations).
func kChosenPlot(res *Results) (*figure, error) {
	var keep []ConfigResult
	for _, c := range res.Configs {
		if c.Auto && c.Threads == res.Configs[0].Threads && MeanChosen(c.KChosen) >= 0 && len(keep) < 8 {
			keep = append(keep, c)
		}
	}
	if len(keep) == 0 {
		return nil, nil
	}
	fig := newFigure("Draft length the auto policy chose per verification step\n0: a plain decoding step", "draft length k chosen", "share of verified blocks")
	hists := make([][]int, len(keep))
	labels := make([]string, len(keep))
	for i, c := range keep {
		hists[i] = c.KChosen
		labels[i] = fmt.Sprintf("%s, temp %s, batch %d: mean k %s, %.2f×", draftWord(c.Draft), fnum(c.Temp), c.Batch, fd(c.MeanK, 2), c.Speedup.Median)
	}
	if err := shareBars(fig, hists, labels); err != nil {
		return nil, err
	}
	return fig, nil
}

// shareBars draws, on fig, one group of bars per bin j (named j on the x
// axis) and in each group one bar per histogram hists[i] (legend labels[i]):
// the share of that histogram's total counted in bin j.
func shareBars(fig *figure, hists [][]int, labels []string) error {
	p, leg := fig.p, fig.leg
	n := 0
	for _, h := range hists {
		n = max(n, len(h))
	}
	w := vg.Points(min(40, 360/float64(n*len(hists))))
	top := 0.0
	for i, hist := range hists {
		tot := 0
		for _, h := range hist {
			tot += h
		}
		vs := make(plotter.Values, n)
		for j, h := range hist {
			vs[j] = float64(h) / float64(tot)
			top = max(top, vs[j])
		}
		b, err := plotter.NewBarChart(vs, w)
		if err != nil {
			return err
		}
		b.Color, b.LineStyle.Width = colorAt(i), 0
		b.Offset = vg.Length(float64(i)-float64(len(hists)-1)/2) * w
		p.Add(b)
		leg.add(labels[i], b)
	}
	names := make([]string, n)
	for j := range names {
		names[j] = strconv.Itoa(j)
	}
	p.NominalX(names...)
	p.Y.Min, p.Y.Max = 0, top*1.08
	return nil
}

func (m ModelInfo) short() string {
	if m.Name == "" {
		return "target"
	}
	return filepath.Base(m.Name)
}

// largestK returns, per draft mode, the configuration with the largest k
// at the smallest batch among cs.
func largestK(cs []ConfigResult) []ConfigResult {
	order, by := groupBy(cs, func(c ConfigResult) string { return c.Draft })
	var out []ConfigResult
	for _, d := range order {
		out = append(out, slices.MaxFunc(by[d], func(a, b ConfigResult) int {
			return cmp.Or(b.Batch-a.Batch, a.K-b.K)
		}))
	}
	return out
}

// positionPlot: the chance that a draft token proposed at position i is
// accepted, at the largest k, with the fitted geometric decay α^i.
func positionPlot(res *Results) (*figure, error) {
	cs := largestK(primary(res.Configs))
	if len(cs) == 0 {
		return nil, nil
	}
	fig := newFigure("Acceptance per draft position", "draft position i", "P(token at position i accepted)")
	p, leg := fig.p, fig.leg
	kmax := 0
	for i, c := range cs {
		var xs, ys []float64
		for j, pos := range c.PerPosition {
			if pos.Proposed > 0 {
				xs, ys = append(xs, float64(j+1)), append(ys, pos.Rate)
			}
		}
		if len(xs) == 0 {
			continue
		}
		kmax = max(kmax, len(c.PerPosition))
		name := fmt.Sprintf("%s, k %d, batch %d", draftWord(c.Draft), c.K, c.Batch)
		if err := lineWith(p, leg, name, colorAt(i), nil, xs, ys, nil, nil); err != nil {
			return nil, err
		}
		if a := float64(c.AlphaFit); a > 0 {
			f := plotter.NewFunction(func(x float64) float64 { return math.Pow(a, x) })
			f.XMin, f.XMax = 1, float64(len(c.PerPosition))
			f.Color, f.Width, f.Dashes = colorAt(i), vg.Points(1.4), []vg.Length{vg.Points(5), vg.Points(3)}
			p.Add(f)
			leg.add(fmt.Sprintf("  fit α^i: α = %.2f (MLE %.2f)", a, float64(c.Alpha)), f)
		}
	}
	if kmax == 0 {
		return nil, nil
	}
	ks := make([]int, kmax)
	for i := range ks {
		ks[i] = i + 1
	}
	p.X.Tick.Marker = intTicks(ks)
	p.X.Min, p.X.Max = 0.7, float64(kmax)+0.3
	p.Y.Min, p.Y.Max = 0, 1
	return fig, nil
}

// histogramPlot: the share of drafted blocks that accepted exactly j
// draft tokens, at the largest k.
func histogramPlot(res *Results) (*figure, error) {
	cs := largestK(primary(res.Configs))
	var keep []ConfigResult
	for _, c := range cs {
		if len(c.Histogram) > 0 {
			keep = append(keep, c)
		}
	}
	if len(keep) == 0 {
		return nil, nil
	}
	fig := newFigure("Accepted length per verification step", "draft tokens accepted in the step", "share of drafted steps")
	hists := make([][]int, len(keep))
	labels := make([]string, len(keep))
	for i, c := range keep {
		hists[i] = c.Histogram
		labels[i] = fmt.Sprintf("%s, k %d, batch %d: mean length %.2f", draftWord(c.Draft), c.K, c.Batch, float64(c.MeanAcceptedLength))
	}
	if err := shareBars(fig, hists, labels); err != nil {
		return nil, err
	}
	return fig, nil
}

// batchPlot: throughput against batch size, one line per draft and k
// (median, min–max bars), and plain decoding.
func batchPlot(res *Results) (*figure, error) {
	cs := primary(res.Configs)
	if len(cs) == 0 {
		return nil, nil
	}
	fig := newFigure("Throughput against batch size\nmedian of the repeats, bars from the least to the most", "batch size (sequences decoded at once)", "tokens per second")
	p, leg := fig.p, fig.leg
	type key struct {
		draft string
		k     int
	}
	order, by := groupBy(cs, func(c ConfigResult) key { return key{c.Draft, c.K} })
	var bs []int
	ymax := 0.0
	for i, k := range order {
		top, err := summaryLine(p, leg, fmt.Sprintf("%s, k %d", draftWord(k.draft), k.k), colorAt(i), by[k],
			func(c ConfigResult) int { return c.Batch }, func(c ConfigResult) Summary { return c.TokS }, &bs)
		if err != nil {
			return nil, err
		}
		ymax = max(ymax, top)
	}
	var xs, ys, lo, hi []float64
	var base []BaselineResult
	for _, b := range res.Baselines {
		if b.Temp == cs[0].Temp && b.Threads == cs[0].Threads {
			base = append(base, b)
		}
	}
	slices.SortFunc(base, func(a, b BaselineResult) int { return a.Batch - b.Batch })
	for _, b := range base {
		xs, ys, lo, hi = append(xs, float64(b.Batch)), append(ys, b.Summary.Median), append(lo, b.Summary.Min), append(hi, b.Summary.Max)
		ymax = max(ymax, b.Summary.Max)
	}
	if len(xs) > 0 {
		if err := lineWith(p, leg, "plain decoding", color.Black, []vg.Length{vg.Points(4), vg.Points(3)}, xs, ys, lo, hi); err != nil {
			return nil, err
		}
	}
	slices.Sort(bs)
	p.X.Tick.Marker = intTicks(bs)
	pad := max(0.3, float64(bs[len(bs)-1]-bs[0])*0.04)
	p.X.Min, p.X.Max = float64(bs[0])-pad, float64(bs[len(bs)-1])+pad
	p.Y.Min, p.Y.Max = 0, ymax*1.08
	return fig, nil
}

// Timeline lanes and colours.
var tlStyle = []struct {
	kind  string
	slot0 bool
	lane  float64
	clr   color.Color
	name  string
}{
	{KindDraft, true, 1, color.RGBA{0, 114, 178, 255}, "draft, this request"},
	{KindDraft, false, 1, color.RGBA{150, 200, 235, 255}, "draft, other requests"},
	{KindPreDraft, true, 1, color.RGBA{230, 159, 0, 255}, "pre-draft (step n+1 during n)"},
	{KindPreDraft, false, 1, color.RGBA{245, 210, 140, 255}, "pre-draft, other requests"},
	{KindVerify, true, 0, color.RGBA{0, 158, 115, 255}, "target pass with this request"},
	{KindVerify, false, 0, color.RGBA{150, 215, 190, 255}, "target pass, other requests only"},
	{KindPrefill, true, 0, color.RGBA{90, 90, 90, 255}, "prefill, this request"},
	{KindPrefill, false, 0, color.RGBA{190, 190, 190, 255}, "prefill, other requests"},
}

// bars draws timeline intervals as rectangles in their lanes.
type bars struct {
	ivs   []Interval
	clr   color.Color
	lane  float64
	until time.Duration
}

func (b bars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, iv := range b.ivs {
		if iv.Start > b.until {
			continue
		}
		x0, x1 := trX(iv.Start.Seconds()*1e3), trX(min(iv.End, b.until).Seconds()*1e3)
		if x1-x0 < vg.Points(1.2) {
			x1 = x0 + vg.Points(1.2) // visible however short
		}
		y0, y1 := trY(b.lane-0.32), trY(b.lane+0.32)
		c.FillPolygon(b.clr, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
	}
}

func (b bars) Thumbnail(c *draw.Canvas) {
	r := c.Rectangle
	pad := (r.Max.Y - r.Min.Y) * 0.15
	c.FillPolygon(b.clr, []vg.Point{{X: r.Min.X, Y: r.Min.Y + pad}, {X: r.Max.X, Y: r.Min.Y + pad}, {X: r.Max.X, Y: r.Max.Y - pad}, {X: r.Min.X, Y: r.Max.Y - pad}})
}

// timelinePlot: the busy intervals of the draft and the target from the
// start of the run to the last chunk of the request in slot 0.
func timelinePlot(res *Results) (*figure, error) {
	tl := res.Timeline
	if tl == nil || len(tl.Intervals) == 0 {
		return nil, nil
	}
	until := tl.Last
	if until <= 0 {
		until = tl.Wall
	}
	fig := newFigure(fmt.Sprintf("Timeline of one request: %s", tl.Point), "time since the run started (ms)", "")
	p, leg := fig.p, fig.leg
	var draftBusy, targetBusy, both time.Duration
	// The other requests' intervals first, so that this request's are
	// drawn over them; the legend keeps tlStyle's order.
	var mine []plot.Plotter
	for _, st := range tlStyle {
		var ivs []Interval
		for _, iv := range tl.Intervals {
			if iv.Kind == st.kind && iv.Slot0 == st.slot0 {
				ivs = append(ivs, iv)
			}
		}
		if len(ivs) == 0 {
			continue
		}
		b := bars{ivs: ivs, clr: st.clr, lane: st.lane, until: until}
		if st.slot0 {
			mine = append(mine, b)
		} else {
			p.Add(b)
		}
		leg.add(st.name, b)
	}
	p.Add(mine...)
	for _, iv := range tl.Intervals {
		if iv.Start > until {
			continue
		}
		d := min(iv.End, until) - iv.Start
		if iv.Kind == KindDraft || iv.Kind == KindPreDraft {
			draftBusy += d
		} else {
			targetBusy += d
		}
	}
	both = overlapOf(tl.Intervals, until)
	fig.title += fmt.Sprintf("\ndraft busy %.0f%%, target busy %.0f%%, both at once %.0f%% of %.1f ms",
		100*draftBusy.Seconds()/until.Seconds(), 100*targetBusy.Seconds()/until.Seconds(), 100*both.Seconds()/until.Seconds(), until.Seconds()*1e3)
	p.Y.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "target"}, {Value: 1, Label: "draft"}}
	p.Y.Min, p.Y.Max = -0.6, 1.6
	p.X.Min, p.X.Max = 0, until.Seconds()*1e3*1.01
	return fig, nil
}

// overlapOf is the time until which a draft interval and a target
// interval are both running.
func overlapOf(ivs []Interval, until time.Duration) time.Duration {
	type edge struct {
		t     time.Duration
		draft bool
		d     int
	}
	var es []edge
	for _, iv := range ivs {
		if iv.Start >= until {
			continue
		}
		dr := iv.Kind == KindDraft || iv.Kind == KindPreDraft
		es = append(es, edge{iv.Start, dr, 1}, edge{min(iv.End, until), dr, -1})
	}
	slices.SortStableFunc(es, func(a, b edge) int { return cmp.Or(cmp.Compare(a.t, b.t), a.d-b.d) })
	var nd, nt int
	var last, tot time.Duration
	for _, e := range es {
		if nd > 0 && nt > 0 {
			tot += e.t - last
		}
		last = e.t
		if e.draft {
			nd += e.d
		} else {
			nt += e.d
		}
	}
	return tot
}
