package tokenizer

// bigramQueue is a binary heap of merge candidates, ordered by the element
// type's before method (the first element is the next merge to try). It is a
// plain slice so that an encoder can keep and reuse its backing array.
type bigramQueue[T interface{ before(T) bool }] []T

func (q *bigramQueue[T]) push(b T) {
	*q = append(*q, b)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h[i].before(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *bigramQueue[T]) pop() T {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h[r].before(h[l]) {
			m = r
		}
		if !h[m].before(h[i]) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}
