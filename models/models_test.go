package models

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/specd-dev/specd/model"
	"github.com/specd-dev/specd/model/gguf"
	"github.com/specd-dev/specd/tensor"
	"github.com/specd-dev/specd/tokenizer"
)

// golden is testdata/golden.json, written by tools/train (stage golden) from
// the PyTorch models with F16-rounded weights.
type golden struct {
	Cases []struct {
		Prompt       string    `json:"prompt"`
		IDs          []int32   `json:"ids"`
		TargetLogits []float32 `json:"target_logits"`
		DraftLogits  []float32 `json:"draft_logits"`
		TargetGreedy []int32   `json:"target_greedy"`
	} `json:"cases"`
	Texts []struct {
		Text string  `json:"text"`
		IDs  []int32 `json:"ids"`
	} `json:"texts"`
}

func loadGolden(t *testing.T) golden {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("testdata/golden.json: %v", err)
	}
	if len(g.Cases) == 0 {
		t.Fatal("testdata/golden.json has no cases")
	}
	return g
}

func parse(t *testing.T, get func() ([]byte, string)) *gguf.File {
	t.Helper()
	b, name := get()
	f, err := gguf.Parse(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}

func TestBundledFiles(t *testing.T) {
	tf, df := parse(t, Target), parse(t, Draft)
	for _, c := range []struct {
		name   string
		f      *gguf.File
		layers uint64
	}{{TargetName, tf, 6}, {DraftName, df, 1}} {
		if c.f.Version != 3 {
			t.Errorf("%s: GGUF version %d, want 3", c.name, c.f.Version)
		}
		if a, _ := c.f.String("general.architecture"); a != "llama" {
			t.Errorf("%s: architecture %q, want llama", c.name, a)
		}
		if n, _ := c.f.Uint("llama.block_count"); n != c.layers {
			t.Errorf("%s: %d layers, want %d", c.name, n, c.layers)
		}
		if p, _ := c.f.String("tokenizer.ggml.pre"); p != "gpt-2" {
			t.Errorf("%s: tokenizer.ggml.pre %q, want gpt-2", c.name, p)
		}
		if _, ok := c.f.Tensor("output.weight"); ok {
			t.Errorf("%s: has output.weight; the output projection should be tied to token_embd", c.name)
		}
		emb, ok := c.f.Tensor("token_embd.weight")
		if !ok {
			t.Fatalf("%s: no token_embd.weight", c.name)
		}
		sum := sha256.Sum256(emb.Data)
		rec, _ := c.f.String(SharedEmbdKey)
		if got := hex.EncodeToString(sum[:]); got != rec {
			t.Errorf("%s: %s = %q, but token_embd.weight hashes to %q", c.name, SharedEmbdKey, rec, got)
		}
	}
	th, _ := tf.String(SharedEmbdKey)
	dh, _ := df.String(SharedEmbdKey)
	if th == "" || th != dh {
		t.Errorf("shared embedding hashes differ: target %q, draft %q", th, dh)
	}
	te, _ := tf.Tensor("token_embd.weight")
	de, _ := df.Tensor("token_embd.weight")
	if !bytes.Equal(te.Data, de.Data) {
		t.Error("token_embd.weight differs between target and draft")
	}
	for _, key := range []string{"tokenizer.ggml.tokens", "tokenizer.ggml.merges"} {
		a, _ := tf.Strings(key)
		b, _ := df.Strings(key)
		if len(a) == 0 || len(a) != len(b) {
			t.Fatalf("%s: target has %d entries, draft %d", key, len(a), len(b))
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s[%d]: target %q, draft %q", key, i, a[i], b[i])
			}
		}
	}
}

func TestTokenizerMatchesTraining(t *testing.T) {
	g := loadGolden(t)
	tok, err := tokenizer.New(parse(t, Target))
	if err != nil {
		t.Fatal(err)
	}
	texts := g.Texts
	for _, c := range g.Cases {
		texts = append(texts, struct {
			Text string  `json:"text"`
			IDs  []int32 `json:"ids"`
		}{c.Prompt, c.IDs})
	}
	if len(texts) < 10 {
		t.Fatalf("testdata/golden.json has only %d texts", len(texts))
	}
	for _, c := range texts {
		got, err := tok.Encode(c.Text, true, false)
		if err != nil {
			t.Fatalf("%q: %v", c.Text, err)
		}
		if !slices.Equal(got, c.IDs) {
			t.Errorf("%q: ids %v, training tokenizer %v", c.Text, got, c.IDs)
		}
	}
}

// logitTol bounds |specd - PyTorch| per logit. specd rounds activations
// and the KV cache to F16 as llama.cpp does; PyTorch keeps them in F32.
// Observed differences are about 0.003.
const logitTol = 0.02

func TestForwardMatchesTraining(t *testing.T) {
	g := loadGolden(t)
	pool := tensor.NewPool(1)
	defer pool.Close()
	for _, which := range []struct {
		name   string
		get    func() ([]byte, string)
		logits func(i int) []float32
	}{
		{"target", Target, func(i int) []float32 { return g.Cases[i].TargetLogits }},
		{"draft", Draft, func(i int) []float32 { return g.Cases[i].DraftLogits }},
	} {
		m, err := model.New(parse(t, which.get))
		if err != nil {
			t.Fatalf("%s: %v", which.name, err)
		}
		for i, c := range g.Cases {
			steps := 0
			if which.name == "target" {
				steps = len(c.TargetGreedy)
			}
			first, gen := greedy(t, m, pool, c.IDs, steps)
			want := which.logits(i)
			if len(want) != len(first) {
				t.Fatalf("%s %q: %d golden logits, model has %d", which.name, c.Prompt, len(want), len(first))
			}
			worst := 0.0
			for j := range want {
				worst = math.Max(worst, math.Abs(float64(first[j]-want[j])))
			}
			if worst > logitTol {
				t.Errorf("%s %q: logits differ from PyTorch's by up to %.4f (tolerance %g)", which.name, c.Prompt, worst, logitTol)
			} else {
				t.Logf("%s %q: max |logit difference| %.4f", which.name, c.Prompt, worst)
			}
			if a, b := argmax(first), argmax(want); a != b {
				t.Errorf("%s %q: argmax %d, PyTorch %d", which.name, c.Prompt, a, b)
			}
			if steps > 0 && !slices.Equal(gen, c.TargetGreedy) {
				t.Errorf("%s %q: greedy %v, PyTorch %v", which.name, c.Prompt, gen, c.TargetGreedy)
			}
		}
	}
}

// greedy runs the prompt, returns the logits after it and n greedy tokens.
func greedy(t *testing.T, m *model.Model, pool *tensor.Pool, prompt []int32, n int) ([]float32, []int32) {
	t.Helper()
	kv, err := m.NewCache(1, len(prompt)+n, false)
	if err != nil {
		t.Fatal(err)
	}
	st := m.NewState(len(prompt), pool)
	logits := make([]float32, m.Config.Vocab)
	var b model.Batch
	for j, id := range prompt {
		b.Add(id, int32(j), 0, j == len(prompt)-1)
	}
	if err := st.Forward(&b, kv, logits); err != nil {
		t.Fatal(err)
	}
	first := append([]float32(nil), logits...)
	var out []int32
	for pos := len(prompt); len(out) < n; pos++ {
		next := int32(argmax(logits))
		out = append(out, next)
		if len(out) == n {
			break
		}
		b.Reset()
		b.Add(next, int32(pos), 0, true)
		if err := st.Forward(&b, kv, logits); err != nil {
			t.Fatal(err)
		}
	}
	return first, out
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}
