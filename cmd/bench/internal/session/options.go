package session

import (
	"bench/config"
	"bench/report/compare"
)

// Options are one bench run's command line, read by cmd/bench: where the
// config is and what overrides it. Zero values leave the config alone.
type Options struct {
	// Config is the bench.yaml path; ConfigSet says it was given (--config),
	// which changes the hint for a missing file.
	Config    string
	ConfigSet bool
	// Overrides are the flags that stand over bench.yaml's values
	// (--concurrency, --repetitions, --timeout, --run-id, --out, --suite,
	// --prompts, --providers, --models), merged into the file's values by
	// config.LoadWith before anything is checked.
	config.Overrides
	Quiet  bool
	DryRun bool
	// Resume continues the run RunID names with its own plan.
	Resume bool
	// AllowUnavailable: a provider none of whose cells reached a model
	// does not make the run exit 4, nor (with Baseline) fail the gate.
	AllowUnavailable bool
	// AllowOverBudget starts a run whose projected cost passes
	// run.max_cost_usd (the sweep still stops at it).
	AllowOverBudget bool
	// JUnit, when not "", also gets junit.xml (--junit).
	JUnit string
	// ShardIndex of ShardCount (1-based) is the part of the plan to run;
	// ShardCount 0 runs it all.
	ShardIndex, ShardCount int
	// Baseline, when not "", is the run directory the run is compared
	// with when it ends, as bench compare does with Gate.
	Baseline string
	Gate     compare.Options
	// Detect, when above 0, is a latency change (0.10 for 10 %) the dry
	// run says how many repetitions bench compare needs to detect, from
	// the spread in Baseline when given, else an assumed one.
	Detect float64
	// Args are the arguments as given, for the command that resumes an
	// interrupted run; Prog is how bench was invoked ("bench", a path).
	Args []string
	Prog string
}
