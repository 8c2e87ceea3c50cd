package tokenizer

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// wordCache remembers the tokens of recently seen words (BPE pre-tokenizer
// words, SentencePiece segments): a word's tokens depend on nothing else, and
// natural text repeats words constantly. Safe for concurrent use; lookups
// take no lock. It stops growing at maxCachedWords entries.
type wordCache struct {
	m sync.Map // string -> []int32 (never modified)
	n atomic.Int64
}

const (
	maxCachedWords   = 1 << 16
	maxCachedWordLen = 64 // bytes; longer words rarely repeat
)

func (c *wordCache) get(w string) ([]int32, bool) {
	if len(w) > maxCachedWordLen {
		return nil, false
	}
	v, ok := c.m.Load(w)
	if !ok {
		return nil, false
	}
	return v.([]int32), true
}

func (c *wordCache) put(w string, ids []int32) {
	if len(w) > maxCachedWordLen || c.n.Load() >= maxCachedWords {
		return
	}
	if _, loaded := c.m.LoadOrStore(strings.Clone(w), slices.Clone(ids)); !loaded {
		c.n.Add(1)
	}
}

// reset empties the cache (for benchmarks of cold encoding).
func (c *wordCache) reset() {
	c.m.Clear()
	c.n.Store(0)
}
