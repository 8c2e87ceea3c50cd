package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"
)

// ErrBadRequest is wrapped by every error of DecodeRequest and Validate.
var ErrBadRequest = errors.New("bad request")

// RequestError is a request that failed decoding or validation; Field
// names the JSON field at fault ("" for the body as a whole).
type RequestError struct {
	Field string
	Msg   string
}

func (e *RequestError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return fmt.Sprintf("field %q: %s", e.Field, e.Msg)
}

func (e *RequestError) Unwrap() error { return ErrBadRequest }

func bad(field, format string, args ...any) error {
	return &RequestError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// MaxBodyBytes is the largest request body DecodeRequest accepts.
const MaxBodyBytes = 1 << 20

// DecodeRequest parses a JSON request body strictly: invalid UTF-8,
// malformed JSON, unknown fields, wrong types and trailing data are
// errors that name what is wrong. It does not check ranges (Validate).
func DecodeRequest(data []byte) (Request, error) {
	var r Request
	if err := DecodeStrict(data, &r); err != nil {
		return Request{}, err
	}
	return r, nil
}

// DecodeStrict decodes the JSON object in data into v as DecodeRequest
// does (the HTTP gateway's OpenAI bodies use it too). Errors are
// *RequestError.
func DecodeStrict(data []byte, v any) error {
	if len(data) > MaxBodyBytes {
		return bad("", "request body of %d bytes is over the limit of %d", len(data), MaxBodyBytes)
	}
	if !utf8.Valid(data) {
		return bad("", "request body is not valid UTF-8 (at byte %d)", invalidAt(data))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return bad("", "empty request body: want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return bad("", "malformed JSON: data after the request object")
	}
	return nil
}

// jsonError turns an encoding/json error into a RequestError naming the
// field.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return bad("", "want a JSON object, got %s", te.Value)
		}
		return bad(field, "want %s, got %s", goTypeName(te.Type.String()), te.Value)
	case errors.As(err, &se):
		return bad("", "malformed JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return bad("", "malformed JSON: unexpected end of the body")
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return bad(strings.Trim(f, `"`), "unknown field")
	}
	return bad("", "malformed JSON: %s", strings.TrimPrefix(msg, "json: "))
}

func goTypeName(t string) string {
	t = strings.TrimPrefix(t, "*")
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	}
	return "an object"
}

func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// Limits are the server's bounds on a request.
type Limits struct {
	MaxTokens int  // largest max_tokens
	K         int  // largest speculative.k (the server's draft length)
	Auto      bool // the server can choose draft lengths by cost (speculative.auto)
	MaxStops  int  // most stop strings (0: 8)
}

// Validate checks r's fields against l and reports the first field out of
// range.
func (r *Request) Validate(l Limits) error {
	switch {
	case r.Prompt == "" && len(r.Messages) == 0:
		return bad("prompt", "empty prompt: give prompt or messages")
	case r.Prompt != "" && len(r.Messages) > 0:
		return bad("messages", "give prompt or messages, not both")
	}
	for i, m := range r.Messages {
		switch m.Role {
		case "system", "user", "assistant":
		default:
			return bad(fmt.Sprintf("messages[%d].role", i), "%q: want system, user or assistant", m.Role)
		}
	}
	if r.MaxTokens != nil && (*r.MaxTokens <= 0 || *r.MaxTokens > l.MaxTokens) {
		return bad("max_tokens", "%d: must be in [1, %d]", *r.MaxTokens, l.MaxTokens)
	}
	if t := r.Temperature; t != nil && (math.IsNaN(*t) || *t < 0 || *t > 100) {
		return bad("temperature", "%g: must be in [0, 100]", *t)
	}
	if r.TopK != nil && *r.TopK < 0 {
		return bad("top_k", "%d: must not be negative", *r.TopK)
	}
	if p := r.TopP; p != nil && !(*p > 0 && *p <= 1) {
		return bad("top_p", "%g: must be in (0, 1]", *p)
	}
	maxStops := l.MaxStops
	if maxStops == 0 {
		maxStops = 8
	}
	if len(r.Stop) > maxStops {
		return bad("stop", "%d stop strings: at most %d", len(r.Stop), maxStops)
	}
	for i, s := range r.Stop {
		if s == "" {
			return bad(fmt.Sprintf("stop[%d]", i), "empty stop string")
		}
	}
	if r.ID != "" && !ValidToken(r.ID) {
		return bad("id", "%q: must be 1-128 bytes without dots, wildcards or white space", r.ID)
	}
	if r.TimeoutMS < 0 {
		return bad("timeout_ms", "%d: must not be negative", r.TimeoutMS)
	}
	if s := r.Speculative; s != nil {
		if s.K != nil && (*s.K < 0 || *s.K > l.K) {
			return bad("speculative.k", "%d: must be in [0, %d] (the server's draft length)", *s.K, l.K)
		}
		if p := s.PMin; p != nil && !(*p >= 0 && *p < 1) {
			return bad("speculative.p_min", "%g: must be in [0, 1)", *p)
		}
		if s.Auto != nil && *s.Auto {
			switch {
			case s.Adaptive != nil && *s.Adaptive:
				return bad("speculative.auto", "auto and adaptive exclude each other: give one")
			case !l.Auto:
				return bad("speculative.auto", "this server does not choose draft lengths by cost (it runs with a fixed -k; start it with -k auto)")
			}
		}
		switch s.Draft {
		case "", DraftModel, DraftNGram, DraftNone:
		default:
			return bad("speculative.draft", "%q: want model, ngram or none", s.Draft)
		}
	}
	return nil
}
