package pull

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// DefaultEndpoint is the Hugging Face host that repository references
// resolve against unless an endpoint is given.
const DefaultEndpoint = "https://huggingface.co"

// urlDir is the cache subfolder for files pulled by plain URL; Hugging Face
// references are cached under their org/repo path directly.
const urlDir = "urls"

// Source is a resolved reference: what to fetch and where it goes in the cache.
type Source struct {
	// URL is the address fetched.
	URL string
	// Rel is the slash-separated path of the file below the cache folder:
	// "org/repo/file.gguf" for a repository reference, "urls/host/path"
	// for a plain URL.
	Rel string
	// Hub reports whether URL is on the Hugging Face endpoint, the only host
	// that is sent the HF_TOKEN.
	Hub bool
}

// Resolve turns REF into a Source. REF is either a Hugging Face-style path
// "org/repo/file.gguf" (the file may sit in subfolders of the repository),
// fetched from ENDPOINT/org/repo/resolve/main/file.gguf, or an http(s) URL.
// A huggingface.co "blob" page URL is rewritten to its "resolve" download.
// endpoint "" means DefaultEndpoint.
func Resolve(ref, endpoint string) (Source, error) {
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	ep, err := url.Parse(strings.TrimRight(endpoint, "/"))
	if err != nil || (ep.Scheme != "http" && ep.Scheme != "https") || ep.Host == "" {
		return Source{}, fmt.Errorf("pull: endpoint %q is not an http(s) URL", endpoint)
	}
	if ref == "" {
		return Source{}, errors.New("pull: empty reference")
	}
	if strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://") {
		return resolveURL(ref, ep)
	}
	if strings.Contains(ref, "://") {
		return Source{}, fmt.Errorf("pull: %q: only http and https URLs are supported", ref)
	}
	segs, err := cleanSegments(ref)
	if err != nil {
		return Source{}, fmt.Errorf("pull: reference %q: %w", ref, err)
	}
	if len(segs) < 3 {
		return Source{}, fmt.Errorf("pull: reference %q is not org/repo/file (e.g. Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q8_0.gguf)", ref)
	}
	u := *ep
	u.Path = ep.Path + "/" + segs[0] + "/" + segs[1] + "/resolve/main/" + strings.Join(segs[2:], "/")
	u.RawPath = ""
	return Source{URL: u.String(), Rel: strings.Join(segs, "/"), Hub: true}, nil
}

func resolveURL(ref string, ep *url.URL) (Source, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return Source{}, fmt.Errorf("pull: bad URL %q: %v", ref, err)
	}
	if u.Host == "" {
		return Source{}, fmt.Errorf("pull: URL %q has no host", ref)
	}
	if u.User != nil {
		return Source{}, fmt.Errorf("pull: URL %q carries credentials; set HF_TOKEN instead", redact(u))
	}
	segs, err := cleanSegments(strings.TrimPrefix(u.Path, "/"))
	if err != nil {
		return Source{}, fmt.Errorf("pull: URL %q: %w", ref, err)
	}
	hub := strings.EqualFold(u.Host, ep.Host)
	if hub || strings.EqualFold(u.Hostname(), "huggingface.co") {
		// org/repo/blob/REV/file is the web page; org/repo/resolve/REV/file the file.
		if len(segs) >= 5 && segs[2] == "blob" {
			segs[2] = "resolve"
			u.Path = "/" + strings.Join(segs, "/")
			u.RawPath = ""
		}
		if len(segs) >= 5 && segs[2] == "resolve" {
			// Cache it where the org/repo/file reference would go, so both
			// spellings share one copy (non-main revisions keep theirs apart).
			rel := append([]string{segs[0], segs[1]}, segs[4:]...)
			if segs[3] != "main" {
				rel = append([]string{urlDir, u.Hostname()}, segs...)
			}
			return Source{URL: u.String(), Rel: strings.Join(rel, "/"), Hub: hub}, nil
		}
	}
	host := u.Hostname()
	if p := u.Port(); p != "" {
		host += "_" + p
	}
	if err := checkSegment(host); err != nil {
		return Source{}, fmt.Errorf("pull: URL %q: host: %w", ref, err)
	}
	rel := append([]string{urlDir, host}, segs...)
	return Source{URL: u.String(), Rel: strings.Join(rel, "/"), Hub: hub}, nil
}

// cleanSegments splits a slash path into segments safe to use as file
// names: no empty, "." or ".." segments, no backslashes or control bytes.
func cleanSegments(p string) ([]string, error) {
	if p == "" || strings.HasSuffix(p, "/") {
		return nil, errors.New("names no file")
	}
	segs := strings.Split(p, "/")
	for _, s := range segs {
		if err := checkSegment(s); err != nil {
			return nil, err
		}
	}
	return segs, nil
}

func checkSegment(s string) error {
	switch {
	case s == "":
		return errors.New("empty path segment")
	case s == "." || s == "..":
		return fmt.Errorf("path segment %q not allowed", s)
	case len(s) > 255:
		return fmt.Errorf("path segment of %d bytes is too long", len(s))
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c == '\\' || c == ':' {
			return fmt.Errorf("path segment %q has a disallowed character %q", s, c)
		}
	}
	return nil
}

func redact(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// DefaultDir returns the cache folder: $XDG_CACHE_HOME/specd, else
// ~/.cache/specd.
func DefaultDir() (string, error) {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "specd"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("pull: no cache folder: %v (set XDG_CACHE_HOME or use --dir)", err)
	}
	return filepath.Join(home, ".cache", "specd"), nil
}

// Path returns where src lives below the cache folder dir.
func (s Source) Path(dir string) string {
	return filepath.Join(dir, filepath.FromSlash(path.Clean(s.Rel)))
}
