package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/specd-dev/specd/model"
	"github.com/specd-dev/specd/model/gguf"
	"github.com/specd-dev/specd/models"
	"github.com/specd-dev/specd/tensor"
	"github.com/specd-dev/specd/tokenizer"
)

func init() {
	register(command{name: "inspect", summary: "describe a GGUF model: architecture, shapes, tensor types, vocabulary", run: runInspect})
}

func runInspect(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("inspect", stderr)
	lf := addLogFlags(fs)
	cpu := fs.Bool("cpu", false, "print the CPU features and the kernel set in use (SPECD_CPU=avx2, generic or neon runs fewer); no model needed")
	fs.Usage = fs.usageFunc([]string{"specd inspect MODEL", "specd inspect --cpu"},
		"Prints the model's architecture, hyperparameters, tensor types and vocabulary.\n"+
			"MODEL is a GGUF file, bundled (the bundled target) or bundled-draft.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpu {
		if err := inspectCPU(stdout); err != nil || fs.NArg() == 0 {
			return err
		}
	}
	if fs.NArg() != 1 {
		if fs.NArg() == 0 {
			fmt.Fprintln(stderr, "specd inspect: a model is required")
		} else {
			fmt.Fprintf(stderr, "specd inspect: one model at a time, not %d\n", fs.NArg())
		}
		fs.Usage()
		return errUsage
	}
	// Info only: a file with tensor types specd does not know is still
	// described, and those types named.
	log, err := lf.logger(stderr)
	if err != nil {
		return err
	}
	f, name, err := openGGUF(fs.Arg(0), true)
	if err != nil {
		return err
	}
	defer f.Close()
	log.Debug().Str("model", name).Int("tensors", len(f.Tensors)).Int("keys", len(f.KV)).Msg("inspect")
	return inspectModel(stdout, name, f)
}

// inspectCPU prints the kernel set package tensor chose for this CPU and
// the features it was chosen from, or an error for a SPECD_CPU value the
// selection could not follow.
func inspectCPU(w io.Writer) error {
	env, err := tensor.CPUEnv()
	if err != nil {
		return err
	}
	if env == "" {
		env = "unset"
	}
	fmt.Fprintf(w, "kernels:       %s\ncpu features:  %s\nSPECD_CPU:     %s\n", tensor.KernelSet(), inspOrNone(strings.Join(tensor.CPUFeatures(), " ")), env)
	return nil
}

// openGGUF opens the GGUF file at path, or a bundled model (modelBundled,
// modelBundledDraft), returning it and its name to show. With info, tensor
// types specd does not know are allowed (gguf.OpenInfo).
func openGGUF(path string, info bool) (*gguf.File, string, error) {
	var get func() ([]byte, string)
	switch path {
	case modelBundled:
		get = models.Target
	case modelBundledDraft:
		get = models.Draft
	default:
		if info {
			f, err := gguf.OpenInfo(path)
			return f, path, err
		}
		f, err := gguf.Open(path)
		return f, path, err
	}
	b, name := get()
	f, err := gguf.Parse(b)
	if err != nil {
		return nil, "", fmt.Errorf("bundled %s: %w", name, err)
	}
	return f, "bundled " + name, nil
}

// inspectModel writes a description of f. It reports what it can even when the
// model is not runnable, and returns the reason it is not.
func inspectModel(w io.Writer, path string, f *gguf.File) error {
	p := func(label, format string, a ...any) {
		fmt.Fprintf(w, "%-14s %s\n", label+":", fmt.Sprintf(format, a...))
	}
	p("file", "%s (GGUF v%d, %d tensors, %d metadata keys)", path, f.Version, len(f.Tensors), len(f.KV))
	arch, _ := f.String("general.architecture")
	p("architecture", "%s", inspOrNone(arch))
	if name, ok := f.String("general.name"); ok {
		p("name", "%s", name)
	}

	// Tensor types: count, parameters and bytes per type.
	type agg struct {
		n           int
		elems, size uint64
	}
	byType := map[tensor.Type]*agg{}
	var params, bytes uint64
	for i := range f.Tensors {
		t := &f.Tensors[i]
		a := byType[t.Type]
		if a == nil {
			a = &agg{}
			byType[t.Type] = a
		}
		a.n++
		a.elems += t.Elements()
		a.size += uint64(len(t.Data))
		params += t.Elements()
		bytes += uint64(len(t.Data))
	}
	types := make([]tensor.Type, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool { return byType[types[i]].size > byType[types[j]].size })
	var parts []string
	for _, t := range types {
		a := byType[t]
		parts = append(parts, fmt.Sprintf("%s ×%d (%s)", inspTypeName(t), a.n, inspMiB(a.size)))
	}
	p("parameters", "%s in %s", inspCount(params), inspMiB(bytes))
	p("tensor types", "%s", inspOrNone(strings.Join(parts, ", ")))

	// Tensor counts per type, most first (llama-quantize mixes types per
	// tensor), and the types specd cannot compute with.
	sort.SliceStable(types, func(i, j int) bool {
		a, b := byType[types[i]].n, byType[types[j]].n
		return a > b || a == b && types[i] < types[j]
	})
	var counts, cannot []string
	for _, t := range types {
		n := byType[t].n
		counts = append(counts, fmt.Sprintf("%s %d", inspTypeName(t), n))
		if !t.Supported() {
			s := "s"
			if n == 1 {
				s = ""
			}
			cannot = append(cannot, fmt.Sprintf("%s (%d tensor%s)", inspTypeName(t), n, s))
		}
	}
	p("types", "%s", inspOrNone(strings.Join(counts, ", ")))
	if len(cannot) > 0 {
		p("cannot run", "%s", strings.Join(cannot, ", "))
	}

	m, merr := model.New(f)
	if merr == nil {
		c := m.Config
		p("shape", "dim %d, %d layers, %d heads (%d KV, head size %d), ffn %d", c.Dim, c.Layers, c.Heads, c.KVHeads, c.HeadDim, c.FFN)
		p("context", "%d", c.CtxLen)
		p("rope", "base %g", c.RopeBase)
		p("norm eps", "%g", c.NormEps)
		if m.TiedEmbeddings() {
			p("output", "tied to token_embd.weight")
		} else if t, ok := f.Tensor("output.weight"); ok {
			p("output", "output.weight (%v)", t.Type)
		}
		if t, ok := f.Tensor("token_embd.weight"); ok {
			p("embedding", "token_embd.weight (%v), vocab %d", t.Type, c.Vocab)
		}
	}

	tok, terr := tokenizer.New(f)
	if terr != nil {
		p("vocabulary", "none (%v)", terr)
	} else {
		p("vocabulary", "%v (%s%s), %d tokens", tok.Type(), tok.Model(), inspPre(tok.Pre()), tok.VocabSize())
		p("special", "BOS %s, EOS %s, add BOS %v", inspToken(tok, tok.BOS()), inspToken(tok, tok.EOS()), tok.AddBOS())
		if ct := tok.ChatTemplate(); ct == "" {
			p("chat template", "none")
		} else if tmpl, err := tokenizer.DetectTemplate(ct); err == nil {
			p("chat template", "%s", tmpl.Name)
		} else {
			p("chat template", "unsupported (%v)", strings.TrimPrefix(err.Error(), tokenizer.ErrUnknownTemplate.Error()+": "))
		}
	}
	if merr != nil {
		p("runnable", "no")
		return merr
	}
	if terr == nil && tok.VocabSize() != m.Config.Vocab {
		return fmt.Errorf("vocabulary has %d tokens but the model has %d rows of logits", tok.VocabSize(), m.Config.Vocab)
	}
	return nil
}

// ggmlTypeNames are ggml's names for the types package tensor does not know
// (ggml.h), so that inspect can name them in files it cannot run.
var ggmlTypeNames = map[tensor.Type]string{
	16: "IQ2_XXS", 17: "IQ2_XS", 18: "IQ3_XXS", 19: "IQ1_S", 21: "IQ3_S", 22: "IQ2_S",
	29: "IQ1_M", 34: "TQ1_0", 35: "TQ2_0", 39: "MXFP4", 40: "NVFP4", 41: "Q1_0", 42: "Q2_0",
}

// inspTypeName is t's ggml name.
func inspTypeName(t tensor.Type) string {
	if !t.Known() {
		if name, ok := ggmlTypeNames[t]; ok {
			return name
		}
	}
	return t.String()
}

func inspOrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func inspPre(pre string) string {
	if pre == "" {
		return ""
	}
	return ", pre " + pre
}

func inspToken(t *tokenizer.Tokenizer, id int32) string {
	if id < 0 || int(id) >= t.VocabSize() {
		return "none"
	}
	return fmt.Sprintf("%d %q", id, t.TokenText(id))
}

func inspMiB(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func inspCount(n uint64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
