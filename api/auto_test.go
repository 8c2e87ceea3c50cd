package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/specd-dev/specd/api"
)

// TestSpeculativeAuto: speculative.auto asks for the cost-aware draft
// length; it decodes strictly, is valid only on a server that chooses
// draft lengths by cost and not together with adaptive, and its JSON
// names are "auto" in the request and in the stats.
func TestSpeculativeAuto(t *testing.T) {
	auto := api.Limits{MaxTokens: 256, K: 8, Auto: true}
	fixed := api.Limits{MaxTokens: 256, K: 8}
	for _, tc := range []struct {
		name, body string
		limits     api.Limits
		field      string // "" valid
		want       []string
	}{
		{"auto", `{"prompt": "x", "speculative": {"auto": true}}`, auto, "", nil},
		{"auto up to k 2", `{"prompt": "x", "speculative": {"auto": true, "k": 2}}`, auto, "", nil},
		{"auto false on a fixed server", `{"prompt": "x", "speculative": {"auto": false, "k": 2}}`, fixed, "", nil},
		{"auto false, adaptive", `{"prompt": "x", "speculative": {"auto": false, "adaptive": true}}`, auto, "", nil},
		{"auto on a fixed server", `{"prompt": "x", "speculative": {"auto": true}}`, fixed, "speculative.auto", []string{"fixed -k", "-k auto"}},
		{"auto and adaptive", `{"prompt": "x", "speculative": {"auto": true, "adaptive": true}}`, auto, "speculative.auto", []string{"auto and adaptive exclude each other"}},
		{"auto past the server's k", `{"prompt": "x", "speculative": {"auto": true, "k": 9}}`, auto, "speculative.k", []string{"[0, 8]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := api.DecodeRequest([]byte(tc.body))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if r.Speculative == nil || r.Speculative.Auto == nil {
				t.Fatalf("decoded %+v: no speculative.auto", r.Speculative)
			}
			err = r.Validate(tc.limits)
			if tc.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			checkBad(t, err, tc.field, tc.want...)
		})
	}
	// A string is not a boolean; the field is named.
	_, err := api.DecodeRequest([]byte(`{"prompt": "x", "speculative": {"auto": "yes"}}`))
	checkBad(t, err, "speculative.auto", "want true or false")

	b, err := json.Marshal(api.Request{Prompt: "x", Speculative: &api.Speculative{Auto: ptr(true)}})
	if err != nil || !strings.Contains(string(b), `"speculative":{"auto":true}`) {
		t.Errorf("request JSON %s (%v)", b, err)
	}
	b, err = json.Marshal(api.Stats{K: 8, Auto: true})
	if err != nil || !strings.Contains(string(b), `"k":8,"auto":true`) {
		t.Errorf("stats JSON %s (%v)", b, err)
	}
}
