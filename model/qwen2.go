package model

// The qwen2 architecture (Qwen1.5, Qwen2, Qwen2.5): llama's block with
// biases on the Q, K and V projections and RoPE on halves (NEOX pairing,
// x[i] with x[i+d/2]); the output is often tied to the embedding.

func init() {
	registerArch(&arch{name: "qwen2", rope: ropeNeox, bind: bindQwen2})
}

// bindQwen2 binds qwen2's GGUF tensor names: llama's and the Q, K and V
// biases.
func bindQwen2(b *binder, c Config) weights { return bindBlocks(b, c, true) }
