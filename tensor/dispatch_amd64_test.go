//go:build amd64 && !noasm

package tensor

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestX86LevelFor(t *testing.T) {
	for _, c := range []struct {
		env     string
		best    x86Level
		want    x86Level
		wantErr bool
	}{
		{"", levelAVX512VNNI, levelAVX512VNNI, false},
		{"avx512", levelAVX512VNNI, levelAVX512VNNI, false},
		{"avx2", levelAVX512VNNI, levelAVX2, false},
		{"AVX2", levelAVX512VNNI, levelAVX2, false},
		{"generic", levelAVX512VNNI, levelGeneric, false},
		{"avx512", levelAVX2, levelAVX2, false}, // not above what the CPU has
		{"avx2", levelGeneric, levelGeneric, false},
		{"sse9", levelAVX2, levelAVX2, true},
	} {
		got, err := x86LevelFor(c.env, c.best)
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("x86LevelFor(%q, %s) = %s, %v; want %s, error %v", c.env, levelNames[c.best], levelNames[got], err, levelNames[c.want], c.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), c.env) {
			t.Errorf("x86LevelFor(%q): error %q does not name the value", c.env, err)
		}
	}
}

// TestSPECDCPU runs this test binary with SPECD_CPU set and checks the
// kernel set and the features reported to package model.
func TestSPECDCPU(t *testing.T) {
	if os.Getenv("SPECD_CPU_CHILD") != "" {
		a, f, dq := X86Features()
		_, err := CPUEnv()
		fmt.Printf("set=%s avx2=%v avx512f=%v avx512dq=%v vnni=%v err=%v\n", KernelSet(), a, f, dq, hasVNNI, err)
		return
	}
	for _, c := range []struct{ env, want string }{
		{"generic", "set=generic avx2=false avx512f=false avx512dq=false vnni=false err=<nil>"},
		{"avx2", "set=avx2 avx2=true avx512f=false avx512dq=false vnni=false err=<nil>"},
		{"avx512", "set=avx512-vnni avx2=true avx512f=true"},
		{"bogus", "err=tensor: SPECD_CPU=\"bogus\""},
	} {
		lv, _ := x86LevelFor(c.env, cpuLevel)
		if c.env != "bogus" && lv != map[string]x86Level{"generic": levelGeneric, "avx2": levelAVX2, "avx512": levelAVX512VNNI}[c.env] {
			t.Logf("SPECD_CPU=%s: this CPU's best is %s; skipping", c.env, levelNames[cpuLevel])
			continue
		}
		cmd := exec.Command(os.Args[0], "-test.run", "^TestSPECDCPU$")
		cmd.Env = append(os.Environ(), "SPECD_CPU="+c.env, "SPECD_CPU_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("SPECD_CPU=%s: %v\n%s", c.env, err, out)
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("SPECD_CPU=%s: got\n%s\nwant a line containing %q", c.env, out, c.want)
		}
	}
}
