package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"bench/internal/exitcode"
	"bench/internal/suggest"
)

// parseFlags parses args into fs. A bad flag costs one line on stderr
// naming it, with the flag probably meant and a pointer to --help (the
// flag package would print the whole usage, and the caller the error
// again); -h or --help prints fs.Usage and ends the command with exit 0.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	usage := fs.Usage
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	switch {
	case err == nil:
		return exitcode.OK, true
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return exitcode.OK, false
	}
	fmt.Fprintf(stderr, "%s: %s; see '%s --help'\n", fs.Name(), flagProblem(fs, err), fs.Name())
	return exitcode.Usage, false
}

// flagProblem words a flag package error, with "did you mean" for an
// unknown flag.
func flagProblem(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return "--" + strings.TrimLeft(name, "-") + " needs a value"
	}
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		// invalid value "many" for flag -concurrency: parse error
		if value, rest, ok := strings.Cut(rest, " for flag "); ok {
			name, why, _ := strings.Cut(rest, ": ")
			return "--" + strings.TrimLeft(name, "-") + ": invalid value " + value + " (" + why + ")"
		}
	}
	name, unknown := strings.CutPrefix(msg, "flag provided but not defined: ")
	if !unknown {
		return msg
	}
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(fl *flag.Flag) { names = append(names, fl.Name) })
	s := "unknown flag --" + name
	if c := suggest.Closest(name, names); c != "" {
		s += " (did you mean --" + c + "?)"
	}
	return s
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// printFlags is flag.PrintDefaults with each flag written as the docs
// write it, with two dashes (--timeout; the flag package takes both).
func printFlags(fs *flag.FlagSet, w io.Writer) {
	fs.VisitAll(func(f *flag.Flag) {
		var b strings.Builder
		fmt.Fprintf(&b, "  --%s", f.Name)
		name, usage := flag.UnquoteUsage(f)
		if name != "" {
			b.WriteString(" " + name)
		}
		b.WriteString("\n    \t")
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		switch def := f.DefValue; {
		case def == "" || def == "0" || def == "false" || def == "[]":
		case fmt.Sprintf("%T", f.Value) == "*flag.stringValue":
			fmt.Fprintf(&b, " (default %q)", def)
		default:
			fmt.Fprintf(&b, " (default %v)", def)
		}
		fmt.Fprintln(w, b.String())
	})
}
