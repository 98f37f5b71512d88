package report

import (
	"fmt"
	"strings"

	"bench/results"
)

// Agentic-task figures. An agentic cell is one of a prompt with max_turns:
// its record has turn_details. The figures count the agentic cells that
// reached the model, as the tier rule counts tool cells: status ok or
// error, not cancelled.

// RoutingTaskMin is the share of agentic tasks a model must complete to be
// routing-ready.
const RoutingTaskMin = 0.8

// routingRule is written into tiers.json beside the tier rule.
const routingRule = "routing_ready: tier_1 and, over the agentic cells (prompts with max_turns) that reached the model " +
	"(status ok or error, not cancelled), at least 80% of the tasks completed (a final answer, without error, that passed every check) " +
	"and no call of a tool the task does not offer; null (not judged) when no agentic cell counted"

// agenticMethods say how the agentic figures are computed (summary.json).
var agenticMethods = AgenticMethods{
	TaskSuccessRate:   "agentic cells (records with turn_details) that reached the model (status ok or error, not cancelled) and completed the task: a final answer, without error, that passed every check / those cells; null when none",
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
	MeanTurns         *float64 `json:"mean_turns"`
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

// routing sets the routing verdict of a tier entry from its group's
// agentic figures.
func (t *Tier) routing(a *Agentic) {
	t.NAgentic, t.NAgenticCompleted, t.NUnknownToolCalls = a.NAgentic, a.NAgenticCompleted, a.NUnknownToolCalls
	t.TaskSuccessRate = a.TaskSuccessRate
	var why []string
	if t.Tier != Tier1 {
		why = append(why, "not Tier 1")
	}
	switch {
	case a.NAgentic == 0:
		why = append(why, "no agentic task ran")
	case float64(a.NAgenticCompleted) < RoutingTaskMin*float64(a.NAgentic):
		why = append(why, fmt.Sprintf("%d of %d agentic tasks completed (< 80%%)", a.NAgenticCompleted, a.NAgentic))
	}
	if a.NUnknownToolCalls > 0 {
		why = append(why, fmt.Sprintf("%d call(s) of an unknown tool", a.NUnknownToolCalls))
	}
	t.RoutingNote = strings.Join(why, "; ")
	if a.NAgentic == 0 {
		return // not judged: null
	}
	ready := len(why) == 0
	t.RoutingReady = &ready
}

func routingMark(t *Tier) string {
	switch {
	case t == nil:
		return "–"
	case t.RoutingReady == nil:
		return "– " + t.RoutingNote
	case *t.RoutingReady:
		return "✓"
	}
	return "✗ " + t.RoutingNote
}

// writeAgentic renders the agentic section of summary.md, when the run has
// agentic cells.
func writeAgentic(b *strings.Builder, s *Summary) {
	has := false
	for _, g := range s.Groups {
		has = has || g.Agentic.NAgentic > 0
	}
	if !has {
		return
	}
	b.WriteString("## Agentic tasks\n\n")
	b.WriteString("Multi-turn tool use (prompts with max_turns): bench answers each call from the task's script until the model gives a final answer or reaches max_turns. " +
		"A task is completed when the final answer came back without error and passed every check (the trajectory checks included). " +
		"Wrong-argument and unknown-tool rates are shares of all calls; recovery is the share of cells that still completed after the model got a failed call back. " +
		"Routing-ready: Tier 1, at least 80% of agentic tasks completed, and no call of an unknown tool.\n\n")
	b.WriteString("| provider | model | thinking | completed | task success | mean turns | wrong args | unknown tools | recovery | routing-ready |\n")
	b.WriteString("|---|---|---|--:|--:|--:|--:|--:|--:|---|\n")
	for _, g := range ranked(s) {
		a := g.Agentic
		if a.NAgentic == 0 {
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s | %d/%d | %s | %s | %s | %s | %s | %s |\n",
			md(g.Provider), md(g.Model), level(g.ThinkingLevel), a.NAgenticCompleted, a.NAgentic, pct(a.TaskSuccessRate), num(a.MeanTurns),
			pct(a.WrongArgumentRate), pct(a.UnknownToolRate), pct(a.RecoveryRate), md(routingMark(g.Tier)))
	}
	b.WriteString("\n")
}
