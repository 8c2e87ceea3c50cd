package serve

// Sessions: a conversation per session id. Prompts arrive on
// specd.v1.session.<sid>.prompt (a queue group: one worker takes each),
// every generation streams to .tokens and, cut for text-to-speech, to
// .speech; .cancel interrupts (barge-in), and so does a new prompt.

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"

	"github.com/specd-dev/specd/api"
)

// session is one conversation. Its fields are guarded by Server.mu.
type session struct {
	id      string
	history []api.Message
	running *gen // the generation in progress, if any
	turns   int  // prompts taken, to order them
	last    time.Time
	// settled is closed when the latest turn has ended and recorded its
	// history (nil before the first turn); the next turn waits for it.
	settled chan struct{}
}

// sessionID is the <sid> of specd.v1.session.<sid>.<kind>.
func sessionID(subject string) string {
	rest := strings.TrimPrefix(subject, api.SubjectSessionPrefix)
	sid, _, _ := strings.Cut(rest, ".")
	return sid
}

// parseSessionPrompt reads a session prompt: a JSON request, or plain
// UTF-8 text (the user's turn).
func parseSessionPrompt(data []byte, l api.Limits) (api.Request, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		r, err := api.DecodeRequest(data)
		if err == nil {
			err = r.Validate(l)
		}
		return r, err
	}
	switch {
	case len(data) > api.MaxBodyBytes:
		return api.Request{}, reqErr(api.CodeBadRequest, "prompt of %d bytes is over the limit of %d", len(data), api.MaxBodyBytes)
	case !utf8.Valid(data):
		return api.Request{}, reqErr(api.CodeBadRequest, "prompt is not valid UTF-8")
	case len(trimmed) == 0:
		return api.Request{}, reqErr(api.CodeBadRequest, "empty prompt")
	}
	return api.Request{Prompt: string(data)}, nil
}

// handleSessionPrompt takes a session's next prompt. The turn runs in its
// own goroutine: it first interrupts and waits out the session's running
// generation, so the history stays in order.
func (s *Server) handleSessionPrompt(m *nats.Msg) {
	sid := sessionID(m.Subject)
	r, err := parseSessionPrompt(m.Data, s.limits())
	if err == nil && !api.ValidToken(sid) {
		err = reqErr(api.CodeBadRequest, "session id %q is not valid", sid)
	}
	if err != nil {
		s.sessionError(sid, m.Reply, r.ID, err)
		return
	}
	turn := r.Messages
	if r.Prompt != "" {
		turn = []api.Message{{Role: "user", Content: r.Prompt}}
	}
	s.mu.Lock()
	sess, err := s.sessionLocked(sid)
	if err != nil {
		s.mu.Unlock()
		s.sessionError(sid, m.Reply, r.ID, err)
		return
	}
	sess.turns++
	myTurn := sess.turns
	prev := sess.running
	wait, settled := sess.settled, make(chan struct{})
	sess.settled = settled
	s.mu.Unlock()
	if prev != nil {
		prev.stream.Cancel(ErrBargeIn)
	}
	s.pumps.Go(func() { s.sessionTurn(sess, myTurn, wait, settled, r, turn, m.Reply) })
}

// sessionTurn runs one turn of sess once the turn before it has settled
// (wait closed, if not nil): its generation ended and its history is
// recorded. Waiting for the generation alone is not enough: its done
// message goes out before its turn records the history, so a prompt sent
// on seeing it could read the history without that turn. sessionTurn
// closes settled when it returns.
func (s *Server) sessionTurn(sess *session, turn int, wait <-chan struct{}, settled chan<- struct{}, r api.Request, msgs []api.Message, reply string) {
	defer close(settled)
	if wait != nil {
		<-wait // a running generation was cancelled: ends within one decoding step
	}
	s.mu.Lock()
	if sess.turns != turn { // a later prompt interrupted this one before it began
		s.mu.Unlock()
		return
	}
	conv := append(append([]api.Message(nil), sess.history...), msgs...)
	s.mu.Unlock()
	text, err := s.cfg.Render(conv)
	if err != nil {
		s.sessionError(sess.id, reply, r.ID, reqErr(api.CodeBadRequest, "messages: %v", err))
		return
	}
	r.Messages, r.Prompt = nil, ""
	g, err := s.admit(r, admitOpts{session: sess, text: text})
	if err != nil {
		s.sessionError(sess.id, reply, r.ID, err)
		return
	}
	s.mu.Lock()
	sess.running, sess.last = g, time.Now()
	late := sess.turns != turn // interrupted while it was being admitted
	s.mu.Unlock()
	if late {
		g.stream.Cancel(ErrBargeIn)
	}
	if reply != "" {
		_ = s.nc.Publish(reply, []byte(`{"id":`+strconv.Quote(g.id)+`,"session":`+strconv.Quote(sess.id)+`}`))
	}
	<-g.done
	s.mu.Lock()
	sess.history = append(conv, api.Message{Role: "assistant", Content: g.text.String()})
	if sess.running == g {
		sess.running = nil
	}
	sess.last = time.Now()
	s.mu.Unlock()
}

// sessionLocked returns session sid, making it if new; at the bound it
// forgets the least recently used idle session. s.mu is held.
func (s *Server) sessionLocked(sid string) (*session, error) {
	if sess := s.sessions[sid]; sess != nil {
		sess.last = time.Now()
		return sess, nil
	}
	if len(s.sessions) >= s.cfg.MaxSessions {
		var lru *session
		for _, x := range s.sessions {
			if x.running == nil && (lru == nil || x.last.Before(lru.last)) {
				lru = x
			}
		}
		if lru == nil {
			return nil, reqErr(api.CodeTooMany, "too many sessions: %d are generating", len(s.sessions))
		}
		delete(s.sessions, lru.id)
	}
	sess := &session{id: sid, last: time.Now()}
	s.sessions[sid] = sess
	return sess, nil
}

// sessionError reports a failed session prompt on the session's tokens
// subject (and to the prompt's reply subject, if it had one).
func (s *Server) sessionError(sid, reply, id string, err error) {
	code := codeOf(err)
	s.log.Info().Str("session", sid).Int("code", code).Err(err).Msg("session prompt refused")
	h := nats.Header{api.HeaderSession: {sid}, api.HeaderSeq: {"1"}}
	if id != "" {
		h[api.HeaderRequestID] = []string{id}
	}
	body := errorMsg(h, id, err)
	if api.ValidToken(sid) {
		s.publish(api.SessionSubject(sid, api.SessionTokens), h, body)
		s.publish(api.SessionSubject(sid, api.SessionTokens), nil, nil)
	}
	if reply != "" {
		s.publish(reply, h, body)
	}
}

// handleSessionCancel serves specd.v1.session.<sid>.cancel (barge-in).
func (s *Server) handleSessionCancel(m *nats.Msg) {
	sid := sessionID(m.Subject)
	s.mu.Lock()
	var g *gen
	if sess := s.sessions[sid]; sess != nil {
		g = sess.running
		sess.turns++ // a turn still waiting to start is dropped too
	}
	s.mu.Unlock()
	if g == nil {
		return
	}
	g.stream.Cancel(ErrBargeIn)
	s.log.Info().Str("session", sid).Str("id", g.id).Msg("barge-in")
	if m.Reply != "" {
		_ = m.Respond([]byte(`{"cancelled":true,"id":` + strconv.Quote(g.id) + `}`))
	}
}

// sweepSessions forgets idle sessions until ctx ends.
func (s *Server) sweepSessions(ctx context.Context) {
	t := time.NewTicker(min(s.cfg.SessionIdle/4, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			s.mu.Lock()
			for id, sess := range s.sessions {
				if sess.running == nil && now.Sub(sess.last) > s.cfg.SessionIdle {
					delete(s.sessions, id)
				}
			}
			s.mu.Unlock()
		}
	}
}

// speechCutter cuts streamed text for text-to-speech: after a sentence
// end (. ! ? …) or a line break, and after a clause end (, ; :) once the
// segment is at least minClause bytes long. A mark counts only when white
// space follows it ("3.14" and "e.g.x" are not cut). The segments
// concatenate to the text exactly.
type speechCutter struct {
	buf []byte
}

const minClause = 24

func (c *speechCutter) add(text string) []string {
	c.buf = append(c.buf, text...)
	var out []string
	start := 0
	for i := 0; i < len(c.buf); i++ {
		b := c.buf[i]
		cut := -1
		switch {
		case b == '\n':
			cut = i + 1
		case b == '.' || b == '!' || b == '?' || b == ',' || b == ';' || b == ':':
			if i+1 >= len(c.buf) {
				break // the next byte decides
			}
			if n := c.buf[i+1]; n == ' ' || n == '\n' || n == '\t' || n == '\r' {
				clause := b == ',' || b == ';' || b == ':'
				if !clause || i+1-start >= minClause {
					cut = i + 1
				}
			}
		case b == 0xE2 && i+2 < len(c.buf) && c.buf[i+1] == 0x80 && c.buf[i+2] == 0xA6: // …
			cut = i + 3
		}
		if cut > start {
			out = append(out, string(c.buf[start:cut]))
			start = cut
		}
	}
	c.buf = append(c.buf[:0], c.buf[start:]...)
	return out
}

// flush returns what is left (text without final punctuation).
func (c *speechCutter) flush() string {
	s := string(c.buf)
	c.buf = c.buf[:0]
	return s
}
