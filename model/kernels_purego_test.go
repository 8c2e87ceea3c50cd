//go:build !amd64 || noasm

package model_test

// asmKernels: this build runs the tensor package's pure-Go kernels.
const asmKernels = false
