package main

// The flag layer of every command: the standard flag package with aliases
// (llama.cpp's long and short names for the same flag), help with one entry
// per flag (its aliases, value name, default and meaning), and a usage line
// and example for each command.
//
// Aliases come from one table (flagAliases), applied to every command's
// flag set at Parse: a name means the same thing wherever it is defined.

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// flagAliases lists, for a flag name a command may define, the other names
// it is also known by (llama.cpp's). Parse adds each alias the command does
// not define itself.
var flagAliases = map[string][]string{
	"m":       {"model"},
	"d":       {"draft", "md", "model-draft"},
	"p":       {"prompt"},
	"f":       {"file"},
	"n":       {"n-predict"},
	"k":       {"draft-max"},
	"threads": {"t"},
	"ctx":     {"c", "ctx-size"},
	"seed":    {"s"},
	"system":  {"sys"},
	"stop":    {"r", "reverse-prompt"},
	"batch":   {"b", "batch-size"},
	"temp":    {"temperature"},
}

// commandExamples is the example every command's -h ends with.
var commandExamples = map[string][]string{
	"generate": {`specd generate -p "The jury said" -n 32`, `specd generate -m model.gguf --chat -p "Name three rivers." --stop "."`, `specd generate -f prompt.txt -d none --temp 0.8`},
	"chat":     {`specd chat`, `specd chat -m model.gguf --system "You answer briefly." --show-draft`},
	"serve":    {`specd serve`, `specd serve -m target.gguf -d draft.gguf --slots 8 --http 127.0.0.1:8080`},
	"bench":    {`specd bench --k 1,2,4 --batch 1,4 --out /tmp/bench`, `specd bench -m target.gguf -d draft.gguf --prompts assistant --out /tmp/bench`},
	"run":      {`specd run "The jury said"`, `specd run --session car1 -n 32 "Turn left at the lights"`},
	"tokenize": {`specd tokenize -m bundled "The jury said"`, `specd tokenize -m model.gguf --parse-special -f prompt.txt`},
	"inspect":  {`specd inspect bundled`, `specd inspect model.gguf`},
	"pull":     {`specd pull -h`},
	"version":  {`specd version`},
}

// flagSet is a command's flag.FlagSet with aliases and specd's help.
type flagSet struct {
	*flag.FlagSet
	cmd     string
	aliasOf map[string]string // alias → the name the command defined
}

// newFlagSet returns the flag set of command name: errors are returned
// (not exits) and printed to stderr with the command's usage.
func newFlagSet(name string, stderr io.Writer) *flagSet {
	fs := flag.NewFlagSet("specd "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return &flagSet{FlagSet: fs, cmd: name, aliasOf: map[string]string{}}
}

// Alias makes each of aliases another name of the defined flag name.
func (f *flagSet) Alias(name string, aliases ...string) {
	fl := f.Lookup(name)
	if fl == nil {
		panic("specd: alias of undefined flag " + name)
	}
	for _, a := range aliases {
		if f.Lookup(a) != nil {
			continue // the command defines that name itself
		}
		f.Var(fl.Value, a, fl.Usage)
		f.aliasOf[a] = name
	}
}

// Parse adds the aliases of flagAliases, then parses args.
func (f *flagSet) Parse(args []string) error {
	for name, aliases := range flagAliases {
		if _, isAlias := f.aliasOf[name]; f.Lookup(name) != nil && !isAlias {
			f.Alias(name, aliases...)
		}
	}
	return f.FlagSet.Parse(args)
}

// parseFlagsOnly parses args as Parse does, for a command that takes no
// positional arguments: one there is printed to stderr (with hint, when
// not empty, in brackets after it) followed by the usage, and is errUsage.
func (f *flagSet) parseFlagsOnly(args []string, stderr io.Writer, hint string) error {
	if err := f.Parse(args); err != nil {
		return err
	}
	if f.NArg() != 0 {
		if hint != "" {
			hint = " (" + hint + ")"
		}
		fmt.Fprintf(stderr, "specd %s: unexpected argument %q%s\n", f.cmd, f.Arg(0), hint)
		f.Usage()
		return errUsage
	}
	return nil
}

// Visit calls fn for each flag set on the command line, once, under the
// name the command defined (an alias reports its flag).
func (f *flagSet) Visit(fn func(*flag.Flag)) {
	seen := map[string]bool{}
	f.FlagSet.Visit(func(fl *flag.Flag) {
		if p, ok := f.aliasOf[fl.Name]; ok {
			fl = f.Lookup(p)
		}
		if !seen[fl.Name] {
			seen[fl.Name] = true
			fn(fl)
		}
	})
}

// IsSet reports whether flag name (or an alias of it) was given.
func (f *flagSet) IsSet(name string) bool {
	set := false
	f.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

// short reports whether a flag name is written with one dash: a letter,
// or an alias of up to three (llama.cpp's -md, -sys).
func short(name string, alias bool) bool { return len(name) == 1 || alias && len(name) <= 3 }

// dashed is how a flag name is written: -x when short, --name otherwise.
func dashed(name string, alias bool) string {
	if short(name, alias) {
		return "-" + name
	}
	return "--" + name
}

// PrintDefaults writes one entry per flag: its names (aliases together,
// short first), value name, meaning and default; then the command's
// examples.
func (f *flagSet) PrintDefaults() {
	w := f.Output()
	names := map[string][]string{}
	f.VisitAll(func(fl *flag.Flag) {
		p := fl.Name
		if a, ok := f.aliasOf[p]; ok {
			p = a
		}
		names[p] = append(names[p], fl.Name)
	})
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fl := f.Lookup(k)
		ns := names[k]
		// Short names first, then the defined name, then other aliases.
		rank := func(n string) int {
			switch {
			case short(n, n != k):
				return 0
			case n == k:
				return 1
			}
			return 2
		}
		sort.SliceStable(ns, func(i, j int) bool { return rank(ns[i]) < rank(ns[j]) })
		for i, n := range ns {
			ns[i] = dashed(n, n != k)
		}
		value, usage := flag.UnquoteUsage(fl)
		usage = strings.TrimPrefix(usage, value+": ") // "`N|auto`: …" names the value only
		value = valueName(fl, value)
		head := "  " + strings.Join(ns, ", ")
		if value != "" {
			head += " " + value
		}
		fmt.Fprintln(w, head)
		text := usage
		if d := fl.DefValue; d != "" && d != "false" && d != "0" && d != "[]" && !strings.Contains(usage, "default") {
			if g, ok := fl.Value.(flag.Getter); ok {
				if _, isString := g.Get().(string); isString {
					d = fmt.Sprintf("%q", d)
				}
			}
			text += fmt.Sprintf(" (default %s)", d)
		}
		fmt.Fprintln(w, "    \t"+strings.ReplaceAll(text, "\n", "\n    \t"))
	}
	if ex := commandExamples[f.cmd]; len(ex) > 0 {
		fmt.Fprintln(w, "\nexamples:")
		for _, e := range ex {
			fmt.Fprintln(w, "  "+e)
		}
	}
}

// valueName is the value placeholder of fl: the backquoted name of its
// usage, or a word for its type (none for a boolean).
func valueName(fl *flag.Flag, unquoted string) string {
	if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return ""
	}
	switch unquoted {
	case "value", "string":
		return "STR"
	case "int", "uint", "float":
		return "N"
	case "duration":
		return "DURATION"
	}
	if unquoted == strings.ToLower(unquoted) && !strings.ContainsAny(unquoted, "|,") {
		return strings.ToUpper(unquoted)
	}
	return unquoted
}

// usageFunc returns a Usage that prints the usage lines, a description,
// the flags and the examples of the command.
func (f *flagSet) usageFunc(lines []string, about string) func() {
	return func() {
		w := f.Output()
		for i, l := range lines {
			if i == 0 {
				fmt.Fprintln(w, "usage: "+l)
			} else {
				fmt.Fprintln(w, "       "+l)
			}
		}
		if about != "" {
			fmt.Fprintln(w, "\n"+about)
		}
		fmt.Fprintln(w, "\nflags:")
		f.PrintDefaults()
	}
}
