package tokenizer

import (
	"errors"
	"fmt"
	"strings"
)

// Chat templates: the families specd serves, rendered exactly as llama.cpp's
// llm_chat_apply_template does (it recognises a GGUF's Jinja template by
// distinctive markers instead of running Jinja).

// Message is one chat message.
type Message struct {
	Role    string // "system", "user" or "assistant"
	Content string
}

// Template is a recognised chat template family.
type Template struct {
	Name string // llama.cpp's name: chatml, llama2, llama2-sys, llama2-sys-bos, llama2-sys-strip, llama3
	kind templateKind
}

type templateKind int

const (
	tmplChatML templateKind = iota + 1
	tmplLlama2
	tmplLlama2Sys
	tmplLlama2SysBOS
	tmplLlama2SysStrip
	tmplLlama3
)

var templatesByName = map[string]templateKind{
	"chatml":           tmplChatML,
	"llama2":           tmplLlama2,
	"llama2-sys":       tmplLlama2Sys,
	"llama2-sys-bos":   tmplLlama2SysBOS,
	"llama2-sys-strip": tmplLlama2SysStrip,
	"llama3":           tmplLlama3,
}

// ErrUnknownTemplate is returned (wrapped) for a chat template this package
// cannot render; callers typically fall back to the raw prompt.
var ErrUnknownTemplate = errors.New("tokenizer: unknown chat template")

// TemplateByName returns the template family with llama.cpp's name.
func TemplateByName(name string) (Template, error) {
	k, ok := templatesByName[name]
	if !ok {
		return Template{}, fmt.Errorf("%w %q (supported: chatml, llama2, llama2-sys, llama2-sys-bos, llama2-sys-strip, llama3)", ErrUnknownTemplate, name)
	}
	return Template{Name: name, kind: k}, nil
}

// DetectTemplate recognises the family of a chat template: either one of
// the names TemplateByName accepts, or the Jinja text of a GGUF's
// tokenizer.chat_template, by the markers llama.cpp's
// llm_chat_detect_template checks, in its order. Families llama.cpp knows
// but this package does not render give an error wrapping
// ErrUnknownTemplate that names them.
func DetectTemplate(chatTemplate string) (Template, error) {
	if k, ok := templatesByName[chatTemplate]; ok {
		return Template{Name: chatTemplate, kind: k}, nil
	}
	has := func(s string) bool { return strings.Contains(chatTemplate, s) }
	other := func(family string) (Template, error) {
		return Template{}, fmt.Errorf("%w: looks like %s, which is not supported", ErrUnknownTemplate, family)
	}
	switch {
	case chatTemplate == "":
		return Template{}, fmt.Errorf("%w: empty template", ErrUnknownTemplate)
	case has("<|im_start|>"):
		if has("<|im_sep|>") {
			return other("phi4")
		}
		if has("<end_of_utterance>") {
			return other("smolvlm")
		}
		return TemplateByName("chatml")
	case strings.HasPrefix(chatTemplate, "mistral") || has("[INST]"):
		if has("[SYSTEM_PROMPT]") || has("' [INST] ' + system_message") || has("[AVAILABLE_TOOLS]") {
			return other("mistral")
		}
		switch {
		case has("content.strip()"):
			return TemplateByName("llama2-sys-strip")
		case has("bos_token + '[INST]"):
			return TemplateByName("llama2-sys-bos")
		case has("<<SYS>>"):
			return TemplateByName("llama2-sys")
		}
		return TemplateByName("llama2")
	case has("<|assistant|>") && has("<|end|>"):
		return other("phi3")
	case has("[gMASK]<sop>"):
		return other("chatglm4")
	case has("<|assistant|>") && has("<|user|>"):
		return other("falcon3/glmedge/exaone")
	case has("<|{{ item['role'] }}|>") && has("<|begin_of_image|>"):
		return other("glmedge")
	case has("<|user|>") && has("<|endoftext|>"):
		return other("zephyr")
	case has("bos_token + message['role']"):
		return other("monarch")
	case has("<start_of_turn>"):
		return other("gemma")
	case has("'\\n\\nAssistant: ' + eos_token"):
		return other("orion")
	case has("GPT4 Correct "):
		return other("openchat")
	case has("USER: ") && has("ASSISTANT: "):
		return other("vicuna")
	case has("### Instruction:") && has("<|EOT|>"):
		return other("deepseek")
	case has("<|START_OF_TURN_TOKEN|>") && has("<|USER_TOKEN|>"):
		return other("command-r")
	case has("<|start_header_id|>") && has("<|end_header_id|>"):
		return TemplateByName("llama3")
	}
	return Template{}, fmt.Errorf("%w: no known family's markers found", ErrUnknownTemplate)
}

// trimASCIISpace trims the bytes C's isspace accepts, as llama-chat's trim.
func trimASCIISpace(s string) string {
	return strings.Trim(s, " \t\n\v\f\r")
}

// ApplyTemplate renders messages as llama.cpp's llm_chat_apply_template;
// addGenerationPrompt opens the assistant's turn (where the family has one).
// A zero Template renders nothing.
func ApplyTemplate(tmpl Template, msgs []Message, addGenerationPrompt bool) string {
	var sb strings.Builder
	switch tmpl.kind {
	case tmplChatML:
		for _, m := range msgs {
			sb.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
		}
		if addGenerationPrompt {
			sb.WriteString("<|im_start|>assistant\n")
		}
	case tmplLlama3:
		for _, m := range msgs {
			sb.WriteString("<|start_header_id|>" + m.Role + "<|end_header_id|>\n\n" + trimASCIISpace(m.Content) + "<|eot_id|>")
		}
		if addGenerationPrompt {
			sb.WriteString("<|start_header_id|>assistant<|end_header_id|>\n\n")
		}
	case tmplLlama2, tmplLlama2Sys, tmplLlama2SysBOS, tmplLlama2SysStrip:
		// Llama 2 has no generation prompt: the turn is open after [/INST].
		supportSystem := tmpl.kind != tmplLlama2
		bosInside := tmpl.kind == tmplLlama2SysBOS
		strip := tmpl.kind == tmplLlama2SysStrip
		inside := true
		sb.WriteString("[INST] ")
		for _, m := range msgs {
			content := m.Content
			if strip {
				content = trimASCIISpace(content)
			}
			if !inside {
				inside = true
				if bosInside {
					sb.WriteString("<s>[INST] ")
				} else {
					sb.WriteString("[INST] ")
				}
			}
			switch m.Role {
			case "system":
				if supportSystem {
					sb.WriteString("<<SYS>>\n" + content + "\n<</SYS>>\n\n")
				} else {
					sb.WriteString(content + "\n")
				}
			case "user":
				sb.WriteString(content + " [/INST]")
			default:
				sb.WriteString(content + "</s>")
				inside = false
			}
		}
	}
	return sb.String()
}
