package main

// The prompt of specd generate: -p TEXT, -p - (stdin), -f FILE or
// --prompt-ids, as text or in the model's chat template (--chat), and why
// a generation stopped.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/specd-dev/specd/api"
	"github.com/specd-dev/specd/engine"
)

// readPrompt checks that exactly one prompt is given and reads -p - and -f
// into o.prompt.
func (o *generateOpts) readPrompt(stdin io.Reader) error {
	given := 0
	for _, s := range []string{o.prompt, o.promptFile, o.promptIDs} {
		if s != "" {
			given++
		}
	}
	switch {
	case given == 0:
		return errors.New("a prompt is required: give -p TEXT, -p - (read stdin), -f FILE or --prompt-ids IDS")
	case given > 1:
		return errors.New("give exactly one of -p, -f and --prompt-ids, not both")
	case o.chat && o.promptIDs != "":
		return errors.New("--chat applies the chat template to text: give -p or -f, not --prompt-ids")
	case o.prompt == "-":
		if stdin == nil {
			return errors.New("-p -: no standard input")
		}
		b, err := io.ReadAll(stdin)
		if err != nil {
			return fmt.Errorf("-p -: reading standard input: %w", err)
		}
		o.prompt = string(b)
		if o.prompt == "" {
			return errors.New("-p -: standard input is empty")
		}
	case o.promptFile != "":
		b, err := os.ReadFile(o.promptFile)
		if err != nil {
			return fmt.Errorf("-f: %w", err)
		}
		if len(b) == 0 {
			return fmt.Errorf("-f %s: the file is empty", o.promptFile)
		}
		o.prompt = string(b)
	}
	return nil
}

// promptIDs returns the prompt ids of o: --prompt-ids, the text, or the
// text as a user message in the chat template (--chat).
func promptIDs(e *engine.Engine, o generateOpts) ([]int32, error) {
	if o.promptIDs != "" {
		prompt, err := e.PromptIDs(o.promptIDs, !o.noBOS)
		if err != nil {
			return nil, fmt.Errorf("--prompt-ids: %w", err)
		}
		return prompt, nil
	}
	if _, err := e.Tokenizer(); err != nil {
		return nil, fmt.Errorf("a text prompt needs the model's tokenizer: %w (use --prompt-ids)", err)
	}
	if o.chat {
		var msgs []api.Message
		if o.system != "" {
			msgs = append(msgs, api.Message{Role: "system", Content: o.system})
		}
		return chatIDs(e, append(msgs, api.Message{Role: "user", Content: o.prompt}), !o.noBOS)
	}
	prompt, err := e.Encode(o.prompt, !o.noBOS)
	if errors.Is(err, engine.ErrEmptyPrompt) {
		return nil, errors.New("the prompt is empty")
	}
	return prompt, err
}

// chatIDs renders msgs with the model's chat template and tokenizes the
// result, special-token text (<|im_start|> …) as those tokens.
func chatIDs(e *engine.Engine, msgs []api.Message, addBOS bool) ([]int32, error) {
	tok, err := e.Tokenizer()
	if err != nil {
		return nil, fmt.Errorf("chat needs the model's tokenizer: %w", err)
	}
	render, _ := e.ChatRenderer()
	text, err := render(msgs)
	if err != nil {
		return nil, err
	}
	ids, err := tok.Encode(text, addBOS, true)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, errors.New("the prompt is empty")
	}
	return ids, nil
}

// echoPrompt writes the prompt as the model reads it (--echo): its text,
// or its ids with --ids (then joined to the output's line by the caller).
func echoPrompt(w io.Writer, e *engine.Engine, prompt []int32, ids bool) ([]string, error) {
	if ids {
		out := make([]string, len(prompt))
		for i, t := range prompt {
			out[i] = strconv.Itoa(int(t))
		}
		return out, nil
	}
	tok, err := e.Tokenizer()
	if err != nil {
		return nil, err
	}
	dec := tok.NewDecoder()
	var sb strings.Builder
	for _, t := range prompt {
		sb.WriteString(dec.Add(t))
	}
	sb.WriteString(dec.Flush())
	_, err = io.WriteString(w, sb.String())
	return nil, err
}

// stopMatch returns the first of stops that text contains ("" if none).
func stopMatch(text string, stops []string) string {
	at, which := -1, ""
	for _, s := range stops {
		if i := strings.Index(text, s); i >= 0 && (at < 0 || i < at) {
			at, which = i, s
		}
	}
	return which
}

// stopHit returns the first of stops in the text of ids ("" if none):
// whether a pipeline's "stop" was a stop string, not the end of generation.
func stopHit(e *engine.Engine, ids []int32, stops []string) string {
	tok, err := e.Tokenizer()
	if err != nil {
		return ""
	}
	dec := tok.NewDecoder()
	dec.SetStripLeadingSpace(false)
	var sb strings.Builder
	for _, t := range ids {
		sb.WriteString(dec.Add(t))
	}
	sb.WriteString(dec.Flush())
	return stopMatch(sb.String(), stops)
}

// finishLine is the "stopped: …" line of a generation that ended for
// reason (the pipeline's "length" or "stop", or plain decoding's own),
// having generated n of want tokens.
func finishLine(reason string, n, want int, stop string) string {
	switch {
	case stop != "":
		return fmt.Sprintf("stopped: stop string %q", stop)
	case reason == "stop" || reason == "end of generation":
		return "stopped: end of generation"
	case reason == "context full" || (reason == "length" && n < want):
		return "stopped: context full"
	}
	return fmt.Sprintf("stopped: %d tokens (-n)", n)
}
