package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"bench/internal/exitcode"
	"bench/internal/suggest"
	"bench/report/compare"
	"bench/report/stats"
)

const compareUsage = `usage: bench compare [flags] BASE_RUN_DIR NEW_RUN_DIR

Judges the new run against the base run, the nightly regression gate:
every cell key (match, drift, regression, improvement; changed, missing,
new, unavailable), each (provider, model, thinking level) group's pass rate
and tool-use rate (exact McNemar test on the matched cells), tool-use tier,
cells that never reached the model, TTFT, e2e and tokens/s per group and per
prompt (signed-rank test on matched repetitions, or Mann-Whitney U;
Hodges-Lehmann shift; Holm's correction), each load
stage's throughput, goodput and the saturation point, and each group's
cost base -> new (a gate only with --fail-on cost). Prints the findings
grouped by root cause, regressions first, then the tables, and writes
compare.json, compare.md, compare.html and junit.xml to --out. Only --out is written; the run directories are read.

Exit codes: 0 no regression of the --fail-on categories, 3 regression
found (or a metric of --require-judged judged nowhere), 1 a run directory
could not be read or the outputs written, 2 bad flags or arguments.

Flags:
`

// compareFlags are bench compare's options (bench run --baseline uses the
// defaults).
type compareFlags struct {
	out              string
	failOn           string
	allowUnavailable bool
	alpha            float64
	threshold        string
	costThreshold    string
	floor            time.Duration
	correction       string
	requireJudged    string
	failOnSuspect    bool
	history          string
}

func parseCompareFlags(args []string, stderr io.Writer) (*compareFlags, []string, error) {
	f := &compareFlags{}
	fs := flag.NewFlagSet("bench compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := defaultCompareFlags()
	fs.StringVar(&f.out, "out", "", "directory for compare.json, compare.md, compare.html and junit.xml (default NEW_RUN_DIR/compare)")
	fs.StringVar(&f.failOn, "fail-on", def.failOn, "categories that fail the gate: quality, latency, capacity, availability, drift, cost")
	fs.BoolVar(&f.allowUnavailable, "allow-unavailable", false, "cells that no longer reach the model (a dead server) do not fail the gate")
	fs.Float64Var(&f.alpha, "alpha", def.alpha, "significance level after correction, shared by the three latency metrics")
	fs.StringVar(&f.threshold, "latency-threshold", def.threshold, "smallest latency shift that counts, as a percentage of the base median")
	fs.StringVar(&f.costThreshold, "cost-threshold", def.costThreshold, "smallest rise of a group's mean cost of a cell that counts (gates with --fail-on cost)")
	fs.DurationVar(&f.floor, "latency-floor", def.floor, "smallest TTFT or e2e shift that counts")
	fs.StringVar(&f.correction, "correction", def.correction, "false-alarm control over many prompts: holm (family-wise) or bh (false discovery rate)")
	fs.StringVar(&f.requireJudged, "require-judged", "", "metrics that must be judged somewhere, else exit 3: latency (ttft_ms, e2e_ms, tokens_per_s), capacity (request_throughput, goodput, saturation), pass_rate, tool_use_success, tier")
	fs.BoolVar(&f.failOnSuspect, "fail-on-suspect", false, "latency regressions made on a busy machine (other work on half the cores, or rising by half a core) fail the gate (default: not judged, listed)")
	fs.StringVar(&f.history, "history", "", "directory of earlier runs: a latency change within the night-to-night noise of its green runs of the same setup is '~'")
	fs.Usage = func() {
		fmt.Fprint(stderr, compareUsage)
		printFlags(fs, fs.Output())
	}
	// Flags may come before or after the two directories.
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) != 2 {
		return nil, nil, fmt.Errorf("want BASE_RUN_DIR and NEW_RUN_DIR, got %d argument(s); see 'bench compare -h'", len(pos))
	}
	return f, pos, nil
}

// options turns the flags into compare.Options.
func (f *compareFlags) options() (compare.Options, error) {
	opt := compare.DefaultOptions()
	opt.Alpha = f.alpha
	opt.Correction = stats.Correction(f.correction)
	opt.FailOn = splitList(f.failOn)
	opt.RequireJudged, opt.FailOnSuspect, opt.History = splitList(f.requireJudged), f.failOnSuspect, f.history
	var errs []error
	if len(opt.FailOn) == 0 {
		errs = append(errs, errors.New("--fail-on: name at least one of quality, latency, capacity, availability, drift, cost"))
	}
	for _, c := range opt.FailOn {
		if !slices.Contains(compare.Categories, c) {
			errs = append(errs, fmt.Errorf("--fail-on: %q is not a category (%s)%s", c, strings.Join(compare.Categories, ", "), suggest.Hint(c, compare.Categories)))
		}
	}
	if f.allowUnavailable {
		opt.FailOn = slices.DeleteFunc(opt.FailOn, func(c string) bool { return c == compare.Availability })
	}
	errs = append(errs, f.thresholds(&opt)...)
	if f.floor < 0 {
		errs = append(errs, errors.New("--latency-floor: must be >= 0 (e.g. 5ms)"))
	}
	opt.LatencyFloorMS = float64(f.floor) / float64(time.Millisecond)
	if f.history != "" {
		if st, err := os.Stat(f.history); err != nil || !st.IsDir() {
			errs = append(errs, fmt.Errorf("--history %s: not a directory of runs", f.history))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return opt, err
	}
	if err := opt.Validate(); err != nil {
		return opt, fmt.Errorf("bad option: %w", err)
	}
	return opt, nil
}

// thresholds reads --latency-threshold and --cost-threshold into opt.
func (f *compareFlags) thresholds(opt *compare.Options) []error {
	var errs []error
	th, err := parsePercent(f.threshold)
	if err != nil {
		errs = append(errs, fmt.Errorf("--latency-threshold: %w", err))
	}
	opt.LatencyThreshold = th
	ct, err := parsePercent(f.costThreshold)
	if err != nil {
		errs = append(errs, fmt.Errorf("--cost-threshold: %w", err))
	}
	opt.CostThreshold = ct
	return errs
}

// parsePercent reads "10%" or "10" as 0.10.
func parsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q: want a percentage such as 10%%", s)
	}
	return v / 100, nil
}

// compareCmd is `bench compare BASE NEW`.
func compareCmd(args []string, stdout, stderr io.Writer) int {
	f, dirs, err := parseCompareFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitcode.OK
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench compare: %v\n", err)
		return exitcode.Usage
	}
	opt, err := f.options()
	if err != nil {
		fmt.Fprintf(stderr, "bench compare: %v\n", err)
		return exitcode.Usage
	}
	regressed, err := compare.Judge(dirs[0], dirs[1], f.out, opt, stdout)
	var outErr *compare.OutError
	switch {
	case errors.As(err, &outErr):
		fmt.Fprintf(stderr, "bench compare: %v\n", err)
		return exitcode.Usage
	case err != nil:
		fmt.Fprintf(stderr, "bench compare: %v\n", err)
		return exitcode.IO
	case regressed:
		return exitcode.Regression
	}
	return exitcode.OK
}

// defaultCompareFlags are bench compare's defaults, as bench run
// --baseline uses them.
func defaultCompareFlags() compareFlags {
	def := compare.DefaultOptions()
	return compareFlags{failOn: strings.Join(def.FailOn, ","), alpha: def.Alpha, threshold: "10%", costThreshold: "10%",
		floor: time.Duration(def.LatencyFloorMS * float64(time.Millisecond)), correction: string(def.Correction)}
}
