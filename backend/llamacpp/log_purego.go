//go:build !nollamacpp && ((linux && !android) || darwin || (android && cgo)) && (amd64 || arm64)

package llamacpp

import (
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

var (
	logCbOnce sync.Once
	logCb     uintptr
)

// logCallback returns the C function pointer of the ggml_log_callback
// that feeds logText (made once: purego's callbacks are never freed), or
// 0 if this platform cannot make one; llama.cpp then logs to stderr.
func logCallback() uintptr {
	logCbOnce.Do(func() {
		defer func() { _ = recover() }()
		logCb = purego.NewCallback(func(level int32, text *byte, _ unsafe.Pointer) {
			logText(level, cString(text))
		})
	})
	return logCb
}

// cString copies the NUL-terminated C string at p.
func cString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}
