package bench

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Prompt is one prompt of a prompt set: text (tokenized with the target's
// vocabulary, BOS as it asks) or token ids, and a category the report's
// tables are broken down by.
type Prompt struct {
	ID       string  `json:"id"`
	Category string  `json:"category"`
	Text     string  `json:"text,omitempty"`
	IDs      []int32 `json:"ids,omitempty"`
}

//go:embed prompts/*.jsonl
var builtin embed.FS

// Builtin prompt sets.
const (
	SetBrown     = "brown"     // held-out Brown sentences (tools/train/bench_prompts.py), categories brown/news, brown/nonfiction, brown/fiction
	SetAssistant = "assistant" // short assistant-style requests, category assistant
	SetAll       = "all"       // both
)

// ErrPrompts reports a bad prompt set.
var ErrPrompts = errors.New("bench: bad prompts")

// Builtin returns a built-in prompt set by name.
func Builtin(name string) ([]Prompt, error) {
	switch name {
	case SetBrown, SetAssistant:
		b, err := builtin.ReadFile("prompts/" + name + ".jsonl")
		if err != nil {
			return nil, err
		}
		return ReadPrompts(bytes.NewReader(b))
	case SetAll:
		a, err := Builtin(SetBrown)
		if err != nil {
			return nil, err
		}
		b, err := Builtin(SetAssistant)
		return append(a, b...), err
	}
	return nil, fmt.Errorf("%w: no built-in set %q (brown, assistant or all)", ErrPrompts, name)
}

// ReadPrompts reads JSON lines of Prompt: each has text or ids (not both),
// an id (default: its line number) and a category (default "default").
// Unknown fields are errors naming the line and the field; blank lines are
// skipped.
func ReadPrompts(r io.Reader) ([]Prompt, error) {
	var out []Prompt
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var p Prompt
		d := json.NewDecoder(bytes.NewReader(b))
		d.DisallowUnknownFields()
		if err := d.Decode(&p); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrPrompts, line, err)
		}
		switch {
		case p.Text == "" && len(p.IDs) == 0:
			return nil, fmt.Errorf("%w: line %d: neither text nor ids", ErrPrompts, line)
		case p.Text != "" && len(p.IDs) > 0:
			return nil, fmt.Errorf("%w: line %d: both text and ids", ErrPrompts, line)
		}
		if p.ID == "" {
			p.ID = fmt.Sprint(line)
		}
		if p.Category == "" {
			p.Category = "default"
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPrompts, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no prompts", ErrPrompts)
	}
	return out, nil
}

// Pick returns n prompts of ps (all of them if n ≤ 0 or n ≥ len(ps)),
// taken in turn from each category in order of first appearance, so that
// every category is represented when n is at least their number.
func Pick(ps []Prompt, n int) []Prompt {
	if n <= 0 || n >= len(ps) {
		return slices.Clone(ps)
	}
	var cats []string
	by := map[string][]Prompt{}
	for _, p := range ps {
		if _, ok := by[p.Category]; !ok {
			cats = append(cats, p.Category)
		}
		by[p.Category] = append(by[p.Category], p)
	}
	var out []Prompt
	for i := 0; len(out) < n; i++ {
		for _, c := range cats {
			if i < len(by[c]) && len(out) < n {
				out = append(out, by[c][i])
			}
		}
	}
	return out
}

// Categories returns the categories of ps in order of first appearance.
func Categories(ps []Prompt) []string {
	var out []string
	for _, p := range ps {
		if !slices.Contains(out, p.Category) {
			out = append(out, p.Category)
		}
	}
	return out
}

// sentenceEnd reports whether text holds the end of a sentence: '.', '!'
// or '?' followed by white space.
func sentenceEnd(text string) bool {
	for i := 0; i+1 < len(text); i++ {
		switch text[i] {
		case '.', '!', '?':
			if strings.ContainsRune(" \n\t", rune(text[i+1])) {
				return true
			}
		}
	}
	return false
}
