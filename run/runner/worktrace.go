package runner

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"

	"bench/internal/record/forsy"
	"bench/internal/record/results"
	"bench/prompts"
	"bench/providers"
	"bench/providers/mcpserve"
	"bench/toolparse"
	script "bench/validators/scripted"
)

// WorkTraces is the output that writes a Forsy work trace (package forsy)
// for every agentic cell that reached its provider (not skipped as
// unavailable) and made at least one turn, to
// <dir>/<forsy.FileName>. It rebuilds what happened from the record alone
// (its turn_details, timeline and verdicts) plus the task from the prompt
// set, so a trace says nothing results.jsonl does not; texts cut at
// max_output_bytes in the record are cut in the trace too.
type WorkTraces struct {
	dir     string
	prompts map[string]*prompts.Prompt
	version string
}

// NewWorkTraces writes traces into dir (created when the first is
// written) for the prompts of set; version is bench's, for the trace's
// harness_version.
func NewWorkTraces(dir string, set []prompts.Prompt, version string) *WorkTraces {
	w := &WorkTraces{dir: dir, prompts: map[string]*prompts.Prompt{}, version: version}
	for i := range set {
		w.prompts[set[i].ID] = &set[i]
	}
	return w
}

// AddRecord writes the record's trace when it is an agentic cell's.
func (w *WorkTraces) AddRecord(r *results.Record) error {
	p := w.prompts[r.PromptID]
	if p == nil || !p.Agentic() || len(r.TurnDetails) == 0 || r.AvailabilityStatus == results.StatusSkippedUnavailable {
		return nil
	}
	cell := WorkTraceCell(r, p, w.version)
	tr, err := forsy.Build(cell)
	if err != nil {
		return fmt.Errorf("work trace of %s/%s/%s: %w", r.Provider, r.Model, r.PromptID, err)
	}
	return forsy.Write(filepath.Join(w.dir, forsy.FileName(cell.Task)), tr)
}

// WorkTraceCell rebuilds the forsy cell of an agentic record of task p.
// Times are the record's: started_at_ms plus each offset. For a kind that
// owns its tool loop (the Claude Code CLI) the tools and the calls of them
// carry the names the model saw on bench's MCP server (mcp__bench__<tool>).
func WorkTraceCell(r *results.Record, p *prompts.Prompt, version string) forsy.Cell {
	base := time.UnixMilli(r.StartedAtMS).UTC()
	at := func(ms float64) time.Time {
		return base.Add(time.Duration(math.Round(ms*1000)) * time.Microsecond)
	}
	kind, _ := providers.Lookup(r.ProviderType)
	ownLoop := kind != nil && kind.OwnsToolLoop()
	seen := func(name string) string {
		if ownLoop && slices.Contains(p.ToolNames(), name) {
			return mcpserve.ToolName(mcpServerName, name)
		}
		return name
	}
	c := forsy.Cell{Task: forsy.Task{
		RunID: r.RunID, ID: p.ID, Name: p.Name, Prompt: p.Prompt, System: p.System,
		Provider: r.Provider, ProviderType: r.ProviderType, Model: r.Model, Repetition: r.Repetition,
		MaxTurns: p.MaxTurns, Protocol: protocol(kind, p.TextMode()), HarnessVersion: version,
	}, Start: base}
	if r.ThinkingLevel != nil {
		c.Task.ThinkingLevel = *r.ThinkingLevel
	}
	offered := map[string]bool{}
	for _, t := range p.Tools {
		c.Task.Tools = append(c.Task.Tools, forsy.Tool{Name: seen(t.Name), Description: t.Description, Parameters: t.Parameters})
		offered[seen(t.Name)] = true
	}
	end := at(float64(r.EndedAtMS - r.StartedAtMS))
	for _, e := range r.Timeline {
		if e.Event == results.EventEnd {
			end = at(e.AtMS)
		}
	}
	var calls []toolparse.Call
	for _, t := range r.TurnDetails {
		ft := forsy.Turn{Start: at(t.StartMS), End: at(t.EndMS), Text: t.Text, Reasoning: t.Reasoning, Err: t.Error}
		for _, tc := range t.Calls {
			name := seen(tc.Name)
			fc := forsy.Call{ID: tc.ID, Name: name, Arguments: callText(tc.Arguments, p.TextMode()), Result: tc.Result,
				IsError: tc.IsError, Unknown: !offered[name], Unanswered: tc.Unanswered || t.Error != "",
				Start: at(tc.StartMS), End: at(tc.EndMS), Check: callVerdict(p, tc.Name, tc.Arguments)}
			ft.Calls = append(ft.Calls, fc)
			calls = append(calls, toolparse.Call{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
		}
		c.Turns = append(c.Turns, ft)
		end = maxTime(end, ft.End)
	}
	c.End = end
	c.Outcome = outcome(r, p, calls)
	return c
}

// outcome says how the record's loop ended and what the checks said.
func outcome(r *results.Record, p *prompts.Prompt, calls []toolparse.Call) forsy.Outcome {
	last := r.TurnDetails[len(r.TurnDetails)-1]
	var o forsy.Outcome
	switch {
	case last.Error != "" && r.FailureType != nil && *r.FailureType == results.FailTimeout:
		o.End = forsy.EndTimeout
	case last.Error != "" && r.FailureType != nil && *r.FailureType == results.FailCancelled:
		o.End = forsy.EndCancelled
	case last.Error != "":
		o.End = forsy.EndError
	case len(last.Calls) > 0:
		o.End = forsy.EndMaxTurns
	default:
		o.End = forsy.EndAnswered
	}
	if r.ErrorMessage != nil {
		o.Note = *r.ErrorMessage
	}
	answered := o.End == forsy.EndAnswered
	o.Completed = answered && r.Success && (r.ObjectivePass == nil || *r.ObjectivePass)
	if r.Success {
		o.AnswerChecks, o.TrajectoryChecks = taskVerdicts(p, r.RawOutput, calls, answered)
	}
	return o
}

// callText is a call's exact payload: the command line of a text-mode
// call, the arguments' JSON text otherwise.
func callText(a []byte, text bool) string {
	if text {
		if m, err := script.ParseArgs(a); err == nil {
			if s, ok := m["command"].(string); ok {
				return s
			}
		}
	}
	return string(a)
}

// protocol names how the record's kind carries calls and results ("" for
// a provider_type this bench does not know, a record of another version).
func protocol(kind providers.Kind, text bool) string {
	switch {
	case text:
		return "text commands (detected in the reply; outputs sent back in a user message)"
	case kind == nil:
		return ""
	}
	return kind.ToolProtocol()
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
