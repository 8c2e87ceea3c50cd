package model

import (
	"fmt"
	"math"
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
				m := writeModel(t, o)
				if m.TiedEmbeddings() != o.Tied || m.w.tokEmbd.Type != typ || m.w.output.Type != typ {
					t.Fatalf("tied %v, token_embd %v, output %v", m.TiedEmbeddings(), m.w.tokEmbd.Type, m.w.output.Type)
				}
				toks := testTokens(8, m.Config.Vocab, 3)
				kv, err := m.NewCache(1, 16, true)
				if err != nil {
					t.Fatal(err)
				}
				got := prefill(t, m.NewState(8, nil), kv, toks)
				want := refForward(m, toks)
				V := m.Config.Vocab
				for p := range toks {
					var rms, maxd float64
					for i := range V {
						w := want[p][i]
						rms += w * w
						maxd = math.Max(maxd, math.Abs(float64(got[p*V+i])-w))
					}
					rms = math.Sqrt(rms / float64(V))
					if rms < 0.1 {
						t.Fatalf("pos %d: reference logits RMS %g is degenerate", p, rms)
					}
					if maxd > 0.15*rms {
						t.Errorf("pos %d: max |Δ| = %g, above %g (RMS %g)", p, maxd, 0.15*rms, rms)
					}
				}
			})
		}
	}
}
