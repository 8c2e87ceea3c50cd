// Package model runs decoder-only transformers (llama, qwen2) from GGUF
// files on the CPU.
//
// Design. Load maps a GGUF file and binds its tensors, zero-copy, to the
// weights of one architecture (llama.go, qwen2.go: the tensor names live
// there and nowhere else). A State holds the preallocated run-state buffers
// of one forward pass of up to maxBatch tokens; Forward takes a Batch of
// tokens from any number of sequences at any positions (prefill,
// single-token decode, and verification of k+1 draft tokens are all the
// same call), writes their keys and values into a kvsync.Cache and returns
// logits for the tokens that ask for them. Every matrix multiplication runs
// once over all tokens of the batch (weights are streamed once per batch);
// attention is per token and head over the token's own sequence.
//
// Arithmetic follows llama.cpp's CPU backend (ggml as built natively for
// the CPU, and glibc's libm) at each rounding point: RMSNorm with a float64
// sum of squares, RoPE angles by a running float32 product through glibc's
// cosf/sinf, SiLU through ggml's vector expf, and flash attention with Q
// rounded to F16, F16 K·Q dots in ggml's SIMD summation order, an online
// softmax with glibc's expf and an F16 value accumulator (F32 with an F32
// cache). Against llama.cpp built natively on the same machine, logits of
// Q8_0 and Q4_0 models are bit-identical step for step (prefill and
// decode; the matrix products come from package tensor). Every token's result
// depends only on its own inputs and cache contents, so logits are bit-for-
// bit the same whatever the batch composition and thread count.
package model

import (
	"errors"
	"fmt"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/kvsync"
	"github.com/specd-dev/specd/model/gguf"
	"github.com/specd-dev/specd/tensor"
)

// Model is a loaded model: hyperparameters and weights bound to the views of
// a GGUF file. It is read-only after Load and may be shared by any number of
// States (draft and target, several goroutines).
type Model struct {
	Config Config
	File   *gguf.File

	arch *arch
	w    weights
	own  bool // File was opened by Load and is closed by Close
}

// weights are the tensors of a llama-style decoder. Shapes are (rows, cols)
// of the row-major matrix as stored: a matrix multiplies a vector of cols.
type weights struct {
	tokEmbd  *tensor.Matrix // (vocab, dim)
	outNorm  []float32      // (dim)
	output   *tensor.Matrix // (vocab, dim); token_embd when tied
	layers   []layerWeights // (layers)
	tiedEmbd bool
}

type layerWeights struct {
	attnNorm []float32      // (dim)
	wq       *tensor.Matrix // (heads*headDim, dim)
	wk       *tensor.Matrix // (kvHeads*headDim, dim)
	wv       *tensor.Matrix // (kvHeads*headDim, dim)
	bq       []float32      // (heads*headDim), qwen2 only
	bk       []float32      // (kvHeads*headDim), qwen2 only
	bv       []float32      // (kvHeads*headDim), qwen2 only
	wo       *tensor.Matrix // (dim, heads*headDim)
	ffnNorm  []float32      // (dim)
	gate     *tensor.Matrix // (ffn, dim)
	up       *tensor.Matrix // (ffn, dim)
	down     *tensor.Matrix // (dim, ffn)
}

// ropeMode is how an architecture pairs the elements RoPE rotates.
type ropeMode int

const (
	ropeNorm ropeMode = iota // adjacent pairs (x[2i], x[2i+1]) — llama
	ropeNeox                 // halves (x[i], x[i+d/2]) — qwen2
)

// arch describes one architecture: its RoPE pairing and the function that
// binds its GGUF tensors.
type arch struct {
	name string
	rope ropeMode
	bind func(b *binder, c Config) weights
}

// archs are the supported architectures, registered by their files.
var archs = map[string]*arch{}

func registerArch(a *arch) { archs[a.name] = a }

// Load opens the GGUF file at path and builds its model. Close releases the
// file.
func Load(path string) (*Model, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := New(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	m.own = true
	return m, nil
}

// New builds a model over an already opened file, which must outlive it.
func New(f *gguf.File) (*Model, error) {
	c, err := ReadConfig(f)
	if err != nil {
		return nil, err
	}
	a := archs[c.Arch]
	b := &binder{f: f}
	w := a.bind(b, c)
	if b.err != nil {
		return nil, b.err
	}
	return &Model{Config: c, File: f, arch: a, w: w}, nil
}

// Close closes the file if Load opened it. The model must not be used after.
func (m *Model) Close() error {
	if m.own {
		m.own = false
		return m.File.Close()
	}
	return nil
}

// TiedEmbeddings reports whether the output projection is token_embd.
func (m *Model) TiedEmbeddings() bool { return m.w.tiedEmbd }

// NewCache allocates a KV cache for this model with seqs sequence slots of
// maxPos positions each, F16 unless f32.
func (m *Model) NewCache(seqs, maxPos int, f32 bool) (*kvsync.Cache, error) {
	return m.NewWindowCache(seqs, maxPos, 0, 0, f32)
}

// NewWindowCache is NewCache with a sliding window of window positions (0:
// none): tokens attend to the last window positions only, and a sequence
// may run past maxPos, the positions stored per slot, which must exceed
// window+rollback by at least the largest forward pass. rollback is how far
// a sequence may be cut back behind a pass (kvsync.Config.Rollback: 2k+2
// for a draft model drafting k tokens).
func (m *Model) NewWindowCache(seqs, maxPos, window, rollback int, f32 bool) (*kvsync.Cache, error) {
	return kvsync.New(kvsync.Config{
		Layers:   m.Config.Layers,
		KVHeads:  m.Config.KVHeads,
		HeadDim:  m.Config.HeadDim,
		Seqs:     seqs,
		MaxPos:   maxPos,
		F32:      f32,
		Window:   window,
		Rollback: rollback,
	})
}

// TensorError reports a tensor that is missing or unusable.
type TensorError struct {
	Name string
	Msg  string
}

func (e *TensorError) Error() string { return fmt.Sprintf("model: tensor %s: %s", e.Name, e.Msg) }

// ErrMissingTensor is wrapped by the TensorError of a required tensor that
// the file lacks.
var ErrMissingTensor = errors.New("model: missing tensor")

type missingError struct{ TensorError }

func (e *missingError) Unwrap() error { return ErrMissingTensor }

// binder looks up GGUF tensors by name and checks their shapes and types,
// keeping the first error (so binding code reads as a plain list).
type binder struct {
	f   *gguf.File
	err error
}

func (b *binder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// lookup returns the tensor called name with dims ne (ne0 first), or nil
// after recording an error. A missing optional tensor returns nil silently.
func (b *binder) lookup(name string, optional bool, ne ...int) *gguf.TensorInfo {
	if b.err != nil {
		return nil
	}
	t, ok := b.f.Tensor(name)
	if !ok {
		if !optional {
			b.fail(&missingError{TensorError{name, "missing"}})
		}
		return nil
	}
	match := len(t.Dims) == len(ne)
	for i := 0; match && i < len(ne); i++ {
		match = t.Dims[i] == uint64(ne[i])
	}
	if !match {
		b.fail(&TensorError{name, fmt.Sprintf("shape %v, want %v", t.Dims, ne)})
		return nil
	}
	return t
}

// matrix binds a weight matrix of rows × cols (GGUF dims {cols, rows}).
func (b *binder) matrix(name string, rows, cols int) *tensor.Matrix {
	return b.matrixOpt(name, false, rows, cols)
}

func (b *binder) matrixOpt(name string, optional bool, rows, cols int) *tensor.Matrix {
	t := b.lookup(name, optional, cols, rows)
	if t == nil {
		return nil
	}
	if !tensor.CanMatMul(t.Type) {
		b.fail(&TensorError{name, fmt.Sprintf("unsupported type %v for a weight matrix", t.Type)})
		return nil
	}
	rs := tensor.RowSize(t.Type, cols)
	if rs < 0 {
		b.fail(&TensorError{name, fmt.Sprintf("row of %d elements is not a whole number of %v blocks", cols, t.Type)})
		return nil
	}
	if len(t.Data) != rs*rows {
		b.fail(&TensorError{name, fmt.Sprintf("has %d bytes of data, want %d", len(t.Data), rs*rows)})
		return nil
	}
	// In the layout the kernels read fastest (a copy, interleaved by
	// eight rows, for Q4_0 with the AVX2 and AVX-512 VNNI kernels and Q8_0
	// with the VNNI ones; the same results).
	return tensor.Repack(&tensor.Matrix{Type: t.Type, Rows: rows, Cols: cols, Data: t.Data})
}

// vector binds a 1-D tensor of n elements, converted to float32.
func (b *binder) vector(name string, n int) []float32 { return b.vectorOpt(name, false, n) }

func (b *binder) vectorOpt(name string, optional bool, n int) []float32 {
	t := b.lookup(name, optional, n)
	if t == nil {
		return nil
	}
	if !tensor.CanDequantize(t.Type) {
		b.fail(&TensorError{name, fmt.Sprintf("unsupported type %v for a vector", t.Type)})
		return nil
	}
	if rs := tensor.RowSize(t.Type, n); rs < 0 || len(t.Data) != rs {
		b.fail(&TensorError{name, fmt.Sprintf("has %d bytes of data for %d elements of %v", len(t.Data), n, t.Type)})
		return nil
	}
	v := make([]float32, n)
	tensor.DequantizeRow(v, t.Type, t.Data)
	return v
}

// embedding binds token_embd, which needs row lookup (DequantizeRow) and,
// when tied, matrix multiplication.
func (b *binder) embedding(name string, rows, cols int) *tensor.Matrix {
	t := b.lookup(name, false, cols, rows)
	if t == nil {
		return nil
	}
	if !tensor.CanDequantize(t.Type) {
		b.fail(&TensorError{name, fmt.Sprintf("unsupported type %v for the token embedding", t.Type)})
		return nil
	}
	rs := tensor.RowSize(t.Type, cols)
	if rs < 0 || len(t.Data) != rs*rows {
		b.fail(&TensorError{name, fmt.Sprintf("has %d bytes of data for %d×%d %v", len(t.Data), rows, cols, t.Type)})
		return nil
	}
	return &tensor.Matrix{Type: t.Type, Rows: rows, Cols: cols, Data: t.Data}
}

// output binds output.weight, falling back to the tied token embedding.
func (b *binder) output(w *weights, c Config) {
	w.output = b.matrixOpt("output.weight", true, c.Vocab, c.Dim)
	if w.output == nil && b.err == nil {
		if w.tokEmbd != nil && !tensor.CanMatMul(w.tokEmbd.Type) {
			b.fail(&TensorError{"token_embd.weight", fmt.Sprintf("unsupported type %v for the (tied) output projection", w.tokEmbd.Type)})
			return
		}
		w.output, w.tiedEmbd = w.tokEmbd, true
	}
}

// Batch is the input of one forward pass (package backend's): token i
// is Tokens[i] at position Pos[i] of sequence slot Seq[i], and its logits
// are produced iff Logits[i].
type Batch = backend.Batch
