//go:build !amd64 || noasm

package model

func madHalf(acc, v []float32, s float32) { madHalfGeneric(acc, v, s) }

func scaleHalf(acc []float32, s float32) { scaleHalfGeneric(acc, s) }

func dot32(k, q []float32) float32 { return dot32Generic(k, q) }

func dot64(k, q []float32) float32 { return dot64Generic(k, q) }

// ggmlLanes: without amd64 feature detection, mirror ggml's AVX2 layout.
var ggmlLanes = 8

// ggmlSilu16: SwiGLU as ggml's AVX2 build.
var ggmlSilu16 = false
