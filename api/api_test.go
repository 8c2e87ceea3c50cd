package api_test

// Tests of the wire protocol: DecodeRequest and Validate name the field at
// fault for every kind of bad input, and the JSON field names of every
// body are pinned by golden files (go test ./api -update rewrites them).

import (
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/specd-dev/specd/api"
	"github.com/specd-dev/specd/internal/golden"
)

func ptr[T any](v T) *T { return &v }

// checkBad reports unless err is a bad-request error about field whose
// message contains every one of want.
func checkBad(t *testing.T, err error, field string, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one about field %q", field)
	}
	if !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("%v: does not wrap ErrBadRequest", err)
	}
	var re *api.RequestError
	if !errors.As(err, &re) {
		t.Fatalf("%v (%T): not a *RequestError", err, err)
	}
	if re.Field != field {
		t.Errorf("%v: field %q, want %q", err, re.Field, field)
	}
	if field != "" && !strings.Contains(err.Error(), field) {
		t.Errorf("%v: the message does not name %q", err, field)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%v: the message does not say %q", err, w)
		}
	}
}

func TestDecodeRequest(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		field      string   // the field named; "" for the body as a whole
		want       []string // in the message
	}{
		{"empty body", "", "", []string{"empty request body"}},
		{"white space", " \n\t", "", []string{"empty request body"}},
		{"truncated", `{"prompt": "x"`, "", []string{"malformed JSON"}},
		{"trailing comma", `{"prompt": "x",}`, "", []string{"malformed JSON"}},
		{"single quotes", `{'prompt': 'x'}`, "", []string{"malformed JSON"}},
		{"plain text", `hello there`, "", []string{"malformed JSON"}},
		{"data after the object", `{"prompt": "x"} {"prompt": "y"}`, "", []string{"malformed JSON", "data after"}},
		{"not an object", `["x"]`, "", []string{"want a JSON object"}},
		{"a string", `"x"`, "", []string{"want a JSON object"}},
		{"NaN literal", `{"prompt": "x", "temperature": NaN}`, "", []string{"malformed JSON"}},
		{"Infinity literal", `{"prompt": "x", "temperature": Infinity}`, "", []string{"malformed JSON"}},
		{"invalid UTF-8", "{\"prompt\": \"caf\xe9\"}", "", []string{"not valid UTF-8", "at byte 15"}},
		{"truncated UTF-8", "{\"prompt\": \"\xe2\x80\"}", "", []string{"not valid UTF-8", "at byte 12"}},
		{"max_tokens a string", `{"prompt": "x", "max_tokens": "x"}`, "max_tokens", []string{"want an integer", "got string"}},
		{"max_tokens a fraction", `{"prompt": "x", "max_tokens": 1.5}`, "max_tokens", []string{"want an integer"}},
		{"max_tokens negative overflow", `{"prompt": "x", "max_tokens": 1e40}`, "max_tokens", []string{"want an integer"}},
		{"prompt a number", `{"prompt": 5}`, "prompt", []string{"want a string", "got number"}},
		{"temperature a string", `{"prompt": "x", "temperature": "hot"}`, "temperature", []string{"want a number"}},
		{"top_p a bool", `{"prompt": "x", "top_p": true}`, "top_p", []string{"want a number", "got bool"}},
		{"seed negative", `{"prompt": "x", "seed": -1}`, "seed", []string{"want an integer"}},
		{"stop a string", `{"prompt": "x", "stop": "end"}`, "stop", []string{"want an array"}},
		{"messages an object", `{"messages": {"role": "user"}}`, "messages", []string{"want an array"}},
		{"message role a number", `{"messages": [{"role": 1, "content": "x"}]}`, "messages.role", []string{"want a string"}},
		{"speculative a number", `{"prompt": "x", "speculative": 3}`, "speculative", []string{"want an object"}},
		{"speculative.k a string", `{"prompt": "x", "speculative": {"k": "two"}}`, "speculative.k", []string{"want an integer"}},
		{"speculative.adaptive a string", `{"prompt": "x", "speculative": {"adaptive": "yes"}}`, "speculative.adaptive", []string{"want true or false"}},
		{"unknown field", `{"prompt": "x", "max_token": 5}`, "max_token", []string{"unknown field"}},
		{"unknown field, other case", `{"prompt": "x", "Prompts": "y"}`, "Prompts", []string{"unknown field"}},
		{"unknown nested field", `{"prompt": "x", "speculative": {"kk": 1}}`, "kk", []string{"unknown field"}},
		{"unknown message field", `{"messages": [{"role": "user", "content": "x", "name": "al"}]}`, "name", []string{"unknown field"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := api.DecodeRequest([]byte(tc.body))
			checkBad(t, err, tc.field, tc.want...)
			if !reflect.DeepEqual(r, api.Request{}) {
				t.Errorf("a failed decode returned %+v, want the zero Request", r)
			}
		})
	}

	t.Run("too big", func(t *testing.T) {
		body := `{"prompt": "` + strings.Repeat("a", api.MaxBodyBytes) + `"}`
		_, err := api.DecodeRequest([]byte(body))
		checkBad(t, err, "", "over the limit")
	})
}

// TestDecodeRequestGood: well-formed bodies decode to what they say;
// case-insensitive matching of field names (encoding/json's) is accepted.
func TestDecodeRequestGood(t *testing.T) {
	for _, tc := range []struct {
		body string
		want api.Request
	}{
		{`{"prompt": "The jury said"}`, api.Request{Prompt: "The jury said"}},
		{" {\"prompt\": \"caf\u00e9 \u2026\"}\n", api.Request{Prompt: "caf\u00e9 \u2026"}},
		{`{"prompt": "x", "max_tokens": 8, "temperature": 0.7, "top_p": 0.9, "top_k": 40, "seed": 18446744073709551615}`,
			api.Request{Prompt: "x", MaxTokens: ptr(8), Temperature: ptr(0.7), TopP: ptr(0.9), TopK: ptr(40), Seed: ptr(uint64(math.MaxUint64))}},
		{`{"messages": [{"role": "user", "content": "hi"}], "speculative": {"k": 0, "draft": "none"}}`,
			api.Request{Messages: []api.Message{{Role: "user", Content: "hi"}}, Speculative: &api.Speculative{K: ptr(0), Draft: "none"}}},
	} {
		got, err := api.DecodeRequest([]byte(tc.body))
		if err != nil {
			t.Errorf("%s: %v", tc.body, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got  %+v\n want %+v", tc.body, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	limits := api.Limits{MaxTokens: 256, K: 4}
	valid := func() api.Request { return api.Request{Prompt: "The jury said"} }
	for _, tc := range []struct {
		name   string
		change func(*api.Request)
		field  string // "" for a valid request
		want   []string
	}{
		{"prompt only", func(r *api.Request) {}, "", nil},
		{"empty prompt", func(r *api.Request) { r.Prompt = "" }, "prompt", []string{"empty prompt"}},
		{"empty messages", func(r *api.Request) { r.Prompt, r.Messages = "", []api.Message{} }, "prompt", []string{"empty prompt"}},
		{"prompt and messages", func(r *api.Request) { r.Messages = []api.Message{{Role: "user", Content: "x"}} }, "messages", []string{"not both"}},
		{"messages only", func(r *api.Request) {
			r.Prompt, r.Messages = "", []api.Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}, {Role: "assistant", Content: "a"}}
		}, "", nil},
		{"bad role", func(r *api.Request) { r.Prompt, r.Messages = "", []api.Message{{Role: "user"}, {Role: "robot"}} }, "messages[1].role", []string{`"robot"`}},
		{"max_tokens 0", func(r *api.Request) { r.MaxTokens = ptr(0) }, "max_tokens", []string{"0: must be in [1, 256]"}},
		{"max_tokens negative", func(r *api.Request) { r.MaxTokens = ptr(-5) }, "max_tokens", []string{"-5"}},
		{"max_tokens over the limit", func(r *api.Request) { r.MaxTokens = ptr(257) }, "max_tokens", []string{"257"}},
		{"max_tokens huge", func(r *api.Request) { r.MaxTokens = ptr(math.MaxInt) }, "max_tokens", []string{"must be in [1, 256]"}},
		{"max_tokens at the limit", func(r *api.Request) { r.MaxTokens = ptr(256) }, "", nil},
		{"max_tokens 1", func(r *api.Request) { r.MaxTokens = ptr(1) }, "", nil},
		{"temperature negative", func(r *api.Request) { r.Temperature = ptr(-0.1) }, "temperature", []string{"-0.1"}},
		{"temperature NaN", func(r *api.Request) { r.Temperature = ptr(math.NaN()) }, "temperature", []string{"NaN"}},
		{"temperature +Inf", func(r *api.Request) { r.Temperature = ptr(math.Inf(1)) }, "temperature", []string{"must be in [0, 100]"}},
		{"temperature over 100", func(r *api.Request) { r.Temperature = ptr(100.5) }, "temperature", nil},
		{"temperature 0", func(r *api.Request) { r.Temperature = ptr(0.0) }, "", nil},
		{"temperature 100", func(r *api.Request) { r.Temperature = ptr(100.0) }, "", nil},
		{"top_k negative", func(r *api.Request) { r.TopK = ptr(-1) }, "top_k", nil},
		{"top_k 0", func(r *api.Request) { r.TopK = ptr(0) }, "", nil},
		{"top_p 0", func(r *api.Request) { r.TopP = ptr(0.0) }, "top_p", []string{"must be in (0, 1]"}},
		{"top_p 1.5", func(r *api.Request) { r.TopP = ptr(1.5) }, "top_p", []string{"1.5"}},
		{"top_p negative", func(r *api.Request) { r.TopP = ptr(-0.5) }, "top_p", nil},
		{"top_p NaN", func(r *api.Request) { r.TopP = ptr(math.NaN()) }, "top_p", nil},
		{"top_p 1", func(r *api.Request) { r.TopP = ptr(1.0) }, "", nil},
		{"top_p small", func(r *api.Request) { r.TopP = ptr(1e-9) }, "", nil},
		{"too many stops", func(r *api.Request) { r.Stop = strings.Split("a b c d e f g h i", " ") }, "stop", []string{"9 stop strings: at most 8"}},
		{"eight stops", func(r *api.Request) { r.Stop = strings.Split("a b c d e f g h", " ") }, "", nil},
		{"empty stop", func(r *api.Request) { r.Stop = []string{"x", ""} }, "stop[1]", []string{"empty stop string"}},
		{"id with a dot", func(r *api.Request) { r.ID = "a.b" }, "id", []string{`"a.b"`}},
		{"id with a space", func(r *api.Request) { r.ID = "a b" }, "id", nil},
		{"id a wildcard", func(r *api.Request) { r.ID = "*" }, "id", nil},
		{"id a full wildcard", func(r *api.Request) { r.ID = ">" }, "id", nil},
		{"id with a newline", func(r *api.Request) { r.ID = "a\nb" }, "id", nil},
		{"id too long", func(r *api.Request) { r.ID = strings.Repeat("x", 129) }, "id", []string{"1-128 bytes"}},
		{"id of 128 bytes", func(r *api.Request) { r.ID = strings.Repeat("x", 128) }, "", nil},
		{"id", func(r *api.Request) { r.ID = "req-1_A" }, "", nil},
		{"timeout negative", func(r *api.Request) { r.TimeoutMS = -1 }, "timeout_ms", nil},
		{"speculative.k negative", func(r *api.Request) { r.Speculative = &api.Speculative{K: ptr(-1)} }, "speculative.k", []string{"must be in [0, 4]"}},
		{"speculative.k over the server's", func(r *api.Request) { r.Speculative = &api.Speculative{K: ptr(5)} }, "speculative.k", []string{"5: must be in [0, 4]"}},
		{"speculative.k 0", func(r *api.Request) { r.Speculative = &api.Speculative{K: ptr(0)} }, "", nil},
		{"speculative.k at the server's", func(r *api.Request) { r.Speculative = &api.Speculative{K: ptr(4)} }, "", nil},
		{"speculative.p_min 1", func(r *api.Request) { r.Speculative = &api.Speculative{PMin: ptr(1.0)} }, "speculative.p_min", []string{"must be in [0, 1)"}},
		{"speculative.p_min negative", func(r *api.Request) { r.Speculative = &api.Speculative{PMin: ptr(-0.1)} }, "speculative.p_min", nil},
		{"speculative.draft unknown", func(r *api.Request) { r.Speculative = &api.Speculative{Draft: "bundled"} }, "speculative.draft", []string{`"bundled"`, "model, ngram or none"}},
		{"speculative.draft case", func(r *api.Request) { r.Speculative = &api.Speculative{Draft: "NGram"} }, "speculative.draft", nil},
		{"speculative drafts", func(r *api.Request) {
			r.Speculative = &api.Speculative{K: ptr(2), PMin: ptr(0.5), Adaptive: ptr(true), Draft: api.DraftNGram}
		}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := valid()
			tc.change(&r)
			err := r.Validate(limits)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("%+v: %v", r, err)
				}
				return
			}
			checkBad(t, err, tc.field, tc.want...)
		})
	}
}

// TestDecodeThenValidate: what the server does with a body, for ranges
// that only Validate sees.
func TestDecodeThenValidate(t *testing.T) {
	limits := api.Limits{MaxTokens: 256, K: 4}
	for _, tc := range []struct{ body, field string }{
		{`{"prompt": ""}`, "prompt"},
		{`{}`, "prompt"},
		{`{"prompt": "x", "max_tokens": 0}`, "max_tokens"},
		{`{"prompt": "x", "max_tokens": 1000000000}`, "max_tokens"},
		{`{"prompt": "x", "temperature": -1}`, "temperature"},
		{`{"prompt": "x", "top_p": 0}`, "top_p"},
		{`{"prompt": "x", "top_p": 1.5}`, "top_p"},
		{`{"prompt": "x", "speculative": {"k": 99}}`, "speculative.k"},
		{`{"prompt": "x", "speculative": {"draft": "big"}}`, "speculative.draft"},
		{`{"prompt": "x", "id": "a.b"}`, "id"},
	} {
		r, err := api.DecodeRequest([]byte(tc.body))
		if err != nil {
			t.Errorf("%s: decode: %v", tc.body, err)
			continue
		}
		err = r.Validate(limits)
		t.Run(tc.field, func(t *testing.T) { checkBad(t, err, tc.field) })
	}
}

func TestSubjects(t *testing.T) {
	if got := api.SessionSubject("s1", api.SessionPrompt); got != "specd.v1.session.s1.prompt" {
		t.Errorf("SessionSubject: %q", got)
	}
	if got := api.CancelSubject("r1"); got != "specd.v1.cancel.r1" {
		t.Errorf("CancelSubject: %q", got)
	}
	for s, want := range map[string]bool{
		"abc": true, "A-b_9": true, strings.Repeat("x", 128): true,
		"": false, "a.b": false, "*": false, "a>": false, "a b": false, "a\tb": false, strings.Repeat("x", 129): false,
	} {
		if got := api.ValidToken(s); got != want {
			t.Errorf("ValidToken(%q) = %v, want %v", s, got, want)
		}
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// fullRequest sets every field of a Request (prompt and messages both,
// which Validate refuses, but the field names are what counts here).
func fullRequest() api.Request {
	return api.Request{
		Prompt:      "The jury said",
		Messages:    []api.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hello"}},
		MaxTokens:   ptr(64),
		Temperature: ptr(0.8),
		TopK:        ptr(40),
		TopP:        ptr(0.95),
		Seed:        ptr(uint64(7)),
		Stop:        []string{"\n\n", "THE END"},
		Priority:    2,
		ID:          "req-1",
		TimeoutMS:   30000,
		Speculative: &api.Speculative{K: ptr(3), PMin: ptr(0.25), Adaptive: ptr(true), Draft: api.DraftModel},
	}
}

// TestGoldenRequest pins the request's JSON field names; the golden file
// decodes back (strictly) to the same request.
func TestGoldenRequest(t *testing.T) {
	req := fullRequest()
	got := marshal(t, req)
	golden.Check(t, filepath.Join("testdata", "request.golden"), got)
	back, err := api.DecodeRequest(got)
	if err != nil {
		t.Fatalf("the golden request does not decode: %v", err)
	}
	if !reflect.DeepEqual(back, req) {
		t.Errorf("round trip:\n got  %+v\n want %+v", back, req)
	}
}

// TestGoldenReplies pins the JSON field names of the reply bodies (token,
// done and error messages) and of the $SRV.STATS data.
func TestGoldenReplies(t *testing.T) {
	acc := api.Acceptance{Drafts: 10, DraftTokens: 40, Accepted: 30, Rate: 0.75, PerPosition: []float64{0.9, 0.8, 0.7, 0.6}, MeanAcceptanceLength: 4}
	replies := struct {
		Chunk   api.Chunk     `json:"chunk"`
		Summary api.Summary   `json:"summary"`
		Error   api.ErrorBody `json:"error"`
		Stats   api.Stats     `json:"stats"`
	}{
		Chunk: api.Chunk{Text: " the", Tokens: []int32{262, 1000}},
		Summary: api.Summary{
			ID: "req-1", Session: "s1", FinishReason: "length", Text: " the jury",
			Usage:      api.Usage{PromptTokens: 5, CompletionTokens: 40, TotalTokens: 45},
			Acceptance: acc, TTFTMS: 12.5, TokensPerSecond: 300.25, DurationMS: 133.5,
		},
		Error: api.ErrorBody{ID: "req-2", Code: api.CodeCancelled, Error: "serve: cancelled by the client"},
		Stats: api.Stats{
			Acceptance: acc, Requests: 3, Failed: 1, Generated: 120, Slots: 4, SlotsInUse: 2, Queued: 1, QueueLimit: 16,
			Sessions: 1, K: 4, TargetModel: "bundled specd-target.gguf", DraftModel: "bundled specd-draft.gguf",
		},
	}
	golden.Check(t, filepath.Join("testdata", "summary.golden"), marshal(t, replies))

	// Optional fields are left out when empty.
	for _, tc := range []struct {
		v    any
		want string
	}{
		{api.Request{Prompt: "x"}, `{"prompt":"x"}`},
		{api.ErrorBody{Code: 400, Error: "bad"}, `{"code":400,"error":"bad"}`},
		{api.Chunk{Text: "", Tokens: []int32{}}, `{"text":"","tokens":[]}`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil || string(b) != tc.want {
			t.Errorf("%+v: %s, %v; want %s", tc.v, b, err, tc.want)
		}
	}
}
