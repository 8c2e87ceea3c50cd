package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPullCommand(t *testing.T) {
	body := append([]byte("GGUF"), bytes.Repeat([]byte{7}, 50_000)...)
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
		if r.URL.Path != "/org/repo/resolve/main/m.gguf" {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "m.gguf", time.Time{}, bytes.NewReader(body))
	}))
	defer srv.Close()
	dir := t.TempDir()
	want := filepath.Join(dir, "org", "repo", "m.gguf")
	t.Setenv("HF_TOKEN", "tok")

	// Flags after REF; plain progress lines on a non-terminal stderr.
	code, out, errOut := runCmd("pull", "org/repo/m.gguf", "--dir", dir, "--endpoint", srv.URL)
	if code != 0 || out != want+"\n" || !strings.Contains(errOut, "100%") {
		t.Fatalf("pull: code %d, out %q, stderr %q", code, out, errOut)
	}
	if got, err := os.ReadFile(want); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("file: %v", err)
	}
	if len(auth) != 1 || auth[0] != "Bearer tok" {
		t.Errorf("Authorization headers %q", auth)
	}
	// Endpoint from the environment, cached (no request), --quiet.
	t.Setenv("SPECD_HF_ENDPOINT", srv.URL)
	code, out, errOut = runCmd("pull", "--quiet", "--dir", dir, "org/repo/m.gguf")
	if code != 0 || out != want+"\n" || errOut != "" || len(auth) != 1 {
		t.Errorf("cached: code %d, out %q, stderr %q, %d requests", code, out, errOut, len(auth))
	}
	code, _, _ = runCmd("pull", "--quiet", "--force", "--dir", dir, "org/repo/m.gguf")
	if code != 0 || len(auth) != 2 {
		t.Errorf("--force: code %d, %d requests", code, len(auth))
	}
	// Missing file: exit 1, the URL named.
	code, out, errOut = runCmd("pull", "--quiet", "--dir", dir, "org/repo/nope.gguf")
	if code != 1 || out != "" || !strings.Contains(errOut, srv.URL+"/org/repo/resolve/main/nope.gguf") || !strings.Contains(errOut, "does not exist") {
		t.Errorf("404: code %d, out %q, stderr %q", code, out, errOut)
	}
	for _, args := range [][]string{{"pull"}, {"pull", "a/b/c.gguf", "d/e/f.gguf"}, {"pull", "--bogus", "a/b/c.gguf"}} {
		if code, _, _ := runCmd(args...); code != 2 {
			t.Errorf("%q: code %d, want 2 (usage)", args, code)
		}
	}
	if code, _, errOut := runCmd("pull", "--dir", dir, "just-a-name.gguf"); code != 1 || !strings.Contains(errOut, "not org/repo/file") {
		t.Errorf("bad ref: code %d, stderr %q", code, errOut)
	}
}
