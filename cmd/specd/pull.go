package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/specd-dev/specd/pull"
)

func init() {
	register(command{name: "pull", summary: "download a GGUF model from Hugging Face (org/repo/file.gguf) or a URL into the cache", run: runPull})
}

func runPull(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("pull", stderr)
	dir := fs.String("dir", "", "cache `folder` (default $XDG_CACHE_HOME/specd, else ~/.cache/specd)")
	sha := fs.String("sha256", "", "expected SHA-256 of the file, `HEX` (otherwise the server's, when it sends one)")
	force := fs.Bool("force", false, "download again even if the file is already in the cache")
	quiet := fs.Bool("quiet", false, "no progress output")
	endpoint := fs.String("endpoint", "", "Hugging Face `URL` for org/repo/file references (default $SPECD_HF_ENDPOINT, else "+pull.DefaultEndpoint+")")
	lf := addLogFlags(fs)
	retries := fs.Int("retries", 3, "resume a cut-short download up to `N` times before giving up")
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: specd pull REF [--dir DIR] [--sha256 HEX] [--force] [--quiet]

Downloads REF into the cache and prints the file's path on stdout.
REF is org/repo/file.gguf (a Hugging Face repository file, fetched from
ENDPOINT/org/repo/resolve/main/file.gguf) or an http(s) URL.
An interrupted download resumes where it stopped on the next run.
HF_TOKEN, if set, is sent to the Hugging Face endpoint (gated or private repos).

`)
		fs.PrintDefaults()
	}
	// Flags may come before or after REF.
	var refs []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return errUsage // the FlagSet has explained it
		}
		if fs.NArg() == 0 {
			break
		}
		refs = append(refs, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(refs) != 1 {
		fs.Usage()
		return errUsage
	}
	log, err := lf.logger(stderr)
	if err != nil {
		return err
	}
	if *retries < 0 {
		return fmt.Errorf("--retries %d is negative", *retries)
	}
	o := pull.Options{
		Dir:      *dir,
		Endpoint: *endpoint,
		SHA256:   *sha,
		Force:    *force,
		Token:    os.Getenv("HF_TOKEN"),
		Retries:  *retries,
	}
	if o.Endpoint == "" {
		o.Endpoint = os.Getenv("SPECD_HF_ENDPOINT")
	}
	if !*quiet {
		o.Progress = pull.NewProgress(stderr, pull.IsTerminal(stderr))
	}
	path, err := pull.Pull(ctx, refs[0], o)
	if err != nil {
		return err
	}
	log.Debug().Str("ref", refs[0]).Str("path", path).Msg("pulled")
	_, err = fmt.Fprintln(stdout, path)
	return err
}
