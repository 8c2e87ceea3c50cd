//go:build !amd64 || noasm

package model

func madHalf(acc, v []float32, s float32) { madHalfGeneric(acc, v, s) }

func scaleHalf(acc []float32, s float32) { scaleHalfGeneric(acc, s) }

func dot32(k, q []float32) float32 { return dot32Generic(k, q) }
