package stages

import (
	"context"
	"strings"
	"time"

	"github.com/specd-dev/specd/graph"
)

// acceptStage commits each verified block, publishes it as a chunk and
// sends the sequence back to draft (finished or not).
func (p *Pipeline) acceptStage(ctx context.Context, st *graph.Stage, in, loop *graph.Pipe[*seq], chunks *graph.Pipe[Chunk]) error {
	for {
		s, ok, err := in.Recv(ctx)
		if err != nil || !ok {
			return err
		}
		if !s.done {
			var c Chunk
			st.AddBusy(p.serialize(func() { c = p.accept(s) }))
			if len(c.Tokens) > 0 {
				if err := chunks.Send(ctx, c); err != nil {
					return err
				}
			}
		}
		if s.done {
			if err := p.final(ctx, s, chunks); err != nil {
				return err
			}
		}
		if err := loop.Send(ctx, s); err != nil {
			return err
		}
	}
}

// accept commits the block's tokens and returns its chunk.
func (p *Pipeline) accept(s *seq) Chunk {
	b := &s.block
	now := time.Now()
	k := len(b.Draft)
	if k > 0 {
		s.stats.Drafts++
		s.stats.DraftTokens += k
		s.stats.Accepted += b.Accepted
		for i := 0; i < b.Accepted; i++ {
			s.stats.AcceptedAt[i]++
		}
		s.policy.Update(k, b.Accepted)
		s.auto.Update(k, b.Accepted)
	}
	s.stats.Steps++
	p.metrics.block(k, b.Accepted, &s.step)
	c := Chunk{ID: s.req.ID, key: s.key, stream: s.stream, Drafted: k}
	draftLen := -1 // bytes of text from accepted draft tokens, once known
	for i, t := range b.Tokens {
		if i == b.Accepted {
			draftLen = len(c.Text) // the tokens before came from the draft
		}
		if s.gen >= s.req.MaxTokens {
			s.done, s.reason = true, "length"
			break
		}
		if p.cfg.Stop != nil && p.cfg.Stop(t) {
			s.done, s.reason = true, "stop"
			break
		}
		s.tokens = append(s.tokens, t)
		s.gen++
		c.Tokens = append(c.Tokens, t)
		if s.dec != nil && s.text(&c, s.dec.Add(t)) {
			s.done, s.reason, s.stopString = true, "stop", true
			break
		}
	}
	// The block may have been cut (a stop, the length) before the target's
	// own token: then every token emitted came from the draft.
	c.Accepted = min(b.Accepted, len(c.Tokens))
	if draftLen < 0 {
		draftLen = len(c.Text)
	}
	c.DraftLen = draftLen
	if !s.done && (s.gen >= s.req.MaxTokens || len(s.tokens) > p.cfg.MaxPos) {
		// Enough tokens, or the context is full: every position holds a
		// token and the last token, sampled from position MaxPos-1's
		// logits, is emitted too (as plain decoding does); the next block
		// would need position MaxPos.
		s.done, s.reason = true, "length"
	}
	if len(c.Tokens) > 0 {
		c.Seq = s.chunks
		s.chunks++
		if s.stats.Generated == 0 {
			s.stats.TTFT = now.Sub(s.start)
		} else {
			// Inter-token latency: the block's wait spread over its tokens.
			s.stats.ITLSum += now.Sub(s.lastToken)
		}
		s.stats.Generated += len(c.Tokens)
		s.lastToken = now
		p.metrics.tokens(len(c.Tokens), s.stats.Generated == len(c.Tokens), now.Sub(s.start))
	}
	if s.ctx.Err() != nil && !s.done {
		s.fail(context.Cause(s.ctx))
	}
	return c
}

// text adds the text t of one token to the chunk c, holding back what may
// begin one of the request's stop strings. It reports whether a stop
// string is complete: c.Text then ends before it.
func (s *seq) text(c *Chunk, t string) bool {
	stops := s.req.Stop
	if len(stops) == 0 {
		c.Text += t
		return false
	}
	s.held += t
	cut, keep := -1, 0
	for _, st := range stops {
		if st == "" {
			continue
		}
		if i := strings.Index(s.held, st); i >= 0 && (cut < 0 || i < cut) {
			cut = i
		}
		// The longest end of held that st begins with.
		for n := min(len(st)-1, len(s.held)); n > keep; n-- {
			if strings.HasSuffix(s.held, st[:n]) {
				keep = n
				break
			}
		}
	}
	if cut >= 0 {
		c.Text += s.held[:cut]
		s.held = ""
		return true
	}
	c.Text += s.held[:len(s.held)-keep]
	s.held = s.held[len(s.held)-keep:]
	return false
}

// final publishes the last chunk of s: what text it still holds back,
// unless a stop string ended it.
func (p *Pipeline) final(ctx context.Context, s *seq, chunks *graph.Pipe[Chunk]) error {
	c := Chunk{ID: s.req.ID, key: s.key, Seq: s.chunks, Final: true, Reason: s.reason, Err: s.err, stream: s.stream, PromptTokens: s.nPrompt}
	if s.dec != nil && !s.stopString {
		c.Text = s.held + s.dec.Flush()
	}
	s.held = ""
	s.chunks++
	s.stats.Duration = time.Since(s.start)
	st := s.stats
	c.Stats = &st
	p.metrics.finish(s.err != nil, &st)
	return chunks.Send(ctx, c)
}
