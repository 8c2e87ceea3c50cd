package model

import "github.com/specd-dev/specd/internal/libm"

// glibc's single-precision expf, sinf and cosf (internal/libm), which
// llama.cpp's CPU backend calls for the softmax of attention and for RoPE.
func expf(x float32) float32 { return libm.Expf(x) }
func sinf(y float32) float32 { return libm.Sinf(y) }
func cosf(y float32) float32 { return libm.Cosf(y) }
