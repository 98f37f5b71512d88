package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"bench/cmd/bench/internal/rescore"
	"bench/internal/exitcode"
	"bench/internal/format"
	"bench/internal/version"
	"bench/report"
	"bench/report/rebuild"
)

const rescoreUsage = `usage: bench rescore RUN_DIR --out NEW_DIR [--prompts FILE]... [--config FILE] [--no-judge]

Judges the answers RUN_DIR recorded again, with today's validators and
tool detection, and writes NEW_DIR as a complete run directory: the same
cells and timings, the new verdicts, run.json's rescored_from, the reports
rebuilt. 'bench compare RUN_DIR NEW_DIR' then shows exactly the verdicts
the change moved. Only the checks may change: a prompt whose text, system
prompt, tools or max_turns differ is refused. Nothing is sent but the
llm_judge checks' requests (none with --no-judge).

Today's prompts come from --prompts (prompt files, or DATA.csv=TEMPLATE.yaml),
else from --config's prompt set, else the run's own config.json (today's
code on the run's checks). A run's prompt that today's do not have keeps
its checks.

Exit codes: 0 rescored, 1 an I/O failure, 2 bad flags, a run directory
that cannot be rescored, or prompts that changed more than their checks,
5 rescored but some group of the copy still got no verdict from its
external checks (the judge still down).

Flags:
`

type rescoreFlags struct {
	out, config string
	prompts     []string
	noJudge     bool
}

func newRescoreFlags(f *rescoreFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("bench rescore", flag.ContinueOnError)
	fs.StringVar(&f.out, "out", "", "the new run `directory` (required; must not hold a run)")
	fs.Func("prompts", "a prompt `file` (or DATA.csv=TEMPLATE.yaml) with today's checks; repeat it, or separate with commas", func(s string) error {
		f.prompts = append(f.prompts, splitList(s)...)
		return nil
	})
	fs.StringVar(&f.config, "config", "", "a bench.yaml: its prompts (without --prompts), and its judge entries (for judges the run lacks or that only judged)")
	fs.BoolVar(&f.noJudge, "no-judge", false, "send nothing: keep each llm_judge's recorded verdict where its check is unchanged")
	return fs
}

// rescoreCmd is `bench rescore RUN_DIR --out NEW_DIR`.
func rescoreCmd(args []string, stdout, stderr io.Writer) int {
	f, run, code, ok := parseRescoreFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := rescore.Run(ctx, rescore.Options{Run: run, Out: f.out, Prompts: f.prompts, Config: f.config,
		NoJudge: f.noJudge, Version: version.String(), Log: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "bench rescore: %v\n", err)
		switch {
		case rescore.IsRefusal(err):
			return exitcode.Usage
		case errors.Is(err, context.Canceled):
			fmt.Fprintf(stderr, "bench: %s was not written; run the same command again\n", f.out)
			return exitcode.Interrupted
		}
		return exitcode.IO
	}
	if err := report.WriteTable(stdout, res.Summary); err != nil {
		fmt.Fprintf(stderr, "bench rescore: %v\n", err)
		return exitcode.IO
	}
	printRescored(stdout, res, f, run)
	return judgedCode("bench rescore", res.Dir, stderr)
}

// parseRescoreFlags reads bench rescore's flags and its one run directory;
// ok is false when the command ends with code (help, or a usage error).
func parseRescoreFlags(args []string, stdout, stderr io.Writer) (f rescoreFlags, run string, code int, ok bool) {
	fs := newRescoreFlags(&f)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stdout, rescoreUsage)
		fs.SetOutput(stdout)
		printFlags(fs, fs.Output())
	}
	pos, err := parseInterleaved(fs, args)
	switch {
	case err == flag.ErrHelp:
		return f, "", exitcode.OK, false
	case err != nil:
		return f, "", exitcode.Usage, false
	case len(pos) != 1:
		fmt.Fprintf(stderr, "bench rescore: want one run directory, got %d arguments; see 'bench rescore --help'\n", len(pos))
		return f, "", exitcode.Usage, false
	case f.out == "":
		fmt.Fprintln(stderr, "bench rescore: --out is required: the new run directory; see 'bench rescore --help'")
		return f, "", exitcode.Usage, false
	}
	return f, pos[0], exitcode.OK, true
}

// printRescored says what a rescore did, where its files are and how to
// see the verdicts it moved.
func printRescored(stdout io.Writer, res *rescore.Result, f rescoreFlags, run string) {
	var notes []string
	if res.Judged > 0 {
		what := "judged"
		if f.noJudge {
			what = "kept their recorded judge verdict where they could"
		}
		notes = append(notes, fmt.Sprintf("%s with external checks %s", format.Plural(res.Judged, "cell"), what))
	}
	if res.CheckErrors > 0 {
		notes = append(notes, fmt.Sprintf("%s without a verdict of some check (check_errors)", format.Plural(res.CheckErrors, "cell")))
	}
	note := ""
	if len(notes) > 0 {
		note = "; " + strings.Join(notes, "; ")
	}
	fmt.Fprintf(stdout, "bench: rescored %s of %s into %s: %s moved%s\n", format.Plural(res.Records, "cell"), run, res.Dir, format.Plural(res.Moved, "verdict"), note)
	rebuild.WritePaths(stdout, res.Dir)
	fmt.Fprintf(stdout, "  compare:  %s compare %s %s\n", progName, run, f.out)
}
