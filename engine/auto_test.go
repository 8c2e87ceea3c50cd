package engine

import (
	"context"
	"runtime"
	"slices"
	"testing"

	"github.com/specd-dev/specd/sample"
)

// TestAutoPipeline: with the auto draft-length policy (-k auto), greedy
// output through the pipeline is PlainDecode's, with the bundled draft
// and with prompt lookup; every step is the policy's; and pipelines of
// one shape share one cost table, calibrated by the first to run.
func TestAutoPipeline(t *testing.T) {
	const n = 24
	for _, d := range []string{DraftBundled, DraftNGram} {
		t.Run(d, func(t *testing.T) {
			o := bundled()
			o.Draft, o.Auto, o.K = d, true, 8
			e := open(t, o)
			prompt, err := e.Encode("The jury said", true)
			if err != nil {
				t.Fatal(err)
			}
			want, err := e.PlainDecode(context.Background(), prompt, n, 1, sample.Params{})
			if err != nil {
				t.Fatal(err)
			}
			maxPos := len(prompt) + n + o.K + 1
			cfg, err := e.PipelineConfig(1, maxPos, len(prompt))
			if err != nil {
				t.Fatal(err)
			}
			if !cfg.Policy.Auto || cfg.Policy.K != 8 || cfg.Costs == nil || cfg.Costs.Calibrated() {
				t.Fatalf("auto config: policy %+v, costs %v", cfg.Policy, cfg.Costs)
			}
			p, err := e.NewPipeline(1, maxPos, len(prompt))
			if err != nil {
				t.Fatal(err)
			}
			got, final := runPipeline(t, p, prompt, n)
			if final.Reason == "stop" {
				want.Tokens = want.Tokens[:len(got)]
			}
			if !slices.Equal(got, want.Tokens) {
				t.Errorf("pipeline\n %v\nplain\n %v", got, want.Tokens)
			}
			st := p.Metrics().Snapshot()
			if st.AutoSteps != st.Steps || st.Steps == 0 {
				t.Errorf("%d auto steps of %d", st.AutoSteps, st.Steps)
			}
			if !cfg.Costs.Calibrated() {
				t.Error("the second pipeline of the shape did not share the first's cost table")
			}
			if other, err := e.PipelineConfig(2, maxPos, len(prompt)); err != nil || other.Costs == cfg.Costs {
				t.Errorf("another shape: %v, shares the table: %v", err, other.Costs == cfg.Costs)
			}
		})
	}
}

// TestSharedCores: the pipeline's auto policy is told that the draft
// shares the target's cores exactly when the Go target's verify threads
// and the draft's outnumber the CPUs (then overlap hides no draft time);
// prompt lookup and plain decoding have no draft threads.
func TestSharedCores(t *testing.T) {
	o := bundled()
	o.Draft, o.Auto, o.K = DraftBundled, true, 8
	e := open(t, o)
	cpus := runtime.NumCPU()
	for _, tc := range []struct {
		threads, draftThreads int
		want                  bool
	}{
		{cpus, 1, true},
		{max(cpus-1, 1), 1, cpus == 1},
		{1, max(cpus-1, 1), cpus == 1},
		{1, cpus, true},
	} {
		w := e.Options()
		w.Threads, w.VerifyThreads, w.DraftThreads = tc.threads, tc.threads, tc.draftThreads
		cfg, err := e.PipelineConfigWith(w, 1, 64, 8)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.SharedCores != tc.want {
			t.Errorf("%d target and %d draft threads on %d CPUs: SharedCores %v, want %v", tc.threads, tc.draftThreads, cpus, cfg.SharedCores, tc.want)
		}
	}
	w := e.Options()
	w.Draft = DraftNone
	if cfg, err := e.PipelineConfigWith(w, 1, 64, 8); err != nil || cfg.SharedCores {
		t.Errorf("plain decoding: SharedCores %v (%v), want false", cfg.SharedCores, err)
	}
}
