package main

import (
	"strings"
	"testing"

	"github.com/specd-dev/specd/models"
)

// TestGenerateBundledDefault runs specd generate without -m: speculative
// decoding on the bundled pair, with the draft sharing the target's
// embeddings through their recorded hashes. Greedy, its ids must be those
// of plain decoding (-d none), and of speculative decoding without sharing
// (the tables are identical, so sharing changes nothing but memory).
func TestGenerateBundledDefault(t *testing.T) {
	base := []string{"generate", "-p", "The jury said", "-n", "40", "--ids", "--threads", "1"}
	run := func(extra ...string) (string, string) {
		t.Helper()
		code, out, errOut := runCmd(append(append([]string{}, base...), extra...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errOut)
		}
		return out, errOut
	}
	spec, specErr := run()
	for _, w := range []string{
		"models: bundled " + models.TargetName + " + " + models.DraftName,
		"draft shares target embeddings: equal " + models.SharedEmbdKey,
		"output projection: tied to token_embd",
		"mean accepted length",
	} {
		if !strings.Contains(specErr, w) {
			t.Errorf("default run: stderr lacks %q:\n%s", w, specErr)
		}
	}
	if n := len(strings.Fields(spec)); n != 40 {
		t.Errorf("default run: %d ids, want 40: %q", n, spec)
	}
	plain, plainErr := run("-d", "none")
	if spec != plain {
		t.Errorf("speculative ids\n%s differ from plain decoding's\n%s", spec, plain)
	}
	if !strings.Contains(plainErr, "models: bundled "+models.TargetName+", no draft (plain decoding)") || strings.Contains(plainErr, "mean accepted length") {
		t.Errorf("-d none: stderr\n%s", plainErr)
	}
	noShare, noShareErr := run("--no-share-embd")
	if noShare != plain || !strings.Contains(noShareErr, "embeddings not shared: --no-share-embd") {
		t.Errorf("--no-share-embd: ids\n%s want\n%s\nstderr %s", noShare, plain, noShareErr)
	}
	ngram, ngramErr := run("-d", "ngram")
	if ngram != plain || !strings.Contains(ngramErr, "n-gram prompt-lookup draft") {
		t.Errorf("-d ngram: ids\n%s want\n%s\nstderr %s", ngram, plain, ngramErr)
	}
}

// TestGenerateExplicitModelIsPlain: with -m and no -d, generate decodes
// without a draft; -d bundled adds the bundled draft to any target.
func TestGenerateExplicitModelIsPlain(t *testing.T) {
	path := genModel(t)
	code, _, errOut := runCmd("generate", "-m", path, "--prompt-ids", "5,6,7", "-n", "4", "--ids")
	if code != 0 || !strings.Contains(errOut, "models: "+path+", no draft (plain decoding)") || strings.Contains(errOut, "mean accepted length") {
		t.Errorf("-m without -d: exit %d, stderr %s", code, errOut)
	}
	// The random model's vocabulary (400) is not the bundled draft's.
	code, _, errOut = runCmd("generate", "-m", path, "-d", "bundled", "--prompt-ids", "5,6,7", "-n", "4", "--ids")
	if code == 0 || !strings.Contains(errOut, "draft vocabulary has 4096 tokens") {
		t.Errorf("-d bundled with a 400-token target: exit %d, stderr %s", code, errOut)
	}
}
