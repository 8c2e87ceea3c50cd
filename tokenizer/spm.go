package tokenizer

import (
	"container/heap"
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

type spmQueue []spmBigram

func (q spmQueue) Len() int { return len(q) }
func (q spmQueue) Less(i, j int) bool {
	if q[i].score != q[j].score {
		return q[i].score > q[j].score
	}
	return q[i].left < q[j].left
}
func (q spmQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *spmQueue) Push(x any)   { *q = append(*q, x.(spmBigram)) }
func (q *spmQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// encodeSPM appends the tokens of text (spaces already escaped to "▁").
func (t *Tokenizer) encodeSPM(text string, out []int32) ([]int32, error) {
	if text == "" {
		return out, nil
	}
	syms := make([]symbol, 0, len(text))
	for off := 0; off < len(text); {
		_, n := utf8.DecodeRuneInString(text[off:])
		syms = append(syms, symbol{prev: len(syms) - 1, next: len(syms) + 1, start: off, n: n})
		off += n
	}
	syms[len(syms)-1].next = -1

	q := make(spmQueue, 0, len(syms))
	tryAdd := func(left, right int) {
		if left < 0 || right < 0 {
			return
		}
		s := text[syms[left].start : syms[left].start+syms[left].n+syms[right].n]
		id, ok := t.toID[s]
		if !ok {
			return
		}
		heap.Push(&q, spmBigram{left: left, right: right, score: t.scores[id], size: len(s)})
	}
	for i := 1; i < len(syms); i++ {
		tryAdd(i-1, i)
	}
	for q.Len() > 0 {
		b := heap.Pop(&q).(spmBigram)
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
	return out, nil
}
