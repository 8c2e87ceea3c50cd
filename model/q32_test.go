package model

import (
	"fmt"
	"testing"

	"github.com/specd-dev/specd/model/modeltest"
	"github.com/specd-dev/specd/tensor"
)

// TestQ32Types loads models whose every matrix, token_embd included, is
// Q4_1, Q5_0, Q5_1 or IQ4_NL, untied and tied (token_embd then serves the
// embedding lookup through DequantizeRow and the output projection through
// MatMul), and checks their logits against the float64 forward pass on the
// dequantized weights. The bound is Q4_0's in TestForwardMatchesReference:
// the error is the activations' re-quantization, which the random model
// amplifies.
func TestQ32Types(t *testing.T) {
	for _, typ := range []tensor.Type{tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.IQ4_NL} {
		for _, o := range []modeltest.Options{
			{Arch: "llama", Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, FFN: 96, Vocab: 300, Seed: 7},
			{Arch: "qwen2", Dim: 64, Layers: 2, Heads: 4, KVHeads: 2, FFN: 96, Vocab: 300, Seed: 8, Tied: true},
		} {
			o.Type = typ
			t.Run(fmt.Sprintf("%v-%s-tied=%v", typ, o.Arch, o.Tied), func(t *testing.T) {
				checkAllOfType(t, o)
			})
		}
	}
}
