// Package report rebuilds a run's summary.json, summary.md and tiers.json
// from results.jsonl alone (plus the resource files recorded during the
// run). It streams the results file and keeps per-group counters and the
// latency samples, never the raw outputs, so a large run reports in little
// memory.
//
// summary.json has this shape:
//
//	{
//	  "run_id": "...", "generated_at": "RFC 3339", "source": "results.jsonl",
//	  "n_records": 123, "n_skipped_lines": 1,
//	  "skipped_lines": [{"line": 7, "truncated": true, "reason": "..."}],
//	  "methods": {"percentiles": "...", "latency_ms": "...", ...},
//	  "groups": [ one object per (provider, model, thinking_level) ]
//	}
//
// Each group has the results schema's fields (provider, model,
// thinking_level, n_total, n_ok, n_success, n_skipped_unavailable,
// n_rate_limited, n_error, success_rate_ok, objective_pass_rate,
// wall_clock_ms, latency_ms, resources_before, resources_after) and these
// additions: n_auth_error, n_failed_check (successful cells whose check
// failed), ttft_ms, tokens_per_s and reasoning_tokens_per_s
// (same statistics as latency_ms), n_cold_start (cells the server loaded
// the model for: counted for quality, left out of the speed figures),
// load_ms and warmup_error (the suite's warm-up), resources_peak (what the
// sampler saw during the suite), and the agentic-task figures (n_agentic,
// n_agentic_completed, task_success_rate, mean_turns, n_agentic_calls,
// n_wrong_argument_calls, n_unknown_tool_calls, wrong_argument_rate,
// unknown_tool_rate, n_failed_call_cells, n_recovered, recovery_rate; see
// AgenticMethods).
//
// Layer: verdicts (reads run directories only: results.jsonl and the
// resource files, through results and rundir).
package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/record/slo"
)

// Methods says how the figures are computed; it is written into summary.json
// so a reader of the file does not need the source.
type Methods struct {
	Percentiles       string `json:"percentiles"`
	LatencyMS         string `json:"latency_ms"`
	TTFTMS            string `json:"ttft_ms"`
	TokensPerS        string `json:"tokens_per_s"`
	ReasoningTPS      string `json:"reasoning_tokens_per_s"`
	ColdStarts        string `json:"n_cold_start"`
	LoadMS            string `json:"load_ms"`
	SuccessRateOK     string `json:"success_rate_ok"`
	ObjectivePassRate string `json:"objective_pass_rate"`
	WallClockMS       string `json:"wall_clock_ms"`
	Throttle          string `json:"throttle"`
	AgenticMethods
	CostMethods
}

var methods = Methods{
	Percentiles:       "linear interpolation between closest ranks (Hyndman-Fan type 7): h=(n-1)p, q=x[floor(h)]+(h-floor(h))*(x[floor(h)+1]-x[floor(h)])",
	LatencyMS:         "e2e_ms of the successful cells (availability_status ok and success true) that are not cold starts; e2e_ms runs from the request written to the end of the stream",
	TTFTMS:            "ttft_ms of the successful, warm cells that have one (request written to first answer text or tool call)",
	TokensPerS:        "tokens_per_s of the successful, warm cells that have one: answer tokens x (answer deltas - 1) / answer deltas over the time from the first answer delta to the last; null for a cell with fewer than 4 answer deltas or a window under 10 ms",
	ReasoningTPS:      "reasoning_tokens_per_s of the successful, warm cells that have one: the same rate over the reasoning deltas and reasoning tokens (the server's count, else output tokens split in proportion to the deltas)",
	ColdStarts:        "cells flagged cold_start (the server loaded or swapped in the model: load_duration above 50 ms, or the model missing from /api/ps); counted in every rate and the pass matrix, left out of latency_ms, ttft_ms and the tokens/s figures",
	LoadMS:            "duration of the suite's unrecorded warm-up request (loading the model), from its resource record; null when the suite had no warm-up",
	SuccessRateOK:     "n_success / n_ok; null when n_ok is 0",
	ObjectivePassRate: "cells with objective_pass true / successful cells with a non-null objective_pass; null when there are none",
	WallClockMS:       "max(ended_at_ms) - min(started_at_ms) over the group's cells",
	Throttle:          throttleMethod,
	AgenticMethods:    agenticMethods,
	CostMethods:       costMethods,
}

// Group is one (provider, model, thinking_level) entry of summary.json.
type Group struct {
	Provider      string  `json:"provider"`
	Model         string  `json:"model"`
	ThinkingLevel *string `json:"thinking_level"`

	NTotal              int `json:"n_total"`
	NOK                 int `json:"n_ok"`
	NSuccess            int `json:"n_success"`
	NSkippedUnavailable int `json:"n_skipped_unavailable"`
	NRateLimited        int `json:"n_rate_limited"`
	NError              int `json:"n_error"`
	NAuthError          int `json:"n_auth_error"`
	// NFailedCheck counts the successful cells whose check failed
	// (objective_pass false): the "failed checks" of bench run's progress
	// line and table.
	NFailedCheck int `json:"n_failed_check"`

	SuccessRateOK     *float64 `json:"success_rate_ok"`
	ObjectivePassRate *float64 `json:"objective_pass_rate"`
	// NPassed of NJudged are the objective pass rate's counts: the
	// successful cells whose check passed, of those a check judged.
	// ObjectivePassCI is its 95 % Wilson interval (null when none was
	// judged): what the ranking shows and ties on.
	NPassed         int    `json:"n_passed"`
	NJudged         int    `json:"n_judged"`
	ObjectivePassCI *CI    `json:"objective_pass_ci"`
	WallClockMS     *int64 `json:"wall_clock_ms"`

	LatencyMS           Stats `json:"latency_ms"`
	TTFTMS              Stats `json:"ttft_ms"`
	TokensPerS          Stats `json:"tokens_per_s"`
	ReasoningTokensPerS Stats `json:"reasoning_tokens_per_s"`

	// NColdStart counts the cells the server loaded the model for.
	NColdStart int `json:"n_cold_start"`
	// NCheckError counts the successful cells a check gave no verdict on
	// (a judge's or a command validator's error): not judged, so not in
	// objective_pass_rate.
	NCheckError int `json:"n_check_error,omitempty"`
	// LoadMS is the suite's warm-up time; WarmupError why it failed.
	LoadMS      *float64 `json:"load_ms"`
	WarmupError string   `json:"warmup_error,omitempty"`

	ResourcesBefore *rundir.Snapshot `json:"resources_before"`
	ResourcesAfter  *rundir.Snapshot `json:"resources_after"`
	ResourcesPeak   *rundir.Peak     `json:"resources_peak"`

	// Agentic are the agentic-task figures (agentic.go), inline.
	Agentic
	// ToolUse are the tool-use tier figures and the routing verdict, as in
	// tiers.json (routing.go); CallChecks the unsafe-action and schema
	// counts; Consistency the agentic tasks over repetitions (pass^k).
	ToolUse
	CallChecks
	Consistency
	// Categories are the per-category figures, when prompts have one.
	Categories map[string]*Category `json:"categories,omitempty"`
	// ConversationTurns are the per-turn figures of generated
	// conversations (prompts.conversations), turn by turn.
	ConversationTurns []*ConversationTurn `json:"conversation_turns,omitempty"`
	// Injection are the prompt-injection figures (injection.go), when
	// the group ran injection cases; the same as its tiers.json entry's.
	Injection *Injection `json:"injection,omitempty"`
	// Cost are the token totals and cost figures (cost.go), inline.
	Cost

	// Serving figures (capacity.go): ITLMS from the cells' merged gap
	// histograms (within 1 %), TPOTMS and PrefillTokensPerS over the
	// same cells as the latency; Goodput under the run's slo: block.
	ITLMS             Stats    `json:"itl_ms"`
	TPOTMS            Stats    `json:"tpot_ms"`
	PrefillTokensPerS Stats    `json:"prefill_tokens_per_s"`
	Goodput           *Goodput `json:"goodput,omitempty"`
	// Stages are the suite's load stages in the order they ran, and
	// Saturation where its sweep stopped scaling (none without a sweep).
	Stages     []*Stage    `json:"stages,omitempty"`
	Saturation *Saturation `json:"saturation,omitempty"`
	// SLOSearch is what the group's SLO search found (load.search).
	SLOSearch *SLOSearch `json:"slo_search,omitempty"`
	// Throttle is how much the server's rate limits slowed the group
	// (throttle.go); absent when they did not.
	Throttle *Throttle `json:"throttle,omitempty"`

	// Tier is the group's tool-use tier (written to tiers.json, not here).
	Tier *Tier `json:"-"`
	// Dists are the distributions the latency Stats are computed over,
	// for report.html's plots: set when the summary is built from
	// results.jsonl for the first MaxPlotted groups in ranking order (the
	// ones report.html plots), nil for the others and when it is read from
	// summary.json.
	Dists *Dists `json:"-"`
}

// Dists are a group's plotted distributions: the same cells (no cold
// start) as its LatencyMS, TTFTMS and TokensPerS.
type Dists struct {
	TTFTMS, LatencyMS, TokensPerS Dist
}

// Label names the group in tables: provider/model, plus (thinking).
func (g *Group) Label() string {
	s := g.Provider + "/" + g.Model
	if g.ThinkingLevel != nil {
		s += " (" + *g.ThinkingLevel + ")"
	}
	return s
}

// Summary is a run's summary.json, plus what summary.md needs beyond it.
type Summary struct {
	RunID         string    `json:"run_id"`
	GeneratedAt   time.Time `json:"generated_at"`
	Source        string    `json:"source"`
	NRecords      int       `json:"n_records"`
	NSkippedLines int       `json:"n_skipped_lines"`
	// NDuplicateLines counts records of a cell that a later record of the
	// same cell replaced (a resumed run re-ran it): each cell is counted
	// once, by its last record.
	NDuplicateLines int               `json:"n_duplicate_lines,omitempty"`
	SkippedLines    []results.Problem `json:"skipped_lines"`
	Methods         Methods           `json:"methods"`
	// SLO describes the run's slo: block goodput was counted against ("":
	// none).
	SLO string `json:"slo,omitempty"`
	// Warnings are problems outside results.jsonl (an unreadable resource
	// file) that cost some figures but not the report.
	Warnings []string `json:"warnings,omitempty"`
	// PromptIDs are the prompts the run recorded, in natural order: bench
	// history tells a run of another prompt suite by them.
	PromptIDs []string `json:"prompt_ids,omitempty"`
	Groups    []*Group `json:"groups"`

	// Prompts are the prompt ids seen, in natural order, with their names.
	Prompts []Prompt `json:"-"`
	// Matrix holds the prompt x group cells present, by group index (like
	// Groups), then prompt id: for the first MaxPlotted groups in ranking
	// order, the most any report shows (report.html's matrix, summary.md's
	// first MaxMatrixGroups); nil for the others, whose cells are let go
	// once their figures are made (a run of 100,000 one-cell groups).
	Matrix []*Cells `json:"-"`
	// Failures are the failed cells (the first MaxFailures of them, sorted).
	Failures []Failure `json:"-"`
	// Causes are every failed cell grouped by root cause (prompt and kind
	// of failure), as bench compare groups a regression's cells: most
	// cells first within failed checks, errors, checks without a verdict,
	// cells that never reached the model.
	Causes    []*Cause `json:"-"`
	NFailures int      `json:"-"`

	// path and counted are results.jsonl and which of its lines the
	// summary counted (each cell's last), for EachCounted; set by LoadEach.
	path    string
	counted func(line int) bool
	// dropped counts the groups DropGroups let go; droppedCold are their
	// ColdWarnings, droppedCost says one of them had a cost.
	dropped     int
	droppedCold []string
	droppedCost bool
}

// DropGroups lets go of every group past the terminal table's first
// MaxTableRows in ranking order, keeping what the table and ColdWarnings
// say of them (how many there are, their warnings, whether one had a
// cost). A rebuild of a run with very many groups calls it once every
// file that lists the groups is written, before junit.xml's pass: a group
// is about a kilobyte, 100 MB for a run of 100,000 one-cell groups (issue
// 21, item 7). Groups then lists the groups kept; the summary's other
// readers (EachCounted, Prompts) are unchanged.
func (s *Summary) DropGroups() {
	if len(s.Groups) <= MaxTableRows {
		return
	}
	gs := ranked(s)
	keep := make(map[*Group]bool, MaxTableRows)
	for _, g := range gs[:MaxTableRows] {
		keep[g] = true
	}
	for _, g := range gs[MaxTableRows:] {
		if w := coldWarning(g); w != "" {
			s.droppedCold = append(s.droppedCold, w)
		}
		s.droppedCost = s.droppedCost || g.CostUSDTotal != nil
	}
	kept := make([]*Group, 0, MaxTableRows)
	for _, g := range s.Groups {
		if keep[g] {
			kept = append(kept, g)
		}
	}
	s.dropped += len(s.Groups) - len(kept)
	s.Groups, s.Matrix = kept, nil
}

// DropDetail lets go of what only summary.md and report.html need (the
// pass matrix, the failures, the plotted distributions), keeping the
// groups with their figures and the prompts: what the terminal table and
// answers.html read. A rebuild of a run with very many groups calls it once
// those files are written, before answers.html's and junit.xml's passes.
//
// It also lets go of the tool-use tier (tiers.json's, 352 bytes a group)
// of every group past the terminal table's MaxTableRows, in Ranked's
// order: the table shows the tiers of those it lists only.
func (s *Summary) DropDetail() {
	s.Matrix, s.Failures = nil, nil
	for _, g := range s.Groups {
		g.Dists = nil
	}
	if len(s.Groups) > MaxTableRows {
		for _, g := range ranked(s)[MaxTableRows:] {
			g.Tier = nil
		}
	}
}

// EachCounted reads results.jsonl again and hands fn the records the
// summary counted, each cell's last, as LoadEach's second pass does: for a
// report whose data is better not held beside the summary's in one pass (a
// run of very many groups). The record is reused between calls, its bulky
// fields empty. A summary not built by LoadEach has nothing to read.
func (s *Summary) EachCounted(fn func(*results.Record)) error {
	return s.EachCountedLine(true, func(_ int, r *results.Record) { fn(r) })
}

// EachCountedLine is EachCounted with each record's line in results.jsonl,
// and its bulky fields too unless skipBulk (all but parsed_output and
// provider_metrics, results.Reports): a report of every answer
// (answers.html) then sees each cell once, with no index of the cells to
// find a later record of one.
func (s *Summary) EachCountedLine(skipBulk bool, fn func(line int, r *results.Record)) error {
	if s.counted == nil {
		return fmt.Errorf("report: the summary of %s was not read from a run directory", s.RunID)
	}
	o := results.ScanOptions{Detail: results.Reports, Lines: s.counted}
	if skipBulk {
		o.Detail = results.Aggregates
	}
	_, _, err := results.ScanFile(s.path, o, func(line int, r *results.Record) error {
		fn(line, r)
		return nil
	})
	return err
}

// FromRunDir says the summary was read from a run directory (LoadEach):
// EachCounted and EachCountedLine can read its records again.
func (s *Summary) FromRunDir() bool { return s.counted != nil }

// Prompt is a prompt id and its name.
type Prompt struct {
	ID, Name string
}

// Cells are one group's pass-matrix cells by prompt id, only those the run
// has: a list while there are few (a run of 100,000 one-cell groups holds
// no map for each), indexed by a map past maxListedCells.
type Cells struct {
	ids   []string
	cells []*MatrixCell
	index map[string]int32
}

// maxListedCells is how many cells a group finds by scanning its list
// before it indexes them.
const maxListedCells = 8

// Get returns the cell of the prompt, nil when the group has none.
func (c *Cells) Get(promptID string) *MatrixCell {
	if c == nil {
		return nil
	}
	if c.index != nil {
		if i, ok := c.index[promptID]; ok {
			return c.cells[i]
		}
		return nil
	}
	for i, id := range c.ids {
		if id == promptID {
			return c.cells[i]
		}
	}
	return nil
}

// Len is how many cells the group has.
func (c *Cells) Len() int {
	if c == nil {
		return 0
	}
	return len(c.ids)
}

// PromptIDs are the prompts the group has cells of, in the order first seen.
func (c *Cells) PromptIDs() []string {
	if c == nil {
		return nil
	}
	return c.ids
}

// inOrder are the group's prompt ids in the run's prompt order (natural
// order, as Summary.Prompts).
func (c *Cells) inOrder() []string {
	ids := slices.Clone(c.PromptIDs())
	slices.SortFunc(ids, func(a, b string) int {
		switch {
		case naturalLess(a, b):
			return -1
		case naturalLess(b, a):
			return 1
		}
		return 0
	})
	return ids
}

// add returns the prompt's cell, made when the group has none.
func (c *Cells) add(promptID string) *MatrixCell {
	if m := c.Get(promptID); m != nil {
		return m
	}
	m := &MatrixCell{}
	c.ids = append(c.ids, strings.Clone(promptID))
	c.cells = append(c.cells, m)
	switch {
	case c.index != nil:
		c.index[c.ids[len(c.ids)-1]] = int32(len(c.ids) - 1)
	case len(c.ids) > maxListedCells:
		c.index = make(map[string]int32, len(c.ids))
		for i, id := range c.ids {
			c.index[id] = int32(i)
		}
	}
	return m
}

// MatrixCell counts one prompt's cells in one group.
type MatrixCell struct {
	Total, Success, Judged, Passed int
	// CheckErrors counts the successful cells an external check gave no
	// verdict on (check_errors, objective_pass null): not judged, and not
	// "no check" either.
	CheckErrors int
	// Why is the most frequent reason a cell did not succeed.
	Why map[string]int
	// Counted are the cells that reached the model (status ok or error,
	// not cancelled). Agentic says the prompt is an agentic task;
	// Completed counts its counted cells that completed it.
	Counted, Completed int
	Agentic            bool
	// Unsafe counts the counted cells with an unsafe action; UnsafeTools
	// names the tools they called unsafely, in order of first call.
	Unsafe      int
	UnsafeTools []string
	// NotRun counts the cells that never reached the model (skipped as
	// unavailable, rate-limited, refused for auth).
	NotRun int
	// Detail is what report.html shows on hover: the first failed check's
	// violation, or when no check failed, the first error message; one
	// line, at most MaxDetail bytes.
	Detail string
	// violation says Detail is a failed check's.
	violation bool
}

// MaxDetail bounds a matrix cell's Detail: enough for a violation, not a
// whole answer.
const MaxDetail = 240

// detail counts r into the cell's NotRun and Detail.
func (c *MatrixCell) detail(r *results.Record, success bool) {
	switch r.AvailabilityStatus {
	case results.StatusSkippedUnavailable, results.StatusRateLimited, results.StatusAuthError:
		c.NotRun++
	}
	failedCheck := success && r.ObjectivePass != nil && !*r.ObjectivePass
	switch {
	case failedCheck && !c.violation:
		// A failed check says more about the model than an error does.
		c.Detail = shorten(derefStr(r.Violation), MaxDetail)
		if c.Detail == "" {
			c.Detail = "failed its check"
		}
		c.violation = true
	case !success && c.Detail == "":
		c.Detail = shorten(firstOf(r.ErrorMessage, r.Violation, r.FailureType, &r.AvailabilityStatus), MaxDetail)
	case success && r.ObjectivePass == nil && len(r.CheckErrors) > 0 && c.Detail == "":
		e := r.CheckErrors[0]
		c.Detail = shorten(e.Type+": "+e.Message, MaxDetail)
	}
}

func derefStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func firstOf(ss ...*string) string {
	for _, s := range ss {
		if s != nil && *s != "" {
			return *s
		}
	}
	return ""
}

// Failure is a cell that did not succeed or failed its validator, or (for
// cells that never reached the model) one line per identical reason.
type Failure struct {
	Group      string
	PromptID   string
	Repetition int
	Status     string
	Type       string
	Detail     string
	// Count is how many cells share this line (cells that never ran).
	Count int
}

// MaxFailures bounds the failures summary.md lists; the rest are counted.
const MaxFailures = 200

type groupKey struct {
	provider, model, thinking string
	hasThinking               bool
}

// aggregator owns all the aggregation: one Add per record, in any order.
type aggregator struct {
	runID    string
	nRecords int
	groups   map[groupKey]*acc
	prompts  map[string]string
	failures []Failure
	nFail    int
	// notRun collapses identical reasons of cells that never reached a model.
	notRun map[Failure]int
	// causes groups every failed cell by root cause (report.html's
	// failures); maxRep is each prompt's highest repetition, for the
	// causes' "all repetitions".
	causes *Causes
	maxRep map[string]int
	// last is the group of the last record.
	last *acc
	// slo is the run's slo: block, for goodput (nil: none).
	slo *slo.SLO
	// sp holds the estimators' values past spillAt.
	sp *spill
}

type acc struct {
	// n are the group's counts while the records are read; g the Group
	// summary makes of them (nil before). A Group is 872 bytes, mostly
	// figures made at the end: a run of 100,000 one-cell groups reads
	// into 100,000 counts of 352 bytes instead (issue 21, item 7).
	n groupCounts
	g *Group
	// The estimators are held by value: three allocations a group fewer
	// (a run of 100,000 one-cell groups); the reasoning rate, which most
	// groups lack, only once there is one. The call checks are counted in
	// the Group itself (CallChecks.add): acc stays in a smaller class.
	lat, ttft, tps   exact
	rtps             *exact
	judged, passed   int
	minStart, maxEnd int64
	tool             *Tier
	cats             map[string]*Category
	turns            map[int]*turnAcc
	cells            *Cells
	hasTimes         bool
	cap              *capacityAcc
	cost             costAcc
}

func newAggregator() *aggregator {
	return &aggregator{groups: map[groupKey]*acc{}, prompts: map[string]string{}, notRun: map[Failure]int{},
		causes: NewCauses("failure"), maxRep: map[string]int{}, sp: &spill{}}
}

// close drops the estimators' tape (summary does, once it has read them).
func (a *aggregator) close() { a.sp.tape.Close() }

// Add counts one record. It keeps no reference to r.
func (a *aggregator) Add(r *results.Record) {
	a.nRecords++
	if a.runID == "" {
		a.runID = r.RunID
	}
	g := a.last
	if g == nil || !g.holds(r) {
		g = a.group(r)
		a.last = g
	}
	if name, ok := a.prompts[r.PromptID]; !ok || name == "" {
		a.prompts[r.PromptID] = r.PromptName
	}
	if m, ok := a.maxRep[r.PromptID]; !ok || r.Repetition > m {
		a.maxRep[r.PromptID] = r.Repetition
	}

	gr := &g.n
	gr.NTotal++
	switch r.AvailabilityStatus {
	case "ok":
		gr.NOK++
	case "skipped_unavailable":
		gr.NSkippedUnavailable++
	case "rate_limited":
		gr.NRateLimited++
	case "error":
		gr.NError++
	case "auth_error":
		gr.NAuthError++
	}
	success := r.AvailabilityStatus == "ok" && r.Success
	if r.ColdStart {
		gr.NColdStart++
	}
	// A load profile's warm-up stage warms the server: like a cold start,
	// it counts for quality, not for speed.
	speed := !r.ColdStart && r.Stage != "warmup"
	a.addCapacity(g, r, speed)
	if success && speed {
		// A cold start measures the server loading the model, not the
		// model: its speed stays out of the figures.
		g.lat.Add(float64(r.E2EMS))
		if r.TTFTMS != nil {
			g.ttft.Add(float64(*r.TTFTMS))
		}
		if r.TokensPerS != nil {
			g.tps.Add(*r.TokensPerS)
		}
		if r.ReasoningTokensPerS != nil {
			if g.rtps == nil {
				g.rtps = newExact(a.sp)
			}
			g.rtps.Add(*r.ReasoningTokensPerS)
		}
	}
	if success {
		gr.NSuccess++
		if r.ObjectivePass != nil {
			g.judged++
			if *r.ObjectivePass {
				g.passed++
			}
		} else if len(r.CheckErrors) > 0 {
			gr.NCheckError++
		}
	}
	if r.StartedAtMS > 0 && r.EndedAtMS > 0 {
		if !g.hasTimes || r.StartedAtMS < g.minStart {
			g.minStart = r.StartedAtMS
		}
		if !g.hasTimes || r.EndedAtMS > g.maxEnd {
			g.maxEnd = r.EndedAtMS
		}
		g.hasTimes = true
	}

	if len(r.ExpectedTools) > 0 || r.Injection != nil {
		if g.tool == nil {
			g.tool = newTier(r)
		}
		g.tool.add(r)
	}
	if r.Injection != nil {
		// Held by the group's tier, which writes it to tiers.json: the
		// accumulator costs no field of its own in every group.
		if g.tool.Injection == nil {
			g.tool.Injection = &Injection{}
		}
		g.tool.Injection.add(r)
	}
	gr.Agentic.add(r)
	gr.CallChecks.add(r)
	g.cats = addCategory(g.cats, r)
	g.turns = addTurn(g.turns, r, success, speed)
	gr.Cost.add(&g.cost, r)
	gr.Throttle = addThrottle(gr.Throttle, r)

	c := g.cells.add(r.PromptID) // its Why made at the first cell that did not succeed
	c.detail(r, success)
	c.Total++
	if counted(r) {
		c.Counted++
		if len(r.TurnDetails) > 0 {
			c.Agentic = true
			if Completed(r) {
				c.Completed++
			}
		}
		if own := ownUnsafe(r); len(own) > 0 {
			c.Unsafe++
			for _, n := range own {
				if !slices.Contains(c.UnsafeTools, n) {
					c.UnsafeTools = append(c.UnsafeTools, n)
				}
			}
		}
	}
	if success {
		c.Success++
		if r.ObjectivePass != nil {
			c.Judged++
			if *r.ObjectivePass {
				c.Passed++
			}
		} else if len(r.CheckErrors) > 0 {
			c.CheckErrors++
		}
	} else {
		if c.Why == nil {
			c.Why = map[string]int{}
		}
		c.Why[whyLabel(r)]++
	}

	a.addFailure(r, gr, success)
}

// groupCounts are the fields of a Group counted record by record, named
// as in Group so Add reads the same either way; summary copies them into
// the group's Group.
type groupCounts struct {
	Provider      string
	Model         string
	ThinkingLevel *string

	NTotal, NOK, NSuccess, NSkippedUnavailable, NRateLimited, NError, NAuthError int
	NColdStart, NCheckError                                                      int

	Agentic    Agentic
	CallChecks CallChecks
	Cost       Cost
	// Throttle is made at the group's first throttled record.
	Throttle *Throttle
}

// Label is the group's label, as Group.Label.
func (c *groupCounts) Label() string {
	g := Group{Provider: c.Provider, Model: c.Model, ThinkingLevel: c.ThinkingLevel}
	return g.Label()
}

// group is the Group of the counts, its figures still to make.
func (c *groupCounts) group() *Group {
	return &Group{Provider: c.Provider, Model: c.Model, ThinkingLevel: c.ThinkingLevel,
		NTotal: c.NTotal, NOK: c.NOK, NSuccess: c.NSuccess, NSkippedUnavailable: c.NSkippedUnavailable, NRateLimited: c.NRateLimited,
		NError: c.NError, NAuthError: c.NAuthError, NColdStart: c.NColdStart, NCheckError: c.NCheckError,
		Agentic: c.Agentic, CallChecks: c.CallChecks, Cost: c.Cost, Throttle: c.Throttle}
}

// newTier is the tool-use tier of r's group, made at its first cell whose
// prompt expects tools (a group with none gets its unclassified tier in
// summary: no Tier held a group while reading).
func newTier(r *results.Record) *Tier {
	return &Tier{Provider: r.Provider, Model: r.Model, ThinkingLevel: cloneStr(r.ThinkingLevel), Excluded: noneExcluded}
}

// group finds or makes the record's group.
func (a *aggregator) group(r *results.Record) *acc {
	k := groupKey{provider: r.Provider, model: r.Model}
	if r.ThinkingLevel != nil {
		k.thinking, k.hasThinking = *r.ThinkingLevel, true
	}
	g := a.groups[k]
	if g == nil {
		g = &acc{
			n:     groupCounts{Provider: r.Provider, Model: r.Model, ThinkingLevel: cloneStr(r.ThinkingLevel)},
			cells: &Cells{},
			lat:   exact{sp: a.sp}, ttft: exact{sp: a.sp}, tps: exact{sp: a.sp},
		}
		a.groups[k] = g
	}
	return g
}

// holds says whether r belongs to the group: records of one suite mostly
// come together, so Add checks the last group before the map.
func (g *acc) holds(r *results.Record) bool {
	gr := &g.n
	if r.Provider != gr.Provider || r.Model != gr.Model || (r.ThinkingLevel == nil) != (gr.ThinkingLevel == nil) {
		return false
	}
	return r.ThinkingLevel == nil || *r.ThinkingLevel == *gr.ThinkingLevel
}

// whyLabel is a short reason a cell did not succeed, for the matrix.
func whyLabel(r *results.Record) string {
	if r.FailureType != nil && *r.FailureType != "" {
		return *r.FailureType
	}
	return r.AvailabilityStatus
}

func (a *aggregator) addFailure(r *results.Record, g *groupCounts, success bool) {
	failedCheck := success && r.ObjectivePass != nil && !*r.ObjectivePass
	unjudged := success && r.ObjectivePass == nil && len(r.CheckErrors) > 0
	if success && !failedCheck && !unjudged {
		return
	}
	a.causes.Add(failureCause(r, g, failedCheck, unjudged))
	switch r.AvailabilityStatus {
	case "skipped_unavailable", "rate_limited", "auth_error":
	default:
		if len(a.failures) >= MaxFailures {
			a.nFail++ // counted, not listed: no need to describe it
			return
		}
	}
	f := Failure{Group: g.Label(), PromptID: r.PromptID, Repetition: r.Repetition, Status: r.AvailabilityStatus}
	if r.FailureType != nil {
		f.Type = *r.FailureType
	}
	switch {
	case failedCheck:
		f.Type = "violation"
		if r.Violation != nil {
			f.Detail = *r.Violation
		}
	case unjudged:
		// A check that gave no verdict: not a failure of the model, and
		// not a pass either.
		f.Type, f.Detail = r.CheckErrors[0].Type, r.CheckErrors[0].Message
	case r.ErrorMessage != nil:
		f.Detail = *r.ErrorMessage
	case r.Violation != nil:
		f.Detail = *r.Violation
	}
	f.Detail = shorten(f.Detail, 300)
	switch r.AvailabilityStatus {
	case "skipped_unavailable", "rate_limited", "auth_error":
		// The model was never asked: one line per reason, not per cell.
		f.PromptID, f.Repetition = "", 0
		if _, ok := a.notRun[f]; !ok {
			a.nFail++
		}
		a.notRun[f]++
		return
	}
	a.nFail++
	if len(a.failures) < MaxFailures {
		a.failures = append(a.failures, f)
	}
}

// failureCauseRank orders the causes of failure: failed checks, errors,
// checks without a verdict, then cells that never reached the model.
var failureCauseRank = []string{"quality", "error", "check error", "availability"}

// failureCauses are the failed cells grouped by cause, each counted out
// of its prompt's cells: the groups that ran the prompt (from their
// matrix cells, read before the summary lets them go) and the
// repetitions 0 to the prompt's highest.
func (a *aggregator) failureCauses(accs []*acc) []*Cause {
	scopes := map[string]*CauseScope{}
	for _, p := range a.causes.Prompts() {
		sc := &CauseScope{}
		for r := range a.maxRep[p] + 1 {
			sc.Reps = append(sc.Reps, r)
		}
		scopes[p] = sc
	}
	if len(scopes) == 0 {
		return nil
	}
	for _, g := range accs {
		if g.cells == nil {
			continue
		}
		var group *CauseGroup
		for i, id := range g.cells.ids {
			sc := scopes[id]
			if sc == nil {
				continue
			}
			if group == nil {
				group = &CauseGroup{Label: g.n.Label(), Provider: g.n.Provider, Model: g.n.Model + "\x00" + orEmpty(g.n.ThinkingLevel)}
			}
			sc.NCells += g.cells.cells[i].Total
			sc.Groups = append(sc.Groups, *group)
		}
	}
	for p, sc := range scopes {
		a.causes.Scope(p, sc)
	}
	list := a.causes.List()
	SortCauses(list, func(c *Cause) int { return slices.Index(failureCauseRank, c.Category) })
	a.causes = nil
	return list
}

// failureCause is a failed cell as report.html groups it: by prompt and
// the kind of failure (did not reach the model, an error of a type, a
// failed check, a check that gave no verdict), the most frequent detail
// speaking for the cause.
func failureCause(r *results.Record, g *groupCounts, failedCheck, unjudged bool) CauseCell {
	c := CauseCell{PromptID: r.PromptID, Repetition: r.Repetition,
		Group: CauseGroup{Label: g.Label(), Provider: g.Provider, Model: g.Model + "\x00" + orEmpty(g.ThinkingLevel)}}
	ft := orEmpty(r.FailureType)
	switch {
	case failedCheck:
		c.Category, c.Kind, c.What = "quality", "check", "fails its check: "+shorten(orEmpty(r.Violation), 120)
	case unjudged:
		ce := r.CheckErrors[0]
		c.Category, c.Kind, c.What = "check error", "check error "+ce.Type, "no verdict from its "+ce.Type+" check: "+shorten(ce.Message, 120)
	case r.AvailabilityStatus == "skipped_unavailable", r.AvailabilityStatus == "rate_limited", r.AvailabilityStatus == "auth_error":
		c.Category, c.Kind, c.What = "availability", "availability "+r.AvailabilityStatus, "did not reach the model: "+r.AvailabilityStatus
		if ft != "" {
			c.What += " (" + ft + ")"
		}
	default:
		if ft == "" {
			ft = r.AvailabilityStatus
		}
		c.Category, c.Kind, c.What = "error", "error "+ft, ft
		if msg := orEmpty(r.ErrorMessage); msg != "" {
			c.What += ": " + shorten(msg, 120)
		}
	}
	return c
}

func orEmpty(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// shorten cuts s to n bytes at a rune boundary and puts it on one line.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func cloneStr(s *string) *string {
	if s == nil {
		return nil
	}
	v := *s
	return &v
}

// summary turns the counters into a Summary, groups sorted by provider,
// model and thinking level (null first).
func (a *aggregator) summary() *Summary {
	defer a.close()
	s := &Summary{RunID: a.runID, Source: rundir.ResultsFile, NRecords: a.nRecords, Methods: methods, SkippedLines: []results.Problem{}, Groups: []*Group{}}
	// The accumulators in a list, the maps let go: 100,000 groups' and
	// prompts' entries are garbage before the groups are made.
	accs := make([]*acc, 0, len(a.groups))
	for _, g := range a.groups {
		accs = append(accs, g)
	}
	a.groups, a.last = nil, nil
	keyOf := func(g *acc) groupKey { return keyOfGroup(g.n.Provider, g.n.Model, g.n.ThinkingLevel) }
	sort.Slice(accs, func(i, j int) bool { return keyLess(keyOf(accs[i]), keyOf(accs[j])) })
	s.Causes = a.failureCauses(accs)
	s.Groups = make([]*Group, 0, len(accs))
	if len(a.prompts) > 0 {
		s.Prompts = make([]Prompt, 0, len(a.prompts))
	}
	for id, name := range a.prompts {
		s.Prompts = append(s.Prompts, Prompt{ID: id, Name: name})
	}
	a.prompts = nil
	sort.Slice(s.Prompts, func(i, j int) bool { return naturalLess(s.Prompts[i].ID, s.Prompts[j].ID) })
	// The plotted distributions (303 numbers a group) are made for the
	// groups report.html plots, the first MaxPlotted in ranking order: a
	// run of 100,000 one-cell groups does not hold 30 million numbers. The
	// values behind them are kept, while the groups are walked, only for
	// the best MaxPlotted so far (top); every other group's accumulator is
	// let go as soon as its figures are made, and its pass-matrix cells
	// with it (no report shows them).
	top := &topGroups{}
	s.Matrix = make([]*Cells, len(accs))
	for i, g := range accs {
		accs[i] = nil
		gr := g.n.group()
		g.n = groupCounts{}
		g.g = gr
		gr.SuccessRateOK = rate(gr.NSuccess, gr.NOK)
		gr.ObjectivePassRate = rate(g.passed, g.judged)
		gr.NPassed, gr.NJudged, gr.ObjectivePassCI = g.passed, g.judged, ci(g.passed, g.judged)
		gr.NFailedCheck = g.judged - g.passed
		if g.hasTimes {
			w := g.maxEnd - g.minStart
			gr.WallClockMS = &w
		}
		gr.LatencyMS, gr.TTFTMS, gr.TokensPerS, gr.ReasoningTokensPerS = g.lat.Stats(), g.ttft.Stats(), g.tps.Stats(), g.rtps.stats()
		gr.LatencyMS.P50CI = g.lat.medianCI()
		g.rtps = nil
		gr.Agentic.finish()
		gr.CallChecks.finish()
		finishCategories(g.cats)
		gr.Categories = g.cats
		gr.ConversationTurns, g.turns = finishTurns(g.turns), nil
		gr.Consistency = consistency(g.cells)
		gr.Cost.finish(&g.cost)
		for _, p := range gr.Cost.Problems {
			s.Warnings = append(s.Warnings, gr.Label()+": "+p)
		}
		a.finishCapacity(g)
		t := g.tool // the group's own: the aggregator is dropped after this
		if t == nil {
			t = &Tier{Provider: gr.Provider, Model: gr.Model, ThinkingLevel: gr.ThinkingLevel, Excluded: noneExcluded}
		}
		t.classify()
		if t.Injection != nil {
			t.Injection.finish()
		}
		t.route(&gr.Agentic, &gr.CallChecks, unsafeTasks(g.cells))
		t.Consistency, t.Categories, gr.Injection = gr.Consistency, gr.Categories, t.Injection
		gr.ToolUse = t.toolUse()
		gr.Tier = t
		s.Groups = append(s.Groups, gr)
		top.offer(ranking{g, i}, MaxPlotted)
	}
	for _, r := range top.list {
		g := r.acc
		g.g.Dists = &Dists{TTFTMS: g.ttft.Dist(), LatencyMS: g.lat.Dist(), TokensPerS: g.tps.Dist()}
		s.Matrix[r.index] = g.cells
	}
	for _, p := range s.Prompts {
		s.PromptIDs = append(s.PromptIDs, p.ID)
	}

	s.Failures = append(s.Failures, a.failures...)
	for f, n := range a.notRun {
		f.Count = n
		s.Failures = append(s.Failures, f)
	}
	sort.SliceStable(s.Failures, func(i, j int) bool {
		a, b := s.Failures[i], s.Failures[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.PromptID != b.PromptID {
			return naturalLess(a.PromptID, b.PromptID)
		}
		if a.Repetition != b.Repetition {
			return a.Repetition < b.Repetition
		}
		return a.Status+a.Type+a.Detail < b.Status+b.Type+b.Detail
	})
	s.NFailures = a.nFail
	return s
}

// keyLess orders groups as summary.json lists them: by provider, model and
// thinking level (null first, then by effort).
func keyLess(a, b groupKey) bool {
	if a.provider != b.provider {
		return a.provider < b.provider
	}
	if a.model != b.model {
		return a.model < b.model
	}
	if a.hasThinking != b.hasThinking {
		return !a.hasThinking
	}
	return levelRank(a.thinking) < levelRank(b.thinking) || (levelRank(a.thinking) == levelRank(b.thinking) && a.thinking < b.thinking)
}

func keyOfGroup(provider, model string, thinking *string) groupKey {
	k := groupKey{provider: provider, model: model}
	if thinking != nil {
		k.thinking, k.hasThinking = *thinking, true
	}
	return k
}

// GroupFinder finds a record's group in Summary.Groups: by binary search
// when the groups are in summary.json's order (a summary built from
// results.jsonl), else through a map. It holds the groups' keys, not the
// groups: a report that looks up every record of a run of 100,000 groups
// (answers.html) holds no map of them, and the summary may let its groups
// go (DropGroups) while the finder is used.
type GroupFinder struct {
	keys  []groupKey
	byKey map[groupKey]int
}

// NewGroupFinder is the finder of s's groups.
func NewGroupFinder(s *Summary) *GroupFinder {
	f := &GroupFinder{keys: make([]groupKey, len(s.Groups))}
	sorted := true
	for i, g := range s.Groups {
		f.keys[i] = keyOfGroup(g.Provider, g.Model, g.ThinkingLevel)
		sorted = sorted && (i == 0 || keyLess(f.keys[i-1], f.keys[i]))
	}
	if !sorted {
		f.byKey = make(map[groupKey]int, len(f.keys))
		for i, k := range f.keys {
			f.byKey[k] = i
		}
		f.keys = nil
	}
	return f
}

// Find returns the index in Summary.Groups of the group of provider,
// model and thinking level, or -1 when the summary has none.
func (f *GroupFinder) Find(provider, model string, thinking *string) int {
	k := keyOfGroup(provider, model, thinking)
	if f.byKey != nil {
		if i, ok := f.byKey[k]; ok {
			return i
		}
		return -1
	}
	i := sort.Search(len(f.keys), func(i int) bool { return !keyLess(f.keys[i], k) })
	if i < len(f.keys) && f.keys[i] == k {
		return i
	}
	return -1
}

// RankedIndex are the indexes in s.Groups of Ranked(s)'s groups, in its
// order: Ranked(s)[r] is s.Groups[RankedIndex(s)[r]].
func RankedIndex(s *Summary) []int {
	idx := make([]int, len(s.Groups))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return rankLess(s.Groups[idx[i]], s.Groups[idx[j]]) })
	return idx
}

// levelRank orders thinking levels by effort rather than alphabetically.
func levelRank(l string) int {
	switch l {
	case "low":
		return 0
	case "medium":
		return 1
	case "high":
		return 2
	case "xhigh":
		return 3
	}
	return 4
}

// NaturalLess orders prompt ids so that P2 comes before P10, as every
// report lists them.
func NaturalLess(a, b string) bool { return naturalLess(a, b) }

// naturalLess orders ids so that P2 comes before P10.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da > 0 && db > 0 {
			// Compare the numbers: fewer digits (zeros trimmed) is smaller.
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitPrefix(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// Summarize builds the summary of records held in memory (no resources,
// no skipped lines). Load is the streaming form over a run directory.
func Summarize(records []results.Record) *Summary {
	a := newAggregator()
	for i := range records {
		a.Add(&records[i])
	}
	s := a.summary()
	s.GeneratedAt = time.Now().UTC()
	return s
}

// LoadEach reads runDir/results.jsonl, streaming, and the suites' resource
// files, and returns the summary; malformed lines are in SkippedLines, and
// only I/O failure is an error. It also hands the records to the other reports of a
// run (report.html's samples, junit.xml) in the same pass, instead of their
// reading results.jsonl again, counting each cell once as the summary does:
// start (when not nil) is called before each pass over results.jsonl and
// returns the func that pass hands records to (or nil). The record is
// reused between calls and its bulky fields (raw_output, reasoning,
// parsed_output, tool_call_details, provider_metrics) are empty; the func
// must copy what it keeps.
// There is one pass, or, when the file records some cell more than once, a
// second one that hands each cell's last record only (after a read that
// finds which lines those are, dedupe.go): what the first pass's func
// collected is then to be dropped.
func LoadEach(runDir string, start func() func(*results.Record)) (*Summary, error) {
	o := LoadOptions{}
	if start != nil {
		o.Start = func() func(int, *results.Record) {
			if f := start(); f != nil {
				return func(_ int, r *results.Record) { f(r) }
			}
			return nil
		}
	}
	return Load(runDir, o)
}

// LoadOptions say what Load hands the other reports of a run.
type LoadOptions struct {
	// Start is LoadEach's start, its func given each record's line in
	// results.jsonl too.
	Start func() func(line int, r *results.Record)
	// Answers says the records handed carry answers.html's fields too
	// (results.Reports: raw_output, reasoning, tool_call_details; only
	// parsed_output and provider_metrics are left empty), so the page is
	// made in the summary's pass rather than in a read of its own. Their
	// bulky texts are borrowed (results.ScanOptions.Borrow): valid only
	// during the call.
	Answers bool
}

// Load is LoadEach with its options: one read of results.jsonl for every
// report of the run (issue 31).
func Load(runDir string, o LoadOptions) (*Summary, error) {
	slo, err := readSLO(runDir)
	if err != nil {
		return nil, fmt.Errorf("report %s: %w", runDir, err)
	}
	so := results.ScanOptions{Detail: results.Aggregates}
	if o.Answers {
		so = results.ScanOptions{Detail: results.Reports, Borrow: true}
	}
	a, d, problems, nProblems, err := aggregate(rundir.Path(runDir, rundir.ResultsFile), slo, so, o.Start)
	if err != nil {
		a.close()
		return nil, fmt.Errorf("report %s: %w", runDir, err)
	}
	s := a.summary()
	if err := a.sp.err; err != nil {
		return nil, fmt.Errorf("report %s: the figures' values: %w", runDir, err)
	}
	if slo != nil {
		s.SLO = sloText(slo)
	}
	searches, err := readSearches(runDir)
	if err != nil {
		s.Warnings = append(s.Warnings, err.Error())
	}
	attachSearches(s, searches, slo)
	s.path, s.counted = rundir.Path(runDir, rundir.ResultsFile), d.last
	if d.lines > 0 {
		s.NDuplicateLines = d.lines
		s.Warnings = append(s.Warnings, d.warning())
	}
	s.GeneratedAt = time.Now().UTC()
	if problems != nil {
		s.SkippedLines = problems
	}
	s.NSkippedLines = nProblems
	if s.RunID == "" {
		s.RunID = filepath.Base(runDir)
	}
	concurrency := readConcurrency(runDir)
	for _, g := range s.Groups {
		if n, ok := concurrency[g.Provider]; ok && g.Throttle != nil {
			g.Throttle.ConfiguredLimit = &n
		}
		rec, err := rundir.ReadSuite(runDir, g.Provider, g.Model, g.ThinkingLevel)
		if err != nil {
			// A bad resource file costs its figures, not the report.
			s.Warnings = append(s.Warnings, err.Error())
			continue
		}
		if rec != nil {
			g.ResourcesBefore, g.ResourcesAfter, g.ResourcesPeak = rec.Before, rec.After, rec.Peak
			if w := rec.Warmup; w != nil {
				g.LoadMS, g.WarmupError = round(w.LoadMS), w.Error
			}
		}
		if len(g.Stages) > 0 {
			samples, warns, err := readServer(runDir, g)
			s.Warnings = append(s.Warnings, warns...)
			if err != nil {
				s.Warnings = append(s.Warnings, err.Error())
			}
			attachServer(g, samples)
		}
	}
	return s, nil
}
