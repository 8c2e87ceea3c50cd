//go:build (!amd64 && !arm64) || noasm

package libm

// vector is false: no assembly in this build.
const vector = false

// SetVector does nothing: this build has no assembly forms.
func SetVector(bool) {}

func expfsAsm(*float32, int)                                      { panic("libm: no assembly") }
func expSumAsm(*float32, *float32, int, float32, float32) float32 { panic("libm: no assembly") }
func divAsm(*float32, int, float32)                               { panic("libm: no assembly") }
