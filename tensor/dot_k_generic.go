//go:build !(amd64 || arm64) || noasm

package tensor

// dotQ4K is the Q4_K × Q8_K kernel registered with MatMul; without
// assembly it is the reference loop.
func dotQ4K(w, x []byte, n int) float32 { return dotQ4KRef(w, x, n) }

// dotQ6K is the Q6_K × Q8_K kernel registered with MatMul; without
// assembly it is the reference loop.
func dotQ6K(w, x []byte, n int) float32 { return dotQ6KRef(w, x, n) }

// dotQ5K is the Q5_K × Q8_K kernel registered with MatMul; without
// assembly it is the reference loop.
func dotQ5K(w, x []byte, n int) float32 { return dotQ5KRef(w, x, n) }

// quantizeQ8K is the registered float32 → Q8_K converter; without assembly
// it is the reference loop.
func quantizeQ8K(dst []byte, src []float32) { quantizeRowQ8K(dst, src) }
