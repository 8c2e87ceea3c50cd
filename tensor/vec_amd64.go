//go:build amd64 && !noasm

package tensor

// axpyF32AVX2 sets y[i] = fma(x[i], a, y[i]) for i < n&^7.
//
//go:noescape
func axpyF32AVX2(y, x *float32, n int, a float32)

// axpyRoundF16AVX2 sets y[i] = half(fma(x[i], a, y[i])) for i < n&^7.
//
//go:noescape
func axpyRoundF16AVX2(y, x *float32, n int, a float32)

// scaleRoundF16AVX2 sets y[i] = half(y[i]*s) for i < n&^7.
//
//go:noescape
func scaleRoundF16AVX2(y *float32, n int, s float32)

// installAVX2Vec points the attention vector kernels at their AVX2 forms
// (called by installArchImpls where the AVX2 set is in use).
func installAVX2Vec() {
	dotRowsF32Impl = dotRowsF32Fast
	axpyF32Impl = axpyF32Fast
	axpyRoundF16Impl = axpyRoundF16Fast
	scaleRoundF16Impl = scaleRoundF16Fast
}

// The kernels vec_simd.go calls: AVX2.

func f32RowsKernel(w *byte, ws, rows int, x *byte, n int, out *float32) {
	f32Rows(w, ws, rows, x, n, out)
}
func axpyF32Kernel(y, x *float32, n int, a float32)      { axpyF32AVX2(y, x, n, a) }
func axpyRoundF16Kernel(y, x *float32, n int, a float32) { axpyRoundF16AVX2(y, x, n, a) }
func scaleRoundF16Kernel(y *float32, n int, s float32)   { scaleRoundF16AVX2(y, n, s) }
