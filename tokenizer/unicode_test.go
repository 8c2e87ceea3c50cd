package tokenizer

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestCategoriesMatchLlama compares the code point categories the
// pre-tokenizers use with llama.cpp's own table (src/unicode-data.cpp in the
// peer checkout) for every code point, and the whitespace set.
func TestCategoriesMatchLlama(t *testing.T) {
	path := filepath.Join(peerModels(), "..", "src", "unicode-data.cpp")
	skipNoPeer(t, path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	ws := strings.Index(src, "unicode_set_whitespace")
	if ws < 0 {
		t.Fatal("unicode_set_whitespace not found")
	}
	type rng struct {
		start rune
		flags uint64
	}
	var ranges []rng
	for _, m := range regexp.MustCompile(`\{0x([0-9A-Fa-f]+), 0x([0-9A-Fa-f]{4})\}`).FindAllStringSubmatch(src[:ws], -1) {
		a, _ := strconv.ParseUint(m[1], 16, 32)
		f, _ := strconv.ParseUint(m[2], 16, 16)
		ranges = append(ranges, rng{rune(a), f})
	}
	if len(ranges) < 1000 || ranges[len(ranges)-1].start != 0x110000 {
		t.Fatalf("parsed %d ranges; table format changed?", len(ranges))
	}
	bad := 0
	for i := 0; i+1 < len(ranges); i++ {
		lf := ranges[i].flags
		var want uint8
		for bit, f := range map[uint64]uint8{0x2: fNumber, 0x4: fLetter, 0x10: fMark, 0x20: fPunct, 0x40: fSymbol} {
			if lf&bit != 0 {
				want |= f
			}
		}
		for c := ranges[i].start; c < ranges[i+1].start; c++ {
			if got := cpFlags(c) &^ (fDefined | fSpace); got != want {
				if bad++; bad <= 10 {
					t.Errorf("%U: categories %#x, llama.cpp %#x", c, got, want)
				}
			}
		}
	}
	if bad > 10 {
		t.Errorf("%d code points differ in all", bad)
	}
	set := src[ws:]
	set = set[:strings.Index(set, "};")]
	spaces := map[rune]bool{}
	for _, m := range regexp.MustCompile(`0x([0-9A-Fa-f]+)`).FindAllStringSubmatch(set, -1) {
		v, _ := strconv.ParseUint(m[1], 16, 32)
		spaces[rune(v)] = true
	}
	for c := rune(0); c < 0x110000; c++ {
		if got := cpFlags(c)&fSpace != 0; got != spaces[c] {
			t.Errorf("%U: whitespace %v, llama.cpp %v", c, got, spaces[c])
		}
	}
}
