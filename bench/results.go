package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Schema names the layout of results.json and results.csv; it changes
// when a field is renamed or removed (adding one keeps it).
const Schema = "specd-bench/1"

// Num is a float64 that marshals NaN and infinities (not measured, or
// not applicable) as JSON null.
type Num float64

// MarshalJSON writes n, or null if it is not finite.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', 6, 64), nil
}

// UnmarshalJSON reads a number or null (NaN).
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	*n = Num(f)
	return err
}

// MarshalJSON writes a Summary with null for NaN.
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		N      int `json:"n"`
		Median Num `json:"median"`
		Min    Num `json:"min"`
		Max    Num `json:"max"`
	}{s.N, Num(s.Median), Num(s.Min), Num(s.Max)})
}

// UnmarshalJSON reads a Summary, null as NaN.
func (s *Summary) UnmarshalJSON(b []byte) error {
	var v struct {
		N                int
		Median, Min, Max Num
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Summary{N: v.N, Median: float64(v.Median), Min: float64(v.Min), Max: float64(v.Max)}
	return nil
}

// ReadJSON reads results.json as WriteJSON wrote it.
func ReadJSON(r io.Reader) (*Results, error) {
	var res Results
	if err := json.NewDecoder(r).Decode(&res); err != nil {
		return nil, fmt.Errorf("bench: results.json: %w", err)
	}
	if res.Schema != Schema {
		return nil, fmt.Errorf("bench: results.json: schema %q, this specd reads %q", res.Schema, Schema)
	}
	return &res, nil
}

// Results are everything a sweep measured, as results.json holds them.
type Results struct {
	Schema    string           `json:"schema"`
	Machine   Machine          `json:"machine"`
	Models    Models           `json:"models"`
	Args      []string         `json:"args"` // the command line
	Settings  Settings         `json:"settings"`
	Costs     []Costs          `json:"costs"` // one per thread count
	Baselines []BaselineResult `json:"baselines"`
	Configs   []ConfigResult   `json:"configs"`
	// Drift is the largest relative deviation of a baseline measurement
	// from its median; DriftFlagged counts the pairs beyond the tolerance.
	Drift        Num       `json:"drift"`
	DriftFlagged int       `json:"drift_flagged_pairs"`
	Best         *Best     `json:"best,omitempty"`
	Timeline     *Timeline `json:"timeline,omitempty"`
	// Peers are llama.cpp's tools on the same models and prompts
	// (--peer-bin), if run.
	Peers []PeerResult `json:"peers,omitempty"`
	// Profile is --profile's: one target and one draft step, stage by
	// stage, against the machine's memory bandwidth.
	Profile *Profile `json:"profile,omitempty"`
}

// Machine is where the sweep ran.
type Machine struct {
	CPU   string   `json:"cpu"`   // lscpu's model name
	Flags []string `json:"flags"` // the CPU flags the kernels care about that it has
	CPUs  int      `json:"cpus"`
	OS    string   `json:"os"`
	Arch  string   `json:"arch"`
	Go    string   `json:"go"`
	Load  string   `json:"load,omitempty"` // /proc/loadavg at the start
}

// Models are the target and the draft model.
type Models struct {
	Target ModelInfo  `json:"target"`
	Draft  *ModelInfo `json:"draft,omitempty"`
}

// ModelInfo names a model file and its content.
type ModelInfo struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
	Params int64  `json:"params"`
	Arch   string `json:"arch"`
	Layers int    `json:"layers"`
	Dim    int    `json:"dim"`
	Vocab  int    `json:"vocab"`
}

// Settings are the sweep's fixed parameters.
type Settings struct {
	N            int       `json:"n"` // tokens per request
	Reps         int       `json:"reps"`
	Warmup       int       `json:"warmup"`
	Seed         uint64    `json:"seed"` // request i samples with seed+i
	Prompts      string    `json:"prompts"`
	PromptCount  int       `json:"prompt_count"`
	DriftTol     float64   `json:"drift_tol"`
	Synthetic    []float64 `json:"synthetic_acceptance,omitempty"`
	DraftThreads int       `json:"draft_threads"`
	PreDraft     bool      `json:"pre_draft"`
	PreDraftMin  float64   `json:"pre_draft_min"`
	VerifyBatch  int       `json:"verify_batch"`
}

// BaselineResult is one plain configuration, measured once per pair.
type BaselineResult struct {
	Point
	Label string    `json:"label"`
	TokS  []float64 `json:"tok_s_runs"` // in the order measured
	Step  []int     `json:"steps"`      // each run's place in the schedule
	// Drifted flags the runs more than the tolerance from the median.
	Drifted  []bool  `json:"drifted"`
	Summary  Summary `json:"tok_s"`
	CPUTokS  Summary `json:"tok_per_cpu_s"`
	CPUShare Num     `json:"cpu_share"`
	Worst    Num     `json:"worst_deviation"`
	// Exact compares its greedy tokens with the first greedy baseline's
	// ("yes", "no", or "n/a: sampling").
	Exact   string `json:"exact"`
	TTFTP50 Num    `json:"ttft_p50_ms"`
	ITLP50  Num    `json:"itl_p50_ms"`
	ITLP99  Num    `json:"itl_p99_ms"`
}

// ConfigResult is one speculative configuration's statistics over its
// repeats.
type ConfigResult struct {
	Point
	Label string  `json:"label"`
	Runs  int     `json:"runs"`
	TokS  Summary `json:"tok_s"`
	// BaselineTokS summarises the runs paired with it; Speedup the ratio
	// of each pair.
	BaselineTokS Summary `json:"baseline_tok_s"`
	Speedup      Summary `json:"speedup"`
	// CPUTokS is tokens per CPU-second of the process; CPUShare the CPU
	// time it got per second of wall time (near the thread count on an
	// idle machine).
	CPUTokS      Summary `json:"tok_per_cpu_s"`
	CPUShare     Num     `json:"cpu_share"`
	DriftedPairs int     `json:"drifted_pairs"`
	// Exact is "yes" when every request of every greedy run decoded the
	// plain tokens, "no" otherwise (Mismatched counts the requests),
	// "n/a: sampling" or "n/a: synthetic" where no check applies.
	Exact      string `json:"exact"`
	Mismatched int    `json:"mismatched_requests"`

	Blocks             int        `json:"blocks"` // verified blocks, over all repeats
	AcceptanceRate     Num        `json:"acceptance_rate"`
	Alpha              Num        `json:"alpha"`     // per-token MLE (Alpha)
	AlphaFit           Num        `json:"alpha_fit"` // FitDecay of PerPosition
	MeanAcceptedLength Num        `json:"mean_accepted_length"`
	MeanDrafted        Num        `json:"mean_drafted"`
	PerPosition        []Position `json:"per_position"`
	Histogram          []int      `json:"accepted_histogram"`
	// KChosen[k] counts the verified blocks whose draft length was k, over
	// all repeats: the auto policy's choices (0: a plain step), or the
	// fixed k (less where a request's end or a confidence stop cut it).
	// MeanK is their mean; Probes the auto policy's probes after choices
	// of 0; PredictedAuto its mean predicted speedup over plain decoding
	// (NaN without auto).
	KChosen       []int `json:"k_chosen"`
	MeanK         Num   `json:"mean_k"`
	Probes        int   `json:"probes"`
	PredictedAuto Num   `json:"predicted_auto"`

	TTFTP50     Num `json:"ttft_p50_ms"`
	TTFSP50     Num `json:"ttfs_p50_ms"` // time to first sentence
	TTFSReached int `json:"ttfs_requests"`
	ITLP50      Num `json:"itl_p50_ms"`
	ITLP99      Num `json:"itl_p99_ms"`
	TPOT        Num `json:"tpot_ms"`

	// Busy fractions of wall time (medians over repeats).
	DraftBusy  Num `json:"draft_busy"`
	VerifyBusy Num `json:"verify_busy"`
	Overlap    Num `json:"overlap"`

	C             Num `json:"c"`            // draft/target 1-token cost
	PassMs        Num `json:"pass_ms"`      // the target's (k+1)-token pass
	R             Num `json:"r"`            // PassMs / 1-token pass
	Predicted     Num `json:"predicted"`    // Predicted(Alpha, k, c)
	PredictedPass Num `json:"predicted_r"`  // PredictedPass(Alpha, k, c, r)
	Theory        Num `json:"theory_ratio"` // Speedup median / Predicted

	Categories []CategoryResult `json:"categories"`
}

// CategoryResult is one prompt category's share of a configuration.
type CategoryResult struct {
	Category           string `json:"category"`
	Requests           int    `json:"requests"`
	AcceptanceRate     Num    `json:"acceptance_rate"`
	Alpha              Num    `json:"alpha"`
	MeanAcceptedLength Num    `json:"mean_accepted_length"`
	TTFTP50            Num    `json:"ttft_p50_ms"`
	ReqTokS            Num    `json:"request_tok_s_p50"` // per request: generated / duration
	Speedup            Num    `json:"speedup_p50"`       // per request, over the same prompt in the paired baseline
}

// Best names the fastest configuration and the knee of its series.
type Best struct {
	Label   string  `json:"label"`
	Point   Point   `json:"point"`
	Speedup Summary `json:"speedup"`
	// Knee is the smallest k of the best configuration's series (the same
	// configuration at every k) within 5% of the series' best speedup.
	Knee        int `json:"knee_k"`
	KneeSpeedup Num `json:"knee_speedup"`
}

// WriteJSON writes r as indented JSON.
func (r *Results) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// csvHeader is results.csv's header: one row per speculative
// configuration, then one per baseline (draft "none").
var csvHeader = []string{
	"label", "draft", "k", "p_min", "adaptive", "auto", "temp", "batch", "threads", "runs",
	"tok_s", "tok_s_min", "tok_s_max", "baseline_tok_s", "speedup", "speedup_min", "speedup_max", "drifted_pairs", "tok_per_cpu_s", "cpu_share",
	"exact", "acceptance_rate", "alpha", "alpha_fit", "mean_accepted_length", "mean_drafted", "accepted_per_position", "accepted_histogram",
	"ttft_p50_ms", "ttfs_p50_ms", "itl_p50_ms", "itl_p99_ms", "tpot_ms",
	"draft_busy", "verify_busy", "overlap", "c", "pass_ms", "r", "predicted", "predicted_r",
	"k_chosen", "mean_k", "probes", "predicted_auto",
}

// WriteCSV writes one row per configuration and per baseline; lists
// (per-position rates, the histogram) are joined with ';'; what does not
// apply is empty.
func (r *Results) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	row := func(v map[string]string) error {
		out := make([]string, len(csvHeader))
		for i, h := range csvHeader {
			out[i] = v[h]
			delete(v, h)
		}
		for h := range v {
			return fmt.Errorf("bench: csv column %q is not in the header", h)
		}
		return cw.Write(out)
	}
	point := func(p Point) map[string]string {
		return map[string]string{"draft": p.Draft, "k": strconv.Itoa(p.K), "p_min": cf(Num(p.PMin)), "adaptive": strconv.FormatBool(p.Adaptive),
			"auto": strconv.FormatBool(p.Auto),
			"temp": cf(Num(p.Temp)), "batch": strconv.Itoa(p.Batch), "threads": strconv.Itoa(p.Threads)}
	}
	for _, c := range r.Configs {
		rates := make([]string, len(c.PerPosition))
		for i, p := range c.PerPosition {
			rates[i] = cf(Num(p.Rate))
		}
		hist := joinInts(c.Histogram)
		v := point(c.Point)
		for k, x := range map[string]string{
			"label": c.Label, "runs": strconv.Itoa(c.Runs),
			"tok_s": cf(Num(c.TokS.Median)), "tok_s_min": cf(Num(c.TokS.Min)), "tok_s_max": cf(Num(c.TokS.Max)),
			"baseline_tok_s": cf(Num(c.BaselineTokS.Median)),
			"speedup":        cf(Num(c.Speedup.Median)), "speedup_min": cf(Num(c.Speedup.Min)), "speedup_max": cf(Num(c.Speedup.Max)),
			"drifted_pairs": strconv.Itoa(c.DriftedPairs), "exact": c.Exact,
			"tok_per_cpu_s": cf(Num(c.CPUTokS.Median)), "cpu_share": cf(c.CPUShare),
			"acceptance_rate": cf(c.AcceptanceRate), "alpha": cf(c.Alpha), "alpha_fit": cf(c.AlphaFit),
			"mean_accepted_length": cf(c.MeanAcceptedLength), "mean_drafted": cf(c.MeanDrafted),
			"accepted_per_position": strings.Join(rates, ";"), "accepted_histogram": hist,
			"ttft_p50_ms": cf(c.TTFTP50), "ttfs_p50_ms": cf(c.TTFSP50), "itl_p50_ms": cf(c.ITLP50), "itl_p99_ms": cf(c.ITLP99), "tpot_ms": cf(c.TPOT),
			"draft_busy": cf(c.DraftBusy), "verify_busy": cf(c.VerifyBusy), "overlap": cf(c.Overlap),
			"c": cf(c.C), "pass_ms": cf(c.PassMs), "r": cf(c.R), "predicted": cf(c.Predicted), "predicted_r": cf(c.PredictedPass),
			"k_chosen": joinInts(c.KChosen), "mean_k": cf(c.MeanK), "probes": strconv.Itoa(c.Probes), "predicted_auto": cf(c.PredictedAuto),
		} {
			v[k] = x
		}
		if err := row(v); err != nil {
			return err
		}
	}
	for _, b := range r.Baselines {
		v := point(b.Point)
		v["p_min"] = ""
		for k, x := range map[string]string{
			"label": b.Label, "runs": strconv.Itoa(b.Summary.N),
			"tok_s": cf(Num(b.Summary.Median)), "tok_s_min": cf(Num(b.Summary.Min)), "tok_s_max": cf(Num(b.Summary.Max)),
			"baseline_tok_s": cf(Num(b.Summary.Median)), "speedup": "1", "drifted_pairs": strconv.Itoa(countTrue(b.Drifted)),
			"tok_per_cpu_s": cf(Num(b.CPUTokS.Median)), "cpu_share": cf(b.CPUShare),
			"exact": b.Exact, "ttft_p50_ms": cf(b.TTFTP50), "itl_p50_ms": cf(b.ITLP50), "itl_p99_ms": cf(b.ITLP99),
		} {
			v[k] = x
		}
		if err := row(v); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// cf formats a CSV number: up to 6 significant digits, empty if not
// finite.
func cf(n Num) string {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return ""
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

// joinInts joins vs with ';', as results.csv writes lists.
func joinInts(vs []int) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ";")
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
