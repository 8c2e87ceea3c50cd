package model

import "github.com/specd-dev/specd/internal/libm"

// glibc's single-precision expf, sinf and cosf (internal/libm), which
// llama.cpp's CPU backend calls for the softmax of attention and for RoPE.
func expf(x float32) float32 { return libm.Expf(x) }
func sinf(y float32) float32 { return libm.Sinf(y) }
func cosf(y float32) float32 { return libm.Cosf(y) }

// exp2Table is expf's table (libm.Exp2Table), here for the assembly
// kernels that gather from it (expfsAVX2, expfsNEON).
//
//lint:ignore U1000 read by the assembly kernels
var exp2Table = libm.Exp2Table
