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

// vecDot4 computes four dot products of one weight row w with the
// activation rows at x[0:], x[stride:], x[2*stride:] and x[3*stride:],
// decoding the weights once. Each out[r] must be bit-identical to the weight
// type's VecDot on row r: MatMul mixes both and promises batch invariance.
type vecDot4 func(w, x []byte, stride, n int, out *[4]float32)

// vecDot8 computes the dot products of the eight weight rows at w[0:],
// w[stride:], ..., w[7*stride:] with one activation row x, sharing the
// activation's decoding. Each out[r] must be bit-identical to the weight
// type's VecDot on row r.
type vecDot8 func(w []byte, stride int, x []byte, n int, out *[8]float32)

// maxType bounds the type ids the registry tables hold (ggml ids are small).
const maxType = 64

type kernel struct {
	act  Type
	dot  VecDot
	dot4 vecDot4 // nil if the type has no four-activation-row form
	dot8 vecDot8 // nil if the type has no eight-weight-row form
}

var (
	kernels    [maxType]kernel
	actQuants  [maxType]ActQuant
	dequants   [maxType]func(dst []float32, src []byte)
	quantizers [maxType]func(dst []byte, src []float32)
	kernels4   [maxType]vecDot4
	kernels8   [maxType]vecDot8
)

// registerKernel records dot as the kernel for weights of type weight with
// activations converted to act. It is called from init functions only.
func registerKernel(weight, act Type, dot VecDot) {
	kernels[weight] = kernel{act: act, dot: dot}
}

// registerKernel4 records f as the four-row form of weight's kernel.
func registerKernel4(weight Type, f vecDot4) { kernels4[weight] = f }

// registerKernel8 records f as the eight-weight-row form of weight's kernel.
func registerKernel8(weight Type, f vecDot8) { kernels8[weight] = f }

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
	k.dot4 = kernels4[t]
	k.dot8 = kernels8[t]
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
