package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"bench/cmd/bench/internal/session"
	"bench/internal/exitcode"
	"bench/prompts"
)

const runUsage = `usage: bench run [--config bench.yaml] [flags]

Sweeps models × prompts × providers as the config says and writes a run
directory: config.json, inventory.json, results.jsonl, summary.json,
summary.md, tiers.json, report.html, junit.xml, run.json and resource
snapshots. Ctrl-C once stops new cells and keeps what ran; twice aborts the
cells in flight; --resume finishes the run later.

No bench.yaml yet? 'bench init' writes one. No model server? scripts/demo.sh
runs the default suite against a scripted model on a real Ollama.

Flags (each overrides the config):
`

// runCmd is `bench run`: the flags, then the session does the rest.
func runCmd(args []string, stdout, stderr io.Writer) int {
	o, code, ok := parseRunFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	return session.Run(*o, stdout, stderr)
}

// runFlags are bench run's flags as given, before they are checked.
type runFlags struct {
	models, prompts, providers, suites string
	shard, failOn, history, detect     string
	concurrency, repetitions           int
	timeout                            time.Duration
	maxCost                            float64
}

// defineRunFlags binds bench run's flags to o and f.
func defineRunFlags(fs *flag.FlagSet, o *session.Options, f *runFlags) {
	fs.StringVar(&o.Config, "config", "bench.yaml", "config `file`")
	fs.StringVar(&f.models, "models", "", "comma-separated models to keep (of those in the config)")
	fs.StringVar(&f.prompts, "prompts", "", "comma-separated prompt ids to keep (overrides prompts.only)")
	fs.StringVar(&f.suites, "suite", "", "comma-separated built-in suites to run, of "+strings.Join(prompts.Suites, ", ")+" (overrides prompts.suites; prompts.files still load)")
	fs.StringVar(&f.providers, "providers", "", "comma-separated provider names to keep")
	fs.IntVar(&f.concurrency, "concurrency", 0, "cells in flight across all providers (overrides run.concurrency)")
	fs.IntVar(&f.repetitions, "repetitions", 0, "repetitions of each cell (overrides run.repetitions)")
	fs.DurationVar(&f.timeout, "timeout", 0, "per-cell timeout, e.g. 90s (overrides run.timeout)")
	fs.Float64Var(&f.maxCost, "max-cost", 0, "the run's budget in `USD`: no cell starts that would take the spend past it; with --resume, the budget for the whole run from now (overrides run.max_cost_usd)")
	fs.BoolVar(&o.AllowOverBudget, "allow-over-budget", false, "start even when the projected cost passes the budget (the sweep still stops at it, exit 6)")
	fs.StringVar(&o.RunID, "run-id", "", "run id, the run directory's name (default: UTC timestamp)")
	fs.StringVar(&o.OutDir, "out", "", "parent directory of run directories (overrides run.out_dir)")
	fs.BoolVar(&o.Quiet, "quiet", false, "print nothing but errors and warnings (no progress, no table)")
	fs.BoolVar(&o.Resume, "resume", false, "continue the run in the run directory with its own plan (its config.json): run the cells it has no final record of")
	fs.BoolVar(&o.AllowUnavailable, "allow-unavailable", false, "exit 0 even when every cell of some provider was unavailable (exit 4 otherwise); with --baseline, cells that no longer reach the model do not fail the gate")
	fs.StringVar(&f.shard, "shard", "", "run only shard i of n (1-based), e.g. 2/4: whole suites dealt round-robin; "+
		"without it, JOB_COMPLETION_INDEX (0-based) and "+envShardCount+" shard the run")
	fs.BoolVar(&o.DryRun, "dry-run", false, "check the config and print the plan; send nothing, write nothing")
	fs.StringVar(&o.JUnit, "junit", "", "also write the JUnit XML report (junit.xml is always in the run directory) to this `file`")
	fs.StringVar(&o.Baseline, "baseline", "", "run directory to compare the run against when it ends (as bench compare; exit 3 on a regression)")
	fs.StringVar(&f.failOn, "fail-on", "", "with --baseline: categories that fail the gate (default quality,latency,capacity,availability)")
	fs.StringVar(&f.detect, "detect", "", "with --dry-run: say how many repetitions bench compare needs to detect a latency change of this size, e.g. 20% (the spread from --baseline, else assumed)")
	fs.StringVar(&f.history, "history", "", "with --baseline: directory of earlier runs whose night-to-night noise a latency change must exceed (as bench compare --history)")
}

// parseRunFlags reads bench run's flags into the session's options. On a
// bad or unknown flag it has printed one line and returns ok false with
// the exit code; with -h it has printed the usage on stdout.
func parseRunFlags(args []string, stdout, stderr io.Writer) (o *session.Options, code int, ok bool) {
	o, f := &session.Options{Args: args, Prog: progName}, &runFlags{}
	fs := flag.NewFlagSet("bench run", flag.ContinueOnError)
	defineRunFlags(fs, o, f)
	fs.Usage = func() {
		fmt.Fprint(stdout, runUsage)
		fs.SetOutput(stdout)
		printFlags(fs, fs.Output())
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return nil, code, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bench run: unexpected argument %q (flags go before, e.g. bench run --config bench.yaml); see 'bench run --help'\n", fs.Arg(0))
		return nil, exitcode.Usage, false
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if errs := checkRunFlags(o, f, set); len(errs) > 0 {
		for _, err := range errs {
			fmt.Fprintf(stderr, "bench run: %v\n", err)
		}
		return nil, exitcode.Usage, false
	}
	return o, exitcode.OK, true
}

// checkRunFlags checks the flags that were set and completes o from f.
func checkRunFlags(o *session.Options, f *runFlags, set map[string]bool) []error {
	o.ConfigSet = set["config"]
	o.Models, o.Prompts, o.Providers, o.Suites = splitList(f.models), splitList(f.prompts), splitList(f.providers), splitList(f.suites)
	// The values are checked with the file's, by config.LoadWith, each
	// error naming its flag and the key it sets.
	if set["concurrency"] {
		o.Concurrency = &f.concurrency
	}
	if set["repetitions"] {
		o.Repetitions = &f.repetitions
	}
	if set["timeout"] {
		o.Timeout = &f.timeout
	}
	if set["max-cost"] {
		o.MaxCost = &f.maxCost
	}
	var errs []error
	if set["run-id"] && o.RunID == "" {
		errs = append(errs, errors.New("--run-id: run.id: give the run's name"))
	}
	if set["junit"] && o.JUnit == "" {
		errs = append(errs, errors.New("--junit: give a file name"))
	}
	var err error
	if f.detect != "" {
		if o.Detect, err = parsePercent(f.detect); err != nil || o.Detect == 0 {
			errs = append(errs, fmt.Errorf("--detect %q: want a percentage such as 20%%", f.detect))
		} else if !o.DryRun {
			errs = append(errs, errors.New("--detect needs --dry-run: it plans a run, and sends nothing"))
		}
	}
	if o.ShardIndex, o.ShardCount, err = shardSpec(f.shard, set["shard"], getenv); err != nil {
		errs = append(errs, err)
	}
	return append(errs, baselineGate(o, f.failOn, f.history)...)
}

// baselineGate checks --baseline's options before the sweep starts,
// rather than after an hour of it: the comparison bench compare would make
// with its defaults and --fail-on.
func baselineGate(o *session.Options, failOn, history string) []error {
	if o.Baseline == "" {
		var errs []error
		if failOn != "" {
			errs = append(errs, errors.New("--fail-on needs --baseline"))
		}
		if history != "" {
			errs = append(errs, errors.New("--history needs --baseline"))
		}
		return errs
	}
	def := defaultCompareFlags()
	cf := &def
	if failOn != "" {
		cf.failOn = failOn
	}
	cf.history = history
	cf.allowUnavailable = o.AllowUnavailable
	opt, err := cf.options()
	if err != nil {
		return []error{err}
	}
	o.Gate = opt
	return nil
}
