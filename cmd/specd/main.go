// Command specd is a speculative-decoding LLM server and its tools.
//
// Each subcommand lives in its own file and registers itself in init with
// register; main dispatches on the first argument.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one specd subcommand.
type command struct {
	name    string
	summary string
	// run executes the command with its arguments (without the name).
	// stdout and stderr are passed so tests can run commands in-process.
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) error
	// runIn, if set instead of run, also reads stdin.
	runIn func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
	// interrupts: the command handles SIGINT itself (main's context then
	// ends on SIGTERM only).
	interrupts bool
}

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("specd: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// errUsage marks an error already explained to the user by a FlagSet.
var errUsage = errors.New("usage")

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: specd <command> [flags]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'specd <command> -h' for a command's flags.")
}

// runMain runs specd with args (without the program name), reading
// os.Stdin, and returns the process exit code.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runMainIn(ctx, args, os.Stdin, stdout, stderr)
}

// runMainIn is runMain reading stdin.
func runMainIn(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "specd: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	run := c.run
	if c.runIn != nil {
		run = func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return c.runIn(ctx, args, stdin, stdout, stderr)
		}
	}
	if err := run(ctx, args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		if errors.Is(err, errUsage) {
			return 2
		}
		fmt.Fprintf(stderr, "specd %s: %v\n", c.name, err)
		return 1
	}
	return 0
}

func main() {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if len(os.Args) > 1 && commands[os.Args[1]].interrupts {
		sigs = sigs[1:]
	}
	ctx, stop := signal.NotifyContext(context.Background(), sigs...)
	code := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
