package main

// The bundled default model pair (package models): generate and specbench
// run speculative decoding on it when no -m is given.

import (
	"fmt"

	"github.com/specd-dev/specd/model"
	"github.com/specd-dev/specd/model/gguf"
	"github.com/specd-dev/specd/models"
)

// bundledDraft is the -d value that names the bundled draft; it is also
// the default draft when -m is absent.
const bundledDraft = "bundled"

// defaultModels fills the defaults of -m and -d: without -m the target is
// the bundled one, and without -m and -d the draft is the bundled draft.
// An explicit -m without -d decodes plainly.
func defaultModels(o *generateOpts, s *specOpts) {
	if o.model == "" && s.draft == "" {
		s.draft = bundledDraft
	}
}

// openModel loads the model file at path, or the bundled target when path
// is empty, or the bundled draft when path is bundledDraft. Bundled models
// are parsed from the executable's embedded bytes without copying. name is
// how the model is shown to the user.
func openModel(path string) (m *model.Model, name string, err error) {
	var get func() ([]byte, string)
	switch path {
	case "":
		get = models.Target
	case bundledDraft:
		get = models.Draft
	default:
		m, err := model.Load(path)
		return m, path, err
	}
	b, file := get()
	f, err := gguf.Parse(b)
	if err != nil {
		return nil, "", fmt.Errorf("bundled %s: %w", file, err)
	}
	if m, err = model.New(f); err != nil {
		return nil, "", fmt.Errorf("bundled %s: %w", file, err)
	}
	return m, "bundled " + file, nil
}

// modelsLine is the "models: ..." line generate and specbench print on
// stderr: which target and draft are in use, and whether the draft shares
// the target's embeddings (and why not).
func (su *specSetup) modelsLine(s *specOpts) string {
	switch {
	case !s.enabled():
		return fmt.Sprintf("models: %s, no draft (plain decoding)", su.targetName)
	case s.draft == "ngram":
		return fmt.Sprintf("models: %s + n-gram prompt-lookup draft", su.targetName)
	case su.draft == su.target:
		return fmt.Sprintf("models: %s, drafting for itself", su.targetName)
	}
	line := fmt.Sprintf("models: %s + %s", su.targetName, su.draftName)
	if su.targetName == "bundled "+models.TargetName && su.draftName == "bundled "+models.DraftName {
		line = fmt.Sprintf("models: bundled %s + %s", models.TargetName, models.DraftName)
	}
	sh := su.sharing
	switch {
	case s.noShare:
		return line + " (embeddings not shared: --no-share-embd)"
	case sh.Embd && sh.Output:
		return line + fmt.Sprintf(" (draft shares target embeddings: %s; output projection: %s)", sh.EmbdHow, sh.OutputHow)
	case sh.Embd:
		return line + fmt.Sprintf(" (draft shares target embeddings: %s; own output projection: %s)", sh.EmbdHow, sh.OutputHow)
	case sh.Output:
		return line + fmt.Sprintf(" (draft shares the target's output projection: %s; own embeddings: %s)", sh.OutputHow, sh.EmbdHow)
	}
	return line + fmt.Sprintf(" (embeddings not shared: %s)", sh.EmbdHow)
}
