package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"

	"bench/report"
	"bench/report/htmlreport"
	"bench/report/junitxml"
	"bench/results"
	"bench/rundir"
)

// buildReports rebuilds every report of the run directory from its
// results.jsonl in one pass: summary.json, summary.md and tiers.json,
// report.html and junit.xml (and a copy of junit.xml at junitPath when it is
// not ""). It returns the summary for the terminal table.
// compare.html is bench compare's, not a run's.
func buildReports(dir, junitPath string, stderr io.Writer) (*report.Summary, error) {
	var samples *htmlreport.Samples
	var ju *junitxml.Builder
	defer func() {
		if ju != nil {
			ju.Close()
		}
	}()
	// Each cell once, by its last record: a second pass (a resumed run's
	// duplicate cells) starts the collectors afresh.
	s, err := report.LoadEach(dir, func() func(*results.Record) {
		if ju != nil {
			ju.Close()
		}
		samples, ju = htmlreport.NewSamples(), junitxml.New()
		return func(r *results.Record) {
			samples.Add(r)
			ju.Add(r)
		}
	})
	if err != nil {
		return nil, err
	}
	report.Warn(stderr, s)
	if err := report.Write(dir, s); err != nil {
		return nil, err
	}
	// After summary.json: report.html reads the agentic figures from it.
	d := samples.Data(s, dir)
	for _, w := range d.Warnings {
		fmt.Fprintf(stderr, "warning: report.html: %s\n", w)
	}
	if err := htmlreport.WriteFile(dir, d); err != nil {
		return nil, err
	}
	if err := ju.WriteFile(filepath.Join(dir, junitxml.FileName)); err != nil {
		return nil, err
	}
	if junitPath != "" {
		if err := ju.WriteFile(junitPath); err != nil {
			return nil, fmt.Errorf("--junit: %w", err)
		}
	}
	return s, nil
}

// reportMemoryLimit is bench report's soft heap limit (GOMEMLIMIT, unless
// that is set). What the reports hold is about 64 bytes a cell, 64 MB for
// a million-cell run, and reading results.jsonl makes garbage at a
// gigabyte a second: with the default GOGC the heap grows to twice what is
// held before a collection, 140 MB of RSS for that run; held to this
// limit, the collector runs more often near the peak (the held data has
// no pointers to scan, so a collection is cheap) and the peak RSS is 87-92
// MB, at much the same speed. A run that holds more than the limit is
// slowed no more than the runtime's GC CPU cap (half the CPU) allows.
const reportMemoryLimit = 72 << 20

const reportUsage = `usage: bench report [--junit FILE] RUN_DIR

Rebuilds summary.json, summary.md, tiers.json, report.html and junit.xml
from RUN_DIR/results.jsonl.

Flags:
`

func reportCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench report", flag.ContinueOnError)
	junitPath := fs.String("junit", "", "also write the JUnit XML report to this `file`")
	fs.Usage = func() {
		fmt.Fprint(stdout, reportUsage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "bench report: want one run directory, got %d arguments; see 'bench report --help'\n", fs.NArg())
		return exitUsage
	}
	dir := fs.Arg(0)
	if err := rundir.Check(dir); err != nil {
		fmt.Fprintf(stderr, "bench report: %v\n", err)
		return exitUsage
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(reportMemoryLimit))
	}
	s, err := buildReports(dir, *junitPath, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bench report: %v\n", err)
		return exitIO
	}
	if err := report.WriteTable(stdout, s); err != nil {
		fmt.Fprintf(stderr, "bench report: %v\n", err)
		return exitIO
	}
	fmt.Fprintf(stdout, "bench: rebuilt the reports in %s\n", dir)
	writeReportPaths(stdout, dir)
	return exitOK
}
