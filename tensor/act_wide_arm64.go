//go:build arm64 && !noasm

package tensor

// bf16Act is the activation type of BF16 weights: bf16Wide, which the NEON
// kernels multiply straight from memory (act_wide.go).
var bf16Act = bf16Wide
