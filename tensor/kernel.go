package tensor

// The kernel registry: each weight type names the activation type its dot
// product consumes (ggml's vec_dot_type) and the dot itself. Per-type files
// register their kernels from init(), so MatMul, DequantizeRow and
// QuantizeRow find them without a switch over every type here.

// VecDot computes the dot product of n elements: w is one weight row in the
// weight type's block layout, x is one activation row already converted to
// the kernel's activation type. F32 activations are passed as bytes too
// (a view of the float32 slice).
type VecDot func(w, x []byte, n int) float32

// ActQuant converts len(src) float32 activations into dst in an activation
// type's layout. len(src) is a multiple of the type's block size and dst
// holds at least RowSize(act, len(src)) bytes.
type ActQuant func(dst []byte, src []float32)

// gemv computes out[t*ostride+r] = dot(w[r*wstride:], x[t*xstride:], cols)
// for r < rows and t < ntok: the dot products of a range of weight rows with
// a batch of activation rows in one call. Each output must be bit-identical
// to the weight type's VecDot on that pair, whatever rows and ntok are:
// MatMul promises batch invariance. A type without one gets a loop over its
// VecDot.
type gemv func(w []byte, wstride, rows int, x []byte, xstride, ntok, cols int, out []float32, ostride int)

// maxType bounds the type ids the registry tables hold (ggml ids are small).
const maxType = 64

type kernel struct {
	act  Type
	dot  VecDot
	gemv gemv // nil if the type has no multi-row form
}

var (
	kernels    [maxType]kernel
	actQuants  [maxType]ActQuant
	dequants   [maxType]func(dst []float32, src []byte)
	quantizers [maxType]func(dst []byte, src []float32)
	gemvs      [maxType]gemv
)

// registerKernel records dot as the kernel for weights of type weight with
// activations converted to act. It is called from init functions only.
func registerKernel(weight, act Type, dot VecDot) {
	kernels[weight] = kernel{act: act, dot: dot}
}

// registerGemv records f as the multi-row form of weight's kernel.
func registerGemv(weight Type, f gemv) { gemvs[weight] = f }

// registerAct records q as the converter from float32 into activation type act.
func registerAct(act Type, q ActQuant) { actQuants[act] = q }

// registerDequant records f as the converter from one row of type t to float32.
func registerDequant(t Type, f func(dst []float32, src []byte)) { dequants[t] = f }

// registerQuantize records f as the weight-side (reference) quantizer of type t.
func registerQuantize(t Type, f func(dst []byte, src []float32)) { quantizers[t] = f }

func kernelFor(t Type) (kernel, bool) {
	if uint32(t) >= maxType || kernels[t].dot == nil || actQuants[kernels[t].act] == nil {
		return kernel{}, false
	}
	k := kernels[t]
	k.gemv = gemvs[t]
	return k, true
}

// CanMatMul reports whether MatMul has a kernel for weights of type t.
func CanMatMul(t Type) bool { _, ok := kernelFor(t); return ok }

// CanDequantize reports whether DequantizeRow understands type t.
func CanDequantize(t Type) bool { return uint32(t) < maxType && dequants[t] != nil }

// ActType returns the activation type MatMul converts inputs to for weights
// of type t (ggml's vec_dot_type), and whether t has a kernel at all.
func ActType(t Type) (Type, bool) {
	k, ok := kernelFor(t)
	return k.act, ok
}
