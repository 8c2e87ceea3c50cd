package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/backend/cpu"
	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/model"
	"github.com/specd-dev/specd/model/modeltest"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/tensor"
)

// specModels writes a small random target and a smaller draft with the
// same synthetic vocabulary.
func specModels(t *testing.T) (target, draftPath string) {
	t.Helper()
	dir := t.TempDir()
	target, draftPath = filepath.Join(dir, "target.gguf"), filepath.Join(dir, "draft.gguf")
	if err := modeltest.Write(target, modeltest.Options{Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, FFN: 128, Vocab: 400, CtxLen: 128, Seed: 3, Type: tensor.Q8_0}); err != nil {
		t.Fatal(err)
	}
	if err := modeltest.Write(draftPath, modeltest.Options{Dim: 32, Layers: 1, Heads: 2, KVHeads: 1, FFN: 64, Vocab: 400, CtxLen: 128, Seed: 4, Tied: true}); err != nil {
		t.Fatal(err)
	}
	return target, draftPath
}

// plainIDs decodes n tokens greedily one at a time with an F16 cache.
func plainIDs(t *testing.T, path string, prompt []int32, n int) []int32 {
	t.Helper()
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	kv, err := m.NewCache(1, len(prompt)+n, false)
	if err != nil {
		t.Fatal(err)
	}
	be := cpu.New(m.NewState(len(prompt), nil), kv)
	lg := make([]float32, len(prompt)*m.Config.Vocab)
	var b backend.Batch
	for i, tok := range prompt {
		b.Add(tok, int32(i), 0, i == len(prompt)-1)
	}
	if err := be.Forward(&b, lg); err != nil {
		t.Fatal(err)
	}
	var out []int32
	for len(out) < n {
		out = append(out, int32(sample.Greedy(lg[:m.Config.Vocab])))
		b.Reset()
		b.Add(out[len(out)-1], int32(len(prompt)+len(out)-1), 0, true)
		if err := be.Forward(&b, lg); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestGenerateSpeculative(t *testing.T) {
	target, dr := specModels(t)
	prompt := []int32{1, 17, 42, 99, 3}
	want := plainIDs(t, target, prompt, 20)
	for _, tc := range []struct {
		name  string
		draft string
		extra func(*engine.Options)
	}{
		{"draft", dr, nil},
		{"self", target, nil},
		{"ngram", "ngram", nil},
		{"adaptive-pmin", dr, func(s *engine.Options) { s.Adaptive, s.PMin = true, 0.05 }},
		{"two-threads", dr, func(s *engine.Options) { s.VerifyThreads, s.DraftThreads = 2, 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := generateOpts{promptIDs: "1,17,42,99,3", n: 20, ids: true, batch: 512, noBOS: true, stats: true,
				eng: engine.Options{Target: target, Threads: 1, Draft: tc.draft, K: 4, DraftThreads: 1, DraftCost: 0.1}}
			if tc.extra != nil {
				tc.extra(&o.eng)
			}
			var out, errb bytes.Buffer
			if err := generateSpec(context.Background(), o, &out, &errb); err != nil {
				t.Fatalf("%v\n%s", err, errb.String())
			}
			if got := strings.TrimSpace(out.String()); got != strings.Trim(fmt.Sprint(want), "[]") {
				t.Fatalf("ids\n got  %s\n want %v", got, want)
			}
			if !strings.Contains(errb.String(), "mean accepted length") {
				t.Errorf("no statistics on stderr: %s", errb.String())
			}
			if tc.name == "self" && !strings.Contains(errb.String(), "(100.0%)") {
				t.Errorf("target as its own draft did not accept everything: %s", errb.String())
			}
		})
	}
}

func TestSpecFlagErrors(t *testing.T) {
	target, _ := specModels(t)
	for _, s := range []engine.Options{{Draft: "ngram", K: 0, DraftThreads: 1}, {Draft: "ngram", K: 4, PMin: 1, DraftThreads: 1}, {Draft: "ngram", K: 4}} {
		s.Target, s.Threads = target, 1
		o := generateOpts{eng: s, promptIDs: "1,2", n: 4, ids: true, batch: 8}
		if err := generateSpec(context.Background(), o, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
	o := generateOpts{promptIDs: "1,2", n: 4, ids: true, batch: 8,
		eng: engine.Options{Target: target, Threads: 1, Draft: filepath.Join(t.TempDir(), "missing.gguf"), K: 4, DraftThreads: 1}}
	if err := generateSpec(context.Background(), o, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "draft") {
		t.Errorf("missing draft file: %v", err)
	}
}

// TestGenerateDraftFlag runs specd generate with and without a draft: the
// greedy ids must be the same.
func TestGenerateDraftFlag(t *testing.T) {
	target, dr := specModels(t)
	base := []string{"generate", "-m", target, "--prompt-ids", "3,14,15,92,65", "-n", "24", "--ids", "--no-bos", "--threads", "1"}
	run := func(extra ...string) (string, string) {
		var out, errb bytes.Buffer
		if code := runMain(context.Background(), append(append([]string{}, base...), extra...), &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errb.String())
		}
		return out.String(), errb.String()
	}
	plain, _ := run()
	for _, extra := range [][]string{
		{"-d", dr, "-k", "3"},
		{"--draft", "ngram", "-k", "5", "--adaptive"},
		{"-d", target, "-k", "4", "--pre-draft", "--draft-threads", "1", "--verify-threads", "2"},
		{"-d", "none"},
	} {
		got, stats := run(extra...)
		if got != plain {
			t.Errorf("%v: ids\n%s want\n%s", extra, got, plain)
		}
		if extra[1] != "none" && !strings.Contains(stats, "mean accepted length") {
			t.Errorf("%v: no statistics on stderr:\n%s", extra, stats)
		}
	}
}

// TestGenerateWindow runs generate with a sliding window much shorter than
// the generation: speculative decoding gives the ids of plain decoding
// with the same window, and the window changes them (it is applied).
func TestGenerateWindow(t *testing.T) {
	target, dr := specModels(t)
	base := []string{"generate", "-m", target, "--prompt-ids", "3,14,15,92,65,35,89,79,32,38", "-n", "60", "--ids", "--no-bos", "--threads", "1"}
	run := func(extra ...string) string {
		var out, errb bytes.Buffer
		if code := runMain(context.Background(), append(append([]string{}, base...), extra...), &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errb.String())
		}
		return out.String()
	}
	full := run()
	plain := run("--window", "8")
	if plain == full {
		t.Errorf("--window 8 gives the ids of full attention:\n%s", full)
	}
	for _, extra := range [][]string{
		{"--window", "8", "-d", dr, "-k", "3"},
		{"--window", "8", "-d", target, "-k", "5", "--f32-cache"},
	} {
		want := plain
		if slices.Contains(extra, "--f32-cache") {
			want = run("--window", "8", "--f32-cache")
		}
		if got := run(extra...); got != want {
			t.Errorf("%v: ids\n%s want\n%s", extra, got, want)
		}
	}
	if got := run("--window", "100"); got != full {
		t.Errorf("a window longer than the sequence changes the ids:\n%s want\n%s", got, full)
	}
	var out, errb bytes.Buffer
	if code := runMain(context.Background(), append(append([]string{}, base...), "--window", "-1"), &out, &errb); code == 0 || !strings.Contains(errb.String(), "--window") {
		t.Errorf("--window -1: exit %d, stderr %s", code, errb.String())
	}
}
