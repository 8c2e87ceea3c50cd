package bench

import (
	"slices"
	"strings"
	"testing"
)

func TestReadPrompts(t *testing.T) {
	in := `{"id":"a","category":"x","text":"hello"}

{"ids":[1,2,3]}
`
	ps, err := ReadPrompts(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Text != "hello" || ps[1].ID != "3" || ps[1].Category != "default" || !slices.Equal(ps[1].IDs, []int32{1, 2, 3}) {
		t.Errorf("prompts %+v", ps)
	}
	for _, c := range []struct{ in, want string }{
		{`{"text":"a","colour":"red"}`, `line 1: json: unknown field "colour"`},
		{"{\"text\":\"a\"}\n{}", "line 2: neither text nor ids"},
		{`{"text":"a","ids":[1]}`, "line 1: both text and ids"},
		{`{"text":`, "line 1:"},
		{"\n\n", "no prompts"},
	} {
		if _, err := ReadPrompts(strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}

func TestBuiltinAndPick(t *testing.T) {
	all, err := Builtin(SetAll)
	if err != nil {
		t.Fatal(err)
	}
	cats := Categories(all)
	if want := []string{"brown/news", "brown/nonfiction", "brown/fiction", "assistant"}; !slices.Equal(cats, want) {
		t.Errorf("categories %q, want %q", cats, want)
	}
	if len(all) != 66 {
		t.Errorf("%d built-in prompts, want 50 Brown + 16 assistant", len(all))
	}
	// Pick takes the categories in turn.
	p := Pick(all, 6)
	var got []string
	for _, q := range p {
		got = append(got, q.Category)
	}
	if want := []string{"brown/news", "brown/nonfiction", "brown/fiction", "assistant", "brown/news", "brown/nonfiction"}; !slices.Equal(got, want) {
		t.Errorf("Pick(6) categories %q", got)
	}
	if len(Pick(all, 0)) != len(all) || len(Pick(all, 1000)) != len(all) {
		t.Error("Pick of all")
	}
	if _, err := Builtin("poems"); err == nil {
		t.Error("unknown set accepted")
	}
}

func TestSentenceEnd(t *testing.T) {
	for s, want := range map[string]bool{"It rained. Then": true, "Why? ": true, "Done!\n": true, "3.14 is pi": false, "no end.": false, "": false} {
		if sentenceEnd(s) != want {
			t.Errorf("sentenceEnd(%q) = %v", s, !want)
		}
	}
}
