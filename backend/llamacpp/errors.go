package llamacpp

import (
	"errors"
	"fmt"
	"strings"
)

// Errors. Every failure of this package wraps one of them.
var (
	ErrUnsupported = errors.New("llamacpp: this specd cannot load libllama: it was built with -tags nollamacpp, or for a platform " +
		"purego cannot call C from (linux or darwin on amd64 or arm64; android with cgo)")
	ErrLibrary  = errors.New("llamacpp: cannot load libllama")
	ErrSymbol   = errors.New("llamacpp: libllama lacks a symbol")
	ErrVersion  = errors.New("llamacpp: unsupported libllama version")
	ErrModel    = errors.New("llamacpp: cannot load the model")
	ErrDevice   = errors.New("llamacpp: no such ggml device")
	ErrContext  = errors.New("llamacpp: cannot create the context")
	ErrBatch    = errors.New("llamacpp: bad batch")
	ErrDecode   = errors.New("llamacpp: llama_decode failed")
	ErrRollback = errors.New("llamacpp: rollback failed")
	ErrClosed   = errors.New("llamacpp: closed")
)

// SupportedVersions are the llama_version() strings whose struct layouts
// this package mirrors (abi.go): llama.cpp 0.4.0, as a release build and
// as the development build node-llama-cpp 3.21.1 ships.
var SupportedVersions = []string{"0.4.0", "0.4.0-dev"}

// VersionError is a library of a version this package does not support
// (or whose parameter structs do not have the layout of a supported one).
type VersionError struct {
	Path      string   // the library
	Found     string   // its llama_version()
	Supported []string // the versions this package supports
	Layout    string   // non-empty: the version matched but this struct's defaults did not
}

func (e *VersionError) Error() string {
	sup := strings.Join(e.Supported, ", ")
	if e.Layout != "" {
		return fmt.Sprintf("llamacpp: %s reports llama.cpp %s but its %s does not have that release's layout (supported: %s)",
			e.Path, e.Found, e.Layout, sup)
	}
	return fmt.Sprintf("llamacpp: %s is llama.cpp %s; supported: %s", e.Path, e.Found, sup)
}

func (e *VersionError) Unwrap() error { return ErrVersion }

// SymbolError is a library without a function this package calls.
type SymbolError struct {
	Path, Symbol string
	Err          error // the dynamic linker's message
}

func (e *SymbolError) Error() string {
	return fmt.Sprintf("llamacpp: %s has no symbol %s (is it libllama?): %v", e.Path, e.Symbol, e.Err)
}

func (e *SymbolError) Unwrap() error { return ErrSymbol }
