// Package tensor holds the weight types of GGUF files and the kernels that
// compute with them: dot products, multi-token matrix multiplication on a
// worker pool, activation quantization and F16/BF16 conversion.
//
// Type ids are those of ggml, so a GGUF tensor's type field converts directly.
//
// # Kernels and the CPU
//
// Every kernel has a pure-Go reference, and most have assembly forms that
// give the same bits: AVX2 (with FMA and F16C) and AVX-512 VNNI on x86-64,
// NEON with the SDOT, FMLAL and SMMLA extensions on arm64. dispatch.go
// chooses the forms once, at package initialisation, from the CPU features
// golang.org/x/sys/cpu reports and the SPECD_CPU environment variable
// (avx2 or generic on x86-64, neon on arm64, to run fewer extensions than
// the CPU has), and registers every type's kernels in one fixed order.
// KernelSet names the set in use ("avx512-vnni", "avx2",
// "neon+dotprod+fhm+i8mm", "generic"); `specd inspect --cpu` prints it
// with CPUFeatures.
//
// Two summation orders are choices rather than CPU features: SetQ8_0Order
// (the rows order, fast for several tokens, or llama.cpp's lanes order) and
// SetQ2KOrder. They apply to the whole process: the model converts a
// layer's activations once for all matrices of one weight type (Q, K, V;
// gate and up) in the activation layout of the type's kernels, which
// differs between the orders under VNNI, so one order per type keeps that
// sharing; a process that needs llama.cpp's bits sets the order once at
// start.
//
// # Interleaved weights
//
// Repack, which the model applies to every weight matrix it binds, copies
// a matrix into a layout with eight rows interleaved block by block where
// the kernel set in use has a kernel for it (Q4_0 and Q8_0; see
// repack.go), so that a one-token pass reads one stream and decodes
// without a transpose. The copy gives MatMul the same bits; its rows are
// not contiguous (Matrix.DequantizeRow reads one back; Row refuses).
//
// # How to add a weight type
//
//  1. types.go: the ggml id and a typeInfo (name, elements and bytes per
//     block, supported).
//  2. A file named after the type (q5_0.go, iq4xs.go) with the block layout
//     in a comment, the reference dot against its activation type (ggml's
//     vec_dot_type: Q8_0, Q8_1 or Q8_K) written as llama.cpp's CPU backend
//     computes it, the dequantizer and the reference quantizer, and a
//     register<Type> function that records them (registerKernel,
//     registerDequant, registerQuantize; registerGemv for a multi-row form).
//  3. dispatch.go: call that function from registerKernels, after the
//     activation types it needs.
//  4. Tests: the type's dot against a float64 dot of its dequantized values,
//     its quantizer against ggml's output (testdata), and MatMul's batch
//     invariance; the model conformance suite gets a fixture of the type.
//  5. Assembly, if wanted: a <kernel>_<arch>.s with a body-less Go stub whose
//     comment is the reference loop, installed by the arch's dispatch file
//     (installArchImpls or registerArchGemvs) where the CPU has the
//     features, and a test comparing it with the reference over odd lengths,
//     offsets and guard values under every form (TestKernelForms). The
//     assembly must give the reference's bits: the same operations in the
//     same order per output. Multi-token forms are best generated: in
//     tensor/asm (avo) a T-token K-quant kernel is one description that
//     ktForm writes as a VNNI and an AVX2 form (go generate ./tensor;
//     TestGeneratedAVX2KernelsVEX fails where an AVX2 form would take an
//     AVX-512 register).
package tensor
