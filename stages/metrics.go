package stages

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// RequestStats are one request's speculative-decoding figures.
type RequestStats struct {
	Steps       int   // verification passes
	Drafts      int   // steps with at least one draft token
	DraftTokens int   // draft tokens proposed
	Accepted    int   // draft tokens accepted
	AcceptedAt  []int // AcceptedAt[i]: drafts whose token i was accepted
	Generated   int   // tokens published

	// KChosen[k] counts the steps whose draft length was k: the policy's
	// choice, after the request's cap and the tokens still wanted (a
	// model draft may stop before it). Of them, AutoSteps were chosen by
	// the auto policy (Probes of those were probes after choices of 0),
	// whose predicted speedups over plain decoding sum to PredictedSum.
	KChosen      []int
	AutoSteps    int
	Probes       int
	PredictedSum float64

	Queue    time.Duration // submission to admission (waiting for a slot)
	TTFT     time.Duration // submission to first token
	ITLSum   time.Duration // sum of gaps between blocks after the first
	Duration time.Duration // admission to final chunk
}

// MeanAcceptedLength is 1 + accepted/drafts: tokens committed per draft.
func (s *RequestStats) MeanAcceptedLength() float64 {
	if s.Drafts == 0 {
		return 1
	}
	return 1 + float64(s.Accepted)/float64(s.Drafts)
}

// PredictedSpeedup is the mean predicted speedup of the auto policy's
// choices over plain decoding (1 without auto steps).
func (s *RequestStats) PredictedSpeedup() float64 { return predicted(s.PredictedSum, s.AutoSteps) }

func predicted(sum float64, n int) float64 {
	if n == 0 {
		return 1
	}
	return sum / float64(n)
}

// ITL is the mean inter-token latency after the first token.
func (s *RequestStats) ITL() time.Duration {
	if s.Generated <= 1 {
		return 0
	}
	return s.ITLSum / time.Duration(s.Generated-1)
}

// Metrics are a pipeline's global figures. Methods are safe for
// concurrent use.
type Metrics struct {
	mu sync.Mutex
	m  Snapshot
}

// Snapshot is a copy of the global metrics.
type Snapshot struct {
	Requests, Failed int
	Steps            int   // blocks verified
	Passes           int   // target forward passes in verify
	PassTokens       int   // tokens in those passes
	Drafts           int   // blocks with draft tokens
	FullAccepts      int   // drafts accepted in full
	PreDrafts        int   // pre-drafts made (Config.PreDraft)
	PreDraftHits     int   // pre-drafts used as the next draft
	DraftTokens      int   // draft tokens proposed
	Accepted         int   // draft tokens accepted
	AcceptedAt       []int // per draft position
	Generated        int   // tokens published

	// KChosen, AutoSteps, Probes and PredictedSum: as in RequestStats,
	// over every block verified.
	KChosen      []int
	AutoSteps    int
	Probes       int
	PredictedSum float64

	TTFTSum time.Duration // over requests
	TTFTN   int
	ITLSum  time.Duration // gaps between a request's blocks after its first
	ITLN    int           // tokens those gaps delivered

	// Wall is the pipeline's run time; DraftBusy and VerifyBusy the time
	// those stages computed (lock waits excluded); PrefillBusy includes
	// waiting for the target device; Overlap is the time draft and verify
	// computed at once.
	Wall, DraftBusy, VerifyBusy, PrefillBusy, Overlap time.Duration
}

func newMetrics(k int) *Metrics {
	return &Metrics{m: Snapshot{AcceptedAt: make([]int, k), KChosen: make([]int, k+1)}}
}

// Snapshot returns a copy of the metrics.
func (m *Metrics) Snapshot() Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.m
	s.AcceptedAt = append([]int(nil), m.m.AcceptedAt...)
	s.KChosen = append([]int(nil), m.m.KChosen...)
	return s
}

func (m *Metrics) block(k, accepted int, c *stepChoice) {
	m.mu.Lock()
	m.m.Steps++
	if c.k < len(m.m.KChosen) {
		m.m.KChosen[c.k]++
	}
	if c.auto {
		m.m.AutoSteps++
		m.m.PredictedSum += c.speedup
		if c.probe {
			m.m.Probes++
		}
	}
	if k > 0 {
		m.m.Drafts++
		m.m.DraftTokens += k
		m.m.Accepted += accepted
		if accepted == k {
			m.m.FullAccepts++
		}
		for i := 0; i < accepted && i < len(m.m.AcceptedAt); i++ {
			m.m.AcceptedAt[i]++
		}
	}
	m.mu.Unlock()
}

func (m *Metrics) preDraft(hit bool) {
	m.mu.Lock()
	if hit {
		m.m.PreDraftHits++
	} else {
		m.m.PreDrafts++
	}
	m.mu.Unlock()
}

func (m *Metrics) batch(seqs, tokens int) {
	m.mu.Lock()
	m.m.Passes++
	m.m.PassTokens += tokens
	m.mu.Unlock()
}

func (m *Metrics) tokens(n int, first bool, sinceStart time.Duration) {
	m.mu.Lock()
	m.m.Generated += n
	if first {
		m.m.TTFTSum += sinceStart
		m.m.TTFTN++
	}
	m.mu.Unlock()
}

func (m *Metrics) finish(failed bool, st *RequestStats) {
	m.mu.Lock()
	m.m.Requests++
	if st.Generated > 1 {
		m.m.ITLSum += st.ITLSum
		m.m.ITLN += st.Generated - 1
	}
	if failed {
		m.m.Failed++
	}
	m.mu.Unlock()
}

func (m *Metrics) setBusy(draft, verify, prefill time.Duration) {
	m.mu.Lock()
	m.m.DraftBusy, m.m.VerifyBusy, m.m.PrefillBusy = draft, verify, prefill
	m.mu.Unlock()
}

func (m *Metrics) setWall(wall, overlap time.Duration) {
	m.mu.Lock()
	m.m.Wall, m.m.Overlap = wall, overlap
	m.mu.Unlock()
}

// Acceptance is accepted/draft tokens (α per draft token).
func (s Snapshot) Acceptance() float64 {
	if s.DraftTokens == 0 {
		return 0
	}
	return float64(s.Accepted) / float64(s.DraftTokens)
}

// MeanAcceptedLength is 1 + accepted/drafts.
func (s Snapshot) MeanAcceptedLength() float64 {
	if s.Drafts == 0 {
		return 1
	}
	return 1 + float64(s.Accepted)/float64(s.Drafts)
}

// PredictedSpeedup is the mean predicted speedup of the auto policy's
// choices over plain decoding (1 without auto steps).
func (s Snapshot) PredictedSpeedup() float64 { return predicted(s.PredictedSum, s.AutoSteps) }

// PreDraftBound is the most wall time pre-drafting could save: drafting
// step n+1 while step n verifies only helps when step n is accepted in
// full, so at best it hides the draft time of those steps.
func (s Snapshot) PreDraftBound() time.Duration {
	if s.Drafts == 0 {
		return 0
	}
	return time.Duration(float64(s.DraftBusy) * float64(s.FullAccepts) / float64(s.Drafts))
}

// Write prints the metrics as a few lines of text.
func (s Snapshot) Write(w io.Writer) {
	fmt.Fprintf(w, "requests %d (failed %d), generated %d tokens in %v (%.1f tok/s)\n",
		s.Requests, s.Failed, s.Generated, s.Wall.Round(time.Millisecond), float64(s.Generated)/max(s.Wall.Seconds(), 1e-9))
	fmt.Fprintf(w, "steps %d, drafts %d (%d accepted in full), draft tokens %d, accepted %d (%.1f%%), mean accepted length %.2f\n",
		s.Steps, s.Drafts, s.FullAccepts, s.DraftTokens, s.Accepted, 100*s.Acceptance(), s.MeanAcceptedLength())
	if len(s.AcceptedAt) > 0 && s.Drafts > 0 {
		fmt.Fprint(w, "accepted per draft position:")
		for i, n := range s.AcceptedAt {
			fmt.Fprintf(w, " %d:%.2f", i+1, float64(n)/float64(s.Drafts))
		}
		fmt.Fprintln(w)
	}
	writeKChosen(w, s.KChosen, s.Steps, s.AutoSteps, s.Probes, s.PredictedSpeedup())
	ttft := time.Duration(0)
	if s.TTFTN > 0 {
		ttft = s.TTFTSum / time.Duration(s.TTFTN)
	}
	itl := time.Duration(0)
	if s.ITLN > 0 {
		itl = s.ITLSum / time.Duration(s.ITLN)
	}
	fmt.Fprintf(w, "verify passes %d (%.1f tokens each), mean TTFT %v, mean inter-token latency %v\n",
		s.Passes, float64(s.PassTokens)/max(float64(s.Passes), 1), ttft.Round(time.Microsecond), itl.Round(time.Microsecond))
	if s.PreDrafts > 0 {
		fmt.Fprintf(w, "pre-drafts %d, used %d\n", s.PreDrafts, s.PreDraftHits)
	}
	fmt.Fprintf(w, "busy: draft %v, verify %v, prefill %v, draft∥verify overlap %v\n",
		s.DraftBusy.Round(time.Millisecond), s.VerifyBusy.Round(time.Millisecond),
		s.PrefillBusy.Round(time.Millisecond), s.Overlap.Round(time.Millisecond))
}

// writeKChosen prints the histogram of draft lengths chosen, as shares of
// the steps, and what the auto policy predicted, on one line; nothing
// when every step drafted the same k by a fixed policy.
func writeKChosen(w io.Writer, hist []int, steps, auto, probes int, speedup float64) {
	used := 0
	for _, n := range hist {
		if n > 0 {
			used++
		}
	}
	if steps == 0 || (used <= 1 && auto == 0) {
		return
	}
	fmt.Fprint(w, "k chosen:")
	for k, n := range hist {
		if n > 0 {
			fmt.Fprintf(w, " %d:%.0f%%", k, 100*float64(n)/float64(steps))
		}
	}
	if auto > 0 {
		fmt.Fprintf(w, " (auto: predicted speedup %.2f× over plain decoding, %d probes)", speedup, probes)
	}
	fmt.Fprintln(w)
}

// overlap measures the time two activities (draft 0, verify 1) are busy at
// once.
type overlap struct {
	mu     sync.Mutex
	active [2]bool
	since  time.Time
	total  time.Duration
}

func (o *overlap) enter(i int) { o.set(i, true) }
func (o *overlap) leave(i int) { o.set(i, false) }

func (o *overlap) set(i int, on bool) {
	o.mu.Lock()
	now := time.Now()
	if o.active[0] && o.active[1] {
		o.total += now.Sub(o.since)
	}
	o.active[i] = on
	o.since = now
	o.mu.Unlock()
}

func (o *overlap) both() time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.total
}
