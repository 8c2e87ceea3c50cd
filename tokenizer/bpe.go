package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// Byte-level BPE, as llama.cpp's llm_tokenizer_bpe_session: the text is
// split into words by the pre-tokenizer, each word's bytes are mapped to
// GPT-2's printable byte characters, and adjacent symbols are merged by
// merge rank (lowest first, ties leftmost first) until no ranked pair is left.

// byteToUnicode maps a byte to GPT-2's printable character for it (UTF-8);
// unicodeToByte is its inverse.
var (
	byteToUnicode [256]string
	unicodeToByte = map[rune]byte{}
)

func init() {
	n := 0
	for b := range 256 {
		var r rune
		if (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			r = rune(b)
		} else {
			r = rune(256 + n)
			n++
		}
		byteToUnicode[b] = string(r)
		unicodeToByte[r] = byte(b)
	}
}

// decodeByteLevel maps GPT-2 byte characters back to bytes, as llama.cpp's
// llama_decode_text (characters outside the map become a marker).
func decodeByteLevel(text string) string {
	var sb strings.Builder
	for _, r := range text {
		if b, ok := unicodeToByte[r]; ok {
			sb.WriteByte(b)
			continue
		}
		sb.WriteString("[UNK_BYTE_0x")
		for _, c := range []byte(string(r)) {
			const hex = "0123456789abcdef"
			sb.WriteByte(hex[c>>4])
			sb.WriteByte(hex[c&15])
		}
		sb.WriteString(text)
		sb.WriteString("]")
	}
	return sb.String()
}

// idMerge is a merge of two tokens: its rank and the token it makes (-1 if
// the concatenation is not a token).
type idMerge struct{ rank, result int32 }

// indexMerges moves merges of two tokens from the string-keyed ranks map to
// idMerges, so that encoding looks pairs up by token id instead of hashing
// strings. Merges with a half that is not a token stay in ranks.
func (t *Tokenizer) indexMerges() {
	for c := range t.charTok {
		t.charTok[c] = noToken
		if id, ok := t.toID[string(rune(c))]; ok {
			t.charTok[c] = id
		}
	}
	t.idMerges = make(map[uint64]idMerge, len(t.ranks))
	for p, rank := range t.ranks {
		a, okA := t.toID[p.a]
		b, okB := t.toID[p.b]
		if !okA || !okB {
			continue
		}
		res, ok := t.toID[p.a+p.b]
		if !ok {
			res = noToken
		}
		t.idMerges[pairKey(a, b)] = idMerge{rank: rank, result: res}
		delete(t.ranks, p)
	}
}

type bpeBigram struct {
	left, right  int
	rank, result int32
	size         int
}

// addBPEBigram queues the merge of symbols left and right if it is ranked.
func (t *Tokenizer) addBPEBigram(word string, syms []symbol, ids []int32, q *bpeQueue, left, right int) {
	if left < 0 || right < 0 {
		return
	}
	l, r := syms[left], syms[right]
	if ids[left] >= 0 && ids[right] >= 0 {
		if m, ok := t.idMerges[pairKey(ids[left], ids[right])]; ok {
			q.push(bpeBigram{left: left, right: right, rank: m.rank, result: m.result, size: l.n + r.n})
		}
		return // a pair of tokens can only be in idMerges
	}
	if len(t.ranks) == 0 {
		return
	}
	rank, ok := t.ranks[mergePair{word[l.start : l.start+l.n], word[r.start : r.start+r.n]}]
	if !ok {
		return
	}
	q.push(bpeBigram{left: left, right: right, rank: rank, result: noToken, size: l.n + r.n})
}

// bpeQueue is a binary min-heap of bigrams: lowest rank first, ties
// leftmost first (llama.cpp's llm_bigram_bpe::comparator).
type bpeQueue = bigramQueue[bpeBigram]

// before orders the queue (see bpeQueue).
//
//lint:ignore U1000 called through bigramQueue's type parameter
func (a bpeBigram) before(b bpeBigram) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.left < b.left
}

// encodeBPE appends the tokens of one text fragment.
func (t *Tokenizer) encodeBPE(text string, out []int32) []int32 {
	if text == "" {
		return out
	}
	runes := []rune(text)
	words := t.preTok.split(runes)

	// Byte-encode the whole fragment once; words are ranges of enc.
	var eb strings.Builder
	eb.Grow(len(text) * 2)
	for i := 0; i < len(text); i++ {
		eb.WriteString(byteToUnicode[text[i]])
	}
	enc := eb.String()

	var syms []symbol
	var ids []int32 // token id of each symbol's text, -1 if none
	var q bpeQueue
	encPos, runePos := 0, 0
	for _, wl := range words {
		start := encPos
		for _, r := range runes[runePos : runePos+wl] {
			var buf [4]byte
			n := utf8.EncodeRune(buf[:], r)
			for _, b := range buf[:n] {
				encPos += len(byteToUnicode[b])
			}
		}
		runePos += wl
		word := enc[start:encPos]
		if word == "" {
			continue
		}
		if ids, ok := t.cache.get(word); ok {
			out = append(out, ids...)
			continue
		}
		if t.ignoreMerges {
			if id, ok := t.toID[word]; ok {
				out = append(out, id)
				continue
			}
		}
		first := len(out)
		syms = syms[:0]
		ids = ids[:0]
		for off := 0; off < len(word); {
			c, n := utf8.DecodeRuneInString(word[off:])
			syms = append(syms, symbol{prev: len(syms) - 1, next: len(syms) + 1, start: off, n: n})
			var id int32
			if c < rune(len(t.charTok)) {
				id = t.charTok[c]
			} else if v, ok := t.toID[word[off:off+n]]; ok {
				id = v
			} else {
				id = noToken
			}
			ids = append(ids, id)
			off += n
		}
		syms[len(syms)-1].next = -1
		q = q[:0]
		for i := 1; i < len(syms); i++ {
			t.addBPEBigram(word, syms, ids, &q, i-1, i)
		}
		for len(q) > 0 {
			b := q.pop()
			l, r := &syms[b.left], &syms[b.right]
			if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
				continue
			}
			l.n += r.n
			r.n = 0
			ids[b.left] = b.result
			if b.result < 0 {
				if id, ok := t.toID[word[l.start:l.start+l.n]]; ok {
					ids[b.left] = id
				}
			}
			l.next = r.next
			if r.next >= 0 {
				syms[r.next].prev = b.left
			}
			t.addBPEBigram(word, syms, ids, &q, l.prev, b.left)
			t.addBPEBigram(word, syms, ids, &q, b.left, l.next)
		}
		for i := 0; i != -1; i = syms[i].next {
			if ids[i] >= 0 {
				out = append(out, ids[i])
				continue
			}
			// llama.cpp looks up each raw byte of the symbol as a token and
			// drops bytes that are not tokens.
			s := word[syms[i].start : syms[i].start+syms[i].n]
			for j := 0; j < len(s); j++ {
				if id, ok := t.toID[s[j:j+1]]; ok {
					out = append(out, id)
				}
			}
		}
		t.cache.put(word, out[first:])
	}
	return out
}
