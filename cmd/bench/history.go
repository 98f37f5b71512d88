package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"bench/internal/exitcode"
	"bench/report/history"
)

const historyUsage = `usage: bench history [flags] RUN_DIR...

Reads many runs (each argument a run directory, or a directory of nightly
run directories; ordered by their run.json) and writes history.json and
history.html: per (provider, model, thinking level) group the series of
pass rate, tool-use success, TTFT, e2e and tokens/s (p50 and p95) and cost
when known, with the change points an E-divisive means detector finds,
each tied to the run where it starts and what changed in its setup. Reads
only run.json, summary.json, tiers.json, inventory.json and config.json. A
change point where bench measured otherwise (the concurrency, the run
settings, a pass rate's checks) is the setup's and fails no gate; a bench
rescore copy of a run counts as that night, once.

Exit codes: 0 no change point of --fail-on-change in the last --since runs,
3 one found, 7 no series of those metrics long enough for any change point
(NOT JUDGED: the runs it has and the runs it needs), 1 a directory could
not be read, no run could be read at all, or the outputs could not be
written, 2 bad flags or arguments.

Flags:
`

// historyFlags are bench history's flags beyond the options.
type historyFlags struct {
	out, failOn, minChange string
}

// historyCmd is `bench history`.
func historyCmd(args []string, stdout, stderr io.Writer) int {
	opt, f, pos, code, ok := parseHistoryFlags(args, stderr)
	if !ok {
		return code
	}
	verdict, err := history.Judge(pos, f.out, opt, stdout)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "bench history: %v\n", err)
		return exitcode.IO
	case verdict == history.VerdictChange:
		return exitcode.Regression
	case verdict == history.VerdictNotJudged:
		return exitcode.HistoryNotJudged
	}
	return exitcode.OK
}

// parseHistoryFlags reads the flags (before or after the directories) into
// history.Options; ok false ends the command with code.
func parseHistoryFlags(args []string, stderr io.Writer) (history.Options, *historyFlags, []string, int, bool) {
	opt, f := history.DefaultOptions(), &historyFlags{}
	fs := flag.NewFlagSet("bench history", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.out, "out", "", "directory for history.json and history.html (default DIR/history for one DIR, else ./history)")
	fs.StringVar(&f.failOn, "fail-on-change", "", "metrics whose new regression change point fails the gate: latency, quality, or "+strings.Join(history.Metrics, ", "))
	fs.IntVar(&opt.Since, "since", opt.Since, "how many of the latest runs count as new for --fail-on-change")
	fs.IntVar(&opt.Detector.Window, "window", opt.Detector.Window, "the detector's window, in runs")
	fs.Float64Var(&opt.Detector.MaxP, "max-p", opt.Detector.MaxP, "the significance a change point must reach")
	fs.IntVar(&opt.Detector.MinSegment, "min-runs", opt.Detector.MinSegment, "the fewest runs each side of a change point must have")
	fs.StringVar(&f.minChange, "min-change", fmt.Sprintf("%g%%", 100*opt.Detector.MinMagnitude), "the smallest change of the means kept")
	fs.Usage = func() {
		fmt.Fprint(stderr, historyUsage)
		printFlags(fs, fs.Output())
	}
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return opt, f, nil, exitcode.OK, false
	} else if err != nil {
		return opt, f, nil, exitcode.Usage, false
	}
	opt.FailOnChange = splitList(f.failOn)
	if opt.Detector.MinMagnitude, err = parsePercent(f.minChange); err != nil {
		err = fmt.Errorf("--min-change: %w", err)
	} else if len(pos) == 0 {
		err = errors.New("want run directories or a directory of them; see 'bench history -h'")
	} else {
		err = opt.Validate()
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench history: %v\n", err)
		return opt, f, nil, exitcode.Usage, false
	}
	return opt, f, pos, exitcode.OK, true
}
