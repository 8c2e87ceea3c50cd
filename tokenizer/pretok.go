package tokenizer

import (
	"fmt"
	"strings"
	"sync"
	"unicode"
)

// Pre-tokenizers: llama.cpp splits BPE text into words with a list of
// regular expressions chosen by tokenizer.ggml.pre, each applied to every
// piece the previous one produced (text between matches is kept as pieces
// too). Go's regexp has no look-ahead, so each expression is a hand-written
// scanner over code points. Where llama.cpp has its own scanner (GPT-2,
// Llama 3, Qwen2 in unicode.cpp) ours follows it step by step, including its
// quirks; the others follow ECMAScript regex semantics (leftmost match,
// ordered alternation, greedy) over llama.cpp's code point categories.
//
// Categories: \p{L}, \p{N}, \p{P}, \p{S}, \p{M} are Go's unicode tables
// (plus the Unicode 15.1 additions llama.cpp's tables have; a test compares
// every code point with llama.cpp's unicode-data.cpp);
// \s is llama.cpp's whitespace set (ASCII \t\n\v\f\r and space, U+0085,
// U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000).

const (
	fDefined uint8 = 1 << iota // in range (llama.cpp: any flag set)
	fNumber
	fLetter
	fSpace
	fPunct
	fSymbol
	fMark
)

var (
	flagTableOnce sync.Once
	flagTable     []uint8 // flags of the BMP
)

func isLlamaSpace(r rune) bool {
	switch {
	case r >= 9 && r <= 13, r == ' ', r == 0x85, r == 0xA0, r == 0x1680,
		r >= 0x2000 && r <= 0x200A, r == 0x2028, r == 0x2029, r == 0x202F, r == 0x205F, r == 0x3000:
		return true
	}
	return false
}

func computeFlags(r rune) uint8 {
	f := fDefined
	switch {
	// Unicode 15.1 assignments missing from Go's 15.0 tables but present in
	// llama.cpp's: CJK Extension I and the new ideographic description
	// characters.
	case r >= 0x2EBF0 && r <= 0x2EE5D:
		f |= fLetter
	case r >= 0x2FFC && r <= 0x2FFF, r == 0x31EF:
		f |= fSymbol
	case unicode.IsLetter(r):
		f |= fLetter
	case unicode.IsNumber(r):
		f |= fNumber
	case unicode.IsPunct(r):
		f |= fPunct
	case unicode.IsSymbol(r):
		f |= fSymbol
	case unicode.IsMark(r):
		f |= fMark
	}
	if isLlamaSpace(r) {
		f |= fSpace
	}
	return f
}

// cpFlags returns the category flags of r.
func cpFlags(r rune) uint8 {
	if r < 0x10000 {
		flagTableOnce.Do(func() {
			flagTable = make([]uint8, 0x10000)
			for c := range flagTable {
				flagTable[c] = computeFlags(rune(c))
			}
		})
		return flagTable[r]
	}
	return computeFlags(r)
}

// splitFunc splits one piece (code points) into consecutive lengths that
// sum to len(c), appending them to out.
type splitFunc func(c []rune, out []int) []int

type preTokenizer struct {
	name         string
	steps        []splitFunc
	ignoreMerges bool
	cleanSpaces  bool
	addBOS       bool // default of add_bos_token
}

func newPreTokenizer(name string) (*preTokenizer, error) {
	p := &preTokenizer{name: name, cleanSpaces: true}
	switch name {
	case "", "default":
		p.steps = []splitFunc{search(matchPunctRun), splitGPT2, search(matchNumberRun), search(matchThreeDigits)}
	case "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano":
		p.steps = []splitFunc{splitLlama3}
		p.ignoreMerges = true
		p.addBOS = true
	case "dbrx", "smaug-bpe":
		p.steps = []splitFunc{splitLlama3}
	case "deepseek-llm":
		p.steps = []splitFunc{search(matchCRLF), search(matchDeepseekLetters), search(matchDeepseekPunct),
			search(matchTrailingSpace), search(matchDeepseekCJK), search(matchNumberRun)}
		p.cleanSpaces = false
	case "deepseek-coder":
		p.steps = []splitFunc{search(matchCRLF), search(matchSpaceLetters), search(matchSpacePunct),
			search(matchDeepseekCJK), search(matchOneNumber)}
		p.cleanSpaces = false
	case "falcon":
		p.steps = []splitFunc{search(matchPunctRunBacktick), splitGPT2, search(matchThreeDigits)}
	case "starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2":
		p.steps = []splitFunc{search(matchOneNumber), splitGPT2}
	case "smollm", "command-r":
		p.steps = []splitFunc{search(matchOneNumber), splitGPT2}
		p.cleanSpaces = false
	case "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
		"modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe", "mpt", "olmo", "jais", "exaone4":
		p.steps = []splitFunc{splitGPT2}
	case "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open":
		p.steps = []splitFunc{splitQwen2}
		p.cleanSpaces = false
	case "stablelm2", "megrez":
		p.steps = []splitFunc{splitQwen2}
	case "qwen35":
		p.steps = []splitFunc{splitQwen35}
		p.cleanSpaces = false
	default:
		return nil, fmt.Errorf("tokenizer: unsupported BPE pre-tokenizer %q", name)
	}
	return p, nil
}

// split returns the word lengths (in code points) of text.
func (p *preTokenizer) split(text []rune) []int {
	pieces := []int{len(text)}
	var next []int
	for _, step := range p.steps {
		next = next[:0]
		start := 0
		for _, n := range pieces {
			next = step(text[start:start+n], next)
			start += n
		}
		pieces, next = next, pieces
	}
	return pieces
}

// search turns an anchored matcher (returns the end of a match starting at
// i, or -1) into a regex_iterator-style split: matches and the text between
// them become pieces.
func search(match func(c []rune, i int) int) splitFunc {
	return func(c []rune, out []int) []int {
		prev := 0
		for i := 0; i < len(c); {
			e := match(c, i)
			if e <= i {
				i++
				continue
			}
			if i > prev {
				out = append(out, i-prev)
			}
			out = append(out, e-i)
			prev, i = e, e
		}
		if prev < len(c) {
			out = append(out, len(c)-prev)
		}
		return out
	}
}

func flagsAt(c []rune, i int) uint8 {
	if i < 0 || i >= len(c) {
		return 0
	}
	return cpFlags(c[i])
}

func runeAt(c []rune, i int) rune {
	if i < 0 || i >= len(c) {
		return -1
	}
	return c[i]
}

// runWhile returns the end of the run of code points from i that satisfy ok.
func runWhile(c []rune, i int, ok func(rune) bool) int {
	for i < len(c) && ok(c[i]) {
		i++
	}
	return i
}

// runPlus matches [class]+ at i: the end of the run, or -1 when c[i] is
// not in the class.
func runPlus(c []rune, i int, in func(rune) bool) int {
	if e := runWhile(c, i, in); e != i {
		return e
	}
	return -1
}

// optSpaceThen matches \s?[class]+ at i, the class given by in.
func optSpaceThen(c []rune, i int, in func(rune) bool) int {
	if cpFlags(c[i])&fSpace != 0 && i+1 < len(c) && in(c[i+1]) {
		return runWhile(c, i+1, in)
	}
	return runPlus(c, i, in)
}

// punctRun returns a matcher for [\p{P}<extra>]+.
func punctRun(extra string) func(c []rune, i int) int {
	return func(c []rune, i int) int {
		return runPlus(c, i, func(r rune) bool {
			if r < 0x80 && strings.IndexByte(extra, byte(r)) >= 0 {
				return true
			}
			f := cpFlags(r)
			return f&fPunct != 0 && f&fSpace == 0
		})
	}
}

// matchPunctRun: [\p{P}\$\+<=>\^~\|]+
var matchPunctRun = punctRun("$+<=>^~|")

// matchPunctRunBacktick: [\p{P}\$\+<=>\^~\|`]+
var matchPunctRunBacktick = punctRun("$+<=>^~|`")

// optSpaceThenFlags matches \s?[class]+ where class is code points with
// one of the flags in mask (and not whitespace).
func optSpaceThenFlags(c []rune, i int, mask uint8) int {
	return optSpaceThen(c, i, func(r rune) bool { f := cpFlags(r); return f&mask != 0 && f&fSpace == 0 })
}

// matchSpaceLetters: \s?\p{L}+
func matchSpaceLetters(c []rune, i int) int { return optSpaceThenFlags(c, i, fLetter) }

// matchSpacePunct: \s?\p{P}+
func matchSpacePunct(c []rune, i int) int { return optSpaceThenFlags(c, i, fPunct) }

// matchNumberRun: \p{N}+
func matchNumberRun(c []rune, i int) int {
	return runPlus(c, i, func(r rune) bool { return cpFlags(r)&fNumber != 0 })
}

// matchOneNumber: \p{N}
func matchOneNumber(c []rune, i int) int {
	if cpFlags(c[i])&fNumber != 0 {
		return i + 1
	}
	return -1
}

// matchThreeDigits: [0-9][0-9][0-9]
func matchThreeDigits(c []rune, i int) int {
	if i+3 <= len(c) && isDigit(c[i]) && isDigit(c[i+1]) && isDigit(c[i+2]) {
		return i + 3
	}
	return -1
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// matchCRLF: [\r\n]
func matchCRLF(c []rune, i int) int {
	if c[i] == '\r' || c[i] == '\n' {
		return i + 1
	}
	return -1
}

// wideRune is the code point llama.cpp's std::wregex sees: non-ASCII
// whitespace is replaced by U+000B.
func wideRune(r rune) rune {
	if r > 0x7F && isLlamaSpace(r) {
		return 0x0B
	}
	return r
}

type runeRange struct{ lo, hi rune }

func inRanges(r rune, rs []runeRange) bool {
	for _, x := range rs {
		if r >= x.lo && r <= x.hi {
			return true
		}
	}
	return false
}

// The character classes of the deepseek-llm pre-tokenizer.
var (
	deepseekLetters = []runeRange{{0x41, 0x5A}, {0x61, 0x7A}, {0xB5, 0xB5}, {0xC0, 0xD6}, {0xD8, 0xF6}, {0xF8, 0x1BA},
		{0x1BC, 0x1BF}, {0x1C4, 0x293}, {0x295, 0x2AF}, {0x370, 0x373}, {0x376, 0x377}, {0x37B, 0x37D},
		{0x37F, 0x37F}, {0x386, 0x386}, {0x388, 0x38A}, {0x38C, 0x38C}, {0x38E, 0x3A1}, {0x3A3, 0x3F5},
		{0x3F7, 0x481}, {0x48A, 0x52F}, {0x531, 0x556}, {0x10A0, 0x10C5}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD},
		{0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF}, {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A},
		{0x1E00, 0x1F15}, {0x1F18, 0x1F1D}, {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57},
		{0x1F59, 0x1F59}, {0x1F5B, 0x1F5B}, {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4},
		{0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE}, {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3},
		{0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC}, {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2102, 0x2102},
		{0x2107, 0x2107}, {0x210A, 0x2113}, {0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124},
		{0x2126, 0x2126}, {0x2128, 0x2128}, {0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139},
		{0x213C, 0x213F}, {0x2145, 0x2149}, {0x214E, 0x214E}, {0x2183, 0x2184}, {0x2C00, 0x2C7B},
		{0x2C7E, 0x2CE4}, {0x2CEB, 0x2CEE}, {0x2CF2, 0x2CF3}, {0xA640, 0xA66D}, {0xA680, 0xA69B},
		{0xA722, 0xA76F}, {0xA771, 0xA787}, {0xA78B, 0xA78E}, {0xAB70, 0xABBF}, {0xFB00, 0xFB06},
		{0xFB13, 0xFB17}, {0xFF21, 0xFF3A}, {0xFF41, 0xFF5A}, {0x10400, 0x1044F}, {0x104B0, 0x104D3},
		{0x104D8, 0x104FB}, {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943}}
	deepseekPunct = []runeRange{{0x21, 0x2F}, {0x3A, 0x7E}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E}, {0x2018, 0x201F}, {0x3000, 0x3002}}
	deepseekCJK   = []runeRange{{0x4E00, 0x9FA5}, {0x800, 0x4E00}, {0xAC00, 0xD7FF}}
)

// optSpaceThenRun matches \s?[class]+ on the code points std::wregex sees.
func optSpaceThenRun(c []rune, i int, class []runeRange) int {
	return optSpaceThen(c, i, func(r rune) bool { return inRanges(wideRune(r), class) })
}

// matchDeepseekLetters: \s?[A-Za-zµÀ-Ö...]+
func matchDeepseekLetters(c []rune, i int) int { return optSpaceThenRun(c, i, deepseekLetters) }

// matchDeepseekPunct: \s?[!-/:-~！-／：-～‘-‟　-。]+
func matchDeepseekPunct(c []rune, i int) int { return optSpaceThenRun(c, i, deepseekPunct) }

// matchDeepseekCJK: [一-龥ࠀ-一가-퟿]+
func matchDeepseekCJK(c []rune, i int) int {
	return runPlus(c, i, func(r rune) bool { return inRanges(wideRune(r), deepseekCJK) })
}

// matchTrailingSpace: \s+$
func matchTrailingSpace(c []rune, i int) int {
	e := runWhile(c, i, func(r rune) bool { return cpFlags(r)&fSpace != 0 })
	if e == i || e != len(c) {
		return -1
	}
	return e
}

// afterSpaces ends the scanners' last two alternatives, \s+(?!\S)|\s+,
// for a run of nws whitespace code points at pos in a text of n: all but
// the last when a non-space follows, else all of them. With no whitespace
// the scanners take one code point.
func afterSpaces(pos, nws, n int) int {
	switch {
	case nws > 1 && pos+nws < n:
		return pos + nws - 1
	case nws > 0:
		return pos + nws
	}
	return pos + 1
}

// splitGPT2 is llama.cpp's scanner for
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
func splitGPT2(c []rune, out []int) []int {
	n := len(c)
	prev := 0
	emit := func(end int) int {
		l := end - prev
		if l > 0 {
			out = append(out, l)
		}
		prev = end
		return l
	}
	for pos := 0; pos < n; {
		cpt := c[pos]
		flags := cpFlags(cpt)
		if cpt == '\'' && pos+1 < n {
			nx := c[pos+1]
			if nx == 's' || nx == 't' || nx == 'm' || nx == 'd' {
				pos += emit(pos + 2)
				continue
			}
			if pos+2 < n {
				nn := c[pos+2]
				if (nx == 'r' && nn == 'e') || (nx == 'v' && nn == 'e') || (nx == 'l' && nn == 'l') {
					pos += emit(pos + 3)
					continue
				}
			}
		}
		f2 := flags
		if cpt == ' ' {
			f2 = flagsAt(c, pos+1)
		}
		sp := 0
		if cpt == ' ' {
			sp = 1
		}
		if f2&fLetter != 0 {
			pos += sp
			for flagsAt(c, pos)&fLetter != 0 {
				pos++
			}
			emit(pos)
			continue
		}
		if f2&fNumber != 0 {
			pos += sp
			for flagsAt(c, pos)&fNumber != 0 {
				pos++
			}
			emit(pos)
			continue
		}
		if f2&(fSpace|fLetter|fNumber) == 0 && f2 != 0 {
			pos += sp
			for {
				f := flagsAt(c, pos)
				if f&(fSpace|fLetter|fNumber) != 0 || f == 0 {
					break
				}
				pos++
			}
			emit(pos)
			continue
		}
		nws := 0
		for flagsAt(c, pos+nws)&fSpace != 0 {
			nws++
		}
		pos = afterSpaces(pos, nws, n)
		emit(pos)
	}
	return out
}

// splitLlama3 is llama.cpp's scanner for
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func splitLlama3(c []rune, out []int) []int { return splitLlamaLike(c, out, 3, false) }

// splitQwen2 is splitLlama3 with single digits (\p{N} instead of \p{N}{1,3}).
func splitQwen2(c []rune, out []int) []int { return splitLlamaLike(c, out, 1, false) }

// splitQwen35 is splitQwen2 where letter runs also take marks ([\p{L}\p{M}]+).
func splitQwen35(c []rune, out []int) []int { return splitLlamaLike(c, out, 1, true) }

func splitLlamaLike(c []rune, out []int, digits int, marks bool) []int {
	n := len(c)
	prev := 0
	emit := func(end int) int {
		l := end - prev
		if l > 0 {
			out = append(out, l)
		}
		prev = end
		return l
	}
	letter := fLetter
	if marks {
		letter |= fMark
	}
	for pos := 0; pos < n; {
		cpt := c[pos]
		flags := cpFlags(cpt)
		if cpt == '\'' && pos+1 < n {
			nx := unicode.ToLower(c[pos+1])
			if nx == 's' || nx == 't' || nx == 'm' || nx == 'd' {
				pos += emit(pos + 2)
				continue
			}
			if pos+2 < n {
				nn := unicode.ToLower(c[pos+2])
				if (nx == 'r' && nn == 'e') || (nx == 'v' && nn == 'e') || (nx == 'l' && nn == 'l') {
					pos += emit(pos + 3)
					continue
				}
			}
		}
		// [^\r\n\p{L}\p{N}]?\p{L}+
		if !(cpt == '\r' || cpt == '\n' || flags&fNumber != 0) {
			if flags&letter != 0 || flagsAt(c, pos+1)&letter != 0 {
				pos++
				for flagsAt(c, pos)&letter != 0 {
					pos++
				}
				emit(pos)
				continue
			}
		}
		// \p{N}{1,3} or \p{N}
		if flags&fNumber != 0 {
			ini := pos
			for flagsAt(c, pos)&fNumber != 0 {
				pos++
				if pos-ini >= digits {
					emit(pos)
					ini = pos
				}
			}
			emit(pos)
			continue
		}
		// <space>?[^\s\p{L}\p{N}]+[\r\n]*
		f2 := flags
		if cpt == ' ' {
			f2 = flagsAt(c, pos+1)
		}
		if f2&(fSpace|letter|fNumber) == 0 && flags != 0 {
			if cpt == ' ' {
				pos++
			}
			for f2&(fSpace|letter|fNumber) == 0 && f2 != 0 {
				pos++
				f2 = flagsAt(c, pos)
			}
			for r := runeAt(c, pos); r == '\r' || r == '\n'; r = runeAt(c, pos) {
				pos++
			}
			emit(pos)
			continue
		}
		nws, lastRN := 0, 0
		for flagsAt(c, pos+nws)&fSpace != 0 {
			if r := c[pos+nws]; r == '\r' || r == '\n' {
				lastRN = pos + nws + 1
			}
			nws++
		}
		if lastRN > 0 {
			pos = lastRN
			emit(pos)
			continue
		}
		pos = afterSpaces(pos, nws, n)
		emit(pos)
	}
	return out
}
