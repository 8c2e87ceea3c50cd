package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// f2 formats a Num with d decimals, "–" when not measured.
func fd(n Num, d int) string {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	return fmt.Sprintf("%.*f", d, f)
}

func pct(n Num) string {
	if math.IsNaN(float64(n)) {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n))
}

func spread(s Summary, d int, unit string) string {
	if s.N == 0 {
		return "–"
	}
	if s.N == 1 {
		return fmt.Sprintf("%.*f%s", d, s.Median, unit)
	}
	return fmt.Sprintf("%.*f%s (%.*f–%.*f)", d, s.Median, unit, d, s.Min, d, s.Max)
}

func driftMark(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" ⚠%d", n)
}

// WriteSummary prints the short table of specd bench's stdout: the five
// fastest configurations, the best and its knee, and warnings (drift,
// inexact output).
func (r *Results) WriteSummary(w io.Writer) {
	cs := slices.Clone(r.Configs)
	slices.SortStableFunc(cs, func(a, b ConfigResult) int {
		return -cmpNaN(a.Speedup.Median, b.Speedup.Median)
	})
	fmt.Fprintf(w, "%-34s %10s %9s %17s %6s %6s %9s %s\n", "configuration", "tok/s", "plain", "speedup (min-max)", "alpha", "mean", "predicted", "exact")
	for i, c := range cs {
		if i == 5 {
			fmt.Fprintf(w, "… %d more in results.csv\n", len(cs)-5)
			break
		}
		fmt.Fprintf(w, "%-34s %10.1f %9.1f %5.2fx (%.2f-%.2f) %6s %6s %8sx %s%s\n", c.Label, c.TokS.Median, c.BaselineTokS.Median,
			c.Speedup.Median, c.Speedup.Min, c.Speedup.Max, fd(c.Alpha, 3), fd(c.MeanAcceptedLength, 2), fd(c.Predicted, 2), c.Exact, driftMark(c.DriftedPairs))
	}
	for _, a := range AutoRows(r) {
		fmt.Fprintf(w, "auto: %s: %.2fx plain", a.Label, a.Speedup.Median)
		if a.BestK >= 0 {
			fmt.Fprintf(w, ", %.2fx the best fixed k (k %d at %.2fx)", a.VsBest, a.BestK, a.BestSpeedup)
		}
		fmt.Fprintf(w, "; mean k %s; %s\n", fd(Num(a.MeanK), 2), goalWord(a))
	}
	for _, p := range r.Peers {
		if p.Tool == PeerCompletion {
			fmt.Fprintf(w, "llama.cpp: plain %.1f tok/s (%s)", p.TokS.Median, p.Point)
			var best *PeerResult
			for i, q := range r.Peers {
				if q.Tool == PeerSpecSimple && q.Point.Temp == p.Point.Temp && q.Point.Threads == p.Point.Threads && (best == nil || q.TokS.Median > best.TokS.Median) {
					best = &r.Peers[i]
				}
			}
			if best != nil {
				fmt.Fprintf(w, "; speculative-simple at best k %d: %.1f tok/s (%.2fx), acceptance %s", best.Point.K, best.TokS.Median, float64(best.Speedup), fd(best.AcceptanceRate, 3))
			}
			fmt.Fprintln(w)
		}
	}
	if b := r.Best; b != nil {
		fmt.Fprintf(w, "best: %s at %.2fx", b.Label, b.Speedup.Median)
		if !b.Point.Adaptive && !b.Point.Auto {
			fmt.Fprintf(w, "; knee at k %d (%sx, the smallest k within 5%% of its series' best)", b.Knee, fd(b.KneeSpeedup, 2))
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "best: none (every configuration was inexact or unmeasured)")
	}
	for _, c := range r.Configs {
		if c.Exact == "no" {
			fmt.Fprintf(w, "INEXACT: %s: %d requests differ from plain decoding\n", c.Label, c.Mismatched)
		}
	}
	if r.DriftFlagged > 0 {
		fmt.Fprintf(w, "drift: %d pairs had a baseline more than %.0f%% from its median (worst %.0f%%); the machine was not steady\n",
			r.DriftFlagged, 100*r.Settings.DriftTol, 100*float64(r.Drift))
	}
}

func cmpNaN(a, b float64) int {
	switch {
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return -1
	case math.IsNaN(b):
		return 1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// WriteReport writes report.md: the machine, models and command, the
// best configuration, tables of speed, acceptance and latency, the
// baselines with their drift, the costs behind the theory, the
// per-category breakdown and the figures (names as WritePlots returned).
func (r *Results) WriteReport(w io.Writer, figs []string) error {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "# specd bench report\n\n")
	fmt.Fprintf(&b, "- **CPU**: %s\n", m.CPULine())
	if len(m.Flags) > 0 {
		fmt.Fprintf(&b, "- **CPU flags** (those kernels dispatch on): %s\n", strings.Join(m.Flags, " "))
	}
	if m.Load != "" {
		fmt.Fprintf(&b, "- **load average at the start**: %s\n", m.Load)
	}
	t := r.Models.Target
	fmt.Fprintf(&b, "- **target**: %s — %s, layers %d, dim %d, vocab %d, %s parameters, %s bytes, sha256 `%s`\n",
		t.Name, t.Arch, t.Layers, t.Dim, t.Vocab, thousands(t.Params), thousands(t.Bytes), t.SHA256)
	if d := r.Models.Draft; d != nil {
		fmt.Fprintf(&b, "- **draft**: %s — %s, layers %d, dim %d, %s parameters, %s bytes, sha256 `%s`\n",
			d.Name, d.Arch, d.Layers, d.Dim, thousands(d.Params), thousands(d.Bytes), d.SHA256)
	}
	s := r.Settings
	fmt.Fprintf(&b, "- **prompts**: %s (%d), %d tokens each (no stop at end of text); %d timed A/B pairs per configuration after %d warm-up pair(s); seed %d\n",
		s.Prompts, s.PromptCount, s.N, s.Reps, s.Warmup, s.Seed)
	if len(s.Synthetic) > 0 {
		fmt.Fprintf(&b, "- **synthetic acceptance** %v: the target computes for real, each draft token is accepted with that probability whatever it is; output is not the target's, exactness is not checked\n", s.Synthetic)
	}
	fmt.Fprintf(&b, "- **command**: `specd %s`\n\n", strings.Join(r.Args, " "))

	if bst := r.Best; bst != nil {
		fmt.Fprintf(&b, "**Best: %s at %s over plain decoding**", bst.Label, spread(bst.Speedup, 2, "×"))
		if !bst.Point.Adaptive && !bst.Point.Auto {
			fmt.Fprintf(&b, "; its knee is k %d (%s×): the smallest k within 5%% of the best of its series.", bst.Knee, fd(bst.KneeSpeedup, 2))
		}
		b.WriteString("\n\n")
	}
	if r.DriftFlagged > 0 {
		fmt.Fprintf(&b, "> ⚠ %d A/B pairs had a baseline more than %.0f%% from its median (worst %.0f%%): the machine was not steady; those pairs are marked ⚠.\n\n",
			r.DriftFlagged, 100*s.DriftTol, 100*float64(r.Drift))
	}

	b.WriteString("## Speed\n\nMedians over the A/B pairs, min–max in brackets. Speedup is each pair's ratio to the plain baseline of the same batch, temperature and threads, run next to it. Predicted: Leviathan et al.'s (1−α^(k+1))/((1−α)(kc+1)) from the measured α and c; \"with r\": the same with the measured cost r of a (k+1)-token pass in place of 1. CPU share: CPU time the process got per second of wall time (its threads' count on an idle machine); tok/CPU-s: tokens per CPU-second, less disturbed by other work but blind to what overlapping draft and verify gains.\n\n")
	b.WriteString("| configuration | tok/s | plain tok/s | speedup | predicted | with r | measured / predicted | exact | CPU share | tok/CPU-s |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range r.Configs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s%s | %s× | %s× | %s | %s | %s | %s |\n", c.Label, spread(c.TokS, 1, ""), fd(Num(c.BaselineTokS.Median), 1),
			spread(c.Speedup, 2, "×"), driftMark(c.DriftedPairs), fd(c.Predicted, 2), fd(c.PredictedPass, 2), pct(c.Theory), exactCell(c),
			fd(c.CPUShare, 2), fd(Num(c.CPUTokS.Median), 1))
	}
	if rows := AutoRows(r); len(rows) > 0 {
		writeAutoTable(&b, rows)
	}
	if len(r.Peers) > 0 {
		r.writePeerTable(&b)
	}
	if r.Profile != nil && len(r.Profile.Steps) > 0 {
		r.writeProfile(&b)
	}
	b.WriteString("\n## Acceptance\n\nα: per-token acceptance, the maximum-likelihood estimate Σaccepted / Σ(accepted + rejections), as the theory uses it; rate: accepted / drafted tokens (vLLM's draft acceptance rate); fit: α of a geometric fit α^i to the per-position acceptance; mean length: tokens committed per drafted step, the target's own included. A block the length limit cut before the target's own token is left out of all of these.\n\n")
	b.WriteString("| configuration | α | rate | fit | mean length | mean drafted | per position (P accepted) | histogram of accepted length |\n|---|---|---|---|---|---|---|---|\n")
	for _, c := range r.Configs {
		var pp []string
		for _, p := range c.PerPosition {
			pp = append(pp, fmt.Sprintf("%.2f", p.Rate))
		}
		var h []string
		for _, x := range c.Histogram {
			h = append(h, fmt.Sprint(x))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Label, fd(c.Alpha, 3), fd(c.AcceptanceRate, 3), fd(c.AlphaFit, 3),
			fd(c.MeanAcceptedLength, 2), fd(c.MeanDrafted, 2), strings.Join(pp, " "), strings.Join(h, " "))
	}
	b.WriteString("\n## Latency and overlap\n\nTTFT from admission to the first token; ITL: gaps between consecutive chunks (verified blocks arrive in bursts: one gap per block, not per token), as vLLM's bench reports them; TPOT: mean time per token after the first; first sentence: TTFT plus the time until the text first holds '.', '!' or '?' and a space. Busy: share of wall time the draft and the target computed, and both at once.\n\n")
	b.WriteString("| configuration | TTFT p50 ms | ITL p50 ms | ITL p99 ms | TPOT ms | first sentence p50 ms | draft busy | verify busy | overlap |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range r.Configs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s (%d) | %s | %s | %s |\n", c.Label, fd(c.TTFTP50, 2), fd(c.ITLP50, 2), fd(c.ITLP99, 2), fd(c.TPOT, 2),
			fd(c.TTFSP50, 1), c.TTFSReached, pct(c.DraftBusy), pct(c.VerifyBusy), pct(c.Overlap))
	}
	b.WriteString("\n## Plain baselines\n\nEvery measurement of each baseline, in the order run (⚠: more than the tolerance from the median).\n\n")
	b.WriteString("| baseline | tok/s | runs | worst deviation | exact | TTFT p50 ms | ITL p50 ms | CPU share | tok/CPU-s |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, bl := range r.Baselines {
		var runs []string
		for i, x := range bl.TokS {
			mark := ""
			if bl.Drifted[i] {
				mark = "⚠"
			}
			runs = append(runs, fmt.Sprintf("%.1f%s", x, mark))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", bl.Label, spread(bl.Summary, 1, ""), strings.Join(runs, " "), pct(bl.Worst), bl.Exact,
			fd(bl.TTFTP50, 2), fd(bl.ITLP50, 2), fd(bl.CPUShare, 2), fd(Num(bl.CPUTokS.Median), 1))
	}
	b.WriteString("\n## Costs behind the theory\n\nEach pass's least time over 16 interleaved rounds (after 2 warm-up rounds; every round runs every pass once) near the middle of a request.\n\n")
	b.WriteString("| target threads | target 1-token pass | draft 1-token pass | c | (k+1)-token passes: k → ms (r) |\n|---|---|---|---|---|\n")
	for _, c := range r.Costs {
		var ps []string
		for _, p := range c.Pass {
			ps = append(ps, fmt.Sprintf("%d → %.3f (%.2f)", p.K, p.Cost.Seconds()*1e3, float64(p.R)))
		}
		dr := "–"
		if c.Draft1 > 0 {
			dr = fmt.Sprintf("%.3f ms", c.Draft1.Seconds()*1e3)
		}
		fmt.Fprintf(&b, "| %d | %.3f ms | %s | %s | %s |\n", c.Threads, c.Target1.Seconds()*1e3, dr, fd(c.C, 3), strings.Join(ps, ", "))
	}
	if cats := r.categories(); len(cats) > 0 {
		b.WriteString("\n## By prompt category\n\nPer request: α, and the median speedup of each request over the same prompt in the paired baseline (its generated tokens over its time from admission to the end).\n\n")
		b.WriteString("| configuration |")
		for _, c := range cats {
			fmt.Fprintf(&b, " %s α | %s speedup |", c, c)
		}
		b.WriteString("\n|---|" + strings.Repeat("---|---|", len(cats)) + "\n")
		for _, c := range r.Configs {
			fmt.Fprintf(&b, "| %s |", c.Label)
			for _, name := range cats {
				a, sp := "–", "–"
				for _, cc := range c.Categories {
					if cc.Category == name {
						a, sp = fd(cc.Alpha, 3), fd(cc.Speedup, 2)+"×"
					}
				}
				fmt.Fprintf(&b, " %s | %s |", a, sp)
			}
			b.WriteString("\n")
		}
	}
	if len(figs) > 0 {
		fmt.Fprintf(&b, "\n## Figures\n\nAll measured on %s.\n\n", m.CPULine())
		for _, f := range figs {
			fmt.Fprintf(&b, "![%s](%s)\n\n", figureTitle(f), f)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// goalWord says whether an auto row met the goal, and if not, which part
// it missed.
func goalWord(a AutoRow) string {
	var miss []string
	if !a.MeetsPlain {
		miss = append(miss, fmt.Sprintf("below %.2f× plain", AutoGoalPlain))
	}
	switch {
	case a.BestK < 0:
		miss = append(miss, "no fixed k to compare")
	case !a.MeetsBest:
		miss = append(miss, fmt.Sprintf("more than %.0f%% below the best fixed k", 100*(1-AutoGoalBest)))
	}
	if a.Exact == "no" {
		miss = append(miss, "inexact")
	}
	if len(miss) == 0 {
		return "goal met"
	}
	return "goal missed: " + strings.Join(miss, ", ")
}

// writeAutoTable writes the auto configurations beside plain decoding and
// every fixed k of their series.
func writeAutoTable(b *strings.Builder, rows []AutoRow) {
	var ks []int
	for _, a := range rows {
		for _, f := range a.Fixed {
			if !slices.Contains(ks, f.K) {
				ks = append(ks, f.K)
			}
		}
	}
	slices.Sort(ks)
	fmt.Fprintf(b, "\n## Auto draft length against fixed k\n\nTokens per second (median of the repeats) of plain decoding, of every fixed k and of the auto policy (each step's k in [0, cap] from the measured pass costs and acceptance), with each one's median speedup over its paired plain runs in brackets. Goal: auto at least %.2f× plain and at least %.2f× the best fixed k's speedup (the best of several noisy medians, so this side of the comparison is biased upwards). k chosen: the share of the auto configuration's verified blocks that drafted k tokens (0: a plain step).\n\n", AutoGoalPlain, AutoGoalBest)
	b.WriteString("| configuration | plain tok/s |")
	for _, k := range ks {
		fmt.Fprintf(b, " k %d |", k)
	}
	b.WriteString(" auto | auto / plain | best fixed | auto / best fixed | k chosen (mean) | goal |\n|---|---|")
	b.WriteString(strings.Repeat("---|", len(ks)+6) + "\n")
	for _, a := range rows {
		fmt.Fprintf(b, "| %s | %s |", a.Label, fd(Num(a.PlainTokS), 1))
		for _, k := range ks {
			cell := "–"
			for _, f := range a.Fixed {
				if f.K == k {
					cell = fmt.Sprintf("%s (%s×)", fd(Num(f.TokS.Median), 1), fd(Num(f.Speedup.Median), 2))
					if f.Exact == "no" {
						cell += " **inexact**"
					}
				}
			}
			fmt.Fprintf(b, " %s |", cell)
		}
		best := "–"
		if a.BestK >= 0 {
			best = fmt.Sprintf("k %d (%.2f×)", a.BestK, a.BestSpeedup)
		}
		fmt.Fprintf(b, " %s | %s | %s | %s | %s (%s) | %s |\n", fd(Num(a.AutoTokS.Median), 1), spread(a.Speedup, 2, "×"), best,
			fd(Num(a.VsBest), 2)+"×", chosenShares(a.KChosen), fd(Num(a.MeanK), 2), goalWord(a))
	}
}

// chosenShares formats a histogram of chosen draft lengths as the share
// of each k that was chosen at all: "0: 62%, 2: 30%, 3: 8%".
func chosenShares(h []int) string {
	n := 0
	for _, c := range h {
		n += c
	}
	if n == 0 {
		return "–"
	}
	var out []string
	for k, c := range h {
		if c > 0 {
			out = append(out, fmt.Sprintf("%d: %.0f%%", k, 100*float64(c)/float64(n)))
		}
	}
	return strings.Join(out, ", ")
}

// writePeerTable writes llama.cpp's tools beside specd at batch 1.
func (r *Results) writePeerTable(b *strings.Builder) {
	b.WriteString("\n## llama.cpp beside specd\n\nThe same models, prompts, tokens per prompt, draft lengths, temperatures and threads, at batch 1 (llama-speculative-simple decodes one sequence). llama.cpp's tok/s is decoded tokens over decoding time (prefill excluded), the median over the repeats of all prompts, while specd's counts the whole run (prefill included, as everywhere in this report), so short runs favour llama.cpp; its plain decoding is llama-completion on the same prompts (llama-speculative-simple cannot run at k 0: this build asserts in llama_decode), its speedup llama-speculative-simple's tok/s over that, and its acceptance rate accepted / drafted tokens as it counts them. Its samplers are its defaults at the given temperature (top-k 40, top-p 0.95, min-p 0.05), specd's the temperature alone. specd's are from the A/B pairs above. llama-bench: plain tg from an empty cache, `-p 0 -n N`.\n\n")
	for _, p := range r.Peers {
		if p.Tool == PeerLlamaBench {
			fmt.Fprintf(b, "- **%s**: %s tok/s (`llama-bench %s`)\n", p.Label, spread(p.TokS, 1, ""), strings.Join(p.Args, " "))
		}
	}
	b.WriteString("\n| configuration | specd tok/s | specd speedup | specd acceptance rate | llama.cpp tok/s | llama.cpp speedup | llama.cpp acceptance rate | specd / llama.cpp tok/s |\n|---|---|---|---|---|---|---|---|\n")
	for _, p := range r.Peers {
		if p.Tool == PeerLlamaBench {
			continue
		}
		st, ss, sa := "–", "–", "–"
		var stoks float64 = math.NaN()
		if p.Point.Draft == DraftNone {
			for _, bl := range r.Baselines {
				if bl.Point == p.Point {
					stoks = bl.Summary.Median
					st, ss = spread(bl.Summary, 1, ""), "1"
				}
			}
		} else {
			for _, c := range r.Configs {
				if c.Point == p.Point {
					stoks = c.TokS.Median
					st, ss, sa = spread(c.TokS, 1, ""), spread(c.Speedup, 2, "×"), fd(c.AcceptanceRate, 3)
				}
			}
		}
		lsp := "1"
		if p.Point.Draft != DraftNone {
			lsp = fd(p.Speedup, 2) + "×"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s× |\n", p.Point, st, ss, sa, spread(p.TokS, 1, ""), lsp, fd(p.AcceptanceRate, 3), fd(Num(stoks/p.TokS.Median), 2))
	}
}

func exactCell(c ConfigResult) string {
	if c.Exact == "no" {
		return fmt.Sprintf("**NO** (%d requests)", c.Mismatched)
	}
	return c.Exact
}

func (r *Results) categories() []string {
	var out []string
	for _, c := range r.Configs {
		for _, cc := range c.Categories {
			if !slices.Contains(out, cc.Category) {
				out = append(out, cc.Category)
			}
		}
	}
	return out
}

func figureTitle(name string) string {
	switch name {
	case FigSpeedup:
		return "speedup against draft length, per batch size, with the theory"
	case FigPositions:
		return "acceptance per draft position with a geometric fit"
	case FigHistogram:
		return "histogram of accepted length per step"
	case FigBatch:
		return "throughput against batch size"
	case FigTimeline:
		return "timeline of one request: draft and target busy intervals"
	case FigKChosen:
		return "draft lengths the auto policy chose"
	case FigPeer:
		return "specd and llama.cpp: tokens per second against k at batch 1"
	}
	return name
}

// thousands formats n with thin separators: 5,770,496.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
