package serve

// Prometheus metrics, named as vLLM's and llama.cpp's so that existing
// dashboards work (specd: in place of vllm:), for NATS and HTTP requests
// alike. Counters of the pipeline are read from its own figures at scrape
// time; latencies are observed as requests stream.

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/specd-dev/specd/stages"
)

// metrics are one server's Prometheus metrics.
type metrics struct {
	reg                     *prometheus.Registry
	ttft, itl, e2e, queue   prometheus.Observer
	promptTokens            prometheus.Counter
	requestsByCode          *prometheus.CounterVec
	model                   string
	snapshot                func() stages.Snapshot
	running, waiting, slots func() int
	busy                    func() (draft, verify, prefill, overlap time.Duration)
}

func newMetrics(s *Server) *metrics {
	model := s.modelID
	labels := prometheus.Labels{"model_name": model}
	hist := func(name, help string, buckets []float64) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets, ConstLabels: labels})
	}
	lat := []float64{.001, .0025, .005, .01, .02, .04, .06, .08, .1, .25, .5, .75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
	m := &metrics{reg: prometheus.NewRegistry(), model: model,
		snapshot: func() stages.Snapshot { return s.p.Metrics().Snapshot() },
		running:  s.p.Active, waiting: s.p.Queued, slots: s.p.Slots, busy: s.p.Busy}
	ttft := hist("specd:time_to_first_token_seconds", "Time from arrival to the first token.", lat)
	itl := hist("specd:inter_token_latency_seconds", "Time between tokens (a block's wait spread over its tokens).", lat)
	e2e := hist("specd:e2e_request_latency_seconds", "Time from arrival to the final message.", []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320})
	queue := hist("specd:request_queue_time_seconds", "Time a request waited for a slot.", lat)
	m.ttft, m.itl, m.e2e, m.queue = ttft, itl, e2e, queue
	m.promptTokens = prometheus.NewCounter(prometheus.CounterOpts{Name: "specd:prompt_tokens_total", Help: "Prompt tokens of finished requests.", ConstLabels: labels})
	m.requestsByCode = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "specd:request_success_total", Help: "Finished requests by finish reason (length, stop, error).", ConstLabels: labels}, []string{"finished_reason"})
	m.reg.MustRegister(ttft, itl, e2e, queue, m.promptTokens, m.requestsByCode, m,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

var (
	descDrafts      = desc("specd:spec_decode_num_drafts_total", "Verification steps with draft tokens.")
	descDraftTokens = desc("specd:spec_decode_num_draft_tokens_total", "Draft tokens proposed.")
	descAccepted    = desc("specd:spec_decode_num_accepted_tokens_total", "Draft tokens the target accepted.")
	descPerPos      = desc("specd:spec_decode_num_accepted_tokens_per_pos_total", "Drafts whose token at this position was accepted.", "position")
	descGenerated   = desc("specd:generation_tokens_total", "Tokens generated.")
	descRequests    = desc("specd:num_requests_total", "Requests finished (failed ones too).")
	descFailed      = desc("specd:num_requests_failed_total", "Requests that ended with an error.")
	descRunning     = desc("specd:num_requests_running", "Requests holding a sequence slot.")
	descWaiting     = desc("specd:num_requests_waiting", "Requests waiting for a slot.")
	descKV          = desc("specd:kv_cache_usage_perc", "Fraction of KV cache slots in use (0 to 1).")
	descDraftBusy   = desc("specd:draft_busy_seconds_total", "Time the draft stage computed.")
	descVerifyBusy  = desc("specd:verify_busy_seconds_total", "Time the verify stage computed.")
	descPrefillBusy = desc("specd:prefill_busy_seconds_total", "Time the prefill stage computed or waited for the target.")
	descOverlap     = desc("specd:draft_verify_overlap_seconds_total", "Time draft and verify computed at once.")
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append(labels, "model_name"), nil)
}

// Describe implements prometheus.Collector.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDrafts, descDraftTokens, descAccepted, descPerPos, descGenerated, descRequests,
		descFailed, descRunning, descWaiting, descKV, descDraftBusy, descVerifyBusy, descPrefillBusy, descOverlap} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: the pipeline's figures now.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	s := m.snapshot()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, append(labels, m.model)...)
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, m.model)
	}
	counter(descDrafts, float64(s.Drafts))
	counter(descDraftTokens, float64(s.DraftTokens))
	counter(descAccepted, float64(s.Accepted))
	for i, n := range s.AcceptedAt {
		counter(descPerPos, float64(n), strconv.Itoa(i))
	}
	counter(descGenerated, float64(s.Generated))
	counter(descRequests, float64(s.Requests))
	counter(descFailed, float64(s.Failed))
	running := m.running()
	gauge(descRunning, float64(running))
	gauge(descWaiting, float64(m.waiting()))
	gauge(descKV, float64(running)/float64(max(m.slots(), 1)))
	d, v, p, o := m.busy()
	counter(descDraftBusy, d.Seconds())
	counter(descVerifyBusy, v.Seconds())
	counter(descPrefillBusy, p.Seconds())
	counter(descOverlap, o.Seconds())
}

// block observes a block of n tokens that arrived gap after the previous
// one (or, for the first, after the request's arrival: its TTFT).
func (m *metrics) block(first bool, gap time.Duration, n int) {
	if first {
		m.ttft.Observe(gap.Seconds())
		n-- // the first token's latency is the TTFT
		if n <= 0 {
			return
		}
	}
	per := gap.Seconds() / float64(max(n, 1))
	for range n {
		m.itl.Observe(per)
	}
}

// finish observes a finished request.
func (m *metrics) finish(prompt int, reason string, st *stages.RequestStats, e2e time.Duration) {
	m.e2e.Observe(e2e.Seconds())
	if st != nil {
		m.queue.Observe(st.Queue.Seconds())
	}
	m.promptTokens.Add(float64(prompt))
	m.requestsByCode.WithLabelValues(reason).Inc()
}
