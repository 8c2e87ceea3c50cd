package tokenizer

import (
	"container/heap"
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

type bpeBigram struct {
	left, right int
	rank        int32
	size        int
}

type bpeQueue []bpeBigram

func (q bpeQueue) Len() int { return len(q) }
func (q bpeQueue) Less(i, j int) bool {
	if q[i].rank != q[j].rank {
		return q[i].rank < q[j].rank
	}
	return q[i].left < q[j].left
}
func (q bpeQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *bpeQueue) Push(x any)   { *q = append(*q, x.(bpeBigram)) }
func (q *bpeQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
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
		if t.ignoreMerges {
			if id, ok := t.toID[word]; ok {
				out = append(out, id)
				continue
			}
		}
		syms = syms[:0]
		for off := 0; off < len(word); {
			_, n := utf8.DecodeRuneInString(word[off:])
			syms = append(syms, symbol{prev: len(syms) - 1, next: len(syms) + 1, start: off, n: n})
			off += n
		}
		syms[len(syms)-1].next = -1
		q = q[:0]
		add := func(left, right int) {
			if left < 0 || right < 0 {
				return
			}
			l, r := syms[left], syms[right]
			rank, ok := t.ranks[mergePair{word[l.start : l.start+l.n], word[r.start : r.start+r.n]}]
			if !ok {
				return
			}
			heap.Push(&q, bpeBigram{left: left, right: right, rank: rank, size: l.n + r.n})
		}
		for i := 1; i < len(syms); i++ {
			add(i-1, i)
		}
		for q.Len() > 0 {
			b := heap.Pop(&q).(bpeBigram)
			l, r := &syms[b.left], &syms[b.right]
			if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
				continue
			}
			l.n += r.n
			r.n = 0
			l.next = r.next
			if r.next >= 0 {
				syms[r.next].prev = b.left
			}
			add(l.prev, b.left)
			add(b.left, l.next)
		}
		for i := 0; i != -1; i = syms[i].next {
			s := word[syms[i].start : syms[i].start+syms[i].n]
			if id, ok := t.toID[s]; ok {
				out = append(out, id)
				continue
			}
			// llama.cpp looks up each raw byte of the symbol as a token and
			// drops bytes that are not tokens.
			for j := 0; j < len(s); j++ {
				if id, ok := t.toID[s[j:j+1]]; ok {
					out = append(out, id)
				}
			}
		}
	}
	return out
}
