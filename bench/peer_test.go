package bench

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/peertest"
)

// The files in testdata/peer are real output of llama.cpp's tools (build
// 80fb11a) on the 58M reference model (target F16, draft Q8_0 from
// tools/peer/mkmodel), prompt "The jury said", -n 32.

func open(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "peer", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestParseSpecSimple(t *testing.T) {
	for _, c := range []struct {
		file                              string
		decoded, ndraft, drafted, accepte int
		secs, toks                        float64
	}{
		{"speculative-simple-k4.txt", 37, 4, 41, 26, 0.796, 46.456},
		{"speculative-simple-k2-t0.8.txt", 35, 2, 34, 18, 0.568, 61.624},
	} {
		r, err := ParseSpecSimple(open(t, c.file))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if r.Decoded != c.decoded || r.NDraft != c.ndraft || r.Drafted != c.drafted || r.Accepted != c.accepte || r.Predict != c.decoded ||
			!near(r.Seconds, c.secs, 1e-9) || !near(r.TokS, c.toks, 1e-9) {
			t.Errorf("%s: %+v", c.file, r)
		}
	}
	// Without --spec-type draft-simple it stops before decoding.
	if _, err := ParseSpecSimple(open(t, "speculative-simple-no-spec-type.txt")); !errors.Is(err, ErrPeer) || !strings.Contains(err.Error(), "decoded") {
		t.Errorf("failed run: %v", err)
	}
	if _, err := ParseSpecSimple(strings.NewReader("decoded   37 tokens in    0.796 seconds, speed:   46.456 t/s\n")); err == nil {
		t.Error("no counts: no error")
	}
}

func TestParseCompletion(t *testing.T) {
	r, err := ParseCompletion(open(t, "completion-t0.8.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// "eval time = 134.94 ms / 31 runs": not the prompt eval line before it.
	if r.Decoded != 31 || !near(r.Seconds, 0.13494, 1e-12) || !near(r.TokS, 31/0.13494, 1e-9) {
		t.Errorf("%+v", r)
	}
	if _, err := ParseCompletion(strings.NewReader("common_perf_print: prompt eval time =      21.21 ms /    10 tokens\n")); err == nil {
		t.Error("only a prompt eval line: no error")
	}
	// llama-speculative-simple's own perf line counts no eval time.
	if _, err := ParseCompletion(open(t, "speculative-simple-k4.txt")); err == nil {
		t.Error("eval time = 0.00 ms / 1 runs: no error")
	}
}

func TestParseLlamaBench(t *testing.T) {
	rows, err := ParseLlamaBench(open(t, "llama-bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	r := rows[0]
	if r.NPrompt != 0 || r.NGen != 32 || r.Threads != 1 || r.Commit != "80fb11a" || r.Type != "llama ?B F16" ||
		!slices.Equal(r.SamplesTS, []float64{115.197, 117.082}) || !near(r.AvgTS, 116.139537, 1e-9) {
		t.Errorf("%+v", r)
	}
	// A log line before the array, and a test without samples.
	rows, err = ParseLlamaBench(strings.NewReader("load_backend: loaded CPU\n[{\"n_prompt\":0,\"n_gen\":8,\"avg_ts\":50}]"))
	if err != nil || len(rows) != 1 || !slices.Equal(rows[0].SamplesTS, []float64{50}) {
		t.Errorf("%+v %v", rows, err)
	}
	for _, bad := range []string{"", "no json", "[]", `[{"n_gen":8}]`, "[{"} {
		if _, err := ParseLlamaBench(strings.NewReader(bad)); !errors.Is(err, ErrPeer) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestRunPeers replays the captured outputs through RunPeers in place of
// the tools and checks the command lines it builds and what it makes of
// the outputs.
func TestRunPeers(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", "peer", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var calls [][]string
	o := PeerOptions{Bin: "/bin", Target: "t.gguf", Draft: "d.gguf", Prompts: []string{"a", "b"}, N: 32, Reps: 2, Seed: 5, Ctx: 256, DraftThreads: 1,
		Run: func(_ context.Context, name string, args ...string) ([]byte, error) {
			calls = append(calls, append([]string{name}, args...))
			switch filepath.Base(name) {
			case PeerLlamaBench:
				return read("llama-bench.json"), nil
			case PeerCompletion:
				return read("completion-t0.8.txt"), nil
			}
			if slices.Contains(args, "4") {
				return read("speculative-simple-k4.txt"), nil
			}
			return read("speculative-simple-k2-t0.8.txt"), nil
		}}
	pts := []Point{{Draft: DraftModel, K: 4, Batch: 1, Threads: 1}, {Draft: DraftModel, K: 2, Batch: 1, Threads: 1},
		{Draft: DraftModel, K: 2, Batch: 4, Threads: 1}, {Draft: DraftModel, K: 8, Auto: true, Batch: 1, Threads: 1}, {Draft: DraftNGram, K: 2, Batch: 1, Threads: 1}}
	var prog []int
	res, err := RunPeers(context.Background(), o, pts, func(done, total int, _ string) { prog = append(prog, done) })
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, r := range res {
		labels = append(labels, r.Label)
	}
	if want := []string{"llama-bench tg32 th1", "llama.cpp plain t0 b1 th1", "llama.cpp k2 t0 b1 th1", "llama.cpp k4 t0 b1 th1"}; !slices.Equal(labels, want) {
		t.Fatalf("results %q, want %q", labels, want)
	}
	if !slices.Equal(prog, []int{1, 2, 3, 4}) {
		t.Errorf("progress %v", prog)
	}
	// 1 llama-bench, then 2 repeats × 2 prompts for each of plain, k 2, k 4.
	if len(calls) != 1+3*4 {
		t.Fatalf("%d calls", len(calls))
	}
	if got := strings.Join(calls[0], " "); got != "/bin/llama-bench -m t.gguf -t 1 -p 0 -n 32 -r 2 -o json" {
		t.Errorf("llama-bench: %s", got)
	}
	if got := strings.Join(calls[1], " "); got != "/bin/llama-completion -m t.gguf -no-cnv -n 32 -c 256 -t 1 --temp 0 --seed 5 -p a" {
		t.Errorf("llama-completion: %s", got)
	}
	if got := strings.Join(calls[len(calls)-1], " "); got != "/bin/llama-speculative-simple -m t.gguf -md d.gguf --spec-type draft-simple --spec-draft-n-max 4 --spec-draft-n-min 0 --spec-draft-p-min 0 -td 1 -n 32 -c 256 -t 1 --temp 0 --seed 6 -p b" {
		t.Errorf("llama-speculative-simple: %s", got)
	}
	bench, plain, k2, k4 := res[0], res[1], res[2], res[3]
	if !near(bench.TokS.Median, (115.197+117.082)/2, 1e-9) || bench.Point.Draft != DraftNone {
		t.Errorf("llama-bench %+v", bench)
	}
	// Every run decodes 31 tokens in 0.13494 s (plain) or 37 in 0.796 s (k 4).
	if !near(plain.TokS.Median, 31/0.13494, 1e-6) || plain.TokS.N != 2 || !math.IsNaN(float64(plain.Speedup)) || plain.Tool != PeerCompletion {
		t.Errorf("plain %+v", plain)
	}
	if !near(k4.TokS.Median, 37/0.796, 1e-6) || !near(float64(k4.Speedup), (37/0.796)/(31/0.13494), 1e-6) ||
		k4.Drafted != 4*41 || k4.Accepted != 4*26 || !near(float64(k4.AcceptanceRate), 26.0/41, 1e-12) || k2.Point.K != 2 {
		t.Errorf("k4 %+v", k4)
	}
	// A run whose output lacks its summary (this llama.cpp's logging
	// thread loses it now and then) is run again.
	lost, tries := read("completion-t0.8.txt"), 0
	lost = lost[:strings.Index(string(lost), "common_perf_print")]
	o.Reps, o.Prompts = 1, o.Prompts[:1]
	tries = 0
	o.Run = func(_ context.Context, name string, args ...string) ([]byte, error) {
		switch filepath.Base(name) {
		case PeerLlamaBench:
			return read("llama-bench.json"), nil
		case PeerCompletion:
			if tries++; tries == 1 {
				return lost, nil
			}
			return read("completion-t0.8.txt"), nil
		}
		return read("speculative-simple-k4.txt"), nil
	}
	if res, err = RunPeers(context.Background(), o, pts[:1], nil); err != nil || len(res) != 3 || res[1].Retries != 1 || res[2].Retries != 0 {
		t.Errorf("retry: %v %+v", err, res)
	}
	o.Run = func(_ context.Context, name string, args ...string) ([]byte, error) {
		if filepath.Base(name) == PeerLlamaBench {
			return read("llama-bench.json"), nil
		}
		return lost, nil
	}
	if _, err = RunPeers(context.Background(), o, pts[:1], nil); err == nil || !strings.Contains(err.Error(), "4 times") {
		t.Errorf("summary never written: %v", err)
	}
	// A failing tool fails the run, with its output's tail.
	o.Run = func(context.Context, string, ...string) ([]byte, error) { return nil, errors.New("boom") }
	if _, err := RunPeers(context.Background(), o, pts, nil); err == nil {
		t.Error("no error from a failing tool")
	}
	if err := CheckPeerBin(t.TempDir()); !errors.Is(err, ErrPeer) || !strings.Contains(err.Error(), "llama-bench") {
		t.Errorf("empty --peer-bin: %v", err)
	}
}

// TestPeerTools runs the real tools on the bundled pair when they are
// built (bash tools/peer/build.sh).
func TestPeerTools(t *testing.T) {
	bin := peertest.Bin()
	if err := CheckPeerBin(bin); err != nil {
		peertest.Missing(t, err.Error())
	}
	if testing.Short() {
		t.Skip("runs llama.cpp (-short)")
	}
	e, _ := openBundled(t)
	ps, _ := Builtin(SetBrown)
	o, err := EnginePeerOptions(e, bin, t.TempDir(), ps[:1], 8, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunPeers(context.Background(), o, []Point{{Draft: DraftModel, K: 2, Batch: 1, Threads: 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("%d results", len(res))
	}
	for _, r := range res {
		if !(r.TokS.Median > 0) {
			t.Errorf("%s: tok/s %v", r.Label, r.TokS)
		}
	}
	for _, r := range res {
		t.Logf("%s: %v tok/s, drafted %d accepted %d, speedup %v", r.Label, r.TokS, r.Drafted, r.Accepted, r.Speedup)
	}
	if k2 := res[2]; !(k2.Drafted > 0 && k2.AcceptanceRate >= 0 && k2.Speedup > 0) {
		t.Errorf("k 2: %+v", k2)
	}
}

// TestPeerReportAndPlots: llama.cpp's rows beside specd's in report.md,
// its line on speedup_vs_k.png and its own figure.
func TestPeerReportAndPlots(t *testing.T) {
	res := fakeResults(t)
	nan := Num(math.NaN())
	res.Peers = []PeerResult{
		{Tool: PeerLlamaBench, Point: Point{Draft: DraftNone, Batch: 1, Threads: 1}, Label: "llama-bench tg4 th1", TokS: Summarize([]float64{300}), Speedup: nan, AcceptanceRate: nan, Args: []string{"-m", "t.gguf"}},
		{Tool: PeerCompletion, Point: Point{Draft: DraftNone, Batch: 1, Threads: 1}, Label: "llama.cpp plain t0 b1 th1", TokS: Summarize([]float64{200, 220}), Speedup: nan, AcceptanceRate: nan},
		{Tool: PeerSpecSimple, Point: Point{Draft: DraftModel, K: 1, Batch: 1, Threads: 1}, Label: "llama.cpp k1 t0 b1 th1", TokS: Summarize([]float64{100}), Speedup: 100.0 / 210, Drafted: 10, Accepted: 5, AcceptanceRate: 0.5},
		{Tool: PeerSpecSimple, Point: Point{Draft: DraftModel, K: 2, Batch: 1, Threads: 1}, Label: "llama.cpp k2 t0 b1 th1", TokS: Summarize([]float64{150}), Speedup: 150.0 / 210, Drafted: 10, Accepted: 8, AcceptanceRate: 0.8},
	}
	var rep strings.Builder
	if err := res.WriteReport(&rep, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## llama.cpp beside specd", "- **llama-bench tg4 th1**: 300.0 tok/s (`llama-bench -m t.gguf`)",
		// specd's plain median 100 over llama.cpp's 210; k 1: 110 over 100.
		"| plain t0 b1 th1 | 100.0 (70.0–100.0) | 1 | – | 210.0 (200.0–220.0) | 1 | – | 0.48× |",
		"| model k1 t0 b1 th1 | 110.0 (110.0–110.0) | 1.10× (1.10–1.10) | 0.500 | 100.0 | 0.48× | 0.500 | 1.10× |"} {
		if !strings.Contains(rep.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, rep.String())
		}
	}
	var sum strings.Builder
	res.WriteSummary(&sum)
	if want := "llama.cpp: plain 210.0 tok/s (plain t0 b1 th1); speculative-simple at best k 2: 150.0 tok/s (0.71x), acceptance 0.800"; !strings.Contains(sum.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, sum.String())
	}
	dir := t.TempDir()
	figs, err := WritePlots(res, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(figs, FigPeer) {
		t.Errorf("figures %v lack %s", figs, FigPeer)
	}
	fig, err := peerPlot(res)
	if err != nil || fig == nil || !slices.Contains(fig.leg.names, "llama.cpp speculative-simple") ||
		!slices.Contains(fig.leg.names, "llama.cpp plain (llama-completion): 210.0 tok/s") || !slices.Contains(fig.leg.names, "llama-bench tg: 300.0 tok/s") {
		t.Errorf("peer figure %v: legend %v", err, fig.leg.names)
	}
	sp, err := speedupPlot(res)
	if err != nil || !slices.Contains(sp.leg.names, "llama.cpp speculative-simple, batch 1") {
		t.Errorf("speedup figure: %v %v", err, sp.leg.names)
	}
	res.Peers = nil
	if fig, err := peerPlot(res); fig != nil || err != nil {
		t.Errorf("no peers drew a figure (%v)", err)
	}
}
