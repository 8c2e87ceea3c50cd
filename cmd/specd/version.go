package main

// specd version: what was built (module version, VCS commit, Go) and what
// it runs on (CPU features, the kernel set in use).

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/specd-dev/specd/tensor"
)

func init() {
	register(command{name: "version", summary: "print the module version, commit, Go version, CPU features and kernel set", run: runVersion})
}

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr)
	lf := addLogFlags(fs)
	fs.Usage = fs.usageFunc([]string{"specd version"},
		"Prints specd's module version and VCS commit (as the Go toolchain recorded them),\n"+
			"the Go version, the CPU features the kernels look at and the kernel set in use.")
	if err := fs.parseFlagsOnly(args, stderr, ""); err != nil {
		return err
	}
	log, err := lf.logger(stderr)
	if err != nil {
		return err
	}
	text := versionText()
	log.Debug().Str("kernels", tensor.KernelSet()).Strs("cpu", tensor.CPUFeatures()).Msg("version")
	_, err = io.WriteString(stdout, text)
	return err
}

// versionText is specd version's output, one "label: value" a line.
func versionText() string {
	module, commit := "(unknown)", "(unknown)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		module = bi.Main.Path + " " + bi.Main.Version
		var rev, at string
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" {
			commit = rev
			if at != "" {
				commit += " (" + at + ")"
			}
			if modified {
				commit += ", with uncommitted changes"
			}
		} else {
			commit = "(not recorded: built with -buildvcs=false, outside a VCS checkout, or by go run)"
		}
	}
	features := strings.Join(tensor.CPUFeatures(), " ")
	if features == "" {
		features = "(none the kernels use)"
	}
	kernels := tensor.KernelSet()
	if env, err := tensor.CPUEnv(); err != nil {
		kernels += fmt.Sprintf(" (SPECD_CPU=%q not understood: %v)", env, err)
	} else if env != "" {
		kernels += fmt.Sprintf(" (SPECD_CPU=%s)", env)
	}
	var sb strings.Builder
	for _, l := range [][2]string{
		{"specd", module},
		{"commit", commit},
		{"go", runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH},
		{"cpu", features},
		{"kernels", kernels},
	} {
		fmt.Fprintf(&sb, "%-8s %s\n", l[0]+":", l[1])
	}
	return sb.String()
}
