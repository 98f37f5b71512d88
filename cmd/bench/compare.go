package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"bench/compare"
	"bench/internal/suggest"
	"bench/rundir"
	"bench/stats"
)

const compareUsage = `usage: bench compare [flags] BASE_RUN_DIR NEW_RUN_DIR

Judges the new run against the base run, the nightly regression gate:
every cell key (match, drift, regression, improvement; changed, missing,
new, unavailable), each (provider, model, thinking level) group's pass rate
and tool-use rate (Fisher exact test), tool-use tier, cells that never
reached the model, and TTFT, e2e and tokens/s per group and per prompt
(Mann-Whitney U, Hodges-Lehmann shift, Holm's correction). Prints the
tables, regressions first, and writes compare.json, compare.md,
compare.html and junit.xml to --out. Only --out is written; the run directories are read.

Exit codes: 0 no regression of the --fail-on categories, 3 regression
found, 1 a run directory could not be read or the outputs written,
2 bad flags or arguments.

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
	floor            time.Duration
	correction       string
}

func parseCompareFlags(args []string, stderr io.Writer) (*compareFlags, []string, error) {
	f := &compareFlags{}
	fs := flag.NewFlagSet("bench compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := compare.DefaultOptions()
	fs.StringVar(&f.out, "out", "", "directory for compare.json, compare.md, compare.html and junit.xml (default NEW_RUN_DIR/compare)")
	fs.StringVar(&f.failOn, "fail-on", strings.Join(def.FailOn, ","), "categories that fail the gate: quality, latency, availability, drift")
	fs.BoolVar(&f.allowUnavailable, "allow-unavailable", false, "cells that no longer reach the model (a dead server) do not fail the gate")
	fs.Float64Var(&f.alpha, "alpha", def.Alpha, "significance level after correction, shared by the three latency metrics")
	fs.StringVar(&f.threshold, "latency-threshold", "10%", "smallest latency shift that counts, as a percentage of the base median")
	fs.DurationVar(&f.floor, "latency-floor", time.Duration(def.LatencyFloorMS*float64(time.Millisecond)), "smallest TTFT or e2e shift that counts")
	fs.StringVar(&f.correction, "correction", string(def.Correction), "false-alarm control over many prompts: holm (family-wise) or bh (false discovery rate)")
	fs.Usage = func() {
		fmt.Fprint(stderr, compareUsage)
		fs.PrintDefaults()
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
	var errs []error
	if len(opt.FailOn) == 0 {
		errs = append(errs, errors.New("--fail-on: name at least one of quality, latency, availability, drift"))
	}
	for _, c := range opt.FailOn {
		if !slices.Contains(compare.Categories, c) {
			errs = append(errs, fmt.Errorf("--fail-on: %q is not a category (%s)%s", c, strings.Join(compare.Categories, ", "), suggest.Hint(c, compare.Categories)))
		}
	}
	if f.allowUnavailable {
		opt.FailOn = slices.DeleteFunc(opt.FailOn, func(c string) bool { return c == compare.Availability })
	}
	th, err := parsePercent(f.threshold)
	if err != nil {
		errs = append(errs, fmt.Errorf("--latency-threshold: %w", err))
	}
	opt.LatencyThreshold = th
	if f.floor < 0 {
		errs = append(errs, errors.New("--latency-floor: must be >= 0 (e.g. 5ms)"))
	}
	opt.LatencyFloorMS = float64(f.floor) / float64(time.Millisecond)
	if err := errors.Join(errs...); err != nil {
		return opt, err
	}
	if err := opt.Validate(); err != nil {
		return opt, fmt.Errorf("bad option: %w", err)
	}
	return opt, nil
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
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench compare: %v\n", err)
		return exitUsage
	}
	opt, err := f.options()
	if err != nil {
		fmt.Fprintf(stderr, "bench compare: %v\n", err)
		return exitUsage
	}
	return runCompare(dirs[0], dirs[1], f.out, opt, stdout, stderr)
}

// runCompare compares two run directories, prints the tables, writes the
// outputs and returns the exit code: bench compare's and bench run
// --baseline's.
func runCompare(baseDir, newDir, out string, opt compare.Options, stdout, stderr io.Writer) int {
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(compareMemoryLimit))
	}
	res, err := compare.Compare(baseDir, newDir, opt)
	if err != nil {
		fmt.Fprintf(stderr, "bench compare: %v\n", err)
		return exitIO
	}
	defer res.Close()
	if out == "" {
		out = filepath.Join(newDir, compare.DirName)
	}
	if err := compare.WriteText(stdout, res); err != nil {
		fmt.Fprintf(stderr, "bench compare: %v\n", err)
		return exitIO
	}
	if err := compare.WriteFiles(out, res); err != nil {
		fmt.Fprintf(stderr, "bench compare: %v\n", err)
		return exitIO
	}
	fmt.Fprintf(stdout, "bench compare: %s, %s and %s in %s\n", compare.JSONFile, compare.MDFile, compare.JUnitFile, out)
	fmt.Fprintf(stdout, "  page:  %s (open it in a browser)\n", filepath.Join(out, compare.HTMLFile))
	if res.Regressed() {
		return exitRegression
	}
	return exitOK
}

// compareMemoryLimit is the soft heap limit of a comparison (unless
// GOMEMLIMIT is set), as reportMemoryLimit is bench report's. Comparing
// two 100,000-line runs holds about 130 MB at its peak (the second pass's
// snapshots and decoding, with answers that changed held on a tape, not in
// the heap); with the default GOGC the garbage around that took the peak
// RSS to 280 MiB when every answer changed, held to this limit 185 MiB,
// at much the same speed.
const compareMemoryLimit = 180 << 20

// baseline is bench run --baseline: the run to compare against at the
// end and how.
type baseline struct {
	dir string
	opt compare.Options
}

// baselineGate checks --baseline and its options before the sweep starts,
// rather than after an hour of it: nil when there is no --baseline; false
// (after saying why) when the flags are unusable.
func baselineGate(f *runFlags, stderr io.Writer) (*baseline, bool) {
	if f.baseline == "" {
		if f.failOn != "" {
			fmt.Fprintln(stderr, "bench run: --fail-on needs --baseline")
			return nil, false
		}
		return nil, true
	}
	if err := rundir.Check(f.baseline); err != nil {
		fmt.Fprintf(stderr, "bench run: --baseline: %v\n", err)
		return nil, false
	}
	cf := &compareFlags{failOn: f.failOn, allowUnavailable: f.allowUnavailable, threshold: "10%", correction: string(stats.Holm)}
	def := compare.DefaultOptions()
	if cf.failOn == "" {
		cf.failOn = strings.Join(def.FailOn, ",")
	}
	cf.alpha, cf.floor = def.Alpha, time.Duration(def.LatencyFloorMS*float64(time.Millisecond))
	opt, err := cf.options()
	if err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return nil, false
	}
	return &baseline{dir: f.baseline, opt: opt}, true
}
