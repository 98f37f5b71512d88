package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"bench/config"
	"bench/internal/suggest"
	"bench/prompts"
)

// runFlags are the command-line overrides of bench.yaml.
type runFlags struct {
	config      string
	models      string
	prompts     string
	providers   string
	concurrency int
	repetitions int
	timeout     time.Duration
	runID       string
	out         string
	quiet       bool
	dryRun      bool
	resume      bool
	// allowUnavailable: a provider none of whose cells reached a model
	// does not make the run exit 4, nor (with --baseline) fail the gate.
	allowUnavailable bool
	junit            string
	// configSet says --config was given (the hint for a missing file
	// differs), args are the arguments as given (for the --resume command).
	configSet bool
	args      []string
	// shard is --shard as given; shardI/shardN what it (or the Indexed
	// Job's environment) resolved to, shardN 0 when not sharded.
	shard          string
	shardI, shardN int
	baseline       string
	// failOn is bench compare's, for --baseline.
	failOn string
}

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

// parseRunFlags reads bench run's flags. On a bad or unknown flag it has
// printed one line and returns ok false with the exit code; with -h it has
// printed the usage on stdout.
func parseRunFlags(args []string, stdout, stderr io.Writer) (f *runFlags, code int, ok bool) {
	f = &runFlags{args: args}
	fs := flag.NewFlagSet("bench run", flag.ContinueOnError)
	fs.StringVar(&f.config, "config", "bench.yaml", "config `file`")
	fs.StringVar(&f.models, "models", "", "comma-separated models to keep (of those in the config)")
	fs.StringVar(&f.prompts, "prompts", "", "comma-separated prompt ids to keep (overrides prompts.only)")
	fs.StringVar(&f.providers, "providers", "", "comma-separated provider names to keep")
	fs.IntVar(&f.concurrency, "concurrency", 0, "cells in flight across all providers (overrides run.concurrency)")
	fs.IntVar(&f.repetitions, "repetitions", 0, "repetitions of each cell (overrides run.repetitions)")
	fs.DurationVar(&f.timeout, "timeout", 0, "per-cell timeout, e.g. 90s (overrides run.timeout)")
	fs.StringVar(&f.runID, "run-id", "", "run id, the run directory's name (default: UTC timestamp)")
	fs.StringVar(&f.out, "out", "", "parent directory of run directories (overrides run.out_dir)")
	fs.BoolVar(&f.quiet, "quiet", false, "print nothing but errors and warnings (no progress, no table)")
	fs.BoolVar(&f.resume, "resume", false, "continue the run in the run directory with its own plan (its config.json): run the cells it has no final record of")
	fs.BoolVar(&f.allowUnavailable, "allow-unavailable", false, "exit 0 even when every cell of some provider was unavailable (exit 4 otherwise); with --baseline, cells that no longer reach the model do not fail the gate")
	fs.StringVar(&f.shard, "shard", "", "run only shard i of n (1-based), e.g. 2/4: whole suites dealt round-robin; "+
		"without it, JOB_COMPLETION_INDEX (0-based) and "+envShardCount+" shard the run")
	fs.BoolVar(&f.dryRun, "dry-run", false, "check the config and print the plan; send nothing, write nothing")
	fs.StringVar(&f.junit, "junit", "", "also write the JUnit XML report (junit.xml is always in the run directory) to this `file`")
	fs.StringVar(&f.baseline, "baseline", "", "run directory to compare the run against when it ends (as bench compare; exit 3 on a regression)")
	fs.StringVar(&f.failOn, "fail-on", "", "with --baseline: categories that fail the gate (default quality,latency,availability)")
	fs.Usage = func() {
		fmt.Fprint(stdout, runUsage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stderr); !ok {
		return nil, code, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bench run: unexpected argument %q (flags go before, e.g. bench run --config bench.yaml); see 'bench run --help'\n", fs.Arg(0))
		return nil, exitUsage, false
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	f.configSet = set["config"]
	var errs []error
	if set["concurrency"] && f.concurrency < 1 {
		errs = append(errs, errors.New("--concurrency: must be at least 1"))
	}
	if set["repetitions"] && f.repetitions < 1 {
		errs = append(errs, errors.New("--repetitions: must be at least 1"))
	}
	if set["timeout"] && f.timeout <= 0 {
		errs = append(errs, errors.New("--timeout: must be more than 0 (e.g. 90s)"))
	}
	if set["run-id"] && (f.runID == "" || strings.ContainsAny(f.runID, `/\`) || f.runID == "." || f.runID == "..") {
		errs = append(errs, errors.New("--run-id: must be a plain directory name"))
	}
	if set["junit"] && f.junit == "" {
		errs = append(errs, errors.New("--junit: give a file name"))
	}
	var err error
	if f.shardI, f.shardN, err = shardSpec(f.shard, set["shard"], getenv); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		for _, err := range errs {
			fmt.Fprintf(stderr, "bench run: %v\n", err)
		}
		return nil, exitUsage, false
	}
	return f, exitOK, true
}

// parseFlags parses args into fs. A bad flag costs one line on stderr
// naming it, with the flag probably meant and a pointer to --help (the
// flag package would print the whole usage, and the caller the error
// again); -h or --help prints fs.Usage and ends the command with exit 0.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	usage := fs.Usage
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	switch {
	case err == nil:
		return exitOK, true
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return exitOK, false
	}
	fmt.Fprintf(stderr, "%s: %s; see '%s --help'\n", fs.Name(), flagProblem(fs, err), fs.Name())
	return exitUsage, false
}

// flagProblem words a flag package error, with "did you mean" for an
// unknown flag.
func flagProblem(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return "--" + strings.TrimLeft(name, "-") + " needs a value"
	}
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		// invalid value "many" for flag -concurrency: parse error
		if value, rest, ok := strings.Cut(rest, " for flag "); ok {
			name, why, _ := strings.Cut(rest, ": ")
			return "--" + strings.TrimLeft(name, "-") + ": invalid value " + value + " (" + why + ")"
		}
	}
	name, unknown := strings.CutPrefix(msg, "flag provided but not defined: ")
	if !unknown {
		return msg
	}
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(fl *flag.Flag) { names = append(names, fl.Name) })
	s := "unknown flag --" + name
	if c := suggest.Closest(name, names); c != "" {
		s += " (did you mean --" + c + "?)"
	}
	return s
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// apply puts the flags over the loaded config and checks what they name.
func (f *runFlags) apply(cfg *config.Config) error {
	if f.concurrency > 0 {
		cfg.Run.Concurrency = f.concurrency
	}
	if f.repetitions > 0 {
		cfg.Run.Repetitions = f.repetitions
	}
	if f.timeout > 0 {
		cfg.Run.Timeout = config.Duration(f.timeout)
	}
	if f.runID != "" {
		cfg.Run.ID, cfg.Run.IDChosen = f.runID, true
	}
	if f.out != "" {
		cfg.Run.OutDir = f.out
	} else if !filepath.IsAbs(cfg.Run.OutDir) {
		cfg.Run.OutDir = cfg.Resolve(cfg.Run.OutDir)
	}
	errs := []error{f.keepProviders(cfg), f.keepModels(cfg), f.keepPrompts(cfg)}
	if n := cfg.Cells(); n > config.MaxCells {
		errs = append(errs, fmt.Errorf("the plan would have %d cells, more than the limit of %d", n, config.MaxCells))
	}
	return errors.Join(errs...)
}

func (f *runFlags) keepProviders(cfg *config.Config) error {
	names := splitList(f.providers)
	if len(names) == 0 {
		return nil
	}
	var errs []error
	for _, n := range names {
		if !slices.ContainsFunc(cfg.Providers, func(p config.Provider) bool { return p.Name == n }) {
			errs = append(errs, fmt.Errorf("--providers: no provider named %q in %s", n, cfg.Path))
		}
	}
	cfg.Providers = slices.DeleteFunc(cfg.Providers, func(p config.Provider) bool { return !slices.Contains(names, p.Name) })
	return errors.Join(errs...)
}

func (f *runFlags) keepModels(cfg *config.Config) error {
	models := splitList(f.models)
	if len(models) == 0 {
		return nil
	}
	found := map[string]bool{}
	var kept []config.Provider
	for _, p := range cfg.Providers {
		p.Models = slices.DeleteFunc(slices.Clone(p.Models), func(m string) bool { return !slices.Contains(models, m) })
		for _, m := range p.Models {
			found[m] = true
		}
		if len(p.Models) > 0 {
			kept = append(kept, p)
		}
	}
	cfg.Providers = kept
	var errs []error
	for _, m := range models {
		if !found[m] {
			errs = append(errs, fmt.Errorf("--models: %q is not in any provider's models in %s", m, cfg.Path))
		}
	}
	return errors.Join(errs...)
}

func (f *runFlags) keepPrompts(cfg *config.Config) error {
	ids := splitList(f.prompts)
	if len(ids) == 0 {
		return nil
	}
	// Re-filter from the full set so --prompts can widen prompts.only.
	all, err := fullPromptSet(cfg)
	if err != nil {
		return err
	}
	kept, err := config.Filter(all, ids)
	if err != nil {
		return fmt.Errorf("--prompts: %w", err)
	}
	cfg.Prompts.Only, cfg.PromptSet = ids, kept
	return nil
}

func fullPromptSet(cfg *config.Config) ([]prompts.Prompt, error) {
	c := *cfg
	c.Prompts.Only = nil
	return config.LoadPromptSet(&c)
}
