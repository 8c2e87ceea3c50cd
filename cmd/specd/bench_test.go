package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/specd-dev/specd/bench"
	"github.com/specd-dev/specd/models"
)

// idPrompts writes a prompt file of token ids (the random test models
// have no tokenizer).
func idPrompts(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prompts.jsonl")
	body := `{"id":"a","category":"one","ids":[1,5,9,13]}
{"id":"b","category":"two","ids":[2,4,6,8,10]}
{"id":"c","category":"one","ids":[3,3,3]}
`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBench sweeps the random pair of spec_test.go: two draft lengths,
// two batch sizes, the model and the n-gram draft, greedy; every output
// is written and every greedy configuration exact.
func TestBench(t *testing.T) {
	target, dr := specModels(t)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runCmd("bench", "-m", target, "-d", dr, "--prompts", idPrompts(t), "--k", "1,3", "--batch", "1,2",
		"--draft", "model,ngram", "--reps", "1", "--warmup", "0", "-n", "8", "--out", out, "--no-progress")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"configuration", "best: ", "wrote " + out, "timeline.png"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "INEXACT") {
		t.Errorf("inexact output:\n%s", stdout)
	}
	for _, f := range []string{"results.csv", "results.json", "report.md", bench.FigSpeedup, bench.FigPositions, bench.FigHistogram, bench.FigBatch, bench.FigTimeline} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	f, err := os.Open(filepath.Join(out, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	// 8 configurations and 2 baselines, greedy and checked.
	if len(rows) != 1+8+2 {
		t.Fatalf("%d csv rows", len(rows))
	}
	exact := -1
	for i, h := range rows[0] {
		if h == "exact" {
			exact = i
		}
	}
	for _, r := range rows[1:] {
		if r[exact] != "yes" {
			t.Errorf("%s: exact %q", r[0], r[exact])
		}
	}
	rep, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"| one α | one speedup |", "sha256 `", "specd bench -m " + target} {
		if !strings.Contains(string(rep), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// --replot redraws from results.json alone.
	os.Remove(filepath.Join(out, bench.FigSpeedup))
	if code, stdout, stderr := runCmd("bench", "--replot", out); code != 0 || !strings.Contains(stdout, "wrote") {
		t.Errorf("--replot: exit %d: %s %s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, bench.FigSpeedup)); err != nil {
		t.Errorf("--replot did not redraw: %v", err)
	}
}

// TestBenchBundledDefault: without -m the bundled pair, the built-in
// prompts, the draft model.
func TestBenchBundledDefault(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runCmd("bench", "--k", "2", "--reps", "1", "--warmup", "0", "-n", "8", "--n-prompts", "2",
		"--out", out, "--no-plots", "--no-progress", "--no-timeline")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "models: bundled "+models.TargetName+" + "+models.DraftName+" (draft shares target embeddings") {
		t.Errorf("stderr lacks the models line:\n%s", stderr)
	}
	if !strings.Contains(stdout, "model k2 t0 b1 th1") || strings.Contains(stdout, "INEXACT") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// TestBenchSynthetic: --synthetic-acceptance 1 accepts every draft token
// and skips the exactness check.
func TestBenchSynthetic(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := runCmd("bench", "--k", "3", "--reps", "1", "--warmup", "0", "-n", "8", "--n-prompts", "2",
		"--synthetic-acceptance", "1", "--out", out, "--no-plots", "--no-progress", "--no-timeline")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := os.Open(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := bench.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Configs[0]
	if c.Exact != "n/a: synthetic" || c.Alpha != 1 || c.AcceptanceRate < 0.9 {
		t.Errorf("synthetic 1: exact %q, α %v, rate %v", c.Exact, c.Alpha, c.AcceptanceRate)
	}
	if len(res.Settings.Synthetic) != 1 || res.Settings.Synthetic[0] != 1 {
		t.Errorf("settings %+v", res.Settings)
	}
}

func TestBenchFlagErrors(t *testing.T) {
	target, _ := specModels(t)
	missing := filepath.Join(t.TempDir(), "none.jsonl")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--k", "0,2"}, "--k: draft length 0"},
		{[]string{"--k", "1,x"}, "--k: item 2"},
		{[]string{"--batch", "0"}, "--batch"},
		{[]string{"--temp", "-1"}, "--temp"},
		{[]string{"--draft", "tree"}, "--draft"},
		{[]string{"--p-min", "1"}, "--p-min"},
		{[]string{"--synthetic-acceptance", "1.5"}, "--synthetic-acceptance"},
		{[]string{"--prompts", missing}, "--prompts"},
		{[]string{"--reps", "0"}, "--reps"},
		{[]string{"-m", target, "--draft", "model", "--prompts", missing}, "--prompts"},
		{[]string{"-m", target, "--draft", "model"}, "needs a draft model"},
		{[]string{"-d", "ngram", "--draft", "model"}, "use --draft ngram"},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"--replot", missing}, "--replot"},
	} {
		code, _, stderr := runCmd(append([]string{"bench", "--no-progress", "--out", t.TempDir()}, c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %s", c.args, code, stderr)
		}
	}
}

// TestBenchLoad loads a real specd serve worker over NATS.
func TestBenchLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a specd serve process (-short)")
	}
	ns := natsServer(t, &server.Options{})
	url := ns.ClientURL()
	startWorker(t, "--nats", url, "--slots", "2", "--http", "off")
	connectInstances(t, url, 1)
	out := t.TempDir()
	code, stdout, stderr := runCmd("bench", "--nats", url, "--clients", "2", "--requests", "4", "-n", "8", "--k", "3",
		"--prompts", "assistant", "--out", out, "--no-progress")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"load: 4 requests (0 failed) by 2 clients, closed loop", "TTFT ms: p50", "acceptance (server $SRV.STATS over the run)", "; 4 requests, 32 generated tokens"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if st, err := os.Stat(filepath.Join(out, "load.json")); err != nil || st.Size() == 0 {
		t.Errorf("load.json: %v", err)
	}
	if code, _, stderr := runCmd("bench", "--nats", url, "--batch", "4", "--out", out); code == 0 || !strings.Contains(stderr, "the server's") {
		t.Errorf("--nats with --batch: exit %d: %s", code, stderr)
	}
}
