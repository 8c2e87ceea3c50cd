package llamacpp_test

// Helpers of the tests that run the real library (the CPU build of npm's
// @node-llama-cpp/linux-x64@3.21.1, found by internal/peertest: a missing
// library fails these tests, or skips them under -short) on random models
// that package modeltest writes, against specd's Go engine.

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/backend/cpu"
	"github.com/specd-dev/specd/backend/llamacpp"
	"github.com/specd-dev/specd/internal/peertest"
	"github.com/specd-dev/specd/model"
	"github.com/specd-dev/specd/model/modeltest"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/stages"
	"github.com/specd-dev/specd/tensor"
)

// lib loads the test library. SPECD_LLAMA_LOG=1 shows llama.cpp's log.
func lib(t testing.TB) *llamacpp.Lib {
	t.Helper()
	if !llamacpp.Supported {
		t.Skip(llamacpp.ErrUnsupported)
	}
	if os.Getenv("SPECD_LLAMA_LOG") == "1" {
		llamacpp.SetLog(os.Stderr)
	}
	l, err := llamacpp.Load(peertest.LlamaLib(t))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// pair is one random model, loaded by both engines.
type pair struct {
	path  string
	goM   *model.Model
	accel *llamacpp.Model
}

// cacheDir keeps the models with peer vocabularies between runs (they are
// pure functions of their options, and the conformance test writes the
// same files).
func cacheDir() string { return filepath.Join(peertest.Root(), ".cache", "conformance") }

// loadPair writes (or finds) the model of o and loads it in both engines.
func loadPair(t testing.TB, l *llamacpp.Lib, o modeltest.Options) *pair {
	t.Helper()
	var path string
	var err error
	if o.VocabFrom != "" {
		path, err = modeltest.Cached(cacheDir(), o)
	} else {
		path = filepath.Join(t.TempDir(), "model.gguf")
		err = modeltest.Write(path, o)
	}
	if err != nil {
		t.Fatal(err)
	}
	return loadFile(t, l, path)
}

// loadFile loads the GGUF at path in both engines.
func loadFile(t testing.TB, l *llamacpp.Lib, path string) *pair {
	t.Helper()
	g, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	p := &pair{path: path, goM: g}
	if l != nil {
		if p.accel, err = l.LoadModel(path, llamacpp.ModelParams{NGPULayers: -1}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.accel.Close() })
		if p.accel.Vocab() != g.Config.Vocab {
			t.Fatalf("vocabulary %d on llama.cpp, %d on the Go engine", p.accel.Vocab(), g.Config.Vocab)
		}
	}
	return p
}

// vocabFile is llama.cpp's vocabulary GGUF models/ggml-vocab-NAME.gguf.
func vocabFile(t testing.TB, name string) string {
	t.Helper()
	return peertest.File(t, filepath.Join(peertest.Models(), "ggml-vocab-"+name+".gguf"))
}

// accelBackend makes a llama.cpp backend of p, closed at the end of the
// test. It runs on one thread: ggml's spinning thread barrier crawls when
// the machine's cores are busy (here, with the Go draft running at the
// same time).
func accelBackend(t testing.TB, p *pair, seqs, maxPos, maxBatch int) *llamacpp.Backend {
	t.Helper()
	be, err := p.accel.NewBackend(llamacpp.ContextParams{Seqs: seqs, MaxPos: maxPos, MaxBatch: maxBatch, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return be
}

// goBackend makes a Go CPU backend of m on its own pool.
func goBackend(t testing.TB, m *model.Model, seqs, maxPos, maxBatch, threads int) *cpu.Backend {
	t.Helper()
	kv, err := m.NewCache(seqs, maxPos, false)
	if err != nil {
		t.Fatal(err)
	}
	pool := tensor.NewPool(threads)
	t.Cleanup(pool.Close)
	return cpu.New(m.NewState(maxBatch, pool), kv)
}

// plainGreedy decodes n tokens one per pass on be (slot 0, empty): the
// prompt in one pass, then argmax (lowest id on ties) of each step.
func plainGreedy(t testing.TB, be backend.Backend, prompt []int32, n int) []int32 {
	t.Helper()
	v := be.Vocab()
	lg := make([]float32, v)
	var b backend.Batch
	for i, tok := range prompt {
		b.Add(tok, int32(i), 0, i == len(prompt)-1)
	}
	if err := be.Forward(&b, lg); err != nil {
		t.Fatal(err)
	}
	var out []int32
	for len(out) < n {
		next := int32(sample.Greedy(lg))
		out = append(out, next)
		b.Reset()
		b.Add(next, int32(len(prompt)+len(out)-1), 0, true)
		if err := be.Forward(&b, lg); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// result is one request's output through a pipeline.
type result struct {
	tokens []int32
	final  stages.Chunk
}

// runPipeline serves reqs through a pipeline of cfg and returns every
// request's tokens and final chunk, within a minute.
func runPipeline(t testing.TB, cfg stages.Config, reqs []stages.Request) (map[string]*result, *stages.Pipeline) {
	t.Helper()
	p, err := stages.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	in := make(chan stages.Request, len(reqs))
	for _, r := range reqs {
		in <- r
	}
	close(in)
	out := make(chan stages.Chunk, 64)
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, in, out) }()
	res := map[string]*result{}
	take := func(c stages.Chunk) {
		r := res[c.ID]
		if r == nil {
			r = &result{}
			res[c.ID] = r
		}
		r.tokens = append(r.tokens, c.Tokens...)
		if c.Final {
			r.final = c
		}
	}
	for {
		select {
		case c := <-out:
			take(c)
		case err := <-done:
			for len(out) > 0 {
				take(<-out)
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			for _, r := range reqs {
				if res[r.ID] == nil || !res[r.ID].final.Final {
					t.Fatalf("request %s has no final chunk", r.ID)
				}
			}
			return res, p
		case <-ctx.Done():
			t.Fatalf("pipeline timed out")
		}
	}
}

// checked is a target backend that reads every slot's length back from
// llama.cpp (llama_memory_seq_pos_max + 1, through Len) after each
// Rollback and Forward, and records any that is not exactly what was kept
// or written. It counts the rollbacks that cut positions (rejections).
type checked struct {
	*llamacpp.Backend
	cuts int
	bad  []string
}

func (c *checked) Rollback(seq, n int) error {
	before := c.Len(seq)
	if err := c.Backend.Rollback(seq, n); err != nil {
		return err
	}
	if got := c.Len(seq); got != n {
		c.bad = append(c.bad, fmt.Sprintf("slot %d holds %d positions after Rollback to %d", seq, got, n))
	}
	if n < before {
		c.cuts++
	}
	return nil
}

func (c *checked) Forward(b *backend.Batch, logits []float32) error {
	if err := c.Backend.Forward(b, logits); err != nil {
		return err
	}
	end := map[int32]int32{}
	for i, s := range b.Seq {
		end[s] = max(end[s], b.Pos[i]+1)
	}
	for s, e := range end {
		if got := c.Len(int(s)); got != int(e) {
			c.bad = append(c.bad, fmt.Sprintf("slot %d holds %d positions after a pass up to %d", s, got, e))
		}
	}
	return nil
}

// maxRelDiff is max |a-b| over the standard deviation of b.
func maxRelDiff(a, b []float32) float64 {
	var mean, sd, d float64
	for _, x := range b {
		mean += float64(x)
	}
	mean /= float64(len(b))
	for i, x := range b {
		sd += (float64(x) - mean) * (float64(x) - mean)
		d = max(d, math.Abs(float64(a[i])-float64(x)))
	}
	return d / math.Sqrt(sd/float64(len(b)))
}
