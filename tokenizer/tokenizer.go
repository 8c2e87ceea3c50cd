// Package tokenizer rebuilds a model's tokenizer from its GGUF metadata
// (tokenizer.ggml.*) and reproduces llama.cpp's tokenization exactly:
// SentencePiece (model "llama", llm_tokenizer_spm) and byte-level BPE (model
// "gpt2", llm_tokenizer_bpe with the pre-tokenizer named by
// tokenizer.ggml.pre), special-token partitioning, BOS/EOS insertion,
// detokenization (also streaming, UTF-8 safe), chat templates and the
// draft/target vocabulary check.
//
// Design: a Tokenizer is immutable after New and safe for concurrent use.
// Encode first splits the text at special-token occurrences (the longest
// special tokens first, as llama.cpp's tokenizer_st_partition does), then
// runs the SentencePiece or BPE algorithm on each remaining text fragment.
// Text must be valid UTF-8: Encode returns an *InvalidUTF8Error naming the
// byte offset otherwise (llama.cpp would silently mangle such input).
package tokenizer

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Metadata is the part of a GGUF file the tokenizer reads; *gguf.File
// satisfies it. Each getter reports whether key is present with that type.
type Metadata interface {
	String(key string) (string, bool)
	Strings(key string) ([]string, bool)
	Float32s(key string) ([]float32, bool)
	Int32s(key string) ([]int32, bool)
	Uint(key string) (uint64, bool)
	Bool(key string) (bool, bool)
}

// Type is the tokenizer algorithm.
type Type int

const (
	// SPM is SentencePiece (tokenizer.ggml.model = "llama").
	SPM Type = iota + 1
	// BPE is byte-level BPE (tokenizer.ggml.model = "gpt2").
	BPE
)

func (t Type) String() string {
	switch t {
	case SPM:
		return "SPM"
	case BPE:
		return "BPE"
	}
	return fmt.Sprintf("Type(%d)", int(t))
}

// Attr is a token's attribute bit set, as llama.cpp's llama_token_attr.
type Attr uint32

// Token attributes.
const (
	AttrUnknown     Attr = 1 << 0
	AttrUnused      Attr = 1 << 1
	AttrNormal      Attr = 1 << 2
	AttrControl     Attr = 1 << 3
	AttrUserDefined Attr = 1 << 4
	AttrByte        Attr = 1 << 5
	AttrLStrip      Attr = 1 << 7 // spaces before the token are dropped when matched
	AttrRStrip      Attr = 1 << 8 // spaces after the token are dropped when matched
)

// GGUF tokenizer.ggml.token_type values.
const (
	ttUndefined   = 0
	ttNormal      = 1
	ttUnknown     = 2
	ttControl     = 3
	ttUserDefined = 4
	ttUnused      = 5
	ttByte        = 6
)

// InvalidUTF8Error reports text that is not valid UTF-8.
type InvalidUTF8Error struct {
	Offset int // byte offset of the first invalid sequence
}

func (e *InvalidUTF8Error) Error() string {
	return fmt.Sprintf("tokenizer: invalid UTF-8 at byte %d", e.Offset)
}

// Tokenizer encodes text to token ids and back. It is safe for concurrent use.
type Tokenizer struct {
	typ    Type
	model  string // tokenizer.ggml.model
	pre    string // tokenizer.ggml.pre
	preTok *preTokenizer

	tokens   []string
	scores   []float32
	attrs    []Attr
	toID     map[string]int32
	ranks    map[mergePair]int32 // BPE merges whose halves are not both tokens
	idMerges map[uint64]idMerge  // BPE merges of two tokens, by pairKey of their ids
	charTok  [512]int32          // BPE: token of each one-character text below U+0200 (the GPT-2 byte characters), -1 if none
	pairs    map[uint64]struct{} // SPM: adjacent code points inside some token

	bos, eos, eot, eom, unk, pad int32 // -1 when absent

	addBOS, addEOS bool
	addSpacePrefix bool
	ignoreMerges   bool
	cleanSpaces    bool

	eog     map[int32]bool
	special []int32  // control, user-defined and unknown tokens, longest text first
	pieces  []string // token_to_piece(id, special=true)
	byteTok [256]int32

	chatTemplate string

	cache wordCache
}

type mergePair struct{ a, b string }

const noToken = int32(-1)

// New builds the tokenizer described by the tokenizer.ggml.* keys of md.
func New(md Metadata) (*Tokenizer, error) {
	model, ok := md.String("tokenizer.ggml.model")
	if !ok {
		return nil, errors.New("tokenizer: missing tokenizer.ggml.model")
	}
	t := &Tokenizer{model: model, bos: noToken, eos: noToken, eot: noToken, eom: noToken, unk: noToken, pad: noToken}
	t.pre, _ = md.String("tokenizer.ggml.pre")
	t.chatTemplate, _ = md.String("tokenizer.chat_template")

	switch model {
	case "llama":
		t.typ = SPM
		t.bos, t.eos, t.unk = 1, 2, 0
		t.addSpacePrefix = true
		t.addBOS = true
	case "gpt2":
		t.typ = BPE
		t.bos, t.eos = 11, 11
		t.cleanSpaces = true
		merges, ok := md.Strings("tokenizer.ggml.merges")
		if !ok {
			return nil, errors.New("tokenizer: BPE model without tokenizer.ggml.merges")
		}
		t.ranks = make(map[mergePair]int32, len(merges))
		for i, m := range merges {
			var p mergePair
			// Split at the first space after the first byte, as llama.cpp does.
			if j := strings.IndexByte(m[min(1, len(m)):], ' '); j >= 0 {
				j += min(1, len(m))
				p = mergePair{m[:j], m[j+1:]}
			}
			if _, dup := t.ranks[p]; !dup {
				t.ranks[p] = int32(i)
			}
		}
		pt, err := newPreTokenizer(t.pre)
		if err != nil {
			return nil, err
		}
		t.preTok = pt
		t.ignoreMerges = pt.ignoreMerges
		t.cleanSpaces = pt.cleanSpaces
		t.addBOS = pt.addBOS
	default:
		return nil, fmt.Errorf("tokenizer: unsupported tokenizer model %q (want \"llama\" or \"gpt2\")", model)
	}
	if v, ok := md.Bool("tokenizer.ggml.add_space_prefix"); ok {
		t.addSpacePrefix = v
	}

	tokens, ok := md.Strings("tokenizer.ggml.tokens")
	if !ok || len(tokens) == 0 {
		return nil, errors.New("tokenizer: missing or empty tokenizer.ggml.tokens")
	}
	if len(tokens) > 1<<31-1 {
		return nil, errors.New("tokenizer: vocabulary too large")
	}
	n := len(tokens)
	t.tokens = make([]string, n)
	t.scores = make([]float32, n)
	t.attrs = make([]Attr, n)
	t.toID = make(map[string]int32, n)
	if s, ok := md.Float32s("tokenizer.ggml.scores"); ok {
		if len(s) < n {
			return nil, fmt.Errorf("tokenizer: %d scores for %d tokens", len(s), n)
		}
		copy(t.scores, s)
	} else if s, ok := md.Int32s("tokenizer.ggml.scores"); ok {
		if len(s) < n {
			return nil, fmt.Errorf("tokenizer: %d scores for %d tokens", len(s), n)
		}
		for i := range t.scores {
			t.scores[i] = float32(s[i])
		}
	}
	types, hasTypes := md.Int32s("tokenizer.ggml.token_type")
	if hasTypes && len(types) < n {
		return nil, fmt.Errorf("tokenizer: %d token types for %d tokens", len(types), n)
	}
	for i, w := range tokens {
		if w == "" {
			w = fmt.Sprintf("[EMPTY_%d]", i)
		}
		t.tokens[i] = w
		t.toID[w] = int32(i)
		t.attrs[i] = AttrNormal
		if hasTypes {
			switch types[i] {
			case ttUnknown:
				t.attrs[i] = AttrUnknown
			case ttUnused:
				t.attrs[i] = AttrUnused
			case ttNormal:
				t.attrs[i] = AttrNormal
			case ttControl:
				t.attrs[i] = AttrControl
			case ttUserDefined:
				t.attrs[i] = AttrUserDefined
			case ttByte:
				t.attrs[i] = AttrByte
			default:
				t.attrs[i] = 0
			}
		}
	}

	// Special token ids: metadata overrides the model's defaults; ids out of
	// range are ignored as llama.cpp does.
	setID := func(key string, id *int32) {
		if *id >= int32(n) {
			*id = noToken
		}
		if v, ok := md.Uint(key); ok && v < uint64(n) {
			*id = int32(v)
		}
	}
	setID("tokenizer.ggml.bos_token_id", &t.bos)
	setID("tokenizer.ggml.eos_token_id", &t.eos)
	setID("tokenizer.ggml.eot_token_id", &t.eot)
	setID("tokenizer.ggml.eom_token_id", &t.eom)
	setID("tokenizer.ggml.unknown_token_id", &t.unk)
	setID("tokenizer.ggml.padding_token_id", &t.pad)
	if v, ok := md.Bool("tokenizer.ggml.add_bos_token"); ok {
		t.addBOS = v
	}
	if v, ok := md.Bool("tokenizer.ggml.add_eos_token"); ok {
		t.addEOS = v
	}
	if t.addBOS && t.bos < 0 {
		return nil, errors.New("tokenizer: add_bos_token set but no BOS token")
	}
	if t.addEOS && t.eos < 0 {
		return nil, errors.New("tokenizer: add_eos_token set but no EOS token")
	}

	t.detectSpecial(md)

	for id, a := range t.attrs {
		if a&(AttrControl|AttrUserDefined|AttrUnknown) != 0 {
			t.special = append(t.special, int32(id))
		}
	}
	sort.SliceStable(t.special, func(i, j int) bool {
		return len(t.tokens[t.special[i]]) > len(t.tokens[t.special[j]])
	})

	t.stripAttrs(md)
	for b := range 256 {
		t.byteTok[b] = t.lookupByte(byte(b))
	}
	if t.typ == SPM {
		t.buildPairs()
	} else {
		t.indexMerges()
	}
	t.pieces = make([]string, n)
	for id := range t.pieces {
		t.pieces[id] = t.piece(int32(id))
	}
	return t, nil
}

// Token lists llama.cpp uses to find special tokens by their text.
var (
	eotTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
		"<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}
	eomTexts    = []string{"<|eom_id|>"}
	fimPreTexts = []string{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>"}
	fimSufTexts = []string{"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>"}
	fimMidTexts = []string{"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>"}
	fimPadTexts = []string{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}
	fimRepTexts = []string{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}
	fimSepTexts = []string{"<|file_sep|>"}
	eogTexts    = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>",
		"<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]",
		"[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
		"<｜end▁of▁sentence｜>", "[e~["}
)

// detectSpecial finds EOT/EOM/FIM tokens by text when the metadata does not
// name them, marks them control tokens, and builds the end-of-generation set,
// following llama_vocab::impl::load.
func (t *Tokenizer) detectSpecial(md Metadata) {
	find := func(key string, texts []string) int32 {
		if v, ok := md.Uint(key); ok && v < uint64(len(t.tokens)) {
			return int32(v)
		}
		// llama.cpp takes the first match in hash-map order; we take the
		// first text of the list present, which agrees with it on the
		// vocabularies tested (e.g. <|eot_id|> before <|end_of_text|>).
		for _, s := range texts {
			if id, ok := t.toID[s]; ok {
				t.attrs[id] |= AttrControl
				return id
			}
		}
		return noToken
	}
	if t.eot < 0 {
		t.eot = find("tokenizer.ggml.eot_token_id", eotTexts)
	}
	if t.eom < 0 {
		t.eom = find("tokenizer.ggml.eom_token_id", eomTexts)
	}
	find("tokenizer.ggml.fim_pre_token_id", fimPreTexts)
	find("tokenizer.ggml.fim_suf_token_id", fimSufTexts)
	find("tokenizer.ggml.fim_mid_token_id", fimMidTexts)
	fimPad := find("tokenizer.ggml.fim_pad_token_id", fimPadTexts)
	fimRep := find("tokenizer.ggml.fim_rep_token_id", fimRepTexts)
	fimSep := find("tokenizer.ggml.fim_sep_token_id", fimSepTexts)

	// Control tokens whose text says "unused" are unused.
	for id, a := range t.attrs {
		if a&AttrControl != 0 && strings.Contains(t.tokens[id], "unused") {
			t.attrs[id] |= AttrUnused
		}
	}

	t.eog = map[int32]bool{}
	for _, id := range []int32{fimPad, fimRep, fimSep, t.eos, t.eot, t.eom} {
		if id >= 0 {
			t.eog[id] = true
		}
	}
	for _, s := range eogTexts {
		if id, ok := t.toID[s]; ok {
			t.eog[id] = true
			t.attrs[id] |= AttrControl
		}
	}
	for _, s := range []string{"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"} {
		if id, ok := t.toID[s]; ok {
			t.attrs[id] = AttrUserDefined
		}
	}
	// "<|end|>" is not end-of-generation in vocabularies that also have
	// "<|return|>" and "<|call|>" (or "<|calls|>" and "<|flush|>").
	has := func(s string) bool { id, ok := t.toID[s]; return ok && t.eog[id] }
	if end, ok := t.toID["<|end|>"]; ok && t.eog[end] &&
		((has("<|return|>") && has("<|call|>")) || (has("<|calls|>") && has("<|flush|>"))) {
		delete(t.eog, end)
		t.attrs[end] = AttrUserDefined
	}
	if s, ok := t.toID["</s>"]; ok && t.eog[s] && has("<|tool_response>") {
		delete(t.eog, s)
		t.attrs[s] = AttrNormal
	}
}

// stripAttrs sets the per-model LSTRIP/RSTRIP attributes llama.cpp
// assigns by model name, pre-tokenizer and architecture.
func (t *Tokenizer) stripAttrs(md Metadata) {
	name, _ := md.String("general.name")
	name = strings.ToLower(name)
	arch, _ := md.String("general.architecture")
	set := func(text string, a Attr, on bool) {
		if id, ok := t.toID[text]; ok {
			if on {
				t.attrs[id] |= a
			} else {
				t.attrs[id] &^= a
			}
		}
	}
	containsAny := func(s string, subs ...string) bool {
		for _, x := range subs {
			if strings.Contains(s, x) {
				return true
			}
		}
		return false
	}
	switch {
	case containsAny(t.pre, "jina-v2-de", "jina-v2-es", "jina-v2-code") || containsAny(arch, "nomic-bert-moe", "jina-bert-v3"):
		set("<mask>", AttrLStrip, true)
	case containsAny(name, "phi-3", "phi3"):
		for _, id := range t.special {
			t.attrs[id] |= AttrRStrip
		}
		set("</s>", AttrRStrip, true)
		for _, s := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			set(s, AttrRStrip, false)
		}
	case containsAny(name, "modern-bert"):
		set("[MASK]", AttrLStrip, true)
	}
}

// isCSpace reports whether c is a C isspace byte.
func isCSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

// lookupByte returns the token for a single byte: "<0xHH>" (or the byte
// itself) for SentencePiece, the GPT-2 byte character for BPE; -1 if none.
func (t *Tokenizer) lookupByte(b byte) int32 {
	if t.typ == SPM {
		if id, ok := t.toID[fmt.Sprintf("<0x%02X>", b)]; ok {
			return id
		}
		if id, ok := t.toID[string([]byte{b})]; ok {
			return id
		}
		return noToken
	}
	if id, ok := t.toID[byteToUnicode[b]]; ok {
		return id
	}
	return noToken
}

// Type reports the tokenizer algorithm.
func (t *Tokenizer) Type() Type { return t.typ }

// Model returns tokenizer.ggml.model ("llama" or "gpt2").
func (t *Tokenizer) Model() string { return t.model }

// Pre returns the BPE pre-tokenizer name (tokenizer.ggml.pre), "" for SPM.
func (t *Tokenizer) Pre() string { return t.pre }

// VocabSize returns the number of tokens.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// BOS returns the beginning-of-sequence token, -1 if none.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS returns the end-of-sequence token, -1 if none.
func (t *Tokenizer) EOS() int32 { return t.eos }

// EOT returns the end-of-turn token, -1 if none.
func (t *Tokenizer) EOT() int32 { return t.eot }

// AddBOS reports whether Encode with addSpecial prepends BOS.
func (t *Tokenizer) AddBOS() bool { return t.addBOS }

// AddEOS reports whether Encode with addSpecial appends EOS.
func (t *Tokenizer) AddEOS() bool { return t.addEOS }

// ChatTemplate returns tokenizer.chat_template ("" if absent).
func (t *Tokenizer) ChatTemplate() string { return t.chatTemplate }

// IsEOG reports whether id ends generation (EOS, EOT, <|im_end|>, ...).
func (t *Tokenizer) IsEOG(id int32) bool { return t.eog[id] }

// IsControl reports whether id is a control token.
func (t *Tokenizer) IsControl(id int32) bool {
	return id >= 0 && int(id) < len(t.attrs) && t.attrs[id]&AttrControl != 0
}

// TokenAttr returns the attributes of id (0 if out of range).
func (t *Tokenizer) TokenAttr(id int32) Attr {
	if id < 0 || int(id) >= len(t.attrs) {
		return 0
	}
	return t.attrs[id]
}

// TokenText returns the vocabulary text of id as stored in the GGUF (with
// "▁" or GPT-2 byte characters), "" if id is out of range.
func (t *Tokenizer) TokenText(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// TokenID returns the id of a vocabulary text.
func (t *Tokenizer) TokenID(text string) (int32, bool) {
	id, ok := t.toID[text]
	return id, ok
}

// Piece returns the bytes id stands for, as llama_token_to_piece with
// special=true: control and user-defined tokens render as their text, byte
// tokens as their byte. Out-of-range ids give "".
func (t *Tokenizer) Piece(id int32) string {
	if id < 0 || int(id) >= len(t.pieces) {
		return ""
	}
	return t.pieces[id]
}

// piece computes llama_token_to_piece(id, lstrip=0, special=true).
func (t *Tokenizer) piece(id int32) string {
	a := t.attrs[id]
	text := t.tokens[id]
	switch {
	case a&(AttrUnknown|AttrControl|AttrUserDefined) != 0:
		return text
	case a&AttrNormal != 0:
		if t.typ == SPM {
			return strings.ReplaceAll(text, "▁", " ")
		}
		return decodeByteLevel(text)
	case a&AttrByte != 0:
		if len(text) >= 5 {
			var v byte
			for _, c := range text[3:5] {
				v <<= 4
				switch {
				case c >= '0' && c <= '9':
					v |= byte(c - '0')
				case c >= 'a' && c <= 'f':
					v |= byte(c-'a') + 10
				case c >= 'A' && c <= 'F':
					v |= byte(c-'A') + 10
				}
			}
			return string([]byte{v})
		}
	}
	return ""
}

// fragment is a piece of Encode's input: raw text, or a special token.
type fragment struct {
	text  string
	token int32 // -1 for raw text
}

// partition splits text at occurrences of special tokens, longest first, as
// llama.cpp's tokenizer_st_partition. Control and unknown tokens are only
// matched when parseSpecial; user-defined tokens always are.
func (t *Tokenizer) partition(text string, parseSpecial bool) []fragment {
	frags := []fragment{{text: text, token: noToken}}
	for _, id := range t.special {
		if !parseSpecial && t.attrs[id]&(AttrControl|AttrUnknown) != 0 {
			continue
		}
		st := t.tokens[id]
		var out []fragment
		changed := false
		for _, f := range frags {
			if f.token >= 0 || !strings.Contains(f.text, st) {
				out = append(out, f)
				continue
			}
			changed = true
			s := f.text
			for {
				i := strings.Index(s, st)
				if i < 0 {
					if s != "" {
						out = append(out, fragment{text: s, token: noToken})
					}
					break
				}
				left := s[:i]
				if t.attrs[id]&AttrLStrip != 0 {
					for len(left) > 0 && isCSpace(left[len(left)-1]) {
						left = left[:len(left)-1]
					}
				}
				if left != "" {
					out = append(out, fragment{text: left, token: noToken})
				}
				out = append(out, fragment{token: id})
				s = s[i+len(st):]
				if t.attrs[id]&AttrRStrip != 0 {
					for len(s) > 0 && isCSpace(s[0]) {
						s = s[1:]
					}
				}
			}
		}
		if changed {
			frags = out
		}
	}
	return frags
}

// Encode tokenizes text as llama_tokenize does: with addSpecial, BOS/EOS
// are added as the model asks (tokenizer.ggml.add_bos_token /
// add_eos_token); with parseSpecial, control tokens written in the text
// (such as "<|im_start|>") become those tokens instead of plain text.
// Invalid UTF-8 gives an *InvalidUTF8Error.
func (t *Tokenizer) Encode(text string, addSpecial, parseSpecial bool) ([]int32, error) {
	if !utf8.ValidString(text) {
		off := 0
		for off < len(text) {
			r, size := utf8.DecodeRuneInString(text[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return nil, &InvalidUTF8Error{Offset: off}
	}
	out := make([]int32, 0, len(text)/3+2)
	var frags []fragment
	if text != "" {
		frags = t.partition(text, parseSpecial)
	}
	var err error
	switch t.typ {
	case SPM:
		if addSpecial && t.addBOS {
			out = append(out, t.bos)
		}
		prevSpecial := true
		var sb strings.Builder
		for _, f := range frags {
			if f.token >= 0 {
				out = append(out, f.token)
				prevSpecial = true
				continue
			}
			sb.Reset()
			if t.addSpacePrefix && prevSpecial {
				sb.WriteString("▁")
			}
			for _, r := range f.text {
				if r == ' ' {
					sb.WriteString("▁")
				} else {
					sb.WriteRune(r)
				}
			}
			if out, err = t.encodeSPM(sb.String(), out); err != nil {
				return nil, err
			}
			prevSpecial = false
		}
	case BPE:
		if addSpecial && t.addBOS {
			out = append(out, t.bos)
		}
		for _, f := range frags {
			if f.token >= 0 {
				out = append(out, f.token)
				continue
			}
			out = t.encodeBPE(f.text, out)
		}
	}
	if addSpecial && t.addEOS {
		out = append(out, t.eos)
	}
	return out, nil
}

// Decode returns the text of ids as llama.cpp's common_detokenize(special=
// true); see Detokenize.
func (t *Tokenizer) Decode(ids []int32) string { return t.Detokenize(ids, true) }

// Detokenize returns the text of ids as llama_detokenize(remove_special=
// false, unparse_special=special): pieces concatenated (control and unknown
// tokens as their text only when special), the leading space of the first
// token removed when the vocabulary adds a space prefix, and for
// vocabularies that ask for it (clean_up_tokenization_spaces) spaces before
// punctuation cleaned up. Out-of-range ids contribute nothing.
func (t *Tokenizer) Detokenize(ids []int32, special bool) string {
	var b []byte
	for i, id := range ids {
		p := t.Piece(id)
		if !special && t.TokenAttr(id)&(AttrUnknown|AttrControl) != 0 {
			p = ""
		}
		if i == 0 && t.addSpacePrefix && len(p) > 0 && p[0] == ' ' {
			p = p[1:]
		}
		b = append(b, p...)
	}
	if t.cleanSpaces {
		b = cleanSpaces(b)
	}
	return string(b)
}

// cleanSpaces applies llama_detokenize's clean_spaces passes.
func cleanSpaces(text []byte) []byte {
	// First pass: " ?", " !", " .", " ," lose the space.
	n := len(text)
	total := 0
	if n > 0 {
		total = 1
	}
	for i := 1; i < n; i++ {
		x := text[i]
		if text[i-1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',') {
			total--
		}
		text[total] = x
		total++
	}
	// Second pass: a single apostrophe between spaces loses both.
	n = total
	total = min(n, 1)
	for i := 1; i < n; i++ {
		x := text[i]
		if x == '\'' && i+1 < n && text[i-1] == ' ' && text[i+1] == ' ' {
			total--
			i++
			text[i] = 0
		}
		text[total] = x
		total++
	}
	// Third pass: " 's", " 'm", " 're", " 've" lose the space.
	n = total
	total = min(n, 1)
	for i := 1; i < n; i++ {
		x := text[i]
		if text[i-1] == ' ' && x == '\'' && i+1 < n {
			x1 := text[i+1]
			if x1 == 's' || x1 == 'm' {
				total--
			} else if i+2 < n {
				x2 := text[i+2]
				if (x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e') {
					total--
				}
			}
		}
		text[total] = x
		total++
	}
	return text[:total]
}
