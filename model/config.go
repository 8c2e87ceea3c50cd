package model

import (
	"fmt"
	"math"

	"github.com/specd-dev/specd/model/gguf"
)

// Config holds a model's hyperparameters, read from GGUF metadata.
type Config struct {
	Arch     string  // general.architecture: "llama" or "qwen2"
	Vocab    int     // vocabulary size (rows of token_embd)
	Dim      int     // embedding length
	Layers   int     // transformer blocks
	Heads    int     // query heads
	KVHeads  int     // key/value heads (grouped-query attention when < Heads)
	HeadDim  int     // elements per head (Dim/Heads unless the file says otherwise)
	FFN      int     // feed-forward hidden size
	CtxLen   int     // training context length
	RopeBase float32 // RoPE frequency base (default 10000)
	NormEps  float32 // RMSNorm epsilon
}

// Limits on hyperparameters, far above any model specd targets; they keep a
// hostile file from making the loader allocate absurd run-state buffers.
const (
	maxDim    = 1 << 16
	maxLayers = 1 << 10
	maxVocab  = 1 << 22
	maxFFN    = 1 << 18
	maxCtx    = 1 << 24
)

// ConfigError reports a missing or invalid hyperparameter.
type ConfigError struct {
	Key string // metadata key (or "" for a derived check)
	Msg string
}

func (e *ConfigError) Error() string {
	if e.Key == "" {
		return "model: " + e.Msg
	}
	return fmt.Sprintf("model: %s: %s", e.Key, e.Msg)
}

// ReadConfig reads and validates the hyperparameters of f. It checks the
// metadata only; New checks tensor shapes against the result.
func ReadConfig(f *gguf.File) (Config, error) {
	var c Config
	arch, ok := f.String("general.architecture")
	if !ok {
		return c, &ConfigError{"general.architecture", "missing (not a model file?)"}
	}
	c.Arch = arch
	if _, ok := archs[arch]; !ok {
		return c, &ConfigError{"general.architecture", fmt.Sprintf("unsupported architecture %q (supported: llama, qwen2)", arch)}
	}
	p := arch + "."
	var err error
	need := func(key string, lo, hi int) int {
		if err != nil {
			return 0
		}
		v, ok := f.Uint(key)
		if !ok {
			if _, present := f.Get(key); present {
				err = &ConfigError{key, "not a non-negative integer"}
			} else {
				err = &ConfigError{key, "missing"}
			}
			return 0
		}
		if v < uint64(lo) || v > uint64(hi) {
			err = &ConfigError{key, fmt.Sprintf("%d out of range [%d, %d]", v, lo, hi)}
			return 0
		}
		return int(v)
	}
	opt := func(key string, def, lo, hi int) int {
		if _, present := f.Get(key); !present {
			return def
		}
		return need(key, lo, hi)
	}
	c.Dim = need(p+"embedding_length", 1, maxDim)
	c.Layers = need(p+"block_count", 1, maxLayers)
	c.Heads = need(p+"attention.head_count", 1, maxDim)
	c.KVHeads = opt(p+"attention.head_count_kv", c.Heads, 1, maxDim)
	c.FFN = need(p+"feed_forward_length", 1, maxFFN)
	c.CtxLen = need(p+"context_length", 1, maxCtx)
	if err != nil {
		return c, err
	}
	if c.Dim%c.Heads != 0 {
		return c, &ConfigError{p + "attention.head_count", fmt.Sprintf("%d heads do not divide embedding length %d", c.Heads, c.Dim)}
	}
	if c.Heads%c.KVHeads != 0 {
		return c, &ConfigError{p + "attention.head_count_kv", fmt.Sprintf("%d KV heads do not divide %d heads", c.KVHeads, c.Heads)}
	}
	c.HeadDim = opt(p+"attention.key_length", c.Dim/c.Heads, 2, maxDim)
	vlen := opt(p+"attention.value_length", c.HeadDim, 2, maxDim)
	rot := opt(p+"rope.dimension_count", c.HeadDim, 2, maxDim)
	if err != nil {
		return c, err
	}
	if vlen != c.HeadDim {
		return c, &ConfigError{p + "attention.value_length", fmt.Sprintf("%d differs from key length %d (unsupported)", vlen, c.HeadDim)}
	}
	if rot != c.HeadDim {
		return c, &ConfigError{p + "rope.dimension_count", fmt.Sprintf("%d differs from head size %d (partial RoPE is unsupported)", rot, c.HeadDim)}
	}
	if c.HeadDim%2 != 0 {
		return c, &ConfigError{p + "attention.key_length", fmt.Sprintf("head size %d is odd", c.HeadDim)}
	}
	if c.Heads*c.HeadDim > maxDim {
		return c, &ConfigError{p + "attention.head_count", "heads × head size too large"}
	}

	c.RopeBase = 10000
	if v, present := f.Get(p + "rope.freq_base"); present {
		x, ok := v.Float()
		if !ok || !(x > 0) || math.IsInf(x, 0) {
			return c, &ConfigError{p + "rope.freq_base", fmt.Sprintf("invalid value %v", v)}
		}
		c.RopeBase = float32(x)
	}
	epsKey := p + "attention.layer_norm_rms_epsilon"
	v, present := f.Get(epsKey)
	if !present {
		return c, &ConfigError{epsKey, "missing"}
	}
	eps, ok := v.Float()
	if !ok || !(eps >= 0) || eps > 1 {
		return c, &ConfigError{epsKey, fmt.Sprintf("invalid value %v", v)}
	}
	c.NormEps = float32(eps)

	// Vocabulary size: <arch>.vocab_size, else the token list's length, else
	// the embedding's row count (checked against the tensor in New).
	if _, present := f.Get(p + "vocab_size"); present {
		c.Vocab = need(p+"vocab_size", 1, maxVocab)
		if err != nil {
			return c, err
		}
	} else if v, ok := f.Get("tokenizer.ggml.tokens"); ok && v.IsArray() {
		c.Vocab = v.Len()
		if c.Vocab < 1 || c.Vocab > maxVocab {
			return c, &ConfigError{"tokenizer.ggml.tokens", fmt.Sprintf("%d tokens out of range", c.Vocab)}
		}
	} else if t, ok := f.Tensor("token_embd.weight"); ok && len(t.Dims) == 2 && t.Dims[1] >= 1 && t.Dims[1] <= maxVocab {
		c.Vocab = int(t.Dims[1])
	} else {
		return c, &ConfigError{p + "vocab_size", "missing, and no tokenizer.ggml.tokens to infer it from"}
	}
	return c, nil
}

// Validate checks the internal consistency of c (for configs built by hand).
func (c Config) Validate() error {
	switch {
	case c.Arch == "":
		return &ConfigError{"", "empty architecture"}
	case c.Dim <= 0 || c.Layers <= 0 || c.Heads <= 0 || c.KVHeads <= 0 || c.HeadDim <= 0 || c.FFN <= 0 || c.Vocab <= 0:
		return &ConfigError{"", fmt.Sprintf("non-positive size in %+v", c)}
	case c.Heads%c.KVHeads != 0:
		return &ConfigError{"", fmt.Sprintf("%d KV heads do not divide %d heads", c.KVHeads, c.Heads)}
	case c.HeadDim%2 != 0:
		return &ConfigError{"", fmt.Sprintf("head size %d is odd", c.HeadDim)}
	}
	return nil
}
