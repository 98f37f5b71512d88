package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"bench/internal/format"
	"bench/internal/record/results"
)

// Agentic-task figures. An agentic cell is one of a prompt with max_turns:
// its record has turn_details. The figures count the agentic cells that
// reached the model, as the tier rule counts tool cells: status ok or
// error, not cancelled.

// RoutingTaskMin is the share of agentic tasks a model must complete to be
// routing-ready.
const RoutingTaskMin = 0.8

// agenticMethods say how the agentic figures are computed (summary.json).
var agenticMethods = AgenticMethods{
	TaskSuccessRate:   "agentic cells (records with turn_details) that reached the model (status ok or error, not cancelled) and completed the task: a final answer, without error, that passed every check (an unsafe action fails a check) / those cells; null when none. task_success_ci is its 95% Wilson score interval",
	MeanTurns:         "mean of turns (model replies, a failed request included) over those cells",
	WrongArgumentRate: "calls with wrong_args (a tool the task's tool_sequence expects, called with arguments that match none of its expected calls) / every call those cells made; null when none",
	UnknownToolRate:   "calls of a tool the task does not offer / every call those cells made; null when none",
	RecoveryRate:      "cells that completed the task / cells in which the model got back a failed call (an error result: a failed first call, arguments no rule takes, an unknown tool); null when none",
}

// AgenticMethods is the agentic part of Methods.
type AgenticMethods struct {
	TaskSuccessRate   string `json:"task_success_rate"`
	MeanTurns         string `json:"mean_turns"`
	WrongArgumentRate string `json:"wrong_argument_rate"`
	UnknownToolRate   string `json:"unknown_tool_rate"`
	RecoveryRate      string `json:"recovery_rate"`
}

// Agentic are a group's agentic-task figures, in summary.json's group
// object. The rates are null when nothing was counted.
type Agentic struct {
	// NAgentic is how many agentic cells counted; NAgenticCompleted how
	// many of them completed their task.
	NAgentic          int      `json:"n_agentic"`
	NAgenticCompleted int      `json:"n_agentic_completed"`
	TaskSuccessRate   *float64 `json:"task_success_rate"`
	// TaskSuccessCI is the 95 % Wilson interval of the task success rate.
	TaskSuccessCI *CI      `json:"task_success_ci"`
	MeanTurns     *float64 `json:"mean_turns"`
	// NAgenticCalls counts every call of those cells; NWrongArgumentCalls
	// and NUnknownToolCalls the wrong-argument and unknown-tool ones.
	NAgenticCalls       int      `json:"n_agentic_calls"`
	NWrongArgumentCalls int      `json:"n_wrong_argument_calls"`
	NUnknownToolCalls   int      `json:"n_unknown_tool_calls"`
	WrongArgumentRate   *float64 `json:"wrong_argument_rate"`
	UnknownToolRate     *float64 `json:"unknown_tool_rate"`
	// NFailedCallCells counts the cells where the model got back a failed
	// call; NRecovered how many of them still completed the task.
	NFailedCallCells int      `json:"n_failed_call_cells"`
	NRecovered       int      `json:"n_recovered"`
	RecoveryRate     *float64 `json:"recovery_rate"`

	turns int
}

// add counts one record if it is an agentic cell that reached the model.
func (a *Agentic) add(r *results.Record) {
	if len(r.TurnDetails) == 0 || !counted(r) {
		return
	}
	a.NAgentic++
	a.turns += r.Turns
	done := Completed(r)
	if done {
		a.NAgenticCompleted++
	}
	failed := false
	for _, t := range r.TurnDetails {
		for _, c := range t.Calls {
			a.NAgenticCalls++
			if c.WrongArgs {
				a.NWrongArgumentCalls++
			}
			if c.Unknown {
				a.NUnknownToolCalls++
			}
			failed = failed || (!c.Unanswered && (c.IsError || c.Unknown))
		}
	}
	if failed {
		a.NFailedCallCells++
		if done {
			a.NRecovered++
		}
	}
}

// finish computes the rates.
func (a *Agentic) finish() {
	a.TaskSuccessRate = rate(a.NAgenticCompleted, a.NAgentic)
	a.TaskSuccessCI = ci(a.NAgenticCompleted, a.NAgentic)
	if a.NAgentic > 0 {
		a.MeanTurns = round(float64(a.turns) / float64(a.NAgentic))
	}
	a.WrongArgumentRate = rate(a.NWrongArgumentCalls, a.NAgenticCalls)
	a.UnknownToolRate = rate(a.NUnknownToolCalls, a.NAgenticCalls)
	a.RecoveryRate = rate(a.NRecovered, a.NFailedCallCells)
}

// counted says whether a cell reached the model and was not cancelled: the
// cells the tier rule and the agentic figures count.
func counted(r *results.Record) bool {
	if r.AvailabilityStatus != results.StatusOK && r.AvailabilityStatus != results.StatusError {
		return false
	}
	return r.FailureType == nil || *r.FailureType != results.FailCancelled
}

// Completed says whether an agentic record completed its task: the loop
// ended with a final answer (a reply without calls) that came back without
// error and passed every check.
func Completed(r *results.Record) bool {
	n := len(r.TurnDetails)
	if n == 0 || !r.Success || (r.ObjectivePass != nil && !*r.ObjectivePass) {
		return false
	}
	last := r.TurnDetails[n-1]
	return last.Error == "" && len(last.Calls) == 0
}

// writeAgentic renders the agentic section of summary.md, when the run has
// agentic cells: the figures per group, then each task's cells passed per
// group (k/n), with pass^k when tasks ran more than once.
func writeAgentic(b *strings.Builder, s *Summary) {
	has, k := false, 0
	for _, g := range s.Groups {
		has = has || g.Agentic.NAgentic > 0
		k = max(k, g.K)
	}
	if !has {
		return
	}
	b.WriteString("## Agentic tasks\n\n")
	b.WriteString("Multi-turn tool use (prompts with max_turns): bench answers each call from the task's script until the model gives a final answer or reaches max_turns. " +
		"A task is completed when the final answer came back without error and passed every check (the trajectory checks included; an unsafe action fails a check). " +
		"Wrong-argument and unknown-tool rates are shares of all calls; recovery is the share of cells that still completed after the model got a failed call back.")
	if k > 1 {
		b.WriteString(" pass^k is the share of tasks completed in every repetition, pass@k in at least one.")
	}
	b.WriteString("\n\n| provider | model | thinking | completed | task success | 95% CI | mean turns | wrong args | unknown tools | recovery |")
	if k > 1 {
		b.WriteString(" pass^k | pass@k |")
	}
	b.WriteString("\n|---|---|---|--:|--:|--:|--:|--:|--:|--:|")
	if k > 1 {
		b.WriteString("--:|--:|")
	}
	b.WriteString("\n")
	groups := ranked(s)
	rows := 0
	for _, g := range groups {
		a := g.Agentic
		if a.NAgentic == 0 {
			continue
		}
		if rows++; rows > MaxTableRows {
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s | %d/%d | %s | %s | %s | %s | %s | %s |",
			md(g.Provider), md(g.Model), level(g.ThinkingLevel), a.NAgenticCompleted, a.NAgentic, pct(a.TaskSuccessRate), ciText(a.TaskSuccessCI), num(a.MeanTurns),
			pct(a.WrongArgumentRate), pct(a.UnknownToolRate), pct(a.RecoveryRate))
		if k > 1 {
			fmt.Fprintf(b, " %s | %s |", pct(g.PassHatK), pct(g.PassAtK))
		}
		b.WriteString("\n")
	}
	moreRows(b, rows, "summary.json")
	b.WriteString("\n")
	writeTaskMatrix(b, groups)
}

// writeTaskMatrix is each agentic task's completed cells out of those that
// reached the model, per group: ✓ in every repetition, ~ in some, ✗ none.
func writeTaskMatrix(b *strings.Builder, groups []*Group) {
	// As the pass matrix: the first MaxMatrixGroups groups with tasks, in
	// ranking order, and the (at most MaxMatrixPrompts) tasks they ran.
	var ids []string
	var cols []*Group
	seen := map[string]bool{}
	moreGroups := 0
	for _, g := range groups {
		if len(g.Tasks) == 0 {
			continue
		}
		if len(cols) == MaxMatrixGroups {
			moreGroups++
			continue
		}
		cols = append(cols, g)
		for _, t := range g.Tasks {
			if !seen[t.PromptID] {
				seen[t.PromptID] = true
				ids = append(ids, t.PromptID)
			}
		}
	}
	if len(cols) == 0 {
		return
	}
	sort.SliceStable(ids, func(i, j int) bool { return naturalLess(ids[i], ids[j]) })
	moreTasks := len(ids) - min(len(ids), MaxMatrixPrompts)
	ids = ids[:len(ids)-moreTasks]
	b.WriteString("Tasks completed per group (completed/cells):\n\n| task |")
	for _, g := range cols {
		fmt.Fprintf(b, " %s |", md(g.Label()))
	}
	b.WriteString("\n|---|")
	for range cols {
		b.WriteString(":-:|")
	}
	b.WriteString("\n")
	for _, id := range ids {
		fmt.Fprintf(b, "| %s |", md(id))
		for _, g := range cols {
			fmt.Fprintf(b, " %s |", taskCell(g, id))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if moreGroups > 0 || moreTasks > 0 {
		fmt.Fprintf(b, "The first %s with tasks and the %s they ran; %s and %s more are left out (summary.json lists every group's tasks).\n\n",
			format.Plural(len(cols), "group"), format.Plural(len(ids), "task"), format.Plural(moreGroups, "group"), format.Plural(moreTasks, "task"))
	}
}

// TaskCell is one task's verdict in a group: "✓ 3/3" passed in every
// repetition, "~ 1/3" in some, "✗ 0/3" in none; "–" when it did not run.
func TaskCell(g *Group, id string) string { return taskCell(g, id) }

func taskCell(g *Group, id string) string {
	for _, t := range g.Tasks {
		if t.PromptID != id {
			continue
		}
		mark := "✗"
		switch {
		case t.PassAll:
			mark = "✓"
		case t.PassAny:
			mark = "~"
		}
		return fmt.Sprintf("%s %d/%d", mark, t.Passed, t.N)
	}
	return "–"
}

// writeCategories renders the per-category figures (the BFCL suite's
// categories), when prompts have categories.
func writeCategories(b *strings.Builder, s *Summary) {
	var names []string
	for _, g := range s.Groups {
		for _, c := range sortedCategories(g.Categories) {
			if !slices.Contains(names, c) {
				names = append(names, c)
			}
		}
	}
	if len(names) == 0 {
		return
	}
	sort.Strings(names)
	b.WriteString("## Categories\n\n")
	b.WriteString("Per prompt category (the BFCL suite's simple, multiple, parallel, parallel_multiple and irrelevance): cells that passed their checks (for a BFCL case, BFCL's checker) out of those that reached the model, with the 95% Wilson interval.\n\n| provider | model | thinking |")
	for _, n := range names {
		fmt.Fprintf(b, " %s |", md(n))
	}
	b.WriteString("\n|---|---|---|")
	for range names {
		b.WriteString("--:|")
	}
	b.WriteString("\n")
	for _, g := range ranked(s) {
		if len(g.Categories) == 0 {
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s |", md(g.Provider), md(g.Model), level(g.ThinkingLevel))
		for _, n := range names {
			fmt.Fprintf(b, " %s |", CategoryText(g.Categories[n]))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// CategoryText is a category's figures in one cell: "31/40 77.5% [62.5%,
// 87.7%]", or "–" when it did not run.
func CategoryText(c *Category) string {
	if c == nil {
		return "–"
	}
	return fmt.Sprintf("%d/%d %s %s", c.Succeeded, c.N, pct(c.Rate), ciText(c.CI))
}
