//go:build !(amd64 || arm64) || noasm

package model

func scaleHalf(acc []float32, s float32) { scaleHalfGeneric(acc, s) }

func dot32(k, q []float32) float32 { return dot32Generic(k, q) }

func dot64(k, q []float32) float32 { return dot64Generic(k, q) }

// ggmlLanes: without feature detection, mirror ggml's AVX2 layout.
var ggmlLanes = 8

// ggmlSilu16: SwiGLU as ggml's AVX2 build.
var ggmlSilu16 = false

func dot32F16(k []uint16, q []float32) float32 { return dot32F16Generic(k, q) }

func dot64F16(k []uint16, q []float32) float32 { return dot64F16Generic(k, q) }

func madHalfF16(acc []float32, v []uint16, s float32) { madHalfF16Generic(acc, v, s) }

func dotRowsF16(out []float32, k []uint16, q []float32) { dotRowsF16Generic(out, k, q) }

func madRowsF16(acc []float32, v []uint16, e, flag []float32, s float32) float32 {
	return madRowsF16Generic(acc, v, e, flag, len(acc), s)
}

// swigluVec has no vector kernel here: swiglu computes every element.
func swigluVec(g, u []float32) int { return 0 }
