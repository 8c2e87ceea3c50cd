package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/specd-dev/specd/model/gguf"
	"github.com/specd-dev/specd/tokenizer"
)

func init() {
	register(command{name: "tokenize", summary: "print the token ids of a text, as llama.cpp tokenizes it", run: runTokenize})
}

func runTokenize(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tokenize", stderr)
	modelPath := fs.String("m", "", "model or vocabulary `GGUF` file (required)")
	file := fs.String("f", "", "read the text from `FILE` (bytes exactly, no newline stripped)")
	addSpecial := fs.Bool("add-special", false, "add BOS/EOS as the model asks (tokenizer.ggml.add_bos_token/add_eos_token)")
	parseSpecial := fs.Bool("parse-special", false, "turn special-token text such as <|im_start|> into those tokens")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: specd tokenize -m MODEL.gguf [--add-special] [--parse-special] (-f FILE | TEXT)\n\nPrints the token ids of TEXT, space-separated on one line.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *modelPath == "" || (*file == "") == (fs.NArg() == 0) || fs.NArg() > 1 {
		fs.Usage()
		return errUsage
	}
	var text string
	if *file != "" {
		b, err := os.ReadFile(*file)
		if err != nil {
			return err
		}
		text = string(b)
	} else {
		text = fs.Arg(0)
	}
	f, err := gguf.Open(*modelPath)
	if err != nil {
		return err
	}
	defer f.Close()
	tok, err := tokenizer.New(f)
	if err != nil {
		return err
	}
	ids, err := tok.Encode(text, *addSpecial, *parseSpecial)
	if err != nil {
		return err
	}
	var sb strings.Builder
	for i, id := range ids {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(strconv.Itoa(int(id)))
	}
	sb.WriteByte('\n')
	_, err = io.WriteString(stdout, sb.String())
	return err
}
