//go:build !amd64 || noasm

package tensor

// repackTarget: only the AVX-512 VNNI kernels have interleaved forms.
func repackTarget(Type) (Type, bool) { return 0, false }
