package model

import (
	"math"
	"testing"

	"github.com/specd-dev/specd/model/modeltest"
	"github.com/specd-dev/specd/tensor"
)

// TestKQuants2Types loads models whose every matrix, token_embd included, is
// Q2_K, Q3_K, Q5_K or IQ4_XS (dims multiples of 256), untied and tied
// (token_embd then serves the embedding lookup through DequantizeRow and
// the output projection through MatMul), and checks their logits against
// the float64 forward pass on the dequantized weights (the bound is Q4_0's
// in TestForwardMatchesReference: the error is the activations'
// re-quantization), and that a prefill's logits equal those of the same
// tokens decoded one at a time on two threads, bit for bit.
func TestKQuants2Types(t *testing.T) {
	forEachTypeModel(t, []tensor.Type{tensor.Q2_K, tensor.Q3_K, tensor.Q5_K, tensor.IQ4_XS}, 256, 512,
		func(t *testing.T, o modeltest.Options) {
			m, toks, got := checkAllOfType(t, o)
			V := m.Config.Vocab
			pool := tensor.NewPool(2)
			defer pool.Close()
			st := m.NewState(8, pool)
			kv2, err := m.NewCache(1, 16, true)
			if err != nil {
				t.Fatal(err)
			}
			one := make([]float32, V)
			for p, tok := range toks {
				var b Batch
				b.Add(tok, int32(p), 0, true)
				if err := st.Forward(&b, kv2, one); err != nil {
					t.Fatal(err)
				}
				for i, v := range one {
					if math.Float32bits(v) != math.Float32bits(got[p*V+i]) {
						t.Fatalf("pos %d: logit %d alone %v, in the prefill %v", p, i, v, got[p*V+i])
					}
				}
			}
		})
}
