package libm

import (
	"testing"

	"github.com/specd-dev/specd/internal/arm64enc"
)

// TestARM64Encodings checks every instruction vec_arm64.s encodes by hand
// (WORD $0x... // mnemonic, written by model/gen_arm64.go) against llvm-mc;
// it skips without llvm-mc on PATH.
func TestARM64Encodings(t *testing.T) {
	arm64enc.Check(t, "*_arm64.s", "+neon,+fullfp16")
}
