package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/tokenizer"
)

// generate is plain decoding: one token per forward pass of one model.
func generate(ctx context.Context, o generateOpts, stdout, stderr io.Writer) error {
	o.eng.Draft = engine.DraftNone // not the bundled draft by default
	e, prompt, err := openSpec(o, stderr)
	if err != nil {
		return err
	}
	defer e.Close()
	m := e.Target
	tok, tokErr := e.Tokenizer()
	c := m.Config
	if !o.ids && tokErr != nil {
		return fmt.Errorf("cannot print text: %w (use --ids)", tokErr)
	}

	ctxLen := o.ctx
	if ctxLen == 0 {
		ctxLen = c.CtxLen
	}
	if len(prompt) >= ctxLen {
		return fmt.Errorf("prompt of %d tokens does not fit the context of %d (see --ctx)", len(prompt), ctxLen)
	}
	maxPos := min(ctxLen, len(prompt)+o.n)
	var out []string // the ids with --ids
	if o.echo {
		if out, err = echoPrompt(stdout, e, prompt, o.ids); err != nil {
			return err
		}
	}
	var txt *stopText
	if !o.ids {
		dec := tok.NewDecoder()
		dec.SetStripLeadingSpace(false) // the completion continues the prompt
		txt = &stopText{dec: dec, stops: o.stops, w: stdout}
	}
	var (
		gen  int
		stop string
	)
	// The plain loop: prefill in chunks of at most --batch tokens, then
	// one token per forward pass.
	ps, err := e.Plain(ctx, prompt, o.n, maxPos, o.batch, o.eng.Threads, o.params, func(next int32) (bool, error) {
		if tokErr == nil && tok.IsEOG(next) {
			stop = "end of generation"
			return false, nil
		}
		gen++
		if o.ids {
			out = append(out, strconv.Itoa(int(next)))
			return true, nil
		}
		done, err := txt.add(next)
		return !done, err
	})
	if err != nil {
		return err
	}
	if ps.Full {
		stop = "context full"
	}
	prefill, decode, decoded := ps.Prefill, ps.Decode, ps.Passes
	if o.ids {
		fmt.Fprintln(stdout, strings.Join(out, " "))
	} else if err := txt.flush(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "prefill: %d tokens, %.1f tok/s\n", len(prompt), rate(len(prompt), prefill))
	fmt.Fprintf(stderr, "decode: %d tokens, %.1f tok/s\n", decoded, rate(decoded, decode))
	var hit string
	if txt != nil {
		hit = txt.hit
	}
	fmt.Fprintln(stderr, finishLine(stop, gen, o.n, hit))
	o.log.Debug().Int("tokens", gen).Str("reason", stop).Str("stop", hit).Dur("prefill", prefill).Dur("decode", decode).Msg("done")
	if o.memStats {
		memReport(stderr, nil)
	}
	return nil
}

// stopText writes decoded text to w, holding back what may begin one of
// stops, and ends at the first stop string (not written).
type stopText struct {
	dec   *tokenizer.Decoder
	stops []string
	w     io.Writer
	held  string
	hit   string // the stop string that ended the text
}

// add decodes id and writes what is certain; it reports whether a stop
// string is complete.
func (s *stopText) add(id int32) (bool, error) {
	s.held += s.dec.Add(id)
	if s.hit = stopMatch(s.held, s.stops); s.hit != "" {
		_, err := io.WriteString(s.w, s.held[:strings.Index(s.held, s.hit)])
		s.held = ""
		return true, err
	}
	keep := 0 // the longest end of held that a stop string begins with
	for _, st := range s.stops {
		for n := min(len(st)-1, len(s.held)); n > keep; n-- {
			if strings.HasSuffix(s.held, st[:n]) {
				keep = n
				break
			}
		}
	}
	_, err := io.WriteString(s.w, s.held[:len(s.held)-keep])
	s.held = s.held[len(s.held)-keep:]
	return false, err
}

// flush writes what is held back (unless a stop string ended the text)
// and a newline.
func (s *stopText) flush() error {
	text := ""
	if s.hit == "" {
		text = s.held + s.dec.Flush()
	}
	_, err := fmt.Fprintln(s.w, text)
	return err
}

func rate(n int, d time.Duration) float64 {
	if n == 0 || d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}
