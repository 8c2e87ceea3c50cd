package tokenizer

import (
	"fmt"
	"unicode/utf8"
)

// SentencePiece encoding, as llama.cpp's llm_tokenizer_spm_session: start
// from one symbol per UTF-8 character and repeatedly merge the adjacent pair
// whose concatenation is the vocabulary token with the highest score (ties:
// leftmost first). Symbols left that are not tokens fall back to byte
// tokens (<0xHH>).

type symbol struct {
	prev, next int
	start, n   int // byte range in the text
}

type spmBigram struct {
	left, right int
	score       float32
	size        int
}

// spmQueue is a binary max-heap of bigrams: highest score first, ties
// leftmost first (llama.cpp's llm_bigram_spm::comparator).
type spmQueue = bigramQueue[spmBigram]

// before orders the queue (see spmQueue).
//
//lint:ignore U1000 called through bigramQueue's type parameter
func (a spmBigram) before(b spmBigram) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.left < b.left
}

// spmScratch holds buffers reused across the segments of one Encode call.
type spmScratch struct {
	syms []symbol
	q    spmQueue
}

// pairKey packs two adjacent code points.
func pairKey(a, b rune) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// buildPairs records every pair of adjacent code points inside a token.
// Between two characters that form no such pair no merge can ever happen,
// so encodeSPM may tokenize the pieces on either side independently: the
// result is the same as for the whole text, with much smaller queues.
func (t *Tokenizer) buildPairs() {
	t.pairs = make(map[uint64]struct{}, 4*len(t.tokens))
	for _, s := range t.tokens {
		prev := rune(-1)
		for _, r := range s {
			if prev >= 0 {
				t.pairs[pairKey(prev, r)] = struct{}{}
			}
			prev = r
		}
	}
}

// encodeSPM appends the tokens of text (spaces already escaped to "▁").
func (t *Tokenizer) encodeSPM(text string, out []int32) ([]int32, error) {
	var sc spmScratch
	var err error
	start := 0
	prev := rune(-1)
	for i, r := range text {
		if prev >= 0 {
			if _, ok := t.pairs[pairKey(prev, r)]; !ok {
				if out, err = t.encodeSPMSegment(text[start:i], out, &sc); err != nil {
					return nil, err
				}
				start = i
			}
		}
		prev = r
	}
	return t.encodeSPMSegment(text[start:], out, &sc)
}

// encodeSPMSegment runs the SentencePiece merge over text.
func (t *Tokenizer) encodeSPMSegment(text string, out []int32, sc *spmScratch) ([]int32, error) {
	if text == "" {
		return out, nil
	}
	if ids, ok := t.cache.get(text); ok {
		return append(out, ids...), nil
	}
	first := len(out)
	syms := sc.syms[:0]
	for off := 0; off < len(text); {
		_, n := utf8.DecodeRuneInString(text[off:])
		syms = append(syms, symbol{prev: len(syms) - 1, next: len(syms) + 1, start: off, n: n})
		off += n
	}
	syms[len(syms)-1].next = -1
	sc.syms = syms

	q := sc.q[:0]
	defer func() { sc.q = q[:0] }()
	tryAdd := func(left, right int) {
		if left < 0 || right < 0 {
			return
		}
		s := text[syms[left].start : syms[left].start+syms[left].n+syms[right].n]
		id, ok := t.toID[s]
		if !ok {
			return
		}
		q.push(spmBigram{left: left, right: right, score: t.scores[id], size: len(s)})
	}
	for i := 1; i < len(syms); i++ {
		tryAdd(i-1, i)
	}
	for len(q) > 0 {
		b := q.pop()
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
		tryAdd(l.prev, b.left)
		tryAdd(b.left, l.next)
	}
	for i := 0; i != -1; i = syms[i].next {
		s := text[syms[i].start : syms[i].start+syms[i].n]
		if id, ok := t.toID[s]; ok {
			out = append(out, id)
			continue
		}
		// A symbol that is not a token is a single character (merges only
		// ever form tokens): emit its bytes.
		for j := 0; j < len(s); j++ {
			id := t.byteTok[s[j]]
			if id < 0 {
				id = t.unk
			}
			if id < 0 {
				return nil, fmt.Errorf("tokenizer: no token for byte 0x%02X and no unknown token", s[j])
			}
			out = append(out, id)
		}
	}
	t.cache.put(text, out[first:])
	return out, nil
}
