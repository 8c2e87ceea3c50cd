// Package llamacpp is a backend.Backend on llama.cpp's libllama, loaded at
// run time with purego (no cgo): the target model runs on whatever ggml
// device the library was built for (the Hexagon NPU of a Snapdragon, a
// GPU, or ggml's CPU code) while the draft stays on specd's Go engine.
//
// Design. Load opens one libllama (a file, or a directory holding one):
// it checks that the file is a shared library for this CPU architecture,
// first loads with RTLD_GLOBAL the libraries beside it that it needs
// (libggml, libggml-base and what they need in turn, read from the ELF
// file), so that the library and the backends ggml loads later find them
// wherever the system linker would not look, resolves every function this
// package calls, and refuses any llama_version() but SupportedVersions,
// because the structs passed by value (abi.go) are pinned to that
// release's llama.h; it then compares the library's default parameter
// structs with the pinned ones and loads ggml's device backends from the
// library's directory. A Model is one llama_model (LoadModel), placed by
// ModelParams (layers offloaded, device). A Backend is one llama_context
// with a sequence (with its own KV cells) per slot: Forward is one
// llama_decode over the whole batch, logits copied out in batch order;
// Len is llama_memory_seq_pos_max+1; Rollback is llama_memory_seq_rm,
// whose result is checked.
//
// Nothing here panics or aborts on bad input from outside (a path, a
// library, a model file, a batch): each gets an error wrapping one of the
// package's sentinels. What llama.cpp itself logs goes to SetLog's writer;
// its error lines are also appended to the error that follows them.
package llamacpp

// ModelParams place a model's weights.
type ModelParams struct {
	// NGPULayers is how many layers llama.cpp offloads to the device
	// (n_gpu_layers); negative means all, 0 none. Without an offload
	// device (a CPU build) it does not matter.
	NGPULayers int
	// Device is the ggml device to offload to, by name (e.g. "HTP0" for
	// the first Hexagon session, "Vulkan0"; case-insensitive). "" lets
	// llama.cpp choose (every GPU-like device); "CPU" or "none" keeps the
	// model on the CPU.
	Device string
}

// ContextParams size a Backend.
type ContextParams struct {
	Seqs     int  // sequence slots (n_seq_max); each has its own KV cells
	MaxPos   int  // positions per slot
	MaxBatch int  // most tokens per Forward (n_batch = n_ubatch, one pass)
	Threads  int  // CPU threads of ggml (n_threads, n_threads_batch); 0: llama.cpp's default
	F32Cache bool // K and V in F32 instead of F16
}

// Device is a ggml device the library can use.
type Device struct {
	Name, Description string
	Type              string // CPU, GPU, IGPU, ACCEL or META
}
