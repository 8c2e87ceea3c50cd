package serve

// The OpenAI wire types of the HTTP gateway: chat and text completions,
// their streamed chunks, llama.cpp-style timings, and OpenAI-shaped
// errors.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/specd-dev/specd/api"
)

// oaRequest is the body of POST /v1/chat/completions and /v1/completions.
type oaRequest struct {
	Model    string      `json:"model"`
	Messages []oaMessage `json:"messages,omitempty"` // chat
	Prompt   *oaPrompt   `json:"prompt,omitempty"`   // completions

	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options,omitempty"`

	MaxTokens           *int     `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int     `json:"max_completion_tokens,omitempty"`
	Temperature         *float64 `json:"temperature,omitempty"`
	TopP                *float64 `json:"top_p,omitempty"`
	TopK                *int     `json:"top_k,omitempty"`
	Seed                *uint64  `json:"seed,omitempty"`
	Stop                oaStop   `json:"stop,omitempty"`
	N                   *int     `json:"n,omitempty"`
	User                string   `json:"user,omitempty"`
	FrequencyPenalty    *float64 `json:"frequency_penalty,omitempty"`
	PresencePenalty     *float64 `json:"presence_penalty,omitempty"`

	// specd's own: priority and per-request speculation, as on NATS.
	Priority    int              `json:"priority,omitempty"`
	Speculative *api.Speculative `json:"speculative,omitempty"`
}

// oaMessage is a chat message whose content is a string or an array of
// text parts.
type oaMessage struct {
	Role    string    `json:"role"`
	Content oaContent `json:"content"`
	Name    string    `json:"name,omitempty"`
}

type oaContent string

func (c *oaContent) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = oaContent(s)
		return nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return errors.New("content: want a string or an array of text parts")
	}
	var sb strings.Builder
	for _, p := range parts {
		if p.Type != "text" {
			return fmt.Errorf("content: part type %q: only text is supported", p.Type)
		}
		sb.WriteString(p.Text)
	}
	*c = oaContent(sb.String())
	return nil
}

// oaPrompt is a completion prompt: a string, or an array of one string.
type oaPrompt string

func (p *oaPrompt) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*p = oaPrompt(s)
		return nil
	}
	var arr []string
	if err := json.Unmarshal(b, &arr); err != nil || len(arr) != 1 {
		return errors.New("prompt: want a string (or an array of exactly one)")
	}
	*p = oaPrompt(arr[0])
	return nil
}

// oaStop is a stop string or an array of them.
type oaStop []string

func (s *oaStop) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = oaStop{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("stop: want a string or an array of strings")
	}
	*s = many
	return nil
}

// toAPI turns an OpenAI request into specd's, checking what specd does
// not support. chat tells the endpoint.
func (r *oaRequest) toAPI(chat bool) (api.Request, error) {
	var out api.Request
	switch {
	case chat && r.Prompt != nil:
		return out, &api.RequestError{Field: "prompt", Msg: "unknown field for chat completions (use messages)"}
	case !chat && len(r.Messages) > 0:
		return out, &api.RequestError{Field: "messages", Msg: "unknown field for completions (use prompt)"}
	case chat && len(r.Messages) == 0:
		return out, &api.RequestError{Field: "messages", Msg: "required: at least one message"}
	case !chat && r.Prompt == nil:
		return out, &api.RequestError{Field: "prompt", Msg: "required"}
	case r.N != nil && *r.N != 1:
		return out, &api.RequestError{Field: "n", Msg: fmt.Sprintf("%d: only n = 1 is supported", *r.N)}
	case r.FrequencyPenalty != nil && *r.FrequencyPenalty != 0:
		return out, &api.RequestError{Field: "frequency_penalty", Msg: "not supported (only 0)"}
	case r.PresencePenalty != nil && *r.PresencePenalty != 0:
		return out, &api.RequestError{Field: "presence_penalty", Msg: "not supported (only 0)"}
	}
	for _, m := range r.Messages {
		out.Messages = append(out.Messages, api.Message{Role: m.Role, Content: string(m.Content)})
	}
	if r.Prompt != nil {
		out.Prompt = string(*r.Prompt)
		if out.Prompt == "" {
			return out, &api.RequestError{Field: "prompt", Msg: "empty prompt"}
		}
	}
	out.MaxTokens = r.MaxTokens
	if r.MaxCompletionTokens != nil {
		out.MaxTokens = r.MaxCompletionTokens
	}
	out.Temperature, out.TopP, out.TopK, out.Seed = r.Temperature, r.TopP, r.TopK, r.Seed
	out.Stop, out.Priority, out.Speculative = r.Stop, r.Priority, r.Speculative
	return out, nil
}

// oaUsage is OpenAI's usage object.
type oaUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// oaTimings are llama.cpp server's timings, with its draft counters.
type oaTimings struct {
	PromptN             int     `json:"prompt_n"`
	PromptMS            float64 `json:"prompt_ms"`
	PromptPerTokenMS    float64 `json:"prompt_per_token_ms"`
	PromptPerSecond     float64 `json:"prompt_per_second"`
	PredictedN          int     `json:"predicted_n"`
	PredictedMS         float64 `json:"predicted_ms"`
	PredictedPerTokenMS float64 `json:"predicted_per_token_ms"`
	PredictedPerSecond  float64 `json:"predicted_per_second"`
	DraftN              int     `json:"draft_n"`
	DraftNAccepted      int     `json:"draft_n_accepted"`
}

// timings derives llama.cpp-style timings from a summary: the prompt
// phase is arrival to first token, the predicted phase the rest.
func timings(s *api.Summary) oaTimings {
	t := oaTimings{PromptN: s.Usage.PromptTokens, PromptMS: s.TTFTMS, PredictedN: s.Usage.CompletionTokens,
		PredictedMS: max(s.DurationMS-s.TTFTMS, 0), DraftN: s.Acceptance.DraftTokens, DraftNAccepted: s.Acceptance.Accepted}
	if t.PromptN > 0 && t.PromptMS > 0 {
		t.PromptPerTokenMS = t.PromptMS / float64(t.PromptN)
		t.PromptPerSecond = 1000 * float64(t.PromptN) / t.PromptMS
	}
	// The first token came with the prompt phase.
	if n := t.PredictedN - 1; n > 0 && t.PredictedMS > 0 {
		t.PredictedPerTokenMS = t.PredictedMS / float64(n)
		t.PredictedPerSecond = 1000 * float64(n) / t.PredictedMS
	}
	return t
}

// oaChoice is one choice of a response or a streamed chunk.
type oaChoice struct {
	Index        int        `json:"index"`
	Message      *oaOut     `json:"message,omitempty"` // chat, whole
	Delta        *oaOut     `json:"delta,omitempty"`   // chat, streamed
	Text         *string    `json:"text,omitempty"`    // completions
	Logprobs     *struct{}  `json:"logprobs"`
	FinishReason *string    `json:"finish_reason"`
	Specd        *oaSpecBlk `json:"specd,omitempty"`
}

type oaOut struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

// oaSpecBlk says how a streamed block was made: Draft is the text of the
// draft tokens the target accepted, Target the text of the target's own
// token (the correction or bonus token); Draft + Target is the content.
type oaSpecBlk struct {
	Draft    string `json:"draft"`
	Target   string `json:"target"`
	Drafted  int    `json:"drafted"`
	Accepted int    `json:"accepted"`
}

// oaResponse is a whole response or one streamed chunk.
type oaResponse struct {
	ID      string     `json:"id"`
	Object  string     `json:"object"`
	Created int64      `json:"created"`
	Model   string     `json:"model"`
	Choices []oaChoice `json:"choices"`
	Usage   *oaUsage   `json:"usage,omitempty"`
	Timings *oaTimings `json:"timings,omitempty"`
}

// oaError is OpenAI's error body.
type oaError struct {
	Error oaErrorBody `json:"error"`
}

type oaErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// errorBody makes the OpenAI error of err with status code.
func errorBody(status int, err error) oaError {
	b := oaErrorBody{Message: err.Error(), Type: "invalid_request_error"}
	var re *api.RequestError
	if errors.As(err, &re) && re.Field != "" {
		b.Param = &re.Field
	}
	code := ""
	switch {
	case status == 401:
		b.Type, code = "authentication_error", "invalid_api_key"
	case status == 404 && errors.As(err, new(*modelError)):
		code = "model_not_found" // other 404s (no such endpoint) have no code
	case status == 413:
		code = "request_too_large"
	case status == 429:
		b.Type, code = "rate_limit_error", "queue_full"
	case status == 499:
		b.Type, code = "cancelled", "cancelled"
	case status == 408:
		b.Type, code = "timeout", "timeout"
	case status >= 500:
		b.Type, code = "server_error", "server_error"
	}
	if code != "" {
		b.Code = &code
	}
	return oaError{Error: b}
}
