package main

import (
	"flag"
	"fmt"
	"io"

	"bench/report"
	"bench/rundir"
)

// buildReports rebuilds summary.json, summary.md and tiers.json from the run
// directory's results.jsonl and returns the summary for the terminal table.
func buildReports(dir string, stderr io.Writer) (*report.Summary, error) {
	s, err := report.Load(dir)
	if err != nil {
		return nil, err
	}
	report.Warn(stderr, s)
	if err := report.Write(dir, s); err != nil {
		return nil, err
	}
	return s, nil
}

func reportCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: bench report RUN_DIR\n\nRebuilds summary.json, summary.md and tiers.json from RUN_DIR/results.jsonl.")
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	dir := fs.Arg(0)
	if err := rundir.Check(dir); err != nil {
		fmt.Fprintf(stderr, "bench report: %v\n", err)
		return exitUsage
	}
	s, err := buildReports(dir, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bench report: %v\n", err)
		return exitIO
	}
	if err := report.WriteTable(stdout, s); err != nil {
		fmt.Fprintf(stderr, "bench report: %v\n", err)
		return exitIO
	}
	fmt.Fprintf(stdout, "bench: wrote summary.json, summary.md and tiers.json in %s\n", dir)
	return exitOK
}
