// Package history is `bench history RUN_DIR... | DIR`: the series of many
// runs (a directory of nightly run directories) per (provider, model,
// thinking level) group and metric, with the change points an
// E-divisive-means detector finds in them (stats.DetectChanges, as Apache
// Otava and MongoDB's performance CI do), each tied to the run where it
// starts and what changed in that run's setup. It writes history.json and
// a self-contained history.html, and gates a nightly job on a new change
// point (--fail-on-change METRICS --since N).
//
// Layer: verdicts (reads run directories only). It reads run.json,
// summary.json, tiers.json, inventory.json and config.json of each run
// and nothing else, so a thousand runs cost seconds; a run whose summary.json or
// run.json is missing or unreadable is skipped with a warning naming it,
// and the others are still processed.
//
// # Series
//
// Per group, from summary.json: pass_rate (objective_pass_rate),
// ttft_ms_p50 and _p95, e2e_ms_p50 and _p95 (latency_ms), tokens_per_s_p50
// and _p95, and cost_usd (the mean cost of a priced cell: cost_usd_total
// over n_cost_known) when a run has prices; from tiers.json:
// tool_use_success (tool_use_success_rate). A run without the group, or
// without the figure (null), leaves a gap: the detector sees the series
// of the runs that have it.
//
// # Change points
//
// Each series goes through stats.DetectChanges (Options: a window of 60
// runs, p <= 1e-4, a change of at least 2 %, 3 runs at least on each side
// of a change point, so that one outlying night is not a change; measured on 60 nightly runs
// with a 5 % step and 3 % noise: within ±2 runs of the step in 82 % of
// series, within ±5 in 93 %, and a false alarm in 0.2 % of series without
// a step). A change point starts at a run; its setup change is what
// differs between that run and the previous run of the series: the
// model's digest and the server's version (inventory.json), bench's
// version (run.json), the prompt suite (summary.json's prompt_ids), and
// from config.json the concurrency (the run's and the entry's), the other
// run settings (repetitions, timeout, max_output_bytes, the load profile)
// and the prompts' checks. Its direction is a regression when the metric
// got worse (lower pass rate, higher latency, fewer tokens/s, higher
// cost), else an improvement; one at a change of the concurrency or the
// run settings (or, for a pass rate, the checks) is the setup's (cause
// "setup") and fails no gate. A bench rescore copy of a run is the same
// night: one of them is read (the newest judging).
package history

import (
	"time"

	"bench/report/stats"
)

// Metrics, in display order.
const (
	PassRate   = "pass_rate"
	ToolUse    = "tool_use_success"
	TTFTP50    = "ttft_ms_p50"
	TTFTP95    = "ttft_ms_p95"
	E2EP50     = "e2e_ms_p50"
	E2EP95     = "e2e_ms_p95"
	TPSP50     = "tokens_per_s_p50"
	TPSP95     = "tokens_per_s_p95"
	CostUSD    = "cost_usd"
	Regression = "regression"
	// Improvement is a change for the better.
	Improvement = "improvement"
)

// Setup items read from config.json (SetupChange.What), beside the model
// digest, the server's and bench's versions and the prompt suite.
const (
	SetupConcurrency = "concurrency"
	SetupRunSettings = "run settings"
	SetupChecks      = "checks"
	// CauseSetup is a change point that starts where bench's measuring
	// changed (concurrency, run settings; checks, for a pass rate).
	CauseSetup = "setup"
)

// Metrics lists every metric a series can have, in display order.
var Metrics = []string{PassRate, ToolUse, TTFTP50, TTFTP95, E2EP50, E2EP95, TPSP50, TPSP95, CostUSD}

// metricInfo is how a metric reads.
var metricInfo = map[string]struct {
	higherIsBetter bool
	unit           string
}{
	PassRate: {true, "rate"}, ToolUse: {true, "rate"}, TTFTP50: {false, "ms"}, TTFTP95: {false, "ms"},
	E2EP50: {false, "ms"}, E2EP95: {false, "ms"}, TPSP50: {true, "tokens/s"}, TPSP95: {true, "tokens/s"}, CostUSD: {false, "USD"},
}

// Aliases are the words --fail-on-change takes beside metric names.
var Aliases = map[string][]string{
	"latency": {TTFTP50, TTFTP95, E2EP50, E2EP95, TPSP50, TPSP95},
	"quality": {PassRate, ToolUse},
}

// Options set the detector and the gate.
type Options struct {
	Detector stats.ChangeOptions `json:"detector"`
	// FailOnChange are the metrics (or aliases) whose new regression
	// change point fails the gate.
	FailOnChange []string `json:"fail_on_change,omitempty"`
	// Since is how many of the latest runs count as new for the gate.
	Since int `json:"since"`
}

// DefaultOptions are bench history's defaults (see the package comment).
func DefaultOptions() Options {
	return Options{Detector: stats.ChangeOptions{Window: 60, MaxP: 1e-4, MinMagnitude: 0.02, MinSegment: 3}, Since: 3}
}

// Verdicts of the gate.
const (
	VerdictOK     = "ok"
	VerdictChange = "change"
	// VerdictNotJudged: --fail-on-change was given, and no series of its
	// metrics has runs enough for any change point (MinRuns): the gate
	// cannot say "ok" over that (exit 7, "NOT JUDGED").
	VerdictNotJudged = "not_judged"
)

// MinRuns is the fewest runs a series needs before a change point can be
// found in it at all: MinSegment on each side of it (and never fewer
// than 4, two a side for the t-test's spread).
func (o Options) MinRuns() int { return max(2*o.Detector.MinSegment, 4) }

// History is history.json.
type History struct {
	GeneratedAt time.Time `json:"generated_at"`
	Options     Options   `json:"options"`
	// Verdict is "change" when a change point of --fail-on-change is in
	// the last --since runs; "not_judged" when none of its series has
	// MinRuns runs; else "ok".
	Verdict string `json:"verdict"`
	// MinRuns is the fewest runs a series needs for a change point;
	// Longest is the longest series' number of runs.
	MinRuns int `json:"min_runs"`
	Longest int `json:"longest_series"`
	// Runs are the runs read, oldest first; series points index them.
	Runs []Run `json:"runs"`
	// Warnings name the runs skipped or read in part, and why.
	Warnings []string  `json:"warnings"`
	Series   []*Series `json:"series"`
	// ChangePoints are every series' change points, newest first.
	ChangePoints []*ChangePoint `json:"change_points"`
	// Failing are the change points that fail the gate.
	Failing []*ChangePoint    `json:"failing"`
	Methods map[string]string `json:"methods"`
}

// Run is one run directory read.
type Run struct {
	Index        int       `json:"index"`
	ID           string    `json:"run_id"`
	Dir          string    `json:"dir"`
	StartedAt    time.Time `json:"started_at"`
	BenchVersion string    `json:"bench_version"`
	EndReason    string    `json:"end_reason"`
	// Cells are run.json's planned and recorded counts.
	CellsPlanned  int `json:"cells_planned"`
	CellsRecorded int `json:"cells_recorded"`
	// RescoredFrom is the run a bench rescore copy was judged again from:
	// the copy counts as that night (once).
	RescoredFrom string `json:"rescored_from,omitempty"`

	prompts []string
	setup   map[groupKey]map[string]string
	// checks are config.json's prompts' checks, by id (their fingerprints).
	checks map[string]string
}

// Series is one metric of one group over the runs.
type Series struct {
	Provider       string  `json:"provider"`
	Model          string  `json:"model"`
	ThinkingLevel  *string `json:"thinking_level"`
	Metric         string  `json:"metric"`
	Unit           string  `json:"unit"`
	HigherIsBetter bool    `json:"higher_is_better"`
	// Points are the runs that have the figure, in run order.
	Points []SeriesPoint `json:"points"`
	// TooShort says the series has fewer than MinRuns points: no change
	// point can be found in it, and none is not the same as "no change".
	TooShort     bool           `json:"too_short,omitempty"`
	ChangePoints []*ChangePoint `json:"change_points"`

	key groupKey
}

// Label names the series' group.
func (s *Series) Label() string { return s.key.label() }

// SeriesPoint is one run's value.
type SeriesPoint struct {
	Run   int     `json:"run"`
	Value float64 `json:"value"`
}

// ChangePoint is where a series shifts, tied to the run it starts at.
type ChangePoint struct {
	Provider      string  `json:"provider"`
	Model         string  `json:"model"`
	ThinkingLevel *string `json:"thinking_level"`
	Metric        string  `json:"metric"`
	// Run is the index of the first run of the new level; RunID and Dir
	// name it.
	Run       int       `json:"run"`
	RunID     string    `json:"run_id"`
	Dir       string    `json:"dir"`
	StartedAt time.Time `json:"started_at"`
	// RunsAgo counts the runs after it (0: the latest run).
	RunsAgo int `json:"runs_ago"`
	// Before and After are the means of the series on each side (to the
	// neighbouring change points), ChangePct the change in percent.
	Before    float64 `json:"mean_before"`
	After     float64 `json:"mean_after"`
	ChangePct float64 `json:"change_pct"`
	P         float64 `json:"p_value"`
	// Direction is "regression" or "improvement".
	Direction string `json:"direction"`
	// Setup is what changed between the run before and this one.
	Setup []SetupChange `json:"setup_changes"`
	// Cause is "setup" when Setup holds a change of how bench measured
	// the metric (the concurrency, the run settings, the checks of a pass
	// rate): the change is the setup's, not the model's, and fails no
	// gate; "" otherwise.
	Cause string `json:"cause,omitempty"`
	// FailsGate says the point is of --fail-on-change, a regression, not
	// the setup's, and within --since runs of the latest.
	FailsGate bool `json:"fails_gate"`
}

// Label names the change point in one line.
func (c *ChangePoint) Label() string {
	return groupKey{c.Provider, c.Model, deref(c.ThinkingLevel)}.label() + " " + c.Metric
}

// SetupChange is one thing that differs between two runs' setups.
type SetupChange struct {
	What string `json:"what"`
	From string `json:"from"`
	To   string `json:"to"`
}

// groupKey is a (provider, model, thinking level).
type groupKey struct{ provider, model, thinking string }

func (k groupKey) label() string {
	s := k.provider + "/" + k.model
	if k.thinking != "" {
		s += " (" + k.thinking + ")"
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
