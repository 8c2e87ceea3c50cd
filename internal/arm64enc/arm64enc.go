// Package arm64enc checks the arm64 instructions that specd's generated
// assembly encodes by hand (WORD $0x... // mnemonic, as the gen_arm64.go
// generators write them) against an assembler, llvm-mc, on whatever
// machine runs the test. The kernels' own tests (under emulation or on
// arm64) check what the instructions compute.
package arm64enc

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

var (
	wordRe = regexp.MustCompile(`^\s*WORD \$0x([0-9a-f]{8}) // (.+)$`)
	encRe  = regexp.MustCompile(`encoding: \[0x([0-9a-f]{2}),0x([0-9a-f]{2}),0x([0-9a-f]{2}),0x([0-9a-f]{2})\]`)
)

// word is one hand-encoded instruction: where it stands, its encoding and
// its mnemonic.
type word struct {
	where string
	enc   uint32
	text  string
}

// Check reads every WORD of the files glob matches (in the test's
// directory) and has llvm-mc, with the features mattr names (its -mattr),
// assemble each distinct mnemonic once; it fails t where an encoding
// differs from llvm-mc's, where one mnemonic is encoded two ways, or where
// a WORD has no mnemonic. Without llvm-mc on PATH it skips t.
func Check(t testing.TB, glob, mattr string) {
	t.Helper()
	mc, err := exec.LookPath("llvm-mc")
	if err != nil {
		t.Skip("llvm-mc not on PATH")
	}
	n, problems, err := verify(mc, glob, mattr)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("%d distinct hand-encoded instructions checked", n)
}

// verify is Check with llvm-mc at mc: how many distinct instructions it
// checked and what it found wrong with them; an error where it could not
// check.
func verify(mc, glob, mattr string) (int, []string, error) {
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		return 0, nil, fmt.Errorf("no arm64 assembly files match %q (%v)", glob, err)
	}
	var problems []string
	var words []word
	seen := map[string]word{} // by text: each distinct instruction once
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return 0, nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for line := 1; sc.Scan(); line++ {
			m := wordRe.FindStringSubmatch(sc.Text())
			if m == nil {
				if strings.Contains(sc.Text(), "WORD") {
					problems = append(problems, fmt.Sprintf("%s:%d: a WORD without its mnemonic: %q", f, line, sc.Text()))
				}
				continue
			}
			v, _ := strconv.ParseUint(m[1], 16, 32)
			w := word{fmt.Sprintf("%s:%d", f, line), uint32(v), m[2]}
			if old, ok := seen[w.text]; ok {
				if old.enc != w.enc {
					problems = append(problems, fmt.Sprintf("%s and %s: %q encoded as %#08x and %#08x", old.where, w.where, w.text, old.enc, w.enc))
				}
				continue
			}
			seen[w.text] = w
			words = append(words, w)
		}
	}
	got, out, err := assemble(mc, mattr, words)
	if err != nil {
		return 0, nil, fmt.Errorf("llvm-mc: %v\n%s", err, out)
	}
	if len(got) != len(words) {
		return 0, nil, fmt.Errorf("llvm-mc encoded %d of %d instructions:\n%s", len(got), len(words), out)
	}
	for i, w := range words {
		if got[i] != w.enc {
			problems = append(problems, fmt.Sprintf("%s: %q is %#08x, llvm-mc says %#08x", w.where, w.text, w.enc, got[i]))
		}
	}
	return len(words), problems, nil
}

// assemble has llvm-mc assemble words' mnemonics, one a line in order, and
// returns the encodings -show-encoding prints for them (little-endian
// bytes, as words), with llvm-mc's output.
func assemble(mc, mattr string, words []word) ([]uint32, []byte, error) {
	var src strings.Builder
	for _, w := range words {
		src.WriteString(w.text + "\n")
	}
	cmd := exec.Command(mc, "-triple=aarch64", "-mattr="+mattr, "-show-encoding")
	cmd.Stdin = strings.NewReader(src.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, out, err
	}
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
	return got, out, nil
}
