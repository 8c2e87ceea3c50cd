package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that records a failure instead of failing the
// test running it; Fatalf ends the goroutine as testing's does.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// check runs Check on a recorder, in its own goroutine so that Fatalf can end it.
func check(t *testing.T, path string, got []byte) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Check(r, path, got)
	}()
	<-done
	return r
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.golden")
	gotPath := filepath.Join(dir, "x.got")
	if GotPath(path) != gotPath {
		t.Fatalf("GotPath(%s) = %s, want %s", path, GotPath(path), gotPath)
	}

	if r := check(t, path, []byte("a\n")); !r.failed || !strings.Contains(r.msg, "-update") {
		t.Errorf("missing golden file: failed %v, message %q, want one naming -update", r.failed, r.msg)
	}

	if err := os.WriteFile(path, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gotPath, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := check(t, path, []byte("a\n")); r.failed {
		t.Errorf("equal output failed: %s", r.msg)
	}
	if _, err := os.Stat(gotPath); !os.IsNotExist(err) {
		t.Errorf("a match left the stale %s (%v)", gotPath, err)
	}

	r := check(t, path, []byte("b\n"))
	if !r.failed || !strings.Contains(r.msg, path) || !strings.Contains(r.msg, gotPath) {
		t.Errorf("mismatch: failed %v, message %q, want both file names", r.failed, r.msg)
	}
	if b, err := os.ReadFile(gotPath); err != nil || string(b) != "b\n" {
		t.Errorf("%s holds %q (%v), want the output", gotPath, b, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "a\n" {
		t.Errorf("a mismatch changed the golden file to %q", b)
	}

	defer func(u bool) { *update = u }(*update)
	*update = true
	if r := check(t, path, []byte("b\n")); r.failed {
		t.Errorf("-update failed: %s", r.msg)
	}
	if b, _ := os.ReadFile(path); string(b) != "b\n" {
		t.Errorf("-update left the golden file %q, want the output", b)
	}
	if _, err := os.Stat(gotPath); !os.IsNotExist(err) {
		t.Errorf("-update left %s (%v)", gotPath, err)
	}
}
