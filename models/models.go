// Package models bundles specd's default model pair, so that the CLI works
// from a fresh clone without downloading anything: a llama-architecture
// target (6 layers, dim 256, 5.8M parameters) and a one-layer draft that
// shares the target's token embedding table, which is also both models'
// output projection (tied). Both were trained from scratch on the Brown
// corpus by tools/train (see README.md in this directory for how, and for
// their perplexity and acceptance figures) and are stored as F16 GGUF v3
// files with a byte-level BPE vocabulary of 4,096 tokens.
//
// The GGUF metadata key SharedEmbdKey holds the SHA-256 of the shared
// token_embd.weight tensor data in both files, so a runtime can tell that
// draft and target share their embeddings without comparing the tensors.
package models

import (
	_ "embed"

	"github.com/specd-dev/specd/model"
)

// TargetName and DraftName are the bundled files' names.
const (
	TargetName = "specd-target.gguf"
	DraftName  = "specd-draft.gguf"
)

// SharedEmbdKey is the metadata key (a hex string) that records the SHA-256
// of token_embd.weight's data; the draft's value equals the target's, so
// model.ShareEmbeddings shares the table without reading the draft's copy.
const SharedEmbdKey = model.SharedEmbdKey

//go:embed specd-target.gguf
var target []byte

//go:embed specd-draft.gguf
var draft []byte

// Target returns the bundled target model's GGUF bytes and its file name.
// The bytes are shared and must not be modified; gguf.Parse reads them
// without copying.
func Target() ([]byte, string) { return target, TargetName }

// Draft returns the bundled draft model's GGUF bytes and its file name,
// under the same rules as Target.
func Draft() ([]byte, string) { return draft, DraftName }
