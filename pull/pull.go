// Package pull downloads model files (GGUF) from Hugging Face or any http(s)
// URL into a local cache.
//
// Design: a download goes to NAME.partial next to its final name and is
// renamed to NAME only after its size and SHA-256 check out, so a file under
// the final name is always whole. A later pull resumes the partial with a
// Range request guarded by If-Range (the validator is kept in
// NAME.partial.etag), so a file that changed on the server restarts from
// zero instead of being spliced. Interrupted, truncated and disk-full
// downloads keep their partial for the next run; a checksum mismatch
// removes it.
package pull

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Sentinel errors; the errors Pull returns wrap one of them where it applies.
var (
	ErrNotFound  = errors.New("pull: not found")
	ErrAccess    = errors.New("pull: access denied")
	ErrChecksum  = errors.New("pull: checksum mismatch")
	ErrTruncated = errors.New("pull: download cut short")
	ErrDiskFull  = errors.New("pull: disk full")
)

// Options configure Pull. The zero value downloads from DefaultEndpoint into
// DefaultDir with http.DefaultClient, no token, no progress and no retries.
type Options struct {
	// Dir is the cache folder; "" means DefaultDir().
	Dir string
	// Endpoint replaces https://huggingface.co for org/repo/file references.
	Endpoint string
	// SHA256 is the expected hex digest of the file; "" trusts the server's
	// (X-Linked-Etag or a 64-hex ETag) when it sends one.
	SHA256 string
	// Force downloads again even if the file is already in the cache.
	Force bool
	// Token is sent as "Authorization: Bearer TOKEN" to the endpoint host.
	Token string
	// Client makes the requests; nil means http.DefaultClient.
	Client *http.Client
	// Progress, if not nil, is told how the download goes.
	Progress *Progress
	// Retries is how many more times a cut-short or failed-by-server (5xx,
	// 429) download is resumed before Pull gives up.
	Retries int

	// Seams for tests.
	openFile func(name string, flag int, perm os.FileMode) (writeFile, error)
	backoff  func(retry int) time.Duration
	free     func(dir string) (int64, bool)
}

// writeFile is what a download writes to.
type writeFile interface {
	io.Writer
	Sync() error
	Close() error
}

func osOpenFile(name string, flag int, perm os.FileMode) (writeFile, error) {
	return os.OpenFile(name, flag, perm)
}

const (
	partialSuffix = ".partial"
	etagSuffix    = ".partial.etag"
	userAgent     = "specd-pull/1"
)

// Pull fetches ref (see Resolve) into the cache and returns the file's path.
// A file already in the cache is returned without a request unless
// o.Force is set (if o.SHA256 is set, the cached file is checked against it).
func Pull(ctx context.Context, ref string, o Options) (string, error) {
	src, err := Resolve(ref, o.Endpoint)
	if err != nil {
		return "", err
	}
	want := ""
	if o.SHA256 != "" {
		if !isSHA256(o.SHA256) {
			return "", fmt.Errorf("pull: --sha256 %q is not 64 hex digits", o.SHA256)
		}
		want = strings.ToLower(o.SHA256)
	}
	dir := o.Dir
	if dir == "" {
		if dir, err = DefaultDir(); err != nil {
			return "", err
		}
	}
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	if o.openFile == nil {
		o.openFile = osOpenFile
	}
	if o.free == nil {
		o.free = freeSpace
	}
	if o.backoff == nil {
		o.backoff = func(retry int) time.Duration { return time.Duration(retry) * time.Second }
	}
	d := &download{o: o, src: src, final: src.Path(dir), want: want}
	d.partial = d.final + partialSuffix
	d.etagFile = d.final + etagSuffix

	if fi, err := os.Stat(d.final); err == nil && !o.Force {
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("pull: %s exists and is not a regular file", d.final)
		}
		if want != "" {
			got, err := hashFile(d.final, -1)
			if err != nil {
				return "", fmt.Errorf("pull: checking %s: %w", d.final, err)
			}
			if got != want {
				return "", fmt.Errorf("%w: cached %s has sha256 %s, expected %s (run with --force to download it again)", ErrChecksum, d.final, got, want)
			}
		}
		return d.final, nil
	}
	if err := os.MkdirAll(filepath.Dir(d.final), 0o755); err != nil {
		return "", fmt.Errorf("pull: %w", err)
	}
	unlock, err := lockDir(d.final)
	if err != nil {
		return "", err
	}
	defer unlock()
	if o.Force {
		d.discardPartial()
	}

	for retry := 0; ; retry++ {
		err := d.attempt(ctx)
		if err == nil {
			return d.final, nil
		}
		var re *retryable
		if !errors.As(err, &re) || retry >= o.Retries || ctx.Err() != nil {
			return "", unwrapRetryable(err)
		}
		if o.Progress != nil {
			o.Progress.Note(fmt.Sprintf("%v; retrying", unwrapRetryable(err)))
		}
		t := time.NewTimer(o.backoff(retry + 1))
		select {
		case <-ctx.Done():
			t.Stop()
			return "", d.interrupted(ctx.Err())
		case <-t.C:
		}
	}
}

// retryable marks an error after which another attempt may succeed.
type retryable struct{ err error }

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

func unwrapRetryable(err error) error {
	if re, ok := err.(*retryable); ok {
		return re.err
	}
	return err
}

type download struct {
	o        Options // with the defaults filled in
	src      Source
	final    string
	partial  string
	etagFile string
	want     string // --sha256, lower case
}

// linked holds what the Hugging Face resolve endpoint says about an LFS file
// before it redirects to the storage host.
type linked struct {
	sha  string
	size int64
}

// attempt makes one request and writes what it gets to the partial file;
// it finishes the download when the partial is whole.
func (d *download) attempt(ctx context.Context) error {
	for restarted := false; ; restarted = true {
		off := int64(0)
		if fi, err := os.Stat(d.partial); err == nil {
			off = fi.Size()
		}
		validator := ""
		if off > 0 {
			if b, err := os.ReadFile(d.etagFile); err == nil {
				validator = strings.TrimSpace(string(b))
			}
		}
		resp, lk, err := d.get(ctx, off, validator)
		if err != nil {
			if ctx.Err() != nil {
				return d.interrupted(ctx.Err())
			}
			return &retryable{fmt.Errorf("pull: GET %s: %w", d.src.URL, err)}
		}
		done, err := d.handle(ctx, resp, lk, off)
		resp.Body.Close()
		if done || err != nil {
			return err
		}
		// The partial was stale or unusable and has been removed: start over once.
		if restarted {
			return fmt.Errorf("pull: GET %s: server keeps refusing the download range", d.src.URL)
		}
	}
}

func (d *download) get(ctx context.Context, off int64, validator string) (*http.Response, linked, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.src.URL, nil)
	if err != nil {
		return nil, linked{}, err
	}
	req.Header.Set("User-Agent", userAgent)
	if d.src.Hub && d.o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+d.o.Token)
	}
	if off > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", off))
		if validator != "" {
			req.Header.Set("If-Range", validator)
		}
	}
	var lk linked
	c := *d.o.Client
	prev := c.CheckRedirect
	c.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if r.Response != nil {
			lk.merge(r.Response.Header)
		}
		if prev != nil {
			return prev(r, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, lk, err
	}
	lk.merge(resp.Header)
	if lk.sha == "" {
		if e := unquoteETag(resp.Header.Get("ETag")); isSHA256(e) {
			lk.sha = strings.ToLower(e)
		}
	}
	return resp, lk, nil
}

func (lk *linked) merge(h http.Header) {
	if e := unquoteETag(h.Get("X-Linked-Etag")); lk.sha == "" && isSHA256(e) {
		lk.sha = strings.ToLower(e)
	}
	if n, err := strconv.ParseInt(h.Get("X-Linked-Size"), 10, 64); lk.size == 0 && err == nil && n > 0 {
		lk.size = n
	}
}

// handle deals with one response. It returns done when the file is in place,
// (false, nil) when the partial was discarded and the request should be made
// again from zero.
func (d *download) handle(ctx context.Context, resp *http.Response, lk linked, off int64) (bool, error) {
	if err := d.statusError(resp); err != nil {
		return false, err
	}
	sha := d.want
	if lk.sha != "" {
		if d.want != "" && lk.sha != d.want {
			return false, fmt.Errorf("%w: the server says %s has sha256 %s, but %s was expected", ErrChecksum, d.src.URL, lk.sha, d.want)
		}
		sha = lk.sha
	}
	var start, total int64
	switch resp.StatusCode {
	case http.StatusOK:
		start, total = 0, resp.ContentLength
		if off > 0 && d.o.Progress != nil {
			d.o.Progress.Note("the server sent the whole file (no resume); starting from zero")
		}
	case http.StatusPartialContent:
		a, _, t, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || a != off {
			// Not the range asked for: the partial cannot be continued.
			d.discardPartial()
			return false, nil
		}
		start, total = a, t
	case http.StatusRequestedRangeNotSatisfiable:
		_, _, t, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if off > 0 && ok && t == off && (lk.size == 0 || lk.size == off) {
			// The partial already holds the whole file.
			return true, d.finish(off, sha)
		}
		d.discardPartial()
		return false, nil
	default:
		return false, fmt.Errorf("pull: GET %s: unexpected %s", d.src.URL, resp.Status)
	}
	if total < 0 && lk.size > 0 {
		total = lk.size
	}
	if total >= 0 && lk.size > 0 && total != lk.size {
		return false, fmt.Errorf("pull: GET %s: server sends %d bytes but says the file has %d", d.src.URL, total, lk.size)
	}
	if total >= 0 && total < start {
		return false, fmt.Errorf("pull: GET %s: bad Content-Range %q", d.src.URL, resp.Header.Get("Content-Range"))
	}

	if total > start {
		// Refuse at once rather than fail gigabytes in. The partial being
		// replaced (start 0) frees its space when truncated.
		need := total - start
		if avail, ok := d.o.free(filepath.Dir(d.final)); ok {
			if start == 0 {
				if fi, err := os.Stat(d.partial); err == nil {
					avail += fi.Size()
				}
			}
			if avail < need {
				return false, fmt.Errorf("%w: %s needs %s more but only %s is free in %s; free some space or use --dir", ErrDiskFull, filepath.Base(d.final), fmtBytes(need), fmtBytes(avail), filepath.Dir(d.final))
			}
		}
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if start > 0 {
		flag = os.O_WRONLY | os.O_APPEND
	} else {
		os.Remove(d.etagFile)
	}
	f, err := d.o.openFile(d.partial, flag, 0o644)
	if err != nil {
		return false, fmt.Errorf("pull: %w", err)
	}
	if start == 0 {
		if v := validatorOf(resp.Header); v != "" {
			// Best effort: without it a resume is only checked by size and sha256.
			_ = os.WriteFile(d.etagFile, []byte(v+"\n"), 0o644)
		}
	}
	p := d.o.Progress
	if p != nil {
		p.Start(filepath.Base(d.final), start, total)
	}
	n, copyErr := copyBody(f, resp.Body, p)
	have := start + n
	syncErr := f.Sync()
	closeErr := f.Close()
	if p != nil {
		p.Stop()
	}
	if copyErr == nil {
		copyErr = syncErr
	}
	if copyErr == nil {
		copyErr = closeErr
	}
	if copyErr != nil {
		var we *writeError
		if errors.As(copyErr, &we) {
			if errors.Is(we.err, syscall.ENOSPC) {
				return false, fmt.Errorf("%w writing %s (%w): %s of %s downloaded; the partial file is kept, free some space and run the same command to resume", ErrDiskFull, d.partial, we.err, fmtBytes(have), fmtTotal(total))
			}
			return false, fmt.Errorf("pull: writing %s: %w (partial file kept)", d.partial, we.err)
		}
		if errors.Is(copyErr, syscall.ENOSPC) {
			return false, fmt.Errorf("%w writing %s; the partial file is kept, free some space and run the same command to resume", ErrDiskFull, d.partial)
		}
		if ctx.Err() != nil {
			return false, d.interrupted(ctx.Err())
		}
		return false, &retryable{fmt.Errorf("%w: %s: connection lost after %s of %s (%v); the partial file %s is kept, run the same command to resume", ErrTruncated, d.src.URL, fmtBytes(have), fmtTotal(total), copyErr, d.partial)}
	}
	if total >= 0 && have != total {
		return false, &retryable{fmt.Errorf("%w: %s: got %s of %s; the partial file %s is kept, run the same command to resume", ErrTruncated, d.src.URL, fmtBytes(have), fmtTotal(total), d.partial)}
	}
	return true, d.finish(have, sha)
}

// statusError turns an error status into a clear error; nil for 200, 206, 416.
func (d *download) statusError(resp *http.Response) error {
	code := resp.StatusCode
	switch code {
	case http.StatusOK, http.StatusPartialContent, http.StatusRequestedRangeNotSatisfiable:
		return nil
	}
	// Hugging Face explains itself in X-Error-Code / X-Error-Message.
	hfCode := resp.Header.Get("X-Error-Code")
	hfMsg := resp.Header.Get("X-Error-Message")
	detail := ""
	if hfMsg != "" {
		detail = " (" + hfMsg + ")"
	}
	what := "file"
	if d.src.Hub {
		what = "repository or file"
	}
	switch {
	case hfCode == "GatedRepo" || code == http.StatusForbidden || (code == http.StatusUnauthorized && hfCode != "RepoNotFound"):
		hint := "set HF_TOKEN to a Hugging Face access token"
		if d.o.Token != "" {
			hint = "HF_TOKEN was sent; check that it is valid and that its account has accepted the model's licence on its Hugging Face page"
		}
		if !d.src.Hub {
			hint = "the server wants credentials (HF_TOKEN is only sent to the Hugging Face endpoint)"
		}
		return fmt.Errorf("%w: %s: %s%s; the repository may be gated or private: %s", ErrAccess, d.src.URL, resp.Status, detail, hint)
	case code == http.StatusNotFound || hfCode == "RepoNotFound" || hfCode == "EntryNotFound" || hfCode == "RevisionNotFound":
		hint := ""
		if d.src.Hub && d.o.Token == "" {
			hint = " (or is private: set HF_TOKEN)"
		}
		return fmt.Errorf("%w: %s: %s%s: the %s does not exist%s", ErrNotFound, d.src.URL, resp.Status, detail, what, hint)
	case code >= 500 || code == http.StatusTooManyRequests:
		return &retryable{fmt.Errorf("pull: GET %s: %s%s", d.src.URL, resp.Status, detail)}
	}
	return fmt.Errorf("pull: GET %s: %s%s", d.src.URL, resp.Status, detail)
}

// finish checks the whole partial (size have) against sha and the GGUF
// magic, then renames it to the final name.
func (d *download) finish(have int64, sha string) error {
	if sha != "" {
		got, err := hashFile(d.partial, have)
		if err != nil {
			return fmt.Errorf("pull: checking %s: %w", d.partial, err)
		}
		if got != sha {
			d.discardPartial()
			return fmt.Errorf("%w: %s has sha256 %s, expected %s; the download was removed", ErrChecksum, d.src.URL, got, sha)
		}
	}
	if strings.EqualFold(filepath.Ext(d.final), ".gguf") {
		if err := checkMagic(d.partial); err != nil {
			d.discardPartial()
			return fmt.Errorf("pull: %s: %w; the download was removed", d.src.URL, err)
		}
	}
	if err := os.Rename(d.partial, d.final); err != nil {
		return fmt.Errorf("pull: %w", err)
	}
	os.Remove(d.etagFile)
	syncDir(filepath.Dir(d.final))
	return nil
}

func (d *download) discardPartial() {
	os.Remove(d.partial)
	os.Remove(d.etagFile)
}

func (d *download) interrupted(err error) error {
	if fi, e := os.Stat(d.partial); e == nil && fi.Size() > 0 {
		return fmt.Errorf("pull: interrupted (%w); %s downloaded and kept in %s, run the same command to resume", err, fmtBytes(fi.Size()), d.partial)
	}
	return fmt.Errorf("pull: interrupted (%w)", err)
}

// writeError marks a failed write to the partial file (as opposed to a
// failed read from the network).
type writeError struct{ err error }

func (w *writeError) Error() string { return w.err.Error() }
func (w *writeError) Unwrap() error { return w.err }

// copyBody copies r to w, telling p, and returns the number of bytes
// written. A read error other than io.EOF (a connection closed before the
// body's announced length gives io.ErrUnexpectedEOF) is returned as is; a
// write error is wrapped in *writeError.
func copyBody(w io.Writer, r io.Reader, p *Progress) (int64, error) {
	buf := make([]byte, 256<<10)
	var n int64
	for {
		k, rerr := r.Read(buf)
		if k > 0 {
			m, werr := w.Write(buf[:k])
			n += int64(m)
			if p != nil {
				p.Add(int64(m))
			}
			if werr == nil && m < k {
				werr = io.ErrShortWrite
			}
			if werr != nil {
				return n, &writeError{werr}
			}
		}
		if rerr == io.EOF {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

// hashFile returns the hex SHA-256 of the first n bytes of name (all if n < 0).
func hashFile(name string, n int64) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	var r io.Reader = f
	if n >= 0 {
		r = io.LimitReader(f, n)
	}
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func checkMagic(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	var b [4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil || string(b[:]) != "GGUF" {
		return fmt.Errorf("not a GGUF file (starts with %q); is the URL a web page rather than the file?", b[:])
	}
	return nil
}

func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		_ = f.Sync()
		f.Close()
	}
}

// parseContentRange parses "bytes A-B/T" or "bytes */T" (A = B = -1);
// T is -1 for "*".
func parseContentRange(s string) (a, b, t int64, ok bool) {
	rest, found := strings.CutPrefix(s, "bytes ")
	if !found {
		return 0, 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, 0, false
	}
	t = -1
	if tot != "*" {
		var err error
		if t, err = strconv.ParseInt(tot, 10, 64); err != nil || t < 0 {
			return 0, 0, 0, false
		}
	}
	if rng == "*" {
		return -1, -1, t, t >= 0
	}
	as, bs, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, 0, false
	}
	a, err1 := strconv.ParseInt(as, 10, 64)
	b, err2 := strconv.ParseInt(bs, 10, 64)
	if err1 != nil || err2 != nil || a < 0 || b < a || (t >= 0 && b >= t) {
		return 0, 0, 0, false
	}
	return a, b, t, true
}

// validatorOf returns the If-Range validator for a response: a strong ETag,
// else Last-Modified, else "".
func validatorOf(h http.Header) string {
	if e := h.Get("ETag"); e != "" && !strings.HasPrefix(e, "W/") && !strings.ContainsAny(e, "\r\n") {
		return e
	}
	if lm := h.Get("Last-Modified"); lm != "" && !strings.ContainsAny(lm, "\r\n") {
		return lm
	}
	return ""
}

func unquoteETag(e string) string {
	e = strings.TrimPrefix(strings.TrimSpace(e), "W/")
	return strings.Trim(e, `"`)
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
