// Command mkmodel writes a random llama or qwen2 model as a GGUF file that
// specd and llama.cpp both load (see package modeltest), for benchmarks and
// experiments:
//
//	go run ./tools/peer/mkmodel -o /tmp/m.gguf -dim 512 -layers 8 -heads 8 -kv-heads 4 -ffn 1536 -vocab 32000 -type F16
//
// Every tensor is drawn from its own seeded stream, so the same options with
// -type Q8_0 -embd-type F16 give a quantized copy of that model that shares
// its token embeddings byte for byte (a draft for speculative decoding).
//
// K-quant files are made from an F32 or F16 one with llama-quantize.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/specd-dev/specd/model/modeltest"
	"github.com/specd-dev/specd/tensor"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mkmodel:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("mkmodel", flag.ContinueOnError)
	var o modeltest.Options
	out := fs.String("o", "", "output GGUF path (required)")
	typ := fs.String("type", "F32", "weight type of the matrices: F32, F16, BF16, Q8_0, Q4_0")
	fs.StringVar(&o.Arch, "arch", "llama", "architecture: llama or qwen2")
	fs.IntVar(&o.Dim, "dim", 512, "embedding width")
	fs.IntVar(&o.Layers, "layers", 8, "transformer blocks")
	fs.IntVar(&o.Heads, "heads", 8, "attention heads")
	fs.IntVar(&o.KVHeads, "kv-heads", 4, "key/value heads")
	fs.IntVar(&o.FFN, "ffn", 1536, "feed-forward width")
	fs.IntVar(&o.Vocab, "vocab", 32000, "synthetic vocabulary size (ignored with -vocab-from)")
	fs.IntVar(&o.CtxLen, "ctx", 2048, "context length")
	fs.Uint64Var(&o.Seed, "seed", 1, "random seed")
	fs.StringVar(&o.VocabFrom, "vocab-from", "", "GGUF file whose tokenizer.* metadata to copy")
	fs.BoolVar(&o.Tied, "tied", false, "tie the output projection to token_embd")
	embdType := fs.String("embd-type", "", "weight type of token_embd.weight (default: -type)")
	outType := fs.String("output-type", "", "weight type of output.weight (default: -type)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("need -o and no positional arguments")
	}
	parse := func(flag, name string) (tensor.Type, error) {
		t, ok := map[string]tensor.Type{"F32": tensor.F32, "F16": tensor.F16, "BF16": tensor.BF16,
			"Q8_0": tensor.Q8_0, "Q4_0": tensor.Q4_0}[name]
		if !ok {
			return 0, fmt.Errorf("unknown %s %q (F32, F16, BF16, Q8_0, Q4_0)", flag, name)
		}
		return t, nil
	}
	var err error
	if o.Type, err = parse("-type", *typ); err != nil {
		return err
	}
	for _, f := range []struct{ flag, value, tensor string }{
		{"-embd-type", *embdType, "token_embd.weight"},
		{"-output-type", *outType, "output.weight"},
	} {
		if f.value == "" {
			continue
		}
		t, err := parse(f.flag, f.value)
		if err != nil {
			return err
		}
		if o.TensorTypes == nil {
			o.TensorTypes = map[string]tensor.Type{}
		}
		o.TensorTypes[f.tensor] = t
	}
	return modeltest.Write(*out, o)
}
