package engine

// The target on llama.cpp (Options.TargetBackend BackendLlamaCpp) with the
// real library: the CPU build of npm's @node-llama-cpp/linux-x64@3.21.1
// (internal/peertest finds it; missing, these tests fail, or skip under
// -short).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/backend/llamacpp"
	"github.com/specd-dev/specd/internal/peertest"
	"github.com/specd-dev/specd/models"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/stages"
)

// onLlamaCpp returns o with the target on the test library.
func onLlamaCpp(t *testing.T, o Options) Options {
	if !llamacpp.Supported {
		t.Skip(llamacpp.ErrUnsupported)
	}
	o.TargetBackend, o.LlamaLib, o.NGPULayers = BackendLlamaCpp, peertest.LlamaLib(t), -1
	return o
}

// TestLlamaCppBundledPair: the bundled pair with the target on llama.cpp
// and the draft on the Go engine decodes greedily exactly what the Go
// engine alone decodes (PlainDecode), for k = 1, 4 and 8 and one or four
// sequences at once; so does llama.cpp alone (PlainDecode on it); the
// models line says where the target runs and that it holds its own copy
// of the shared embeddings. With -short, k4/b1 and k8/b4 only.
func TestLlamaCppBundledPair(t *testing.T) {
	const n = 32
	goE := open(t, bundled())
	e := open(t, onLlamaCpp(t, bundled()))
	line := e.ModelsLine()
	for _, w := range []string{"models: bundled " + models.TargetName + " + " + models.DraftName, "draft shares target embeddings",
		"target on llama.cpp 0.4.0", "the accelerator holds its own copy of the shared embeddings"} {
		if !strings.Contains(line, w) {
			t.Errorf("models line %q lacks %q", line, w)
		}
	}
	if !e.Shared {
		t.Error("the bundled draft does not share the Go target's embeddings")
	}
	var prompts [][]int32
	for _, s := range []string{"The jury said", "It was a", "In the morning the", "He"} {
		p, err := e.Encode(s, true)
		if err != nil {
			t.Fatal(err)
		}
		prompts = append(prompts, p)
	}
	want := make([][]int32, len(prompts))
	for i, p := range prompts {
		r, err := goE.PlainDecode(context.Background(), p, n, 1, sample.Params{})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = r.Tokens
		if i == 0 {
			a, err := e.PlainDecode(context.Background(), p, n, 1, sample.Params{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a.Tokens, want[i]) {
				t.Fatalf("llama.cpp alone\n %v\nGo engine\n %v", a.Tokens, want[i])
			}
		}
	}
	tok, _ := e.Tokenizer()
	for _, k := range []int{1, 4, 8} {
		for _, seqs := range []int{1, 4} {
			if testing.Short() && (k == 1 || (k == 8) != (seqs == 4)) {
				continue // -short: k4/b1 and k8/b4
			}
			t.Run(fmt.Sprintf("k%d/b%d", k, seqs), func(t *testing.T) {
				o := e.Options()
				o.K, o.Auto = k, false // fixed k: every step drafts
				cfg, err := e.PipelineConfigWith(o, seqs, 64, 8)
				if err != nil {
					t.Fatal(err)
				}
				p, err := stages.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				got := runRequests(t, p, prompts, n)
				for i := range prompts {
					w := want[i]
					if len(got[i]) < n { // stopped at end of generation
						if !tok.IsEOG(w[len(got[i])]) {
							t.Fatalf("request %d stopped after %v; Go engine %v", i, got[i], w)
						}
						w = w[:len(got[i])]
					}
					if !slices.Equal(got[i], w) {
						t.Fatalf("request %d:\n got  %v\n want %v", i, got[i], w)
					}
				}
				if st := p.Metrics().Snapshot(); st.Accepted == 0 || st.Accepted == st.DraftTokens {
					t.Errorf("accepted %d of %d draft tokens: want partial acceptance", st.Accepted, st.DraftTokens)
				}
			})
		}
	}
}

// runRequests serves one request per prompt through p (up to n tokens
// each) and returns their tokens in prompt order, within a minute.
func runRequests(t *testing.T, p *stages.Pipeline, prompts [][]int32, n int) [][]int32 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in := make(chan stages.Request, len(prompts))
	for i, pr := range prompts {
		in <- stages.Request{ID: fmt.Sprint(i), PromptIDs: pr, MaxTokens: n}
	}
	close(in)
	out := make(chan stages.Chunk, 64)
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, in, out) }()
	got := make([][]int32, len(prompts))
	take := func(c stages.Chunk) {
		var i int
		fmt.Sscan(c.ID, &i)
		got[i] = append(got[i], c.Tokens...)
		if c.Final && c.Err != nil {
			t.Errorf("request %s: %v", c.ID, c.Err)
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
				t.Fatal(err)
			}
			return got
		case <-ctx.Done():
			t.Fatal("the pipeline did not finish within a minute")
		}
	}
}

// TestLlamaCppOptionErrors: every way to misconfigure the llama.cpp target
// is an error that names the flag or the file, and nothing is left open.
func TestLlamaCppOptionErrors(t *testing.T) {
	if !llamacpp.Supported {
		t.Skip(llamacpp.ErrUnsupported)
	}
	t.Setenv(LlamaLibEnv, "")
	missing := t.TempDir() + "/libllama.so"
	for _, tc := range []struct {
		change func(*Options)
		want   []string
		is     error
	}{
		{func(o *Options) { o.TargetBackend = "cuda" }, []string{`--target-backend "cuda": must be go or llamacpp`}, nil},
		{func(o *Options) { o.TargetBackend = BackendLlamaCpp }, []string{"--llama-lib", LlamaLibEnv}, nil},
		{func(o *Options) { o.TargetBackend, o.LlamaLib = BackendLlamaCpp, missing }, []string{missing}, llamacpp.ErrLibrary},
		{func(o *Options) { o.TargetBackend, o.LlamaLib, o.Window = BackendLlamaCpp, missing, 16 }, []string{"--window 16"}, nil},
		{func(o *Options) { o.TargetThreads = -1 }, []string{"--target-threads -1"}, nil},
	} {
		o := bundled()
		tc.change(&o)
		e, err := Open(o)
		if err == nil {
			e.Close()
			t.Errorf("%+v: opened", o)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q lacks %q", err, w)
			}
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("error %q is not %v", err, tc.is)
		}
	}
	// The library from the environment; an unknown device.
	t.Setenv(LlamaLibEnv, peertest.LlamaLib(t))
	o := bundled()
	o.TargetBackend, o.TargetDevice = BackendLlamaCpp, "HTP7"
	if _, err := Open(o); !errors.Is(err, llamacpp.ErrDevice) || !strings.Contains(err.Error(), `"HTP7"`) || !strings.Contains(err.Error(), "CPU") {
		t.Errorf("unknown device: %v", err)
	}
}
