package tensor

import (
	"reflect"
	"testing"
)

// funcPtr is f's code pointer (0 for nil), to compare registrations.
func funcPtr(f any) uintptr {
	v := reflect.ValueOf(f)
	if !v.IsValid() || v.IsNil() {
		return 0
	}
	return v.Pointer()
}

// registrySnapshot records what the registry tables hold.
func registrySnapshot() (s [maxType][6]uintptr) {
	for t := range maxType {
		s[t] = [6]uintptr{uintptr(kernels[t].act), funcPtr(kernels[t].dot), funcPtr(gemvs[t]),
			funcPtr(actQuants[t]), funcPtr(dequants[t]), funcPtr(quantizers[t])}
	}
	return s
}

// TestRegisterKernels checks that registering again changes nothing (the
// order switches and the tests' form switches rely on it) and that every
// supported type has its kernel, activation converter and dequantizer.
func TestRegisterKernels(t *testing.T) {
	before := registrySnapshot()
	registerKernels()
	if after := registrySnapshot(); after != before {
		for ty := range maxType {
			if after[ty] != before[ty] {
				t.Errorf("type %v: registering again changed %x to %x", Type(ty), before[ty], after[ty])
			}
		}
	}
	for ty, info := range types {
		if !info.supported {
			continue
		}
		if !CanMatMul(ty) {
			t.Errorf("%v is supported but has no MatMul kernel", ty)
		}
		if !CanDequantize(ty) {
			t.Errorf("%v is supported but has no dequantizer", ty)
		}
	}
	if KernelSet() == "" {
		t.Error("KernelSet is empty")
	}
	t.Logf("kernel set %s, cpu features %v", KernelSet(), CPUFeatures())
}
