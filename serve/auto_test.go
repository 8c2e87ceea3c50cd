package serve_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nuid"

	"github.com/specd-dev/specd/api"
)

// TestAutoOverNATS: on a server running -k auto, a request may keep the
// cost-aware draft length (speculative.auto true, with or without its own
// k as the cap) or turn it off (a fixed k); every one decodes the plain
// loop's tokens. Asking for auto together with adaptive, or on a server
// of a fixed k, is a 400 that names speculative.auto, while the good
// requests go on; the stats say which server can choose.
func TestAutoOverNATS(t *testing.T) {
	const prompt, n = "The jury said", 40
	f := start(t, func() setup { s := defaults(); s.auto = true; return s }())
	if !f.srv.Pipeline().Auto() || !f.srv.Stats().Auto {
		t.Fatal("a -k auto server does not say it chooses draft lengths by cost")
	}
	want := plain(t, f.e, prompt, n)
	for _, sp := range []*api.Speculative{nil, {Auto: ptr(true)}, {Auto: ptr(true), K: ptr(2)}, {Auto: ptr(false)}, {Auto: ptr(false), K: ptr(3)}, {Auto: ptr(false), Adaptive: ptr(true)}} {
		id := nuid.Next()
		s := collect(genCtx(t), f.nc.Conn, api.Request{ID: id, Prompt: prompt, MaxTokens: ptr(n), Speculative: sp}, nil)
		checkDone(t, id, s)
		if !slices.Equal(s.tokens, want) {
			t.Errorf("speculative %+v: %v, plain decoding %v", sp, s.tokens, want)
		}
	}
	msgs, ended := rawEnd(t, f.nc.Conn, []byte(`{"prompt": "x", "speculative": {"auto": true, "adaptive": true}}`))
	errorReply(t, "auto and adaptive", msgs, ended, api.CodeBadRequest, "speculative.auto")
	f.idle(t)

	fixed := start(t, defaults())
	if fixed.srv.Stats().Auto {
		t.Error("a fixed -k server says it chooses draft lengths by cost")
	}
	msgs, ended = rawEnd(t, fixed.nc.Conn, []byte(`{"prompt": "x", "speculative": {"auto": true}}`))
	errorReply(t, "auto on a fixed server", msgs, ended, api.CodeBadRequest, "-k auto")
	id := nuid.Next()
	s := collect(genCtx(t), fixed.nc.Conn, api.Request{ID: id, Prompt: prompt, MaxTokens: ptr(n), Speculative: &api.Speculative{Auto: ptr(false)}}, nil)
	checkDone(t, id, s)
	if !slices.Equal(s.tokens, want) {
		t.Errorf("auto false on a fixed server: %v, plain decoding %v", s.tokens, want)
	}
	fixed.idle(t)
}

// TestAutoOverHTTP: the same through the OpenAI gateway: the auto field
// of the speculative extension decodes the plain loop's text, and bad
// uses are 400s whose param is speculative.auto.
func TestAutoOverHTTP(t *testing.T) {
	const prompt, n = "The jury said", 24
	f := start(t, func() setup { s := withHTTP(defaults()); s.auto = true; return s }())
	want := plainText(t, f.e, prompt, n)
	resp, body := f.call(t, "GET", "/v1/models", "")
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"auto":true`) || !strings.Contains(string(body), `"k":8`) {
		t.Errorf("/v1/models of a -k auto server: %s %s", resp.Status, body)
	}
	for _, sp := range []map[string]any{{"auto": true}, {"auto": true, "k": 3}, {"auto": false, "k": 2}} {
		resp, body := f.call(t, "POST", textPath, textBody(t, prompt, n, map[string]any{"speculative": sp}))
		r := whole(t, "auto completions", false, resp, body, promptTokens(t, f.e, prompt), n)
		if r.text != want {
			t.Errorf("speculative %v: %q, plain decoding %q", sp, r.text, want)
		}
	}
	for _, tc := range []struct{ name, body, want string }{
		{"auto a string", `{"prompt": "x", "speculative": {"auto": "yes"}}`, "true or false"},
		{"auto and adaptive", `{"prompt": "x", "speculative": {"auto": true, "adaptive": true}}`, "exclude each other"},
	} {
		resp, body := f.call(t, "POST", textPath, tc.body)
		if resp.StatusCode != 400 {
			t.Errorf("%s: %s: %s", tc.name, resp.Status, body)
			continue
		}
		msg, _, param, _ := oaErr(t, tc.name, resp, body)
		if deref(param) != "speculative.auto" || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: param %s, message %q; want speculative.auto and %q", tc.name, deref(param), msg, tc.want)
		}
	}
	f.idle(t)

	fixed := start(t, withHTTP(defaults()))
	resp, body = fixed.call(t, "POST", textPath, `{"prompt": "x", "speculative": {"auto": true}}`)
	if resp.StatusCode != 400 {
		t.Fatalf("auto on a fixed server: %s: %s", resp.Status, body)
	}
	if msg, _, param, _ := oaErr(t, "auto on a fixed server", resp, body); deref(param) != "speculative.auto" || !strings.Contains(msg, "-k auto") {
		t.Errorf("auto on a fixed server: param %s, message %q", deref(param), msg)
	}
	fixed.idle(t)
}
