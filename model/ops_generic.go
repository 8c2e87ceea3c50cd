//go:build !arm64 || noasm

package model

// rmsScale is rmsScaleGeneric: only arm64 has a vector form of it.
func rmsScale(out, x, w []float32, scale float32) { rmsScaleGeneric(out, x, w, scale) }
