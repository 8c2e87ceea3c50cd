package stages_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/stages"
	"github.com/specd-dev/specd/verify/verifytest"
)

const vocab = 16

// result is what a consumer saw for one request.
type result struct {
	tokens []int32
	final  stages.Chunk
	chunks int
}

// runPipeline serves reqs and collects every request's output, checking
// that chunks are numbered without gaps and end in exactly one final.
func runPipeline(t testing.TB, cfg stages.Config, reqs []stages.Request) (map[string]*result, *stages.Pipeline) {
	t.Helper()
	p, err := stages.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	in := make(chan stages.Request)
	out := make(chan stages.Chunk, 16)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, in, out) }()
	go func() {
		defer close(in)
		for _, r := range reqs {
			select {
			case in <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	res := map[string]*result{}
	finals := 0
	take := func(c stages.Chunk) {
		r := res[c.ID]
		if r == nil {
			r = &result{}
			res[c.ID] = r
		}
		if r.final.Final {
			t.Fatalf("%s: chunk %d after the final one", c.ID, c.Seq)
		}
		if c.Seq != r.chunks {
			t.Fatalf("%s: chunk %d, want %d (gap)", c.ID, c.Seq, r.chunks)
		}
		r.chunks++
		r.tokens = append(r.tokens, c.Tokens...)
		if c.Final {
			r.final = c
			finals++
		}
	}
	var runErr error
	running := true
	for running {
		select {
		case c := <-out:
			take(c)
		case runErr = <-done:
			running = false
		case <-ctx.Done():
			t.Fatalf("timed out with %d of %d requests finished", finals, len(reqs))
		}
	}
	// Run has returned: everything it published is buffered in out.
	for len(out) > 0 {
		take(<-out)
	}
	if runErr != nil {
		t.Fatalf("Run: %v", runErr)
	}
	if finals != len(reqs) {
		t.Fatalf("%d final chunks for %d requests", finals, len(reqs))
	}
	return res, p
}

func prompts(n int) [][]int32 {
	var ps [][]int32
	for i := 0; i < n; i++ {
		p := make([]int32, 1+(i*3)%7)
		for j := range p {
			p[j] = int32((i*5 + j*3 + 1) % vocab)
		}
		ps = append(ps, p)
	}
	return ps
}

// TestGreedyExactness checks that speculative output equals plain greedy
// decoding of the target, token for token, for k = 1..8 (fixed, and the
// largest of the auto policy's, on a synthetic cost model where
// speculation pays at good acceptance), 1..8 sequences with different
// prompts and lengths, and four drafters: none, a noisy model (partial
// acceptance), the target itself (full acceptance, which is asserted) and
// prompt lookup.
func TestGreedyExactness(t *testing.T) {
	type drafter struct {
		name string
		make func(seqs int) draft.Drafter
	}
	drafters := []drafter{
		{"none", func(int) draft.Drafter { return nil }},
		{"noisy", func(seqs int) draft.Drafter {
			return draft.NewModel(verifytest.NewFake(vocab, seqs, 512, 64, 4, verifytest.Term{Seed: 1, Scale: 1}, verifytest.Term{Seed: 3, Scale: 0.5}), 0)
		}},
		{"self", func(seqs int) draft.Drafter {
			return draft.NewModel(verifytest.NewFake(vocab, seqs, 512, 64, 4), 0)
		}},
		{"ngram", func(int) draft.Drafter { return draft.NewNGram() }},
	}
	ref := verifytest.NewFake(vocab, 1, 512, 512, 4)
	const gen = 30
	for _, d := range drafters {
		for k := 1; k <= 8; k++ {
			for _, seqs := range []int{1, 3, 8} {
				for _, preDraft := range []bool{false, true} {
					for _, auto := range []bool{false, true} {
						if d.name == "none" && (k > 1 || preDraft || auto) {
							continue
						}
						name := fmt.Sprintf("%s/k%d/b%d/pre=%v", d.name, k, seqs, preDraft)
						if auto {
							name += "/auto"
						}
						t.Run(name, func(t *testing.T) { testGreedyExactness(t, ref, d.name, d.make, k, seqs, preDraft, auto, gen) })
					}
				}
			}
		}
	}
}

// testGreedyExactness is one case of TestGreedyExactness.
func testGreedyExactness(t *testing.T, ref *verifytest.Fake, name string, mk func(int) draft.Drafter, k, seqs int, preDraft, auto bool, gen int) {
	cfg := stages.Config{
		Target: verifytest.NewFake(vocab, seqs, 512, 72, 4), Drafter: mk(seqs), Policy: draft.Policy{K: k, Auto: auto},
		Slots: seqs, MaxPos: 512, PreDraft: preDraft,
	}
	if auto {
		cfg.Clock = syntheticCosts(&cfg, flatCost, 10*time.Microsecond)
	}
	if k%2 == 1 {
		cfg.VerifyBatch = seqs // wait for every sequence in flight
	}
	ps := prompts(seqs + 2) // more requests than slots: joins and leaves
	var reqs []stages.Request
	for i, pr := range ps {
		// Every third request drafts fewer tokens than the others: ragged
		// blocks in one pass.
		reqs = append(reqs, stages.Request{ID: fmt.Sprint(i), PromptIDs: pr, MaxTokens: gen - i, K: (i % 3) * k / 2})
	}
	res, p := runPipeline(t, cfg, reqs)
	for i, pr := range ps {
		want, err := ref.Greedy(0, pr, gen-i)
		if err != nil {
			t.Fatal(err)
		}
		r := res[fmt.Sprint(i)]
		if r.final.Err != nil || r.final.Reason != "length" {
			t.Fatalf("request %d: final %+v", i, r.final)
		}
		if fmt.Sprint(r.tokens) != fmt.Sprint(want) {
			t.Fatalf("request %d:\n got  %v\n want %v", i, r.tokens, want)
		}
	}
	m := p.Metrics().Snapshot()
	if m.Requests != len(ps) || m.Generated != sumGen(ps, gen) {
		t.Errorf("metrics: %d requests, %d tokens", m.Requests, m.Generated)
	}
	switch name {
	case "self":
		if m.Accepted != m.DraftTokens || m.DraftTokens == 0 {
			t.Errorf("self-draft accepted %d of %d", m.Accepted, m.DraftTokens)
		}
	case "noisy":
		// The auto policy, timed by the wall clock, may stop drafting a
		// noisy draft but for a few probes, all of which may be accepted
		// (or none): there only the count is checked.
		switch {
		case auto && m.Accepted > m.DraftTokens:
			t.Errorf("noisy draft accepted %d of %d", m.Accepted, m.DraftTokens)
		case !auto && (m.Accepted == m.DraftTokens || m.Accepted == 0):
			t.Errorf("noisy draft accepted %d of %d, want partial", m.Accepted, m.DraftTokens)
		}
	case "none":
		if m.DraftTokens != 0 {
			t.Errorf("no drafter but %d draft tokens", m.DraftTokens)
		}
	}
	if preDraft && name == "self" && seqs == 1 && (m.PreDrafts == 0 || m.PreDraftHits == 0) {
		t.Errorf("self-draft, one sequence: %d pre-drafts, %d used", m.PreDrafts, m.PreDraftHits)
	}
	if !preDraft && m.PreDrafts != 0 {
		t.Errorf("%d pre-drafts with PreDraft off", m.PreDrafts)
	}
	if auto {
		if m.AutoSteps == 0 {
			t.Errorf("auto policy: no auto steps")
		}
		t.Logf("k chosen %v, %d probes", m.KChosen, m.Probes)
	}
}

func sumGen(ps [][]int32, gen int) int {
	n := 0
	for i := range ps {
		n += gen - i
	}
	return n
}

// TestAdaptiveAndPMin runs the adaptive policy and p_min stop: output
// must still equal plain greedy decoding.
func TestAdaptiveAndPMin(t *testing.T) {
	ref := verifytest.NewFake(vocab, 1, 512, 512, 4)
	for _, pol := range []draft.Policy{{K: 6, Adaptive: true, Cost: 0.2}, {K: 6}} {
		target := verifytest.NewFake(vocab, 4, 512, 64, 4)
		dr := draft.NewModel(verifytest.NewFake(vocab, 4, 512, 64, 4, verifytest.Term{Seed: 1, Scale: 1}, verifytest.Term{Seed: 3, Scale: 0.7}), 0.15)
		cfg := stages.Config{Target: target, Drafter: dr, Policy: pol, Slots: 4, MaxPos: 512}
		ps := prompts(6)
		var reqs []stages.Request
		for i, pr := range ps {
			reqs = append(reqs, stages.Request{ID: fmt.Sprint(i), PromptIDs: pr, MaxTokens: 40})
		}
		res, _ := runPipeline(t, cfg, reqs)
		for i, pr := range ps {
			want, _ := ref.Greedy(0, pr, 40)
			if got := res[fmt.Sprint(i)].tokens; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%+v request %d:\n got  %v\n want %v", pol, i, got, want)
			}
		}
	}
}

// TestEOSAndErrors: a request with a bad token fails alone, EOS stops a
// sequence without being emitted, and other requests are unaffected.
func TestEOSAndErrors(t *testing.T) {
	ref := verifytest.NewFake(vocab, 1, 512, 512, 4)
	base, _ := ref.Greedy(0, []int32{1, 2, 3}, 20)
	eos := base[7]
	// The first occurrence of eos in the reference output ends it.
	stop := 0
	for stop < len(base) && base[stop] != eos {
		stop++
	}
	target := verifytest.NewFake(vocab, 2, 512, 64, 4)
	cfg := stages.Config{Target: target, Drafter: draft.NewNGram(), Policy: draft.Policy{K: 3}, Slots: 2, MaxPos: 512, Stop: func(t int32) bool { return t == eos }}
	reqs := []stages.Request{
		{ID: "bad", PromptIDs: []int32{1, vocab + 5}, MaxTokens: 5},
		{ID: "ok", PromptIDs: []int32{1, 2, 3}, MaxTokens: 20},
		{ID: "zero", PromptIDs: []int32{1}, MaxTokens: 0},
		{ID: "text", Prompt: "hello", MaxTokens: 3},
		{ID: "long", PromptIDs: make([]int32, 600), MaxTokens: 3},
	}
	res, p := runPipeline(t, cfg, reqs)
	for _, id := range []string{"bad", "zero", "text", "long"} {
		r := res[id]
		if r.final.Reason != "error" || !errors.Is(r.final.Err, stages.ErrRequest) || len(r.tokens) != 0 {
			t.Errorf("%s: final %+v, tokens %v", id, r.final, r.tokens)
		}
	}
	ok := res["ok"]
	if ok.final.Reason != "stop" || fmt.Sprint(ok.tokens) != fmt.Sprint(base[:stop]) {
		t.Errorf("ok: reason %q tokens %v, want stop and %v", ok.final.Reason, ok.tokens, base[:stop])
	}
	if m := p.Metrics().Snapshot(); m.Failed != 4 || m.Requests != 5 {
		t.Errorf("metrics %+v", m)
	}
}

// TestCancel stops a pipeline whose requests would run long.
func TestCancel(t *testing.T) {
	target := verifytest.NewFake(vocab, 2, 1<<14, 64, 4)
	p, err := stages.New(stages.Config{Target: target, Drafter: draft.NewNGram(), Policy: draft.Policy{K: 4}, Slots: 2, MaxPos: 1 << 14})
	if err != nil {
		t.Fatal(err)
	}
	in := make(chan stages.Request, 1)
	out := make(chan stages.Chunk)
	in <- stages.Request{ID: "a", PromptIDs: []int32{1}, MaxTokens: 1 << 13}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, in, out) }()
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case <-out: // running
	case <-timer.C:
		t.Fatal("no output")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v", err)
		}
	case <-timer.C:
		t.Fatal("Run did not return after cancel")
	}
}

// TestRequestCancel ends one request through its own context.
func TestRequestCancel(t *testing.T) {
	target := verifytest.NewFake(vocab, 2, 1<<12, 64, 4)
	rctx, rcancel := context.WithCancel(context.Background())
	rcancel()
	res, _ := runPipeline(t, stages.Config{Target: target, Drafter: draft.NewNGram(), Policy: draft.Policy{K: 2}, Slots: 2, MaxPos: 1 << 12},
		[]stages.Request{{ID: "c", PromptIDs: []int32{1}, MaxTokens: 1000, Ctx: rctx}, {ID: "d", PromptIDs: []int32{2}, MaxTokens: 10}})
	if r := res["c"]; !errors.Is(r.final.Err, context.Canceled) {
		t.Errorf("cancelled request: %+v after %d tokens", r.final, len(r.tokens))
	}
	if r := res["d"]; r.final.Err != nil || len(r.tokens) != 10 {
		t.Errorf("other request: %+v, %d tokens", r.final, len(r.tokens))
	}
	if r := res["c"]; len(r.tokens) != 0 {
		t.Errorf("request cancelled before admission generated %d tokens", len(r.tokens))
	}
}

func TestRunTwice(t *testing.T) {
	target := verifytest.NewFake(vocab, 1, 64, 8, 4)
	_, p := runPipeline(t, stages.Config{Target: target, Slots: 1, MaxPos: 64}, []stages.Request{{ID: "a", PromptIDs: []int32{1}, MaxTokens: 3}})
	if p.Graph() == nil {
		t.Error("no graph after Run")
	}
	in := make(chan stages.Request)
	close(in)
	if err := p.Run(context.Background(), in, make(chan stages.Chunk)); !errors.Is(err, stages.ErrRan) {
		t.Errorf("second Run = %v, want ErrRan", err)
	}
}

// TestSerialSameOutput: the serial baseline decodes the same tokens.
func TestSerialSameOutput(t *testing.T) {
	ref := verifytest.NewFake(vocab, 1, 512, 512, 4)
	target := verifytest.NewFake(vocab, 4, 512, 64, 4)
	dr := draft.NewModel(verifytest.NewFake(vocab, 4, 512, 64, 4, verifytest.Term{Seed: 1, Scale: 1}, verifytest.Term{Seed: 3, Scale: 0.5}), 0)
	cfg := stages.Config{Target: target, Drafter: dr, Policy: draft.Policy{K: 4}, Slots: 4, MaxPos: 512, Serial: true}
	ps := prompts(4)
	var reqs []stages.Request
	for i, pr := range ps {
		reqs = append(reqs, stages.Request{ID: fmt.Sprint(i), PromptIDs: pr, MaxTokens: 25})
	}
	res, p := runPipeline(t, cfg, reqs)
	for i, pr := range ps {
		want, _ := ref.Greedy(0, pr, 25)
		if got := res[fmt.Sprint(i)].tokens; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("request %d differs", i)
		}
	}
	if m := p.Metrics().Snapshot(); m.Overlap != 0 {
		t.Errorf("serial pipeline overlapped draft and verify for %v", m.Overlap)
	}
}

// TestSamplingDistribution: with sampling, the tokens generated with a
// noisy draft follow the target's distribution. The fake target sees only
// the last token (a Markov chain), so every transition a → b in the output,
// wherever it falls in a block (accepted draft, correction, bonus, or a
// pre-drafted block), must follow p(b | a): checked by chi-square over all
// 16 rows at once, with and without pre-drafting, and with the auto
// policy's draft lengths (on a synthetic cost model where they vary).
func TestSamplingDistribution(t *testing.T) {
	for _, pre := range []string{"off", "on", "partial", "auto"} {
		t.Run("pre="+pre, func(t *testing.T) { testSamplingDistribution(t, pre) })
	}
}

// stopAfter makes every pre-draft (the drafts that carry a Stop) stop
// after n proposals, so that the next step continues a partial pre-draft.
type stopAfter struct {
	draft.Drafter
	n int
}

func (d stopAfter) Draft(r *draft.Request) error {
	if r.Stop == nil {
		return d.Drafter.Draft(r)
	}
	orig, calls := r.Stop, 0
	r.Stop = func() bool { calls++; return calls >= d.n }
	defer func() { r.Stop = orig }()
	return d.Drafter.Draft(r)
}

// testSamplingDistribution runs the check on one sample and, only when
// the statistic passes the 0.999 quantile, on a second sample with other
// seeds: a correct sampler fails both about once in a million runs, while
// a biased one fails both. (At a fixed k a sample is the same whatever the
// pre-drafts, TestSampledReproducible; auto's choices follow its
// measurements.)
func testSamplingDistribution(t *testing.T, pre string) {
	for try := uint64(0); ; try++ {
		x, crit, df := samplingChiSquare(t, pre, try)
		if x <= crit {
			return
		}
		if try == 1 {
			t.Fatalf("chi-square %.1f > %.1f (df %d) on two independent samples", x, crit, df)
		}
		t.Logf("chi-square %.1f > %.1f (df %d): drawing a second, independent sample", x, crit, df)
	}
}

// samplingChiSquare decodes the sample with seed base try and returns its
// chi-square statistic over all transitions, the 0.999 quantile and the
// degrees of freedom; it fails t on anything that is wrong whatever the
// sample (no partial acceptance, no pre-draft used).
func samplingChiSquare(t *testing.T, pre string, try uint64) (x, crit float64, df int) {
	preDraft := pre == "on" || pre == "partial"
	const n, gen = 1500, 16
	const temp = 0.8
	// p(· | a) for every last token a.
	sharp := verifytest.Term{Seed: 1, Scale: 3}
	tf := verifytest.NewFake(vocab, 1, 8, 8, 1, sharp)
	pd := make([][]float32, vocab)
	lg := make([]float32, vocab)
	for a := range pd {
		var b backend.Batch
		b.Add(int32(a), 0, 0, true)
		if err := tf.Rollback(0, 0); err != nil {
			t.Fatal(err)
		}
		if err := tf.Forward(&b, lg); err != nil {
			t.Fatal(err)
		}
		pd[a] = make([]float32, vocab)
		(&verifytest.Softmax{Temp: temp}).Probs(pd[a], lg)
	}

	target := verifytest.NewFake(vocab, 2, 64, 64, 1, sharp)
	var dr draft.Drafter = draft.NewModel(verifytest.NewFake(vocab, 2, 64, 64, 1, sharp, verifytest.Term{Seed: 3, Scale: 1}), 0)
	if pre == "partial" {
		dr = stopAfter{dr, 2} // the bonus guess and one proposal of k = 3
	}
	cfg := stages.Config{
		Target: target, Drafter: dr, Policy: draft.Policy{K: 3}, Slots: 2, MaxPos: 64, PreDraft: preDraft,
		NewSampler: func(p sample.Params, stream uint64) backend.Sampler {
			return &verifytest.Softmax{State: p.Seed*2 + stream, Temp: p.Temp}
		},
	}
	if pre == "auto" {
		cfg.Policy = draft.Policy{K: 3, Auto: true}
		cfg.Clock = syntheticCosts(&cfg, func(n, _ int) time.Duration { return time.Duration(100+15*n) * time.Microsecond }, 5*time.Microsecond)
	}
	prompt := []int32{5, 9}
	var reqs []stages.Request
	for i := 0; i < n; i++ {
		reqs = append(reqs, stages.Request{ID: fmt.Sprint(i), PromptIDs: prompt, MaxTokens: gen, Params: sample.Params{Temp: temp, Seed: uint64(i)*7919 + try*1_000_003}})
	}
	res, p := runPipeline(t, cfg, reqs)
	if pre == "auto" {
		m := p.Metrics().Snapshot()
		if m.AutoSteps != m.Steps || sumFrom(m.KChosen, 1) == 0 || m.KChosen[0] == 0 {
			t.Errorf("auto: %d auto steps of %d, k chosen %v: want some of 0 and some more", m.AutoSteps, m.Steps, m.KChosen)
		}
		t.Logf("auto: k chosen %v", m.KChosen)
	}
	counts := make([][]float64, vocab)
	for a := range counts {
		counts[a] = make([]float64, vocab)
	}
	for _, r := range res {
		prev := prompt[len(prompt)-1]
		for _, tok := range r.tokens {
			counts[prev][tok]++
			prev = tok
		}
	}
	for a := range counts {
		var na float64
		for _, c := range counts[a] {
			na += c
		}
		if na == 0 {
			continue
		}
		df += vocab - 1
		for b, c := range counts[a] {
			e := float64(pd[a][b]) * na
			x += (c - e) * (c - e) / e
		}
	}
	// 0.999 quantile of chi-square with df degrees of freedom (Wilson-
	// Hilferty approximation).
	z := 3.09
	h := 2 / (9 * float64(df))
	crit = float64(df) * math.Pow(1-h+z*math.Sqrt(h), 3)
	m := p.Metrics().Snapshot()
	if m.Accepted == 0 || m.Accepted == m.DraftTokens {
		t.Errorf("acceptance %d of %d: want partial", m.Accepted, m.DraftTokens)
	}
	if preDraft && m.PreDraftHits == 0 {
		t.Errorf("no pre-draft was used (%d made)", m.PreDrafts)
	}
	t.Logf("chi-square %.1f, df %d, bound %.1f; acceptance %.2f; pre-drafts %d, used %d", x, df, crit, m.Acceptance(), m.PreDrafts, m.PreDraftHits)
	return x, crit, df
}

// TestContextFull ends sequences whose context fills before MaxTokens, for
// every draft length (pre-drafting from k = 7, with k-1 meaning the same
// as without), without a pipeline error, with as many tokens as plain
// decoding emits: one per free position and the one sampled from the last
// position's logits.
func TestContextFull(t *testing.T) {
	ref := verifytest.NewFake(vocab, 1, 512, 512, 4)
	for kk := 1; kk <= 12; kk++ {
		k := (kk-1)%6 + 1
		const maxPos = 20
		target := verifytest.NewFake(vocab, 2, maxPos, 64, 4)
		dr := draft.NewModel(verifytest.NewFake(vocab, 2, maxPos, 64, 4), 0)
		cfg := stages.Config{Target: target, Drafter: dr, Policy: draft.Policy{K: k}, Slots: 2, MaxPos: maxPos, PreDraft: kk > 6}
		prompt := []int32{1, 2, 3, 4, 5}
		res, _ := runPipeline(t, cfg, []stages.Request{{ID: "a", PromptIDs: prompt, MaxTokens: 100}})
		want, _ := ref.Greedy(0, prompt, maxPos-len(prompt)+1)
		r := res["a"]
		if r.final.Reason != "length" || fmt.Sprint(r.tokens) != fmt.Sprint(want) {
			t.Fatalf("k=%d: reason %q, tokens %v, want %v", k, r.final.Reason, r.tokens, want)
		}
	}
}

// TestContextFullLongPrompt: a prompt that leaves fewer than k+1
// positions (maxPos−6 .. maxPos tokens, k = 4) is served as plain decoding
// serves it, in every draft mode: the draft length shrinks to what is left,
// down to plain steps, and the tokens up to the full context are Plain's.
// A prompt one token over the limit fails with Plain's error.
func TestContextFullLongPrompt(t *testing.T) {
	const maxPos, k = 20, 4
	ref := verifytest.NewFake(vocab, 1, maxPos, 64, 4)
	// The draft model's cache has as many positions as the target's.
	model := func() draft.Drafter { return draft.NewModel(verifytest.NewFake(vocab, 2, maxPos, 64, 4), 0) }
	modes := []struct {
		name string
		cfg  func() stages.Config
		dm   stages.DraftMode
	}{
		{"model", func() stages.Config { return stages.Config{Drafter: model(), Policy: draft.Policy{K: k}} }, stages.DraftDefault},
		{"model+predraft", func() stages.Config {
			return stages.Config{Drafter: model(), Policy: draft.Policy{K: k}, PreDraft: true}
		}, stages.DraftDefault},
		{"adaptive", func() stages.Config {
			return stages.Config{Drafter: model(), Policy: draft.Policy{K: k, Adaptive: true, Cost: 0.2}}
		}, stages.DraftDefault},
		{"auto", func() stages.Config {
			cfg := stages.Config{Target: verifytest.NewFake(vocab, 2, maxPos, 64, 4), Drafter: model(), Policy: draft.Policy{K: k, Auto: true, Cost: 0.1}}
			cfg.Clock = syntheticCosts(&cfg, func(n, _ int) time.Duration { return time.Duration(100+15*n) * time.Microsecond }, 5*time.Microsecond)
			return cfg
		}, stages.DraftDefault},
		{"ngram", func() stages.Config {
			return stages.Config{Drafter: model(), NGram: draft.NewNGram(), Policy: draft.Policy{K: k}}
		}, stages.DraftNGram},
		{"none", func() stages.Config { return stages.Config{Drafter: model(), Policy: draft.Policy{K: k}} }, stages.DraftNone},
	}
	// A repetitive prompt, so that prompt lookup has proposals too.
	prompt := func(n int) []int32 {
		ids := make([]int32, n)
		for i := range ids {
			ids[i] = int32(1 + i%5)
		}
		return ids
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			for n := maxPos - k - 2; n <= maxPos+1; n++ {
				cfg := m.cfg()
				if cfg.Target == nil {
					cfg.Target = verifytest.NewFake(vocab, 2, maxPos, 64, 4)
				}
				cfg.Slots, cfg.MaxPos = 2, maxPos
				pr := prompt(n)
				var want []int32
				st, plainErr := stages.Plain(context.Background(), ref, 0, pr, 100, maxPos, func(l []float32) int32 { return int32(sample.Greedy(l)) },
					func(tok int32) (bool, error) { want = append(want, tok); return true, nil })
				res, _ := runPipeline(t, cfg, []stages.Request{{ID: "a", PromptIDs: pr, MaxTokens: 100, Draft: m.dm}})
				r := res["a"]
				if n > maxPos {
					// Over the limit: both refuse it, with the same words.
					if plainErr == nil || r.final.Err == nil || !errors.Is(r.final.Err, stages.ErrRequest) {
						t.Fatalf("prompt %d: plain error %v, pipeline error %v: want both", n, plainErr, r.final.Err)
					}
					why := strings.TrimPrefix(plainErr.Error(), stages.ErrRequest.Error()+": ")
					if !strings.HasSuffix(r.final.Err.Error(), why) || len(r.tokens) != 0 {
						t.Fatalf("prompt %d: pipeline error %q, tokens %v; plain says %q", n, r.final.Err, r.tokens, why)
					}
					continue
				}
				if plainErr != nil || !st.Full {
					t.Fatalf("prompt %d: plain decoding: %v, full %v", n, plainErr, st.Full)
				}
				if r.final.Err != nil || r.final.Reason != "length" || fmt.Sprint(r.tokens) != fmt.Sprint(want) {
					t.Fatalf("prompt %d: reason %q (%v), tokens %v, plain decoding's %v", n, r.final.Reason, r.final.Err, r.tokens, want)
				}
				if len(want) != maxPos-n+1 {
					t.Fatalf("prompt %d: plain decoding emitted %d tokens, want %d", n, len(want), maxPos-n+1)
				}
				// No block reaches past the context: the first step's block
				// [t(n−1), d1..dk] must end at position maxPos−1 at the latest.
				kc, drafted := r.final.Stats.KChosen, 0
				for j, c := range kc {
					if c > 0 && j > maxPos-n {
						t.Fatalf("prompt %d: %d steps drafted %d tokens, more than the %d positions left after the last token", n, c, j, maxPos-n)
					}
					if j > 0 {
						drafted += c
					}
				}
				if strings.HasPrefix(m.name, "model") && n < maxPos-1 && drafted == 0 {
					t.Fatalf("prompt %d: no speculative step with %d positions left (k chosen %v)", n, maxPos-n+1, kc)
				}
			}
		})
	}
}

// TestPreDraftSelfSampling: with the target as its own draft and sampling,
// q equals p, so every draft token must be accepted, including those of
// pre-drafted blocks (whose q rows are carried over from the pre-draft).
func TestPreDraftSelfSampling(t *testing.T) {
	sharp := verifytest.Term{Seed: 1, Scale: 3}
	for _, k := range []int{1, 2, 4} {
		target := verifytest.NewFake(vocab, 1, 128, 64, 2, sharp)
		dr := draft.NewModel(verifytest.NewFake(vocab, 1, 128, 64, 2, sharp), 0)
		cfg := stages.Config{
			Target: target, Drafter: dr, Policy: draft.Policy{K: k}, Slots: 1, MaxPos: 128, PreDraft: true,
			NewSampler: func(p sample.Params, stream uint64) backend.Sampler {
				return &verifytest.Softmax{State: p.Seed*2 + stream, Temp: p.Temp}
			},
		}
		var reqs []stages.Request
		for i := 0; i < 20; i++ {
			reqs = append(reqs, stages.Request{ID: fmt.Sprint(i), PromptIDs: []int32{int32(i % vocab)}, MaxTokens: 60, Params: sample.Params{Temp: 0.8, Seed: uint64(i)}})
		}
		_, p := runPipeline(t, cfg, reqs)
		m := p.Metrics().Snapshot()
		if m.Accepted != m.DraftTokens || m.PreDraftHits == 0 {
			t.Errorf("k=%d: accepted %d of %d draft tokens; %d pre-drafts used", k, m.Accepted, m.DraftTokens, m.PreDraftHits)
		}
	}
}

// TestSampledReproducible: at a fixed draft length a seed gives the same
// sampled tokens whatever the pre-drafts did (none, whole ones, ones
// stopped after one or two proposals), because a draft proposal's number
// is keyed by its position (backend.Indexed); with a sampler whose
// numbers are only drawn in turn, the numbers pre-drafts take shift the
// later proposals and the tokens differ.
func TestSampledReproducible(t *testing.T) {
	sharp := verifytest.Term{Seed: 1, Scale: 3}
	run := func(pre string, indexed bool) map[string]*result {
		target := verifytest.NewFake(vocab, 2, 64, 64, 1, sharp)
		var dr draft.Drafter = draft.NewModel(verifytest.NewFake(vocab, 2, 64, 64, 1, sharp, verifytest.Term{Seed: 3, Scale: 1}), 0)
		switch pre {
		case "stop1":
			dr = stopAfter{dr, 1}
		case "stop2":
			dr = stopAfter{dr, 2}
		}
		cfg := stages.Config{
			Target: target, Drafter: dr, Policy: draft.Policy{K: 3}, Slots: 2, MaxPos: 64, PreDraft: pre != "off",
			NewSampler: func(p sample.Params, stream uint64) backend.Sampler {
				s := &verifytest.Softmax{State: p.Seed*2 + stream, Temp: p.Temp}
				if indexed {
					return s
				}
				return struct{ backend.Sampler }{s} // hides FloatAt (and PeekFloat)
			},
		}
		var reqs []stages.Request
		for i := 0; i < 40; i++ {
			reqs = append(reqs, stages.Request{ID: fmt.Sprint(i), PromptIDs: []int32{5, int32(i % vocab)}, MaxTokens: 24, Params: sample.Params{Temp: 0.8, Seed: uint64(i) + 11}})
		}
		res, _ := runPipeline(t, cfg, reqs)
		return res
	}
	differ := func(a, b map[string]*result) int {
		n := 0
		for id, r := range a {
			if !slices.Equal(r.tokens, b[id].tokens) {
				n++
			}
		}
		return n
	}
	base := run("off", true)
	for _, pre := range []string{"on", "stop1", "stop2"} {
		if n := differ(base, run(pre, true)); n > 0 {
			t.Errorf("pre-drafts %s: %d of %d requests sampled other tokens than without pre-drafts", pre, n, len(base))
		}
	}
	if n := differ(run("off", false), run("stop1", false)); n == 0 {
		t.Errorf("numbers drawn in turn: pre-drafts changed no request's tokens; the test cannot tell")
	}
}

// TestPreDraftCoupled: with the target as its own draft and sampling, a
// pre-draft's guess of the token the target samples after a block is
// drawn with the number the target's draw uses (draft.Request.Coupled), so
// every guess is the target's token and every pre-draft is used; with a
// sampler that cannot tell its numbers ahead (no backend.Peeker) the
// guess is an independent draw and misses some of the time.
func TestPreDraftCoupled(t *testing.T) {
	sharp := verifytest.Term{Seed: 1, Scale: 1}
	run := func(coupled bool) stages.Snapshot {
		target := verifytest.NewFake(vocab, 1, 128, 64, 2, sharp)
		dr := draft.NewModel(verifytest.NewFake(vocab, 1, 128, 64, 2, sharp), 0)
		cfg := stages.Config{
			Target: target, Drafter: dr, Policy: draft.Policy{K: 2}, Slots: 1, MaxPos: 128, PreDraft: true,
			NewSampler: func(p sample.Params, stream uint64) backend.Sampler {
				s := &verifytest.Softmax{State: p.Seed*2 + stream, Temp: p.Temp}
				if coupled {
					return s
				}
				return struct{ backend.Sampler }{s} // hides PeekFloat
			},
		}
		var reqs []stages.Request
		for i := 0; i < 20; i++ {
			reqs = append(reqs, stages.Request{ID: fmt.Sprint(i), PromptIDs: []int32{int32(i % vocab)}, MaxTokens: 60, Params: sample.Params{Temp: 1, Seed: uint64(i)}})
		}
		_, p := runPipeline(t, cfg, reqs)
		return p.Metrics().Snapshot()
	}
	c, u := run(true), run(false)
	t.Logf("coupled: %d pre-drafts, %d used; independent: %d, %d used", c.PreDrafts, c.PreDraftHits, u.PreDrafts, u.PreDraftHits)
	if c.PreDrafts == 0 || c.PreDraftHits != c.PreDrafts {
		t.Errorf("coupled: %d of %d pre-drafts used, want all", c.PreDraftHits, c.PreDrafts)
	}
	if u.PreDraftHits >= u.PreDrafts {
		t.Errorf("independent: %d of %d pre-drafts used, want fewer (the test's distributions are too sharp to tell)", u.PreDraftHits, u.PreDrafts)
	}
}

// TestVerifyBatchGathers: with VerifyBatch equal to the number of slots and
// long sequences that all stay in flight, almost every pass verifies every
// sequence; without it the pipeline may verify fewer at a time. Output is
// the same either way.
func TestVerifyBatchGathers(t *testing.T) {
	ref := verifytest.NewFake(vocab, 1, 512, 512, 4)
	const seqs, gen = 6, 120
	target := &passRecorder{Fake: verifytest.NewFake(vocab, seqs, 512, 64, 4)}
	dr := slowDrafter{draft.NewModel(verifytest.NewFake(vocab, seqs, 512, 64, 4, verifytest.Term{Seed: 1, Scale: 1}, verifytest.Term{Seed: 3, Scale: 1}), 0)}
	cfg := stages.Config{Target: target, Drafter: dr, Policy: draft.Policy{K: 2}, Slots: seqs, MaxPos: 512, VerifyBatch: seqs}
	ps := prompts(seqs)
	var reqs []stages.Request
	for i, pr := range ps {
		reqs = append(reqs, stages.Request{ID: fmt.Sprint(i), PromptIDs: pr, MaxTokens: gen})
	}
	res, p := runPipeline(t, cfg, reqs)
	for i, pr := range ps {
		want, _ := ref.Greedy(0, pr, gen)
		if got := res[fmt.Sprint(i)].tokens; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("request %d differs", i)
		}
	}
	m := p.Metrics().Snapshot()
	if m.Passes != len(target.passes) {
		t.Fatalf("metrics count %d passes, the target saw %d", m.Passes, len(target.passes))
	}
	checkGathered(t, target.passes, seqs, 0)
	t.Logf("%d blocks in %d passes", m.Steps, m.Passes)
}

// checkGathered fails unless the passes gather perfectly: a sequence is in
// flight from its first verify pass to its last, and every pass in between
// holds its block. (When the sequences join depends on scheduling; this
// property does not.) With perSeq > 0 every sequence takes exactly that
// many passes, and a slot's passes are split into its occupants' (a slot
// freed by a finished sequence can take a later one); with 0 each slot
// has one occupant.
func checkGathered(t *testing.T, passes [][]int32, seqs, perSeq int) {
	t.Helper()
	type occupant struct{ slot, n int32 }
	seen := map[int32]int{} // passes of each slot so far
	first, last := map[occupant]int{}, map[occupant]int{}
	at := make([][]occupant, len(passes))
	for i, pass := range passes {
		for _, s := range pass {
			o := occupant{slot: s}
			if perSeq > 0 {
				o.n = int32(seen[s] / perSeq)
			}
			seen[s]++
			if _, ok := first[o]; !ok {
				first[o] = i
			}
			last[o] = i
			at[i] = append(at[i], o)
		}
	}
	if len(first) != seqs {
		t.Fatalf("%d sequences verified, want %d", len(first), seqs)
	}
	for i, pass := range at {
		for o := range first {
			if first[o] < i && i < last[o] && !slices.Contains(pass, o) {
				t.Fatalf("pass %d of %d verifies %v without slot %d's sequence %d, in flight from pass %d to %d",
					i, len(passes), passes[i], o.slot, o.n, first[o], last[o])
			}
		}
	}
}

// TestPlainStepsGather: while no sequence in flight drafts, verify waits
// for every one of them, without VerifyBatch, so that sequences decoding
// plainly share one pass as the plain loop's do instead of taking turns:
// requests that ask for plain decoding on a pipeline with a draft model,
// and a pipeline without one. Output is the target's.
func TestPlainStepsGather(t *testing.T) {
	ref := verifytest.NewFake(vocab, 1, 512, 512, 4)
	const seqs, gen = 6, 120
	for _, withDrafter := range []bool{true, false} {
		target := &passRecorder{Fake: verifytest.NewFake(vocab, seqs, 512, 64, 4)}
		cfg := stages.Config{Target: target, Slots: seqs, MaxPos: 512}
		if withDrafter {
			cfg.Drafter = slowDrafter{draft.NewModel(verifytest.NewFake(vocab, seqs, 512, 64, 4), 0)}
			cfg.Policy = draft.Policy{K: 2}
		}
		ps := prompts(seqs)
		var reqs []stages.Request
		for i, pr := range ps {
			reqs = append(reqs, stages.Request{ID: fmt.Sprint(i), PromptIDs: pr, MaxTokens: gen, Draft: stages.DraftNone})
		}
		res, _ := runPipeline(t, cfg, reqs)
		for i, pr := range ps {
			want, _ := ref.Greedy(0, pr, gen)
			if got := res[fmt.Sprint(i)].tokens; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("drafter %v: request %d differs", withDrafter, i)
			}
		}
		// Plain decoding: one token a pass, the same number of passes for
		// every sequence.
		total := 0
		for _, pass := range target.passes {
			total += len(pass)
		}
		if total%seqs != 0 {
			t.Fatalf("drafter %v: %d blocks verified over %d sequences of %d tokens", withDrafter, total, seqs, gen)
		}
		checkGathered(t, target.passes, seqs, total/seqs)
	}
}

// passRecorder is a target that records the sequence slots of each
// verification pass (a forward pass that asks for logits; prefill asks for
// none).
type passRecorder struct {
	*verifytest.Fake
	passes [][]int32
}

func (r *passRecorder) Forward(b *backend.Batch, logits []float32) error {
	if slices.Contains(b.Logits, true) {
		var pass []int32
		for _, s := range b.Seq {
			if !slices.Contains(pass, s) {
				pass = append(pass, s)
			}
		}
		r.passes = append(r.passes, pass)
	}
	return r.Fake.Forward(b, logits)
}

// slowDrafter makes drafting cost 100µs of CPU, as a real draft model
// does, so that drafted blocks reach verify one by one.
type slowDrafter struct{ draft.Drafter }

func (d slowDrafter) Draft(r *draft.Request) error {
	t0 := time.Now()
	err := d.Drafter.Draft(r)
	for time.Since(t0) < 100*time.Microsecond {
	}
	return err
}

// TestMetrics checks that per-request and global figures agree.
func TestMetrics(t *testing.T) {
	target := verifytest.NewFake(vocab, 2, 256, 64, 4)
	dr := draft.NewModel(verifytest.NewFake(vocab, 2, 256, 64, 4), 0)
	cfg := stages.Config{Target: target, Drafter: dr, Policy: draft.Policy{K: 3}, Slots: 2, MaxPos: 256}
	reqs := []stages.Request{{ID: "a", PromptIDs: []int32{1, 2}, MaxTokens: 17}, {ID: "b", PromptIDs: []int32{3}, MaxTokens: 9}, {ID: "c", PromptIDs: []int32{4, 5, 6}, MaxTokens: 1}}
	res, p := runPipeline(t, cfg, reqs)
	m := p.Metrics().Snapshot()
	var steps, drafts, dtoks, acc, gen, itlN int
	for _, r := range res {
		st := r.final.Stats
		if st == nil {
			t.Fatal("final chunk without stats")
		}
		if st.Generated != len(r.tokens) {
			t.Errorf("%s: stats say %d tokens, %d published", r.final.ID, st.Generated, len(r.tokens))
		}
		if st.TTFT <= 0 || st.Duration < st.TTFT {
			t.Errorf("%s: TTFT %v, duration %v", r.final.ID, st.TTFT, st.Duration)
		}
		if want := 1 + float64(st.Accepted)/float64(max(st.Drafts, 1)); st.Drafts > 0 && st.MeanAcceptedLength() != want {
			t.Errorf("%s: mean accepted length %v, want %v", r.final.ID, st.MeanAcceptedLength(), want)
		}
		steps, drafts, dtoks, acc, gen = steps+st.Steps, drafts+st.Drafts, dtoks+st.DraftTokens, acc+st.Accepted, gen+st.Generated
		if st.Generated > 1 {
			itlN += st.Generated - 1
		}
	}
	if m.Steps != steps || m.Drafts != drafts || m.DraftTokens != dtoks || m.Accepted != acc || m.Generated != gen || m.ITLN != itlN {
		t.Errorf("global %+v disagrees with the requests' sums (steps %d drafts %d draft tokens %d accepted %d generated %d itl %d)",
			m, steps, drafts, dtoks, acc, gen, itlN)
	}
	// The target is its own draft: everything is accepted.
	if m.Accepted != m.DraftTokens || m.FullAccepts != m.Drafts || m.AcceptedAt[0] != m.Drafts {
		t.Errorf("self-draft metrics %+v", m)
	}
	if gen != 17+9+1 || m.Requests != 3 || m.Failed != 0 {
		t.Errorf("generated %d, requests %d, failed %d", gen, m.Requests, m.Failed)
	}
	var buf strings.Builder
	m.Write(&buf)
	for _, want := range []string{"mean accepted length", "accepted per draft position", "overlap", "inter-token latency"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestLongPrompt prefills prompts longer than one prefill chunk and the
// target's batch, with a fake whose logits hash the whole cached prefix, so
// any position written wrongly changes the output.
func TestLongPrompt(t *testing.T) {
	ref := verifytest.NewFake(vocab, 1, 512, 512, 0)
	target := verifytest.NewFake(vocab, 2, 512, 40, 0)
	dr := draft.NewModel(verifytest.NewFake(vocab, 2, 512, 16, 0), 0)
	cfg := stages.Config{Target: target, Drafter: dr, Policy: draft.Policy{K: 3}, Slots: 2, MaxPos: 512}
	var reqs []stages.Request
	var ps [][]int32
	for i, n := range []int{150, 41, 64} {
		p := make([]int32, n)
		for j := range p {
			p[j] = int32((j*7 + i) % vocab)
		}
		ps = append(ps, p)
		reqs = append(reqs, stages.Request{ID: fmt.Sprint(i), PromptIDs: p, MaxTokens: 20})
	}
	res, _ := runPipeline(t, cfg, reqs)
	for i, p := range ps {
		want, _ := ref.Greedy(0, p, 20)
		if got := res[fmt.Sprint(i)].tokens; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("prompt of %d tokens:\n got  %v\n want %v", len(p), got, want)
		}
	}
}

// TestPreDraftThreshold checks PreDraftMin: a draft that is always right
// (the target itself) is pre-drafted once its acceptance estimate is high
// and the pre-drafts are used; a draft that is almost never right is not
// pre-drafted at all, although it is with a threshold of 0. Output stays
// the target's in every case.
func TestPreDraftThreshold(t *testing.T) {
	ref := verifytest.NewFake(vocab, 1, 512, 512, 4)
	for _, tc := range []struct {
		name    string
		terms   []verifytest.Term // the draft's; none: the target's own
		min     float64
		wantPre bool
	}{
		{"self/0.5", nil, 0.5, true},
		{"wrong/0.5", []verifytest.Term{{Seed: 9, Scale: 1}}, 0.5, false},
		{"wrong/0", []verifytest.Term{{Seed: 9, Scale: 1}}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := stages.Config{
				Target:  verifytest.NewFake(vocab, 1, 512, 72, 4),
				Drafter: draft.NewModel(verifytest.NewFake(vocab, 1, 512, 64, 4, tc.terms...), 0),
				Policy:  draft.Policy{K: 3}, Slots: 1, MaxPos: 512, PreDraft: true, PreDraftMin: tc.min,
			}
			pr := []int32{1, 2, 3}
			res, p := runPipeline(t, cfg, []stages.Request{{ID: "a", PromptIDs: pr, MaxTokens: 40}})
			want, err := ref.Greedy(0, pr, 40)
			if err != nil {
				t.Fatal(err)
			}
			if got := res["a"].tokens; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("tokens\n got  %v\n want %v", got, want)
			}
			m := p.Metrics().Snapshot()
			if (m.PreDrafts > 0) != tc.wantPre {
				t.Errorf("%d pre-drafts (%d used) at acceptance %.2f; want pre-drafts: %v", m.PreDrafts, m.PreDraftHits, m.Acceptance(), tc.wantPre)
			}
			if tc.terms == nil && m.PreDraftHits == 0 {
				t.Errorf("self-draft: %d pre-drafts, none used", m.PreDrafts)
			}
		})
	}
	if _, err := stages.New(stages.Config{Target: ref, Slots: 1, MaxPos: 8, PreDraftMin: 1.5}); !errors.Is(err, stages.ErrConfig) {
		t.Errorf("PreDraftMin 1.5: err %v, want ErrConfig", err)
	}
}

// TestPartialPreDraft checks greedy exactness when every pre-draft stops
// early after 1..k+1 proposals and the next draft continues it, for the
// target as its own draft (every pre-draft used, asserted) and a noisy
// draft.
func TestPartialPreDraft(t *testing.T) {
	ref := verifytest.NewFake(vocab, 1, 512, 512, 4)
	for _, noisy := range []bool{false, true} {
		for k := 1; k <= 6; k++ {
			for stop := 1; stop <= k+1; stop++ {
				var terms []verifytest.Term
				if noisy {
					terms = []verifytest.Term{{Seed: 1, Scale: 1}, {Seed: 3, Scale: 0.5}}
				}
				cfg := stages.Config{
					Target:  verifytest.NewFake(vocab, 2, 512, 72, 4),
					Drafter: stopAfter{draft.NewModel(verifytest.NewFake(vocab, 2, 512, 64, 4, terms...), 0), stop},
					Policy:  draft.Policy{K: k}, Slots: 2, MaxPos: 512, PreDraft: true,
				}
				ps := prompts(3)
				var reqs []stages.Request
				for i, pr := range ps {
					reqs = append(reqs, stages.Request{ID: fmt.Sprint(i), PromptIDs: pr, MaxTokens: 30})
				}
				res, p := runPipeline(t, cfg, reqs)
				for i, pr := range ps {
					want, err := ref.Greedy(0, pr, 30)
					if err != nil {
						t.Fatal(err)
					}
					if got := res[fmt.Sprint(i)].tokens; fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("noisy=%v k=%d stop=%d request %d:\n got  %v\n want %v", noisy, k, stop, i, got, want)
					}
				}
				if m := p.Metrics().Snapshot(); !noisy && (m.PreDraftHits == 0 || m.Accepted != m.DraftTokens) {
					t.Errorf("k=%d stop=%d: self-draft used %d of %d pre-drafts, accepted %d of %d draft tokens; want some, and all",
						k, stop, m.PreDraftHits, m.PreDrafts, m.Accepted, m.DraftTokens)
				}
			}
		}
	}
}
