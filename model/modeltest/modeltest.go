// Package modeltest writes small random models as GGUF files that both specd
// and llama.cpp load, for conformance tests, benchmarks and examples.
//
// A model is a pure function of its Options: every tensor is drawn from its
// own stream, seeded from Options.Seed and the tensor's name, so the same
// Options always give the same bytes. Weight scales keep activations O(1)
// through the layers and give logits a standard deviation of a few units, so
// greedy decoding is decided by clear top-1 margins rather than by rounding.
package modeltest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/specd-dev/specd/model/gguf"
	"github.com/specd-dev/specd/tensor"
)

// Options describe a random model.
type Options struct {
	Arch    string // "llama" (default) or "qwen2"
	Dim     int    // embedding width
	Layers  int
	Heads   int
	KVHeads int // 0 means Heads
	FFN     int // feed-forward width
	Vocab   int // ignored when VocabFrom is set
	CtxLen  int // 0 means 2048

	// Type is the weight type of every 2-D matrix, token_embd included;
	// norms and biases stay F32. One of F32, F16, BF16, Q8_0, Q4_0 (K-quants
	// come from llama-quantize, see Quantize). The zero value is F32.
	Type tensor.Type

	// TensorTypes overrides Type for the named matrices ("token_embd.weight",
	// "output.weight", "blk.0.attn_q.weight", ...). A quantized draft that
	// shares the F16 target's embeddings is the target's options with Type
	// Q8_0 and TensorTypes{"token_embd.weight": F16}: every tensor is drawn
	// from its own stream, so equal names give equal values.
	TensorTypes map[string]tensor.Type

	Seed uint64

	// VocabFrom is an optional GGUF file (such as llama.cpp's
	// models/ggml-vocab-*.gguf) whose tokenizer.* metadata is copied; the
	// vocabulary size is then its token count. Empty means a synthetic
	// SentencePiece-style vocabulary of Vocab tokens.
	VocabFrom string

	// Tied omits output.weight, so the output projection is token_embd.
	Tied bool

	// Spread spreads the scales of output.weight's rows: row i is drawn
	// with its standard deviation multiplied by exp(Spread·N(0,1)). With 0
	// the logits are close to Gaussian and the best two of a 32k–152k
	// vocabulary are often within a few thousandths of the logit spread;
	// 0.5 widens the smallest top-1 margins about three times while greedy
	// output stays varied. Not with Tied: there the rows are also the input
	// embeddings, and a large-norm token, once emitted, predicts itself.
	Spread float64

	RopeBase float32 // 0 means 10000 for llama, 1000000 for qwen2
	NormEps  float32 // 0 means 1e-5 for llama, 1e-6 for qwen2
}

// minSyntheticVocab is the size of the synthetic vocabulary's fixed part:
// <unk>, <s>, </s> and the 256 byte tokens.
const minSyntheticVocab = 3 + 256

// FileType returns the general.file_type (llama_ftype) number for a file
// whose matrices are all of type t.
func FileType(t tensor.Type) (uint32, error) {
	switch t {
	case tensor.F32:
		return 0, nil
	case tensor.F16:
		return 1, nil
	case tensor.Q4_0:
		return 2, nil
	case tensor.Q4_1:
		return 3, nil
	case tensor.Q8_0:
		return 7, nil
	case tensor.Q5_0:
		return 8, nil
	case tensor.Q5_1:
		return 9, nil
	case tensor.Q2_K:
		return 10, nil // LLAMA_FTYPE_MOSTLY_Q2_K
	case tensor.Q3_K:
		return 11, nil // LLAMA_FTYPE_MOSTLY_Q3_K_S (every matrix Q3_K)
	case tensor.Q5_K:
		return 16, nil // LLAMA_FTYPE_MOSTLY_Q5_K_S
	case tensor.IQ4_NL:
		return 25, nil
	case tensor.IQ4_XS:
		return 30, nil
	case tensor.BF16:
		return 32, nil
	}
	return 0, fmt.Errorf("modeltest: weight type %v is not written directly (use Quantize for K-quants)", t)
}

// normalize fills defaults and checks o, returning the filled copy.
func (o Options) normalize() (Options, error) {
	if o.Arch == "" {
		o.Arch = "llama"
	}
	if o.Arch != "llama" && o.Arch != "qwen2" {
		return o, fmt.Errorf("modeltest: unknown architecture %q (want llama or qwen2)", o.Arch)
	}
	if o.KVHeads == 0 {
		o.KVHeads = o.Heads
	}
	if o.CtxLen == 0 {
		o.CtxLen = 2048
	}
	if o.RopeBase == 0 {
		o.RopeBase = 10000
		if o.Arch == "qwen2" {
			o.RopeBase = 1000000
		}
	}
	if o.NormEps == 0 {
		o.NormEps = 1e-5
		if o.Arch == "qwen2" {
			o.NormEps = 1e-6
		}
	}
	const limit = 1 << 16
	switch {
	case o.Dim <= 0 || o.Layers <= 0 || o.Heads <= 0 || o.KVHeads <= 0 || o.FFN <= 0 || o.CtxLen <= 0:
		return o, fmt.Errorf("modeltest: Dim, Layers, Heads, FFN and CtxLen must be positive (got %d, %d, %d, %d, %d)",
			o.Dim, o.Layers, o.Heads, o.FFN, o.CtxLen)
	case o.Dim > limit || o.FFN > limit || o.Layers > 256 || o.Heads > o.Dim:
		return o, fmt.Errorf("modeltest: model too large for a test model (dim %d, ffn %d, layers %d, heads %d)",
			o.Dim, o.FFN, o.Layers, o.Heads)
	case o.Dim%o.Heads != 0:
		return o, fmt.Errorf("modeltest: Dim %d is not a multiple of Heads %d", o.Dim, o.Heads)
	case o.Heads%o.KVHeads != 0:
		return o, fmt.Errorf("modeltest: Heads %d is not a multiple of KVHeads %d", o.Heads, o.KVHeads)
	case (o.Dim/o.Heads)%2 != 0:
		return o, fmt.Errorf("modeltest: head dimension %d is odd (RoPE needs pairs)", o.Dim/o.Heads)
	}
	if _, err := FileType(o.Type); err != nil {
		return o, err
	}
	for _, t := range append([]tensor.Type{o.Type}, slices.Collect(maps.Values(o.TensorTypes))...) {
		if _, err := FileType(t); err != nil {
			return o, err
		}
		if bs := t.BlockSize(); o.Dim%bs != 0 || o.FFN%bs != 0 {
			return o, fmt.Errorf("modeltest: %v needs Dim (%d) and FFN (%d) to be multiples of %d", t, o.Dim, o.FFN, bs)
		}
	}
	if o.Spread < 0 || o.Spread > 3 {
		return o, fmt.Errorf("modeltest: Spread %g outside [0, 3]", o.Spread)
	}
	if o.Spread != 0 && o.Tied {
		return o, errors.New("modeltest: Spread needs an untied output.weight")
	}
	if o.VocabFrom == "" && (o.Vocab < minSyntheticVocab || o.Vocab > 1<<20) {
		return o, fmt.Errorf("modeltest: synthetic Vocab %d out of range [%d, %d]", o.Vocab, minSyntheticVocab, 1<<20)
	}
	return o, nil
}

// Generator names the version of the drawing procedure; it changes whenever
// the same Options would give different bytes, and is part of Cached's key.
const Generator = "modeltest-3"

// Encode returns the GGUF bytes of the random model described by o.
func Encode(o Options) ([]byte, error) {
	w, err := build(o)
	if err != nil {
		return nil, err
	}
	b, err := w.Bytes()
	if err != nil {
		return nil, fmt.Errorf("modeltest: %w", err)
	}
	return b, nil
}

// Cached returns the path of the model described by o in directory dir,
// writing it first unless a previous call already did. The file name is a
// hash of o (with VocabFrom's base name rather than its path, so checkouts
// in different directories that share one cache share its files), its
// vocabulary file's size and time, and Generator. The write is atomic, so
// concurrent callers at worst both write it.
func Cached(dir string, o Options) (string, error) {
	k := o
	if k.VocabFrom != "" {
		k.VocabFrom = filepath.Base(k.VocabFrom)
	}
	key := fmt.Sprintf("%s|%+v", Generator, k)
	if o.VocabFrom != "" {
		st, err := os.Stat(o.VocabFrom)
		if err != nil {
			return "", fmt.Errorf("modeltest: vocabulary: %w", err)
		}
		key += fmt.Sprintf("|%d|%d", st.Size(), st.ModTime().UnixNano())
	}
	sum := sha256.Sum256([]byte(key))
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-%x.gguf", o.Arch, o.Type, sum[:8]))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("modeltest: %w", err)
	}
	return path, Write(path, o)
}

// Write writes the random model described by o to path as a GGUF file.
func Write(path string, o Options) error {
	w, err := build(o)
	if err != nil {
		return err
	}
	if err := w.WriteFile(path); err != nil {
		return fmt.Errorf("modeltest: %w", err)
	}
	return nil
}

// build assembles the metadata and tensors of the model in a writer.
func build(o Options) (*gguf.Writer, error) {
	o, err := o.normalize()
	if err != nil {
		return nil, err
	}
	w := gguf.NewWriter()
	a := o.Arch
	w.SetString("general.architecture", a)
	w.SetString("general.name", fmt.Sprintf("specd random %s %dx%d seed %d", a, o.Layers, o.Dim, o.Seed))
	ft, _ := FileType(o.Type)
	w.SetUint32("general.file_type", ft)
	w.SetUint32(a+".context_length", uint32(o.CtxLen))
	w.SetUint32(a+".embedding_length", uint32(o.Dim))
	w.SetUint32(a+".block_count", uint32(o.Layers))
	w.SetUint32(a+".feed_forward_length", uint32(o.FFN))
	w.SetUint32(a+".attention.head_count", uint32(o.Heads))
	w.SetUint32(a+".attention.head_count_kv", uint32(o.KVHeads))
	w.SetFloat32(a+".attention.layer_norm_rms_epsilon", o.NormEps)
	w.SetFloat32(a+".rope.freq_base", o.RopeBase)
	w.SetUint32(a+".rope.dimension_count", uint32(o.Dim/o.Heads))

	vocab, err := setVocab(w, o)
	if err != nil {
		return nil, err
	}
	w.SetUint32(a+".vocab_size", uint32(vocab))

	g := gen{o: o, w: w}
	dim, headDim := o.Dim, o.Dim/o.Heads
	kvDim := o.KVHeads * headDim
	inv := func(n int) float64 { return 1 / math.Sqrt(float64(n)) }

	// Untied: embeddings have unit variance and output.weight maps the
	// unit-RMS final norm to logits of std ~6. Tied: a token's own embedding
	// would dominate its logits (e·e ~ dim against cross terms ~ sqrt(dim))
	// and greedy decoding would repeat the last token, so embeddings are
	// small (std 1/sqrt(dim), far below the layers' O(1) contributions to
	// the residual; the first norm rescales them) and the final norm's
	// weights (~6) set the logit scale instead.
	if o.Tied {
		g.matrix("token_embd.weight", vocab, dim, inv(dim))
		g.norm("output_norm.weight", dim, 6)
	} else {
		g.matrix("token_embd.weight", vocab, dim, 1)
		g.norm("output_norm.weight", dim, 1)
		g.matrixSpread("output.weight", vocab, dim, 6*inv(dim), o.Spread)
	}
	for l := 0; l < o.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		g.norm(p+"attn_norm.weight", dim, 1)
		g.matrix(p+"attn_q.weight", dim, dim, inv(dim))   // (dim -> heads*headDim)
		g.matrix(p+"attn_k.weight", kvDim, dim, inv(dim)) // (dim -> kvHeads*headDim)
		g.matrix(p+"attn_v.weight", kvDim, dim, inv(dim))
		if a == "qwen2" {
			g.vector(p+"attn_q.bias", dim, 0.5)
			g.vector(p+"attn_k.bias", kvDim, 0.5)
			g.vector(p+"attn_v.bias", kvDim, 0.5)
		}
		g.matrix(p+"attn_output.weight", dim, dim, inv(dim))
		g.norm(p+"ffn_norm.weight", dim, 1)
		g.matrix(p+"ffn_gate.weight", o.FFN, dim, inv(dim))
		g.matrix(p+"ffn_up.weight", o.FFN, dim, inv(dim))
		g.matrix(p+"ffn_down.weight", dim, o.FFN, 2*inv(o.FFN))
	}
	if g.err != nil {
		return nil, g.err
	}
	if g.overridden != len(o.TensorTypes) {
		names := slices.Sorted(maps.Keys(o.TensorTypes))
		return nil, fmt.Errorf("modeltest: TensorTypes names a tensor the model does not have (%s)", strings.Join(names, ", "))
	}
	return w, nil
}

// setVocab writes the tokenizer metadata and returns the vocabulary size.
func setVocab(w *gguf.Writer, o Options) (int, error) {
	if o.VocabFrom == "" {
		tokens, scores, types := syntheticVocab(o.Vocab)
		w.SetString("tokenizer.ggml.model", "llama")
		w.SetString("tokenizer.ggml.pre", "default")
		w.SetStrings("tokenizer.ggml.tokens", tokens)
		w.SetFloat32s("tokenizer.ggml.scores", scores)
		w.SetInt32s("tokenizer.ggml.token_type", types)
		w.SetUint32("tokenizer.ggml.unknown_token_id", 0)
		w.SetUint32("tokenizer.ggml.bos_token_id", 1)
		w.SetUint32("tokenizer.ggml.eos_token_id", 2)
		w.SetBool("tokenizer.ggml.add_bos_token", true)
		w.SetBool("tokenizer.ggml.add_eos_token", false)
		return o.Vocab, nil
	}
	f, err := gguf.Open(o.VocabFrom)
	if err != nil {
		return 0, fmt.Errorf("modeltest: vocabulary: %w", err)
	}
	defer f.Close()
	tokens, ok := f.Strings("tokenizer.ggml.tokens")
	if !ok || len(tokens) == 0 {
		return 0, fmt.Errorf("modeltest: %s has no tokenizer.ggml.tokens", o.VocabFrom)
	}
	if len(tokens) > 1<<20 {
		return 0, fmt.Errorf("modeltest: %s has %d tokens, too many for a test model", o.VocabFrom, len(tokens))
	}
	for _, kv := range f.KV {
		if strings.HasPrefix(kv.Key, "tokenizer.") {
			w.Set(kv.Key, kv.Value)
		}
	}
	return len(tokens), nil
}

// syntheticVocab makes a SentencePiece-style vocabulary of n >= 259 tokens:
// <unk>, <s>, </s>, the byte tokens <0x00>..<0xFF>, then distinct lowercase
// pieces, alternately with and without the word-start mark "▁".
func syntheticVocab(n int) (tokens []string, scores []float32, types []int32) {
	const (
		normal  = 1
		unknown = 2
		control = 3
		byteTok = 6
	)
	tokens = make([]string, 0, n)
	types = make([]int32, 0, n)
	tokens = append(tokens, "<unk>", "<s>", "</s>")
	types = append(types, unknown, control, control)
	for b := 0; b < 256; b++ {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, byteTok)
	}
	for i := 0; len(tokens) < n; i++ {
		var sb strings.Builder
		if i%2 == 0 {
			sb.WriteString("▁")
		}
		// Bijective base-26 of i/2 ("a".."z", "aa".."zz", ...): distinct.
		k := i/2 + 1
		var piece []byte
		for k > 0 {
			k--
			piece = append(piece, byte('a'+k%26))
			k /= 26
		}
		for j := len(piece) - 1; j >= 0; j-- {
			sb.WriteByte(piece[j])
		}
		tokens = append(tokens, sb.String())
		types = append(types, normal)
	}
	scores = make([]float32, n)
	for i := minSyntheticVocab; i < n; i++ {
		scores[i] = -float32(i - minSyntheticVocab)
	}
	return tokens, scores, types
}

// gen draws the tensors of one model into a writer, keeping the first error.
type gen struct {
	o   Options
	w   *gguf.Writer
	err error
	buf []float32

	overridden int // matrices whose type came from o.TensorTypes
}

// stream returns the random stream of the tensor called name.
func (g *gen) stream(name string) *Rand {
	h := uint64(14695981039346656037) // FNV-1a of the name, mixed with the seed
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	return NewRand(g.o.Seed ^ h)
}

// matrix adds a (rows, cols) weight matrix of type o.Type with N(0, std²)
// entries; ne0 = cols, as GGUF stores it.
func (g *gen) matrix(name string, rows, cols int, std float64) {
	g.matrixSpread(name, rows, cols, std, 0)
}

// matrixSpread is matrix with row i's standard deviation multiplied by
// exp(spread·N(0,1)), drawn from the stream of name+"/rows".
func (g *gen) matrixSpread(name string, rows, cols int, std, spread float64) {
	if g.err != nil {
		return
	}
	var rowScale *Rand
	if spread != 0 {
		rowScale = g.stream(name + "/rows")
	}
	r := g.stream(name)
	t := g.o.Type
	if tt, ok := g.o.TensorTypes[name]; ok {
		t = tt
		g.overridden++
	}
	rowBytes := tensor.RowSize(t, cols)
	data := make([]byte, rows*rowBytes)
	if cap(g.buf) < cols {
		g.buf = make([]float32, cols)
	}
	row := g.buf[:cols]
	for i := 0; i < rows; i++ {
		sd := std
		if rowScale != nil {
			sd *= math.Exp(spread * rowScale.Norm())
		}
		for j := range row {
			row[j] = float32(sd * r.Norm())
		}
		if err := tensor.QuantizeRow(data[i*rowBytes:(i+1)*rowBytes], t, row); err != nil {
			g.err = fmt.Errorf("modeltest: %s: %w", name, err)
			return
		}
	}
	g.add(name, t, []uint64{uint64(cols), uint64(rows)}, data)
}

// norm adds an F32 norm weight vector with entries scale·(1 + 0.1·N(0,1)).
func (g *gen) norm(name string, n int, scale float64) {
	r := g.stream(name)
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(scale * (1 + 0.1*r.Norm()))
	}
	g.add(name, tensor.F32, []uint64{uint64(n)}, f32Bytes(v))
}

// vector adds an F32 vector with N(0, std²) entries (a bias).
func (g *gen) vector(name string, n int, std float64) {
	r := g.stream(name)
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(std * r.Norm())
	}
	g.add(name, tensor.F32, []uint64{uint64(n)}, f32Bytes(v))
}

func (g *gen) add(name string, t tensor.Type, dims []uint64, data []byte) {
	if g.err != nil {
		return
	}
	if err := g.w.AddTensor(name, t, dims, data); err != nil {
		g.err = fmt.Errorf("modeltest: %s: %w", name, err)
	}
}

// f32Bytes encodes v as little-endian float32.
func f32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		u := math.Float32bits(x)
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return b
}

// ErrNoPeer is returned by the peer helpers when llama.cpp's tools are not
// built (run tools/peer/build.sh).
var ErrNoPeer = errors.New("modeltest: llama.cpp tools not built (run tools/peer/build.sh)")
