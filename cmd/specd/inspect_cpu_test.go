package main

import (
	"strings"
	"testing"

	"github.com/specd-dev/specd/tensor"
)

// TestInspectCPU checks that inspect --cpu names the kernel set package
// tensor chose and the CPU's features, without a model and before one.
func TestInspectCPU(t *testing.T) {
	out, _ := mustRun(t, "", "inspect", "--cpu")
	want := "kernels:       " + tensor.KernelSet() + "\n"
	if !strings.HasPrefix(out, want) {
		t.Errorf("inspect --cpu:\n%s\nwant it to start with %q", out, want)
	}
	if feats := strings.Join(tensor.CPUFeatures(), " "); feats != "" && !strings.Contains(out, "cpu features:  "+feats+"\n") {
		t.Errorf("inspect --cpu:\n%s\nwant the features %q", out, feats)
	}
	out, _ = mustRun(t, "", "inspect", "--cpu", "bundled")
	if !strings.HasPrefix(out, want) || !strings.Contains(out, "file:") {
		t.Errorf("inspect --cpu bundled: want the kernel set, then the model:\n%s", out)
	}
}
