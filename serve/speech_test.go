package serve

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// cutAll feeds chunks to a speechCutter and returns every segment, the
// flushed tail last (if not empty).
func cutAll(chunks ...string) []string {
	var c speechCutter
	var segs []string
	for _, ch := range chunks {
		segs = append(segs, c.add(ch)...)
	}
	if tail := c.flush(); tail != "" {
		segs = append(segs, tail)
	}
	return segs
}

func TestSpeechCutter(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"Hello there. How are you? Fine! Good", []string{"Hello there.", " How are you?", " Fine!", " Good"}},
		{"Pi is 3.14 exactly. Next", []string{"Pi is 3.14 exactly.", " Next"}},
		{"See e.g.x and v1.2.3 here", []string{"See e.g.x and v1.2.3 here"}},
		{"line one\nline two\n", []string{"line one\n", "line two\n"}},
		{"\n\nx", []string{"\n", "\n", "x"}},
		{"a.\tb", []string{"a.", "\tb"}},
		{"a.\r\nb", []string{"a.", "\r\n", "b"}},
		{"Really?! Yes", []string{"Really?!", " Yes"}},
		{"Wait… what", []string{"Wait…", " what"}},
		{"The end.", []string{"The end."}}, // the last mark waits for a next byte that never comes: flush
		{"Short, then more; and: so", []string{"Short, then more; and: so"}},
		// A clause mark cuts once the segment, mark included, is 24 bytes.
		{strings.Repeat("a", 22) + ", b", []string{strings.Repeat("a", 22) + ", b"}},
		{strings.Repeat("a", 23) + ", b", []string{strings.Repeat("a", 23) + ",", " b"}},
		{"This clause is long enough; so it cuts: here", []string{"This clause is long enough;", " so it cuts: here"}},
		{"Counted from the segment. Start, not text, start", []string{"Counted from the segment.", " Start, not text, start"}},
		{"Naïve café, déjà vu… Ça va? Oui.", []string{"Naïve café, déjà vu…", " Ça va?", " Oui."}},
		{"", nil},
	} {
		got := cutAll(tc.text)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q:\n got  %q\n want %q", tc.text, got, tc.want)
		}
	}
}

func TestSpeechCutterFlush(t *testing.T) {
	var c speechCutter
	if segs := c.add("One. Two"); !slices.Equal(segs, []string{"One."}) {
		t.Errorf("add: %q", segs)
	}
	if tail := c.flush(); tail != " Two" {
		t.Errorf("flush: %q, want %q", tail, " Two")
	}
	if tail := c.flush(); tail != "" {
		t.Errorf("second flush: %q, want nothing", tail)
	}
	if segs := c.add("Three. "); !slices.Equal(segs, []string{"Three."}) {
		t.Errorf("add after flush: %q", segs)
	}
	if tail := c.flush(); tail != " " {
		t.Errorf("flush: %q", tail)
	}
}

// TestSpeechCutterSplits: however the text arrives (chunks of 0 to 7
// bytes, runes split across chunks), the segments are those of the whole
// text at once, they concatenate to the text exactly, and each but the
// last ends where a cut is allowed.
func TestSpeechCutterSplits(t *testing.T) {
	text := "The jury said it did find that many of the city's people, who were there, voted. " +
		"Pi is 3.14 and e.g.x stays whole! Does it? Yes…\n" +
		"Naïve café owners, déjà vu; the committee — 2.5 million strong: agreed.\r\n" +
		"\"Quoted.\" (Paren.) end, short; end"
	whole := cutAll(text)
	if len(whole) < 8 {
		t.Fatalf("%d segments %q: the text should cut more", len(whole), whole)
	}
	checkSegments(t, text, whole)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		var chunks []string
		for rest := text; rest != ""; {
			n := min(rng.IntN(8), len(rest))
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		got := cutAll(chunks...)
		if !slices.Equal(got, whole) {
			t.Fatalf("split %d %q:\n got  %q\n want %q", i, chunks, got, whole)
		}
	}
}

// checkSegments checks that segs concatenate to text and that every
// segment but the last ends at an allowed cut.
func checkSegments(t *testing.T, text string, segs []string) {
	t.Helper()
	if got := strings.Join(segs, ""); got != text {
		t.Fatalf("segments concatenate to\n %q\nwant\n %q", got, text)
	}
	for i, s := range segs[:len(segs)-1] {
		next := segs[i+1]
		last, _ := utf8.DecodeLastRuneInString(s)
		ok := false
		switch last {
		case '\n', '…':
			ok = true
		case '.', '!', '?':
			ok = strings.ContainsAny(next[:1], " \t\r\n")
		case ',', ';', ':':
			ok = strings.ContainsAny(next[:1], " \t\r\n") && len(s) >= minClause
		}
		if !ok {
			t.Errorf("segment %d %q (then %q) ends where no cut is allowed", i, s, next)
		}
	}
}
