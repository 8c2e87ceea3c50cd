package main

// specd bench --nats: load a running specd serve.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/specd-dev/specd/api"
	"github.com/specd-dev/specd/bench"
	"github.com/specd-dev/specd/serve"
)

// benchLoad is specd bench --nats: clients of a running specd serve. The
// speculation flags, if given, go into every request (one value each);
// otherwise the server's defaults apply.
func benchLoad(ctx context.Context, o *benchOpts, set map[string]bool, args []string, stdout, stderr io.Writer) error {
	one := func(name, v string) (string, error) {
		if strings.Contains(v, ",") {
			return "", fmt.Errorf("--%s %s: load mode takes one value", name, v)
		}
		return v, nil
	}
	lo := bench.LoadOptions{Clients: o.clients, Rate: o.rate, Requests: o.requests, MaxTokens: o.n, Seed: o.seed}
	if v, err := one("temp", o.temps); err != nil {
		return err
	} else if lo.Temp, err = strconv.ParseFloat(v, 64); err != nil || lo.Temp < 0 {
		return fmt.Errorf("--temp %s: not a temperature", v)
	}
	var spec api.Speculative
	speculate := false
	if set["k"] {
		v, err := one("k", o.ks)
		if err != nil {
			return err
		}
		k, err := strconv.Atoi(v)
		if err != nil || k < 0 {
			return fmt.Errorf("--k %s: not a draft length", v)
		}
		spec.K, speculate = &k, true
	}
	if set["p-min"] {
		v, err := one("p-min", o.pmins)
		if err != nil {
			return err
		}
		pm, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("--p-min %s: %w", v, err)
		}
		spec.PMin, speculate = &pm, true
	}
	if set["adaptive"] {
		spec.Adaptive, speculate = &o.adaptive, true
	}
	if set["draft"] {
		v, err := one("draft", o.drafts)
		if err != nil {
			return err
		}
		spec.Draft, speculate = v, true
	}
	if speculate {
		lo.Speculative = &spec
	}
	switch {
	case o.clients < 1 || o.requests < 1 || o.n < 1 || !(o.rate >= 0):
		return errors.New("--clients, --requests and -n must be positive, --rate not negative")
	case set["batch"] || set["threads"] || set["synthetic-acceptance"] || set["m"] || set["d"]:
		return errors.New("--nats loads a running specd serve: its models, batch and threads are the server's (-m, -d, --batch, --threads, --synthetic-acceptance do not apply)")
	}
	ps, err := loadPrompts(o.prompts)
	if err != nil {
		return err
	}
	lo.Prompts = ps
	o.nats.URLs, o.nats.Name = splitURLs(o.natsURLs), "specd bench"
	nc, err := serve.Connect(o.nats)
	if err != nil {
		return err
	}
	defer nc.Close()
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	m := bench.MachineInfo()
	fmt.Fprintf(stderr, "bench: loading specd at %s: %d requests, %d clients; client machine %s\n", o.natsURLs, o.requests, o.clients, m.CPULine())
	bar := progressbar.NewOptions(o.requests, progressbar.OptionSetWriter(stderr), progressbar.OptionSetVisibility(!o.noProgress),
		progressbar.OptionSetWidth(28), progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionSetDescription("load"))
	res, err := bench.Load(ctx, nc, lo, func(done, total int, _ string) { bar.Set(done) })
	bar.Finish()
	if !o.noProgress {
		fmt.Fprintln(stderr)
	}
	if err != nil {
		return err
	}
	out := struct {
		Schema  string            `json:"schema"`
		Machine bench.Machine     `json:"client_machine"`
		Args    []string          `json:"args"`
		Load    *bench.LoadResult `json:"load"`
	}{bench.Schema, m, append([]string{"bench"}, args...), res}
	f, err := os.Create(filepath.Join(o.out, "load.json"))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	res.WriteLoad(stdout)
	fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(o.out, "load.json"))
	return nil
}
