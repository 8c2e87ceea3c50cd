package main

// Speculative decoding from the command line: generate with a draft,
// through the stages pipeline the engine builds, and the helpers that run
// requests through a pipeline (also used by specbench).

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/stages"
)

// openSpec opens the engine of o.eng (checking the speculative flags when
// a draft is given), names the models on stderr and returns the prompt ids
// of o.
func openSpec(o generateOpts, stderr io.Writer) (*engine.Engine, []int32, error) {
	e, err := engine.Open(o.eng)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintln(stderr, e.ModelsLine())
	printAutoLine(stderr, o.eng)
	prompt, err := promptIDs(e, o)
	if err != nil {
		e.Close()
		return nil, nil, err
	}
	o.log.Debug().Str("target", e.TargetName).Str("draft", e.DraftName).Bool("speculative", e.Options().Speculative()).
		Int("prompt_tokens", len(prompt)).Bool("chat", o.chat).Strs("stop", o.stops).Uint64("seed", o.params.Seed).Msg("generate")
	return e, prompt, nil
}

// generateSpec is specd generate with a draft: the completion streams to
// stdout block by block, statistics go to stderr.
func generateSpec(ctx context.Context, o generateOpts, stdout, stderr io.Writer) error {
	e, prompt, err := openSpec(o, stderr)
	if err != nil {
		return err
	}
	defer e.Close()
	if _, tokErr := e.Tokenizer(); !o.ids && tokErr != nil {
		return fmt.Errorf("cannot print text: %w (use --ids)", tokErr)
	}
	s := e.Options()
	ctxLen := o.ctx
	if ctxLen == 0 {
		ctxLen = e.CtxLen()
	}
	if len(prompt) >= ctxLen {
		return fmt.Errorf("prompt of %d tokens does not fit the context of %d (see --ctx)", len(prompt), ctxLen)
	}
	// Plain decoding's count at a full context: a token for each free
	// position, and the one sampled from the last position's logits.
	maxPos := min(ctxLen, len(prompt)+o.n+s.K+1)
	cfg, err := e.PipelineConfig(1, maxPos, min(o.batch, len(prompt)))
	if err != nil {
		return err
	}
	if o.ids {
		cfg.NewDetokenizer = nil
	}
	p, err := stages.New(cfg)
	if err != nil {
		return err
	}
	req := stages.Request{ID: "cli", PromptIDs: prompt, MaxTokens: min(o.n, maxPos-len(prompt)+1),
		Params: o.params, Stop: o.stops}
	var out []string // the ids with --ids
	if o.echo {
		if out, err = echoPrompt(stdout, e, prompt, o.ids); err != nil {
			return err
		}
	}
	if o.n == 0 {
		fmt.Fprintln(stdout, strings.Join(out, " "))
		fmt.Fprintln(stderr, finishLine("length", 0, 0, ""))
		return nil
	}
	final, ids, err := runOne(ctx, p, req, func(c stages.Chunk) error {
		if o.ids {
			return nil
		}
		_, err := io.WriteString(stdout, c.Text)
		return err
	})
	if err != nil {
		return err
	}
	if o.ids {
		for _, t := range ids {
			out = append(out, strconv.Itoa(int(t)))
		}
		fmt.Fprintln(stdout, strings.Join(out, " "))
	} else {
		fmt.Fprintln(stdout)
	}
	if final.Err != nil {
		return final.Err
	}
	if o.stats {
		if s.Speculative() {
			fmt.Fprintf(stderr, "speculative: draft %s, k %s, shared embeddings %v\n", s.Draft, kFlag{&s}, e.Shared)
		}
		p.Metrics().Snapshot().Write(stderr) // tokens, tok/s, TTFT and ITL among them
	}
	var hit string
	if final.Reason == "stop" && len(o.stops) > 0 {
		hit = stopHit(e, ids, o.stops)
	}
	fmt.Fprintln(stderr, finishLine(final.Reason, len(ids), o.n, hit))
	if st := final.Stats; st != nil {
		o.log.Debug().Int("tokens", st.Generated).Str("reason", final.Reason).Str("stop", hit).Dur("duration", st.Duration).
			Dur("ttft", st.TTFT).Int("draft_tokens", st.DraftTokens).Int("accepted", st.Accepted).Msg("done")
	}
	if o.memStats {
		var emb []byte
		if e.Draft != nil && e.Draft != e.Target {
			if ti, ok := e.Draft.File.Tensor("token_embd.weight"); ok {
				emb = ti.Data
			}
		}
		memReport(stderr, emb)
	}
	return nil
}

// runOne runs a pipeline for one request, calling onChunk for each
// non-final chunk, and returns the final chunk and all tokens.
func runOne(ctx context.Context, p *stages.Pipeline, req stages.Request, onChunk func(stages.Chunk) error) (stages.Chunk, []int32, error) {
	res, err := runMany(ctx, p, []stages.Request{req}, onChunk)
	if err != nil {
		return stages.Chunk{}, nil, err
	}
	return res[0].final, res[0].tokens, nil
}

type runResult struct {
	final  stages.Chunk
	tokens []int32
}

// runMany serves reqs through p and collects each request's tokens and
// final chunk, in request order.
func runMany(ctx context.Context, p *stages.Pipeline, reqs []stages.Request, onChunk func(stages.Chunk) error) ([]runResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := make(chan stages.Request, len(reqs))
	for _, r := range reqs {
		in <- r
	}
	close(in)
	out := make(chan stages.Chunk, 64)
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, in, out) }()
	idx := map[string]int{}
	for i, r := range reqs {
		idx[r.ID] = i
	}
	res := make([]runResult, len(reqs))
	take := func(c stages.Chunk) error {
		r := &res[idx[c.ID]]
		r.tokens = append(r.tokens, c.Tokens...)
		if c.Final {
			r.final = c
		}
		if onChunk != nil {
			return onChunk(c)
		}
		return nil
	}
	for {
		select {
		case c := <-out:
			if err := take(c); err != nil {
				return nil, err
			}
		case err := <-done:
			for len(out) > 0 {
				if err := take(<-out); err != nil {
					return nil, err
				}
			}
			return res, err
		}
	}
}

// printAutoLine says, under -k auto, that the draft length is chosen each
// step and that the target's passes are timed before the first one (the
// policy's calibration: a short wait before the first token).
func printAutoLine(w io.Writer, o engine.Options) {
	if o.Auto && o.Speculative() {
		fmt.Fprintf(w, "draft length: auto, 0–%d tokens a step from measured costs; timing the target's passes first\n", o.K)
	}
}
