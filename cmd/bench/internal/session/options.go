package session

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"bench/config"
	"bench/prompts"
	"bench/report/compare"
)

// Options are one bench run's command line, read by cmd/bench: where the
// config is and what overrides it. Zero values leave the config alone.
type Options struct {
	// Config is the bench.yaml path; ConfigSet says it was given (--config),
	// which changes the hint for a missing file.
	Config    string
	ConfigSet bool
	// Providers, Models and Prompts keep those named (--providers,
	// --models, --prompts; --prompts may widen prompts.only).
	Providers, Models, Prompts []string
	// Suites replace prompts.suites (--suite): the built-in suites to run.
	Suites                   []string
	Concurrency, Repetitions int
	Timeout                  time.Duration
	// RunID names the run directory (--run-id); "" lets the clock choose.
	RunID string
	// OutDir is the parent of run directories (--out).
	OutDir string
	Quiet  bool
	DryRun bool
	// Resume continues the run RunID names with its own plan.
	Resume bool
	// AllowUnavailable: a provider none of whose cells reached a model
	// does not make the run exit 4, nor (with Baseline) fail the gate.
	AllowUnavailable bool
	// JUnit, when not "", also gets junit.xml (--junit).
	JUnit string
	// ShardIndex of ShardCount (1-based) is the part of the plan to run;
	// ShardCount 0 runs it all.
	ShardIndex, ShardCount int
	// Baseline, when not "", is the run directory the run is compared
	// with when it ends, as bench compare does with Gate.
	Baseline string
	Gate     compare.Options
	// Args are the arguments as given, for the command that resumes an
	// interrupted run; Prog is how bench was invoked ("bench", a path).
	Args []string
	Prog string
}

// apply puts the options over the loaded config and checks what they name.
func (o *Options) apply(cfg *config.Config) error {
	if o.Concurrency > 0 {
		cfg.Run.Concurrency = o.Concurrency
	}
	if o.Repetitions > 0 {
		cfg.Run.Repetitions = o.Repetitions
	}
	if o.Timeout > 0 {
		cfg.Run.Timeout = config.Duration(o.Timeout)
	}
	if o.RunID != "" {
		cfg.Run.ID, cfg.Run.IDChosen = o.RunID, true
	}
	if o.OutDir != "" {
		cfg.Run.OutDir = o.OutDir
	} else if !filepath.IsAbs(cfg.Run.OutDir) {
		cfg.Run.OutDir = cfg.Resolve(cfg.Run.OutDir)
	}
	errs := []error{o.keepProviders(cfg), o.keepModels(cfg), o.keepSuites(cfg)}
	errs = append(errs, o.keepPrompts(cfg))
	if n := cfg.Cells(); n > config.MaxCells {
		errs = append(errs, fmt.Errorf("the plan would have %d cells, more than the limit of %d", n, config.MaxCells))
	}
	return errors.Join(errs...)
}

func (o *Options) keepProviders(cfg *config.Config) error {
	if len(o.Providers) == 0 {
		return nil
	}
	var errs []error
	for _, n := range o.Providers {
		if !slices.ContainsFunc(cfg.Providers, func(p config.Provider) bool { return p.Name == n }) {
			errs = append(errs, fmt.Errorf("--providers: no provider named %q in %s", n, cfg.Path))
		}
	}
	judges := cfg.JudgeNames()
	var kept []config.Provider
	for _, p := range cfg.Providers {
		switch {
		case slices.Contains(o.Providers, p.Name):
			kept = append(kept, p)
		case slices.Contains(judges, p.Name):
			// Not swept, still the judge its llm_judge checks name.
			p.Models = nil
			kept = append(kept, p)
		}
	}
	cfg.Providers = kept
	return errors.Join(errs...)
}

func (o *Options) keepModels(cfg *config.Config) error {
	if len(o.Models) == 0 {
		return nil
	}
	found := map[string]bool{}
	judges := cfg.JudgeNames()
	var kept []config.Provider
	for _, p := range cfg.Providers {
		p.Models = slices.DeleteFunc(slices.Clone(p.Models), func(m string) bool { return !slices.Contains(o.Models, m) })
		for _, m := range p.Models {
			found[m] = true
		}
		if len(p.Models) > 0 || slices.Contains(judges, p.Name) {
			kept = append(kept, p)
		}
	}
	cfg.Providers = kept
	var errs []error
	for _, m := range o.Models {
		if !found[m] {
			errs = append(errs, fmt.Errorf("--models: %q is not in any provider's models in %s", m, cfg.Path))
		}
	}
	return errors.Join(errs...)
}

// keepSuites runs the suites --suite names instead of prompts.suites,
// then loads the prompt set again (prompts.only still applies).
func (o *Options) keepSuites(cfg *config.Config) error {
	if len(o.Suites) == 0 {
		return nil
	}
	for _, n := range o.Suites {
		if !slices.Contains(prompts.Suites, n) {
			return fmt.Errorf("--suite: unknown suite %q; one of %s", n, strings.Join(prompts.Suites, ", "))
		}
	}
	cfg.Prompts.Suites = o.Suites
	set, err := config.LoadPromptSet(cfg)
	if err != nil {
		return fmt.Errorf("--suite: %w", err)
	}
	cfg.PromptSet = set
	return nil
}

func (o *Options) keepPrompts(cfg *config.Config) error {
	if len(o.Prompts) == 0 {
		return nil
	}
	// Re-filter from the full set so --prompts can widen prompts.only.
	all, err := fullPromptSet(cfg)
	if err != nil {
		return err
	}
	kept, err := config.Filter(all, o.Prompts)
	if err != nil {
		return fmt.Errorf("--prompts: %w", err)
	}
	cfg.Prompts.Only, cfg.PromptSet = o.Prompts, kept
	return nil
}

func fullPromptSet(cfg *config.Config) ([]prompts.Prompt, error) {
	c := *cfg
	c.Prompts.Only = nil
	return config.LoadPromptSet(&c)
}
