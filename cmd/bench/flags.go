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
	// does not make the run exit 4.
	allowUnavailable bool
}

const runUsage = `usage: bench run [--config bench.yaml] [flags]

Sweeps models × prompts × providers as the config says and writes a run
directory: config.json, inventory.json, results.jsonl, summary.json,
summary.md, tiers.json, run.json and resource snapshots. Ctrl-C once stops
new cells and keeps what ran; twice aborts the cells in flight.

Flags (each overrides the config):
`

func parseRunFlags(args []string, stderr io.Writer) (*runFlags, error) {
	f := &runFlags{}
	fs := flag.NewFlagSet("bench run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.config, "config", "bench.yaml", "config file")
	fs.StringVar(&f.models, "models", "", "comma-separated models to keep (of those in the config)")
	fs.StringVar(&f.prompts, "prompts", "", "comma-separated prompt ids to keep (overrides prompts.only)")
	fs.StringVar(&f.providers, "providers", "", "comma-separated provider names to keep")
	fs.IntVar(&f.concurrency, "concurrency", 0, "cells in flight across all providers (overrides run.concurrency)")
	fs.IntVar(&f.repetitions, "repetitions", 0, "repetitions of each cell (overrides run.repetitions)")
	fs.DurationVar(&f.timeout, "timeout", 0, "per-cell timeout, e.g. 90s (overrides run.timeout)")
	fs.StringVar(&f.runID, "run-id", "", "run id, the run directory's name (default: UTC timestamp)")
	fs.StringVar(&f.out, "out", "", "parent directory of run directories (overrides run.out_dir)")
	fs.BoolVar(&f.quiet, "quiet", false, "no per-cell progress")
	fs.BoolVar(&f.resume, "resume", false, "continue the run in the run directory with its own plan (its config.json): run the cells it has no final record of")
	fs.BoolVar(&f.allowUnavailable, "allow-unavailable", false, "exit 0 even when every cell of some provider was unavailable (exit 4 otherwise)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "check the config and print the plan; send nothing, write nothing")
	fs.Usage = func() {
		fmt.Fprint(stderr, runUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (flags go before, e.g. bench run --config bench.yaml)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
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
	return f, errors.Join(errs...)
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
