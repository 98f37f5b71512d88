package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"bench/internal/exitcode"
	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/version"
	"bench/report"
	"bench/report/merge"
)

const mergeUsage = `usage: bench merge [--allow-partial] [--allow-unavailable] OUT_DIR SHARD_DIR...

Puts the run directories of a sharded run (bench run --shard i/n, or a
Kubernetes Indexed Job) together into OUT_DIR as one run: results.jsonl,
resource files, snapshots, traces and other per-cell outputs, config.json,
inventory.json (each shard's own under shards/), run.json, and the reports
rebuilt from the merged results. Shards of different configs, a cell in two
shards, a missing shard, or a shard whose results.jsonl does not match its
plan and its run.json (cells lost, lines that do not parse, cells outside
the plan) are refused (exit 2), naming the shard and the cells. With
--allow-partial they are merged as a run that did not finish: run.json
says interrupted and lists them, and bench compare judges the missing
cells as availability regressions. The merge is written beside OUT_DIR and
renamed into place: a killed merge leaves no half-made OUT_DIR. Exit 4 when
no cell of the whole run reached a model, or none of some provider's (each
shard's own exit 4 looked at its cells only); --allow-unavailable accepts
the latter. Exit 5 when some group of the run got no verdict from its
external checks (a judge that was down: bench rescore judges it again).

Flags:
`

// mergeFlags are bench merge's flags.
type mergeFlags struct{ allowPartial, allowUnavailable bool }

// mergeCmd is `bench merge OUT_DIR SHARD_DIR...`.
func mergeCmd(args []string, stdout, stderr io.Writer) int {
	var f mergeFlags
	fs := newMergeFlags(&f)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, mergeUsage)
		printFlags(fs, fs.Output())
	}
	pos, err := parseInterleaved(fs, args)
	if err == flag.ErrHelp {
		return exitcode.OK
	}
	if err != nil {
		return exitcode.Usage
	}
	if len(pos) < 2 {
		fs.Usage()
		return exitcode.Usage
	}
	res, err := merge.Merge(pos[0], pos[1:], merge.Options{AllowPartial: f.allowPartial, BenchVersion: version.String(), Warn: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "bench merge: %v\n", err)
		if merge.IsRefusal(err) {
			return exitcode.Usage
		}
		return exitcode.IO
	}
	if err := report.WriteTable(stdout, res.Summary); err != nil {
		fmt.Fprintf(stderr, "bench merge: %v\n", err)
		return exitcode.IO
	}
	printMerged(stdout, res)
	if code := mergeReach(res.Dir, f.allowUnavailable, stderr); code != exitcode.OK {
		return code
	}
	return judgedCode("bench merge", res.Dir, stderr)
}

// judgedCode is exit 5 (exitcode.Unjudged) for a run directory a command
// wrote (bench merge's merged run, decided over all its cells as each
// shard's was over its own; bench rescore's copy), when some group of it
// got no verdict from its external checks.
func judgedCode(cmd, dir string, stderr io.Writer) int {
	groups, err := results.UnjudgedIn(rundir.Path(dir, rundir.ResultsFile))
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return exitcode.IO
	}
	if line := results.UnjudgedLine(groups); line != "" {
		fmt.Fprintf(stderr, "%s: %s; the run cannot be a baseline: judge it again when the check works ('%s rescore %s --out DIR') (exit %d)\n",
			cmd, line, progName, dir, exitcode.Unjudged)
		return exitcode.Unjudged
	}
	return exitcode.OK
}

// printMerged says what a merge put together, and where.
func printMerged(stdout io.Writer, res *merge.Result) {
	m := res.Info.Merge
	note := ""
	switch {
	case len(m.Missing) > 0 && len(m.Problems) > 0:
		note = fmt.Sprintf(" (partial: shards %v of %d missing, %d incomplete)", m.Missing, m.Count, len(m.Problems))
	case len(m.Missing) > 0:
		note = fmt.Sprintf(" (partial: shards %v of %d missing)", m.Missing, m.Count)
	case len(m.Problems) > 0:
		note = fmt.Sprintf(" (partial: %d of %d shards incomplete)", len(m.Problems), m.Count)
	}
	fmt.Fprintf(stdout, "bench: merged %d of %d shards, %d records%s into %s\n", len(m.Shards), m.Count, res.Records, note, res.Dir)
}

// mergeReach is the merged run's exit 4, decided over all its cells.
func mergeReach(dir string, allow bool, stderr io.Writer) int {
	none, any, err := merge.Unreached(dir)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "bench merge: %v\n", err)
		return exitcode.IO
	case !any:
		fmt.Fprintln(stderr, "bench merge: no cell of the run reached a model")
		return exitcode.Unreached
	case len(none) > 0 && !allow:
		fmt.Fprintf(stderr, "bench merge: no cell of %s reached a model in any shard (--allow-unavailable accepts that)\n", strings.Join(none, ", "))
		return exitcode.Unreached
	}
	return exitcode.OK
}

func newMergeFlags(f *mergeFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("bench merge", flag.ContinueOnError)
	fs.BoolVar(&f.allowPartial, "allow-partial", false, "merge even when shards are missing or incomplete, as a run that did not finish (run.json lists them)")
	fs.BoolVar(&f.allowUnavailable, "allow-unavailable", false, "exit 0 although no cell of some provider reached a model in any shard")
	return fs
}

// parseInterleaved parses flags given before, between or after the
// positional arguments (bench merge out a b --allow-partial), which the
// flag package alone stops at.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil // after --, all are arguments
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
