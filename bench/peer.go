package bench

// --peer-bin: llama.cpp's llama-bench, llama-completion and
// llama-speculative-simple on the same models, prompts, draft lengths,
// temperatures and threads as the sweep, their tok/s and acceptance
// beside specd's.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/models"
)

// Peer tools.
const (
	PeerLlamaBench = "llama-bench"              // plain decoding: tg N from an empty cache
	PeerSpecSimple = "llama-speculative-simple" // one sequence, a draft model, k = --spec-draft-n-max
	// PeerCompletion decodes the same prompts plainly: the baseline of
	// llama-speculative-simple, which cannot run at k 0 (this build
	// asserts n_outputs_max <= cparams.n_outputs_max in llama_decode).
	PeerCompletion = "llama-completion"
)

// ErrPeer reports a peer tool that could not run or whose output could
// not be read.
var ErrPeer = errors.New("bench: peer")

// PeerOptions say how to run llama.cpp's tools beside a sweep.
type PeerOptions struct {
	Bin           string   // directory holding llama-bench and llama-speculative-simple
	Target, Draft string   // GGUF files (the draft: empty for no speculative runs)
	Prompts       []string // prompt texts, each decoded once per repeat
	N             int      // tokens generated per prompt
	Reps          int      // repeats of each configuration
	Seed          uint64   // sampling seed (prompt i: Seed+i)
	Ctx           int      // context size to ask for
	DraftThreads  int
	// Run runs a command and returns its standard output and error
	// together; nil: exec.CommandContext.
	Run func(ctx context.Context, name string, args ...string) ([]byte, error)
}

// PeerResult is one peer configuration: plain decoding by llama-bench or
// llama-completion (the plain baseline of the same prompts), or
// llama-speculative-simple at draft length K.
type PeerResult struct {
	Tool  string `json:"tool"`
	Point Point  `json:"point"` // Draft DraftNone for llama-bench and k 0, Batch 1
	Label string `json:"label"`
	// TokS: decoded tokens per second of decoding time (the prompt's
	// prefill excluded), one value per repeat over all prompts.
	TokS Summary `json:"tok_s"`
	// Speedup is TokS's median over llama-completion's at the same
	// temperature and threads (NaN for the plain tools).
	Speedup        Num      `json:"speedup"`
	Drafted        int      `json:"drafted"` // draft tokens, over every run
	Accepted       int      `json:"accepted"`
	AcceptanceRate Num      `json:"acceptance_rate"` // accepted / drafted
	Args           []string `json:"args"`            // the last command line run
	// Retries counts the runs repeated because their output lacked the
	// summary (see peerTries).
	Retries int `json:"retries"`
}

// peerTries is how many times a peer run whose output lacks its summary
// lines is tried.
const peerTries = 4

// run is o.Run, or the command itself.
func (o PeerOptions) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	if o.Run != nil {
		return o.Run(ctx, name, args...)
	}
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		tail := out[max(0, len(out)-800):]
		return out, fmt.Errorf("%w: %s: %v\n%s", ErrPeer, filepath.Base(name), err, tail)
	}
	return out, nil
}

// CheckPeerBin reports whether dir holds both peer tools.
func CheckPeerBin(dir string) error {
	for _, t := range []string{PeerLlamaBench, PeerCompletion, PeerSpecSimple} {
		st, err := os.Stat(filepath.Join(dir, t))
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return fmt.Errorf("%w: --peer-bin %s: no executable %s there (bash tools/peer/build.sh builds it into .cache/llama.cpp/build/bin)", ErrPeer, dir, t)
		}
	}
	return nil
}

// RunPeers runs the peer tools for the batch-1 points of points (batch
// 1 only: llama-speculative-simple decodes one sequence): llama-bench
// once per thread count, llama-completion (plain) and
// llama-speculative-simple at every fixed k of the model draft, per
// temperature and thread count.
func RunPeers(ctx context.Context, o PeerOptions, points []Point, progress Progress) ([]PeerResult, error) {
	if o.N < 1 || o.Reps < 1 || len(o.Prompts) == 0 {
		return nil, fmt.Errorf("%w: needs prompts, -n and a repeat", ErrPeer)
	}
	type tt struct {
		temp    float64
		threads int
	}
	var order []tt
	ks := map[tt][]int{}
	for _, p := range points {
		if p.Batch != 1 || p.Draft != DraftModel || p.Auto || p.Adaptive || p.PMin != 0 {
			continue
		}
		key := tt{p.Temp, p.Threads}
		if _, ok := ks[key]; !ok {
			order = append(order, key)
		}
		if !slices.Contains(ks[key], p.K) {
			ks[key] = append(ks[key], p.K)
		}
	}
	if len(order) == 0 {
		return nil, nil
	}
	total, done := 0, 0
	var ths []int
	for _, key := range order {
		total += 1 + len(ks[key])
		if !slices.Contains(ths, key.threads) {
			ths = append(ths, key.threads)
			total++
		}
	}
	step := func(what string) {
		done++
		if progress != nil {
			progress(done, total, what)
		}
	}
	var out []PeerResult
	for _, th := range ths {
		args := []string{"-m", o.Target, "-t", strconv.Itoa(th), "-p", "0", "-n", strconv.Itoa(o.N), "-r", strconv.Itoa(o.Reps), "-o", "json"}
		b, err := o.run(ctx, filepath.Join(o.Bin, PeerLlamaBench), args...)
		if err != nil {
			return out, err
		}
		rows, err := ParseLlamaBench(bytes.NewReader(b))
		if err != nil {
			return out, err
		}
		for _, r := range rows {
			if r.NGen == o.N && r.NPrompt == 0 {
				p := Point{Draft: DraftNone, Batch: 1, Threads: th}
				out = append(out, PeerResult{Tool: PeerLlamaBench, Point: p, Label: fmt.Sprintf("llama-bench tg%d th%d", o.N, th),
					TokS: Summarize(r.SamplesTS), Speedup: Num(math.NaN()), AcceptanceRate: Num(math.NaN()), Args: args})
			}
		}
		step(fmt.Sprintf("llama-bench th%d", th))
	}
	if o.Draft == "" {
		return out, nil
	}
	for _, key := range order {
		kk := append([]int{0}, ks[key]...)
		slices.Sort(kk)
		var plain float64
		for _, k := range kk {
			pr, err := o.peerRuns(ctx, k, key.temp, key.threads)
			if err != nil {
				return out, err
			}
			if k == 0 {
				plain = pr.TokS.Median
			} else {
				pr.Speedup = Num(pr.TokS.Median / plain)
			}
			out = append(out, pr)
			step(pr.Label)
		}
	}
	return out, nil
}

// peerRuns runs llama-speculative-simple at draft length k (0:
// llama-completion, plain) over every prompt, Reps times.
func (o PeerOptions) peerRuns(ctx context.Context, k int, temp float64, threads int) (PeerResult, error) {
	p := Point{Draft: DraftModel, K: k, Temp: temp, Batch: 1, Threads: threads}
	label := fmt.Sprintf("llama.cpp k%d t%s b1 th%d", k, fnum(temp), threads)
	tool := PeerSpecSimple
	if k == 0 {
		p = Point{Draft: DraftNone, Temp: temp, Batch: 1, Threads: threads}
		label = fmt.Sprintf("llama.cpp plain t%s b1 th%d", fnum(temp), threads)
		tool = PeerCompletion
	}
	pr := PeerResult{Tool: tool, Point: p, Label: label, Speedup: Num(math.NaN())}
	var toks []float64
	for rep := 0; rep < o.Reps; rep++ {
		n, secs := 0, 0.0
		for i, text := range o.Prompts {
			// --spec-type draft-simple: without it this build infers a
			// speculative type only from draft metadata (MTP heads,
			// DFlash), finds none for a plain draft model, and fails with
			// "failed to initialize speculative decoding".
			common := []string{"-n", strconv.Itoa(o.N), "-c", strconv.Itoa(o.Ctx), "-t", strconv.Itoa(threads),
				"--temp", fnum(temp), "--seed", strconv.FormatUint(o.Seed+uint64(i), 10), "-p", text}
			args := append([]string{"-m", o.Target, "-no-cnv"}, common...)
			if k > 0 {
				args = append([]string{"-m", o.Target, "-md", o.Draft, "--spec-type", "draft-simple",
					"--spec-draft-n-max", strconv.Itoa(k), "--spec-draft-n-min", "0", "--spec-draft-p-min", "0",
					"-td", strconv.Itoa(max(o.DraftThreads, 1))}, common...)
			}
			parse := ParseSpecSimple
			if k == 0 {
				parse = ParseCompletion
			}
			// This llama.cpp now and then exits (status 0) before its
			// logging thread has written the summary lines: run again,
			// up to peerTries times in all.
			var r SpecSimpleResult
			var b []byte
			var err error
			for try := 1; ; try++ {
				if b, err = o.run(ctx, filepath.Join(o.Bin, tool), args...); err != nil {
					return pr, err
				}
				if r, err = parse(bytes.NewReader(b)); err == nil {
					break
				}
				if try == peerTries {
					return pr, fmt.Errorf("%s: %w, %d times (%s %s):\n%s", label, err, try, tool, strings.Join(args, " "), b[max(0, len(b)-1500):])
				}
				pr.Retries++
			}
			n += r.Decoded
			secs += r.Seconds
			pr.Drafted += r.Drafted
			pr.Accepted += r.Accepted
			pr.Args = args
		}
		if secs > 0 {
			toks = append(toks, float64(n)/secs)
		}
	}
	pr.TokS = Summarize(toks)
	pr.AcceptanceRate = Num(math.NaN())
	if pr.Drafted > 0 {
		pr.AcceptanceRate = Num(float64(pr.Accepted) / float64(pr.Drafted))
	}
	return pr, nil
}

// LlamaBenchRow is one test of llama-bench -o json.
type LlamaBenchRow struct {
	Model     string    `json:"model_filename"`
	Type      string    `json:"model_type"`
	Commit    string    `json:"build_commit"`
	Threads   int       `json:"n_threads"`
	NPrompt   int       `json:"n_prompt"`
	NGen      int       `json:"n_gen"`
	AvgTS     float64   `json:"avg_ts"`
	StddevTS  float64   `json:"stddev_ts"`
	SamplesTS []float64 `json:"samples_ts"`
}

// ParseLlamaBench reads llama-bench -o json's output (a JSON array of
// tests; any log lines before it are skipped).
func ParseLlamaBench(r io.Reader) ([]LlamaBenchRow, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	i := bytes.IndexByte(b, '[')
	if i < 0 {
		return nil, fmt.Errorf("%w: llama-bench: no JSON array in its output", ErrPeer)
	}
	var rows []LlamaBenchRow
	if err := json.NewDecoder(bytes.NewReader(b[i:])).Decode(&rows); err != nil {
		return nil, fmt.Errorf("%w: llama-bench: %v", ErrPeer, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%w: llama-bench: no tests in its output", ErrPeer)
	}
	for i, r := range rows {
		if len(r.SamplesTS) == 0 {
			if !(r.AvgTS > 0) {
				return nil, fmt.Errorf("%w: llama-bench: test %d has no speed", ErrPeer, i+1)
			}
			rows[i].SamplesTS = []float64{r.AvgTS}
		}
	}
	return rows, nil
}

// SpecSimpleResult is what llama-speculative-simple reports at its end.
type SpecSimpleResult struct {
	Decoded  int     // tokens decoded
	Seconds  float64 // decoding time
	TokS     float64 // as it printed
	NDraft   int     // its draft length setting
	Predict  int
	Drafted  int
	Accepted int
}

var (
	reDecoded = regexp.MustCompile(`decoded\s+(\d+) tokens in\s+([0-9.]+) seconds, speed:\s+([0-9.]+) t/s`)
	reCount   = regexp.MustCompile(`^(?:.*\s)?(n_draft|n_predict|n_drafted|n_accept)\s*=\s*(\d+)\s*$`)
)

// ParseSpecSimple reads llama-speculative-simple's summary lines
// ("decoded N tokens in S seconds, speed: X t/s", "n_drafted = D",
// "n_accept = A", …) from its output.
func ParseSpecSimple(r io.Reader) (SpecSimpleResult, error) {
	var res SpecSimpleResult
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := reDecoded.FindStringSubmatch(line); m != nil {
			res.Decoded, _ = strconv.Atoi(m[1])
			res.Seconds, _ = strconv.ParseFloat(m[2], 64)
			res.TokS, _ = strconv.ParseFloat(m[3], 64)
			seen["decoded"] = true
			continue
		}
		if m := reCount.FindStringSubmatch(strings.TrimRight(line, "\r")); m != nil {
			v, _ := strconv.Atoi(m[2])
			switch m[1] {
			case "n_draft":
				res.NDraft = v
			case "n_predict":
				res.Predict = v
			case "n_drafted":
				res.Drafted = v
			case "n_accept":
				res.Accepted = v
			}
			seen[m[1]] = true
		}
	}
	if err := sc.Err(); err != nil {
		return res, err
	}
	for _, k := range []string{"decoded", "n_drafted", "n_accept"} {
		if !seen[k] {
			return res, fmt.Errorf("%w: llama-speculative-simple: no %q line in its output", ErrPeer, k)
		}
	}
	return res, nil
}

// EnginePeerOptions are PeerOptions for the models of e (a bundled model
// is written into dir, which must exist) and the texts of ps; a prompt
// given only as token ids is an error, since llama.cpp's tools take text.
func EnginePeerOptions(e *engine.Engine, bin, dir string, ps []Prompt, n, reps int, seed uint64) (PeerOptions, error) {
	o := PeerOptions{Bin: bin, N: n, Reps: reps, Seed: seed, Ctx: e.CtxLen()}
	eo := e.Options()
	o.DraftThreads = eo.DraftThreads
	for _, p := range ps {
		if p.Text == "" {
			return o, fmt.Errorf("%w: prompt %s is token ids; llama.cpp's tools take text prompts", ErrPeer, p.ID)
		}
		o.Prompts = append(o.Prompts, p.Text)
	}
	file := func(path string, get func() ([]byte, string)) (string, error) {
		if path != "" && path != engine.DraftBundled {
			return path, nil
		}
		b, name := get()
		out := filepath.Join(dir, name)
		return out, os.WriteFile(out, b, 0o644)
	}
	var err error
	if o.Target, err = file(eo.Target, models.Target); err != nil {
		return o, err
	}
	switch {
	case e.Draft == nil:
	case e.Draft == e.Target:
		o.Draft = o.Target
	default:
		if o.Draft, err = file(eo.Draft, models.Draft); err != nil {
			return o, err
		}
	}
	return o, nil
}

var reEval = regexp.MustCompile(`(?:^|\s)eval time =\s+([0-9.]+) ms /\s+(\d+) runs`)

// ParseCompletion reads llama-completion's "eval time = X ms / R runs"
// line (the prompt eval line is the one before it): R tokens decoded one
// pass each in X ms; X and R must be positive.
func ParseCompletion(r io.Reader) (SpecSimpleResult, error) {
	var res SpecSimpleResult
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	found := false
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "prompt eval time") {
			continue
		}
		if m := reEval.FindStringSubmatch(line); m != nil {
			ms, _ := strconv.ParseFloat(m[1], 64)
			res.Decoded, _ = strconv.Atoi(m[2])
			res.Seconds = ms / 1e3
			if res.Seconds > 0 {
				res.TokS = float64(res.Decoded) / res.Seconds
			}
			found = true
		}
	}
	if err := sc.Err(); err != nil {
		return res, err
	}
	if !found || res.Decoded == 0 || !(res.Seconds > 0) {
		return res, fmt.Errorf("%w: llama-completion: no \"eval time = … ms / N runs\" line in its output", ErrPeer)
	}
	return res, nil
}
