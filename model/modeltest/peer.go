package modeltest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/specd-dev/specd/internal/peertest"
)

// Peer locates llama.cpp's source tree and the tools tools/peer/build.sh
// builds from it (under .cache/ at the repository root).
type Peer struct {
	Root   string // repository root
	Src    string // llama.cpp source tree
	Bin    string // built tools
	Models string // llama.cpp's models/ (vocabulary GGUFs)

	// CPU is the ggml CPU code llamaref runs with: "native" (the build's
	// own, for this machine) or "avx2" (SPECD_PEER_CPU=avx2: the AVX2-only
	// library that build.sh then builds, found first on LD_LIBRARY_PATH).
	CPU    string
	cpuLib string // directory of the AVX2 library when CPU is "avx2"
}

// peerTools are the binaries a Peer must have.
var peerTools = []string{"llamaref", "llama-quantize", "llama-bench"}

// FindPeer locates the peer (see peertest) and checks that its tools are
// built. It returns an error wrapping ErrNoPeer
// when they are not.
func FindPeer() (*Peer, error) { return findPeerAt(peertest.Root()) }

// findPeerAt is FindPeer for the checkout at root.
func findPeerAt(root string) (*Peer, error) {
	src := filepath.Join(root, ".cache", "llama.cpp")
	p := &Peer{Root: root, Src: src, Bin: filepath.Join(src, "build", "bin"), Models: filepath.Join(src, "models")}
	for _, t := range peerTools {
		if _, err := os.Stat(filepath.Join(p.Bin, t)); err != nil {
			return nil, fmt.Errorf("%w: %s missing", ErrNoPeer, filepath.Join(p.Bin, t))
		}
	}
	switch p.CPU = os.Getenv("SPECD_PEER_CPU"); p.CPU {
	case "", "native":
		p.CPU = "native"
	case "avx2":
		p.cpuLib = filepath.Join(src, "build-avx2", "bin")
		if _, err := os.Stat(filepath.Join(p.cpuLib, "libggml-cpu.so")); err != nil {
			return nil, fmt.Errorf("%w: SPECD_PEER_CPU=avx2 but %s missing (run it with that variable set)",
				ErrNoPeer, filepath.Join(p.cpuLib, "libggml-cpu.so"))
		}
	default:
		return nil, fmt.Errorf("modeltest: SPECD_PEER_CPU=%q, want native or avx2", p.CPU)
	}
	return p, nil
}

// RequirePeer returns the Peer. When the peer tools are not built it ends
// tb under peertest's rule (a failure, or a skip with -short); other errors
// (a bad SPECD_PEER_CPU) always fail tb.
func RequirePeer(tb testing.TB) *Peer {
	tb.Helper()
	p, err := FindPeer()
	if err != nil {
		if !errors.Is(err, ErrNoPeer) {
			tb.Fatal(err)
		}
		peertest.Missing(tb, err.Error())
	}
	return p
}

// Vocab returns the path of llama.cpp's vocabulary file models/ggml-vocab-NAME.gguf.
func (p *Peer) Vocab(name string) string {
	return filepath.Join(p.Models, "ggml-vocab-"+name+".gguf")
}

// run runs a peer tool with a time limit and returns its stdout; on failure
// the error carries the tail of stderr.
func (p *Peer) run(timeout time.Duration, tool string, args ...string) (stdout, stderr []byte, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(p.Bin, tool), args...)
	if p.cpuLib != "" {
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+p.cpuLib)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		tail := errb.Bytes()
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return nil, errb.Bytes(), fmt.Errorf("modeltest: %s %s: %w\n%s", tool, strings.Join(args, " "), err, tail)
	}
	return out.Bytes(), errb.Bytes(), nil
}

// Quantize converts the GGUF file src to dst with llama-quantize; ftype is
// its type name (Q8_0, Q4_0, Q4_K_M, ...).
func (p *Peer) Quantize(src, dst, ftype string) error {
	_, _, err := p.run(5*time.Minute, "llama-quantize", src, dst, ftype)
	return err
}

// Top2 is one greedy step's two best tokens and their logits.
type Top2 struct {
	ID1, ID2       int32
	Logit1, Logit2 float32
}

// Margin is the logit gap between the best and second-best token.
func (t Top2) Margin() float32 { return t.Logit1 - t.Logit2 }

// RefResult is what llamaref reports for one greedy run.
type RefResult struct {
	IDs    []int32   // generated ids
	Logits []float32 // the first step's logits (after the prompt)
	Top    []Top2    // per step
	Info   string    // llamaref's stderr: parameters and attention/KV settings in effect
}

// Ref runs llamaref: prompt ids decoded in one batch, then n greedy steps
// with the given thread count (0: llama.cpp's default).
func (p *Peer) Ref(model string, prompt []int32, n, threads int) (*RefResult, error) {
	return p.RefUbatch(model, prompt, n, threads, 0)
}

// RefUbatch is Ref with llama.cpp's n_ubatch set to ubatch (0: its default).
// With 1, llama.cpp processes the prompt token by token through its decode
// kernels.
func (p *Peer) RefUbatch(model string, prompt []int32, n, threads, ubatch int) (*RefResult, error) {
	dir, err := os.MkdirTemp("", "llamaref")
	if err != nil {
		return nil, fmt.Errorf("modeltest: %w", err)
	}
	defer os.RemoveAll(dir)
	logitsPath, topPath := filepath.Join(dir, "logits.f32"), filepath.Join(dir, "top2.txt")
	ids := make([]string, len(prompt))
	for i, id := range prompt {
		ids[i] = strconv.Itoa(int(id))
	}
	args := []string{"-m", model, "--ids", strings.Join(ids, ","), "-n", strconv.Itoa(n),
		"--logits", logitsPath, "--top2", topPath}
	if threads > 0 {
		args = append(args, "--threads", strconv.Itoa(threads))
	}
	if ubatch > 0 {
		args = append(args, "--ubatch", strconv.Itoa(ubatch))
	}
	out, stderr, err := p.run(5*time.Minute, "llamaref", args...)
	if err != nil {
		return nil, err
	}
	res := &RefResult{Info: string(stderr)}
	for _, f := range strings.Fields(string(out)) {
		v, err := strconv.ParseInt(f, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("modeltest: llamaref printed %q, not an id", f)
		}
		res.IDs = append(res.IDs, int32(v))
	}
	if len(res.IDs) != n {
		return nil, fmt.Errorf("modeltest: llamaref printed %d ids, want %d", len(res.IDs), n)
	}
	raw, err := os.ReadFile(logitsPath)
	if err != nil {
		return nil, fmt.Errorf("modeltest: %w", err)
	}
	if len(raw)%4 != 0 {
		return nil, fmt.Errorf("modeltest: llamaref logits file has %d bytes, not a multiple of 4", len(raw))
	}
	res.Logits = make([]float32, len(raw)/4)
	for i := range res.Logits {
		res.Logits[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	top, err := os.ReadFile(topPath)
	if err != nil {
		return nil, fmt.Errorf("modeltest: %w", err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(top)), "\n") {
		var t Top2
		if _, err := fmt.Sscanf(line, "%d %g %d %g", &t.ID1, &t.Logit1, &t.ID2, &t.Logit2); err != nil {
			return nil, fmt.Errorf("modeltest: llamaref top2 line %d %q: %w", i+1, line, err)
		}
		res.Top = append(res.Top, t)
	}
	if len(res.Top) != n {
		return nil, fmt.Errorf("modeltest: llamaref wrote %d top2 lines, want %d", len(res.Top), n)
	}
	return res, nil
}

// TopTwo returns the best and second-best entries of logits (the lowest id
// on ties), as greedy decoding ranks them. len(logits) must be at least 2.
func TopTwo(logits []float32) Top2 {
	b, s := 0, 1
	if logits[1] > logits[0] {
		b, s = 1, 0
	}
	for i := 2; i < len(logits); i++ {
		switch {
		case logits[i] > logits[b]:
			b, s = i, b
		case logits[i] > logits[s]:
			s = i
		}
	}
	return Top2{ID1: int32(b), ID2: int32(s), Logit1: logits[b], Logit2: logits[s]}
}
