// Command specdbench measures specd's model engine the way llama-bench
// measures llama.cpp, so scripts/speed.sh can put the two side by side:
//
//	go run ./tools/peer/specdbench -m model.gguf -t 1,2 -p 64 -n 64 -r 3
//
// For each thread count it runs two tests, each after one untimed warm-up
// and then -r timed repetitions from an empty cache: ppP, one forward pass
// over P prompt tokens (logits for the last only), and tgN, N single-token
// forward passes (logits for each). It prints one line per test:
// "ppP|tgN threads avg_tok/s stddev_tok/s". Tokens are pseudo-random ids.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/specd-dev/specd/kvsync"
	"github.com/specd-dev/specd/model"
	"github.com/specd-dev/specd/model/modeltest"
	"github.com/specd-dev/specd/tensor"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "specdbench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("specdbench", flag.ContinueOnError)
	path := fs.String("m", "", "model GGUF (required)")
	threads := fs.String("t", "1,2", "comma-separated thread counts")
	nPrompt := fs.Int("p", 64, "prompt tokens of the pp test (0: skip)")
	nGen := fs.Int("n", 64, "generated tokens of the tg test (0: skip)")
	reps := fs.Int("r", 3, "timed repetitions")
	f32 := fs.Bool("f32-cache", false, "F32 KV cache instead of F16")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *path == "" || *reps < 1 || *nPrompt < 0 || *nGen < 0 || *nPrompt+*nGen == 0 {
		fs.Usage()
		return fmt.Errorf("need -m, -r >= 1 and -p or -n > 0")
	}
	var ts []int
	for _, s := range strings.Split(*threads, ",") {
		t, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || t < 1 || t > 1024 {
			return fmt.Errorf("bad thread count %q", s)
		}
		ts = append(ts, t)
	}
	m, err := model.Load(*path)
	if err != nil {
		return err
	}
	defer m.Close()
	kv, err := m.NewCache(1, max(*nPrompt, *nGen), *f32)
	if err != nil {
		return err
	}
	r := modeltest.NewRand(42)
	tokens := make([]int32, max(*nPrompt, *nGen))
	for i := range tokens {
		tokens[i] = int32(r.Uint64() % uint64(m.Config.Vocab))
	}
	logits := make([]float32, m.Config.Vocab)
	for _, t := range ts {
		pool := tensor.NewPool(t)
		st := m.NewState(max(*nPrompt, 1), pool)
		if *nPrompt > 0 {
			avg, sd, err := measure(*reps, *nPrompt, func() error { return prompt(st, kv, tokens[:*nPrompt], logits) })
			if err != nil {
				pool.Close()
				return err
			}
			fmt.Printf("pp%d %d %.2f %.2f\n", *nPrompt, t, avg, sd)
		}
		if *nGen > 0 {
			avg, sd, err := measure(*reps, *nGen, func() error { return generate(st, kv, tokens[:*nGen], logits) })
			if err != nil {
				pool.Close()
				return err
			}
			fmt.Printf("tg%d %d %.2f %.2f\n", *nGen, t, avg, sd)
		}
		pool.Close()
	}
	return nil
}

// measure runs f once untimed, then reps times, and returns the mean and
// standard deviation of tokens/second over the timed runs.
func measure(reps, tokens int, f func() error) (avg, sd float64, err error) {
	if err := f(); err != nil {
		return 0, 0, err
	}
	rates := make([]float64, reps)
	for i := range rates {
		start := time.Now()
		if err := f(); err != nil {
			return 0, 0, err
		}
		rates[i] = float64(tokens) / time.Since(start).Seconds()
		avg += rates[i]
	}
	avg /= float64(reps)
	for _, x := range rates {
		sd += (x - avg) * (x - avg)
	}
	if reps > 1 {
		sd = math.Sqrt(sd / float64(reps-1))
	}
	return avg, sd, nil
}

// prompt runs one forward pass over tokens from an empty cache.
func prompt(st *model.State, kv *kvsync.Cache, tokens []int32, logits []float32) error {
	if err := kv.SetLen(0, 0); err != nil {
		return err
	}
	var b model.Batch
	for i, id := range tokens {
		b.Add(id, int32(i), 0, i == len(tokens)-1)
	}
	return st.Forward(&b, kv, logits)
}

// generate runs one single-token forward pass per token from an empty cache.
func generate(st *model.State, kv *kvsync.Cache, tokens []int32, logits []float32) error {
	if err := kv.SetLen(0, 0); err != nil {
		return err
	}
	var b model.Batch
	for i, id := range tokens {
		b.Reset()
		b.Add(id, int32(i), 0, true)
		if err := st.Forward(&b, kv, logits); err != nil {
			return err
		}
	}
	return nil
}
