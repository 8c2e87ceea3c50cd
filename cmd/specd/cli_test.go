package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/specd-dev/specd/models"
	"github.com/specd-dev/specd/tensor"
)

// runIn runs specd in-process with stdin.
func runIn(stdin string, args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = runMainIn(context.Background(), args, strings.NewReader(stdin), &o, &e)
	return code, o.String(), e.String()
}

// mustRun runs specd and fails the test unless it exits 0.
func mustRun(t *testing.T, stdin string, args ...string) (stdout, stderr string) {
	t.Helper()
	code, out, errOut := runIn(stdin, args...)
	if code != 0 {
		t.Fatalf("specd %q: exit %d\n%s", args, code, errOut)
	}
	return out, errOut
}

// TestPromptSources: -p - (stdin) and -f FILE give the completion of -p
// TEXT, and --echo prints the prompt before it.
func TestPromptSources(t *testing.T) {
	const prompt = "The jury said"
	base := []string{"generate", "-n", "12", "--threads", "1"}
	want, _ := mustRun(t, "", append(base, "-p", prompt)...)
	if strings.TrimSpace(want) == "" {
		t.Fatal("empty completion")
	}
	if got, _ := mustRun(t, prompt, append(base, "-p", "-")...); got != want {
		t.Errorf("-p - (stdin): %q, want %q", got, want)
	}
	file := filepath.Join(t.TempDir(), "prompt.txt")
	if err := os.WriteFile(file, []byte(prompt), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := mustRun(t, "", append(base, "-f", file)...); got != want {
		t.Errorf("-f: %q, want %q", got, want)
	}
	if got, _ := mustRun(t, "", append(base, "--file", file, "--echo")...); got != prompt+want {
		t.Errorf("--echo: %q, want %q", got, prompt+want)
	}
	if code, _, errOut := runIn("", append(base, "-p", "-")...); code == 0 || !strings.Contains(errOut, "standard input is empty") {
		t.Errorf("-p - with empty stdin: exit %d, stderr %q", code, errOut)
	}
}

// TestLongFlagsAndAliases: llama.cpp's long forms and aliases do what the
// short flags do, and -h shows each flag once with its aliases.
func TestLongFlagsAndAliases(t *testing.T) {
	short, _ := mustRun(t, "", "generate", "-m", "bundled", "-p", "The jury said", "-n", "10", "-t", "1", "-c", "64",
		"-s", "7", "--temp", "0.8", "--top-k", "40", "--top-p", "0.9", "-md", "bundled", "-k", "3")
	long, _ := mustRun(t, "", "generate", "--model", "bundled", "--prompt", "The jury said", "--n-predict", "10", "--threads", "1",
		"--ctx-size", "64", "--seed", "7", "--temperature", "0.8", "--top-k", "40", "--top-p", "0.9", "--model-draft", "bundled", "--draft-max", "3")
	if short != long {
		t.Errorf("long flags: %q, short flags: %q", long, short)
	}
	old, _ := mustRun(t, "", "generate", "-p", "The jury said", "-n", "10", "-threads", "1", "-ctx", "64", "-seed", "7", "-temp", "0.8",
		"-top-k", "40", "-top-p", "0.9", "-draft", "bundled", "-k", "3")
	if old != short {
		t.Errorf("the original flags: %q, want %q", old, short)
	}
	for name := range commands {
		if name == "pull" {
			continue // its -h is tested with its command
		}
		code, _, help := runIn("", name, "-h")
		if code != 0 || !strings.HasPrefix(help, "usage: specd "+name) || !strings.Contains(help, "\nexamples:\n  specd "+name) {
			t.Errorf("specd %s -h: exit %d, want a usage line and an example:\n%s", name, code, help)
		}
	}
	_, _, help := runIn("", "generate", "-h")
	for _, want := range []string{
		"\n  -m, --model PATH|bundled|bundled-draft\n",
		"\n  -d, -md, --draft, --model-draft PATH|bundled|ngram|none\n",
		"\n  -k, --draft-max N|auto\n",
		"\n  -s, --seed N\n",
		"\n  -c, --ctx, --ctx-size N\n",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("generate -h lacks the entry %q:\n%s", want, help)
		}
	}
	if n := len(regexp.MustCompile(`(?m)^  .*--model( |,|$)`).FindAllString(help, -1)); n != 1 {
		t.Errorf("generate -h: %d entries name --model, want 1", n)
	}
}

// TestBundledNames: bundled and bundled-draft wherever a model path is;
// -m bundled is the bundled target (with its draft), not the draft.
func TestBundledNames(t *testing.T) {
	out, _ := mustRun(t, "", "inspect", "bundled")
	if !strings.Contains(out, "bundled "+models.TargetName) || !strings.Contains(out, "architecture:  llama") {
		t.Errorf("inspect bundled:\n%s", out)
	}
	if out, _ := mustRun(t, "", "inspect", "bundled-draft"); !strings.Contains(out, "bundled "+models.DraftName) {
		t.Errorf("inspect bundled-draft:\n%s", out)
	}
	// tokenize -m bundled gives the ids generate prompts the target with.
	ids, _ := mustRun(t, "", "tokenize", "-m", "bundled", "--add-special", "The jury said")
	echo, _ := mustRun(t, "", "generate", "-m", "bundled", "-p", "The jury said", "-n", "1", "--ids", "--echo", "-d", "none")
	if f := strings.Fields(echo); len(f) < 2 || strings.Join(f[:len(f)-1], " ") != strings.TrimSpace(ids) {
		t.Errorf("tokenize -m bundled: %q; generate's prompt and first token: %q", ids, echo)
	}
	_, errOut := mustRun(t, "", "generate", "-m", "bundled", "-p", "The jury said", "-n", "2")
	if !strings.Contains(errOut, "models: bundled "+models.TargetName+" + "+models.DraftName) {
		t.Errorf("generate -m bundled: %s", errOut)
	}
	_, errOut = mustRun(t, "", "generate", "-m", "bundled-draft", "-p", "The jury said", "-n", "2")
	if !strings.Contains(errOut, "models: bundled "+models.DraftName+", no draft") {
		t.Errorf("generate -m bundled-draft: %s", errOut)
	}
	if code, _, errOut := runIn("", "tokenize", "-m", "bundled"); code != 2 || !strings.Contains(errOut, "a text is required") {
		t.Errorf("tokenize without a text: exit %d, stderr %s", code, errOut)
	}
}

// TestContextFullReason: at the context limit speculative decoding emits
// as many tokens as plain decoding, the same ones, and both say why they
// stopped.
func TestContextFullReason(t *testing.T) {
	base := []string{"generate", "-p", "The jury said", "-n", "100", "-c", "24", "--ids", "--threads", "1"}
	plain, plainErr := mustRun(t, "", append(base, "-d", "none")...)
	prompt := len(strings.Fields(mustIDs(t, "The jury said")))
	if n := len(strings.Fields(plain)); n != 24-prompt+1 {
		t.Errorf("plain decoding: %d tokens with a %d-token prompt in a context of 24, want %d", n, prompt, 24-prompt+1)
	}
	for _, extra := range [][]string{nil, {"-k", "2"}, {"-k", "auto"}, {"-d", "ngram"}, {"--pre-draft=false", "-k", "6"}} {
		spec, specErr := mustRun(t, "", append(base, extra...)...)
		if spec != plain {
			t.Errorf("%v: %d tokens %q, plain decoding %d %q", extra, len(strings.Fields(spec)), spec, len(strings.Fields(plain)), plain)
		}
		if !strings.Contains(specErr, "stopped: context full") {
			t.Errorf("%v: no finish reason:\n%s", extra, specErr)
		}
	}
	if !strings.Contains(plainErr, "stopped: context full") {
		t.Errorf("plain: no finish reason:\n%s", plainErr)
	}
}

// mustIDs is the bundled target's ids of text, BOS included.
func mustIDs(t *testing.T, text string) string {
	out, _ := mustRun(t, "", "tokenize", "-m", "bundled", "--add-special", text)
	return out
}

// TestFinishAndStats: a stop string ends plain and speculative output at
// the same text, named on stderr; speculative statistics give tok/s,
// TTFT and ITL once.
func TestFinishAndStats(t *testing.T) {
	base := []string{"generate", "-p", "The jury said", "-n", "40", "--threads", "1"}
	full, _ := mustRun(t, "", append(base, "-d", "none")...)
	words := strings.Fields(full)
	if len(words) < 4 {
		t.Fatalf("completion too short to cut: %q", full)
	}
	stop := words[3]
	want := full[:strings.Index(full, stop)]
	for _, mode := range [][]string{{"-d", "none"}, {"-k", "4"}} {
		out, errOut := mustRun(t, "", append(append(base, mode...), "--stop", stop, "--stop", "never said")...)
		if strings.TrimSuffix(out, "\n") != want || !strings.Contains(errOut, "stopped: stop string "+strconv.Quote(stop)) {
			t.Errorf("%v --stop %q: %q, want %q; stderr %s", mode, stop, out, want, errOut)
		}
		if mode[1] == "4" {
			for _, w := range []string{"tok/s", "TTFT", "inter-token latency"} {
				if n := strings.Count(errOut, w); n != 1 {
					t.Errorf("speculative statistics name %s %d times:\n%s", w, n, errOut)
				}
			}
		}
	}
	_, errOut := mustRun(t, "", append(base, "-n", "5")...)
	if !strings.Contains(errOut, "stopped: 5 tokens (-n)") {
		t.Errorf("-n 5: %s", errOut)
	}
}

// TestRandomSeed: a sampled run without --seed prints its seed, and that
// seed repeats the run at a fixed -k; under the default -k auto the advice
// says to fix -k too.
func TestRandomSeed(t *testing.T) {
	_, errAuto := mustRun(t, "", "generate", "-p", "The jury said", "-n", "4", "--temp", "1", "--threads", "1")
	if !strings.Contains(errAuto, "and a fixed -k: under -k auto") {
		t.Errorf("-k auto: the seed's advice does not say to fix -k:\n%s", errAuto)
	}
	base := []string{"generate", "-p", "The jury said", "-n", "16", "--temp", "1", "--threads", "1", "--ids", "-k", "4"}
	out, errOut := mustRun(t, "", base...)
	m := regexp.MustCompile(`seed: (\d+) \(repeat the run with --seed (\d+)\)`).FindStringSubmatch(errOut)
	if m == nil || m[1] != m[2] {
		t.Fatalf("no seed printed:\n%s", errOut)
	}
	again, errAgain := mustRun(t, "", append(base, "--seed", m[1])...)
	if again != out || strings.Contains(errAgain, "seed: ") {
		t.Errorf("--seed %s: %q, want %q (stderr %s)", m[1], again, out, errAgain)
	}
}

// TestVersion: the module, Go version, CPU features and kernel set.
func TestVersion(t *testing.T) {
	out, _ := mustRun(t, "", "version")
	for _, want := range []string{
		"specd:   github.com/specd-dev/specd",
		"\ncommit:  ",
		"\ngo:      " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n",
		"\nkernels: " + tensor.KernelSet(),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("version lacks %q:\n%s", want, out)
		}
	}
	if fs := tensor.CPUFeatures(); len(fs) > 0 && !strings.Contains(out, "\ncpu:     "+strings.Join(fs, " ")+"\n") {
		t.Errorf("version lacks the CPU features %v:\n%s", fs, out)
	}
	if code, _, errOut := runIn("", "version", "extra"); code != 2 || !strings.Contains(errOut, `unexpected argument "extra"`) {
		t.Errorf("version extra: exit %d, %s", code, errOut)
	}
	if code, _, errOut := runIn("", "chat", "hello"); code != 2 || !strings.Contains(errOut, `specd chat: unexpected argument "hello" (type messages after it starts)`) {
		t.Errorf("chat hello: exit %d, %s", code, errOut)
	}
}

// TestGenerateFlagErrors: each misuse of the prompt flags is named.
func TestGenerateFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-p", "x", "-f", "prompt.txt"}, "exactly one of -p, -f and --prompt-ids"},
		{[]string{"-f", filepath.Join(t.TempDir(), "none.txt")}, "-f: open"},
		{[]string{"--prompt-ids", "1", "--chat"}, "--chat applies the chat template to text"},
		{[]string{"-p", "x", "--system", "Be brief."}, "--system needs --chat"},
		{[]string{"--prompt-ids", "1", "--ids", "--stop", "x"}, "--stop needs text output"},
		{[]string{"-p", "x", "--stop", ""}, "an empty stop string"},
		{[]string{"-p", "x", "--model-draft"}, "flag needs an argument: -model-draft"},
	} {
		code, _, errOut := runIn("", append([]string{"generate"}, tc.args...)...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want it to mention %q", tc.args, code, errOut, tc.want)
		}
	}
}
