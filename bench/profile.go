package bench

// --profile: where one target step and one draft step spend their time,
// stage by stage (model.State.SetProfile), with the bytes each stage
// reads from memory and the bandwidth that achieves against the
// machine's measured copy and triad bandwidth.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/model"
	"github.com/specd-dev/specd/sample"
)

// Profile is what --profile measured.
type Profile struct {
	Bandwidth Bandwidth     `json:"bandwidth"`
	Steps     []StepProfile `json:"steps"` // the target's, then the draft's
	// PlainStepMs is the time per token of one plain decoding run at
	// batch 1 through the pipeline (every prompt, greedy, one thread),
	// prefill left out: (wall − prefill busy) / tokens. PlainVerifyMs is
	// the part of it the verify stage computed (forward passes and
	// sampling). The rest, beyond the profiled step, is pipeline
	// overhead.
	PlainStepMs   Num `json:"plain_step_ms"`
	PlainVerifyMs Num `json:"plain_verify_ms"`
}

// Bandwidth is the machine's memory bandwidth on one core, measured on
// arrays well beyond the last-level cache: the best of several rounds.
type Bandwidth struct {
	ArrayBytes int64 `json:"array_bytes"` // bytes per array
	CopyGBs    Num   `json:"copy_gb_s"`   // copy(dst, src): bytes read + written per second
	TriadGBs   Num   `json:"triad_gb_s"`  // a[i] = b[i] + s·c[i] on float64: 3 arrays' bytes per second
	ReadGBs    Num   `json:"read_gb_s"`   // a sum over one array
}

// Peak is the largest of copy, triad and read: the bandwidth the stages
// are compared with.
func (b Bandwidth) Peak() float64 {
	return max(float64(b.CopyGBs), float64(b.TriadGBs), float64(b.ReadGBs))
}

// StepProfile is one model's 1-token forward pass at a given context
// length, stage by stage (medians over rounds), and a sampling step.
type StepProfile struct {
	Model     string   `json:"model"` // "target" or "draft"
	Name      string   `json:"name"`
	Pos       int      `json:"pos"` // positions in the cache the token attends to
	Threads   int      `json:"threads"`
	Rounds    int      `json:"rounds"`
	Ops       []OpTime `json:"ops"`
	ForwardMs Num      `json:"forward_ms"` // median wall time of the whole Forward
	// GreedyMs and SampleMs: choosing a token from the logits, greedy
	// and at temperature 0.8 (medians).
	GreedyMs Num `json:"greedy_ms"`
	SampleMs Num `json:"sample_ms"`
	// Bytes are the weight and KV-cache bytes one step reads.
	Bytes int64 `json:"bytes"`
	GBs   Num   `json:"gb_s"` // Bytes / ForwardMs
}

// OpTime is one stage of a step.
type OpTime struct {
	Op    string `json:"op"`
	Ms    Num    `json:"ms"`
	Share Num    `json:"share"` // of the sum of the stages
	Bytes int64  `json:"bytes"` // weights (and KV for attention) read; 0 where not counted
	GBs   Num    `json:"gb_s"`  // Bytes / Ms
}

// MeasureBandwidth runs the copy, triad and read probes on arrays of n
// bytes (each beyond the last-level cache), best of rounds.
func MeasureBandwidth(n, rounds int) Bandwidth {
	bw := Bandwidth{ArrayBytes: int64(n)}
	src, dst := make([]byte, n), make([]byte, n)
	for i := range src {
		src[i] = byte(i)
	}
	f := n / 8
	a, b, c := make([]float64, f), make([]float64, f), make([]float64, f)
	for i := range b {
		b[i], c[i] = float64(i), float64(2*i)
	}
	best := func(bytes int, run func()) Num {
		var top float64
		for range rounds {
			t0 := time.Now()
			run()
			if s := time.Since(t0).Seconds(); s > 0 {
				top = max(top, float64(bytes)/s/1e9)
			}
		}
		return Num(top)
	}
	bw.CopyGBs = best(2*n, func() { copy(dst, src) })
	bw.TriadGBs = best(3*8*f, func() { triad(a, b, c, 3) })
	var sink float64
	bw.ReadGBs = best(8*f, func() { sink += sum(b) })
	if sink < 0 {
		bw.ReadGBs = 0 // never: keeps the sum from being optimised away
	}
	return bw
}

func triad(a, b, c []float64, s float64) {
	b, c = b[:len(a)], c[:len(a)]
	for i := range a {
		a[i] = b[i] + s*c[i]
	}
}

// sum reads xs with four independent accumulators.
func sum(xs []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(xs); i += 4 {
		s0 += xs[i]
		s1 += xs[i+1]
		s2 += xs[i+2]
		s3 += xs[i+3]
	}
	for ; i < len(xs); i++ {
		s0 += xs[i]
	}
	return s0 + s1 + s2 + s3
}

// Profile is --profile: the machine's bandwidth (arrays of 64 MiB), then
// one target and one draft step at the middle of a typical request (as
// Costs), 32 rounds.
func (r *EngineRunner) Profile(ctx context.Context) (*Profile, error) {
	p := &Profile{Bandwidth: MeasureBandwidth(64<<20, 5)}
	var err error
	if p.Steps, err = ProfileEngine(ctx, r.e, r.maxPrompt+r.n/2, 32); err != nil {
		return nil, err
	}
	s, err := r.Run(ctx, Point{Draft: DraftNone, Batch: 1, Threads: 1}, false)
	if err != nil {
		return nil, fmt.Errorf("bench: profile: plain run: %w", err)
	}
	if s.Generated > 0 {
		p.PlainStepMs = Num(msf(s.Wall-s.PrefillBusy) / float64(s.Generated))
		p.PlainVerifyMs = Num(msf(s.VerifyBusy) / float64(s.Generated))
	}
	return p, nil
}

// ProfileEngine profiles one 1-token step of e's target and of its draft
// model (if any) on one thread, the cache filled to pos positions, over
// rounds rounds (after 3 warm-up rounds).
func ProfileEngine(ctx context.Context, e *engine.Engine, pos, rounds int) ([]StepProfile, error) {
	if rounds < 1 || pos < 1 {
		return nil, fmt.Errorf("%w: profile: needs a round and a position", ErrRunner)
	}
	pos = min(pos, e.CtxLen()-2)
	var out []StepProfile
	for _, mm := range []struct {
		role, name string
		m          *model.Model
	}{{"target", e.TargetName, e.Target}, {"draft", e.DraftName, e.Draft}} {
		if mm.m == nil {
			continue
		}
		sp, err := profileModel(ctx, e, mm.m, pos, rounds)
		if err != nil {
			return nil, fmt.Errorf("bench: profile %s: %w", mm.role, err)
		}
		sp.Model, sp.Name = mm.role, mm.name
		out = append(out, sp)
	}
	return out, nil
}

func profileModel(ctx context.Context, e *engine.Engine, m *model.Model, pos, rounds int) (StepProfile, error) {
	const fillBatch, warm = 32, 3
	kv, err := e.Cache(m, 1, pos+2, fillBatch, 0)
	if err != nil {
		return StepProfile{}, err
	}
	fill, st := m.NewState(fillBatch, nil), m.NewState(1, nil)
	b := backend.NewBatch(fillBatch)
	for p := 0; p < pos; p += fillBatch {
		b.Reset()
		for i := p; i < min(p+fillBatch, pos); i++ {
			b.Add(int32(1+i%97), int32(i), 0, false)
		}
		if err := fill.Forward(&b, kv, nil); err != nil {
			return StepProfile{}, err
		}
	}
	one := backend.NewBatch(1)
	one.Add(5, int32(pos), 0, true)
	lg := make([]float32, m.Config.Vocab)
	ops := make([][]float64, model.NumOps)
	var fwd, greedy, samp []float64
	var prof model.Profile
	st.SetProfile(&prof)
	smp := sample.New(sample.Params{Temp: 0.8, Seed: 1})
	for r := range rounds + warm {
		if err := ctx.Err(); err != nil {
			return StepProfile{}, err
		}
		if err := kv.Rollback(0, pos); err != nil {
			return StepProfile{}, err
		}
		prof = model.Profile{}
		t0 := time.Now()
		if err := st.Forward(&one, kv, lg); err != nil {
			return StepProfile{}, err
		}
		d := time.Since(t0)
		t1 := time.Now()
		sample.Greedy(lg)
		t2 := time.Now()
		smp.Sample(lg)
		t3 := time.Now()
		if r < warm {
			continue
		}
		fwd, greedy, samp = append(fwd, msf(d)), append(greedy, msf(t2.Sub(t1))), append(samp, msf(t3.Sub(t2)))
		for op := range model.NumOps {
			ops[op] = append(ops[op], msf(prof[op]))
		}
	}
	c := m.Config
	sp := StepProfile{Pos: pos, Threads: 1, Rounds: rounds, ForwardMs: Num(Quantile(fwd, 0.5)),
		GreedyMs: Num(Quantile(greedy, 0.5)), SampleMs: Num(Quantile(samp, 0.5))}
	bytes := weightBytes(m)
	elem := int64(2)
	if kv.IsF32() {
		elem = 4
	}
	bytes[model.OpAttention] = int64(c.Layers) * int64(c.KVHeads) * int64(pos) * int64(c.HeadDim) * 2 * elem
	var total float64
	for op := range model.NumOps {
		total += Quantile(ops[op], 0.5)
	}
	for op := range model.NumOps {
		t := Quantile(ops[op], 0.5)
		o := OpTime{Op: op.String(), Ms: Num(t), Share: Num(t / total), Bytes: bytes[op], GBs: Num(nan)}
		if bytes[op] > 0 && t > 0 {
			o.GBs = Num(float64(bytes[op]) / (t / 1e3) / 1e9)
		}
		sp.Bytes += bytes[op]
		sp.Ops = append(sp.Ops, o)
	}
	sp.GBs = Num(float64(sp.Bytes) / (float64(sp.ForwardMs) / 1e3) / 1e9)
	return sp, nil
}

func msf(d time.Duration) float64 { return float64(d) / 1e6 }

// weightBytes are the bytes of the weight matrices each stage reads for
// one token (the embedding: one row).
func weightBytes(m *model.Model) [model.NumOps]int64 {
	var b [model.NumOps]int64
	tied := true
	for _, t := range m.File.Tensors {
		n := int64(len(t.Data))
		name := t.Name
		switch {
		case name == "output.weight":
			b[model.OpOutput] += n
			tied = false
		case name == "token_embd.weight":
			if len(t.Dims) == 2 && t.Dims[1] > 0 {
				b[model.OpEmbed] += n / int64(t.Dims[1])
			}
		case strings.HasSuffix(name, "attn_q.weight"), strings.HasSuffix(name, "attn_k.weight"), strings.HasSuffix(name, "attn_v.weight"):
			b[model.OpQKV] += n
		case strings.HasSuffix(name, "attn_output.weight"):
			b[model.OpAttnOut] += n
		case strings.HasSuffix(name, "ffn_gate.weight"), strings.HasSuffix(name, "ffn_up.weight"):
			b[model.OpGateUp] += n
		case strings.HasSuffix(name, "ffn_down.weight"):
			b[model.OpDown] += n
		case strings.HasSuffix(name, "norm.weight"):
			b[model.OpNorm] += n
		}
	}
	if tied {
		for _, t := range m.File.Tensors {
			if t.Name == "token_embd.weight" {
				b[model.OpOutput] += int64(len(t.Data))
			}
		}
	}
	return b
}

// writeProfile writes the --profile tables into a report.
func (r *Results) writeProfile(b *strings.Builder) {
	p := r.Profile
	bw := p.Bandwidth
	fmt.Fprintf(b, "\n## Profile of one step\n\nOne 1-token forward pass of each model on one thread with %d positions in the cache, stage by stage (`model.State.SetProfile`; medians over %d rounds after 3 warm-up rounds), the bytes each stage reads (weights; the KV cache for attention) and the bandwidth that is (a model that fits the last-level cache can exceed the memory's). The machine's one-core memory bandwidth, best of 5 rounds on %d MiB arrays (beyond the last-level cache): copy %s GB/s (read + write), triad %s GB/s, read %s GB/s; \"of peak\" is against the largest, %.1f GB/s.\n\n",
		p.Steps[0].Pos, p.Steps[0].Rounds, bw.ArrayBytes>>20, fd(bw.CopyGBs, 1), fd(bw.TriadGBs, 1), fd(bw.ReadGBs, 1), bw.Peak())
	b.WriteString("| stage |")
	for _, s := range p.Steps {
		fmt.Fprintf(b, " %s ms | share | MB read | GB/s | of peak |", s.Model)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|---|---|---|---|", len(p.Steps)) + "\n")
	row := func(name string, cell func(s StepProfile) [5]string) {
		fmt.Fprintf(b, "| %s |", name)
		for _, s := range p.Steps {
			c := cell(s)
			fmt.Fprintf(b, " %s | %s | %s | %s | %s |", c[0], c[1], c[2], c[3], c[4])
		}
		b.WriteString("\n")
	}
	mb := func(n int64) string {
		if n == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f", float64(n)/1e6)
	}
	ofPeak := func(g Num) string {
		if bw.Peak() <= 0 {
			return "–"
		}
		return pct(Num(float64(g) / bw.Peak()))
	}
	for i := range int(model.NumOps) {
		row(model.Op(i).String(), func(s StepProfile) [5]string {
			o := s.Ops[i]
			return [5]string{fd(o.Ms, 3), pct(o.Share), mb(o.Bytes), fd(o.GBs, 1), ofPeak(o.GBs)}
		})
	}
	row("**forward pass**", func(s StepProfile) [5]string {
		return [5]string{fd(s.ForwardMs, 3), "", mb(s.Bytes), fd(s.GBs, 1), ofPeak(s.GBs)}
	})
	row("sampling: greedy / temperature 0.8", func(s StepProfile) [5]string {
		return [5]string{fd(s.GreedyMs, 3) + " / " + fd(s.SampleMs, 3), "", "", "", ""}
	})
	if step := float64(p.PlainStepMs); step > 0 {
		t := p.Steps[0]
		over := step - float64(t.ForwardMs) - float64(t.GreedyMs)
		fmt.Fprintf(b, "\nPipeline overhead: one plain decoding run at batch 1 (greedy, every prompt) right after the rounds above took %.3f ms a token through the pipeline, prefill left out, of which the verify stage computed %.3f ms; the profiled forward pass and a greedy choice take %.3f ms, which leaves **%.3f ms (%.0f%%) a token** for the pipeline's handoffs, detokenizing and streaming (and any difference in contention between the two measurements).\n",
			step, float64(p.PlainVerifyMs), float64(t.ForwardMs)+float64(t.GreedyMs), over, 100*over/step)
	}
}
