package model

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestARM64Encodings checks every instruction attn_arm64.s encodes by hand
// (WORD $0x... // mnemonic, written by gen_arm64.go) against an assembler:
// llvm-mc, on whatever machine runs the test. Without llvm-mc on PATH it
// skips; the kernels' tests (under emulation or on arm64) check what the
// instructions compute.
func TestARM64Encodings(t *testing.T) {
	mc, err := exec.LookPath("llvm-mc")
	if err != nil {
		t.Skip("llvm-mc not on PATH")
	}
	files, err := filepath.Glob("*_arm64.s")
	if err != nil || len(files) == 0 {
		t.Fatalf("no arm64 assembly files (%v)", err)
	}
	wordRe := regexp.MustCompile(`^\s*WORD \$0x([0-9a-f]{8}) // (.+)$`)
	type word struct {
		where string
		enc   uint32
		text  string
	}
	var words []word
	seen := map[string]word{} // by text: each distinct instruction once
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for line := 1; sc.Scan(); line++ {
			m := wordRe.FindStringSubmatch(sc.Text())
			if m == nil {
				if strings.Contains(sc.Text(), "WORD") {
					t.Errorf("%s:%d: a WORD without its mnemonic: %q", f, line, sc.Text())
				}
				continue
			}
			v, _ := strconv.ParseUint(m[1], 16, 32)
			w := word{fmt.Sprintf("%s:%d", f, line), uint32(v), m[2]}
			if old, ok := seen[w.text]; ok {
				if old.enc != w.enc {
					t.Errorf("%s and %s: %q encoded as %#08x and %#08x", old.where, w.where, w.text, old.enc, w.enc)
				}
				continue
			}
			seen[w.text] = w
			words = append(words, w)
		}
	}
	var src strings.Builder
	for _, w := range words {
		src.WriteString(w.text + "\n")
	}
	cmd := exec.Command(mc, "-triple=aarch64", "-mattr=+neon,+fullfp16", "-show-encoding")
	cmd.Stdin = strings.NewReader(src.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("llvm-mc: %v\n%s", err, out)
	}
	encRe := regexp.MustCompile(`encoding: \[0x([0-9a-f]{2}),0x([0-9a-f]{2}),0x([0-9a-f]{2}),0x([0-9a-f]{2})\]`)
	var got []uint32
	for _, l := range strings.Split(string(out), "\n") {
		if m := encRe.FindStringSubmatch(l); m != nil {
			var v uint32
			for i := 4; i >= 1; i-- {
				b, _ := strconv.ParseUint(m[i], 16, 8)
				v = v<<8 | uint32(b)
			}
			got = append(got, v)
		}
	}
	if len(got) != len(words) {
		t.Fatalf("llvm-mc encoded %d of %d instructions:\n%s", len(got), len(words), out)
	}
	for i, w := range words {
		if got[i] != w.enc {
			t.Errorf("%s: %q is %#08x, llvm-mc says %#08x", w.where, w.text, w.enc, got[i])
		}
	}
	t.Logf("%d distinct hand-encoded instructions checked", len(words))
}
