package llamacpp_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/stages"
	"github.com/specd-dev/specd/tensor"
)

// TestSamplingDistribution is stages' distribution test adapted to a real
// target on llama.cpp: with exact speculative sampling (target on
// llama.cpp, its Q4_0 copy as the draft on the Go engine, k = 1, with
// pre-drafting) the emitted sequences must follow the target's own
// distribution. Sampling keeps the top 3 tokens at temperature 1.5, so the
// first three tokens of a request take one of 27 sequences, each with the
// probability p(t1)·p(t2|t1)·p(t3|t1,t2) that llama.cpp's logits give
// through the same filter (stages.NewSampler); the first three tokens of
// 2,000 requests of six are checked against them by chi-square (cells
// expected below 5 pooled) at the 0.999 quantile, as stages does.
func TestSamplingDistribution(t *testing.T) {
	l := lib(t)
	target := loadPair(t, l, tinyLlama)
	do := tinyLlama
	do.Type = tensor.Q4_0 // close to the target, not equal: partial acceptance
	dm := loadPair(t, nil, do).goM
	const n, gen, maxTokens = 2000, 3, 6
	params := sample.Params{Temp: 1.5, TopK: 3}
	prompt := []int32{1, 17, 42, 99, 5}
	v := target.goM.Config.Vocab

	// The target's filtered distribution after every prefix, on llama.cpp.
	ref := accelBackend(t, target, 1, 16, 16)
	smp := stages.NewSampler(params, 0)
	dist := func(seq []int32) []float32 {
		if err := ref.Rollback(0, 0); err != nil {
			t.Fatal(err)
		}
		var b backend.Batch
		for i, tok := range seq {
			b.Add(tok, int32(i), 0, i == len(seq)-1)
		}
		lg := make([]float32, v)
		if err := ref.Forward(&b, lg); err != nil {
			t.Fatal(err)
		}
		p := make([]float32, v)
		smp.Probs(p, lg)
		return p
	}
	expect := map[string]float64{}
	var walk func(seq []int32, pr float64)
	walk = func(seq []int32, pr float64) {
		if len(seq) == len(prompt)+gen {
			expect[fmt.Sprint(seq[len(prompt):])] = pr
			return
		}
		for tok, q := range dist(seq) {
			if q > 0 {
				walk(append(append([]int32{}, seq...), int32(tok)), pr*float64(q))
			}
		}
	}
	walk(prompt, 1)
	if len(expect) != 27 {
		t.Fatalf("%d sequences with non-zero probability, want 27", len(expect))
	}

	const slots = 4
	cfg := stages.Config{
		Target:     &checked{Backend: accelBackend(t, target, slots, 16, slots*3)},
		Drafter:    draft.NewModel(goBackend(t, dm, slots, 16, 8, 1), 0),
		Policy:     draft.Policy{K: 1},
		Slots:      slots,
		MaxPos:     16,
		PreDraft:   true,
		NewSampler: stages.NewSampler,
	}
	var reqs []stages.Request
	for i := range n {
		p := params
		p.Seed = uint64(i)*7919 + 1
		reqs = append(reqs, stages.Request{ID: fmt.Sprint(i), PromptIDs: prompt, MaxTokens: maxTokens, Params: p})
	}
	res, pl := runPipeline(t, cfg, reqs)
	counts := map[string]float64{}
	for id, r := range res {
		if len(r.tokens) != maxTokens {
			t.Fatalf("request %s: %d tokens", id, len(r.tokens))
		}
		k := fmt.Sprint(r.tokens[:gen])
		if expect[k] == 0 {
			t.Fatalf("request %s: %v has probability 0 under the target", id, r.tokens)
		}
		counts[k]++
	}
	var x, poolE, poolC float64
	df := -1
	for k, pr := range expect {
		e, c := pr*n, counts[k]
		if e < 5 {
			poolE, poolC = poolE+e, poolC+c
			continue
		}
		x += (c - e) * (c - e) / e
		df++
	}
	if poolE > 0 {
		x += (poolC - poolE) * (poolC - poolE) / poolE
		df++
	}
	z := 3.09 // 0.999 quantile of chi-square, Wilson-Hilferty
	h := 2 / (9 * float64(df))
	crit := float64(df) * math.Pow(1-h+z*math.Sqrt(h), 3)
	if x > crit {
		t.Errorf("chi-square %.1f > %.1f (df %d)", x, crit, df)
	}
	m := pl.Metrics().Snapshot()
	if m.Accepted == 0 || m.Accepted == m.DraftTokens || m.PreDraftHits == 0 {
		t.Errorf("accepted %d of %d draft tokens, %d pre-drafts used: want partial acceptance and pre-drafts", m.Accepted, m.DraftTokens, m.PreDraftHits)
	}
	if bad := cfg.Target.(*checked).bad; len(bad) > 0 {
		t.Errorf("llama.cpp memory out of step: %v", bad[:min(len(bad), 5)])
	}
	t.Logf("chi-square %.1f, df %d, bound %.1f; acceptance %.2f; pre-drafts %d, used %d", x, df, crit, m.Acceptance(), m.PreDrafts, m.PreDraftHits)
}
