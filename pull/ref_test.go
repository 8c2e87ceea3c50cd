package pull

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		ref, endpoint string
		url, rel      string
		hub           bool
	}{
		{"Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q8_0.gguf", "",
			"https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q8_0.gguf",
			"Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q8_0.gguf", true},
		{"org/repo/sub/dir/m.gguf", "http://127.0.0.1:8080/",
			"http://127.0.0.1:8080/org/repo/resolve/main/sub/dir/m.gguf", "org/repo/sub/dir/m.gguf", true},
		{"org/repo/m.gguf", "https://mirror.example/hf",
			"https://mirror.example/hf/org/repo/resolve/main/m.gguf", "org/repo/m.gguf", true},
		// A file name that needs escaping in the URL.
		{"org/repo/my model.gguf", "",
			"https://huggingface.co/org/repo/resolve/main/my%20model.gguf", "org/repo/my model.gguf", true},
		// Hugging Face web page and download URLs share the reference's cache path.
		{"https://huggingface.co/org/repo/blob/main/m.gguf", "",
			"https://huggingface.co/org/repo/resolve/main/m.gguf", "org/repo/m.gguf", true},
		{"https://huggingface.co/org/repo/resolve/main/m.gguf?download=true", "",
			"https://huggingface.co/org/repo/resolve/main/m.gguf?download=true", "org/repo/m.gguf", true},
		{"https://huggingface.co/org/repo/resolve/abc123/m.gguf", "",
			"https://huggingface.co/org/repo/resolve/abc123/m.gguf", "urls/huggingface.co/org/repo/resolve/abc123/m.gguf", true},
		// Plain URLs go under urls/host[_port]/path; the query is not part of the name.
		{"https://example.com/models/m.gguf?sig=x", "",
			"https://example.com/models/m.gguf?sig=x", "urls/example.com/models/m.gguf", false},
		{"http://127.0.0.1:9000/m.gguf", "",
			"http://127.0.0.1:9000/m.gguf", "urls/127.0.0.1_9000/m.gguf", false},
	} {
		src, err := Resolve(tc.ref, tc.endpoint)
		if err != nil {
			t.Errorf("Resolve(%q, %q): %v", tc.ref, tc.endpoint, err)
			continue
		}
		if src.URL != tc.url || src.Rel != tc.rel || src.Hub != tc.hub {
			t.Errorf("Resolve(%q, %q) = %+v, want URL %q, Rel %q, Hub %v", tc.ref, tc.endpoint, src, tc.url, tc.rel, tc.hub)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	for _, tc := range []struct{ ref, endpoint, want string }{
		{"", "", "empty reference"},
		{"model.gguf", "", "not org/repo/file"},
		{"org/model.gguf", "", "not org/repo/file"},
		{"org/repo/", "", "names no file"},
		{"org//m.gguf", "", "empty path segment"},
		{"org/repo/../../etc/passwd", "", `".." not allowed`},
		{"org/repo/./m.gguf", "", `"." not allowed`},
		{`org/repo/a\b.gguf`, "", "disallowed character"},
		{"org/repo/a\x00.gguf", "", "disallowed character"},
		{"org/repo/" + strings.Repeat("x", 300), "", "too long"},
		{"ftp://host/m.gguf", "", "only http and https"},
		{"https:///m.gguf", "", "has no host"},
		{"https://user:pw@host/m.gguf", "", "carries credentials"},
		{"https://host/", "", "names no file"},
		{"https://host/a/%2e%2e/m.gguf", "", `".." not allowed`},
		{"org/repo/m.gguf", "ftp://x", "not an http(s) URL"},
		{"org/repo/m.gguf", "localhost", "not an http(s) URL"},
	} {
		_, err := Resolve(tc.ref, tc.endpoint)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "pull: ") {
			t.Errorf("Resolve(%q, %q) error %v, want one containing %q", tc.ref, tc.endpoint, err, tc.want)
		}
	}
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/tmp/xdg")
	if d, err := DefaultDir(); err != nil || d != filepath.Join("/tmp/xdg", "specd") {
		t.Errorf("with XDG_CACHE_HOME: %q, %v", d, err)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/someone")
	if d, err := DefaultDir(); err != nil || d != filepath.Join("/home/someone", ".cache", "specd") {
		t.Errorf("without XDG_CACHE_HOME: %q, %v", d, err)
	}
}
