package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// Encode tokenizes prompt text with the target's tokenizer, adding BOS
// when addBOS and the vocabulary asks for it. Without a usable tokenizer
// the error wraps ErrNoTokenizer and the reason; a prompt of no tokens is
// ErrEmptyPrompt.
func (e *Engine) Encode(text string, addBOS bool) ([]int32, error) {
	if e.tokErr != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoTokenizer, e.tokErr)
	}
	ids, err := e.tok.Encode(text, addBOS, false)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, ErrEmptyPrompt
	}
	return ids, nil
}

// PromptIDs parses a prompt given as comma-separated token ids, each in
// [0, vocabulary), and prepends BOS when addBOS, the vocabulary asks for it
// and the ids do not start with it. A bad item is an *IDError.
func (e *Engine) PromptIDs(s string, addBOS bool) ([]int32, error) {
	vocab := e.Target.Config.Vocab
	var ids []int32
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		v, err := strconv.ParseInt(f, 10, 32)
		if err != nil {
			return nil, &IDError{Item: i + 1, Text: f, Vocab: vocab, Err: err}
		}
		if v < 0 || v >= int64(vocab) {
			return nil, &IDError{Item: i + 1, Text: f, ID: v, Vocab: vocab}
		}
		ids = append(ids, int32(v))
	}
	if t := e.tok; t != nil && addBOS && t.AddBOS() && t.BOS() >= 0 && ids[0] != t.BOS() {
		ids = append([]int32{t.BOS()}, ids...)
	}
	return ids, nil
}

// IDError is a bad item of a prompt given as ids. Its message does not say
// where the list came from; callers wrap it with that ("--prompt-ids: ").
type IDError struct {
	Item  int    // 1-based position in the list
	Text  string // the item as given, spaces trimmed
	ID    int64  // the id, when Text is an integer
	Vocab int    // ids must be in [0, Vocab)
	Err   error  // why Text is not an integer (nil: it is, but out of range)
}

func (e *IDError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("item %d (%q) is not a token id", e.Item, e.Text)
	}
	return fmt.Sprintf("id %d is outside the vocabulary [0, %d)", e.ID, e.Vocab)
}

func (e *IDError) Unwrap() error { return e.Err }
