package engine

import (
	"errors"

	"github.com/specd-dev/specd/api"
	"github.com/specd-dev/specd/tokenizer"
)

// ChatRenderer returns how chat messages become a prompt for the target:
// its GGUF chat template when specd knows the family, else the messages'
// contents one per line (RawChat, for completion models such as the
// bundled pair). name says which ("raw" for the fallback).
func (e *Engine) ChatRenderer() (render func([]api.Message) (string, error), name string) {
	if e.tok != nil {
		if t, err := tokenizer.DetectTemplate(e.tok.ChatTemplate()); err == nil {
			return func(msgs []api.Message) (string, error) {
				tm := make([]tokenizer.Message, len(msgs))
				for i, m := range msgs {
					tm[i] = tokenizer.Message{Role: m.Role, Content: m.Content}
				}
				return tokenizer.ApplyTemplate(t, tm, true), nil
			}, t.Name
		}
	}
	return RawChat, "raw"
}

// RawChat renders messages for a model without a chat template: their
// contents, one per line.
func RawChat(msgs []api.Message) (string, error) {
	if len(msgs) == 0 {
		return "", errors.New("no messages")
	}
	var out []byte
	for i, m := range msgs {
		if i > 0 {
			out = append(out, '\n')
		}
		out = append(out, m.Content...)
	}
	return string(out), nil
}
