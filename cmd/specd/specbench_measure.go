package main

// The measurements of specbench, each printing its figures as it goes:
// forward-pass costs, plain decoding, speculative decoding per draft
// length (and its summary table), and a batch of sequences.

import (
	"context"
	"fmt"
	"time"

	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/stages"
)

// kRow is one draft length's figures for the summary table.
type kRow struct {
	k                    int
	alpha, r, pred, meas float64
	predR                float64 // prediction with the measured (k+1)-token pass cost
	pre                  float64 // speedup with pre-drafting (0: not measured)
}

// costs measures the 1-token forward passes of target and draft.
func (b *specBench) costs() error {
	var err error
	if b.tt1, err = b.e.ForwardCost(b.e.Target, b.vt, 1, len(b.prompt)+b.o.n); err != nil {
		return err
	}
	if b.e.Draft == nil {
		fmt.Fprintf(b.out, "cost: target 1 token %v, n-gram draft: c = 0\n", b.tt1.Round(time.Microsecond))
		return nil
	}
	if b.td1, err = b.e.ForwardCost(b.e.Draft, b.s.DraftThreads, 1, len(b.prompt)+b.o.n); err != nil {
		return err
	}
	b.c = b.td1.Seconds() / b.tt1.Seconds()
	fmt.Fprintf(b.out, "cost: target 1 token %v, draft 1 token %v: c = %.3f\n",
		b.tt1.Round(time.Microsecond), b.td1.Round(time.Microsecond), b.c)
	return nil
}

// plain measures plain decoding of one sequence: the loop of specd
// generate (the baseline of every speedup) and the same through the
// pipeline.
func (b *specBench) plain(ctx context.Context) error {
	b.loopCPU = -1
	for r := 0; r < b.reps; r++ {
		c0 := cpuTime()
		pt, err := b.e.PlainDecode(ctx, b.prompt, b.o.n, b.s.Threads, b.o.params)
		if err != nil {
			return err
		}
		if c := cpuTime() - c0; b.loopCPU < 0 || c < b.loopCPU {
			b.loopCPU = c
		}
		if pt.TPS > b.plainTok.TPS {
			b.plainTok = pt
		}
	}
	plainOpts := b.s
	plainOpts.Draft = engine.DraftNone
	plain, _, err := b.run(ctx, &plainOpts, 1, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(b.out, "plain decoding (loop):      %7.1f tok/s, %7.1f tok per CPU-second\n", b.plainTok.TPS, float64(b.o.n)/max(b.loopCPU.Seconds(), 1e-9))
	fmt.Fprintf(b.out, "plain decoding (pipeline):  %7.1f tok/s, %7.1f tok per CPU-second\n", tps(plain), perCPU(plain, b.lastCPU))
	return nil
}

// speculative measures one sequence decoded speculatively with draft
// length k without pre-drafting, then (unless --pre-draft=false) with it.
func (b *specBench) speculative(ctx context.Context, k int) (kRow, error) {
	so := b.s
	so.K = k
	row := kRow{k: k}
	ttk, err := b.e.ForwardCost(b.e.Target, b.vt, k+1, len(b.prompt)+b.o.n)
	if err != nil {
		return row, err
	}
	row.r = ttk.Seconds() / b.tt1.Seconds()
	preOpts := so
	so.PreDraft = false
	spec, specRes, err := b.run(ctx, &so, 1, false)
	if err != nil {
		return row, err
	}
	specCPU := b.lastCPU
	same := ""
	if b.o.params.Temp == 0 {
		same = ", output identical to plain decoding"
		if fmt.Sprint(specRes[0].tokens) != fmt.Sprint(b.plainTok.Tokens) {
			same = ", OUTPUT DIFFERS FROM PLAIN DECODING"
		}
	}
	row.alpha = spec.Acceptance()
	row.pred = draft.Speedup(row.alpha, k, b.c)
	row.meas = tps(spec) / b.plainTok.TPS
	e := draft.Speedup(row.alpha, k, 0)
	row.predR = e / (float64(k)*b.c + row.r)
	fmt.Fprintf(b.out, "k %d: target %d-token pass %v (%.2fx a 1-token pass)\n", k, k+1, ttk.Round(time.Microsecond), row.r)
	fmt.Fprintf(b.out, "speculative (pipeline):     %7.1f tok/s, %7.1f tok per CPU-second; speedup %.2fx over the loop%s\n",
		tps(spec), perCPU(spec, specCPU), row.meas, same)
	fmt.Fprintf(b.out, "alpha %.3f, mean accepted length %.2f, predicted speedup (1-a^(k+1))/((1-a)(kc+1)) = %.2fx; measured/predicted %.0f%%\n",
		row.alpha, spec.MeanAcceptedLength(), row.pred, 100*row.meas/row.pred)
	fmt.Fprintf(b.out, "  (that assumes a (k+1)-token pass costs one 1-token pass; with the measured %.2fx it predicts %.2fx: E/(kc+r) with E = %.2f tokens per step)\n",
		row.r, row.predR, e)
	spec.Write(prefixWriter{b.out, "  "})
	if bound := spec.PreDraftBound(); spec.Wall > 0 && preOpts.PreDraft && b.e.Draft != nil {
		fmt.Fprintf(b.out, "pre-drafting (draft step n+1 during verification of n) could save at most %v of %v (%.1f%%): %d of %d drafts accepted in full\n",
			bound.Round(time.Microsecond), spec.Wall.Round(time.Millisecond), 100*bound.Seconds()/spec.Wall.Seconds(), spec.FullAccepts, spec.Drafts)
		pre, _, err := b.run(ctx, &preOpts, 1, false)
		if err != nil {
			return row, err
		}
		row.pre = tps(pre) / b.plainTok.TPS
		fmt.Fprintf(b.out, "speculative with pre-drafting (--pre-draft-min %g): %7.1f tok/s, %7.1f tok per CPU-second; speedup %.2fx over the loop (%.2fx without; %d pre-drafts, %d used, overlap %v)\n",
			preOpts.PreDraftMin, tps(pre), perCPU(pre, b.lastCPU), row.pre, tps(pre)/tps(spec), pre.PreDrafts, pre.PreDraftHits, pre.Overlap.Round(time.Microsecond))
	}
	return row, nil
}

// summary prints one row per draft length and names the best k by the
// predicted speedup (the draft length Leviathan et al.'s formula picks)
// and by the measured one.
func (b *specBench) summary(rows []kRow) {
	bestPred, bestMeas := 0, 0
	for i, r := range rows {
		if r.pred > rows[bestPred].pred {
			bestPred = i
		}
		if max(r.meas, r.pre) > max(rows[bestMeas].meas, rows[bestMeas].pre) {
			bestMeas = i
		}
	}
	fmt.Fprintf(b.out, "\nsummary (c = %.3f; speedups over the plain loop at %.1f tok/s):\n", b.c, b.plainTok.TPS)
	fmt.Fprintf(b.out, "| k | alpha | (k+1)-pass / 1-pass | predicted | measured | measured / predicted | with pre-drafting | / predicted |\n|---|---|---|---|---|---|---|---|\n")
	for i, r := range rows {
		mark := ""
		if i == bestPred {
			mark = " (best predicted)"
		}
		pre, preRatio := "n/a", "n/a"
		if r.pre > 0 {
			pre, preRatio = fmt.Sprintf("%.2fx", r.pre), fmt.Sprintf("%.0f%%", 100*r.pre/r.pred)
		}
		fmt.Fprintf(b.out, "| %d%s | %.3f | %.2f | %.2fx | %.2fx | %.0f%% | %s | %s |\n",
			r.k, mark, r.alpha, r.r, r.pred, r.meas, 100*r.meas/r.pred, pre, preRatio)
	}
	fmt.Fprintf(b.out, "fastest measured: k %d\n", rows[bestMeas].k)
}

// batch runs seqs sequences through the concurrent pipeline (verifying
// what is ready, and gathering every sequence per pass) and one stage at a
// time, with the largest draft length given.
func (b *specBench) batch(ctx context.Context, seqs int) error {
	line := func(name string, m stages.Snapshot, c time.Duration) {
		fmt.Fprintf(b.out, "%d sequences, %-34s %7.1f tok/s, %7.1f per CPU-s (alpha %.2f, %.1f blocks per pass, draft busy %v, verify busy %v, overlap %v)\n",
			seqs, name+":", tps(m), perCPU(m, c), m.Acceptance(), float64(m.Steps)/max(float64(m.Passes), 1), m.DraftBusy.Round(time.Millisecond),
			m.VerifyBusy.Round(time.Millisecond), m.Overlap.Round(time.Millisecond))
	}
	conc, _, err := b.run(ctx, &b.s, seqs, false)
	if err != nil {
		return err
	}
	concCPU := b.lastCPU
	gathered := b.s
	gathered.VerifyBatch = seqs
	gath, _, err := b.run(ctx, &gathered, seqs, false)
	if err != nil {
		return err
	}
	gathCPU := b.lastCPU
	ser, _, err := b.run(ctx, &b.s, seqs, true)
	if err != nil {
		return err
	}
	fmt.Fprintf(b.out, "k %d:\n", b.s.K)
	line(fmt.Sprintf("concurrent (verify-batch %d)", b.s.VerifyBatch), conc, concCPU)
	line(fmt.Sprintf("concurrent (verify-batch %d)", seqs), gath, gathCPU)
	line("one stage at a time", ser, b.lastCPU)
	fmt.Fprintf(b.out, "concurrency gain %.2fx (verify-batch %d), %.2fx (verify-batch %d)\n",
		tps(conc)/tps(ser), b.s.VerifyBatch, tps(gath)/tps(ser), seqs)
	return nil
}
