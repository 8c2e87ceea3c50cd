//go:build !nollamacpp && ((linux && !android) || darwin || (android && cgo)) && (amd64 || arm64)

package llamacpp

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
)

// Model is a llama_model loaded by a Lib. Its methods may be called from
// several goroutines.
type Model struct {
	lib      *Lib
	ptr      uintptr
	vocab    int
	ctxTrain int
	desc     string
	device   string // where the weights were asked to go, for String

	mu       sync.Mutex
	backends map[*Backend]struct{}
	closed   bool
}

// LoadModel loads the GGUF model at path with p.
func (l *Lib) LoadModel(path string, p ModelParams) (*Model, error) {
	if err := checkGGUF(path); err != nil {
		return nil, err
	}
	mp := l.fn.modelDefaultParams()
	mp.nGPULayers = int32(max(p.NGPULayers, -1))
	mp.progressCallback = 0
	device := "llama.cpp's default devices"
	// devs is the NULL-terminated device list; pinned for the call (the
	// library copies it into the model).
	var devs []uintptr
	switch name := p.Device; {
	case name == "":
	case strings.EqualFold(name, "none"):
		devs, device = []uintptr{0}, "CPU"
	default:
		d, ty, err := l.device(name)
		if err != nil {
			return nil, err
		}
		devs, device = []uintptr{d, 0}, name
		if ty == "CPU" {
			devs = []uintptr{0} // the CPU is no offload device: the host holds the model
		}
	}
	var pin runtime.Pinner
	defer pin.Unpin()
	if devs != nil {
		pin.Pin(&devs[0])
		mp.devices = &devs[0]
	}
	mark := logMark()
	ptr := l.fn.modelLoadFromFile(path, mp)
	if ptr == 0 {
		return nil, fmt.Errorf("%w: %s%s", ErrModel, path, logTail(mark))
	}
	m := &Model{lib: l, ptr: ptr, device: device, backends: map[*Backend]struct{}{}}
	m.vocab = int(l.fn.vocabNTokens(l.fn.modelGetVocab(ptr)))
	m.ctxTrain = int(l.fn.modelNCtxTrain(ptr))
	buf := make([]byte, 256)
	if n := l.fn.modelDesc(ptr, &buf[0], uintptr(len(buf))); n > 0 {
		m.desc = string(buf[:min(int(n), len(buf)-1)])
	}
	return m, nil
}

// checkGGUF reports a path that is not a readable GGUF file, before
// llama.cpp sees it.
func checkGGUF(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrModel, err)
	}
	defer f.Close()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(f, magic); err != nil || !bytes.Equal(magic, []byte("GGUF")) {
		return fmt.Errorf("%w: %s is not a GGUF file", ErrModel, path)
	}
	return nil
}

// Vocab is the model's vocabulary size (llama_vocab_n_tokens).
func (m *Model) Vocab() int { return m.vocab }

// CtxTrain is the model's training context (llama_model_n_ctx_train).
func (m *Model) CtxTrain() int { return m.ctxTrain }

// Lib is the library the model was loaded by.
func (m *Model) Lib() *Lib { return m.lib }

// String describes the model and where it runs, e.g. "llama.cpp 0.4.0
// (…), llama 58M F16, llama.cpp's default devices".
func (m *Model) String() string {
	return fmt.Sprintf("%s, %s, %s", m.lib, m.desc, m.device)
}

// Close closes the model's backends and frees the model. Closing twice
// does nothing.
func (m *Model) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	bs := m.backends
	m.backends = nil
	m.mu.Unlock()
	for b := range bs {
		b.close()
	}
	m.lib.fn.modelFree(m.ptr)
	return nil
}
