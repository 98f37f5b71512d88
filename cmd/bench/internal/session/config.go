package session

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"bench/config"
	"bench/internal/exitcode"
	"bench/internal/record/rundir"
	"bench/internal/record/secrets"
	"bench/prompts"
	"bench/providers"
)

// setup loads the config with the options merged in, once, and builds the
// providers. A
// nil config means the command ends with the returned code.
func setup(o *Options, stderr io.Writer) (*config.Config, *built, int) {
	cfg, err := config.LoadWith(o.Config, providers.Kinds, &o.Overrides)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintln(stderr, noConfig(o))
		return nil, nil, exitcode.Usage
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench run: bad config:\n%v\n", err)
		return nil, nil, exitcode.Usage
	}
	provs, err := newProviders(cfg, func(p *config.Provider) string { return fmt.Sprintf("%s:%d", cfg.Path, p.Line) })
	if err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return nil, nil, exitcode.Usage
	}
	return cfg, provs, exitcode.OK
}

// built is a config's providers, by entry name, and the run's secrets
// they scrub with: spec's names go to run.json, scope is what the
// checks' output is cleaned with (providers.NewAll).
type built struct {
	provs map[string]providers.Provider
	spec  secrets.RunSpec
	scope secrets.Scope
}

// newProviders builds each provider entry's provider with the run's
// secrets; where names an entry in an error (its file and line).
func newProviders(cfg *config.Config, where func(p *config.Provider) string) (*built, error) {
	provs, spec, scope, err := providers.NewAll(cfg, where)
	if err != nil {
		return nil, err
	}
	return &built{provs: provs, spec: spec, scope: scope}, nil
}

// resumeConfig replaces the config built from bench.yaml and the options
// by the run's own, read back from its config.json: a resumed run runs the
// plan it was started with, whatever bench.yaml says today. An option that
// would change that plan (or how its cells are measured) is refused; only
// --concurrency, --max-cost, --quiet and --allow-unavailable may differ. bench.yaml is
// still read, to find the run directory and for the values config.json
// never holds (a CLI's env).
func resumeConfig(cur *config.Config, o *Options, stderr io.Writer) (*config.Config, *built, int) {
	if !cur.Run.IDChosen {
		fmt.Fprintln(stderr, "bench run: --resume needs the run to continue: give its --run-id")
		return nil, nil, exitcode.Usage
	}
	path := rundir.Path(cur.RunDir(), rundir.ConfigFile)
	saved, err := config.LoadResolved(path, providers.Kinds)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "bench run: %s has no %s: nothing bench can resume there\n", cur.RunDir(), rundir.ConfigFile)
		return nil, nil, exitcode.Usage
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench run: the run's saved config:\n%v\n", err)
		return nil, nil, exitcode.Usage
	}
	if err := errors.Join(o.samePlan(saved), saved.Restore(cur)); err != nil {
		fmt.Fprintf(stderr, "bench run: --resume:\n%v\n", err)
		return nil, nil, exitcode.Usage
	}
	saved.Run.OutDir, saved.Run.ID, saved.Run.IDChosen = cur.Run.OutDir, cur.Run.ID, true
	if o.Concurrency != nil {
		saved.Run.Concurrency = *o.Concurrency
	}
	if o.MaxCost != nil {
		// A new budget for the whole run: what its records cost counts.
		saved.Run.MaxCostUSD = o.MaxCost
		var errs []error
		for _, u := range saved.Unpriced() {
			errs = append(errs, fmt.Errorf("%s: providers[%d].models[%d]: %s", path, u.Entry, u.Model, u.Msg))
		}
		if len(errs) > 0 {
			fmt.Fprintf(stderr, "bench run: --resume --max-cost:\n%v\n", errors.Join(errs...))
			return nil, nil, exitcode.Usage
		}
	}
	provs, err := newProviders(saved, func(*config.Provider) string { return path })
	if err != nil {
		fmt.Fprintf(stderr, "bench run: %v\n", err)
		return nil, nil, exitcode.Usage
	}
	return saved, provs, exitcode.OK
}

// samePlan refuses the options that would give a resumed run another plan
// than the one it was started with, each with what the run has. An option
// equal to the run's setting (the same command line again) is fine.
func (o *Options) samePlan(saved *config.Config) error {
	var errs []error
	refuse := func(flag, given, has string) {
		errs = append(errs, fmt.Errorf("%s %s: the run was started with %s; a resumed run keeps its plan (start a new run for another)", flag, given, has))
	}
	if o.Repetitions != nil && *o.Repetitions != saved.Run.Repetitions {
		refuse("--repetitions", fmt.Sprint(*o.Repetitions), fmt.Sprint(saved.Run.Repetitions))
	}
	if o.Timeout != nil && *o.Timeout != time.Duration(saved.Run.Timeout) {
		refuse("--timeout", o.Timeout.String(), time.Duration(saved.Run.Timeout).String())
	}
	var names, models, ids []string
	for _, p := range saved.Providers {
		names = append(names, p.Name)
		models = append(models, p.Models...)
	}
	for _, p := range saved.PromptSet {
		ids = append(ids, p.ID)
	}
	suites := saved.Prompts.Suites
	if len(suites) == 0 && len(saved.Prompts.Files) == 0 {
		suites = []string{prompts.SuiteDefault}
	}
	for _, c := range []struct {
		flag        string
		given, have []string
	}{{"--providers", o.Providers, names}, {"--models", o.Models, models}, {"--prompts", o.Prompts, ids}, {"--suite", o.Suites, suites}} {
		if len(c.given) > 0 && !slices.Equal(uniq(c.given), uniq(c.have)) {
			had := strings.Join(uniq(c.have), ",")
			if had == "" {
				had = "none"
			}
			refuse(c.flag, strings.Join(c.given, ","), had)
		}
	}
	return errors.Join(errs...)
}

func uniq(s []string) []string { return slices.Compact(slices.Sorted(slices.Values(s))) }
