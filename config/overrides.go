package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"bench/internal/yamlerr"
)

// Overrides are the values a command line gives over bench.yaml's (bench
// run's flags). LoadWith merges them into the file's values before anything
// is validated and before the prompt set is loaded, so the config is built
// once, the prompt files are read once, and a bad flag value is reported in
// the same round as the file's problems, naming the key it stands for
// ("--concurrency 0: run.concurrency: must be at least 1"). The zero value
// changes nothing.
type Overrides struct {
	Concurrency, Repetitions *int           // run.concurrency, run.repetitions
	Timeout                  *time.Duration // run.timeout
	MaxCost                  *float64       // run.max_cost_usd
	RunID                    string         // run.id
	// OutDir replaces run.out_dir, relative to the working directory; without
	// it, run.out_dir is resolved against the config file's directory.
	OutDir string
	// Suites replace prompts.suites (prompts.files still load); Prompts
	// replace prompts.only, so they may widen it.
	Suites, Prompts []string
	// AllPrompts ignores prompts.only: the whole set the files and suites
	// give (bench rescore judges whatever the run recorded).
	AllPrompts bool
	// Providers and Models keep the entries and models named, after the
	// prompt set is loaded (an entry its llm_judge checks name stays, as
	// the judge, with no models to sweep).
	Providers, Models []string
}

// flagOf is the command-line flag standing for each key Overrides sets.
var flagOf = map[string]string{
	"run.concurrency":  "--concurrency",
	"run.repetitions":  "--repetitions",
	"run.timeout":      "--timeout",
	"run.max_cost_usd": "--max-cost",
	"run.id":           "--run-id",
	"prompts.suites":   "--suite",
	"prompts.only":     "--prompts",
}

// LoadWith is Load with the command line's overrides merged in before the
// config is validated.
func LoadWith(path string, kinds Kinds, over *Overrides) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return parseBytes(path, data, kinds, over)
}

// apply puts o over the decoded file and says, for each key it set, the
// flag and value that set it (what an error about that key names instead
// of a line of the file).
func (o *Overrides) apply(c *Config) map[string]string {
	given := map[string]string{}
	set := func(key, value string) { given[key] = flagOf[key] + " " + value }
	if o.Concurrency != nil {
		c.Run.Concurrency = *o.Concurrency
		set("run.concurrency", fmt.Sprint(*o.Concurrency))
	}
	if o.Repetitions != nil {
		c.Run.Repetitions = *o.Repetitions
		set("run.repetitions", fmt.Sprint(*o.Repetitions))
	}
	if o.Timeout != nil {
		c.Run.Timeout = Duration(*o.Timeout)
		set("run.timeout", o.Timeout.String())
	}
	if o.MaxCost != nil {
		c.Run.MaxCostUSD = o.MaxCost
		set("run.max_cost_usd", fmt.Sprint(*o.MaxCost))
	}
	if o.RunID != "" {
		c.Run.ID = o.RunID
		set("run.id", yamlerr.Quoted(o.RunID))
	}
	if o.OutDir != "" {
		c.Run.OutDir = o.OutDir
	} else if !filepath.IsAbs(c.Run.OutDir) {
		c.Run.OutDir = c.Resolve(c.Run.OutDir)
	}
	if len(o.Suites) > 0 {
		c.Prompts.Suites = o.Suites
		set("prompts.suites", strings.Join(o.Suites, ","))
	}
	if o.AllPrompts {
		c.Prompts.Only = nil
	}
	if len(o.Prompts) > 0 {
		c.Prompts.Only = o.Prompts
		set("prompts.only", strings.Join(o.Prompts, ","))
	}
	return given
}

// index is a field's [n] suffixes, which a flag's key does not have.
var index = regexp.MustCompile(`\[\d+\]`)

// flagError is the error about field when a flag set it: the flag and
// its value stand where the file and line would.
func flagError(given map[string]string, field, msg string) (*Error, bool) {
	f, ok := given[index.ReplaceAllString(field, "")]
	if !ok {
		return nil, false
	}
	return &Error{File: f, Field: field, Msg: msg}, true
}

// keep narrows the entries and models to those o names. It runs on the
// loaded prompt set, whose llm_judge checks decide which entries stay as
// judges.
func (o *Overrides) keep(c *Config) []error {
	var errs []error
	judges := c.JudgeNames()
	if len(o.Providers) > 0 {
		for _, n := range o.Providers {
			if !slices.ContainsFunc(c.Providers, func(p Provider) bool { return p.Name == n }) {
				errs = append(errs, &Error{File: "--providers " + strings.Join(o.Providers, ","), Field: "providers",
					Msg: fmt.Sprintf("no entry named %s in %s", yamlerr.Quoted(n), c.Path)})
			}
		}
		var kept []Provider
		for _, p := range c.Providers {
			switch {
			case slices.Contains(o.Providers, p.Name):
				kept = append(kept, p)
			case slices.Contains(judges, p.Name):
				p.Models = nil // not swept, still the judge its llm_judge checks name
				kept = append(kept, p)
			}
		}
		c.Providers = kept
	}
	if len(o.Models) > 0 {
		found := map[string]bool{}
		var kept []Provider
		for _, p := range c.Providers {
			p.Models = slices.DeleteFunc(slices.Clone(p.Models), func(m string) bool { return !slices.Contains(o.Models, m) })
			for _, m := range p.Models {
				found[m] = true
			}
			if len(p.Models) > 0 || slices.Contains(judges, p.Name) {
				kept = append(kept, p)
			}
		}
		c.Providers = kept
		for _, m := range o.Models {
			if !found[m] {
				errs = append(errs, &Error{File: "--models " + strings.Join(o.Models, ","), Field: "providers[].models",
					Msg: fmt.Sprintf("%s is not in any provider's models in %s", yamlerr.Quoted(m), c.Path)})
			}
		}
	}
	return errs
}
