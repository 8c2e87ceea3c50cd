//go:build !nollamacpp && ((linux && !android) || darwin || (android && cgo)) && (amd64 || arm64)

package llamacpp

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
)

// Supported reports whether this build can load libllama.
const Supported = true

// Lib is a loaded libllama. Its methods may be called from several
// goroutines.
type Lib struct {
	Path       string // the library file, symbolic links resolved
	Version    string // llama_version()
	Release    string // the release a node-llama-cpp build names (_nlcBuildMetadata.json), or ""
	SystemInfo string // llama_print_system_info(), after ggml's backends are loaded

	fn      funcs
	handle  uintptr
	layout  string    // the struct whose defaults differ from the pinned ones, or ""
	initErr error     // from init
	once    sync.Once // init
}

var (
	libsMu sync.Mutex
	libs   = map[string]*Lib{} // by resolved path: dlopen'ed and resolved, version not yet checked
)

// Load opens the libllama at path (the library file, or a directory
// holding libllama.*) and checks it as the package documentation says. A
// library is opened once per process and never closed (C++ libraries do
// not unload safely); later calls return the same Lib.
func Load(path string) (*Lib, error) { return load(path, SupportedVersions) }

// load is Load accepting the versions in versions.
func load(path string, versions []string) (*Lib, error) {
	file, err := findLib(path)
	if err != nil {
		return nil, err
	}
	libsMu.Lock()
	l, ok := libs[file]
	if !ok {
		if l, err = open(file); err != nil {
			libsMu.Unlock()
			return nil, err
		}
		libs[file] = l
	}
	libsMu.Unlock()
	if !slices.Contains(versions, l.Version) {
		return nil, &VersionError{Path: file, Found: l.Version, Supported: versions}
	}
	l.once.Do(l.init)
	if l.layout != "" {
		return nil, &VersionError{Path: file, Found: l.Version, Supported: versions, Layout: l.layout}
	}
	if l.initErr != nil {
		return nil, l.initErr
	}
	return l, nil
}

// findLib resolves path to a library file.
func findLib(path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("%w: no path given (--llama-lib or SPECD_LLAMA_LIB)", ErrLibrary)
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrLibrary, err)
	}
	if st.IsDir() {
		dir := path
		names, _ := filepath.Glob(filepath.Join(dir, "libllama.*"))
		sort.Strings(names)
		for _, n := range names {
			if strings.HasSuffix(n, ".so") || strings.Contains(n, ".so.") || strings.HasSuffix(n, ".dylib") {
				path = n
				break
			}
		}
		if path == dir {
			return "", fmt.Errorf("%w: no libllama.* in directory %s", ErrLibrary, dir)
		}
	}
	if path, err = filepath.EvalSymlinks(path); err != nil {
		return "", fmt.Errorf("%w: %v", ErrLibrary, err)
	}
	if path, err = filepath.Abs(path); err != nil {
		return "", fmt.Errorf("%w: %v", ErrLibrary, err)
	}
	if err := checkArch(path); err != nil {
		return "", err
	}
	return path, nil
}

// elfMachines are the ELF machines of the architectures this file builds for.
var elfMachines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// checkArch reports an ELF file that is not a 64-bit shared library for
// this process's architecture (Mach-O files are left to dlopen).
func checkArch(path string) error {
	if runtime.GOOS == "darwin" {
		return nil
	}
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %s is not an ELF shared library: %v", ErrLibrary, path, err)
	}
	defer f.Close()
	want := elfMachines[runtime.GOARCH]
	switch {
	case f.Machine != want || f.Class != elf.ELFCLASS64:
		return fmt.Errorf("%w: %s is built for %v (%v), this specd for %s (%v): use a libllama built for this device",
			ErrLibrary, path, f.Machine, f.Class, runtime.GOARCH, want)
	case f.Type != elf.ET_DYN:
		return fmt.Errorf("%w: %s is an ELF %v, not a shared library", ErrLibrary, path, f.Type)
	}
	return nil
}

// libExt is the shared-library suffix of this OS.
func libExt() string {
	if runtime.GOOS == "darwin" {
		return ".dylib"
	}
	return ".so"
}

// open loads the libraries file needs that lie next to it (ggml's), then
// file, and resolves the symbols and the version. Called with libsMu held.
func open(file string) (*Lib, error) {
	if err := preload(file); err != nil {
		return nil, err
	}
	h, err := purego.Dlopen(file, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrLibrary, file, err)
	}
	l := &Lib{Path: file, handle: h}
	for _, s := range l.fn.symbols() {
		addr, err := purego.Dlsym(h, s.name)
		if err != nil || addr == 0 {
			return nil, &SymbolError{Path: file, Symbol: s.name, Err: err}
		}
		if err := register(s.fn, addr); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrLibrary, s.name, err)
		}
	}
	l.Version = l.fn.version()
	l.Release = nlcRelease(filepath.Dir(file))
	return l, nil
}

// preload loads, dependencies first and with RTLD_GLOBAL, every library
// that file needs (its ELF DT_NEEDED entries, recursively) and that lies in
// file's directory: libggml and libggml-base, and in a build without
// dynamically loaded backends the backends libggml links (libggml-cpu,
// libggml-hexagon, ...). The system linker then finds them by soname when
// file is opened, whether or not the directory is on its search path (an
// Android app's, say) or in the libraries' RUNPATH. Mach-O libraries name
// their dependencies by path (@rpath, @loader_path) and are left alone.
func preload(file string) error {
	if runtime.GOOS == "darwin" {
		return nil
	}
	dir := filepath.Dir(file)
	done := map[string]bool{file: true}
	var visit func(path string) error
	visit = func(path string) error {
		f, err := elf.Open(path)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrLibrary, path, err)
		}
		needed, _ := f.ImportedLibraries()
		f.Close()
		for _, n := range needed {
			dep := filepath.Join(dir, n)
			if done[dep] {
				continue
			}
			done[dep] = true
			if _, err := os.Stat(dep); err != nil {
				continue // a system library, left to the linker
			}
			if err := visit(dep); err != nil {
				return err
			}
			if _, err := purego.Dlopen(dep, purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
				return fmt.Errorf("%w: %s (needed by %s): %v", ErrLibrary, dep, path, err)
			}
		}
		return nil
	}
	return visit(file)
}

// register is purego.RegisterFunc, its panics (an unsupported signature
// on this platform) returned as errors.
func register(fptr any, addr uintptr) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	purego.RegisterFunc(fptr, addr)
	return nil
}

// nlcRelease reads the llama.cpp release from a node-llama-cpp build's
// metadata file in dir, if there is one.
func nlcRelease(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "_nlcBuildMetadata.json"))
	if err != nil {
		return ""
	}
	var m struct {
		BuildOptions struct {
			LlamaCpp struct{ Repo, Release string }
		}
	}
	if json.Unmarshal(b, &m) != nil || m.BuildOptions.LlamaCpp.Release == "" {
		return ""
	}
	return m.BuildOptions.LlamaCpp.Repo + " " + m.BuildOptions.LlamaCpp.Release
}

// init checks the default parameter structs, routes the library's log,
// initialises it and loads ggml's backends from its directory. Run once,
// after the version check.
func (l *Lib) init() {
	if d := diffFields(l.fn.modelDefaultParams(), defaultModelParams); d != "" {
		l.layout = "llama_model_params (" + d + ")"
		return
	}
	if d := diffFields(l.fn.contextDefaultParams(), defaultContextParams); d != "" {
		l.layout = "llama_context_params (" + d + ")"
		return
	}
	if cb := logCallback(); cb != 0 {
		l.fn.logSet(cb, 0)
	}
	l.fn.backendInit()
	dir := filepath.Dir(l.Path)
	l.fn.ggmlBackendLoadAllFrom(dir)
	if l.fn.ggmlBackendDevCount() == 0 {
		l.initErr = fmt.Errorf("%w: %s: ggml found no device backend in %s (libggml-cpu*%s?)%s",
			ErrLibrary, l.Path, dir, libExt(), logTail(0))
		return
	}
	l.SystemInfo = strings.TrimSpace(l.fn.printSystemInfo())
}

// diffFields names the fields in which got and want differ.
func diffFields[T any](got, want T) string {
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	var bad []string
	for i := range g.NumField() {
		f := g.Type().Field(i)
		if f.Name == "_" {
			continue
		}
		if !g.Field(i).Equal(w.Field(i)) {
			bad = append(bad, fmt.Sprintf("%s %v, want %v", f.Name, g.Field(i), w.Field(i)))
		}
	}
	return strings.Join(bad, "; ")
}

// Devices lists the ggml devices the library has.
func (l *Lib) Devices() []Device {
	n := l.fn.ggmlBackendDevCount()
	ds := make([]Device, 0, n)
	for i := range n {
		d := l.fn.ggmlBackendDevGet(i)
		t := l.fn.ggmlBackendDevType(d)
		ty := fmt.Sprint(t)
		if t >= 0 && int(t) < len(devTypeNames) {
			ty = devTypeNames[t]
		}
		ds = append(ds, Device{Name: l.fn.ggmlBackendDevName(d), Description: l.fn.ggmlBackendDevDesc(d), Type: ty})
	}
	return ds
}

// device returns the device named name (case-insensitive) and its type.
func (l *Lib) device(name string) (uintptr, string, error) {
	var names []string
	for i := range l.fn.ggmlBackendDevCount() {
		d := l.fn.ggmlBackendDevGet(i)
		n := l.fn.ggmlBackendDevName(d)
		if strings.EqualFold(n, name) {
			t := l.fn.ggmlBackendDevType(d)
			if t >= 0 && int(t) < len(devTypeNames) {
				return d, devTypeNames[t], nil
			}
			return d, fmt.Sprint(t), nil
		}
		names = append(names, n)
	}
	return 0, "", fmt.Errorf("%w %q in %s; it has: %s", ErrDevice, name, l.Path, strings.Join(names, ", "))
}

// String describes the library for the models line.
func (l *Lib) String() string {
	s := "llama.cpp " + l.Version
	if l.Release != "" {
		s += " (" + l.Release + ")"
	}
	return s
}
