package serve_test

// Tests of the OpenAI-compatible HTTP gateway against a real listener on
// a free loopback port, with net/http clients (the fixture of
// serve_test.go with setup.http): whole and streamed completions, a
// client that goes away, bad input, a full queue, the API key, health,
// models and the page; the Prometheus metrics of HTTP and NATS requests;
// and durable intake with session replay (JetStream in the embedded
// server). Every wait is bounded: requests by a context of bound, slot
// accounting by poll.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/specd-dev/specd/api"
	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/serve"
)

// modelID is the id the gateway serves the bundled target under.
const modelID = "specd-target"

const (
	chatPath = "/v1/chat/completions"
	textPath = "/v1/completions"
)

func withHTTP(s setup) setup {
	s.http = true
	return s
}

// Client-side wire types of the HTTP API. strictJSON decodes into them
// with unknown fields disallowed, so they pin the shape of the responses.
type (
	oaResponse struct {
		ID      string     `json:"id"`
		Object  string     `json:"object"`
		Created int64      `json:"created"`
		Model   string     `json:"model"`
		Choices []oaChoice `json:"choices"`
		Usage   *oaUsage   `json:"usage"`
		Timings *oaTimings `json:"timings"`
	}
	oaChoice struct {
		Index        int             `json:"index"`
		Message      *oaOut          `json:"message"`
		Delta        *oaOut          `json:"delta"`
		Text         *string         `json:"text"`
		Logprobs     json.RawMessage `json:"logprobs"`
		FinishReason *string         `json:"finish_reason"`
		Specd        *oaSpecd        `json:"specd"`
	}
	oaOut struct {
		Role    string  `json:"role"`
		Content *string `json:"content"`
	}
	oaSpecd struct {
		Draft    string `json:"draft"`
		Target   string `json:"target"`
		Drafted  int    `json:"drafted"`
		Accepted int    `json:"accepted"`
	}
	oaUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
	oaTimings struct {
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
)

// strictJSON decodes the one JSON value in b into v, refusing unknown
// fields and trailing data.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("data after the JSON value: %v", err)
	}
	return nil
}

func jsonBody(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// chatBody is a chat request of one user message.
func chatBody(t *testing.T, prompt string, maxTokens int, extra map[string]any) string {
	m := map[string]any{"model": modelID, "messages": []map[string]any{{"role": "user", "content": prompt}}, "max_tokens": maxTokens}
	maps.Copy(m, extra)
	return jsonBody(t, m)
}

// textBody is a text completion request.
func textBody(t *testing.T, prompt string, maxTokens int, extra map[string]any) string {
	m := map[string]any{"model": modelID, "prompt": prompt, "max_tokens": maxTokens}
	maps.Copy(m, extra)
	return jsonBody(t, m)
}

var streamUsage = map[string]any{"stream": true, "stream_options": map[string]any{"include_usage": true}}

// open sends a request to the gateway and returns the response with its
// body still to read; header is name, value pairs.
func (f *fixture) open(ctx context.Context, t *testing.T, method, path, body string, header ...string) *http.Response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, f.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// call sends a request and reads the whole response, within bound.
func (f *fixture) call(t *testing.T, method, path, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	resp := f.open(ctx, t, method, path, body, header...)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, path, err)
	}
	return resp, b
}

// promptTokens is how many tokens the server makes of prompt text.
func promptTokens(t *testing.T, e *engine.Engine, text string) int {
	t.Helper()
	ids, err := e.Encode(text, true)
	if err != nil {
		t.Fatal(err)
	}
	return len(ids)
}

// rendered is the prompt text of a chat of one user message.
func rendered(t *testing.T, e *engine.Engine, prompt string) string {
	t.Helper()
	render, _ := e.ChatRenderer()
	text, err := render([]api.Message{{Role: "user", Content: prompt}})
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// plainText is the text of plain greedy decoding of prompt (n tokens, cut
// at the first end-of-generation one), detokenized as specd generate's
// plain loop does.
func plainText(t *testing.T, e *engine.Engine, prompt string, n int) string {
	t.Helper()
	tok, _ := e.Tokenizer()
	dec := tok.NewDecoder()
	dec.SetStripLeadingSpace(false)
	var b strings.Builder
	for _, id := range plain(t, e, prompt, n) {
		b.WriteString(dec.Add(id))
	}
	b.WriteString(dec.Flush())
	return b.String()
}

// result is what a completion came to, whole or streamed.
type result struct {
	id, text, finish string
	usage            oaUsage
	timings          oaTimings
	chunks           int // streamed chunks with a choice
}

// checkFinish checks the finish reason and the usage of a request of
// maxTokens whose prompt has prompt tokens.
func checkFinish(t *testing.T, what, finish string, u oaUsage, prompt, maxTokens int) {
	t.Helper()
	switch {
	case finish == "length" && u.CompletionTokens == maxTokens:
	case finish == "stop" && u.CompletionTokens < maxTokens:
	default:
		t.Errorf("%s: finish_reason %q with %d of max_tokens %d", what, finish, u.CompletionTokens, maxTokens)
	}
	if u.PromptTokens != prompt || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("%s: usage %+v, want %d prompt tokens and total = prompt + completion", what, u, prompt)
	}
}

func checkTimings(t *testing.T, what string, tm oaTimings, u oaUsage) {
	t.Helper()
	if tm.PredictedN != u.CompletionTokens || tm.PromptN != u.PromptTokens || tm.DraftNAccepted < 0 || tm.DraftN < tm.DraftNAccepted ||
		tm.PromptMS < 0 || tm.PredictedMS < 0 || tm.PredictedPerSecond < 0 {
		t.Errorf("%s: timings %+v with usage %+v", what, tm, u)
	}
}

// whole checks a whole (not streamed) completion response.
func whole(t *testing.T, what string, chat bool, resp *http.Response, body []byte, prompt, maxTokens int) result {
	t.Helper()
	var r result
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%s: %s, %s: %s", what, resp.Status, resp.Header.Get("Content-Type"), body)
	}
	var o oaResponse
	if err := strictJSON(body, &o); err != nil {
		t.Fatalf("%s: %s: %v", what, body, err)
	}
	prefix, object := "cmpl-", "text_completion"
	if chat {
		prefix, object = "chatcmpl-", "chat.completion"
	}
	if !strings.HasPrefix(o.ID, prefix) || len(o.ID) == len(prefix) || o.Object != object || o.Model != modelID || o.Created <= 0 {
		t.Errorf("%s: id %q, object %q, model %q, created %d; want %s…, %s, %s", what, o.ID, o.Object, o.Model, o.Created, prefix, object, modelID)
	}
	if len(o.Choices) != 1 {
		t.Fatalf("%s: %d choices: %s", what, len(o.Choices), body)
	}
	c := o.Choices[0]
	if c.Index != 0 || string(c.Logprobs) != "null" || c.Delta != nil || c.Specd != nil || c.FinishReason == nil {
		t.Errorf("%s: choice %s", what, body)
	}
	switch {
	case chat && c.Message != nil && c.Message.Role == "assistant" && c.Message.Content != nil && c.Text == nil:
		r.text = *c.Message.Content
	case !chat && c.Text != nil && c.Message == nil:
		r.text = *c.Text
	default:
		t.Fatalf("%s: no %s in the choice: %s", what, map[bool]string{true: "message", false: "text"}[chat], body)
	}
	if o.Usage == nil || o.Timings == nil {
		t.Fatalf("%s: no usage or timings: %s", what, body)
	}
	r.id, r.finish, r.usage, r.timings = o.ID, *c.FinishReason, *o.Usage, *o.Timings
	checkFinish(t, what, r.finish, r.usage, prompt, maxTokens)
	checkTimings(t, what, r.timings, r.usage)
	return r
}

// events reads a server-sent event stream strictly: each event is one
// "data: " line and a blank line, the last is "data: [DONE]" and nothing
// follows it. It returns the data of the events before [DONE].
func events(body []byte) ([]string, error) {
	var out []string
	rest := string(body)
	for rest != "" {
		line, after, ok := strings.Cut(rest, "\n")
		data, isData := strings.CutPrefix(line, "data: ")
		if !ok || !isData || !strings.HasPrefix(after, "\n") {
			return out, fmt.Errorf("event %d: %q is not one data line and a blank line", len(out)+1, rest[:min(len(rest), 80)])
		}
		rest = after[1:]
		if data == "[DONE]" {
			if rest != "" {
				return out, fmt.Errorf("%q after data: [DONE]", rest[:min(len(rest), 80)])
			}
			return out, nil
		}
		out = append(out, data)
	}
	return out, errors.New("the stream ended without data: [DONE]")
}

// streamed checks a streamed completion: its events, chunks, the one
// finish_reason (whose chunk has the timings), the usage chunk (if
// usage), the specd draft and target split, and returns what it came to.
func streamed(t *testing.T, what string, chat, usage bool, resp *http.Response, prompt, maxTokens int) result {
	t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: reading the stream: %v", what, err)
	}
	var r result
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%s: %s, %s: %s", what, resp.Status, resp.Header.Get("Content-Type"), body)
	}
	evs, err := events(body)
	if err != nil {
		t.Fatalf("%s: %v in\n%s", what, err, body)
	}
	prefix, object := "cmpl-", "text_completion"
	if chat {
		prefix, object = "chatcmpl-", "chat.completion.chunk"
	}
	var text strings.Builder
	finishes, specToks, drafted, accepted := 0, 0, 0, 0
	var gotUsage *oaUsage
	var gotTimings *oaTimings
	for i, ev := range evs {
		var o oaResponse
		if err := strictJSON([]byte(ev), &o); err != nil {
			t.Fatalf("%s: event %d %s: %v", what, i, ev, err)
		}
		if i == 0 {
			r.id = o.ID
		}
		if o.ID != r.id || !strings.HasPrefix(o.ID, prefix) || o.Object != object || o.Model != modelID || o.Created <= 0 {
			t.Errorf("%s: event %d: id %q (first %q), object %q, model %q, created %d; want %s…, %s, %s", what, i, o.ID, r.id, o.Object, o.Model, o.Created, prefix, object, modelID)
		}
		if gotUsage != nil {
			t.Errorf("%s: event %d after the usage chunk: %s", what, i, ev)
		}
		if o.Usage != nil { // the usage chunk: no choices
			if o.Choices == nil || len(o.Choices) != 0 || o.Timings != nil || finishes != 1 {
				t.Errorf("%s: usage chunk %s (after %d finish reasons)", what, ev, finishes)
			}
			gotUsage = o.Usage
			continue
		}
		if len(o.Choices) != 1 {
			t.Fatalf("%s: event %d: %d choices: %s", what, i, len(o.Choices), ev)
		}
		if finishes > 0 {
			t.Errorf("%s: event %d after the finish reason: %s", what, i, ev)
		}
		r.chunks++
		c := o.Choices[0]
		if c.Index != 0 || string(c.Logprobs) != "null" || c.Message != nil {
			t.Errorf("%s: event %d: choice %s", what, i, ev)
		}
		var content *string
		if chat {
			if c.Delta == nil || c.Text != nil {
				t.Fatalf("%s: event %d: want a delta: %s", what, i, ev)
			}
			if want := map[bool]string{true: "assistant"}[i == 0]; c.Delta.Role != want {
				t.Errorf("%s: event %d: role %q, want %q", what, i, c.Delta.Role, want)
			}
			content = c.Delta.Content
		} else {
			if c.Text == nil || c.Delta != nil {
				t.Fatalf("%s: event %d: want text: %s", what, i, ev)
			}
			content = c.Text
		}
		if content != nil {
			text.WriteString(*content)
		}
		if c.FinishReason != nil {
			finishes++
			r.finish = *c.FinishReason
			gotTimings = o.Timings
		} else if o.Timings != nil {
			t.Errorf("%s: event %d: timings before the finish reason: %s", what, i, ev)
		}
		sp := c.Specd
		if sp == nil {
			if content != nil && *content != "" {
				t.Errorf("%s: event %d: text without specd: %s", what, i, ev)
			}
			continue
		}
		if content == nil || sp.Draft+sp.Target != *content || sp.Accepted < 0 || sp.Accepted > sp.Drafted {
			t.Errorf("%s: event %d: specd %+v does not make the content: %s", what, i, sp, ev)
		}
		specToks += sp.Accepted + 1
		drafted += sp.Drafted
		accepted += sp.Accepted
	}
	if finishes != 1 || gotTimings == nil {
		t.Fatalf("%s: %d finish reasons, timings %v; want exactly one, with timings", what, finishes, gotTimings)
	}
	if usage != (gotUsage != nil) {
		t.Fatalf("%s: usage chunk %v with include_usage %v", what, gotUsage, usage)
	}
	r.text, r.timings = text.String(), *gotTimings
	if !usage {
		return r
	}
	r.usage = *gotUsage
	checkFinish(t, what, r.finish, r.usage, prompt, maxTokens)
	checkTimings(t, what, r.timings, r.usage)
	// A block never runs past max_tokens (the draft is cut to fit), so a
	// stream that ends by length has every block whole: each counts its
	// accepted draft tokens and the target's one. (An end-of-sequence
	// token may cut the last block of a stopped stream short.)
	if r.finish == "length" && (specToks != r.usage.CompletionTokens || drafted != r.timings.DraftN || accepted != r.timings.DraftNAccepted) {
		t.Errorf("%s: chunks' accepted+1 %d, drafted %d, accepted %d; usage %+v, timings %+v", what, specToks, drafted, accepted, r.usage, r.timings)
	}
	if drafted > r.timings.DraftN || accepted > r.timings.DraftNAccepted {
		t.Errorf("%s: chunks drafted %d, accepted %d: over the timings %+v", what, drafted, accepted, r.timings)
	}
	return r
}

// TestHTTPCompletions: whole chat and text completions answer 200 in
// OpenAI's shape (ids chatcmpl-/cmpl-, object, model specd-target, the
// message or text, finish_reason, logprobs null) with usage that adds up
// (completion tokens = max_tokens with "length", fewer with "stop"; prompt
// tokens = the server's tokens of the rendered prompt) and llama.cpp
// timings whose predicted_n is the completion and draft_n >=
// draft_n_accepted; the input forms OpenAI allows (content parts, a
// prompt array, max_completion_tokens) mean what the plain ones do; a
// stop string ends the text before it with "stop".
func TestHTTPCompletions(t *testing.T) {
	f := start(t, withHTTP(defaults()))
	const n = 24
	const p = "The jury said"
	chatPrompt, textPrompt := promptTokens(t, f.e, rendered(t, f.e, p)), promptTokens(t, f.e, p)
	var texts []string
	for _, tc := range []struct {
		name string
		chat bool
		body string
	}{
		{"chat", true, chatBody(t, p, n, nil)},
		{"chat, content parts, max_completion_tokens", true, jsonBody(t, map[string]any{
			"messages":              []map[string]any{{"role": "user", "content": []map[string]any{{"type": "text", "text": "The jury"}, {"type": "text", "text": " said"}}}},
			"max_completion_tokens": n, "temperature": 0, "n": 1, "stream": false})},
		{"completions", false, textBody(t, p, n, nil)},
		{"completions, prompt array", false, jsonBody(t, map[string]any{"prompt": []string{p}, "max_tokens": n, "top_p": 1})},
	} {
		path, prompt := textPath, textPrompt
		if tc.chat {
			path, prompt = chatPath, chatPrompt
		}
		resp, body := f.call(t, "POST", path, tc.body)
		r := whole(t, tc.name, tc.chat, resp, body, prompt, n)
		texts = append(texts, r.text)
	}
	if texts[0] != texts[1] || texts[2] != texts[3] {
		t.Errorf("the OpenAI input forms changed the text: chat %q and %q, completions %q and %q", texts[0], texts[1], texts[2], texts[3])
	}

	// A stop string from the middle of the greedy text ends it there.
	full := texts[2]
	words := strings.Fields(full)
	if len(words) < 2 {
		t.Fatalf("no word in the middle of %q for a stop string", full)
	}
	stop := words[len(words)/2]
	resp, body := f.call(t, "POST", textPath, textBody(t, p, n, map[string]any{"stop": stop}))
	r := whole(t, "stop string", false, resp, body, textPrompt, n)
	if want := full[:strings.Index(full, stop)]; r.text != want || r.finish != "stop" {
		t.Errorf("stop %q: text %q, finish %q; want %q, stop", stop, r.text, r.finish, want)
	}
	f.idle(t)
}

// TestHTTPStream: streamed chat and text completions (stream_options
// include_usage) parse strictly as server-sent events: every chunk is
// valid JSON of chat.completion.chunk or text_completion with one id, the
// first delta has role assistant, each block's specd.draft + specd.target
// is its content, exactly one chunk has a finish_reason (and the
// timings), the usage chunk has no choices, and [DONE] ends the stream.
// Greedy, the streamed text is the whole response's text and plain
// decoding's text of the target; without include_usage there is no usage
// chunk.
func TestHTTPStream(t *testing.T) {
	f := start(t, withHTTP(defaults()))
	const n = 48
	for _, tc := range []struct {
		name, prompt string
		chat         bool
	}{
		{"chat", "Once upon a time", true},
		{"completions", "The jury said", false},
	} {
		path, text, mk := textPath, tc.prompt, textBody
		if tc.chat {
			path, text, mk = chatPath, rendered(t, f.e, tc.prompt), chatBody
		}
		prompt := promptTokens(t, f.e, text)
		resp, body := f.call(t, "POST", path, mk(t, tc.prompt, n, map[string]any{"temperature": 0}))
		w := whole(t, tc.name+", whole", tc.chat, resp, body, prompt, n)

		ctx := genCtx(t)
		s := streamed(t, tc.name+", streamed", tc.chat, true, f.open(ctx, t, "POST", path, mk(t, tc.prompt, n, streamUsage)), prompt, n)
		if s.text != w.text || s.usage != w.usage || s.finish != w.finish {
			t.Errorf("%s: streamed %q (%+v, %s), whole %q (%+v, %s)", tc.name, s.text, s.usage, s.finish, w.text, w.usage, w.finish)
		}
		if want := plainText(t, f.e, text, n); s.text != want {
			t.Errorf("%s: streamed %q, plain decoding %q", tc.name, s.text, want)
		}
		if s.chunks < 2 {
			t.Errorf("%s: %d chunks: want the text in blocks", tc.name, s.chunks)
		}

		// Without include_usage: the same text, no usage chunk.
		s = streamed(t, tc.name+", no usage", tc.chat, false, f.open(ctx, t, "POST", path, mk(t, tc.prompt, n, map[string]any{"stream": true})), prompt, n)
		if s.text != w.text || s.timings.PredictedN != w.usage.CompletionTokens {
			t.Errorf("%s without usage: %q, %+v; want %q", tc.name, s.text, s.timings, w.text)
		}
	}
	f.idle(t)
}

// firstEvent reads the first event of a stream.
func firstEvent(t *testing.T, br *bufio.Reader) oaResponse {
	t.Helper()
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("first event: %q: %v", line, err)
	}
	data, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "data: ")
	if blank, err := br.ReadString('\n'); !ok || err != nil || blank != "\n" {
		t.Fatalf("first event %q, then %q, %v", line, blank, err)
	}
	var o oaResponse
	if err := strictJSON([]byte(data), &o); err != nil {
		t.Fatalf("first event %s: %v", data, err)
	}
	return o
}

// TestHTTPDisconnect: a client that goes away mid-stream (its request's
// context cancelled after the first event) frees its slot, and the
// request's log line says 499 (via http); the server goes on serving.
func TestHTTPDisconnect(t *testing.T) {
	f := start(t, withHTTP(defaults()))
	p := f.srv.Pipeline()
	attempts(t, 3, "disconnect", func(i int) bool {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		resp := f.open(ctx, t, "POST", chatPath, chatBody(t, prompts[i], long, streamUsage))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("streamed request: %s", resp.Status)
		}
		first := firstEvent(t, bufio.NewReader(resp.Body))
		id, ok := strings.CutPrefix(first.ID, "chatcmpl-")
		if !ok {
			t.Fatalf("first event id %q", first.ID)
		}
		if p.Active() != 1 {
			t.Logf("%d slots in use after the first event", p.Active())
		}
		cancel()
		resp.Body.Close()
		f.idle(t)
		entry := f.requestLog(t, id)
		if entry["finish"] == "length" && entry["code"] == nil {
			return false
		}
		if entry["code"] != float64(499) || entry["via"] != "http" {
			t.Errorf("request log %v, want code 499 via http", entry)
		}
		return true
	})
	resp, body := f.call(t, "POST", chatPath, chatBody(t, prompts[5], 8, nil))
	whole(t, "after", true, resp, body, promptTokens(t, f.e, rendered(t, f.e, prompts[5])), 8)
}

// oaErr checks that body is OpenAI's error object, exactly
// {"error":{"message","type","param","code"}}, and returns it.
func oaErr(t *testing.T, what string, resp *http.Response, body []byte) (msg, typ string, param, code *string) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q of error %s", what, ct, body)
	}
	var raw map[string]map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || len(raw) != 1 || raw["error"] == nil {
		t.Fatalf("%s: %s is not an OpenAI error (%v)", what, body, err)
	}
	if keys := slices.Sorted(maps.Keys(raw["error"])); !slices.Equal(keys, []string{"code", "message", "param", "type"}) {
		t.Errorf("%s: error keys %v", what, keys)
	}
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	if err := strictJSON(body, &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
		t.Errorf("%s: error %s: %v", what, body, err)
	}
	return e.Error.Message, e.Error.Type, e.Error.Param, e.Error.Code
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

// TestHTTPBadInput: every kind of bad request gets its status and an
// OpenAI-shaped error that names the problem (param: the field at fault),
// at once, while a good streamed request completes beside them.
func TestHTTPBadInput(t *testing.T) {
	s := withHTTP(defaults())
	s.maxPromptTokens = 16
	f := start(t, s)
	// The good request streams its first block before the bad ones go
	// in, and the rest after them.
	const goodN = 64
	good := f.open(genCtx(t), t, "POST", textPath, textBody(t, prompts[0], goodN, streamUsage))
	br := bufio.NewReader(good.Body)
	var first strings.Builder
	for range 2 { // the first event's data line and blank line
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the good request's first event: %q: %v", line, err)
		}
		first.WriteString(line)
	}
	good.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(strings.NewReader(first.String()), br), good.Body}

	msgs := `"messages": [{"role": "user", "content": "x"}]`
	const null = "<null>"
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		typ, param, code, want   string
	}{
		{"malformed JSON", "POST", chatPath, `{"messages": [`, 400, "", null, null, "malformed JSON"},
		{"not an object", "POST", textPath, `["x"]`, 400, "", null, null, "want a JSON object"},
		{"empty body", "POST", chatPath, ``, 400, "", null, null, "empty request body"},
		{"wrong type", "POST", chatPath, `{` + msgs + `, "max_tokens": "x"}`, 400, "", "max_tokens", null, "want an integer"},
		{"wrong type, stream", "POST", textPath, `{"prompt": "x", "stream": "yes"}`, 400, "", "stream", null, "true or false"},
		{"unknown field", "POST", chatPath, `{` + msgs + `, "max_token": 3}`, 400, "", "max_token", null, "unknown field"},
		{"missing messages", "POST", chatPath, `{"model": "specd-target"}`, 400, "", "messages", null, "required"},
		{"prompt on chat", "POST", chatPath, `{"prompt": "x"}`, 400, "", "prompt", null, "use messages"},
		{"missing prompt", "POST", textPath, `{"max_tokens": 3}`, 400, "", "prompt", null, "required"},
		{"empty prompt", "POST", textPath, `{"prompt": ""}`, 400, "", "prompt", null, "empty prompt"},
		{"bad role", "POST", chatPath, `{"messages": [{"role": "robot", "content": "x"}]}`, 400, "", "messages[0].role", null, "robot"},
		{"image part", "POST", chatPath, `{"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}`, 400, "", null, null, "only text"},
		{"invalid UTF-8", "POST", chatPath, "{\"messages\": [{\"role\": \"user\", \"content\": \"\xff\xfe\"}]}", 400, "", null, null, "not valid UTF-8"},
		{"prompt over the limit", "POST", textPath, `{"prompt": "` + strings.Repeat("The jury said that the city was not ", 4) + `"}`, 400, "", null, null, "over the limit of 16"},
		{"max_tokens 0", "POST", chatPath, `{` + msgs + `, "max_tokens": 0}`, 400, "", "max_tokens", null, "max_tokens"},
		{"max_completion_tokens huge", "POST", chatPath, `{` + msgs + `, "max_completion_tokens": 1000000}`, 400, "", "max_tokens", null, "1000000"},
		{"temperature -1", "POST", chatPath, `{` + msgs + `, "temperature": -1}`, 400, "", "temperature", null, "-1"},
		{"top_p 2", "POST", textPath, `{"prompt": "x", "top_p": 2}`, 400, "", "top_p", null, "(0, 1]"},
		{"speculative.k out of range", "POST", chatPath, `{` + msgs + `, "speculative": {"k": 5}}`, 400, "", "speculative.k", null, "[0, 4]"},
		{"n 2", "POST", chatPath, `{` + msgs + `, "n": 2}`, 400, "", "n", null, "only n = 1"},
		{"presence_penalty", "POST", textPath, `{"prompt": "x", "presence_penalty": 0.5}`, 400, "", "presence_penalty", null, "not supported"},
		{"unknown model", "POST", chatPath, `{"model": "gpt-4o", ` + msgs + `}`, 404, "", null, "model_not_found", `"gpt-4o" not found`},
		{"body over 1 MiB", "POST", textPath, `{"prompt": "` + strings.Repeat("a", 1<<20) + `"}`, 413, "", null, "request_too_large", "over the limit"},
		{"unknown path", "GET", "/v1/nothing", ``, 404, "", null, null, "/v1/nothing"},
		{"unknown path, POST", "POST", "/v2/chat/completions", `{}`, 404, "", null, null, "/v2/chat/completions"},
		{"GET on chat", "GET", chatPath, ``, 405, "", null, null, "GET"},
		{"GET on completions", "GET", textPath, ``, 405, "", null, null, "GET"},
		{"POST on models", "POST", "/v1/models", `{}`, 405, "", null, null, "POST"},
	} {
		resp, body := f.call(t, tc.method, tc.path, tc.body)
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %s, want %d: %s", tc.name, resp.Status, tc.status, body)
			continue
		}
		msg, typ, param, code := oaErr(t, tc.name, resp, body)
		if tc.typ == "" {
			tc.typ = "invalid_request_error"
		}
		if typ != tc.typ || deref(param) != tc.param || deref(code) != tc.code || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: type %q, param %s, code %s, message %q; want %q, %s, %s, one with %q",
				tc.name, typ, deref(param), deref(code), msg, tc.typ, tc.param, tc.code, tc.want)
		}
		if tc.status == 405 && resp.Header.Get("Allow") == "" {
			t.Errorf("%s: no Allow header", tc.name)
		}
	}

	if r := streamed(t, "good", false, true, good, promptTokens(t, f.e, prompts[0]), goodN); r.finish != "length" {
		t.Errorf("the good request: %s with %d tokens, want length with %d", r.finish, r.usage.CompletionTokens, goodN)
	}
	f.idle(t)
}

// TestHTTPQueueFull: with one slot and a queue of one, both taken by long
// streamed requests, a third request is refused at once with 429
// (rate_limit_error, queue_full); cancelling the two frees everything and
// the server serves again.
func TestHTTPQueueFull(t *testing.T) {
	s := withHTTP(defaults())
	s.slots, s.queue = 1, 1
	f := start(t, s)
	p := f.srv.Pipeline()
	attempts(t, 3, "queue full", func(i int) bool {
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		running := f.open(ctx, t, "POST", chatPath, chatBody(t, prompts[i], long, streamUsage))
		defer running.Body.Close()
		firstEvent(t, bufio.NewReader(running.Body))
		// A streamed response's header goes out once the request is admitted.
		queued := f.open(ctx, t, "POST", textPath, textBody(t, prompts[i+1], long, streamUsage))
		defer queued.Body.Close()
		if running.StatusCode != http.StatusOK || queued.StatusCode != http.StatusOK {
			t.Fatalf("the long requests: %s, %s", running.Status, queued.Status)
		}
		resp, body := f.call(t, "POST", chatPath, chatBody(t, prompts[i+2], 8, nil))
		stillBusy := p.Active() == 1 && p.Queued() == 1
		cancel()
		f.idle(t)
		if !stillBusy {
			return false
		}
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("third request: %s, want 429: %s", resp.Status, body)
		}
		msg, typ, _, code := oaErr(t, "queue full", resp, body)
		if typ != "rate_limit_error" || deref(code) != "queue_full" || !strings.Contains(msg, "busy") {
			t.Errorf("queue full: type %q, code %s, message %q", typ, deref(code), msg)
		}
		return true
	})
	resp, body := f.call(t, "POST", chatPath, chatBody(t, prompts[5], 8, nil))
	whole(t, "after", true, resp, body, promptTokens(t, f.e, rendered(t, f.e, prompts[5])), 8)
}

// TestHTTPAPIKey: with an API key set, the API answers 401
// (authentication_error, invalid_api_key) without the right bearer key
// and serves with it; /health needs no key.
func TestHTTPAPIKey(t *testing.T) {
	s := withHTTP(defaults())
	s.apiKey = "sekret"
	f := start(t, s)
	for _, tc := range []struct {
		name, method, path, body string
		header                   []string
	}{
		{"no key", "POST", chatPath, chatBody(t, "x", 4, nil), nil},
		{"wrong key", "POST", chatPath, chatBody(t, "x", 4, nil), []string{"Authorization", "Bearer wrong"}},
		{"key without Bearer", "POST", textPath, textBody(t, "x", 4, nil), []string{"Authorization", "sekret"}},
		{"key with a suffix", "POST", textPath, textBody(t, "x", 4, nil), []string{"Authorization", "Bearer sekret2"}},
		{"models, no key", "GET", "/v1/models", "", nil},
		{"metrics, no key", "GET", "/metrics", "", nil},
	} {
		resp, body := f.call(t, tc.method, tc.path, tc.body, tc.header...)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %s, want 401: %s", tc.name, resp.Status, body)
			continue
		}
		msg, typ, _, code := oaErr(t, tc.name, resp, body)
		if typ != "authentication_error" || deref(code) != "invalid_api_key" || !strings.Contains(msg, "API key") {
			t.Errorf("%s: type %q, code %s, message %q", tc.name, typ, deref(code), msg)
		}
	}
	if resp, body := f.call(t, "GET", "/health", ""); resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"status":"ok"`) {
		t.Errorf("/health without a key: %s %s", resp.Status, body)
	}
	key := []string{"Authorization", "Bearer sekret"}
	if resp, body := f.call(t, "GET", "/v1/models", "", key...); resp.StatusCode != http.StatusOK {
		t.Errorf("/v1/models with the key: %s %s", resp.Status, body)
	}
	resp, body := f.call(t, "POST", chatPath, chatBody(t, prompts[0], 8, nil), key...)
	whole(t, "with the key", true, resp, body, promptTokens(t, f.e, rendered(t, f.e, prompts[0])), 8)
	f.idle(t)
}

// TestHTTPHealth: /health says ok with the slots when ready, /v1/models
// lists specd-target, and GET / is the page with its prompt form.
func TestHTTPHealth(t *testing.T) {
	f := start(t, withHTTP(defaults()))
	resp, body := f.call(t, "GET", "/health", "")
	var h struct {
		Status     string `json:"status"`
		Slots      int    `json:"slots"`
		SlotsInUse int    `json:"slots_in_use"`
		Queued     int    `json:"queued"`
	}
	if resp.StatusCode != http.StatusOK || strictJSON(body, &h) != nil || h.Status != "ok" || h.Slots != 4 || h.SlotsInUse != 0 || h.Queued != 0 {
		t.Errorf("/health: %s %s", resp.Status, body)
	}

	resp, body = f.call(t, "GET", "/v1/models", "")
	var models struct {
		Object string `json:"object"`
		Data   []struct {
			ID      string         `json:"id"`
			Object  string         `json:"object"`
			Created int64          `json:"created"`
			OwnedBy string         `json:"owned_by"`
			Meta    map[string]any `json:"meta"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK || strictJSON(body, &models) != nil || models.Object != "list" || len(models.Data) != 1 {
		t.Fatalf("/v1/models: %s %s", resp.Status, body)
	}
	if m := models.Data[0]; m.ID != modelID || m.Object != "model" || m.Created <= 0 || m.OwnedBy == "" || m.Meta["k"] != float64(4) {
		t.Errorf("/v1/models: %+v", m)
	}

	resp, body = f.call(t, "GET", "/", "")
	page := string(body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(page, "<form") || !strings.Contains(page, "<textarea") || !strings.Contains(page, "/v1/") {
		t.Errorf("GET /: %s, %s, %d bytes: want the page with its form", resp.Status, resp.Header.Get("Content-Type"), len(body))
	}
}

// scrape is one parse of /metrics.
type scrape map[string]*dto.MetricFamily

func (f *fixture) scrape(t *testing.T) scrape {
	t.Helper()
	resp, body := f.call(t, "GET", "/metrics", "")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("/metrics: %s, %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse as Prometheus text: %v\n%s", err, body)
	}
	return fams
}

// value is the value of the counter or gauge name (its sample count, for
// a histogram) summed over its series whose labels include the name,
// value pairs of labels. Every specd series carries model_name.
func (s scrape) value(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	fam := s[name]
	if fam == nil {
		return 0 // a vector without series yet (no request has finished)
	}
	sum := 0.0
	for _, m := range fam.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if got["model_name"] != modelID {
			t.Errorf("%s%v: model_name %q", name, got, got["model_name"])
		}
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			match = match && got[labels[i]] == labels[i+1]
		}
		if !match {
			continue
		}
		switch fam.GetType() {
		case dto.MetricType_COUNTER:
			sum += m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			sum += m.GetGauge().GetValue()
		case dto.MetricType_HISTOGRAM:
			sum += float64(m.GetHistogram().GetSampleCount())
		default:
			t.Fatalf("%s: type %v", name, fam.GetType())
		}
	}
	return sum
}

// TestHTTPMetrics: /metrics parses as Prometheus text, and its counters
// move by what the requests did, HTTP (whole and streamed, chat and text)
// and NATS alike: generated and prompt tokens by the sums of the usages,
// draft and accepted tokens by the sums of the timings (or the NATS
// summary's acceptance), TTFT and end-to-end histograms and finished
// requests by one each; a refused request moves none of them; nothing is
// running afterwards, and the per-position counter has positions 0..k-1.
func TestHTTPMetrics(t *testing.T) {
	f := start(t, withHTTP(defaults()))
	k := f.srv.Pipeline().K()
	before := f.scrape(t)

	var prompt, completion, drafted, accepted, n int
	finished := map[string]int{} // by finish reason
	add := func(finish string, u oaUsage, tm oaTimings) {
		n++
		finished[finish]++
		prompt, completion, drafted, accepted = prompt+u.PromptTokens, completion+u.CompletionTokens, drafted+tm.DraftN, accepted+tm.DraftNAccepted
	}
	resp, body := f.call(t, "POST", chatPath, chatBody(t, prompts[0], 16, nil))
	r := whole(t, "chat", true, resp, body, promptTokens(t, f.e, rendered(t, f.e, prompts[0])), 16)
	add(r.finish, r.usage, r.timings)
	r = streamed(t, "streamed completions", false, true, f.open(genCtx(t), t, "POST", textPath, textBody(t, prompts[1], 24, streamUsage)), promptTokens(t, f.e, prompts[1]), 24)
	add(r.finish, r.usage, r.timings)
	resp, body = f.call(t, "POST", textPath, textBody(t, prompts[2], 20, map[string]any{"speculative": map[string]any{"draft": "ngram"}}))
	r = whole(t, "ngram completions", false, resp, body, promptTokens(t, f.e, prompts[2]), 20)
	add(r.finish, r.usage, r.timings)
	ns := collect(genCtx(t), f.nc.Conn, api.Request{ID: "nats", Prompt: prompts[3], MaxTokens: ptr(12)}, nil)
	checkDone(t, "nats", ns)
	if ns.sum == nil {
		t.Fatal("no summary of the NATS request")
	}
	u := ns.sum.Usage
	add(ns.sum.FinishReason, oaUsage{u.PromptTokens, u.CompletionTokens, u.TotalTokens}, oaTimings{DraftN: ns.sum.Acceptance.DraftTokens, DraftNAccepted: ns.sum.Acceptance.Accepted})
	if resp, _ := f.call(t, "POST", chatPath, `{"messages": []}`); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("refused request: %s", resp.Status)
	}
	f.idle(t)
	after := f.scrape(t)

	for _, c := range []struct {
		name string
		want int
	}{
		{"specd:generation_tokens_total", completion},
		{"specd:prompt_tokens_total", prompt},
		{"specd:spec_decode_num_draft_tokens_total", drafted},
		{"specd:spec_decode_num_accepted_tokens_total", accepted},
		{"specd:time_to_first_token_seconds", n},
		{"specd:e2e_request_latency_seconds", n},
		{"specd:request_queue_time_seconds", n},
		{"specd:num_requests_total", n},
		{"specd:request_success_total", n},
		{"specd:num_requests_failed_total", 0},
	} {
		if after[c.name] == nil {
			t.Errorf("no metric %s", c.name)
		}
		if d := after.value(t, c.name) - before.value(t, c.name); d != float64(c.want) {
			t.Errorf("%s moved by %g, want %d", c.name, d, c.want)
		}
	}
	if drafted == 0 || accepted == 0 {
		t.Errorf("%d draft tokens, %d accepted: want the draft model's", drafted, accepted)
	}
	for _, reason := range []string{"length", "stop"} {
		const name = "specd:request_success_total"
		if d := after.value(t, name, "finished_reason", reason) - before.value(t, name, "finished_reason", reason); d != float64(finished[reason]) {
			t.Errorf(`%s{finished_reason=%q} moved by %g, want %d`, name, reason, d, finished[reason])
		}
	}
	for _, g := range []string{"specd:num_requests_running", "specd:num_requests_waiting", "specd:kv_cache_usage_perc"} {
		if after[g].GetType() != dto.MetricType_GAUGE {
			t.Errorf("%s: type %v, want a gauge", g, after[g].GetType())
		}
		if v := after.value(t, g); v != 0 {
			t.Errorf("%s = %g afterwards, want 0", g, v)
		}
	}
	const perPos = "specd:spec_decode_num_accepted_tokens_per_pos_total"
	var positions []string
	perPosSum, prev := 0.0, -1.0
	for _, m := range after[perPos].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "position" {
				positions = append(positions, l.GetValue())
			}
		}
	}
	slices.Sort(positions)
	var want []string
	for i := range k {
		want = append(want, fmt.Sprint(i))
	}
	if !slices.Equal(positions, want) {
		t.Fatalf("%s positions %v, want %v", perPos, positions, want)
	}
	for _, pos := range want {
		v := after.value(t, perPos, "position", pos)
		if prev >= 0 && v > prev {
			t.Errorf("%s: position %s counts %g, more than the one before (%g)", perPos, pos, v, prev)
		}
		prev = v
		perPosSum += v - before.value(t, perPos, "position", pos)
	}
	// Drafts are accepted as a prefix: the positions' counts add up to
	// the accepted tokens.
	if perPosSum != float64(accepted) {
		t.Errorf("%s moved by %g in all, want the %d accepted tokens", perPos, perPosSum, accepted)
	}
}

// TestDurableReplay: with durable intake (JetStream in the embedded
// server, its store in a temporary directory), a session's token stream
// is kept: after a turn's done arrives on Listen, Replay from stream
// sequence 1 yields the same replies (seq, request id, text, tokens, the
// done summary), and from the StreamSeq of the second reply yields the
// rest; GenerateDurable completes with a done on its first attempt, with
// the text api.Generate gets for the same greedy request, and JetStream
// drops the acked request from the work queue.
func TestDurableReplay(t *testing.T) {
	s := defaults()
	s.durable = true
	s.nats = serve.NATSConfig{Listen: "127.0.0.1:-1", StoreDir: t.TempDir()}
	f := start(t, s)
	sess, err := api.NewSession(f.nc.Conn, "replay")
	if err != nil {
		t.Fatal(err)
	}
	tokens := listen(t, sess, api.SessionTokens)
	if err := sess.Post(api.Request{Prompt: prompts[0], MaxTokens: ptr(24)}); err != nil {
		t.Fatal(err)
	}
	live, sum, err := tokens.generation(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(live) < 2 {
		t.Fatalf("%d token replies: want several to replay from the second", len(live))
	}

	// replay reads the session's kept token replies from stream sequence
	// from up to the done reply.
	replay := func(from uint64) []api.Reply {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), refusal)
		defer cancel()
		seq, err := sess.Replay(ctx, api.SessionTokens, from)
		if err != nil {
			t.Fatal(err)
		}
		var out []api.Reply
		for r, err := range seq {
			if err != nil {
				t.Fatalf("replay from %d: %v", from, err)
			}
			out = append(out, r)
			if r.Status == api.StatusDone {
				return out
			}
		}
		t.Fatalf("replay from %d: %d replies and no done within %v", from, len(out), refusal)
		return nil
	}
	all := replay(1)
	if len(all) != len(live)+1 {
		t.Fatalf("replay: %d replies, want the %d token replies and the done", len(all), len(live))
	}
	for i, r := range all {
		if r.StreamSeq == 0 || (i > 0 && r.StreamSeq <= all[i-1].StreamSeq) || r.Seq != i+1 || r.RequestID != sum.ID || r.Session != "replay" {
			t.Errorf("replayed reply %d: stream seq %d, seq %d, id %q, session %q", i, r.StreamSeq, r.Seq, r.RequestID, r.Session)
		}
		if i < len(live) {
			if l := live[i]; r.Status != api.StatusToken || r.Chunk.Text != l.Chunk.Text || !slices.Equal(r.Chunk.Tokens, l.Chunk.Tokens) ||
				r.Drafted != l.Drafted || r.Accepted != l.Accepted {
				t.Errorf("replayed reply %d: %+v, live %+v", i, r, l)
			}
		}
	}
	if d := all[len(all)-1].Summary; d == nil || d.ID != sum.ID || d.Text != sum.Text || d.Text != joinText(live) || d.Usage != sum.Usage {
		t.Errorf("replayed done %+v, live %+v", d, sum)
	}
	rest := replay(all[1].StreamSeq)
	if len(rest) != len(all)-1 {
		t.Fatalf("replay from the second reply: %d replies, want %d", len(rest), len(all)-1)
	}
	for i, r := range rest {
		if w := all[i+1]; r.Seq != w.Seq || r.StreamSeq != w.StreamSeq || r.Chunk.Text != w.Chunk.Text || r.Status != w.Status {
			t.Errorf("replay from the second reply, %d: %+v, want %+v", i, r, w)
		}
	}

	// A durable request: one attempt, done, as a plain request.
	ctx := genCtx(t)
	req := api.Request{ID: "durable1", Prompt: prompts[1], MaxTokens: ptr(16)}
	seq, err := api.GenerateDurable(ctx, f.nc.Conn, req)
	if err != nil {
		t.Fatal(err)
	}
	var text string
	var done *api.Summary
	i := 0
	for r, err := range seq {
		if err != nil {
			t.Fatalf("durable request: %v", err)
		}
		i++
		if r.Attempt != 1 || r.Seq != i || r.RequestID != req.ID || (r.Status != api.StatusToken && r.Status != api.StatusDone) {
			t.Errorf("durable reply %d: attempt %d, seq %d, id %q, status %q", i, r.Attempt, r.Seq, r.RequestID, r.Status)
		}
		text += r.Chunk.Text
		done = r.Summary
	}
	if done == nil || done.Text != text || done.Usage.CompletionTokens != 16 {
		t.Fatalf("durable request: done %+v, text %q", done, text)
	}
	req.ID = "plain1"
	if p := collect(ctx, f.nc.Conn, req, nil); p.sum == nil || p.text != text {
		t.Errorf("the same request over specd.v1.generate: %q (%v), durable %q", p.text, p.err, text)
	}
	js, err := jetstream.New(f.nc.Conn)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, api.DurableStream)
	if err != nil {
		t.Fatal(err)
	}
	poll(t, "the durable request acked", func() bool {
		info, err := stream.Info(ctx)
		return err == nil && info.State.Msgs == 0
	})
	f.idle(t)
}

// TestHTTPLoading: a gateway opened before the models load answers /health
// with 503 "loading" and every API call with an OpenAI-shaped 503, then
// the server takes it over and /health says ok.
func TestHTTPLoading(t *testing.T) {
	gw, err := serve.ListenHTTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	base := "http://" + gw.Addr()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/health"); code != http.StatusServiceUnavailable || !strings.Contains(body, `"loading"`) {
		t.Errorf("loading: /health %d %s, want 503 loading", code, body)
	}
	if code, body := get("/v1/models"); code != http.StatusServiceUnavailable || !strings.Contains(body, `"error"`) || !strings.Contains(body, "loading") {
		t.Errorf("loading: /v1/models %d %s, want an OpenAI-shaped 503", code, body)
	}
	s := defaults()
	s.gateway = gw
	f := start(t, s)
	if f.base != base {
		t.Errorf("server serves on %s, not on the gateway's %s", f.base, base)
	}
	if code, body := get("/health"); code != http.StatusOK || !strings.Contains(body, `"ok"`) {
		t.Errorf("ready: /health %d %s, want 200 ok", code, body)
	}
}
