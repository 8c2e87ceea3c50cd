// Package api is specd's wire protocol, version 1: subject names, header
// names, the request and reply bodies, their validation, and a small Go
// client. The server (package serve) and every Go consumer share it.
//
// One generation is a request on SubjectGenerate answered by a stream of
// messages to the request's reply subject: one per verified block
// (status "token", body Chunk), then one "done" (body Summary) or "error"
// (micro error headers and an ErrorBody), then an empty end-of-stream
// message, so that request-many clients stop cleanly. Every message but
// the empty one carries HeaderRequestID and HeaderSeq (1, 2, 3…, gapless).
//
// docs/protocol.md describes it for people, with JSON schemas and a
// session driven by the nats command-line tool.
package api

import (
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// Subjects and service identity.
const (
	// ServiceName is the micro service's name ($SRV.PING.specd …).
	ServiceName = "specd"
	// ServiceVersion is the micro service's version (semantic versioning).
	ServiceVersion = "1.0.0"
	// QueueGroup is the queue group of the generate endpoint and of
	// session prompts: N workers share the load.
	QueueGroup = "specd"

	// SubjectGenerate takes a Request and streams the reply.
	SubjectGenerate = "specd.v1.generate"
	// SubjectCancelPrefix + request id cancels that generation.
	SubjectCancelPrefix = "specd.v1.cancel."
	// SubjectSessionPrefix + session id + "." + a Session* kind.
	SubjectSessionPrefix = "specd.v1.session."

	// SubjectDurable takes a Request (with HeaderReplyTo) into the
	// JetStream work queue DurableStream (specd serve --durable).
	SubjectDurable = "specd.v1.durable.generate"
	// DurableStream is the work-queue stream of durable requests, and
	// DurableConsumer the durable consumer the workers share.
	DurableStream   = "SPECD_REQUESTS"
	DurableConsumer = "specd-workers"
	// SessionStream keeps session token and speech streams for replay.
	SessionStream = "SPECD_SESSIONS"
)

// Session subject kinds: specd.v1.session.<sid>.<kind>.
const (
	SessionPrompt = "prompt" // fire and forget: a Request or plain UTF-8 text
	SessionTokens = "tokens" // every generation of the session, as on SubjectGenerate
	SessionSpeech = "speech" // the same text cut at sentence and clause ends
	SessionCancel = "cancel" // barge-in: stop the session's generation now
)

// Headers of every reply message.
const (
	HeaderRequestID = "Specd-Request-Id"
	HeaderSession   = "Specd-Session" // on session messages
	HeaderSeq       = "Specd-Seq"     // 1, 2, 3… per request, gapless
	HeaderStatus    = "Specd-Status"  // StatusToken, StatusDone or StatusError
	HeaderAccepted  = "Specd-Accepted"
	HeaderDrafted   = "Specd-Drafted"
	// HeaderReplyTo carries the reply subject of a durable request (a
	// JetStream message has none of its own); HeaderAttempt numbers the
	// deliveries of a durable request: a higher one restarts the stream.
	HeaderReplyTo = "Specd-Reply-To"
	HeaderAttempt = "Specd-Attempt"

	// The micro framework's error headers, on StatusError messages.
	HeaderError     = "Nats-Service-Error"
	HeaderErrorCode = "Nats-Service-Error-Code"
)

// Reply statuses.
const (
	StatusToken = "token"
	StatusDone  = "done"
	StatusError = "error"
)

// Error codes (HTTP-like, in HeaderErrorCode and ErrorBody.Code).
const (
	CodeBadRequest  = 400 // the request is malformed or out of range
	CodeNotFound    = 404 // no such request or session (cancel)
	CodeTimeout     = 408 // the request's deadline passed
	CodeConflict    = 409 // a request with this id is already generating
	CodeTooMany     = 429 // too many sessions
	CodeCancelled   = 499 // cancelled by the client
	CodeInternal    = 500 // the pipeline failed
	CodeUnavailable = 503 // busy (queue full) or shutting down
)

// SessionSubject is the subject of kind (a Session* constant) of session sid.
func SessionSubject(sid, kind string) string {
	return SubjectSessionPrefix + sid + "." + kind
}

// CancelSubject is the subject that cancels request id.
func CancelSubject(id string) string { return SubjectCancelPrefix + id }

// ValidToken reports whether s can be one token of a subject: a session
// or request id (non-empty, no dots, wildcards or white space, at most
// 128 bytes).
func ValidToken(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	return !strings.ContainsAny(s, ".*> \t\r\n")
}

// Request is the body of a generate or session-prompt request. Exactly one
// of Prompt and Messages is set. Pointer fields are optional; nil takes the
// server's default.
type Request struct {
	// Prompt is text to complete.
	Prompt string `json:"prompt,omitempty"`
	// Messages are a chat, rendered with the model's chat template.
	Messages []Message `json:"messages,omitempty"`

	MaxTokens   *int     `json:"max_tokens,omitempty"`  // tokens to generate, 1…server limit
	Temperature *float64 `json:"temperature,omitempty"` // 0 (greedy, the default) … 100
	TopK        *int     `json:"top_k,omitempty"`       // 0 keeps all
	TopP        *float64 `json:"top_p,omitempty"`       // (0, 1]
	Seed        *uint64  `json:"seed,omitempty"`
	// Stop ends the generation at the first of these strings (not emitted).
	Stop []string `json:"stop,omitempty"`
	// Priority: higher is admitted first (a navigation prompt before
	// small talk). Default 0.
	Priority int `json:"priority,omitempty"`
	// ID is chosen by the client for cancel (SubjectCancelPrefix+ID) and
	// deduplication; the server makes one if empty.
	ID string `json:"id,omitempty"`
	// TimeoutMS is the request's deadline in milliseconds from arrival
	// (0: the server's default).
	TimeoutMS int `json:"timeout_ms,omitempty"`

	// Speculative controls speculation for this request alone.
	Speculative *Speculative `json:"speculative,omitempty"`
}

// Speculative is per-request speculation control.
type Speculative struct {
	K        *int     `json:"k,omitempty"`        // draft tokens per step, 0…server's k (0: none); with Auto, the largest
	PMin     *float64 `json:"p_min,omitempty"`    // stop a model draft below this top probability, [0, 1)
	Adaptive *bool    `json:"adaptive,omitempty"` // draft length from recent acceptance
	// Auto: each step's draft length in 0…k chosen from the measured cost
	// of target passes and this request's acceptance (true; the server must
	// run -k auto, Stats.Auto), or fixed at k (false). Not with Adaptive.
	Auto  *bool  `json:"auto,omitempty"`
	Draft string `json:"draft,omitempty"` // DraftModel, DraftNGram or DraftNone
}

// Draft names.
const (
	DraftModel = "model"
	DraftNGram = "ngram"
	DraftNone  = "none"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // system, user or assistant
	Content string `json:"content"`
}

// Chunk is the body of a StatusToken message: one verified block.
type Chunk struct {
	Text   string  `json:"text"`
	Tokens []int32 `json:"tokens"`
}

// Summary is the body of the StatusDone message.
type Summary struct {
	ID           string `json:"id"`
	Session      string `json:"session,omitempty"`
	FinishReason string `json:"finish_reason"` // "length" or "stop"
	// Text is the whole completion (the chunks' texts concatenated).
	Text            string     `json:"text"`
	Usage           Usage      `json:"usage"`
	Acceptance      Acceptance `json:"acceptance"`
	TTFTMS          float64    `json:"ttft_ms"`           // arrival to first token
	TokensPerSecond float64    `json:"tokens_per_second"` // generated / (arrival to done)
	DurationMS      float64    `json:"duration_ms"`
}

// Usage counts tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Acceptance are speculative-decoding figures (of a request, or, in the
// service's stats, of the whole process).
type Acceptance struct {
	Drafts      int `json:"drafts"`       // steps with draft tokens
	DraftTokens int `json:"draft_tokens"` // proposed
	Accepted    int `json:"accepted"`     // accepted by the target
	// Rate is Accepted / DraftTokens.
	Rate float64 `json:"rate"`
	// PerPosition[i] is the fraction of drafts whose token i was accepted.
	PerPosition []float64 `json:"per_position"`
	// MeanAcceptanceLength is 1 + Accepted / Drafts: tokens per step.
	MeanAcceptanceLength float64 `json:"mean_acceptance_length"`
}

// ErrorBody is the body of a StatusError message.
type ErrorBody struct {
	ID    string `json:"id,omitempty"`
	Code  int    `json:"code"`
	Error string `json:"error"`
}

// Stats is the data of the service's $SRV.STATS reply.
type Stats struct {
	Acceptance
	Requests    int    `json:"requests"`
	Failed      int    `json:"failed"`
	Generated   int    `json:"generated_tokens"`
	Slots       int    `json:"slots"`
	SlotsInUse  int    `json:"slots_in_use"`
	Queued      int    `json:"queued"`
	QueueLimit  int    `json:"queue_limit"`
	Sessions    int    `json:"sessions"`
	K           int    `json:"k"`              // the largest draft length
	Auto        bool   `json:"auto,omitempty"` // draft lengths chosen by cost (-k auto); requests may ask speculative.auto
	TargetModel string `json:"target_model"`
	DraftModel  string `json:"draft_model,omitempty"`
}

// Status returns the status header of a reply message ("" for the empty
// end-of-stream message).
func Status(m *nats.Msg) string {
	if m.Header == nil {
		return ""
	}
	return m.Header.Get(HeaderStatus)
}

// Seq returns the HeaderSeq of a reply message (0 if absent or bad).
func Seq(m *nats.Msg) int {
	if m.Header == nil {
		return 0
	}
	n, err := strconv.Atoi(m.Header.Get(HeaderSeq))
	if err != nil {
		return 0
	}
	return n
}
