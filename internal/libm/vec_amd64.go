//go:build amd64 && !noasm

package libm

import "golang.org/x/sys/cpu"

// hasAVX2FMA is whether the CPU and OS support AVX2 and FMA, which the
// kernels of vec_amd64.s need.
var hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// vector selects the assembly: where the CPU has it, unless SetVector
// turned it off.
var vector = hasAVX2FMA

// SetVector selects the assembly forms (where the CPU can run them) or the
// Go loops; package tensor's kernel dispatch calls it with the kernel set
// it chose (off under SPECD_CPU=generic). It must not run concurrently
// with the functions it switches.
func SetVector(on bool) { vector = on && hasAVX2FMA }

// expfsAsm is, for n a multiple of 4: for i := range n { x[i] = Expf(x[i]) }
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
