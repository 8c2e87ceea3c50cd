package model

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/specd-dev/specd/model/modeltest"
	"github.com/specd-dev/specd/tensor"
)

// benchOpts is the reference shape of ARCHITECTURE.md (≈58M parameters).
var benchOpts = modeltest.Options{Dim: 512, Layers: 8, Heads: 8, KVHeads: 4, FFN: 1536, Vocab: 32000, Seed: 1}

var (
	benchMu    sync.Mutex
	benchDir   string
	benchFiles = map[tensor.Type]string{}
)

// benchModel writes the benchmark model of weight type typ once per test
// binary run and loads it.
func benchModel(b *testing.B, typ tensor.Type) *Model {
	benchMu.Lock()
	defer benchMu.Unlock()
	path, ok := benchFiles[typ]
	if !ok {
		if benchDir == "" {
			d, err := os.MkdirTemp("", "specd-bench")
			if err != nil {
				b.Fatal(err)
			}
			benchDir = d
		}
		path = filepath.Join(benchDir, typ.String()+".gguf")
		o := benchOpts
		o.Type = typ
		if err := modeltest.Write(path, o); err != nil {
			b.Fatal(err)
		}
		benchFiles[typ] = path
	}
	m, err := Load(path)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// TestMain removes the benchmark models after the run.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// BenchmarkForward measures forward passes of 1, 2, 3 and 5 tokens (decode
// and verification of 1, 2 and 4 drafts) after a 64-token context, and a
// 64-token prefill, per weight type and thread count. tok/s counts batch
// tokens per second of wall time; cpu-tok/s (threads=1 only) per second of
// CPU time.
func BenchmarkForward(b *testing.B) {
	for _, typ := range []tensor.Type{tensor.F32, tensor.F16, tensor.BF16, tensor.Q8_0, tensor.Q4_0} {
		b.Run(typ.String(), func(b *testing.B) {
			m := benchModel(b, typ)
			defer m.Close()
			for _, threads := range []int{1, 2} {
				for _, n := range []int{1, 2, 3, 5, 64} {
					b.Run(fmt.Sprintf("threads=%d/batch=%d", threads, n), func(b *testing.B) {
						benchForward(b, m, threads, n)
					})
				}
			}
		})
	}
}

func benchForward(b *testing.B, m *Model, threads, n int) {
	const ctx = 64
	pool := tensor.NewPool(threads)
	defer pool.Close()
	st := m.NewState(max(n, ctx), pool)
	kv, err := m.NewCache(1, 2*ctx+n, false)
	if err != nil {
		b.Fatal(err)
	}
	var batch Batch
	toks := testTokens(ctx+n, m.Config.Vocab, 3)
	for p := range ctx {
		batch.Add(toks[p], int32(p), 0, false)
	}
	logits := make([]float32, n*m.Config.Vocab)
	if err := st.Forward(&batch, kv, nil); err != nil {
		b.Fatal(err)
	}
	start := ctx
	if n == ctx { // prefill benchmark: from an empty sequence
		start = 0
	}
	batch.Reset()
	for i := range n {
		// Decode and verification want every token's logits; a prefill
		// only the last (as llama-bench's prompt test).
		batch.Add(toks[start+i], int32(start+i), 0, n != ctx || i == n-1)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		kv.SetLen(0, start)
		if err := st.Forward(&batch, kv, logits); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tok/s")
	// CPU seconds per token: with threads=1 on a busy machine this is the
	// speed the code would have with a core to itself.
	if cpu := cpuTime() - cpu0; cpu > 0 && threads == 1 {
		b.ReportMetric(float64(n*b.N)/cpu.Seconds(), "cpu-tok/s")
	}
}

// BenchmarkPassCost measures what verification costs: a forward pass over
// 5 tokens (4 drafts and the last committed token, logits for all) against
// a 1-token decode pass, after 64 positions of context, the two passes
// alternating in one loop so that a busy machine disturbs both alike. It
// reports each pass's median and the ratio of medians and of minima (the
// least disturbed passes); the target is a ratio of at most 1.5.
// ratio-last is the same with logits for the last of the 5 tokens only,
// the shape of llama-bench's pp5 (a prompt), for comparison with llama.cpp.
// Q4_K_M comes from llama-quantize (the peer), as the other formats cannot
// be written by modeltest.
//
//	go test -run '^$' -bench PassCost -benchtime 400x ./model
func BenchmarkPassCost(b *testing.B) {
	for _, typ := range []string{"F16", "Q8_0", "Q4_0", "Q4_K_M"} {
		b.Run(typ, func(b *testing.B) {
			m := passCostModel(b, typ)
			defer m.Close()
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
					passCost(b, m, threads)
				})
			}
		})
	}
}

// passCostModel loads the benchmark model in weight format typ.
func passCostModel(b *testing.B, typ string) *Model {
	if t, ok := map[string]tensor.Type{"F16": tensor.F16, "Q8_0": tensor.Q8_0, "Q4_0": tensor.Q4_0}[typ]; ok {
		return benchModel(b, t)
	}
	peer := modeltest.RequirePeer(b)
	src := benchModel(b, tensor.F32)
	path := filepath.Join(benchDir, "Q4_K_M.gguf")
	src.Close()
	if _, err := os.Stat(path); err != nil {
		if err := peer.Quantize(benchFiles[tensor.F32], path, "Q4_K_M"); err != nil {
			b.Fatal(err)
		}
	}
	m, err := Load(path)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func passCost(b *testing.B, m *Model, threads int) {
	const ctx, k1 = 64, 5
	pool := tensor.NewPool(threads)
	defer pool.Close()
	st := m.NewState(ctx, pool)
	kv, err := m.NewCache(1, ctx+k1, false)
	if err != nil {
		b.Fatal(err)
	}
	toks := testTokens(ctx+k1, m.Config.Vocab, 3)
	var prompt, one, five, fiveLast Batch
	for p := range ctx {
		prompt.Add(toks[p], int32(p), 0, false)
	}
	if err := st.Forward(&prompt, kv, nil); err != nil {
		b.Fatal(err)
	}
	one.Add(toks[ctx], ctx, 0, true)
	for i := range k1 {
		five.Add(toks[ctx+i], int32(ctx+i), 0, true)
		fiveLast.Add(toks[ctx+i], int32(ctx+i), 0, i == k1-1)
	}
	logits := make([]float32, k1*m.Config.Vocab)
	pass := func(batch *Batch) time.Duration {
		kv.SetLen(0, ctx)
		t0 := time.Now()
		if err := st.Forward(batch, kv, logits); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	pass(&one) // warm up
	pass(&five)
	pass(&fiveLast)
	var d1, d5, d5l []time.Duration
	for b.Loop() {
		d1 = append(d1, pass(&one))
		d5 = append(d5, pass(&five))
		d5l = append(d5l, pass(&fiveLast))
	}
	slices.Sort(d1)
	slices.Sort(d5)
	slices.Sort(d5l)
	med := func(d []time.Duration) float64 { return float64(d[len(d)/2]) }
	b.ReportMetric(med(d1)/1e3, "1tok-µs")
	b.ReportMetric(med(d5)/1e3, "5tok-µs")
	b.ReportMetric(med(d5)/med(d1), "ratio")
	b.ReportMetric(float64(d5[0])/float64(d1[0]), "ratio-min")
	// A prompt-shaped pass (logits for the last token only, as
	// llama-bench's pp5) against the same 1-token pass.
	b.ReportMetric(med(d5l)/med(d1), "ratio-last")
}
