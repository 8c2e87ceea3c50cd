package modeltest

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakePeer makes a Peer whose llamaref is a shell script printing ids and
// writing the logits and top-2 files it is asked for.
func fakePeer(t *testing.T, ids, top2 string, logits []float32) *Peer {
	t.Helper()
	dir := t.TempDir()
	raw := make([]byte, 4*len(logits))
	for i, x := range logits {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	if err := os.WriteFile(filepath.Join(dir, "logits.bin"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "top2.txt"), []byte(top2), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `#!/bin/sh
while [ $# -gt 0 ]; do
  case $1 in
    --logits) cp "` + dir + `/logits.bin" "$2" ;;
    --top2) cp "` + dir + `/top2.txt" "$2" ;;
  esac
  shift 2
done
echo "llamaref: flash_attn_type=auto" >&2
echo "` + ids + `"
`
	if err := os.WriteFile(filepath.Join(dir, "llamaref"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Peer{Bin: dir, CPU: "native"}
}

func TestRefParses(t *testing.T) {
	p := fakePeer(t, "5 7", "5 2.5 3 1.25\n7 4 5 3.5\n", []float32{1, -2, 0.5})
	res, err := p.Ref("m.gguf", []int32{1, 2}, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.IDs) != 2 || res.IDs[0] != 5 || res.IDs[1] != 7 {
		t.Errorf("ids %v, want [5 7]", res.IDs)
	}
	if len(res.Logits) != 3 || res.Logits[1] != -2 {
		t.Errorf("logits %v", res.Logits)
	}
	want := []Top2{{5, 3, 2.5, 1.25}, {7, 5, 4, 3.5}}
	if len(res.Top) != 2 || res.Top[0] != want[0] || res.Top[1] != want[1] {
		t.Errorf("top2 %+v, want %+v", res.Top, want)
	}
	if res.Top[1].Margin() != 0.5 {
		t.Errorf("margin %g, want 0.5", res.Top[1].Margin())
	}
	if !strings.Contains(res.Info, "flash_attn_type") {
		t.Errorf("stderr not kept: %q", res.Info)
	}
}

func TestRefRejectsBadOutput(t *testing.T) {
	for _, tc := range []struct {
		ids, top2 string
		want      string
	}{
		{"5", "5 1 3 0\n7 1 3 0\n", "printed 1 ids, want 2"},
		{"5 x", "5 1 3 0\n7 1 3 0\n", "not an id"},
		{"5 7", "5 1 3 0\n", "1 top2 lines, want 2"},
		{"5 7", "5 1 3\n7 1 3 0\n", "top2 line 1"},
	} {
		p := fakePeer(t, tc.ids, tc.top2, []float32{1, 2})
		_, err := p.Ref("m.gguf", []int32{1}, 2, 0)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ids %q top2 %q: error %v, want %q", tc.ids, tc.top2, err, tc.want)
		}
	}
}

func TestRefReportsToolFailure(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "llamaref"), []byte("#!/bin/sh\necho 'cannot load model' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := &Peer{Bin: dir}
	_, err := p.Ref("m.gguf", []int32{1}, 2, 0)
	if err == nil || !strings.Contains(err.Error(), "cannot load model") {
		t.Errorf("error %v, want one carrying the tool's stderr", err)
	}
}

func TestFindPeerWithoutTools(t *testing.T) {
	// The repository's own checkout may or may not have the peer built; a
	// checkout without it must say so.
	dir := t.TempDir()
	if _, err := findPeerAt(dir); err == nil || !errors.Is(err, ErrNoPeer) || !strings.Contains(err.Error(), "not built") {
		t.Errorf("FindPeer without tools: %v", err)
	}
}
