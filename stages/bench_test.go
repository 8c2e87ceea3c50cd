package stages_test

import (
	"fmt"
	"testing"

	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/model/modeltest"
	"github.com/specd-dev/specd/stages"
	"github.com/specd-dev/specd/tensor"
)

// BenchmarkPipeline decodes 4 sequences of 64 tokens with a random Q8_0
// target (dim 256, 4 layers, vocab 2048) through the pipeline: without a
// draft, with the target as its own draft (α = 1, the upper bound) and with
// prompt lookup; concurrent and serial. It reports tokens per second and
// the acceptance rate.
func BenchmarkPipeline(b *testing.B) {
	opts := modeltest.Options{Dim: 256, Layers: 4, Heads: 8, KVHeads: 4, FFN: 768, Vocab: 2048, Seed: 5, Type: tensor.Q8_0}
	target := loadModel(b, "bench-target", opts)
	const seqs, gen, k = 4, 64, 4
	for _, tc := range []struct {
		name   string
		draft  string
		serial bool
	}{
		{"plain", "none", false},
		{"self", "self", false},
		{"self-serial", "self", true},
		{"ngram", "ngram", false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var generated, accepted, drafted int
			for i := 0; i < b.N; i++ {
				tb := cpuBackend(b, target, seqs, 128, seqs*(k+1), 1)
				cfg := stages.Config{Target: tb, Slots: seqs, MaxPos: 128, Serial: tc.serial, Policy: draft.Policy{K: k}}
				switch tc.draft {
				case "self":
					cfg.Drafter = draft.NewModel(cpuBackend(b, target, seqs, 128, 16, 1), 0)
				case "ngram":
					cfg.Drafter = draft.NewNGram()
				}
				var reqs []stages.Request
				for j, p := range modelPrompts(seqs) {
					reqs = append(reqs, stages.Request{ID: fmt.Sprint(j), PromptIDs: p, MaxTokens: gen})
				}
				_, p := runPipeline(b, cfg, reqs)
				m := p.Metrics().Snapshot()
				generated += m.Generated
				accepted += m.Accepted
				drafted += m.DraftTokens
			}
			b.ReportMetric(float64(generated)/b.Elapsed().Seconds(), "tok/s")
			if drafted > 0 {
				b.ReportMetric(float64(accepted)/float64(drafted), "alpha")
			}
		})
	}
}
