//go:build nollamacpp || !(((linux && !android) || darwin || (android && cgo)) && (amd64 || arm64))

package llamacpp

import "github.com/specd-dev/specd/backend"

// Supported reports whether this build can load libllama.
const Supported = false

// Lib is a loaded libllama; on this platform none can be loaded.
type Lib struct{ Path, Version, Release, SystemInfo string }

// Load reports ErrUnsupported on this platform.
func Load(path string) (*Lib, error) { return nil, ErrUnsupported }

// Devices lists no devices.
func (l *Lib) Devices() []Device { return nil }

// LoadModel reports ErrUnsupported.
func (l *Lib) LoadModel(path string, p ModelParams) (*Model, error) { return nil, ErrUnsupported }

func (l *Lib) String() string { return "llama.cpp (unsupported platform)" }

// Model is a llama_model; none exists on this platform.
type Model struct{}

func (m *Model) Vocab() int                                   { return 0 }
func (m *Model) CtxTrain() int                                { return 0 }
func (m *Model) Lib() *Lib                                    { return nil }
func (m *Model) String() string                               { return "" }
func (m *Model) Close() error                                 { return nil }
func (m *Model) NewBackend(p ContextParams) (*Backend, error) { return nil, ErrUnsupported }

// Backend is a llama_context; none exists on this platform.
type Backend struct{}

var _ backend.Backend = (*Backend)(nil)

func (b *Backend) Vocab() int                              { return 0 }
func (b *Backend) MaxBatch() int                           { return 0 }
func (b *Backend) Slots() int                              { return 0 }
func (b *Backend) Forward(*backend.Batch, []float32) error { return ErrUnsupported }
func (b *Backend) Len(int) int                             { return 0 }
func (b *Backend) Rollback(int, int) error                 { return ErrUnsupported }
func (b *Backend) Close() error                            { return nil }
