package pull

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const ref = "org/repo/model.gguf"

// content returns n bytes that start with the GGUF magic.
func content(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	copy(b, "GGUF")
	return b
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// req is what the test server saw of one request.
type req struct {
	Path, Range, IfRange, Auth string
}

// server serves one file at /org/repo/resolve/main/model.gguf with Range
// support (http.ServeContent). handle, if set, may answer a request itself
// (returning true) given how many requests came before it.
type server struct {
	*httptest.Server
	content []byte
	etag    string
	handle  func(w http.ResponseWriter, r *http.Request, n int) bool

	mu   sync.Mutex
	reqs []req
}

func newServer(t *testing.T, body []byte) *server {
	s := &server{content: body}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, req{r.URL.Path, r.Header.Get("Range"), r.Header.Get("If-Range"), r.Header.Get("Authorization")})
		s.mu.Unlock()
		if s.handle != nil && s.handle(w, r, n) {
			return
		}
		if r.URL.Path != "/org/repo/resolve/main/model.gguf" {
			http.NotFound(w, r)
			return
		}
		if s.etag != "" {
			w.Header().Set("ETag", s.etag)
		}
		http.ServeContent(w, r, "model.gguf", time.Time{}, bytes.NewReader(s.content))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() []req {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]req(nil), s.reqs...)
}

// cutAfter answers with the full Content-Length but sends only k bytes
// from offset off of body, then drops the connection.
func cutAfter(w http.ResponseWriter, body []byte, k int) {
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body[:k])
}

func opts(s *server, dir string) Options {
	return Options{Dir: dir, Endpoint: s.URL, Client: s.Client()}
}

func readFinal(t *testing.T, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "org", "repo", "model.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func partialSize(t *testing.T, dir string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, "org", "repo", "model.gguf.partial"))
	if err != nil {
		return -1
	}
	return fi.Size()
}

func finalExists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "org", "repo", "model.gguf"))
	return err == nil
}

func TestFreshDownload(t *testing.T) {
	body := content(700_000, 1)
	s := newServer(t, body)
	dir := t.TempDir()
	o := opts(s, dir)
	o.Token = "secret"
	var log bytes.Buffer
	o.Progress = NewProgress(&log, false)
	p, err := Pull(context.Background(), ref, o)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "org", "repo", "model.gguf"); p != want {
		t.Errorf("path %q, want %q", p, want)
	}
	if !bytes.Equal(readFinal(t, dir), body) {
		t.Error("downloaded bytes differ")
	}
	if n := partialSize(t, dir); n != -1 {
		t.Errorf("partial file left behind (%d bytes)", n)
	}
	if _, err := os.Stat(p + etagSuffix); err == nil {
		t.Error("etag file left behind")
	}
	r := s.requests()
	if len(r) != 1 || r[0].Range != "" || r[0].Auth != "Bearer secret" {
		t.Errorf("requests %+v, want one without Range, with the token", r)
	}
	if !strings.Contains(log.String(), "100% 683.6 KiB / 683.6 KiB") {
		t.Errorf("progress log %q lacks the final line", log.String())
	}
}

func TestResumeAfterTruncation(t *testing.T) {
	body := content(500_000, 2)
	s := newServer(t, body)
	s.etag = `"v1"`
	s.handle = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n == 0 {
			w.Header().Set("ETag", s.etag)
			cutAfter(w, body, 123_457)
			return true
		}
		return false
	}
	dir := t.TempDir()
	_, err := Pull(context.Background(), ref, opts(s, dir))
	if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "partial file") || !strings.Contains(err.Error(), "resume") {
		t.Fatalf("first pull: %v, want a truncation error that mentions the kept partial", err)
	}
	if finalExists(dir) {
		t.Fatal("a truncated download is under the final name")
	}
	if n := partialSize(t, dir); n != 123_457 {
		t.Fatalf("partial has %d bytes, want 123457", n)
	}
	if _, err := Pull(context.Background(), ref, opts(s, dir)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFinal(t, dir), body) {
		t.Error("resumed file differs")
	}
	r := s.requests()
	if len(r) != 2 || r[1].Range != "bytes=123457-" || r[1].IfRange != `"v1"` {
		t.Errorf("requests %+v, want a second with Range bytes=123457- and If-Range \"v1\"", r)
	}
}

func TestRetryResumes(t *testing.T) {
	body := content(300_000, 3)
	s := newServer(t, body)
	s.handle = func(w http.ResponseWriter, r *http.Request, n int) bool {
		switch n {
		case 0:
			cutAfter(w, body, 1000)
		case 1:
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			return false
		}
		return true
	}
	dir := t.TempDir()
	o := opts(s, dir)
	o.Retries = 2
	var waits []int
	o.backoff = func(retry int) time.Duration { waits = append(waits, retry); return 0 }
	if _, err := Pull(context.Background(), ref, o); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFinal(t, dir), body) {
		t.Error("file differs")
	}
	r := s.requests()
	if len(r) != 3 || r[1].Range != "bytes=1000-" || r[2].Range != "bytes=1000-" || fmt.Sprint(waits) != "[1 2]" {
		t.Errorf("requests %+v, backoffs %v", r, waits)
	}
	// Out of retries: the error is returned.
	s2 := newServer(t, body)
	s2.handle = func(w http.ResponseWriter, r *http.Request, n int) bool {
		http.Error(w, "down", http.StatusBadGateway)
		return true
	}
	o2 := opts(s2, t.TempDir())
	o2.Retries = 1
	o2.backoff = func(int) time.Duration { return 0 }
	if _, err := Pull(context.Background(), ref, o2); err == nil || !strings.Contains(err.Error(), "502") || len(s2.requests()) != 2 {
		t.Errorf("err %v after %d requests, want a 502 error after 2", err, len(s2.requests()))
	}
}

func TestServerIgnoresRange(t *testing.T) {
	body := content(200_000, 4)
	s := newServer(t, body)
	s.handle = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n == 0 {
			cutAfter(w, body, 50_000)
			return true
		}
		// Always the whole file, 200, whatever Range says.
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
		return true
	}
	dir := t.TempDir()
	if _, err := Pull(context.Background(), ref, opts(s, dir)); !errors.Is(err, ErrTruncated) {
		t.Fatalf("first pull: %v", err)
	}
	if _, err := Pull(context.Background(), ref, opts(s, dir)); err != nil {
		t.Fatal(err)
	}
	if got := readFinal(t, dir); !bytes.Equal(got, body) {
		t.Errorf("file has %d bytes (want %d) or differs: a 200 must restart from zero", len(got), len(body))
	}
	if r := s.requests(); len(r) != 2 || r[1].Range != "bytes=50000-" {
		t.Errorf("requests %+v", r)
	}
}

func TestFileChangedOnServer(t *testing.T) {
	old, body := content(100_000, 5), content(120_000, 6)
	s := newServer(t, body)
	s.etag = `"v2"`
	dir := t.TempDir()
	// A partial of the old version, with its validator.
	os.MkdirAll(filepath.Join(dir, "org", "repo"), 0o755)
	final := filepath.Join(dir, "org", "repo", "model.gguf")
	os.WriteFile(final+partialSuffix, old[:40_000], 0o644)
	os.WriteFile(final+etagSuffix, []byte(`"v1"`+"\n"), 0o644)
	if _, err := Pull(context.Background(), ref, opts(s, dir)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFinal(t, dir), body) {
		t.Error("old partial was spliced onto the new file")
	}
	if r := s.requests(); len(r) != 1 || r[0].IfRange != `"v1"` {
		t.Errorf("requests %+v, want one with If-Range \"v1\"", r)
	}
}

func TestRangeNotSatisfiable(t *testing.T) {
	body := content(80_000, 7)
	// The partial already holds the whole file: 416, then finished without
	// another byte.
	s := newServer(t, body)
	dir := t.TempDir()
	final := filepath.Join(dir, "org", "repo", "model.gguf")
	os.MkdirAll(filepath.Dir(final), 0o755)
	os.WriteFile(final+partialSuffix, body, 0o644)
	o := opts(s, dir)
	o.SHA256 = sum(body)
	if _, err := Pull(context.Background(), ref, o); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFinal(t, dir), body) || partialSize(t, dir) != -1 {
		t.Error("complete partial not moved into place")
	}
	if r := s.requests(); len(r) != 1 || r[0].Range != "bytes=80000-" {
		t.Errorf("requests %+v", r)
	}
	// A partial longer than the file is stale: discarded, downloaded again.
	s2 := newServer(t, body)
	dir2 := t.TempDir()
	final2 := filepath.Join(dir2, "org", "repo", "model.gguf")
	os.MkdirAll(filepath.Dir(final2), 0o755)
	os.WriteFile(final2+partialSuffix, content(90_000, 8), 0o644)
	if _, err := Pull(context.Background(), ref, opts(s2, dir2)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFinal(t, dir2), body) {
		t.Error("stale partial not replaced")
	}
	if r := s2.requests(); len(r) != 2 || r[0].Range != "bytes=90000-" || r[1].Range != "" {
		t.Errorf("requests %+v, want a ranged one then a full one", r)
	}
}

func TestNotFound(t *testing.T) {
	s := newServer(t, content(10, 9))
	dir := t.TempDir()
	_, err := Pull(context.Background(), "org/repo/missing.gguf", opts(s, dir))
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), s.URL+"/org/repo/resolve/main/missing.gguf") ||
		!strings.Contains(err.Error(), "repository or file does not exist") {
		t.Errorf("err %v, want a not-found error naming the URL", err)
	}
	// Hugging Face answers 401 + RepoNotFound for a repository that does not exist.
	s.handle = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("X-Error-Code", "RepoNotFound")
		w.Header().Set("X-Error-Message", "Repository not found")
		w.WriteHeader(http.StatusUnauthorized)
		return true
	}
	if _, err := Pull(context.Background(), ref, opts(s, dir)); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "Repository not found") {
		t.Errorf("RepoNotFound: %v", err)
	}
	if finalExists(dir) || partialSize(t, dir) != -1 {
		t.Error("files left after an error status")
	}
}

func TestGated(t *testing.T) {
	s := newServer(t, content(10, 10))
	s.handle = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("X-Error-Code", "GatedRepo")
		w.WriteHeader(http.StatusUnauthorized)
		return true
	}
	_, err := Pull(context.Background(), ref, opts(s, t.TempDir()))
	if !errors.Is(err, ErrAccess) || !strings.Contains(err.Error(), "set HF_TOKEN") || !strings.Contains(err.Error(), "gated") {
		t.Errorf("401: %v", err)
	}
	s.handle = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.WriteHeader(http.StatusForbidden)
		return true
	}
	o := opts(s, t.TempDir())
	o.Token = "tok"
	if _, err := Pull(context.Background(), ref, o); !errors.Is(err, ErrAccess) || !strings.Contains(err.Error(), "licence") {
		t.Errorf("403 with token: %v", err)
	}
	// The token goes to the endpoint host only.
	o.Endpoint = "https://hub.example"
	if _, err := Pull(context.Background(), s.URL+"/org/repo/resolve/main/model.gguf", o); !errors.Is(err, ErrAccess) {
		t.Errorf("403 by URL: %v", err)
	}
	if r := s.requests(); r[len(r)-1].Auth != "" {
		t.Errorf("token sent to a host other than the endpoint: %+v", r[len(r)-1])
	}
}

func TestChecksumMismatch(t *testing.T) {
	body := content(150_000, 11)
	s := newServer(t, body)
	dir := t.TempDir()
	o := opts(s, dir)
	o.SHA256 = strings.Repeat("ab", 32)
	_, err := Pull(context.Background(), ref, o)
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), sum(body)) || !strings.Contains(err.Error(), "removed") {
		t.Errorf("err %v, want a checksum error with the actual sum", err)
	}
	if finalExists(dir) || partialSize(t, dir) != -1 {
		t.Error("a file that failed its checksum was kept")
	}
	// Bad --sha256 text.
	o.SHA256 = "xyz"
	if _, err := Pull(context.Background(), ref, o); err == nil || !strings.Contains(err.Error(), "64 hex") {
		t.Errorf("bad --sha256: %v", err)
	}
	// The right one, in upper case.
	o.SHA256 = strings.ToUpper(sum(body))
	if _, err := Pull(context.Background(), ref, o); err != nil {
		t.Fatal(err)
	}
}

func TestETagSHA256(t *testing.T) {
	body := content(260_000, 12)
	s := newServer(t, body)
	s.etag = `"` + sum(body) + `"`
	dir := t.TempDir()
	if _, err := Pull(context.Background(), ref, opts(s, dir)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFinal(t, dir), body) {
		t.Error("file differs")
	}
	// The server's sha256 does not match what it sends: rejected, removed.
	s2 := newServer(t, body)
	s2.etag = `"` + sum(body[1:]) + `"`
	dir2 := t.TempDir()
	if _, err := Pull(context.Background(), ref, opts(s2, dir2)); !errors.Is(err, ErrChecksum) {
		t.Errorf("corrupt body: %v", err)
	}
	if finalExists(dir2) || partialSize(t, dir2) != -1 {
		t.Error("corrupt download kept")
	}
	// --sha256 that disagrees with the server's: refused before downloading.
	o := opts(s, t.TempDir())
	o.SHA256 = sum(body[1:])
	if _, err := Pull(context.Background(), ref, o); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "the server says") {
		t.Errorf("--sha256 against server: %v", err)
	}
}

// TestLinkedETag mimics Hugging Face: the resolve URL redirects to a storage
// host with X-Linked-Etag (sha256) and X-Linked-Size; the storage host's own
// ETag is something else.
func TestLinkedETag(t *testing.T) {
	body := content(90_000, 13)
	for _, tc := range []struct {
		name   string
		linked string
		size   int
		ok     error
	}{
		{"match", sum(body), len(body), nil},
		{"mismatch", sum(body[2:]), len(body), ErrChecksum},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, body)
			s.handle = func(w http.ResponseWriter, r *http.Request, n int) bool {
				switch r.URL.Path {
				case "/org/repo/resolve/main/model.gguf":
					w.Header().Set("X-Linked-Etag", `"`+tc.linked+`"`)
					w.Header().Set("X-Linked-Size", strconv.Itoa(tc.size))
					w.Header().Set("ETag", `"0123456789abcdef0123456789abcdef01234567"`)
					http.Redirect(w, r, "/cdn/blob?sig=1", http.StatusFound)
				case "/cdn/blob":
					w.Header().Set("ETag", `"cdn-etag"`)
					http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
				default:
					http.NotFound(w, r)
				}
				return true
			}
			dir := t.TempDir()
			_, err := Pull(context.Background(), ref, opts(s, dir))
			if !errors.Is(err, tc.ok) || (err != nil) == (tc.ok == nil) {
				t.Fatalf("err %v, want %v", err, tc.ok)
			}
			if tc.ok == nil && !bytes.Equal(readFinal(t, dir), body) {
				t.Error("file differs")
			}
		})
	}
}

func TestAlreadyComplete(t *testing.T) {
	body := content(50_000, 14)
	s := newServer(t, body)
	dir := t.TempDir()
	if _, err := Pull(context.Background(), ref, opts(s, dir)); err != nil {
		t.Fatal(err)
	}
	p, err := Pull(context.Background(), ref, opts(s, dir))
	if err != nil || p != filepath.Join(dir, "org", "repo", "model.gguf") {
		t.Fatalf("second pull: %q, %v", p, err)
	}
	if n := len(s.requests()); n != 1 {
		t.Errorf("%d requests, want 1: a cached file is not downloaded again", n)
	}
	// A wrong --sha256 against the cached file: error, no request.
	o := opts(s, dir)
	o.SHA256 = sum(body[1:])
	if _, err := Pull(context.Background(), ref, o); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("cached file vs --sha256: %v", err)
	}
	// --force downloads it again (a changed file on the server replaces it).
	s.content = content(60_000, 15)
	o = opts(s, dir)
	o.Force = true
	if _, err := Pull(context.Background(), ref, o); err != nil {
		t.Fatal(err)
	}
	if n := len(s.requests()); n != 2 || !bytes.Equal(readFinal(t, dir), s.content) {
		t.Errorf("%d requests after --force, or file not replaced", n)
	}
}

// fullDisk lets limit bytes through to the file, then fails with ENOSPC.
type fullDisk struct {
	*os.File
	left int
}

func (f *fullDisk) Write(b []byte) (int, error) {
	if len(b) <= f.left {
		f.left -= len(b)
		return f.File.Write(b)
	}
	n, _ := f.File.Write(b[:f.left])
	f.left = 0
	return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
}

func TestDiskFull(t *testing.T) {
	body := content(400_000, 16)
	s := newServer(t, body)
	dir := t.TempDir()
	o := opts(s, dir)
	o.Retries = 3 // a full disk is not retried
	o.openFile = func(name string, flag int, perm os.FileMode) (writeFile, error) {
		f, err := os.OpenFile(name, flag, perm)
		if err != nil {
			return nil, err
		}
		return &fullDisk{File: f, left: 100_001}, nil
	}
	_, err := Pull(context.Background(), ref, o)
	if !errors.Is(err, ErrDiskFull) || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "partial file is kept") {
		t.Fatalf("err %v, want a disk-full error wrapping ENOSPC and saying the partial is kept", err)
	}
	if finalExists(dir) || partialSize(t, dir) != 100_001 {
		t.Fatalf("final exists %v, partial %d bytes, want no final and 100001", finalExists(dir), partialSize(t, dir))
	}
	if n := len(s.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	// Space freed: the next pull resumes.
	if _, err := Pull(context.Background(), ref, opts(s, dir)); err != nil {
		t.Fatal(err)
	}
	if r := s.requests(); len(r) != 2 || r[1].Range != "bytes=100001-" || !bytes.Equal(readFinal(t, dir), body) {
		t.Errorf("resume after disk full: requests %+v", r)
	}
}

// cancelAfter cancels a context once n bytes have been written to the file.
type cancelAfter struct {
	*os.File
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(b []byte) (int, error) {
	k, err := c.File.Write(b)
	if c.n -= k; c.n <= 0 {
		c.cancel()
	}
	return k, err
}

func TestCancelLeavesResumablePartial(t *testing.T) {
	body := content(300_000, 17)
	s := newServer(t, body)
	const sent = 70_000
	s.handle = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n > 0 {
			return false
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body[:sent])
		w.(http.Flusher).Flush()
		// Hold the rest until the client goes away (bounded).
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		return true
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := opts(s, dir)
	o.Retries = 3
	o.openFile = func(name string, flag int, perm os.FileMode) (writeFile, error) {
		f, err := os.OpenFile(name, flag, perm)
		if err != nil {
			return nil, err
		}
		return &cancelAfter{File: f, n: sent, cancel: cancel}, nil
	}
	done := make(chan error, 1)
	go func() {
		_, err := Pull(ctx, ref, o)
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Pull did not return after cancel")
	}
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "resume") {
		t.Fatalf("err %v, want an interruption that mentions resuming", err)
	}
	if finalExists(dir) || partialSize(t, dir) != sent {
		t.Fatalf("partial %d bytes, want %d, and no final file", partialSize(t, dir), sent)
	}
	if _, err := Pull(context.Background(), ref, opts(s, dir)); err != nil {
		t.Fatal(err)
	}
	if r := s.requests(); len(r) != 2 || r[1].Range != "bytes=70000-" || !bytes.Equal(readFinal(t, dir), body) {
		t.Errorf("resume after cancel: requests %+v", r)
	}
}

func TestNotGGUF(t *testing.T) {
	s := newServer(t, []byte("<!DOCTYPE html><html>sign in</html>"))
	dir := t.TempDir()
	_, err := Pull(context.Background(), ref, opts(s, dir))
	if err == nil || !strings.Contains(err.Error(), "not a GGUF file") || finalExists(dir) || partialSize(t, dir) != -1 {
		t.Errorf("err %v, want not-GGUF with nothing kept", err)
	}
}

func TestConcurrentPullRefused(t *testing.T) {
	body := content(10_000, 18)
	s := newServer(t, body)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "org", "repo"), 0o755)
	unlock, err := lockDir(filepath.Join(dir, "org", "repo", "model.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Pull(context.Background(), ref, opts(s, dir))
	unlock()
	if err == nil || !strings.Contains(err.Error(), "another specd pull") {
		if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
			t.Fatalf("err %v, want a pull refused while another holds the lock", err)
		}
		t.Skipf("no advisory locking here (err %v)", err)
	}
	if _, err := Pull(context.Background(), ref, opts(s, dir)); err != nil {
		t.Fatal(err)
	}
}

func TestNotEnoughSpace(t *testing.T) {
	body := content(100_000, 19)
	s := newServer(t, body)
	dir := t.TempDir()
	final := filepath.Join(dir, "org", "repo", "model.gguf")
	os.MkdirAll(filepath.Dir(final), 0o755)
	os.WriteFile(final+partialSuffix, body[:30_000], 0o644)
	o := opts(s, dir)
	var asked string
	o.free = func(d string) (int64, bool) { asked = d; return 50_000, true }
	_, err := Pull(context.Background(), ref, o)
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "needs 68.4 KiB more but only 48.8 KiB is free") {
		t.Fatalf("err %v, want a disk-full error before writing", err)
	}
	if asked != filepath.Dir(final) || partialSize(t, dir) != 30_000 {
		t.Errorf("free space asked for %q; partial %d bytes, want it untouched", asked, partialSize(t, dir))
	}
	o.free = func(string) (int64, bool) { return 70_000, true }
	if _, err := Pull(context.Background(), ref, o); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readFinal(t, dir), body) {
		t.Error("file differs")
	}
}
