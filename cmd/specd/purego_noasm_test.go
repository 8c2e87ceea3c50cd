//go:build noasm

package main

// pureGo: this test binary runs the pure-Go kernels (-tags noasm).
const pureGo = true
