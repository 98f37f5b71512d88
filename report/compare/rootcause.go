package compare

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"bench/internal/record/agentsnap"
	"bench/report"
)

// RootCause is one finding per (prompt, kind of change): the cells whose
// regression (or gating drift) came about the same way, "P1: output
// "Canberra" → "Sydney" in 6/6 cells: both providers, all repetitions".
// Where 18 cells failed for 3 reasons, the gate says 3 things.
type RootCause struct {
	Category  string `json:"category"`
	FailsGate bool   `json:"fails_gate"`
	PromptID  string `json:"prompt_id"`
	// Kind names the kind of change without its values ("output",
	// "turn 2: convert_temperature arguments value", "availability
	// skipped_unavailable"); every cell of the cause has it.
	Kind string `json:"kind"`
	// What is the change as most of its cells have it; Variants counts
	// the different ones (1: every cell changed alike).
	What     string `json:"what"`
	Variants int    `json:"variants"`
	// NCells is how many cells it covers; NPrompt how many cells of the
	// prompt both runs have (and judged against each other).
	NCells  int `json:"n_cells"`
	NPrompt int `json:"n_prompt_cells"`
	// Where says which groups and repetitions the cells are:
	// "both providers, all repetitions".
	Where string `json:"where"`
	// Message is the one line the terminal, compare.md and compare.html
	// show.
	Message string     `json:"message"`
	Cells   []CellRef  `json:"cells"`
	Example *Cell      `json:"-"`
	groups  []groupKey // covered, in first-seen order
}

// CellRef names one cell of a root cause.
type CellRef struct {
	Provider      string  `json:"provider"`
	ProviderType  string  `json:"provider_type"`
	Model         string  `json:"model"`
	ThinkingLevel *string `json:"thinking_level"`
	Repetition    int     `json:"repetition"`
	// Verdict is the cell's (regression or drift).
	Verdict string `json:"verdict"`
}

// causeOf says what kind of change a finding's cell is and what changed,
// from its divergence, its changes and the rules that fired.
func causeOf(c *Cell) (kind, what string) {
	if c.Category == Availability {
		to := ""
		for _, ch := range c.Changes {
			if ch.Path == "availability_status" {
				to = text(ch.To)
			}
		}
		what = "did not reach the model: " + to
		for _, ch := range c.Changes {
			if ch.Path == "failure_type" && text(ch.To) != "" {
				what += " (" + text(ch.To) + ")"
			}
		}
		return "availability " + to, what
	}
	if d := c.Diverged; d != nil {
		return d.Kind, d.String()
	}
	chs := c.shownChanges()
	for _, ch := range chs {
		if ch.Path == "output" {
			what = fmt.Sprintf("output %s → %s", quote(text(ch.From), 60), quote(text(ch.To), 60))
			if why := changeTo(chs, "why"); why != "" {
				what += " (" + oneLine(why, 80) + ")"
			}
			return "output", what
		}
	}
	for _, ch := range chs {
		if ch.Path == "tools[].name" || ch.Path == "expected_tools" {
			return "tool calls", fmt.Sprintf("tool calls %s → %s", listText(ch.From), listText(ch.To))
		}
	}
	for _, ch := range chs {
		if strings.HasPrefix(ch.Path, "tools[") {
			return "tool arguments", fmt.Sprintf("%s %s → %s", ch.Path, compact(ch.From, 60), compact(ch.To, 60))
		}
	}
	if why := changeTo(chs, "why"); why != "" {
		return "check " + strings.Join(c.Reasons, "; "), "pass → fail: " + oneLine(why, 100)
	}
	return strings.Join(c.Reasons, "; "), oneLine(cellSummary(c), 160)
}

func changeTo(chs []agentsnap.Change, path string) string {
	for _, ch := range chs {
		if ch.Path == path {
			return text(ch.To)
		}
	}
	return ""
}

// text is a JSON value as text: a string's contents, anything else as
// its compact JSON.
func text(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	if len(v) == 0 || string(v) == "null" {
		return ""
	}
	return compact(v, 200)
}

func listText(v json.RawMessage) string {
	var l []string
	if json.Unmarshal(v, &l) == nil {
		if len(l) == 0 {
			return "none"
		}
		return strings.Join(l, ", ")
	}
	return compact(v, 60)
}

// rootCauses groups the cell findings by prompt and kind of change.
func (c *comparison) rootCauses() {
	type key struct{ category, prompt, kind string }
	byKey := map[key]*RootCause{}
	whats := map[key]map[string]int{}
	var order []key
	// The cells of each prompt both runs have: the denominator, and the
	// groups and repetitions "all" means.
	promptCells := map[string]int{}
	promptGroups := map[string][]groupKey{}
	promptReps := map[string]map[int]bool{}
	for _, out := range c.res.Cells {
		switch out.Verdict {
		case Missing, New, Changed:
			continue
		}
		p := out.PromptID
		promptCells[p]++
		if gk := groupOf(out.k); !slices.Contains(promptGroups[p], gk) {
			promptGroups[p] = append(promptGroups[p], gk)
		}
		if promptReps[p] == nil {
			promptReps[p] = map[int]bool{}
		}
		promptReps[p][out.Repetition] = true
	}
	for _, out := range c.res.Cells {
		if !(out.Verdict == Regression || (out.Verdict == Drift && c.opt.failsOn(DriftCat))) {
			continue
		}
		kind, what := causeOf(out)
		k := key{out.Category, out.PromptID, kind}
		rc := byKey[k]
		if rc == nil {
			rc = &RootCause{Category: out.Category, FailsGate: c.opt.failsOn(out.Category), PromptID: out.PromptID, Kind: kind, Example: out}
			byKey[k] = rc
			whats[k] = map[string]int{}
			order = append(order, k)
		}
		whats[k][what]++
		rc.NCells++
		rc.Cells = append(rc.Cells, CellRef{Provider: out.Provider, ProviderType: out.ProviderType, Model: out.Model,
			ThinkingLevel: out.ThinkingLevel, Repetition: out.Repetition, Verdict: out.Verdict})
		if gk := groupOf(out.k); !slices.Contains(rc.groups, gk) {
			rc.groups = append(rc.groups, gk)
		}
	}
	c.res.RootCauses = []*RootCause{}
	for _, k := range order {
		rc := byKey[k]
		// The most frequent change speaks for the cause (ties: the first
		// in text order, so the line is stable).
		best, n := "", 0
		for w, m := range whats[k] {
			if m > n || (m == n && w < best) {
				best, n = w, m
			}
		}
		rc.What, rc.Variants = best, len(whats[k])
		rc.NPrompt = promptCells[rc.PromptID]
		rc.Where = c.where(rc, promptGroups[rc.PromptID], promptReps[rc.PromptID])
		rc.Message = fmt.Sprintf("%s: %s", rc.PromptID, rc.What)
		if rc.Variants > 1 {
			rc.Message += fmt.Sprintf(" (and %d other changes of this kind)", rc.Variants-1)
		}
		rc.Message += fmt.Sprintf(" in %d/%d cells: %s", rc.NCells, rc.NPrompt, rc.Where)
		c.res.RootCauses = append(c.res.RootCauses, rc)
	}
	catRank := func(rc *RootCause) int {
		r := slices.Index(Categories, rc.Category)
		if !rc.FailsGate {
			r += len(Categories)
		}
		return r
	}
	sort.SliceStable(c.res.RootCauses, func(i, j int) bool {
		a, b := c.res.RootCauses[i], c.res.RootCauses[j]
		if ra, rb := catRank(a), catRank(b); ra != rb {
			return ra < rb
		}
		if a.NCells != b.NCells {
			return a.NCells > b.NCells
		}
		return report.NaturalLess(a.PromptID, b.PromptID)
	})
}

// where says which of the prompt's groups and repetitions a cause
// covers: "both providers, all repetitions", "ollama/llama3.2:3b,
// repetitions 0, 2".
func (c *comparison) where(rc *RootCause, groups []groupKey, reps map[int]bool) string {
	t := c.base.tab
	var parts []string
	if len(rc.groups) == len(groups) && len(groups) > 1 {
		// Every group: say it by what varies between them.
		providers, models := map[uint32]bool{}, map[string]bool{}
		for _, g := range groups {
			providers[g.provider] = true
			models[t.str(g.model)+"\x00"+t.str(g.thinking)] = true
		}
		switch {
		case len(models) == 1 && len(providers) == 2:
			parts = append(parts, "both providers")
		case len(models) == 1:
			parts = append(parts, fmt.Sprintf("all %d providers", len(providers)))
		case len(groups) == 2:
			parts = append(parts, "both groups")
		default:
			parts = append(parts, fmt.Sprintf("all %d groups", len(groups)))
		}
	} else {
		var labels []string
		for i, g := range rc.groups {
			if i == 4 {
				labels = append(labels, fmt.Sprintf("%d more", len(rc.groups)-4))
				break
			}
			labels = append(labels, t.label(g))
		}
		s := strings.Join(labels, ", ")
		if len(groups) > 1 {
			s += fmt.Sprintf(" (%d of %d groups)", len(rc.groups), len(groups))
		}
		parts = append(parts, s)
	}
	seen := map[int]bool{}
	for _, cr := range rc.Cells {
		seen[cr.Repetition] = true
	}
	switch {
	case len(reps) <= 1:
	case len(seen) == len(reps):
		parts = append(parts, "all repetitions")
	default:
		var rs []int
		for r := range seen {
			rs = append(rs, r)
		}
		sort.Ints(rs)
		var ss []string
		for _, r := range rs {
			ss = append(ss, fmt.Sprint(r))
		}
		parts = append(parts, "repetition"+map[bool]string{true: "s", false: ""}[len(rs) > 1]+" "+strings.Join(ss, ", "))
	}
	return strings.Join(parts, ", ")
}

// rootCauseWhere is the terminal's "where" of a cause: its prompt and how
// many cells.
func rootCauseWhere(rc *RootCause) string {
	return fmt.Sprintf("%s (%s)", rc.PromptID, plural(rc.NCells, "cell", "cells"))
}

// findingRow is one line of the findings tables: a root cause (for the
// cell findings it groups) or a group or prompt finding.
type findingRow struct {
	Gate, Category, Scope, Where, What string
	FailsGate                          bool
	Cause                              *RootCause
}

// findingRows are the rows the terminal, compare.md and compare.html list:
// the root causes in place of the cell findings, then the other findings,
// those that fail the gate first, by category.
func findingRows(r *Result) []findingRow {
	var rows []findingRow
	for _, rc := range r.RootCauses {
		rows = append(rows, findingRow{Gate: gateWordOf(rc.FailsGate), Category: rc.Category, Scope: "cells",
			Where: rootCauseWhere(rc), What: rc.Message, FailsGate: rc.FailsGate, Cause: rc})
	}
	for _, f := range r.Findings {
		if f.Scope == "cell" {
			continue
		}
		rows = append(rows, findingRow{Gate: gateWord(f), Category: f.Category, Scope: f.Scope, Where: findingWhere(f), What: f.Message, FailsGate: f.FailsGate})
	}
	rank := func(x findingRow) int {
		i := slices.Index(Categories, x.Category)
		if !x.FailsGate {
			i += len(Categories)
		}
		return i
	}
	slices.SortStableFunc(rows, func(a, b findingRow) int { return rank(a) - rank(b) })
	return rows
}

func gateWordOf(fails bool) string {
	if fails {
		return "FAIL"
	}
	return "note"
}
