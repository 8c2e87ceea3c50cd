package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/specd-dev/specd/tokenizer"
)

func init() {
	register(command{name: "tokenize", summary: "print the token ids of a text, as llama.cpp tokenizes it", run: runTokenize})
}

func runTokenize(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("tokenize", stderr)
	modelPath := fs.String("m", "", "`PATH|bundled|bundled-draft`: model or vocabulary GGUF file, or a bundled model (required)")
	file := fs.String("f", "", "read the text from `FILE` (bytes exactly, no newline stripped)")
	addSpecial := fs.Bool("add-special", false, "add BOS/EOS as the model asks (tokenizer.ggml.add_bos_token/add_eos_token)")
	parseSpecial := fs.Bool("parse-special", false, "turn special-token text such as <|im_start|> into those tokens")
	lf := addLogFlags(fs)
	fs.Usage = fs.usageFunc([]string{"specd tokenize -m MODEL [--add-special] [--parse-special] (-f FILE | TEXT)"},
		"Prints the token ids of TEXT, space-separated on one line.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var why string
	switch {
	case *modelPath == "":
		why = "a model is required: -m PATH, or -m bundled"
	case *file == "" && fs.NArg() == 0:
		why = "a text is required: TEXT, or -f FILE"
	case *file != "" && fs.NArg() > 0:
		why = "give the text once: TEXT or -f FILE, not both"
	case fs.NArg() > 1:
		why = fmt.Sprintf("one TEXT argument, not %d (quote a text with spaces)", fs.NArg())
	}
	log, err := lf.logger(stderr)
	if err != nil {
		return err
	}
	if why != "" {
		fmt.Fprintln(stderr, "specd tokenize: "+why)
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
	f, name, err := openGGUF(*modelPath, false)
	if err != nil {
		return err
	}
	defer f.Close()
	log.Debug().Str("model", name).Int("bytes", len(text)).Bool("add_special", *addSpecial).Bool("parse_special", *parseSpecial).Msg("tokenize")
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
