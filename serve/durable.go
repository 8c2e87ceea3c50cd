package serve

// Durable intake (--durable): generate requests from the JetStream
// work-queue stream api.DurableStream through the shared durable consumer
// api.DurableConsumer. A worker pulls only as many requests as it has free
// slots, tells JetStream it is still working (InProgress) while it
// generates, and acks after the final message: a worker that dies
// mid-request leaves its message unacknowledged, and JetStream redelivers
// it to another worker after the ack wait (the new stream carries a
// higher Specd-Attempt). Publishers deduplicate with Nats-Msg-Id. Session
// token and speech subjects are kept in api.SessionStream for replay.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/specd-dev/specd/api"
)

// durable is the pull loop of durable intake.
type durable struct {
	s        *Server
	cons     jetstream.Consumer
	cancel   context.CancelFunc
	done     chan struct{}
	inflight atomic.Int64
	freed    chan struct{} // capacity 1: a durable request finished
	stopOnce sync.Once
}

// durableJob is one durable request's JetStream message.
type durableJob struct {
	d        *durable
	msg      jetstream.Msg
	attempt  int
	lastBeat time.Time
	every    time.Duration
	acked    bool
}

// keepAlive tells JetStream the request is still being worked on (at most
// every third of the ack wait). A nil job does nothing.
func (j *durableJob) keepAlive() {
	if j == nil || time.Since(j.lastBeat) < j.every {
		return
	}
	j.lastBeat = time.Now()
	_ = j.msg.InProgress()
}

// retry reports whether a request that ended with err should go to
// another worker instead (this one is shutting down or lost NATS): the
// message is then nak'ed and no final message is published.
func (j *durableJob) retry(err error) bool {
	if j == nil || !(errors.Is(err, ErrShutdown) || errors.Is(err, ErrOutage)) {
		return false
	}
	_ = j.msg.Nak()
	j.release()
	return true
}

// ack acknowledges the request after its final message.
func (j *durableJob) ack() {
	if j == nil {
		return
	}
	_ = j.msg.Ack()
	j.release()
}

func (j *durableJob) release() {
	if j.acked {
		return
	}
	j.acked = true
	j.d.inflight.Add(-1)
	signal(j.d.freed)
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// startDurable creates the streams and the consumer (if missing) and
// starts pulling.
func startDurable(s *Server) (*durable, error) {
	js, err := jetstream.New(s.nc)
	if err != nil {
		return nil, fmt.Errorf("serve: --durable: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: api.DurableStream, Subjects: []string{api.SubjectDurable},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		Duplicates: 2 * time.Minute, Description: "specd durable generate requests",
	}); err != nil {
		return nil, fmt.Errorf("serve: --durable: stream %s (does the NATS deployment have JetStream?): %w", api.DurableStream, err)
	}
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: api.SessionStream,
		Subjects: []string{api.SubjectSessionPrefix + "*." + api.SessionTokens,
			api.SubjectSessionPrefix + "*." + api.SessionSpeech},
		Storage: jetstream.FileStorage, MaxAge: s.cfg.TokenStreamAge,
		Description: "specd session token streams, kept for replay",
	}); err != nil {
		return nil, fmt.Errorf("serve: --durable: stream %s: %w", api.SessionStream, err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, api.DurableStream, jetstream.ConsumerConfig{
		Durable: api.DurableConsumer, AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: s.cfg.AckWait, MaxAckPending: s.cfg.MaxAckPending,
		Description: "specd workers: each pulls as many requests as it has free slots",
	})
	if err != nil {
		return nil, fmt.Errorf("serve: --durable: consumer %s: %w", api.DurableConsumer, err)
	}
	lctx, lcancel := context.WithCancel(context.Background())
	d := &durable{s: s, cons: cons, cancel: lcancel, done: make(chan struct{}), freed: make(chan struct{}, 1)}
	go d.loop(lctx)
	return d, nil
}

// stop ends the pull loop and waits for it (requests taken still run).
// A nil durable does nothing.
func (d *durable) stop() {
	if d == nil {
		return
	}
	d.stopOnce.Do(func() {
		d.cancel()
		<-d.done
	})
}

// loop pulls requests while there are free slots.
func (d *durable) loop(ctx context.Context) {
	defer close(d.done)
	slots := d.s.p.Slots()
	for ctx.Err() == nil {
		// Free slots: not taken by any request, durable or not.
		free := slots - d.s.p.Active() - d.s.p.Queued()
		if free <= 0 {
			t := time.NewTimer(250 * time.Millisecond) // core requests free slots without a signal
			select {
			case <-d.freed:
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
			continue
		}
		batch, err := d.cons.Fetch(free, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			if ctx.Err() == nil {
				d.s.log.Warn().Err(err).Msg("durable fetch")
				select { // back off: NATS may be reconnecting
				case <-time.After(time.Second):
				case <-ctx.Done():
				}
			}
			continue
		}
		for m := range batch.Messages() {
			d.take(m)
		}
	}
}

// take admits one durable request.
func (d *durable) take(m jetstream.Msg) {
	s := d.s
	job := &durableJob{d: d, msg: m, attempt: 1, every: max(s.cfg.AckWait/3, 100*time.Millisecond), lastBeat: time.Now()}
	if md, err := m.Metadata(); err == nil {
		job.attempt = int(md.NumDelivered)
	}
	d.inflight.Add(1)
	reply := m.Headers().Get(api.HeaderReplyTo)
	r, err := api.DecodeRequest(m.Data())
	if err == nil {
		err = r.Validate(s.limits())
	}
	if r.ID == "" {
		r.ID = m.Headers().Get(nats.MsgIdHdr)
	}
	if err == nil {
		_, err = s.admit(r, admitOpts{reply: reply, job: job})
	}
	if err == nil {
		return
	}
	code := codeOf(err)
	if code == api.CodeUnavailable || code == api.CodeConflict {
		// Busy here, or already running here: let JetStream try later.
		_ = m.NakWithDelay(time.Second)
		job.release()
		return
	}
	s.log.Info().Str("id", r.ID).Int("code", code).Err(err).Msg("durable request refused")
	if reply != "" {
		g := &gen{id: r.ID, job: job}
		h := s.header(g, 1, api.StatusError)
		s.publish(reply, h, errorMsg(h, r.ID, err))
		s.publish(reply, nil, nil)
	}
	_ = m.Term() // a bad request never succeeds: do not redeliver it
	job.release()
}
