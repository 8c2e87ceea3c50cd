package bench

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/specd-dev/specd/engine"
	"github.com/specd-dev/specd/model"
	"github.com/specd-dev/specd/models"
)

// kernelFlags are the CPU flags specd's kernels (or llama.cpp's) dispatch
// on, as /proc/cpuinfo names them.
var kernelFlags = []string{"sse4_2", "avx", "f16c", "fma", "avx2", "avx_vnni", "avx512f", "avx512bw", "avx512vl",
	"avx512_vnni", "avx512_bf16", "amx_int8", "asimd", "asimddp", "i8mm", "sve"}

// MachineInfo describes this machine: the CPU's model name (as lscpu
// reports it, from /proc/cpuinfo on Linux), the kernel-relevant flags it
// has, the CPU count, OS, architecture, Go version and load average.
func MachineInfo() Machine {
	m := Machine{CPU: "unknown", CPUs: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version()}
	f, err := os.Open("/proc/cpuinfo")
	if err == nil {
		defer f.Close()
		m.CPU, m.Flags = parseCPUInfo(f)
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if fs := strings.Fields(string(b)); len(fs) >= 3 {
			m.Load = strings.Join(fs[:3], " ")
		}
	}
	return m
}

// parseCPUInfo returns the first "model name" of a /proc/cpuinfo and the
// kernelFlags among the first "flags" (x86) or "Features" (arm64) line.
func parseCPUInfo(r io.Reader) (name string, flags []string) {
	name = "unknown"
	var have []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	gotName, gotFlags := false, false
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case !gotName && (k == "model name" || k == "Model"):
			name, gotName = v, true
		case !gotFlags && (k == "flags" || k == "Features"):
			have, gotFlags = strings.Fields(v), true
		}
	}
	for _, f := range kernelFlags {
		if slices.Contains(have, f) {
			flags = append(flags, f)
		}
	}
	return name, flags
}

// Has reports whether the machine has CPU flag f.
func (m Machine) Has(f string) bool { return slices.Contains(m.Flags, f) }

// CPULine is the machine in one line, for every figure and table: "AMD
// EPYC (2 CPUs; avx2 yes, avx512_vnni yes; linux/amd64, go1.26)".
func (m Machine) CPULine() string {
	yn := func(f string) string {
		if m.Has(f) {
			return f + " yes"
		}
		return f + " no"
	}
	return m.CPU + " (" + strconv.Itoa(m.CPUs) + " CPUs; " + yn("avx2") + ", " + yn("avx512_vnni") + "; " + m.OS + "/" + m.Arch + ", " + m.Go + ")"
}

// ModelsInfo describes the engine's models: names, SHA-256 of the GGUF
// bytes (the bundled ones from the executable), sizes and shapes.
func ModelsInfo(e *engine.Engine) (Models, error) {
	o := e.Options()
	t, err := modelInfo(e.Target, e.TargetName, o.Target)
	if err != nil {
		return Models{}, err
	}
	ms := Models{Target: t}
	if e.Draft != nil {
		path := o.Draft
		if e.Draft == e.Target {
			path = o.Target
		}
		d, err := modelInfo(e.Draft, e.DraftName, path)
		if err != nil {
			return Models{}, err
		}
		ms.Draft = &d
	}
	return ms, nil
}

func modelInfo(m *model.Model, name, path string) (ModelInfo, error) {
	c := m.Config
	mi := ModelInfo{Name: name, Arch: c.Arch, Layers: c.Layers, Dim: c.Dim, Vocab: c.Vocab}
	for _, t := range m.File.Tensors {
		n := int64(1)
		for _, d := range t.Dims {
			n *= int64(d)
		}
		mi.Params += n
	}
	h := sha256.New()
	switch path {
	case "", engine.DraftBundled:
		get := models.Target
		if path == engine.DraftBundled {
			get = models.Draft
		}
		b, _ := get()
		h.Write(b)
		mi.Bytes = int64(len(b))
	default:
		f, err := os.Open(path)
		if err != nil {
			return mi, err
		}
		defer f.Close()
		if mi.Bytes, err = io.Copy(h, f); err != nil {
			return mi, err
		}
	}
	mi.SHA256 = hex.EncodeToString(h.Sum(nil))
	return mi, nil
}
