package arm64enc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerify: a file of right encodings passes; a wrong encoding, one
// mnemonic encoded two ways and a WORD without its mnemonic are each
// named, with the place they stand.
func TestVerify(t *testing.T) {
	mc, err := exec.LookPath("llvm-mc")
	if err != nil {
		t.Skip("llvm-mc not on PATH")
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good_arm64.s", "\tWORD $0x4e20d400 // fadd v0.4s, v0.4s, v0.4s\n\tWORD $0x4e21d441 // fadd v1.4s, v2.4s, v1.4s\n")
	n, problems, err := verify(mc, good, "+neon")
	if err != nil || n != 2 || len(problems) != 0 {
		t.Fatalf("right encodings: %d checked, %v, %v", n, problems, err)
	}
	bad := write("bad_arm64.s", "\tWORD $0x4e20d401 // fadd v0.4s, v0.4s, v0.4s\n"+
		"\tWORD $0x4e20dc00 // fmul v0.4s, v0.4s, v0.4s\n"+
		"\tWORD $0x4e20dc01 // fmul v0.4s, v0.4s, v0.4s\n"+
		"\tWORD $0x4e20d400\n")
	n, problems, err = verify(mc, bad, "+neon")
	if err != nil || n != 2 {
		t.Fatalf("wrong encodings: %d checked, %v", n, err)
	}
	got := strings.Join(problems, "\n")
	for _, want := range []string{
		`bad_arm64.s:1: "fadd v0.4s, v0.4s, v0.4s" is 0x4e20d401, llvm-mc says 0x4e20d400`,
		`bad_arm64.s:2 and ` + bad + `:3: "fmul v0.4s, v0.4s, v0.4s" encoded as 0x4e20dc00 and 0x4e20dc01`,
		`bad_arm64.s:2: "fmul v0.4s, v0.4s, v0.4s" is 0x4e20dc00, llvm-mc says 0x6e20dc00`,
		`bad_arm64.s:4: a WORD without its mnemonic`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if _, _, err := verify(mc, filepath.Join(dir, "none*.s"), "+neon"); err == nil || !strings.Contains(err.Error(), "no arm64 assembly files") {
		t.Errorf("no files: %v", err)
	}
}
