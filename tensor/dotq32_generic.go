//go:build !(amd64 || arm64) || noasm

package tensor

// asmQ32 returns the assembly dot and gemv kernels for a 32-element block
// type (Q4_1, Q5_0, Q5_1, IQ4_NL); without assembly there are none and the
// types use their pure-Go references.
func asmQ32(Type) (VecDot, gemv) { return nil, nil }

// registerQ32VNNI installs the AVX-512 forms of Q4_1, Q5_0, Q5_1 and
// IQ4_NL; there are none without assembly.
func registerQ32VNNI() {}
