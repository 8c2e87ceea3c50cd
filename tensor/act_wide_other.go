//go:build !amd64 || noasm

package tensor

// f16Act and bf16Act are the activation types of F16 and BF16 weights: F16
// and BF16 for the pure-Go kernels.
var (
	f16Act  = F16
	bf16Act = BF16
)
