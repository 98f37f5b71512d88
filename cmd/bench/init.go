package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"bench/cmd/bench/internal/initconfig"
	"bench/internal/exitcode"
	"bench/internal/shellword"
)

const initUsage = `usage: bench init [--config bench.yaml] [--ollama URL] [--detect PCT]

Writes a commented bench.yaml to start from. When an Ollama answers at URL
(default: $OLLAMA_HOST, else http://127.0.0.1:11434; host:port as
OLLAMA_HOST takes it works too), its pulled chat models are the ones to
sweep; otherwise the file names two small models to pull.
An existing file is never overwritten.

Flags:
`

// initCmd is `bench init`.
func initCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench init", flag.ContinueOnError)
	path := fs.String("config", "bench.yaml", "the `file` to write")
	ollama := fs.String("ollama", "", "where to look for a running Ollama: a URL or host:port (default $OLLAMA_HOST, else http://127.0.0.1:11434)")
	detect := fs.String("detect", "", "say how many repetitions bench compare needs to detect a latency change of this size, e.g. 20% (spread assumed)")
	fs.Usage = func() {
		fmt.Fprint(stdout, initUsage)
		fs.SetOutput(stdout)
		printFlags(fs, fs.Output())
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bench init: unexpected argument %q; see 'bench init --help'\n", fs.Arg(0))
		return exitcode.Usage
	}
	base, err := initconfig.Base(*ollama)
	if err != nil {
		fmt.Fprintf(stderr, "bench init: %v\n", err)
		return exitcode.Usage
	}
	var effect float64
	if *detect != "" {
		if effect, err = parsePercent(*detect); err != nil || effect == 0 {
			fmt.Fprintf(stderr, "bench init: --detect %q: want a percentage such as 20%%\n", *detect)
			return exitcode.Usage
		}
	}
	notes, err := initconfig.Write(*path, base, effect)
	switch {
	case errors.Is(err, initconfig.ErrExists):
		fmt.Fprintf(stderr, "bench init: %s exists; not overwriting it (move it away, or write another file with --config FILE)\n", *path)
		return exitcode.Usage
	case err != nil:
		fmt.Fprintf(stderr, "bench init: %v\n", err)
		return exitcode.IO
	}
	printInitNext(stdout, *path, notes)
	return exitcode.OK
}

// printInitNext says what bench init wrote and the commands to run next.
func printInitNext(stdout io.Writer, path string, notes []string) {
	fmt.Fprintf(stdout, "bench: wrote %s\n", path)
	for _, n := range notes {
		fmt.Fprintf(stdout, "  %s\n", n)
	}
	run := progName + " run"
	if path != "bench.yaml" {
		run += " --config " + shellword.Quote(path)
	}
	fmt.Fprintf(stdout, "next:\n  %s --dry-run    show the plan\n  %s              run it\n", run, run)
}
