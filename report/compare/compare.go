package compare

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"bench/internal/record/agentsnap"
	"bench/internal/record/results"
	"bench/internal/tape"
	"bench/report/stats"
)

// Cell verdicts.
const (
	// Match: same outcome, same output, same tool calls.
	Match = "match"
	// Drift: the output or the tool arguments changed (or the failure
	// text of a cell that failed in both runs), and the cell still passes
	// as it did.
	Drift = "drift"
	// Regression: see the package comment for the rules.
	Regression = "regression"
	// Improvement: fail -> pass, with no regression rule firing.
	Improvement = "improvement"
	// Changed: the prompt's text, system prompt, tools or validators
	// changed between the runs, so the cell is not judged.
	Changed = "changed"
	// Missing: the cell is in the base run only; New: in the new run only.
	Missing = "missing"
	New     = "new"
	// Unavailable: the base run's cell never reached the model (or
	// neither did), so there is nothing to judge against.
	Unavailable = "unavailable"
)

// verdictOrder is the order cells are listed in: regressions first.
var verdictOrder = []string{Regression, Improvement, Drift, Unavailable, Changed, Missing, New, Match}

// Categories of findings, the words of --fail-on.
const (
	Quality = "quality"
	Latency = "latency"
	// CapacityCat: a load stage's throughput or goodput, or the
	// saturation point (capacity.go).
	CapacityCat  = "capacity"
	Availability = "availability"
	DriftCat     = "drift"
	// Cost: a group's mean cost of a cell rose beyond CostThreshold. It
	// fails the gate only when asked (--fail-on cost).
	Cost = "cost"
)

// Categories lists the categories --fail-on accepts.
var Categories = []string{Quality, Latency, CapacityCat, Availability, DriftCat, Cost}

// Gate verdicts (compare.json "verdict").
const (
	VerdictRegression = "regression"
	VerdictOK         = "ok"
	// VerdictNotJudged: no finding fails the gate, but a metric of
	// --require-judged could be judged nowhere.
	VerdictNotJudged = "not_judged"
)

// Options set what counts as a regression.
type Options struct {
	// Alpha is the significance level of every test after correction.
	// The three latency metrics share it (each judged at Alpha/3), so the
	// chance of any false latency alarm in one compare is at most Alpha.
	Alpha float64 `json:"alpha"`
	// LatencyThreshold is the smallest relative latency shift that counts
	// (0.10 for 10 %).
	LatencyThreshold float64 `json:"latency_threshold"`
	// LatencyFloorMS is the smallest absolute TTFT or e2e shift that
	// counts, in milliseconds.
	LatencyFloorMS float64 `json:"latency_floor_ms"`
	// TokensPerSFloor is the smallest absolute tokens/s shift that counts.
	TokensPerSFloor float64 `json:"tokens_per_s_floor"`
	// MinSamples is the fewest latency samples a side needs to be judged.
	MinSamples int `json:"min_samples"`
	// Correction is the false-alarm control within a family (Holm).
	Correction stats.Correction `json:"correction"`
	// FailOn are the categories whose findings fail the gate.
	FailOn []string `json:"fail_on"`
	// FailOnSuspect lets latency findings made while other work on the
	// machine rose by half a core or more fail the gate; by default they
	// are not judged ("machine load") and listed.
	FailOnSuspect bool `json:"fail_on_suspect"`
	// RequireJudged are metrics (AllMetrics; "latency" for the three
	// latency ones) that must be judged somewhere, in some group or
	// prompt: when one was judged nowhere the gate fails (verdict
	// not_judged), so a nightly job cannot pass on what it could not see.
	RequireJudged []string `json:"require_judged,omitempty"`
	// CostThreshold is the smallest relative rise of a group's mean cost
	// of a cell that is a cost finding (0.10 for 10 %).
	CostThreshold float64 `json:"cost_threshold"`
	// History is a directory of earlier runs (bench compare --history):
	// the green ones of the new run's setup give each latency figure's
	// night-to-night spread, and a change within it is "~" (noise.go).
	History string `json:"history,omitempty"`
}

// DefaultOptions returns the gate's defaults: alpha 0.05, a 10 % and 5 ms
// latency threshold (1 token/s for throughput), 4 samples a side, Holm,
// failing on quality, latency, capacity and availability; a 10 % cost
// threshold, which fails the gate only with --fail-on cost.
func DefaultOptions() Options {
	return Options{Alpha: 0.05, LatencyThreshold: 0.10, LatencyFloorMS: 5, TokensPerSFloor: 1, MinSamples: 4,
		Correction: stats.Holm, FailOn: []string{Quality, Latency, CapacityCat, Availability}, CostThreshold: 0.10}
}

// Validate reports the first unusable option, naming it as the flag does.
func (o Options) Validate() error {
	so := stats.Options{Alpha: o.Alpha, Threshold: o.LatencyThreshold, Floor: o.LatencyFloorMS, MinSamples: o.MinSamples, Correction: o.Correction}
	if err := so.Validate(); err != nil {
		return err
	}
	if !(o.CostThreshold >= 0) {
		return fmt.Errorf("cost threshold %v: must be >= 0", o.CostThreshold)
	}
	if !(o.TokensPerSFloor >= 0) {
		return fmt.Errorf("tokens/s floor %v: must be >= 0", o.TokensPerSFloor)
	}
	for _, c := range o.FailOn {
		if !slices.Contains(Categories, c) {
			return fmt.Errorf("fail-on %q: must be one of %s", c, strings.Join(Categories, ", "))
		}
	}
	for _, m := range o.RequireJudged {
		if m != Latency && m != CapacityCat && !slices.Contains(AllMetrics, m) && !slices.Contains(CapacityMetrics, m) {
			return fmt.Errorf("require-judged %q: must be one of latency, capacity, %s", m, strings.Join(append(slices.Clone(AllMetrics), CapacityMetrics...), ", "))
		}
	}
	return nil
}

// failsOn reports whether findings of category c fail the gate.
func (o Options) failsOn(c string) bool { return slices.Contains(o.FailOn, c) }

// Result is one comparison, compare.json.
type Result struct {
	// Verdict is "regression" when a finding of a --fail-on category was
	// found, else "ok".
	Verdict   string  `json:"verdict"`
	BaseRunID string  `json:"base_run_id"`
	NewRunID  string  `json:"new_run_id"`
	BaseDir   string  `json:"base_dir"`
	NewDir    string  `json:"new_dir"`
	Options   Options `json:"options"`
	// Counts are the cells by verdict.
	Counts map[string]int `json:"counts"`
	// Failing counts the findings that fail the gate, by category.
	Failing map[string]int `json:"failing"`
	// Judgement counts, per metric, the comparisons of every group and
	// prompt judged and not judged (by reason): what the verdict rests on.
	Judgement map[string]*Judgement `json:"judgement"`
	// Unjudged are the metrics of --require-judged judged nowhere.
	Unjudged []string `json:"unjudged,omitempty"`
	// Setup is what the runs' setups say, differing or not.
	Setup []SetupItem `json:"setup"`
	// Findings are the regressions (and drift) of every scope, gating or
	// not, regressions first.
	Findings []Finding `json:"findings"`
	// RootCauses group the cell findings by prompt and kind of change,
	// each with the cells it covers: what compare.md, compare.html and
	// the terminal list in their place (Findings keeps them per cell).
	RootCauses     []*RootCause   `json:"root_causes"`
	ChangedPrompts []PromptChange `json:"changed_prompts"`
	// Rescored is set when one run is a rescore of the other (bench
	// rescore): their cells are the same answers, so a prompt whose checks
	// alone changed is judged, and its changes are listed here.
	Rescored *Rescored         `json:"rescored,omitempty"`
	Groups   []*Group          `json:"groups"`
	Warnings []string          `json:"warnings,omitempty"`
	Methods  map[string]string `json:"methods"`
	// Cells are every cell key of either run, regressions first. Last, so
	// that compare.json can be written one cell at a time.
	Cells []*Cell `json:"cells"`

	// tape holds the cells' long change sides (long.go); Close drops it.
	tape *tape.Tape
}

// Rescored says the two runs hold the same cells judged twice: one was
// written by bench rescore from the other (or both from one run).
type Rescored struct {
	// OriginRunID is the run whose cells both hold.
	OriginRunID string `json:"origin_run_id"`
	// Prompts are the prompts whose checks differ between the runs; their
	// cells are judged, the moved verdicts being the change's doing.
	Prompts []PromptChange `json:"prompts"`
}

// Regressed reports whether a finding fails the gate.
func (r *Result) Regressed() bool { return r.Verdict == VerdictRegression }

// Failed reports whether the gate fails: a regression, or a metric of
// --require-judged judged nowhere.
func (r *Result) Failed() bool { return r.Verdict != VerdictOK }

// Finding is one thing the gate weighs: a cell's regression or drift, a
// group's pass-rate, tool-use or tier regression, or a latency regression
// of a group or of one prompt.
type Finding struct {
	Category string `json:"category"`
	// Scope is cell, group, category, style (an injection style's attack
	// success), prompt or stage (a load stage's capacity).
	Scope string `json:"scope"`
	// FailsGate says the category is one of --fail-on.
	FailsGate     bool    `json:"fails_gate"`
	Provider      string  `json:"provider"`
	ProviderType  string  `json:"provider_type,omitempty"`
	Model         string  `json:"model"`
	ThinkingLevel *string `json:"thinking_level"`
	PromptID      string  `json:"prompt_id,omitempty"`
	// Stage is the load stage of a stage-scope finding.
	Stage      string `json:"stage,omitempty"`
	Repetition *int   `json:"repetition,omitempty"`
	// Metric names what regressed at group, category, prompt or stage
	// scope: pass_rate, tool_use_success, category_pass_rate:<category>,
	// attack_success_rate, attack_success_rate:<style>,
	// utility_under_attack, tier, ttft_ms, e2e_ms, tokens_per_s, request_throughput, goodput,
	// saturation.
	Metric  string `json:"metric,omitempty"`
	Message string `json:"message"`
	// Suspect says why a latency finding may not be the model's or the
	// server's ("machine load"): its comparison is not judged, and the
	// finding fails the gate only with FailOnSuspect.
	Suspect string `json:"suspect,omitempty"`
}

// Cell is one cell key's verdict.
type Cell struct {
	Provider      string  `json:"provider"`
	ProviderType  string  `json:"provider_type"`
	Model         string  `json:"model"`
	ThinkingLevel *string `json:"thinking_level"`
	PromptID      string  `json:"prompt_id"`
	Repetition    int     `json:"repetition"`
	// Stage is the cell's load stage (docs/load.md), absent without one.
	Stage   string `json:"stage,omitempty"`
	Verdict string `json:"verdict"`
	// Category is what a regression (quality or availability) or drift
	// counts as for --fail-on.
	Category string `json:"category,omitempty"`
	// Reasons say which rules made the verdict.
	Reasons []string `json:"reasons,omitempty"`
	// Agentsnap is the status `agentsnap diff` gives the two cells'
	// snapshots; empty when not both ran.
	Agentsnap string `json:"agentsnap,omitempty"`
	// Changes are bench's own changes (pass, availability_status,
	// expected_tools, prompt parts) then agentsnap's. A side longer than
	// 256 bytes (an answer, as a rule) is nil here, held on the Result's
	// tape until its Close; the cell's JSON (compare.json) has it whole.
	Changes []agentsnap.Change `json:"changes"`
	// Ignored are differences neither rule set judges (input, version).
	Ignored []agentsnap.Change `json:"ignored,omitempty"`
	// Diverged is the first turn where an agentic cell's trajectory
	// differs from the base's; nil when the cells are not agentic or
	// their trajectories are the same.
	Diverged *Divergence `json:"diverged,omitempty"`
	// BaseLine and NewLine are the cell's lines in each results.jsonl.
	BaseLine int `json:"base_line,omitempty"`
	NewLine  int `json:"new_line,omitempty"`

	k cellKey
	// long are the change sides longer than longSide bytes: nil in
	// Changes and Ignored, and held on the Result's tape (long.go). The
	// cell's JSON has them whole.
	long *longSides
}

// key is the cell's results key.
func (c *Cell) key() results.Key {
	k := results.Key{Provider: c.Provider, ProviderType: c.ProviderType, Model: c.Model, PromptID: c.PromptID, Repetition: c.Repetition, Stage: c.Stage}
	if c.ThinkingLevel != nil {
		k.ThinkingLevel = *c.ThinkingLevel
	}
	return k
}

// Label names the cell in tables.
func (c *Cell) Label() string { return keyString(c.key()) }

// PromptChange is a prompt whose definition differs between the runs.
type PromptChange struct {
	PromptID string             `json:"prompt_id"`
	Changes  []agentsnap.Change `json:"changes"`
}

// Compare reads the base and new run directories (only reading) and
// judges the new run against the base. An error means a run could not be
// read (*InputError names the file and line) or the options are unusable.
func Compare(baseDir, newDir string, opt Options) (*Result, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	// One after the other: each read already decodes on every core, and
	// both intern into one table so their keys compare.
	tab := newTable()
	base, baseErr := loadRun(baseDir, tab)
	cur, curErr := loadRun(newDir, tab)
	if baseErr != nil && curErr != nil && baseErr.Error() == curErr.Error() {
		return nil, baseErr // the same directory twice
	}
	if err := errors.Join(baseErr, curErr); err != nil {
		return nil, err
	}
	return judge(base, cur, opt)
}

// judge compares two runs read by loadRun.
func judge(base, cur *runData, opt Options) (*Result, error) {
	res := &Result{BaseRunID: base.id, NewRunID: cur.id, BaseDir: base.dir, NewDir: cur.dir, Options: opt,
		Counts: map[string]int{}, Failing: map[string]int{}, Findings: []Finding{}, ChangedPrompts: []PromptChange{},
		Methods: methods(opt)}
	res.Warnings = append(append(res.Warnings, base.warnings...), cur.warnings...)
	// A run of a night whose judge (or command validator) never answered
	// judges nothing of its groups' quality: said of the baseline above
	// all, which the nightly loop must not have promoted.
	if line := results.UnjudgedLine(base.unjudged.Groups()); line != "" {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the base run %s is no baseline for quality: %s; those groups' quality is not judged against it (judge it again with bench rescore, or compare against another run)", base.id, line))
	}
	if line := results.UnjudgedLine(cur.unjudged.Groups()); line != "" {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the new run %s: %s; those cells are not judged (an availability regression where the base run judged them), and the night cannot be a baseline", cur.id, line))
	}
	c := &comparison{opt: opt, base: base, cur: cur, res: res}
	if fb, fn := configFingerprint(base.dir), configFingerprint(cur.dir); fb != "" && fn != "" && fb != fn {
		res.Warnings = append(res.Warnings, "the base run's config.json differs from the new run's (run id and output directory aside): "+
			"the verdicts compare two setups (the setup differences and changed prompts below say what differs)")
	}
	if opt.History != "" {
		var line string
		c.noise, line = loadNightNoise(opt.History, base, cur)
		res.Warnings = append(res.Warnings, line)
	}
	c.promptChanges()
	if err := c.judgeCells(); err != nil {
		return nil, err
	}
	if err := c.judgeGroups(); err != nil {
		return nil, err
	}
	res.Setup = setup(base, cur)
	c.machineLoad()
	c.finish()
	c.rootCauses()
	return res, nil
}

// comparison holds one Compare's state.
type comparison struct {
	opt       Options
	base, cur *runData
	res       *Result
	// changed prompts by id, with their changes.
	changed map[string][]agentsnap.Change
	// union is every key of either run, in the order of res.Cells until
	// finish sorts them.
	union []cellKey
	// prompts in display order (built on use).
	prompts []string
	// noise is the earlier nights' spread (nil without --history or with
	// too few of them).
	noise *nightNoise
}

// finish orders the cells and findings and sets the verdict.
func (c *comparison) finish() {
	res := c.res
	rank := func(v string) int { return slices.Index(verdictOrder, v) }
	slices.SortStableFunc(res.Cells, func(a, b *Cell) int { return rank(a.Verdict) - rank(b.Verdict) })
	catRank := func(f Finding) int {
		r := slices.Index(Categories, f.Category)
		if !f.FailsGate {
			r += len(Categories)
		}
		return r
	}
	slices.SortStableFunc(res.Findings, func(a, b Finding) int { return catRank(a) - catRank(b) })
	res.Verdict = VerdictOK
	for _, f := range res.Findings {
		if f.FailsGate {
			res.Failing[f.Category]++
			res.Verdict = VerdictRegression
		}
	}
	res.Judgement = judgement(res.Groups)
	res.Unjudged = unjudged(res.Judgement, c.opt.RequireJudged)
	if len(res.Unjudged) > 0 && res.Verdict == VerdictOK {
		res.Verdict = VerdictNotJudged
	}
}

// addFinding records a finding, gating when its category is one of --fail-on.
func (c *comparison) addFinding(f Finding) {
	f.FailsGate = c.opt.failsOn(f.Category) && (f.Suspect == "" || c.opt.FailOnSuspect)
	c.res.Findings = append(c.res.Findings, f)
}

// methods documents the rules in compare.json.
func methods(opt Options) map[string]string {
	return map[string]string{
		"matching": "cells are matched on the full key (provider, provider_type, model, thinking_level, prompt_id, repetition); " +
			"a prompt whose text, system prompt, tools, max_turns or validators changed is 'changed' and not judged",
		"rescored":     "when one run is a rescore of the other (bench rescore; run.json rescored_from, the same origin run and start), a prompt whose checks alone changed is judged: its cells' moved verdicts are the change's",
		"check_errors": "a cell whose judge or command validator gave no verdict (check_errors, objective_pass null) is not judged for quality: in the new run it is an availability regression (the gate cannot vouch for it), in the base run it leaves nothing to judge against",
		"pass": "a cell passes when it reached the model (availability ok or error, not cancelled), succeeded, its validator did not fail " +
			"(objective_pass not false) and it used the expected tools (tool_use_success not false)",
		"cell_verdicts": "regression: pass->fail, an expected tool call lost, tool calls changed or reordered on a tool prompt, " +
			"a new error (quality), ok->unavailable (availability); improvement: fail->pass; drift: output, tool arguments or " +
			"failure text changed, and tool-call changes on a prompt that offers and expects no tools; match: nothing changed",
		"pass_rate": "per group and per category, over the cells both runs judged (same key, same prompt, both reached the model), matched cell by cell: " +
			"the exact McNemar test (binomial, on the cells whose outcome changed); a significant drop is a quality regression",
		"multiplicity": fmt.Sprintf("alpha = %g is split between the statistical categories of the compare (quality; latency; capacity when a run has load stages), "+
			"each with an equal share and %s's correction within it (the quality family: every rate test of every group, category and injection style; latency: each metric's "+
			"family at a third of its share), so that the chance of any false statistical finding in one compare is at most alpha. Holm by default: "+
			"a gate that fails a night on one false finding needs the family-wise bound; BH bounds only the expected share of false findings", opt.Alpha, opt.Correction),
		"injection": "per group and per injection style, over the prompt-injection attack cells both runs judged (same key, same style; injection_followed true or false " +
			"in both: an error cell has no verdict), matched cell by cell like pass_rate: attack_success_rate and attack_success_rate:<style> by the exact McNemar " +
			"test on the cells that obeyed in one run only, in the quality family; a significant rise is the quality regression (a model that starts obeying), a " +
			"significant fall an improvement; utility_under_attack (utility over the attack cells both runs have it for) is judged as pass_rate is",
		"tier": "each run's tool-use tier as tiers.json computes it; leaving tier_1 is a regression (quality, or availability " +
			"when the new run counted no tool cell)",
		"infrastructure": "cells that never reached the model (skipped_unavailable, auth_error, rate_limited, cancelled) are " +
			"counted apart and never judged for quality; a cell that reached the model in the base run and not in the new one " +
			"is an availability regression",
		"capacity": fmt.Sprintf("per group and load stage run in both (same stage name: same mode and level; the warm-up left out): "+
			"answered requests/s in %d equal windows of the stage's span on each side (fewer when the stage sent fewer cells), judged "+
			"as a latency metric (Mann-Whitney U, Hodges-Lehmann shift, %s over every stage at alpha/2, %g%% threshold, %d samples a "+
			"side; a drop is the regression); goodput (sent cells meeting every per-request SLO of an slo block both runs share) by "+
			"Fisher's exact test, Holm over the stages at alpha/2; the saturation point (summary.json's rule on each run) moving is a "+
			"change only when a stage between the two points changed its throughput or goodput significantly the same way",
			CapacityWindows, opt.Correction, 100*opt.LatencyThreshold, opt.MinSamples),
		"latency": fmt.Sprintf("ttft_ms, e2e_ms and tokens_per_s of successful warm cells (not cold_start) of unchanged prompts. "+
			"Per prompt: when every sample has its match in the other run (same provider kind, stage and repetition), Wilcoxon's signed-rank test "+
			"on the pairs' log ratios with the Hodges-Lehmann shift of the ratio and its 95%% CI; otherwise, or when the pairs are too few to pass the family's "+
			"bar, the unpaired Mann-Whitney U test and Hodges-Lehmann shift. "+
			"Per group, like with like: only the prompts with samples in both runs; the signed-rank test over every prompt's pairs when all are matched, "+
			"else van Elteren's stratified rank-sum test with the stratified Hodges-Lehmann shift of per-prompt log ratios; medians over the prompts' medians; "+
			"a prompt with samples in one run only enters or leaves the pool and is listed, never compared. "+
			"One effect per change: base -> new is the base median and the base median moved by the shift estimate. "+
			"Each metric is one family (every group and every prompt) judged at a third of latency's share of alpha (%.4g; %.4g when capacity is a category too) with %s's correction. "+
			"A regression needs significance, a shift beyond "+
			"%g%% of the base median and beyond %g ms (%g tokens/s for throughput); '~' when judged without one, with what it could have detected "+
			"(the smallest change flagged with 80%% power at its n, spread and the family's bar). Not judged, with the reason: "+
			"no samples on a side, all cold (every successful cell of a side was a cold start), too few samples (fewer than %d a side, "+
			"or sizes whose smallest possible p-value cannot pass the family's bar), machine load (other work on the machine rose by half a core "+
			"or more during the new run's suite: its latency regressions, listed, fail the gate only with --fail-on-suspect)",
			opt.Alpha/2/3, opt.Alpha/3/3, opt.Correction, 100*opt.LatencyThreshold, opt.LatencyFloorMS, opt.TokensPerSFloor, opt.MinSamples),
	}
}
