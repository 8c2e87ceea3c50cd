//go:build !nollamacpp && ((linux && !android) || darwin || (android && cgo)) && (amd64 || arm64)

package llamacpp

// The C side of libllama as this package calls it: Go mirrors of the
// structs it passes by value and the functions it resolves, pinned to
// include/llama.h of llama.cpp 0.4.0 (the release node-llama-cpp 3.21.1
// ships; its source bundle is .cache/llama.cpp after tools/peer/fetch.sh).
// The offsets in the comments were printed by a C program compiled against
// that header (offsetof, sizeof) on x86-64; arm64 has the same layout (LP64,
// natural alignment). abi_test.go pins them with unsafe.Offsetof, and Load
// compares the library's default parameter structs with defaultModelParams
// and defaultContextParams, field by field, before anything else is called.

import "structs"

// modelParams mirrors struct llama_model_params (80 bytes).
type modelParams struct {
	_                   structs.HostLayout
	devices             *uintptr // 0: ggml_backend_dev_t *, NULL-terminated; NULL = all devices
	tensorBuftOverrides uintptr  // 8
	nGPULayers          int32    // 16: negative = all layers
	splitMode           int32    // 20: enum llama_split_mode
	loadMode            int32    // 24: enum llama_load_mode
	lazyMode            int32    // 28: enum llama_lazy_mode
	mainGPU             int32    // 32
	_                   int32    // 36: padding
	tensorSplit         uintptr  // 40: const float *
	progressCallback    uintptr  // 48
	progressUserData    uintptr  // 56
	kvOverrides         uintptr  // 64
	vocabOnly           bool     // 72
	checkTensors        bool     // 73
	useExtraBufts       bool     // 74
	noHost              bool     // 75
	noAlloc             bool     // 76
	loadMTP             bool     // 77
	_                   [2]byte  // 78: padding to 80
}

// contextParams mirrors struct llama_context_params (160 bytes).
type contextParams struct {
	_                 structs.HostLayout
	nCtx              uint32  // 0
	nBatch            uint32  // 4
	nUbatch           uint32  // 8
	nSeqMax           uint32  // 12
	nRSSeq            uint32  // 16
	nOutputsMax       uint32  // 20
	nOutputsMaxPerSeq uint32  // 24
	nThreads          int32   // 28
	nThreadsBatch     int32   // 32
	ctxType           int32   // 36: enum llama_context_type
	ropeScalingType   int32   // 40
	poolingType       int32   // 44
	attentionType     int32   // 48
	flashAttnType     int32   // 52
	ropeFreqBase      float32 // 56
	ropeFreqScale     float32 // 60
	yarnExtFactor     float32 // 64
	yarnAttnFactor    float32 // 68
	yarnBetaFast      float32 // 72
	yarnBetaSlow      float32 // 76
	yarnOrigCtx       uint32  // 80
	defragThold       float32 // 84
	cbEval            uintptr // 88
	cbEvalUserData    uintptr // 96
	typeK             int32   // 104: enum ggml_type
	typeV             int32   // 108
	abortCallback     uintptr // 112
	abortCallbackData uintptr // 120
	embeddings        bool    // 128
	offloadKQV        bool    // 129
	noPerf            bool    // 130
	opOffload         bool    // 131
	swaFull           bool    // 132
	kvUnified         bool    // 133
	_                 [2]byte // 134: padding
	samplers          uintptr // 136
	nSamplers         uintptr // 144: size_t
	ctxOther          uintptr // 152
}

// llamaBatch mirrors struct llama_batch (56 bytes). The arrays are the
// library's (llama_batch_init), never Go memory.
type llamaBatch struct {
	_       structs.HostLayout
	nTokens int32    // 0
	_       int32    // 4: padding
	token   *int32   // 8
	embd    *float32 // 16
	pos     *int32   // 24
	nSeqID  *int32   // 32
	seqID   **int32  // 40
	logits  *int8    // 48
}

// ggml_type values used here.
const (
	ggmlTypeF32 = 0
	ggmlTypeF16 = 1
)

// ggml_backend_dev_type values.
var devTypeNames = []string{"CPU", "GPU", "IGPU", "ACCEL", "META"}

// defaultModelParams is llama_model_default_params() of 0.4.0.
var defaultModelParams = modelParams{
	nGPULayers: -1, splitMode: 1, loadMode: -1, lazyMode: 1, useExtraBufts: true,
}

// defaultContextParams is llama_context_default_params() of 0.4.0.
var defaultContextParams = contextParams{
	nCtx: 512, nBatch: 2048, nUbatch: 512, nSeqMax: 1, nOutputsMaxPerSeq: 1,
	nThreads: 4, nThreadsBatch: 4,
	ropeScalingType: -1, poolingType: -1, attentionType: -1, flashAttnType: -1,
	yarnExtFactor: -1, yarnAttnFactor: -1, yarnBetaFast: -1, yarnBetaSlow: -1, defragThold: -1,
	typeK: ggmlTypeF16, typeV: ggmlTypeF16,
	offloadKQV: true, noPerf: true, opOffload: true, swaFull: true,
}

// funcs are the library functions this package calls, resolved by Load.
type funcs struct {
	version                func() string
	printSystemInfo        func() string
	backendInit            func()
	logSet                 func(cb, userData uintptr)
	modelDefaultParams     func() modelParams
	contextDefaultParams   func() contextParams
	modelLoadFromFile      func(path string, p modelParams) uintptr
	modelFree              func(model uintptr)
	modelGetVocab          func(model uintptr) uintptr
	modelNCtxTrain         func(model uintptr) int32
	modelDesc              func(model uintptr, buf *byte, size uintptr) int32
	vocabNTokens           func(vocab uintptr) int32
	initFromModel          func(model uintptr, p contextParams) uintptr
	free                   func(ctx uintptr)
	nCtxSeq                func(ctx uintptr) uint32
	nBatch                 func(ctx uintptr) uint32
	nSeqMax                func(ctx uintptr) uint32
	getMemory              func(ctx uintptr) uintptr
	memorySeqRm            func(mem uintptr, seq, p0, p1 int32) bool
	memorySeqPosMax        func(mem uintptr, seq int32) int32
	batchInit              func(nTokens, embd, nSeqMax int32) llamaBatch
	batchFree              func(b llamaBatch)
	decode                 func(ctx uintptr, b llamaBatch) int32
	getLogitsIth           func(ctx uintptr, i int32) *float32
	setNThreads            func(ctx uintptr, n, nBatch int32)
	ggmlBackendLoadAllFrom func(dir string)
	ggmlBackendDevCount    func() uintptr
	ggmlBackendDevGet      func(i uintptr) uintptr
	ggmlBackendDevName     func(dev uintptr) string
	ggmlBackendDevDesc     func(dev uintptr) string
	ggmlBackendDevType     func(dev uintptr) int32
}

// symbols lists, in the order Load resolves them, every symbol and the
// field it fills. The ggml ones come from libllama's dependencies.
func (f *funcs) symbols() []struct {
	name string
	fn   any
} {
	return []struct {
		name string
		fn   any
	}{
		{"llama_version", &f.version},
		{"llama_print_system_info", &f.printSystemInfo},
		{"llama_backend_init", &f.backendInit},
		{"llama_log_set", &f.logSet},
		{"llama_model_default_params", &f.modelDefaultParams},
		{"llama_context_default_params", &f.contextDefaultParams},
		{"llama_model_load_from_file", &f.modelLoadFromFile},
		{"llama_model_free", &f.modelFree},
		{"llama_model_get_vocab", &f.modelGetVocab},
		{"llama_model_n_ctx_train", &f.modelNCtxTrain},
		{"llama_model_desc", &f.modelDesc},
		{"llama_vocab_n_tokens", &f.vocabNTokens},
		{"llama_init_from_model", &f.initFromModel},
		{"llama_free", &f.free},
		{"llama_n_ctx_seq", &f.nCtxSeq},
		{"llama_n_batch", &f.nBatch},
		{"llama_n_seq_max", &f.nSeqMax},
		{"llama_get_memory", &f.getMemory},
		{"llama_memory_seq_rm", &f.memorySeqRm},
		{"llama_memory_seq_pos_max", &f.memorySeqPosMax},
		{"llama_batch_init", &f.batchInit},
		{"llama_batch_free", &f.batchFree},
		{"llama_decode", &f.decode},
		{"llama_get_logits_ith", &f.getLogitsIth},
		{"llama_set_n_threads", &f.setNThreads},
		{"ggml_backend_load_all_from_path", &f.ggmlBackendLoadAllFrom},
		{"ggml_backend_dev_count", &f.ggmlBackendDevCount},
		{"ggml_backend_dev_get", &f.ggmlBackendDevGet},
		{"ggml_backend_dev_name", &f.ggmlBackendDevName},
		{"ggml_backend_dev_description", &f.ggmlBackendDevDesc},
		{"ggml_backend_dev_type", &f.ggmlBackendDevType},
	}
}
