package modeltest

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/specd-dev/specd/model/gguf"
	"github.com/specd-dev/specd/tensor"
)

func small() Options {
	return Options{Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, FFN: 96, Vocab: 300, Seed: 7}
}

func encode(t *testing.T, o Options) []byte {
	t.Helper()
	b, err := Encode(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWriteMetadataAndShapes(t *testing.T) {
	for _, tc := range []struct {
		arch string
		typ  tensor.Type
		tied bool
	}{
		{"llama", tensor.F32, false},
		{"llama", tensor.Q8_0, true},
		{"qwen2", tensor.F16, true},
		{"qwen2", tensor.Q4_0, false},
		{"llama", tensor.BF16, false},
		{"llama", tensor.Q5_0, false},
		{"qwen2", tensor.IQ4_NL, true},
	} {
		t.Run(tc.arch+"-"+tc.typ.String(), func(t *testing.T) {
			o := small()
			o.Arch, o.Type, o.Tied = tc.arch, tc.typ, tc.tied
			path := filepath.Join(t.TempDir(), "m.gguf")
			if err := Write(path, o); err != nil {
				t.Fatal(err)
			}
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if a, _ := f.String("general.architecture"); a != tc.arch {
				t.Errorf("architecture %q, want %q", a, tc.arch)
			}
			wantU := map[string]uint64{
				".context_length": 2048, ".embedding_length": 64, ".block_count": 2,
				".feed_forward_length": 96, ".attention.head_count": 4,
				".attention.head_count_kv": 2, ".rope.dimension_count": 16, ".vocab_size": 300,
			}
			for k, want := range wantU {
				if got, ok := f.Uint(tc.arch + k); !ok || got != want {
					t.Errorf("%s%s = %d (present %v), want %d", tc.arch, k, got, ok, want)
				}
			}
			ft, _ := FileType(tc.typ)
			if got, _ := f.Uint("general.file_type"); got != uint64(ft) {
				t.Errorf("file_type %d, want %d", got, ft)
			}
			base, _ := f.Float(tc.arch + ".rope.freq_base")
			if want := map[string]float64{"llama": 1e4, "qwen2": 1e6}[tc.arch]; base != want {
				t.Errorf("rope.freq_base %g, want %g", base, want)
			}
			toks, _ := f.Strings("tokenizer.ggml.tokens")
			if len(toks) != 300 {
				t.Errorf("%d tokens, want 300", len(toks))
			}
			shapes := map[string][]uint64{
				"token_embd.weight":        {64, 300},
				"output_norm.weight":       {64},
				"blk.1.attn_q.weight":      {64, 64},
				"blk.1.attn_k.weight":      {64, 32},
				"blk.1.attn_v.weight":      {64, 32},
				"blk.1.attn_output.weight": {64, 64},
				"blk.1.ffn_gate.weight":    {64, 96},
				"blk.1.ffn_up.weight":      {64, 96},
				"blk.1.ffn_down.weight":    {96, 64},
				"blk.0.ffn_norm.weight":    {64},
			}
			if !tc.tied {
				shapes["output.weight"] = []uint64{64, 300}
			}
			if tc.arch == "qwen2" {
				shapes["blk.0.attn_q.bias"] = []uint64{64}
				shapes["blk.0.attn_k.bias"] = []uint64{32}
			}
			for name, dims := range shapes {
				ti, ok := f.Tensor(name)
				if !ok {
					t.Errorf("tensor %s missing", name)
					continue
				}
				if !slices.Equal(ti.Dims, dims) {
					t.Errorf("%s dims %v, want %v", name, ti.Dims, dims)
				}
				want := tc.typ
				if len(dims) == 1 {
					want = tensor.F32
				}
				if ti.Type != want {
					t.Errorf("%s type %v, want %v", name, ti.Type, want)
				}
				if n := tensor.RowSize(ti.Type, int(dims[0])) * int(product(dims[1:])); len(ti.Data) != n {
					t.Errorf("%s has %d bytes, want %d", name, len(ti.Data), n)
				}
			}
			if _, ok := f.Tensor("output.weight"); ok && tc.tied {
				t.Error("tied model has output.weight")
			}
			wantTensors := 2 + 9*2
			if !tc.tied {
				wantTensors++
			}
			if tc.arch == "qwen2" {
				wantTensors += 3 * 2
			}
			if len(f.Tensors) != wantTensors {
				t.Errorf("%d tensors, want %d", len(f.Tensors), wantTensors)
			}
		})
	}
}

func product(d []uint64) uint64 {
	p := uint64(1)
	for _, x := range d {
		p *= x
	}
	return p
}

func TestCached(t *testing.T) {
	dir := t.TempDir()
	o := small()
	p1, err := Cached(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, encode(t, o)) {
		t.Fatal("cached file differs from Encode")
	}
	// A second call must reuse the file, not rewrite it.
	if err := os.WriteFile(p1, []byte("marker"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p2, err := Cached(dir, o); err != nil || p2 != p1 {
		t.Fatalf("second call: %q, %v; want %q", p2, err, p1)
	}
	if b, _ := os.ReadFile(p1); string(b) != "marker" {
		t.Fatal("second call rewrote the cached file")
	}
	o.Seed++
	if p3, err := Cached(dir, o); err != nil || p3 == p1 {
		t.Fatalf("other seed: %q, %v; want a new file", p3, err)
	}
}

func TestWriteDeterministic(t *testing.T) {
	a, b := encode(t, small()), encode(t, small())
	if !bytes.Equal(a, b) {
		t.Fatal("two writes with the same options differ")
	}
	o := small()
	o.Seed++
	if bytes.Equal(a, encode(t, o)) {
		t.Fatal("a different seed gave the same file")
	}
}

// TestWeightScales checks the drawn statistics the package comment promises:
// unit-variance embeddings, 1/sqrt(fan_in) projections, norms near 1.
func TestWeightScales(t *testing.T) {
	o := Options{Dim: 256, Layers: 1, Heads: 8, FFN: 512, Vocab: 2000, Seed: 3}
	untied, err := gguf.Parse(encode(t, o))
	if err != nil {
		t.Fatal(err)
	}
	o.Tied = true
	tied, err := gguf.Parse(encode(t, o))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f         *gguf.File
		name      string
		mean, std float64
	}{
		{untied, "token_embd.weight", 0, 1},
		{untied, "output.weight", 0, 6 / 16.0},
		{untied, "output_norm.weight", 1, 0.1},
		{untied, "blk.0.attn_q.weight", 0, 1 / 16.0},
		{untied, "blk.0.ffn_down.weight", 0, 2 / math.Sqrt(512)},
		{untied, "blk.0.attn_norm.weight", 1, 0.1},
		{tied, "token_embd.weight", 0, 1 / 16.0},
		{tied, "output_norm.weight", 6, 0.6},
		{tied, "blk.0.ffn_norm.weight", 1, 0.1},
	} {
		f := tc.f
		ti, ok := f.Tensor(tc.name)
		if !ok {
			t.Fatalf("%s missing", tc.name)
		}
		v := make([]float32, len(ti.Data)/4)
		tensor.DequantizeRow(v, tensor.F32, ti.Data)
		var s, s2 float64
		for _, x := range v {
			s += float64(x)
			s2 += float64(x) * float64(x)
		}
		n := float64(len(v))
		mean := s / n
		std := math.Sqrt(s2/n - mean*mean)
		if math.Abs(mean-tc.mean) > 4*tc.std/math.Sqrt(n) || math.Abs(std/tc.std-1) > 4/math.Sqrt(2*n) {
			t.Errorf("%s: mean %.4f std %.4f, want %.4f and %.4f", tc.name, mean, std, tc.mean, tc.std)
		}
	}
}

// TestSpread checks that Spread varies the output rows' scales log-normally:
// the standard deviation of log(row RMS) is about Spread, and 0 keeps rows
// at one scale.
func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		tied   bool
		name   string
		spread float64
	}{
		{false, "output.weight", 0},
		{false, "output.weight", 0.5},
		{false, "output.weight", 1},
	} {
		o := Options{Dim: 256, Layers: 1, Heads: 8, FFN: 256, Vocab: 2000, Seed: 5, Tied: tc.tied, Spread: tc.spread}
		f, err := gguf.Parse(encode(t, o))
		if err != nil {
			t.Fatal(err)
		}
		ti, _ := f.Tensor(tc.name)
		row := make([]float32, 256)
		var s, s2 float64
		rows := len(ti.Data) / (4 * 256)
		for i := 0; i < rows; i++ {
			tensor.DequantizeRow(row, tensor.F32, ti.Data[i*1024:(i+1)*1024])
			var ss float64
			for _, x := range row {
				ss += float64(x) * float64(x)
			}
			l := 0.5 * math.Log(ss/256)
			s += l
			s2 += l * l
		}
		sd := math.Sqrt(s2/float64(rows) - (s/float64(rows))*(s/float64(rows)))
		// Sampling noise of a 256-element RMS adds ~1/sqrt(2·256) ≈ 0.044.
		want := math.Sqrt(tc.spread*tc.spread + 1.0/512)
		if math.Abs(sd-want) > 0.1*want+0.005 {
			t.Errorf("%s spread %g: std of log row RMS %.4f, want %.4f", tc.name, tc.spread, sd, want)
		}
	}
}

func TestWriteRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*Options)
		want string
	}{
		{func(o *Options) { o.Arch = "gpt2" }, "unknown architecture"},
		{func(o *Options) { o.Dim = 0 }, "must be positive"},
		{func(o *Options) { o.Heads = 5 }, "not a multiple of Heads"},
		{func(o *Options) { o.KVHeads = 3 }, "not a multiple of KVHeads"},
		{func(o *Options) { o.Type = tensor.Q8_0; o.FFN = 100 }, "multiples of 32"},
		{func(o *Options) { o.Type = tensor.Q4_K }, "not written directly"},
		{func(o *Options) { o.Vocab = 10 }, "synthetic Vocab"},
		{func(o *Options) { o.Dim = 1 << 20 }, "too large"},
		{func(o *Options) { o.Dim, o.Heads = 66, 66 }, "odd"},
		{func(o *Options) { o.VocabFrom = "/nonexistent/vocab.gguf" }, "vocabulary"},
		{func(o *Options) { o.Spread = -1 }, "Spread"},
		{func(o *Options) { o.Spread, o.Tied = 0.5, true }, "untied"},
	} {
		o := small()
		tc.mod(&o)
		err := Write(filepath.Join(t.TempDir(), "m.gguf"), o)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "modeltest: ") {
			t.Errorf("options %+v: error %v, want one containing %q", o, err, tc.want)
		}
	}
}

func TestVocabFromCopiesTokenizer(t *testing.T) {
	dir := t.TempDir()
	w := gguf.NewWriter()
	w.SetString("general.architecture", "llama")
	w.SetString("tokenizer.ggml.model", "gpt2")
	w.SetStrings("tokenizer.ggml.tokens", []string{"a", "b", "c", "ab", "bc"})
	w.SetStrings("tokenizer.ggml.merges", []string{"a b", "b c"})
	w.SetUint32("tokenizer.ggml.eos_token_id", 4)
	w.SetUint32("llama.block_count", 99)
	vpath := filepath.Join(dir, "vocab.gguf")
	if err := w.WriteFile(vpath); err != nil {
		t.Fatal(err)
	}
	o := small()
	o.VocabFrom, o.Vocab = vpath, 0
	path := filepath.Join(dir, "m.gguf")
	if err := Write(path, o); err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if m, _ := f.String("tokenizer.ggml.model"); m != "gpt2" {
		t.Errorf("tokenizer model %q, want gpt2", m)
	}
	if m, _ := f.Strings("tokenizer.ggml.merges"); len(m) != 2 || m[1] != "b c" {
		t.Errorf("merges %q", m)
	}
	if id, _ := f.Uint("tokenizer.ggml.eos_token_id"); id != 4 {
		t.Errorf("eos %d, want 4", id)
	}
	if n, _ := f.Uint("llama.block_count"); n != 2 {
		t.Errorf("block_count %d: non-tokenizer keys must not be copied", n)
	}
	if ti, _ := f.Tensor("token_embd.weight"); ti == nil || ti.Dims[1] != 5 {
		t.Errorf("token_embd %+v, want 5 rows", ti)
	}
}

func TestSyntheticVocab(t *testing.T) {
	tokens, scores, types := syntheticVocab(2000)
	if len(tokens) != 2000 || len(scores) != 2000 || len(types) != 2000 {
		t.Fatalf("lengths %d %d %d", len(tokens), len(scores), len(types))
	}
	seen := map[string]int{}
	for i, s := range tokens {
		if j, dup := seen[s]; dup {
			t.Fatalf("token %q at %d and %d", s, j, i)
		}
		seen[s] = i
	}
	if tokens[3] != "<0x00>" || tokens[258] != "<0xFF>" || types[100] != 6 || types[0] != 2 || types[1] != 3 {
		t.Errorf("fixed part wrong: %q %q types %d %d %d", tokens[3], tokens[258], types[100], types[0], types[1])
	}
	if tokens[259] != "▁a" || tokens[260] != "a" || tokens[261] != "▁b" {
		t.Errorf("pieces start %q %q %q", tokens[259], tokens[260], tokens[261])
	}
}

func TestRandNorm(t *testing.T) {
	r := NewRand(1)
	const n = 200000
	var s, s2, s4 float64
	for i := 0; i < n; i++ {
		x := r.Norm()
		s += x
		s2 += x * x
		s4 += x * x * x * x
	}
	mean, v, k := s/n, s2/n, s4/n
	if math.Abs(mean) > 0.01 || math.Abs(v-1) > 0.015 || math.Abs(k-3) > 0.1 {
		t.Errorf("mean %.4f variance %.4f fourth moment %.3f, want 0, 1, 3", mean, v, k)
	}
	a, b := NewRand(42), NewRand(42)
	for i := 0; i < 10; i++ {
		if a.Uint64() != b.Uint64() {
			t.Fatal("same seed, different streams")
		}
	}
	if NewRand(0).Uint64() != 0xe220a8397b1dcdaf {
		t.Error("SplitMix64 first output for seed 0 is not the published value")
	}
}

func TestTopTwo(t *testing.T) {
	for _, tc := range []struct {
		l      []float32
		b, s   int32
		margin float32
	}{
		{[]float32{1, 2}, 1, 0, 1},
		{[]float32{2, 2, 1}, 0, 1, 0},
		{[]float32{0, 5, 3, 5, 4}, 1, 3, 0},
		{[]float32{0, 1, 3, 2, 9}, 4, 2, 6},
		{[]float32{-1, -3, -2}, 0, 2, 1},
	} {
		got := TopTwo(tc.l)
		if got.ID1 != tc.b || got.ID2 != tc.s || got.Margin() != tc.margin {
			t.Errorf("TopTwo(%v) = %+v, want %d, %d margin %g", tc.l, got, tc.b, tc.s, tc.margin)
		}
	}
}

// TestTensorTypes checks that a quantized copy of a model keeps the
// overridden tensors byte for byte (a draft sharing the target's
// embeddings), quantizes the rest, and that a name the model lacks is an
// error rather than silently ignored.
func TestTensorTypes(t *testing.T) {
	target := small()
	target.Type = tensor.F16
	draft := target
	draft.Type = tensor.Q8_0
	draft.TensorTypes = map[string]tensor.Type{"token_embd.weight": tensor.F16}
	tf, err := gguf.Parse(encode(t, target))
	if err != nil {
		t.Fatal(err)
	}
	df, err := gguf.Parse(encode(t, draft))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"token_embd.weight", "output.weight", "blk.1.ffn_down.weight"} {
		ti, _ := tf.Tensor(name)
		di, ok := df.Tensor(name)
		if !ok {
			t.Fatalf("draft lacks %s", name)
		}
		same := bytes.Equal(ti.Data, di.Data)
		if name == "token_embd.weight" {
			if di.Type != tensor.F16 || !same {
				t.Errorf("%s: draft type %v, bytes equal to the target's %v; want F16 and equal", name, di.Type, same)
			}
			continue
		}
		if di.Type != tensor.Q8_0 {
			t.Errorf("%s: draft type %v, want Q8_0", name, di.Type)
		}
		// The quantized values are the target's, within Q8_0's error.
		cols := int(ti.Dims[0])
		tv, dv := make([]float32, cols), make([]float32, cols)
		tensor.DequantizeRow(tv, tensor.F16, ti.Data[:tensor.RowSize(tensor.F16, cols)])
		tensor.DequantizeRow(dv, tensor.Q8_0, di.Data[:tensor.RowSize(tensor.Q8_0, cols)])
		var amax, maxErr float64
		for i := range tv {
			amax = max(amax, math.Abs(float64(tv[i])))
			maxErr = max(maxErr, math.Abs(float64(tv[i]-dv[i])))
		}
		if maxErr > amax/100 {
			t.Errorf("%s: first row differs from the target's by %g (|max| %g): not a quantized copy", name, maxErr, amax)
		}
	}
	draft.TensorTypes = map[string]tensor.Type{"token_embed.weight": tensor.F16}
	if _, err := Encode(draft); err == nil || !strings.Contains(err.Error(), "token_embed.weight") {
		t.Errorf("misspelt tensor name: err %v, want an error naming it", err)
	}
}
