package model

import (
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
	forEachTypeModel(t, []tensor.Type{tensor.Q4_1, tensor.Q5_0, tensor.Q5_1, tensor.IQ4_NL}, 64, 96,
		func(t *testing.T, o modeltest.Options) { checkAllOfType(t, o) })
}
