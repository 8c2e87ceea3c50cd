//go:build !nollamacpp && ((linux && !android) || darwin || (android && cgo)) && (amd64 || arm64)

package llamacpp

import (
	"reflect"
	"testing"
)

// TestABILayout pins the Go mirrors of llama.h's structs to the C layout
// of llama.cpp 0.4.0: every field's offset and every struct's size as a C
// compiler gives them for that header (sizeof/offsetof, x86-64; arm64 is
// the same LP64 layout).
func TestABILayout(t *testing.T) {
	for _, tc := range []struct {
		v    any
		size uintptr
		offs map[string]uintptr
	}{
		{modelParams{}, 80, map[string]uintptr{
			"devices": 0, "tensorBuftOverrides": 8, "nGPULayers": 16, "splitMode": 20, "loadMode": 24,
			"lazyMode": 28, "mainGPU": 32, "tensorSplit": 40, "progressCallback": 48, "progressUserData": 56,
			"kvOverrides": 64, "vocabOnly": 72, "checkTensors": 73, "useExtraBufts": 74, "noHost": 75,
			"noAlloc": 76, "loadMTP": 77,
		}},
		{contextParams{}, 160, map[string]uintptr{
			"nCtx": 0, "nBatch": 4, "nUbatch": 8, "nSeqMax": 12, "nRSSeq": 16, "nOutputsMax": 20,
			"nOutputsMaxPerSeq": 24, "nThreads": 28, "nThreadsBatch": 32, "ctxType": 36, "ropeScalingType": 40,
			"poolingType": 44, "attentionType": 48, "flashAttnType": 52, "ropeFreqBase": 56, "ropeFreqScale": 60,
			"yarnExtFactor": 64, "yarnAttnFactor": 68, "yarnBetaFast": 72, "yarnBetaSlow": 76, "yarnOrigCtx": 80,
			"defragThold": 84, "cbEval": 88, "cbEvalUserData": 96, "typeK": 104, "typeV": 108,
			"abortCallback": 112, "abortCallbackData": 120, "embeddings": 128, "offloadKQV": 129, "noPerf": 130,
			"opOffload": 131, "swaFull": 132, "kvUnified": 133, "samplers": 136, "nSamplers": 144, "ctxOther": 152,
		}},
		{llamaBatch{}, 56, map[string]uintptr{
			"nTokens": 0, "token": 8, "embd": 16, "pos": 24, "nSeqID": 32, "seqID": 40, "logits": 48,
		}},
	} {
		ty := reflect.TypeOf(tc.v)
		if ty.Size() != tc.size {
			t.Errorf("%s: %d bytes, C has %d", ty.Name(), ty.Size(), tc.size)
		}
		named := 0
		for i := range ty.NumField() {
			f := ty.Field(i)
			if f.Name == "_" {
				continue
			}
			named++
			want, ok := tc.offs[f.Name]
			if !ok {
				t.Errorf("%s.%s: not in llama.h", ty.Name(), f.Name)
			} else if f.Offset != want {
				t.Errorf("%s.%s at offset %d, C has %d", ty.Name(), f.Name, f.Offset, want)
			}
		}
		if named != len(tc.offs) {
			t.Errorf("%s: %d fields, llama.h %d", ty.Name(), named, len(tc.offs))
		}
	}
}
