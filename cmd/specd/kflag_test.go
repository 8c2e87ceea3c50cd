package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestGenerateKAuto: -k auto decodes the ids of plain decoding with a
// draft model, the target as its own draft and prompt lookup, and the
// statistics show the draft lengths it chose; -k N still works; a -k that
// is neither names the choices.
func TestGenerateKAuto(t *testing.T) {
	target, dr := specModels(t)
	base := []string{"generate", "-m", target, "--prompt-ids", "3,14,15,92,65", "-n", "24", "--ids", "--no-bos", "--threads", "1"}
	run := func(extra ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := runMain(context.Background(), append(append([]string{}, base...), extra...), &out, &errb)
		return out.String(), errb.String(), code
	}
	plain, _, _ := run()
	for _, extra := range [][]string{
		{"-d", dr, "-k", "auto"},
		{"-d", target, "-k", "auto"},
		{"-d", "ngram", "-k", "auto"},
		{"-d", dr, "-k", "auto", "--pre-draft=false"},
		{"-d", dr, "-k", "3"},
	} {
		got, stats, code := run(extra...)
		if code != 0 || got != plain {
			t.Errorf("%v: exit %d, ids\n%s want\n%s\n%s", extra, code, got, plain, stats)
		}
		if auto := extra[3] == "auto"; auto != strings.Contains(stats, "(auto: predicted speedup") || auto != strings.Contains(stats, ", k auto,") {
			t.Errorf("%v: statistics:\n%s", extra, stats)
		}
	}
	if _, stats, code := run("-d", dr, "-k", "many"); code == 0 || !strings.Contains(stats, "want a draft length or auto") {
		t.Errorf("-k many: exit %d: %s", code, stats)
	}
}

// TestDefaultKAuto: without -k the draft length is auto (a line before
// the first step and the statistics say so); --adaptive replaces that default (up to 4 tokens, or -k's N),
// and with an explicit -k auto it is refused, naming both flags.
func TestDefaultKAuto(t *testing.T) {
	base := []string{"generate", "-p", "The jury said", "-n", "8", "--threads", "1"} // the bundled pair
	for _, tc := range []struct {
		extra []string
		want  string
	}{
		{nil, "draft length: auto, 0–8 tokens a step from measured costs; timing the target's passes first\n"},
		{nil, ", k auto,"},
		{[]string{"--adaptive"}, ", k 4,"},
		{[]string{"--adaptive", "-k", "3"}, ", k 3,"},
		{[]string{"-k", "3", "--adaptive"}, ", k 3,"},
		{[]string{"--adaptive", "--draft-max", "5"}, ", k 5,"},
	} {
		var out, errb bytes.Buffer
		if code := runMain(context.Background(), append(append([]string{}, base...), tc.extra...), &out, &errb); code != 0 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, want %q in the statistics:\n%s", tc.extra, code, tc.want, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := runMain(context.Background(), append(append([]string{}, base...), "-k", "auto", "--adaptive"), &out, &errb); code == 0 || !strings.Contains(errb.String(), "-k auto and --adaptive") {
		t.Errorf("-k auto --adaptive: exit %d: %s", code, errb.String())
	}
}
