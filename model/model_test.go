package model

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/specd-dev/specd/kvsync"
	"github.com/specd-dev/specd/model/gguf"
	"github.com/specd-dev/specd/model/modeltest"
	"github.com/specd-dev/specd/tensor"
)

// tiny is a small random model shape for fast tests: 4 query heads sharing
// 2 KV heads, head size 16.
var tiny = modeltest.Options{Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, FFN: 96, Vocab: 300, Seed: 7}

// writeModel writes a random model to a temporary file and loads it.
func writeModel(t testing.TB, o modeltest.Options) *Model {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := modeltest.Write(path, o); err != nil {
		t.Fatal(err)
	}
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// refForward is an independent float64 implementation of the decoder on one
// sequence: it returns the logits of every position of toks. It follows the
// textbook formulas (RoPE angle pos·base^(-2i/d) computed directly, softmax
// with exp in float64), so it checks the wiring, not the rounding.
func refForward(m *Model, toks []int32) [][]float64 {
	c := m.Config
	deq := func(mt *tensor.Matrix) [][]float64 {
		rows := make([][]float64, mt.Rows)
		buf := make([]float32, mt.Cols)
		for r := range rows {
			mt.DequantizeRow(buf, r)
			rows[r] = make([]float64, mt.Cols)
			for i, v := range buf {
				rows[r][i] = float64(v)
			}
		}
		return rows
	}
	mv := func(w [][]float64, x []float64) []float64 {
		out := make([]float64, len(w))
		for r, row := range w {
			for i, v := range row {
				out[r] += v * x[i]
			}
		}
		return out
	}
	norm := func(x []float64, w []float32) []float64 {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		s := 1 / math.Sqrt(ss/float64(len(x))+float64(c.NormEps))
		out := make([]float64, len(x))
		for i := range x {
			out[i] = x[i] * s * float64(w[i])
		}
		return out
	}
	ropeRef := func(x []float64, pos int) {
		d := c.HeadDim
		for i := 0; i < d/2; i++ {
			th := float64(pos) * math.Pow(float64(c.RopeBase), -2*float64(i)/float64(d))
			cs, sn := math.Cos(th), math.Sin(th)
			a, b := 2*i, 2*i+1
			if m.arch.rope == ropeNeox {
				a, b = i, i+d/2
			}
			x0, x1 := x[a], x[b]
			x[a], x[b] = x0*cs-x1*sn, x0*sn+x1*cs
		}
	}
	emb := deq(m.w.tokEmbd)
	out := deq(m.w.output)
	type lw struct{ q, k, v, o, g, u, d [][]float64 }
	ls := make([]lw, c.Layers)
	for i, l := range m.w.layers {
		ls[i] = lw{deq(l.wq), deq(l.wk), deq(l.wv), deq(l.wo), deq(l.gate), deq(l.up), deq(l.down)}
	}
	hd, group := c.HeadDim, c.Heads/c.KVHeads
	keys := make([][][]float64, c.Layers) // layer, pos, kvDim
	vals := make([][][]float64, c.Layers)
	var res [][]float64
	for pos, tok := range toks {
		x := append([]float64(nil), emb[tok]...)
		for li, l := range m.w.layers {
			xb := norm(x, l.attnNorm)
			q, k, v := mv(ls[li].q, xb), mv(ls[li].k, xb), mv(ls[li].v, xb)
			if l.bq != nil {
				for i := range q {
					q[i] += float64(l.bq[i])
				}
				for i := range k {
					k[i] += float64(l.bk[i])
					v[i] += float64(l.bv[i])
				}
			}
			for h := 0; h < c.Heads; h++ {
				ropeRef(q[h*hd:(h+1)*hd], pos)
			}
			for g := 0; g < c.KVHeads; g++ {
				ropeRef(k[g*hd:(g+1)*hd], pos)
			}
			keys[li] = append(keys[li], k)
			vals[li] = append(vals[li], v)
			att := make([]float64, c.Heads*hd)
			for h := 0; h < c.Heads; h++ {
				g := h / group
				sc := make([]float64, pos+1)
				mx := math.Inf(-1)
				for p := 0; p <= pos; p++ {
					var s float64
					for i := 0; i < hd; i++ {
						s += q[h*hd+i] * keys[li][p][g*hd+i]
					}
					sc[p] = s / math.Sqrt(float64(hd))
					mx = math.Max(mx, sc[p])
				}
				var sum float64
				for p := range sc {
					sc[p] = math.Exp(sc[p] - mx)
					sum += sc[p]
				}
				for p := range sc {
					for i := 0; i < hd; i++ {
						att[h*hd+i] += sc[p] / sum * vals[li][p][g*hd+i]
					}
				}
			}
			o := mv(ls[li].o, att)
			for i := range x {
				x[i] += o[i]
			}
			xb = norm(x, l.ffnNorm)
			gt, up := mv(ls[li].g, xb), mv(ls[li].u, xb)
			for i := range gt {
				gt[i] = gt[i] / (1 + math.Exp(-gt[i])) * up[i]
			}
			d := mv(ls[li].d, gt)
			for i := range x {
				x[i] += d[i]
			}
		}
		res = append(res, mv(out, norm(x, m.w.outNorm)))
	}
	return res
}

// prefill runs toks as one batch in slot 0 and returns all their logits.
func prefill(t testing.TB, st *State, kv *kvsync.Cache, toks []int32) []float32 {
	t.Helper()
	var b Batch
	for i, tok := range toks {
		b.Add(tok, int32(i), 0, true)
	}
	logits := make([]float32, len(toks)*st.m.Config.Vocab)
	if err := st.Forward(&b, kv, logits); err != nil {
		t.Fatal(err)
	}
	return logits
}

// checkNearRef fails t unless, at every position p of want (the float64
// reference's logits), got's logits of p are within tol·RMS(want[p]) of it,
// where that RMS is at least 0.1 (a smaller one means a degenerate model).
func checkNearRef(t *testing.T, got []float32, want [][]float64, tol float64) {
	t.Helper()
	for p, wp := range want {
		V := len(wp)
		var rms, maxd float64
		for i, w := range wp {
			rms += w * w
			maxd = math.Max(maxd, math.Abs(float64(got[p*V+i])-w))
		}
		rms = math.Sqrt(rms / float64(V))
		if rms < 0.1 {
			t.Fatalf("pos %d: reference logits RMS %g is degenerate", p, rms)
		}
		t.Logf("pos %d: rel %.3g", p, maxd/rms)
		if maxd > tol*rms {
			t.Errorf("pos %d: max |Δ| = %g, above %g (RMS %g)", p, maxd, tol*rms, rms)
		}
	}
}

// forEachTypeModel runs f, as subtest TYPE-ARCH-tied=T, on the options of
// two random models per type of types, with width dim and FFN width ffn: a
// llama one with its own output matrix and a qwen2 one whose output is tied
// to token_embd.
func forEachTypeModel(t *testing.T, types []tensor.Type, dim, ffn int, f func(t *testing.T, o modeltest.Options)) {
	for _, typ := range types {
		for _, o := range []modeltest.Options{
			{Arch: "llama", Dim: dim, Layers: 2, Heads: 4, KVHeads: 2, FFN: ffn, Vocab: 300, Seed: 7},
			{Arch: "qwen2", Dim: dim, Layers: 2, Heads: 4, KVHeads: 2, FFN: ffn, Vocab: 300, Seed: 8, Tied: true},
		} {
			o.Type = typ
			t.Run(fmt.Sprintf("%v-%s-tied=%v", typ, o.Arch, o.Tied), func(t *testing.T) { f(t, o) })
		}
	}
}

// checkAllOfType loads the model o describes, whose every matrix,
// token_embd included, is o.Type (token_embd tied to the output where
// o.Tied), checks that it loaded so, and checks the logits of an 8-token
// prefill against the float64 forward pass on the dequantized weights
// within 0.15·RMS (Q4_0's bound in TestForwardMatchesReference: the error
// is the activations' re-quantization, which the random model amplifies).
// It returns the model, the tokens and their logits.
func checkAllOfType(t *testing.T, o modeltest.Options) (*Model, []int32, []float32) {
	t.Helper()
	m := writeModel(t, o)
	if m.TiedEmbeddings() != o.Tied || m.w.tokEmbd.Type != o.Type || m.w.output.Type != o.Type {
		t.Fatalf("tied %v, token_embd %v, output %v", m.TiedEmbeddings(), m.w.tokEmbd.Type, m.w.output.Type)
	}
	toks := testTokens(8, m.Config.Vocab, 3)
	kv, err := m.NewCache(1, 16, true)
	if err != nil {
		t.Fatal(err)
	}
	got := prefill(t, m.NewState(8, nil), kv, toks)
	checkNearRef(t, got, refForward(m, toks), 0.15)
	return m, toks, got
}

func testTokens(n, vocab int, seed int) []int32 {
	toks := make([]int32, n)
	for i := range toks {
		toks[i] = int32((i*7919 + seed*104729 + 11) % vocab)
	}
	return toks
}

func TestForwardMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		arch string
		typ  tensor.Type
		f32  bool
		tol  float64 // max |Δlogit| relative to the logits' RMS
	}{
		{"llama", tensor.F32, true, 1e-4},
		{"llama", tensor.F32, false, 5e-3},
		{"qwen2", tensor.F32, true, 1e-4},
		// Quantized activations (BF16, Q8_0 blocks) add noise the random
		// model amplifies; the bounds are ~2× what is observed, far below
		// the O(1) error of any wiring mistake.
		{"llama", tensor.F16, false, 1e-2},
		{"llama", tensor.BF16, false, 5e-2},
		{"llama", tensor.Q8_0, false, 0.15},
		{"qwen2", tensor.Q4_0, false, 0.15},
	} {
		t.Run(fmt.Sprintf("%s-%v-f32cache=%v", tc.arch, tc.typ, tc.f32), func(t *testing.T) {
			o := tiny
			o.Arch, o.Type = tc.arch, tc.typ
			m := writeModel(t, o)
			toks := testTokens(12, m.Config.Vocab, 1)
			kv, err := m.NewCache(1, 32, tc.f32)
			if err != nil {
				t.Fatal(err)
			}
			got := prefill(t, m.NewState(16, nil), kv, toks)
			checkNearRef(t, got, refForward(m, toks), tc.tol)
			if kv.Len(0) != len(toks) {
				t.Errorf("cache length %d after prefill of %d", kv.Len(0), len(toks))
			}
		})
	}
}

// TestBatchInvariance checks that a token's logits are bit-identical when it
// is computed alone, in a prefill, and in a batch of 9 tokens mixing other
// sequences at other positions, with 1 and 2 threads, F16 and F32 caches.
func TestBatchInvariance(t *testing.T) {
	for _, typ := range []tensor.Type{tensor.F32, tensor.F16, tensor.BF16, tensor.Q8_0, tensor.Q4_0,
		tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.IQ4_NL} {
		o := tiny
		o.Type = typ
		m := writeModel(t, o)
		V := m.Config.Vocab
		seqToks := [][]int32{testTokens(10, V, 1), testTokens(10, V, 2), testTokens(10, V, 3)}
		for _, f32 := range []bool{false, true} {
			// Reference: sequence 0 token by token, 1 thread.
			pool1 := tensor.NewPool(1)
			defer pool1.Close()
			st := m.NewState(9, pool1)
			kv, _ := m.NewCache(3, 32, f32)
			alone := make([][]float32, 10)
			for p, tok := range seqToks[0] {
				var b Batch
				b.Add(tok, int32(p), 0, true)
				alone[p] = make([]float32, V)
				if err := st.Forward(&b, kv, alone[p]); err != nil {
					t.Fatal(err)
				}
			}
			for _, threads := range []int{1, 2} {
				pool := tensor.NewPool(threads)
				defer pool.Close()
				st := m.NewState(9, pool)
				kv, _ := m.NewCache(3, 32, f32)
				// Prefill positions 0..5 of seq 0, 0..2 of seq 1, 0..7 of seq 2 (in two batches).
				var b Batch
				for p := 0; p < 6; p++ {
					b.Add(seqToks[0][p], int32(p), 0, false)
				}
				for p := 0; p < 3; p++ {
					b.Add(seqToks[1][p], int32(p), 1, false)
				}
				if err := st.Forward(&b, kv, nil); err != nil {
					t.Fatal(err)
				}
				b.Reset()
				for p := 0; p < 8; p++ {
					b.Add(seqToks[2][p], int32(p), 2, false)
				}
				if err := st.Forward(&b, kv, nil); err != nil {
					t.Fatal(err)
				}
				// A 9-token ragged batch: seq 1 at 3..5, seq 0 at 6..9, seq 2 at 8..9.
				b.Reset()
				b.Add(seqToks[1][3], 3, 1, true)
				for p := 6; p < 10; p++ {
					b.Add(seqToks[0][p], int32(p), 0, true)
				}
				b.Add(seqToks[1][4], 4, 1, false)
				b.Add(seqToks[2][8], 8, 2, true)
				b.Add(seqToks[1][5], 5, 1, true)
				b.Add(seqToks[2][9], 9, 2, false)
				logits := make([]float32, b.NumLogits()*V)
				if err := st.Forward(&b, kv, logits); err != nil {
					t.Fatal(err)
				}
				for j, p := range []int{6, 7, 8, 9} {
					got := logits[(1+j)*V : (2+j)*V]
					for i := range V {
						if math.Float32bits(got[i]) != math.Float32bits(alone[p][i]) {
							t.Fatalf("%v f32cache=%v threads=%d: seq 0 pos %d logit %d: batched %v, alone %v",
								typ, f32, threads, p, i, got[i], alone[p][i])
						}
					}
				}
				if kv.Len(0) != 10 || kv.Len(1) != 6 || kv.Len(2) != 10 {
					t.Errorf("lengths %d %d %d, want 10 6 10", kv.Len(0), kv.Len(1), kv.Len(2))
				}
			}
		}
	}
}

func TestForwardNoAllocs(t *testing.T) {
	m := writeModel(t, tiny)
	pool := tensor.NewPool(2)
	defer pool.Close()
	st := m.NewState(5, pool)
	kv, _ := m.NewCache(2, 64, false)
	V := m.Config.Vocab
	logits := make([]float32, 5*V)
	var b Batch
	step := func() {
		b.Reset()
		for s := int32(0); s < 2; s++ {
			n := int32(kv.Len(int(s)))
			if n > 40 {
				kv.SetLen(int(s), 0)
				n = 0
			}
			b.Add(5, n, s, true)
			b.Add(6, n+1, s, s == 0)
		}
		if err := st.Forward(&b, kv, logits); err != nil {
			t.Fatal(err)
		}
	}
	step()
	if a := testing.AllocsPerRun(20, step); a != 0 {
		t.Errorf("Forward allocates %v times per call", a)
	}
}

func TestForwardBadBatch(t *testing.T) {
	m := writeModel(t, tiny)
	st := m.NewState(4, nil)
	kv, _ := m.NewCache(2, 8, false)
	other, _ := kvsync.New(kvsync.Config{Layers: 1, KVHeads: 2, HeadDim: 16, Seqs: 1, MaxPos: 8})
	V := m.Config.Vocab
	logits := make([]float32, 4*V)
	mk := func(toks, pos, seq []int32) *Batch {
		b := &Batch{Tokens: toks, Pos: pos, Seq: seq}
		for range toks {
			b.Logits = append(b.Logits, true)
		}
		return b
	}
	for _, tc := range []struct {
		name   string
		b      *Batch
		kv     *kvsync.Cache
		logits []float32
		want   string
	}{
		{"empty", &Batch{}, kv, logits, "empty"},
		{"too big", mk(make([]int32, 5), []int32{0, 1, 2, 3, 4}, make([]int32, 5)), kv, logits, "maximum batch"},
		{"ragged", &Batch{Tokens: []int32{1}, Pos: []int32{0, 1}, Seq: []int32{0}, Logits: []bool{true}}, kv, logits, "positions"},
		{"token", mk([]int32{int32(V)}, []int32{0}, []int32{0}), kv, logits, "vocabulary"},
		{"negative token", mk([]int32{-1}, []int32{0}, []int32{0}), kv, logits, "vocabulary"},
		{"seq", mk([]int32{1}, []int32{0}, []int32{2}), kv, logits, "slots"},
		{"pos", mk([]int32{1}, []int32{8}, []int32{0}), kv, logits, "positions"},
		{"gap", mk([]int32{1, 2}, []int32{0, 2}, []int32{0, 0}), kv, logits, "gap"},
		{"dup", mk([]int32{1, 2}, []int32{0, 0}, []int32{0, 0}), kv, logits, "both at position"},
		{"logits", mk([]int32{1, 2}, []int32{0, 1}, []int32{0, 0}), kv, logits[:V], "logits buffer"},
		{"cache shape", mk([]int32{1}, []int32{0}, []int32{0}), other, logits, "cache shaped"},
		{"nil cache", mk([]int32{1}, []int32{0}, []int32{0}), nil, logits, "nil cache"},
	} {
		err := st.Forward(tc.b, tc.kv, tc.logits)
		if !errors.Is(err, ErrBatch) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want ErrBatch mentioning %q", tc.name, err, tc.want)
		}
	}
	if kv.Len(0) != 0 || kv.Len(1) != 0 {
		t.Errorf("failed calls changed cache lengths to %d, %d", kv.Len(0), kv.Len(1))
	}
}

// rewrite copies the GGUF file at src into a new file, letting edit change
// metadata (by key) and tensors (by name; returning ok=false drops one).
func rewrite(t *testing.T, src string, kv func(key string, v gguf.Value, w *gguf.Writer) bool,
	tens func(ti *gguf.TensorInfo, w *gguf.Writer) bool) string {
	t.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := gguf.NewWriter()
	for _, e := range f.KV {
		if e.Key == gguf.AlignmentKey {
			continue
		}
		if kv == nil || kv(e.Key, e.Value, w) {
			w.Set(e.Key, e.Value)
		}
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if tens == nil || tens(ti, w) {
			if err := w.AddTensor(ti.Name, ti.Type, ti.Dims, ti.Data); err != nil {
				t.Fatal(err)
			}
		}
	}
	dst := filepath.Join(t.TempDir(), "edited.gguf")
	if err := w.WriteFile(dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestLoadErrors(t *testing.T) {
	src := filepath.Join(t.TempDir(), "m.gguf")
	if err := modeltest.Write(src, tiny); err != nil {
		t.Fatal(err)
	}
	if m, err := Load(src); err != nil {
		t.Fatalf("unedited model: %v", err)
	} else {
		m.Close()
	}
	dropKey := func(k string) func(string, gguf.Value, *gguf.Writer) bool {
		return func(key string, _ gguf.Value, _ *gguf.Writer) bool { return key != k }
	}
	setKey := func(k string, v uint32) func(string, gguf.Value, *gguf.Writer) bool {
		return func(key string, _ gguf.Value, w *gguf.Writer) bool {
			if key == k {
				w.SetUint32(k, v)
				return false
			}
			return true
		}
	}
	for _, tc := range []struct {
		name string
		kv   func(string, gguf.Value, *gguf.Writer) bool
		tens func(*gguf.TensorInfo, *gguf.Writer) bool
		want string
	}{
		{"no arch", dropKey("general.architecture"), nil, "general.architecture: missing"},
		{"arch", func(key string, _ gguf.Value, w *gguf.Writer) bool {
			if key == "general.architecture" {
				w.SetString(key, "gpt2")
				return false
			}
			return true
		}, nil, `unsupported architecture "gpt2"`},
		{"no dim", dropKey("llama.embedding_length"), nil, "llama.embedding_length: missing"},
		{"no eps", dropKey("llama.attention.layer_norm_rms_epsilon"), nil, "layer_norm_rms_epsilon: missing"},
		{"heads", setKey("llama.attention.head_count", 3), nil, "do not divide embedding length"},
		{"kv heads", setKey("llama.attention.head_count_kv", 3), nil, "KV heads do not divide"},
		{"huge dim", setKey("llama.embedding_length", 1<<30), nil, "out of range"},
		{"missing tensor", nil, func(ti *gguf.TensorInfo, _ *gguf.Writer) bool {
			return ti.Name != "blk.1.ffn_up.weight"
		}, "blk.1.ffn_up.weight: missing"},
		{"shape", nil, func(ti *gguf.TensorInfo, w *gguf.Writer) bool {
			if ti.Name == "blk.0.attn_k.weight" { // transpose the declared shape
				w.AddTensor(ti.Name, ti.Type, []uint64{ti.Dims[1], ti.Dims[0]}, ti.Data)
				return false
			}
			return true
		}, "blk.0.attn_k.weight: shape"},
		{"type", nil, func(ti *gguf.TensorInfo, w *gguf.Writer) bool {
			if ti.Name == "blk.0.attn_q.weight" { // same bytes, declared I32
				w.AddTensor(ti.Name, tensor.I32, ti.Dims, ti.Data)
				return false
			}
			return true
		}, "blk.0.attn_q.weight: unsupported type I32"},
	} {
		path := rewrite(t, src, tc.kv, tc.tens)
		m, err := Load(path)
		if err == nil {
			m.Close()
			t.Errorf("%s: loaded", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "model: ") {
			t.Errorf("%s: error %q, want one starting with \"model: \" and containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "absent.gguf")); err == nil {
		t.Error("loaded a missing file")
	}
}

func TestTiedOutput(t *testing.T) {
	o := tiny
	o.Tied = true
	m := writeModel(t, o)
	if !m.TiedEmbeddings() || m.w.output != m.w.tokEmbd {
		t.Fatal("output not tied to token_embd")
	}
	toks := testTokens(4, m.Config.Vocab, 5)
	kv, _ := m.NewCache(1, 8, true)
	got := prefill(t, m.NewState(4, nil), kv, toks)
	want := refForward(m, toks)
	V := m.Config.Vocab
	for i := range V {
		if d := math.Abs(float64(got[3*V+i]) - want[3][i]); d > 1e-3 {
			t.Fatalf("logit %d: got %v want %v", i, got[3*V+i], want[3][i])
		}
	}
}

// TestStateNoGoroutines checks that a State starts no goroutines of its
// own: attention runs on the pool's threads, so dropping a State (which has
// no Close) leaks nothing.
func TestStateNoGoroutines(t *testing.T) {
	m := writeModel(t, tiny)
	pool := tensor.NewPool(3)
	defer pool.Close()
	before := runtime.NumGoroutine()
	st := m.NewState(4, pool)
	kv, _ := m.NewCache(1, 8, false)
	var b Batch
	for i := range 3 {
		b.Add(int32(i+1), int32(i), 0, true)
	}
	if err := st.Forward(&b, kv, make([]float32, 3*m.Config.Vocab)); err != nil {
		t.Fatal(err)
	}
	if n := runtime.NumGoroutine(); n != before {
		t.Errorf("%d goroutines with a 3-thread State, want the pool's %d", n, before)
	}
}
