package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"bench/history"
)

const historyUsage = `usage: bench history [flags] RUN_DIR...

Reads many runs (each argument a run directory, or a directory of nightly
run directories; ordered by their run.json) and writes history.json and
history.html: per (provider, model, thinking level) group the series of
pass rate, tool-use success, TTFT, e2e and tokens/s (p50 and p95) and cost
when known, with the change points an E-divisive means detector finds,
each tied to the run where it starts and what changed in its setup. Reads
only run.json, summary.json, tiers.json and inventory.json.

Exit codes: 0 no change point of --fail-on-change in the last --since runs,
3 one found, 1 the outputs could not be written, 2 bad flags or arguments.

Flags:
`

// historyCmd is `bench history`.
func historyCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench history", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := history.DefaultOptions()
	out := fs.String("out", "", "directory for history.json and history.html (default DIR/history for one DIR, else ./history)")
	failOn := fs.String("fail-on-change", "", "metrics whose new regression change point fails the gate: latency, quality, or "+strings.Join(history.Metrics, ", "))
	since := fs.Int("since", def.Since, "how many of the latest runs count as new for --fail-on-change")
	window := fs.Int("window", def.Detector.Window, "the detector's window, in runs")
	maxP := fs.Float64("max-p", def.Detector.MaxP, "the significance a change point must reach")
	minRuns := fs.Int("min-runs", def.Detector.MinSegment, "the fewest runs each side of a change point must have")
	minChange := fs.String("min-change", fmt.Sprintf("%g%%", 100*def.Detector.MinMagnitude), "the smallest change of the means kept")
	fs.Usage = func() {
		fmt.Fprint(stderr, historyUsage)
		fs.PrintDefaults()
	}
	var pos []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			return exitOK
		} else if err != nil {
			return exitUsage
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) == 0 {
		fmt.Fprintln(stderr, "bench history: want run directories or a directory of them; see 'bench history -h'")
		return exitUsage
	}
	opt := def
	opt.FailOnChange, opt.Since = splitList(*failOn), *since
	opt.Detector.Window, opt.Detector.MaxP, opt.Detector.MinSegment = *window, *maxP, *minRuns
	mc, err := parsePercent(*minChange)
	if err != nil {
		fmt.Fprintf(stderr, "bench history: --min-change: %v\n", err)
		return exitUsage
	}
	opt.Detector.MinMagnitude = mc
	if err := opt.Validate(); err != nil {
		fmt.Fprintf(stderr, "bench history: %v\n", err)
		return exitUsage
	}
	dirs, warnings, err := history.FindRuns(pos)
	if err != nil {
		fmt.Fprintf(stderr, "bench history: %v\n", err)
		return exitUsage
	}
	h, err := history.Build(dirs, opt, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "bench history: %v\n", err)
		return exitUsage
	}
	h.Warnings = append(warnings, h.Warnings...)
	if *out == "" {
		*out = history.DirName
		if len(pos) == 1 && !(len(dirs) == 1 && dirs[0] == pos[0]) {
			*out = filepath.Join(pos[0], history.DirName)
		}
	}
	if err := history.WriteText(stdout, h); err != nil {
		fmt.Fprintf(stderr, "bench history: %v\n", err)
		return exitIO
	}
	if err := history.WriteFiles(*out, h); err != nil {
		fmt.Fprintf(stderr, "bench history: %v\n", err)
		return exitIO
	}
	fmt.Fprintf(stdout, "bench history: %s and %s in %s\n", history.JSONFile, history.HTMLFile, *out)
	if h.Verdict == history.VerdictChange {
		return exitRegression
	}
	return exitOK
}
