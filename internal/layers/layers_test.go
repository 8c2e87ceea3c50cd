// Package layers pins the package layering of docs/architecture.md: a
// test fails when a forbidden import appears.
package layers

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/specd-dev/specd/"

// forbidden lists, per package, the specd packages it must not depend
// on, directly or not.
var forbidden = map[string][]string{
	"api":     {"serve", "engine", "stages", "model", "tensor", "verify", "draft", "kvsync", "graph", "tokenizer", "sample"},
	"serve":   {"engine", "model", "model/gguf", "tensor", "verify/cpu", "models", "tokenizer"},
	"stages":  {"model", "tensor", "engine", "serve", "api", "tokenizer", "backend/cpu", "backend/llamacpp"},
	"graph":   {"stages", "model", "tensor"},
	"draft":   {"stages", "tensor", "model", "verify", "engine", "serve", "backend/llamacpp"},
	"verify":  {"model", "tensor", "kvsync", "draft", "stages", "backend/llamacpp"},
	"backend": {"model", "tensor", "kvsync", "verify", "draft", "stages", "sample"},
	// The accelerator backend compiles without the Go engine.
	"backend/llamacpp": {"model", "tensor", "kvsync", "verify", "draft", "stages", "sample", "backend/cpu", "engine", "serve"},
	"kvsync":           {"model", "tensor", "stages", "verify", "draft"},
	"tensor":           {"model", "stages", "verify", "draft", "kvsync"},
	"engine":           {"serve", "cmd/specd"},
	// specd bench's package measures through the engine and talks NATS
	// through api, never through the server or the binary.
	"bench": {"serve", "cmd/specd"},
}

func TestLayering(t *testing.T) {
	for pkg, bad := range forbidden {
		out, err := exec.Command("go", "list", "-deps", mod+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := map[string]bool{}
		for _, d := range strings.Fields(string(out)) {
			deps[strings.TrimPrefix(d, mod)] = true
		}
		for _, b := range bad {
			if deps[b] {
				t.Errorf("%s depends on %s: forbidden by docs/architecture.md", pkg, b)
			}
		}
	}
}
