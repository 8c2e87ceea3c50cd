//go:build !(amd64 || arm64) || noasm

package tensor

// Without assembly (other architectures, -tags noasm) every kernel is the
// pure-Go reference and SPECD_CPU has nothing to choose.

// envErr is nil: there is no selection for SPECD_CPU to cap.
var envErr error

func kernelSet() string { return "generic" }

// cpuFeatures is empty: without assembly no feature is detected.
func cpuFeatures() []string { return nil }

func installArchImpls()      {}
func registerArchTypeInfos() {}
func registerArchTypes()     {}
func registerArchGemvs()     {}
