package model

import (
	"testing"

	"github.com/specd-dev/specd/internal/arm64enc"
)

// TestARM64Encodings checks every instruction attn_arm64.s encodes by hand
// (WORD $0x... // mnemonic, written by gen_arm64.go) against llvm-mc; it
// skips without llvm-mc on PATH.
func TestARM64Encodings(t *testing.T) {
	arm64enc.Check(t, "*_arm64.s", "+neon,+fullfp16")
}
