package compare

import (
	"encoding/json"
	"fmt"
	"slices"
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
	Message string    `json:"message"`
	Cells   []CellRef `json:"cells"`
	Example *Cell     `json:"-"`
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

// rootCauses groups the cell findings by prompt and kind of change, with
// report.Causes (the grouping report.html's failures use too).
func (c *comparison) rootCauses() {
	t := c.base.tab
	group := func(k cellKey) report.CauseGroup {
		g := groupOf(k)
		return report.CauseGroup{Label: t.label(g), Provider: t.str(g.provider), Model: t.str(g.model) + "\x00" + t.str(g.thinking)}
	}
	causes := report.NewCauses("change")
	var cells []*Cell
	for _, out := range c.res.Cells {
		if !(out.Verdict == Regression || (out.Verdict == Drift && c.opt.failsOn(DriftCat))) {
			continue
		}
		kind, what := causeOf(out)
		causes.Add(report.CauseCell{Category: out.Category, PromptID: out.PromptID, Kind: kind, What: what, Group: group(out.k), Repetition: out.Repetition})
		cells = append(cells, out)
	}
	// The cells of each prompt both runs have: the denominator, and the
	// groups and repetitions "all" means.
	scopes := map[string]*report.CauseScope{}
	for _, p := range causes.Prompts() {
		scopes[p] = &report.CauseScope{}
	}
	for _, out := range c.res.Cells {
		sc := scopes[out.PromptID]
		switch {
		case sc == nil:
			continue
		case out.Verdict == Missing, out.Verdict == New, out.Verdict == Changed:
			continue
		}
		sc.NCells++
		if g := group(out.k); !slices.Contains(sc.Groups, g) {
			sc.Groups = append(sc.Groups, g)
		}
		if !slices.Contains(sc.Reps, out.Repetition) {
			sc.Reps = append(sc.Reps, out.Repetition)
		}
	}
	for p, sc := range scopes {
		causes.Scope(p, sc)
	}
	list := causes.List()
	report.SortCauses(list, func(rc *report.Cause) int {
		r := slices.Index(Categories, rc.Category)
		if !c.opt.failsOn(rc.Category) {
			r += len(Categories)
		}
		return r
	})
	c.res.RootCauses = make([]*RootCause, 0, len(list))
	for _, k := range list {
		rc := &RootCause{Category: k.Category, FailsGate: c.opt.failsOn(k.Category), PromptID: k.PromptID, Kind: k.Kind, What: k.What,
			Variants: k.Variants, NCells: k.NCells, NPrompt: k.NPrompt, Where: k.Where, Message: k.Message, Example: cells[k.Cells[0]]}
		for _, i := range k.Cells {
			out := cells[i]
			rc.Cells = append(rc.Cells, CellRef{Provider: out.Provider, ProviderType: out.ProviderType, Model: out.Model,
				ThinkingLevel: out.ThinkingLevel, Repetition: out.Repetition, Verdict: out.Verdict})
		}
		c.res.RootCauses = append(c.res.RootCauses, rc)
	}
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
	// Suspect is the finding's reason for not being judged (machine
	// busy), "" for a judged one.
	Suspect string
	Cause   *RootCause
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
		rows = append(rows, findingRow{Gate: gateWord(f), Category: f.Category, Scope: f.Scope, Where: findingWhere(f), What: f.Message, FailsGate: f.FailsGate, Suspect: f.Suspect})
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

// cells is how many cells a listed finding covers: a root cause's, 0
// for a group, prompt or stage finding.
func (f findingRow) cells() int {
	if f.Cause != nil {
		return f.Cause.NCells
	}
	return 0
}

func gateWordOf(fails bool) string {
	if fails {
		return "FAIL"
	}
	return "note"
}
