package tokenizer

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/specd-dev/specd/internal/peertest"
)

// The golden files in testdata were produced by llama.cpp itself (libllama
// from node-llama-cpp, through llama_tokenize, llama_detokenize,
// llama_vocab_is_eog and llama_chat_apply_template).

func readJSONL(t *testing.T, path string, each func(line []byte)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		each(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

type encodeMeta struct {
	EOG           []int32 `json:"eog"`
	BOS, EOS, EOT int32
	AddBOS        bool `json:"add_bos"`
	AddEOS        bool `json:"add_eos"`
}

type encodeGolden struct {
	Text           string  `json:"text"`
	AddSpecial     bool    `json:"add_special"`
	ParseSpecial   bool    `json:"parse_special"`
	IDs            []int32 `json:"ids"`
	Detok          string  `json:"detok"`
	DetokNoSpecial string  `json:"detok_nospecial"`
}

// TestEncodeGolden checks Encode with every add_special/parse_special
// combination, Decode/Detokenize, the special ids and the end-of-generation
// set against llama.cpp's output.
func TestEncodeGolden(t *testing.T) {
	for _, name := range []string{"llama-spm", "llama-bpe", "qwen2", "gpt-2", "starcoder", "deepseek-llm", "qwen35", "phi-3"} {
		t.Run(name, func(t *testing.T) {
			tok := loadVocab(t, name)
			first := true
			n := 0
			readJSONL(t, filepath.Join("testdata", "encode-"+name+".golden.jsonl"), func(line []byte) {
				if first {
					first = false
					var m encodeMeta
					if err := json.Unmarshal(line, &m); err != nil {
						t.Fatal(err)
					}
					var eog []int32
					for id := range int32(tok.VocabSize()) {
						if tok.IsEOG(id) {
							eog = append(eog, id)
						}
					}
					if !slices.Equal(eog, m.EOG) {
						t.Errorf("EOG tokens %v, want %v", eog, m.EOG)
					}
					if tok.BOS() != m.BOS || tok.EOS() != m.EOS || tok.EOT() != m.EOT || tok.AddBOS() != m.AddBOS || tok.AddEOS() != m.AddEOS {
						t.Errorf("bos %d eos %d eot %d add_bos %v add_eos %v, want %+v", tok.BOS(), tok.EOS(), tok.EOT(), tok.AddBOS(), tok.AddEOS(), m)
					}
					return
				}
				var g encodeGolden
				if err := json.Unmarshal(line, &g); err != nil {
					t.Fatal(err)
				}
				n++
				got, err := tok.Encode(g.Text, g.AddSpecial, g.ParseSpecial)
				if err != nil {
					t.Errorf("Encode(%q, %v, %v): %v", g.Text, g.AddSpecial, g.ParseSpecial, err)
					return
				}
				if !slices.Equal(got, g.IDs) {
					t.Errorf("Encode(%q, addSpecial=%v, parseSpecial=%v):\n got  %v\n want %v", g.Text, g.AddSpecial, g.ParseSpecial, got, g.IDs)
				}
				if s := tok.Decode(g.IDs); s != g.Detok {
					t.Errorf("Decode(%v) = %q, want %q", g.IDs, s, g.Detok)
				}
				if s := tok.Detokenize(g.IDs, false); s != g.DetokNoSpecial {
					t.Errorf("Detokenize(%v, false) = %q, want %q", g.IDs, s, g.DetokNoSpecial)
				}
			})
			t.Logf("%s: %d golden cases", name, n)
		})
	}
}

type chatGolden struct {
	Template string  `json:"template"`
	Set      int     `json:"set"`
	Add      bool    `json:"add"`
	Out      *string `json:"out"`
}

var chatSets = [][]Message{
	{{"system", "You are a helpful assistant."}, {"user", "Hello"}, {"assistant", "Hi there"}, {"user", "Who are you"}},
	{{"user", "  spaced\n"}, {"assistant", " reply "}, {"user", "again"}},
	{{"system", "\tsys "}, {"user", "only"}},
}

// mustRender are real templates of the families specd serves.
var mustRender = []string{
	"templates/Qwen-Qwen2.5-7B-Instruct.jinja",
	"templates/Qwen-Qwen3-0.6B.jinja",
	"templates/meta-llama-Llama-3.1-8B-Instruct.jinja",
	"templates/meta-llama-Llama-3.2-3B-Instruct.jinja",
	"templates/meta-llama-Llama-3.3-70B-Instruct.jinja",
	"templates/NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
}

// TestChatGolden renders llama.cpp's named templates and the real Jinja
// templates in .cache/llama.cpp/models/templates and compares with
// llm_chat_apply_template. A template llama.cpp renders but DetectTemplate
// refuses is only allowed for families this package does not support.
func TestChatGolden(t *testing.T) {
	rendered := map[string]bool{}
	readJSONL(t, filepath.Join("testdata", "chat.golden.jsonl"), func(line []byte) {
		var g chatGolden
		if err := json.Unmarshal(line, &g); err != nil {
			t.Fatal(err)
		}
		text := g.Template
		if strings.HasPrefix(g.Template, "templates/") {
			b, err := os.ReadFile(peertest.File(t, filepath.Join(peerModels(), g.Template)))
			if err != nil {
				t.Fatal(err)
			}
			text = string(b)
		}
		tmpl, err := DetectTemplate(text)
		if err != nil {
			if !errors.Is(err, ErrUnknownTemplate) {
				t.Errorf("%s: error %v does not wrap ErrUnknownTemplate", g.Template, err)
			}
			if g.Out != nil && slices.Contains(mustRender, g.Template) {
				t.Errorf("%s: %v, but llama.cpp renders it", g.Template, err)
			}
			return
		}
		if g.Out == nil {
			t.Errorf("%s: detected as %s, but llama.cpp does not know it", g.Template, tmpl.Name)
			return
		}
		got := ApplyTemplate(tmpl, chatSets[g.Set], g.Add)
		if got != *g.Out {
			t.Errorf("%s (%s) set %d add %v:\n got  %q\n want %q", g.Template, tmpl.Name, g.Set, g.Add, got, *g.Out)
		}
		rendered[g.Template] = true
	})
	for _, m := range mustRender {
		if _, err := os.Stat(filepath.Join(peerModels(), m)); err == nil && !rendered[m] {
			t.Errorf("%s not rendered", m)
		}
	}
	t.Logf("%d templates rendered identically", len(rendered))
}
