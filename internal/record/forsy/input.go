package forsy

import "time"

// Cell is everything that happened in one multi-turn agentic cell, as the
// runner saw it. The runner fills it without knowing Forsy; Build maps it to a
// trace. A zero time means "not measured" and becomes null in the trace.
type Cell struct {
	Task Task
	// Start and End bound the whole cell (the trace window); every turn and
	// call must lie inside them.
	Start, End time.Time
	// Turns are the model's round trips in order: one request, one reply.
	Turns   []Turn
	Outcome Outcome
}

// Task is the agentic task and the cell's coordinates in the run.
type Task struct {
	// RunID, Provider, Model, ThinkingLevel, ID and Repetition identify the
	// cell; TraceID is derived from them.
	RunID        string
	ID           string
	Name         string
	Prompt       string
	System       string
	Tools        []Tool
	Provider     string
	ProviderType string
	Model        string
	// ThinkingLevel is "" for none.
	ThinkingLevel string
	Repetition    int
	// MaxTurns is the loop's limit; 0 when the task set none.
	MaxTurns int
	// Protocol names how calls and results travel, e.g. "ollama tool
	// messages", "MCP over stdio", "text commands"; "" when not said.
	Protocol string
	// HarnessVersion is bench's version, "" when unknown.
	HarnessVersion string
}

// Tool is a tool offered to the model, with JSON-schema parameters.
type Tool struct {
	Name        string
	Description string
	Parameters  map[string]any
}

// Turn is one model round trip.
type Turn struct {
	// Start is when the request was sent, End when the reply was complete.
	Start, End time.Time
	// Text is the reply's visible text (for a text-mode task it holds the
	// command the model wrote).
	Text string
	// Reasoning is the thinking text the protocol exposed, "" if none.
	Reasoning string
	// Calls are the tool calls of the reply, in the order the model made them.
	Calls []Call
	// Err is the classified reason the request failed (never a secret); ""
	// when the reply came back. Only the last turn may fail.
	Err string
}

// Call is one tool call the model made and what bench answered.
type Call struct {
	// ID is the protocol's call id, "" when the protocol has none.
	ID   string
	Name string
	// Arguments is the call's exact payload: the JSON the model produced for
	// a native call, the command text for a text-mode call.
	Arguments string
	// Result is the text bench returned to the model for this call.
	Result string
	// IsError says the result was an error (an unmatched call, a "fails the
	// first time" rule, bad arguments).
	IsError bool
	// Unknown says the model called a tool that was not offered; such a call
	// counts as failed whatever IsError says.
	Unknown bool
	// Unanswered says the loop ended before bench answered the call (for
	// example at max_turns): it is shown in its turn's reply but gets no step
	// of its own, since it never ran. Only calls of the last turn may be
	// unanswered.
	Unanswered bool
	// Start and End bound bench's handling of the call.
	Start, End time.Time
	// Check is the trajectory validator's verdict on this call (did it match
	// an expected call?); nil when no check judged it.
	Check *Verdict
}

// Verdict is one validator's judgement.
type Verdict struct {
	// Name is the validator, e.g. "tool_sequence", "contains".
	Name string
	Pass bool
	// Reason says why it failed; may be "" when it passed.
	Reason string
}

// End says why the loop stopped.
type End string

// Ends of a cell's loop.
const (
	// EndAnswered: the model replied without tool calls; that reply is the
	// final answer.
	EndAnswered End = "answered"
	// EndMaxTurns: the loop reached the task's max_turns.
	EndMaxTurns End = "max_turns"
	// EndError: a model request (the last turn's) or the harness failed.
	EndError End = "error"
	// EndTimeout: the cell's time limit ran out.
	EndTimeout End = "timeout"
	// EndCancelled: the run was interrupted.
	EndCancelled End = "cancelled"
)

// Outcome is how the cell ended and what the validators said.
type Outcome struct {
	End End
	// Completed says the task counts as completed (bench's rule: a final
	// answer that passed every check).
	Completed bool
	// Note is why, in words, when End alone does not say (an error's
	// classified reason, never a secret); may be "".
	Note string
	// AnswerChecks judged the final answer; TrajectoryChecks judged the
	// calls as a whole (tool_sequence, no_unknown_tools, max_tool_calls).
	AnswerChecks     []Verdict
	TrajectoryChecks []Verdict
}
