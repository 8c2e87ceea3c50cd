//go:build arm64 && !noasm

package libm

// vector selects the NEON kernels, which every arm64 CPU runs, unless
// SetVector turned them off.
var vector = true

// SetVector selects the NEON forms or the Go loops; package tensor's
// kernel dispatch calls it with the kernel set it chose. It must not run
// concurrently with the functions it switches.
func SetVector(on bool) { vector = on }

// expfsAsm is, for n a multiple of 4: for i := range n { x[i] = Expf(x[i]) },
// glibc's double-precision evaluation two lanes at a time, the table
// entries loaded by index, the special cases blended over the result.
//
//go:noescape
func expfsAsm(x *float32, n int)

// expSumAsm is ExpSum's loop for n a multiple of 4, the sum from zero.
//
//go:noescape
func expSumAsm(dst, x *float32, n int, temp, m float32) float32

// divAsm is, for n a multiple of 4: for i := range n { x[i] /= d }
//
//go:noescape
func divAsm(x *float32, n int, d float32)
