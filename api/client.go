package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/synadia-io/orbit.go/natsext"
)

// Reply is one parsed reply message.
type Reply struct {
	RequestID string
	Session   string
	Seq       int
	Status    string   // StatusToken or StatusDone (errors are yielded as *ServiceError)
	Chunk     Chunk    // StatusToken
	Summary   *Summary // StatusDone
	Accepted  int      // draft tokens of this block the target accepted
	Drafted   int      // draft tokens of this block
	Attempt   int      // delivery of a durable request (0 otherwise)
	// StreamSeq is the message's sequence in SessionStream (Replay only):
	// replay from StreamSeq+1 to go on after it.
	StreamSeq uint64
}

// StatusRestart is yielded by GenerateDurable when another worker took
// over a durable request: the replies before it are void.
const StatusRestart = "restart"

// ServiceError is an error reply of the service.
type ServiceError struct {
	RequestID string
	Code      int
	Message   string
}

func (e *ServiceError) Error() string {
	return fmt.Sprintf("specd: %d %s", e.Code, e.Message)
}

// Errors of a reply stream that ended wrongly.
var (
	ErrIncomplete = errors.New("specd: the reply stream ended before its final message")
	ErrGap        = errors.New("specd: gap in the reply stream")
)

// ParseReply parses a reply message. An error reply is returned as a
// *ServiceError; the empty end-of-stream message as a Reply with no
// Status.
func ParseReply(m *nats.Msg) (Reply, error) {
	r := Reply{Status: Status(m), Seq: Seq(m)}
	if m.Header != nil {
		r.RequestID = m.Header.Get(HeaderRequestID)
		r.Session = m.Header.Get(HeaderSession)
		r.Accepted, _ = strconv.Atoi(m.Header.Get(HeaderAccepted))
		r.Drafted, _ = strconv.Atoi(m.Header.Get(HeaderDrafted))
		r.Attempt, _ = strconv.Atoi(m.Header.Get(HeaderAttempt))
	}
	switch {
	case r.Status == StatusError || (m.Header != nil && m.Header.Get(HeaderError) != ""):
		e := &ServiceError{RequestID: r.RequestID, Message: m.Header.Get(HeaderError)}
		e.Code, _ = strconv.Atoi(m.Header.Get(HeaderErrorCode))
		var body ErrorBody
		if json.Unmarshal(m.Data, &body) == nil && body.Error != "" {
			e.Message = body.Error
		}
		return r, e
	case r.Status == StatusToken:
		if err := json.Unmarshal(m.Data, &r.Chunk); err != nil {
			return r, fmt.Errorf("specd: bad token message: %w", err)
		}
	case r.Status == StatusDone:
		r.Summary = new(Summary)
		if err := json.Unmarshal(m.Data, r.Summary); err != nil {
			return r, fmt.Errorf("specd: bad done message: %w", err)
		}
	}
	return r, nil
}

// DefaultTimeout bounds a Generate whose context has no deadline.
const DefaultTimeout = 10 * time.Minute

// Generate sends req to SubjectGenerate and returns its reply stream:
// every token reply in order, then the done reply; an error reply, a gap
// or a stream that ends early is yielded as an error and ends it. If the
// caller stops early, Generate cancels the request on the server. A
// request without ID gets one (so that it can be cancelled).
func Generate(ctx context.Context, nc *nats.Conn, req Request) (iter.Seq2[Reply, error], error) {
	if req.ID == "" {
		req.ID = nuid.Next()
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var cancel context.CancelFunc = func() {}
	if _, ok := ctx.Deadline(); !ok {
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
	}
	msgs, err := natsext.RequestMany(ctx, nc, SubjectGenerate, body, natsext.RequestManySentinel(natsext.DefaultSentinel))
	if err != nil {
		cancel()
		return nil, err
	}
	return func(yield func(Reply, error) bool) {
		defer cancel()
		finished := false
		defer func() {
			if !finished {
				_ = nc.Publish(CancelSubject(req.ID), nil)
			}
		}()
		next := 1
		for m, err := range msgs {
			if err != nil {
				yield(Reply{}, err)
				return
			}
			r, err := ParseReply(m)
			if err != nil {
				finished = true
				yield(r, err)
				return
			}
			if r.Seq != next {
				yield(r, fmt.Errorf("%w: message %d where %d was due", ErrGap, r.Seq, next))
				return
			}
			next++
			finished = r.Status == StatusDone
			if !yield(r, nil) || finished {
				return
			}
		}
		if err := ctx.Err(); err != nil {
			yield(Reply{}, fmt.Errorf("%w: %w", ErrIncomplete, err))
			return
		}
		yield(Reply{}, ErrIncomplete)
	}, nil
}

// GenerateDurable sends req through the JetStream work queue of specd
// serve --durable, deduplicated by its ID (made if empty), and returns its
// reply stream as Generate does. If the worker dies mid-request, another
// takes it over: GenerateDurable then yields a Reply with StatusRestart
// and the new attempt's stream from Seq 1.
func GenerateDurable(ctx context.Context, nc *nats.Conn, req Request) (iter.Seq2[Reply, error], error) {
	if req.ID == "" {
		req.ID = nuid.Next()
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	inbox := nc.NewRespInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return nil, err
	}
	msg := &nats.Msg{Subject: SubjectDurable, Data: body, Header: nats.Header{
		nats.MsgIdHdr: {req.ID}, HeaderReplyTo: {inbox}}}
	if _, err := js.PublishMsg(ctx, msg); err != nil {
		sub.Unsubscribe()
		return nil, fmt.Errorf("specd: durable request %s: %w", req.ID, err)
	}
	var cancel context.CancelFunc = func() {}
	if _, ok := ctx.Deadline(); !ok {
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
	}
	return func(yield func(Reply, error) bool) {
		defer cancel()
		defer sub.Unsubscribe()
		attempt, next := 0, 1
		for {
			m, err := sub.NextMsgWithContext(ctx)
			if err != nil {
				yield(Reply{}, fmt.Errorf("%w: %w", ErrIncomplete, err))
				return
			}
			if Status(m) == "" && len(m.Data) == 0 {
				continue // end of an attempt's stream; done or error came first
			}
			r, rerr := ParseReply(m)
			switch {
			case r.Attempt < attempt:
				continue // late message of a worker that gave up
			case r.Attempt > attempt:
				if attempt > 0 && !yield(Reply{RequestID: r.RequestID, Status: StatusRestart, Attempt: r.Attempt}, nil) {
					return
				}
				attempt, next = r.Attempt, 1
			}
			if rerr != nil {
				yield(r, rerr)
				return
			}
			if r.Seq != next {
				yield(r, fmt.Errorf("%w: message %d where %d was due", ErrGap, r.Seq, next))
				return
			}
			next++
			if !yield(r, nil) || r.Status == StatusDone {
				return
			}
		}
	}, nil
}

// Session is one conversation on the session subjects.
type Session struct {
	nc *nats.Conn
	ID string
}

// NewSession returns the session sid on nc.
func NewSession(nc *nats.Conn, sid string) (*Session, error) {
	if !ValidToken(sid) {
		return nil, fmt.Errorf("specd: session id %q: must be 1-128 bytes without dots, wildcards or white space", sid)
	}
	return &Session{nc: nc, ID: sid}, nil
}

// Post sends a prompt to the session (fire and forget); the answer comes
// on the tokens and speech subjects.
func (s *Session) Post(req Request) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	return s.nc.Publish(SessionSubject(s.ID, SessionPrompt), body)
}

// PostText sends plain text as the session's next user turn.
func (s *Session) PostText(text string) error {
	return s.nc.Publish(SessionSubject(s.ID, SessionPrompt), []byte(text))
}

// Cancel stops the session's generation at once (barge-in).
func (s *Session) Cancel() error {
	return s.nc.Publish(SessionSubject(s.ID, SessionCancel), nil)
}

// Listen subscribes to the session's kind (SessionTokens or SessionSpeech)
// and yields every reply until ctx ends (not an error) or the caller
// stops. Error replies are yielded as *ServiceError and listening goes
// on. The subscription is made before Listen returns, so nothing posted
// after it is missed.
func (s *Session) Listen(ctx context.Context, kind string) (iter.Seq2[Reply, error], error) {
	sub, err := s.nc.SubscribeSync(SessionSubject(s.ID, kind))
	if err != nil {
		return nil, err
	}
	if err := s.nc.Flush(); err != nil {
		sub.Unsubscribe()
		return nil, err
	}
	return func(yield func(Reply, error) bool) {
		defer sub.Unsubscribe()
		for {
			m, err := sub.NextMsgWithContext(ctx)
			if err != nil {
				if ctx.Err() == nil {
					yield(Reply{}, err)
				}
				return
			}
			if len(m.Data) == 0 && Status(m) == "" {
				continue // end of one generation's stream
			}
			if !yield(ParseReply(m)) {
				return
			}
		}
	}, nil
}

// Replay yields the session's kind (SessionTokens or SessionSpeech)
// messages kept in SessionStream (specd serve --durable) from stream
// sequence from (1: the oldest kept), then the live ones, until ctx ends
// (not an error) or the caller stops. A subscriber that reconnects
// replays from the StreamSeq after the last Reply it saw.
func (s *Session) Replay(ctx context.Context, kind string, from uint64) (iter.Seq2[Reply, error], error) {
	js, err := jetstream.New(s.nc)
	if err != nil {
		return nil, err
	}
	cons, err := js.OrderedConsumer(ctx, SessionStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{SessionSubject(s.ID, kind)},
		DeliverPolicy:  jetstream.DeliverByStartSequencePolicy, OptStartSeq: max(from, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("specd: replay of session %s: %w", s.ID, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, err
	}
	return func(yield func(Reply, error) bool) {
		defer it.Stop()
		stop := context.AfterFunc(ctx, it.Stop)
		defer stop()
		for {
			m, err := it.Next()
			if err != nil {
				if ctx.Err() == nil {
					yield(Reply{}, err)
				}
				return
			}
			if len(m.Data()) == 0 && m.Headers().Get(HeaderStatus) == "" {
				continue // end of one generation's stream
			}
			r, err := ParseReply(&nats.Msg{Subject: m.Subject(), Header: m.Headers(), Data: m.Data()})
			if md, merr := m.Metadata(); merr == nil {
				r.StreamSeq = md.Sequence.Stream
			}
			if !yield(r, err) {
				return
			}
		}
	}, nil
}
