package tokenizer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// mapMeta is an in-memory Metadata for small synthetic vocabularies.
type mapMeta map[string]any

func (m mapMeta) String(k string) (string, bool)      { v, ok := m[k].(string); return v, ok }
func (m mapMeta) Strings(k string) ([]string, bool)   { v, ok := m[k].([]string); return v, ok }
func (m mapMeta) Float32s(k string) ([]float32, bool) { v, ok := m[k].([]float32); return v, ok }
func (m mapMeta) Int32s(k string) ([]int32, bool)     { v, ok := m[k].([]int32); return v, ok }
func (m mapMeta) Bool(k string) (bool, bool)          { v, ok := m[k].(bool); return v, ok }
func (m mapMeta) Uint(k string) (uint64, bool)        { v, ok := m[k].(uint64); return v, ok }

// spmMeta builds a SentencePiece vocabulary: <unk> <s> </s>, the given
// byte tokens, then pieces with descending scores, then extra tokens.
func spmMeta(bytes []byte, pieces []string, extra map[string]int32) mapMeta {
	tokens := []string{"<unk>", "<s>", "</s>"}
	types := []int32{ttUnknown, ttControl, ttControl}
	for _, b := range bytes {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, ttByte)
	}
	for _, p := range pieces {
		tokens = append(tokens, p)
		types = append(types, ttNormal)
	}
	for s, tt := range extra {
		tokens = append(tokens, s)
		types = append(types, tt)
	}
	scores := make([]float32, len(tokens))
	for i := range scores {
		scores[i] = -float32(i)
	}
	return mapMeta{
		"tokenizer.ggml.model":      "llama",
		"tokenizer.ggml.tokens":     tokens,
		"tokenizer.ggml.scores":     scores,
		"tokenizer.ggml.token_type": types,
	}
}

func mustNew(t *testing.T, md Metadata) *Tokenizer {
	t.Helper()
	tok, err := New(md)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func texts(tok *Tokenizer, ids []int32) []string {
	var s []string
	for _, id := range ids {
		s = append(s, tok.TokenText(id))
	}
	return s
}

func TestSPMMergesByScore(t *testing.T) {
	// "▁ab" must win over "▁a"+"b" because merges go by score: "ab" (higher)
	// first, then "▁ab".
	tok := mustNew(t, spmMeta(nil, []string{"ab", "▁ab", "▁a", "▁", "a", "b", "c"}, nil))
	ids, err := tok.Encode("ab c", false, false)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(texts(tok, ids), "|")
	if got != "▁ab|▁|c" {
		t.Errorf("Encode = %s, want ▁ab|▁|c", got)
	}
	if s := tok.Decode(ids); s != "ab c" {
		t.Errorf("Decode = %q", s)
	}
}

func TestSPMByteFallbackAndUnknown(t *testing.T) {
	tok := mustNew(t, spmMeta([]byte{0xC3, 0xA9}, []string{"▁", "x"}, nil))
	ids, err := tok.Encode("xé€", false, false)
	if err != nil {
		t.Fatal(err)
	}
	// é = C3 A9 has byte tokens; € = E2 82 AC has none and maps to <unk>.
	got := strings.Join(texts(tok, ids), "|")
	want := "▁|x|<0xC3>|<0xA9>|<unk>|<unk>|<unk>"
	if got != want {
		t.Errorf("Encode = %s, want %s", got, want)
	}
	// Without an unknown token such input is an error, not a panic.
	md := spmMeta(nil, []string{"▁", "x"}, nil)
	md["tokenizer.ggml.token_type"].([]int32)[0] = ttNormal
	md["tokenizer.ggml.unknown_token_id"] = uint64(1 << 40) // out of range: ignored
	tok2 := mustNew(t, md)
	tok2.unk = noToken
	if _, err := tok2.Encode("é", false, false); err == nil || !strings.Contains(err.Error(), "no token for byte 0xC3") {
		t.Errorf("Encode without byte or unknown token: err = %v", err)
	}
}

func TestSpecialPartition(t *testing.T) {
	extra := map[string]int32{"<a>": ttControl, "<a><b>": ttControl, "<u>": ttUserDefined}
	tok := mustNew(t, spmMeta([]byte("<>abu"), []string{"▁", "x"}, extra))
	idOf := func(s string) int32 { id, _ := tok.TokenID(s); return id }

	// Longest special token first; control tokens only with parseSpecial;
	// user-defined ones always.
	ids, _ := tok.Encode("<a><b>x<a>", false, true)
	if len(ids) != 4 || ids[0] != idOf("<a><b>") || ids[3] != idOf("<a>") {
		t.Errorf("parseSpecial: %v", texts(tok, ids))
	}
	ids, _ = tok.Encode("x<u>x", false, false)
	if got := strings.Join(texts(tok, ids), "|"); got != "▁|x|<u>|▁|x" {
		t.Errorf("user-defined without parseSpecial: %s", got)
	}
	ids, _ = tok.Encode("<a>", true, false)
	if ids[0] != tok.BOS() || len(ids) < 3 || tok.IsControl(ids[1]) {
		t.Errorf("control token matched without parseSpecial: %v", texts(tok, ids))
	}
}

func TestInvalidUTF8(t *testing.T) {
	tok := mustNew(t, spmMeta(nil, []string{"▁", "a"}, nil))
	for _, c := range []struct {
		in  string
		off int
	}{{"a\xff", 1}, {"\xe2\x82", 0}, {"ok \xed\xa0\x80", 3}} {
		_, err := tok.Encode(c.in, true, true)
		var ue *InvalidUTF8Error
		if !errors.As(err, &ue) || ue.Offset != c.off {
			t.Errorf("Encode(%q): err = %v, want invalid UTF-8 at byte %d", c.in, err, c.off)
			continue
		}
		if want := fmt.Sprintf("tokenizer: invalid UTF-8 at byte %d", c.off); err.Error() != want {
			t.Errorf("message %q, want %q", err.Error(), want)
		}
	}
}

func TestNewErrors(t *testing.T) {
	base := spmMeta(nil, []string{"a"}, nil)
	cases := []struct {
		name   string
		edit   func(m mapMeta)
		substr string
	}{
		{"no model", func(m mapMeta) { delete(m, "tokenizer.ggml.model") }, "missing tokenizer.ggml.model"},
		{"bad model", func(m mapMeta) { m["tokenizer.ggml.model"] = "t5" }, `unsupported tokenizer model "t5"`},
		{"no tokens", func(m mapMeta) { delete(m, "tokenizer.ggml.tokens") }, "tokenizer.ggml.tokens"},
		{"short scores", func(m mapMeta) { m["tokenizer.ggml.scores"] = []float32{1} }, "scores"},
		{"short types", func(m mapMeta) { m["tokenizer.ggml.token_type"] = []int32{1} }, "token types"},
		{"bpe no merges", func(m mapMeta) { m["tokenizer.ggml.model"] = "gpt2" }, "merges"},
		{"bad pre", func(m mapMeta) {
			m["tokenizer.ggml.model"] = "gpt2"
			m["tokenizer.ggml.merges"] = []string{}
			m["tokenizer.ggml.pre"] = "nonesuch"
		}, `pre-tokenizer "nonesuch"`},
	}
	for _, c := range cases {
		m := mapMeta{}
		for k, v := range base {
			m[k] = v
		}
		c.edit(m)
		_, err := New(m)
		if err == nil || !strings.Contains(err.Error(), c.substr) || !strings.HasPrefix(err.Error(), "tokenizer: ") {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.substr)
		}
	}
}

func TestDecoderHoldsIncompleteUTF8(t *testing.T) {
	tok := mustNew(t, spmMeta([]byte{0xE2, 0x82, 0xAC, 0xF0, 0x9F}, []string{"▁", "a", "▁a"}, nil))
	id := func(s string) int32 {
		v, ok := tok.TokenID(s)
		if !ok {
			t.Fatalf("no token %q", s)
		}
		return v
	}
	d := tok.NewDecoder()
	steps := []struct {
		id   int32
		want string
	}{
		{id("▁a"), "a"}, // leading space of the first token stripped
		{id("<0xE2>"), ""},
		{id("<0x82>"), ""},
		{id("<0xAC>"), "€"},
		{id("▁a"), " a"},
		{id("<0xF0>"), ""},
		{id("<0x9F>"), ""},
		{id("<s>"), ""}, // control tokens render as nothing by default
	}
	for i, s := range steps {
		if got := d.Add(s.id); got != s.want {
			t.Errorf("step %d: Add(%q) = %q, want %q", i, tok.TokenText(s.id), got, s.want)
		}
	}
	if got := d.Flush(); got != "\xf0\x9f" {
		t.Errorf("Flush = %q, want the held bytes", got)
	}
	d.SetSpecial(true)
	d.SetStripLeadingSpace(false)
	if got := d.Add(id("▁a")) + d.Add(id("<s>")); got != " a<s>" {
		t.Errorf("after Flush with special and no strip: %q", got)
	}
}

func TestDecoderRealVocabs(t *testing.T) {
	const text = "Ünïcödé 🦙 llama 日本語 ǅ 𝔘"
	for _, name := range []string{"llama-spm", "llama-bpe", "qwen2"} {
		t.Run(name, func(t *testing.T) {
			tok := loadVocab(t, name)
			ids, err := tok.Encode(text, false, false)
			if err != nil {
				t.Fatal(err)
			}
			d := tok.NewDecoder()
			var sb strings.Builder
			held := 0
			for _, id := range ids {
				s := d.Add(id)
				if !utf8.ValidString(s) {
					t.Fatalf("Add returned invalid UTF-8 %q", s)
				}
				if s == "" {
					held++
				}
				sb.WriteString(s)
			}
			sb.WriteString(d.Flush())
			if sb.String() != text {
				t.Errorf("streamed %q, want %q", sb.String(), text)
			}
			if held == 0 {
				t.Errorf("no token was held back; the text should split characters over tokens")
			}
		})
	}
}

func TestCheckCompatible(t *testing.T) {
	a := mustNew(t, spmMeta(nil, []string{"a", "b", "c", "d", "e"}, nil))
	if err := CheckCompatible(a, a); err != nil {
		t.Errorf("same vocabulary: %v", err)
	}
	b := mustNew(t, spmMeta(nil, []string{"a", "b", "c", "X", "e"}, nil))
	var ie *IncompatibleError
	err := CheckCompatible(a, b)
	if !errors.As(err, &ie) || ie.ID != 6 || ie.TargetText != "d" || ie.DraftText != "X" {
		t.Errorf("differing token: %v", err)
	}
	if err != nil && !strings.Contains(err.Error(), `token 6: target "d", draft "X"`) {
		t.Errorf("message %q does not name the mismatch", err)
	}
	// Differences below id 5 are allowed, as in llama.cpp.
	c := mustNew(t, spmMeta(nil, []string{"Z", "b", "c", "d", "e"}, nil))
	if err := CheckCompatible(a, c); err != nil {
		t.Errorf("difference below id 5: %v", err)
	}
	long := make([]string, 200)
	for i := range long {
		long[i] = fmt.Sprint("t", i)
	}
	if err := CheckCompatible(a, mustNew(t, spmMeta(nil, long, nil))); err == nil || !strings.Contains(err.Error(), "differ by") {
		t.Errorf("vocab size difference: %v", err)
	}
	md := spmMeta(nil, []string{"a", "b", "c", "d", "e"}, nil)
	md["tokenizer.ggml.bos_token_id"] = uint64(2)
	if err := CheckCompatible(a, mustNew(t, md)); err == nil || !strings.Contains(err.Error(), "BOS") {
		t.Errorf("BOS mismatch: %v", err)
	}
	if l, q := peerVocab(t, "llama-bpe"), peerVocab(t, "qwen2"); l != nil && q != nil {
		if err := CheckCompatible(l, q); err == nil {
			t.Errorf("llama-bpe and qwen2 reported compatible")
		}
	}
}

// peerVocab is loadVocab that returns nil instead of skipping.
func peerVocab(t *testing.T, name string) *Tokenizer {
	if _, err := os.Stat(filepath.Join(peerModels(), "ggml-vocab-"+name+".gguf")); err != nil {
		return nil
	}
	return loadVocab(t, name)
}

func TestTemplateByName(t *testing.T) {
	msgs := []Message{{"system", "S"}, {"user", "U"}}
	cases := map[string]string{
		"chatml":     "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n",
		"llama3":     "<|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nU<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
		"llama2":     "[INST] S\nU [/INST]",
		"llama2-sys": "[INST] <<SYS>>\nS\n<</SYS>>\n\nU [/INST]",
	}
	for name, want := range cases {
		tmpl, err := TemplateByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := ApplyTemplate(tmpl, msgs, true); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if _, err := TemplateByName("jinja"); !errors.Is(err, ErrUnknownTemplate) {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := DetectTemplate("{{ messages }}"); !errors.Is(err, ErrUnknownTemplate) {
		t.Errorf("unknown template: %v", err)
	}
	if _, err := DetectTemplate("{% if x %}<start_of_turn>{% endif %}"); err == nil || !strings.Contains(err.Error(), "gemma") {
		t.Errorf("gemma template: %v", err)
	}
}

// TestConcurrentEncode encodes from several goroutines at once (sharing the
// word cache) and checks every result against a fresh sequential encode.
func TestConcurrentEncode(t *testing.T) {
	tok := loadVocab(t, "qwen2")
	inputs := []string{"Hello world, hello world!", "日本語 and English mixed 123456", "  spaces   and\ttabs\n", "I'm sure they're here"}
	want := make([][]int32, len(inputs))
	for i, s := range inputs {
		ids, err := tok.Encode(s, true, true)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = ids
	}
	tok.cache.reset()
	const workers = 4
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for rep := range 50 {
				i := (w + rep) % len(inputs)
				ids, err := tok.Encode(inputs[i], true, true)
				if err == nil && !slices.Equal(ids, want[i]) {
					err = fmt.Errorf("Encode(%q) = %v, want %v", inputs[i], ids, want[i])
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	timeout := time.After(30 * time.Second)
	for range workers {
		select {
		case err := <-errs:
			if err != nil {
				t.Error(err)
			}
		case <-timeout:
			t.Fatal("workers did not finish in 30s")
		}
	}
}
