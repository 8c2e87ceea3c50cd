package model

import "strconv"

// The llama architecture (Llama 1–3, TinyLlama, SmolLM, ...): RMSNorm,
// RoPE on adjacent pairs (llama.cpp's GGUF converter permutes Q and K so
// that LLAMA_ROPE_TYPE_NORM is right for the file as stored), grouped-query
// attention, SwiGLU feed-forward, optional tied output.

func init() {
	registerArch(&arch{name: "llama", rope: ropeNorm, bind: bindLlama})
}

// bindLlama binds llama's GGUF tensor names.
func bindLlama(b *binder, c Config) weights { return bindBlocks(b, c, false) }

// bindBlocks binds the GGUF tensor names llama and its relatives share,
// with biases on the Q, K and V projections where qkvBias (each right after
// its matrix).
func bindBlocks(b *binder, c Config, qkvBias bool) weights {
	qDim, kvDim := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	var w weights
	w.tokEmbd = b.embedding("token_embd.weight", c.Vocab, c.Dim) // (vocab, dim)
	w.outNorm = b.vector("output_norm.weight", c.Dim)            // (dim)
	b.output(&w, c)                                              // (vocab, dim)
	w.layers = make([]layerWeights, c.Layers)
	for i := range w.layers {
		p := "blk." + strconv.Itoa(i) + "."
		l := &w.layers[i]
		l.attnNorm = b.vector(p+"attn_norm.weight", c.Dim) // (dim)
		l.wq = b.matrix(p+"attn_q.weight", qDim, c.Dim)    // (heads*headDim, dim)
		if qkvBias {
			l.bq = b.vector(p+"attn_q.bias", qDim) // (heads*headDim)
		}
		l.wk = b.matrix(p+"attn_k.weight", kvDim, c.Dim) // (kvHeads*headDim, dim)
		if qkvBias {
			l.bk = b.vector(p+"attn_k.bias", kvDim) // (kvHeads*headDim)
		}
		l.wv = b.matrix(p+"attn_v.weight", kvDim, c.Dim) // (kvHeads*headDim, dim)
		if qkvBias {
			l.bv = b.vector(p+"attn_v.bias", kvDim) // (kvHeads*headDim)
		}
		l.wo = b.matrix(p+"attn_output.weight", c.Dim, qDim) // (dim, heads*headDim)
		l.ffnNorm = b.vector(p+"ffn_norm.weight", c.Dim)     // (dim)
		l.gate = b.matrix(p+"ffn_gate.weight", c.FFN, c.Dim) // (ffn, dim)
		l.up = b.matrix(p+"ffn_up.weight", c.FFN, c.Dim)     // (ffn, dim)
		l.down = b.matrix(p+"ffn_down.weight", c.Dim, c.FFN) // (dim, ffn)
	}
	return w
}
