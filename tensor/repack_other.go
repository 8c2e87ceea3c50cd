//go:build !amd64 || noasm

package tensor

// repackTarget: only the amd64 assembly kernels have interleaved forms.
func repackTarget(Type) (Type, bool) { return 0, false }
