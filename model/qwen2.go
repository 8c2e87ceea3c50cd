package model

import "strconv"

// The qwen2 architecture (Qwen1.5, Qwen2, Qwen2.5): llama's block with
// biases on the Q, K and V projections and RoPE on halves (NEOX pairing,
// x[i] with x[i+d/2]); the output is often tied to the embedding.

func init() {
	registerArch(&arch{name: "qwen2", rope: ropeNeox, bind: bindQwen2})
}

// bindQwen2 binds qwen2's GGUF tensor names.
func bindQwen2(b *binder, c Config) weights {
	qDim, kvDim := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	var w weights
	w.tokEmbd = b.embedding("token_embd.weight", c.Vocab, c.Dim) // (vocab, dim)
	w.outNorm = b.vector("output_norm.weight", c.Dim)            // (dim)
	b.output(&w, c)                                              // (vocab, dim)
	w.layers = make([]layerWeights, c.Layers)
	for i := range w.layers {
		p := "blk." + strconv.Itoa(i) + "."
		l := &w.layers[i]
		l.attnNorm = b.vector(p+"attn_norm.weight", c.Dim)   // (dim)
		l.wq = b.matrix(p+"attn_q.weight", qDim, c.Dim)      // (heads*headDim, dim)
		l.bq = b.vector(p+"attn_q.bias", qDim)               // (heads*headDim)
		l.wk = b.matrix(p+"attn_k.weight", kvDim, c.Dim)     // (kvHeads*headDim, dim)
		l.bk = b.vector(p+"attn_k.bias", kvDim)              // (kvHeads*headDim)
		l.wv = b.matrix(p+"attn_v.weight", kvDim, c.Dim)     // (kvHeads*headDim, dim)
		l.bv = b.vector(p+"attn_v.bias", kvDim)              // (kvHeads*headDim)
		l.wo = b.matrix(p+"attn_output.weight", c.Dim, qDim) // (dim, heads*headDim)
		l.ffnNorm = b.vector(p+"ffn_norm.weight", c.Dim)     // (dim)
		l.gate = b.matrix(p+"ffn_gate.weight", c.FFN, c.Dim) // (ffn, dim)
		l.up = b.matrix(p+"ffn_up.weight", c.FFN, c.Dim)     // (ffn, dim)
		l.down = b.matrix(p+"ffn_down.weight", c.Dim, c.FFN) // (dim, ffn)
	}
	return w
}
