package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"bench/internal/exitcode"
	"bench/internal/record/rundir"
	"bench/report"
	"bench/report/rebuild"
)

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

// reportCmd is `bench report RUN_DIR`.
func reportCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench report", flag.ContinueOnError)
	junitPath := fs.String("junit", "", "also write the JUnit XML report to this `file`")
	fs.Usage = func() {
		fmt.Fprint(stdout, reportUsage)
		fs.SetOutput(stdout)
		printFlags(fs, fs.Output())
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "bench report: want one run directory, got %d arguments; see 'bench report --help'\n", fs.NArg())
		return exitcode.Usage
	}
	dir := fs.Arg(0)
	if err := rundir.Check(dir); err != nil {
		fmt.Fprintf(stderr, "bench report: %v\n", err)
		return exitcode.Usage
	}
	// The lock removes what a killed report left; a live run holds it, and
	// a report of it goes ahead without (the run's end rewrites them).
	if d, err := rundir.Lock(dir); err == nil {
		defer d.Close()
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(reportMemoryLimit))
	}
	s, err := rebuild.All(dir, rebuild.Options{JUnitCopy: *junitPath, Warn: stderr, RequireRecords: true})
	if err != nil {
		fmt.Fprintf(stderr, "bench report: %v\n", err)
		return exitcode.IO
	}
	if err := report.WriteTable(stdout, s); err != nil {
		fmt.Fprintf(stderr, "bench report: %v\n", err)
		return exitcode.IO
	}
	fmt.Fprintf(stdout, "bench: rebuilt the reports in %s\n", dir)
	rebuild.WritePaths(stdout, dir)
	return exitcode.OK
}
