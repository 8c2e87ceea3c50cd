package llamacpp_test

import (
	"fmt"
	"testing"

	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/model/modeltest"
	"github.com/specd-dev/specd/stages"
	"github.com/specd-dev/specd/tensor"
)

// specArchs are conformance-style random models (model/conformance_test.go's
// first two: GQA 8/4 heads, dim 256) with llama.cpp's real vocabularies,
// and prompts in them (ids of an English sentence).
var specArchs = []struct {
	name   string
	vocab  string
	opts   modeltest.Options
	prompt []int32
}{
	{"llama", "llama-spm", modeltest.Options{Arch: "llama", Dim: 256, Layers: 4, Heads: 8, KVHeads: 4, FFN: 512, Seed: 1},
		[]int32{1, 450, 4996, 17354, 1701, 29916, 432, 17204, 975, 278, 17366, 11203}},
	{"qwen2", "qwen2", modeltest.Options{Arch: "qwen2", Dim: 256, Layers: 2, Heads: 8, KVHeads: 4, FFN: 512, Seed: 2, Tied: true},
		[]int32{785, 3974, 13876, 38835, 34208, 916, 279, 15678, 5562, 13}},
}

// specPrompts are n prompts of different lengths cut from base.
func specPrompts(base []int32, n int) [][]int32 {
	ps := make([][]int32, n)
	for i := range ps {
		ps[i] = base[:len(base)-i%4]
		if i >= 4 {
			ps[i] = base[i%len(base):]
		}
	}
	return ps
}

// TestSpeculativeMatchesGoEngine is the exactness contract with the
// target on llama.cpp and the draft on the Go engine: greedy speculative
// output equals the Go engine's own target-only greedy output, token for
// token, for k = 1, 4 and 8, one sequence and four (one request more than
// slots, so sequences join and leave), on random llama and qwen2 models
// with real vocabularies. The draft is the target's Q8_0 copy, so blocks
// are partly accepted; every rollback and pass is read back from
// llama.cpp's memory (checked) and rejections must have happened. With
// -short, the llama model at k1/b1, k4/b4 and k8/b4 only.
func TestSpeculativeMatchesGoEngine(t *testing.T) {
	l := lib(t)
	const gen = 20
	for _, a := range specArchs {
		if testing.Short() && a.name != "llama" {
			continue // -short: the llama model only (qwen2's 152k vocabulary is slow on pure-Go kernels)
		}
		t.Run(a.name, func(t *testing.T) {
			o := a.opts
			o.VocabFrom = vocabFile(t, a.vocab)
			target := loadPair(t, l, o)
			o.Type = tensor.Q8_0
			dm := loadPair(t, nil, o).goM
			ps := specPrompts(a.prompt, 5)
			want := make([][]int32, len(ps))
			for i, p := range ps {
				want[i] = plainGreedy(t, goBackend(t, target.goM, 1, len(p)+gen+1, len(p), 2), p, gen)
			}
			// llama.cpp alone decodes the same: the premise of the comparison.
			if got := plainGreedy(t, accelBackend(t, target, 1, len(ps[0])+gen+1, len(ps[0])), ps[0], gen); fmt.Sprint(got) != fmt.Sprint(want[0]) {
				t.Fatalf("llama.cpp alone:\n got  %v\n want %v (Go engine)", got, want[0])
			}
			for _, k := range []int{1, 4, 8} {
				for _, seqs := range []int{1, 4} {
					if testing.Short() && (k == 1) != (seqs == 1) {
						continue // -short: k1/b1, k4/b4 and k8/b4
					}
					t.Run(fmt.Sprintf("k%d/b%d", k, seqs), func(t *testing.T) {
						maxPos := 64
						tb := &checked{Backend: accelBackend(t, target, seqs, maxPos, seqs*(k+1))}
						dr := draft.NewModel(goBackend(t, dm, seqs, maxPos, 16, 1), 0)
						cfg := stages.Config{Target: tb, Drafter: dr, Policy: draft.Policy{K: k}, Slots: seqs, MaxPos: maxPos, PreDraft: k == 4}
						n := min(len(ps), seqs+1)
						var reqs []stages.Request
						for i := range n {
							reqs = append(reqs, stages.Request{ID: fmt.Sprint(i), PromptIDs: ps[i], MaxTokens: gen})
						}
						res, p := runPipeline(t, cfg, reqs)
						for i := range n {
							r := res[fmt.Sprint(i)]
							if r.final.Err != nil {
								t.Fatalf("request %d: %v", i, r.final.Err)
							}
							if fmt.Sprint(r.tokens) != fmt.Sprint(want[i]) {
								t.Fatalf("request %d:\n got  %v\n want %v", i, r.tokens, want[i])
							}
						}
						if len(tb.bad) > 0 {
							t.Fatalf("llama.cpp memory out of step: %v", tb.bad)
						}
						m := p.Metrics().Snapshot()
						if m.Accepted == 0 || tb.cuts == 0 {
							t.Fatalf("accepted %d of %d draft tokens, %d rollbacks cut positions: want both", m.Accepted, m.DraftTokens, tb.cuts)
						}
						t.Logf("accepted %d of %d, %d verify passes, %d cuts", m.Accepted, m.DraftTokens, m.Passes, tb.cuts)
					})
				}
			}
		})
	}
}
