package forsy

// SchemaVersion is the schema_version of every trace this package writes.
const SchemaVersion = "forsy-trace-v0.1"

// Values the spec allows, exactly as it spells them. Validate checks them.
const (
	// TraceModeLive: bench records the cell while it runs.
	TraceModeLive = "live"
	// ValidationSelfTraced: bench (the operator) made the trace, nobody reviewed it.
	ValidationSelfTraced = "self_traced"

	ActionUserMessage = "user_message"
	ActionAgentStep   = "agent_step"
	ActionOutput      = "output"
	ActionError       = "error"

	ExecSerial   = "serial"
	ExecParallel = "parallel"
)

// Enumerations of the spec, used by Validate. Open-ended fields (operation,
// causal_type, actor) are not listed: the spec only suggests their values.
var (
	traceModes        = []string{"live", "retraced", "hybrid"}
	validationLevels  = []string{"self_traced", "retraced_from_logs", "model_reviewed", "human_reviewed", "expert_reviewed", "client_validated"}
	terminationReason = []string{"task_complete", "user_confirmed_done", "user_abandoned", "agent_blocked", "timeout", "error_unrecoverable", "partial_then_stopped", "other"}
	actions           = []string{ActionUserMessage, ActionAgentStep, ActionOutput, ActionError}
	executionModes    = []string{ExecSerial, ExecParallel}
	messageRoles      = []string{"direct_request", "answer_to_agent_question", "correction", "approval", "clarification", "selection", "status_update", "new_constraint", "other"}
	feedbackTypes     = []string{"correction", "approval", "clarification", "new_instruction", "other"}
	sourceActors      = []string{"user", "agent", "subagent", "tool", "system", "external"}
	sourceFields      = []string{"input", "output", "observation", "directive", "feedback_content", "external"}
	artifactTypes     = []string{"created", "modified", "deleted", "observed", "generated"}
	sensitivities     = []string{"open", "redacted", "private", "exclude"}
	releaseTiers      = []string{"open_example", "research_preview", "private", "not_for_release"}
)

// Trace is one Forsy work trace (forsy-trace-v0.1). Field names and JSON tags
// follow the spec's "Trace JSON Schema Shape" exactly; nothing is omitempty,
// so a value that is unknown is written as null rather than left out.
type Trace struct {
	SchemaVersion   string  `json:"schema_version"`
	TraceID         string  `json:"trace_id"`
	PriorTraceID    *string `json:"prior_trace_id"`
	TraceMode       string  `json:"trace_mode"`
	ValidationLevel string  `json:"validation_level"`
	// Task is the user's request, word for word.
	Task string `json:"task"`
	// AgentTools names every tool offered, used or not: the action space.
	AgentTools   []string `json:"agent_tools"`
	StartedAt    *string  `json:"started_at"`
	EndedAt      *string  `json:"ended_at"`
	SystemPrompt *string  `json:"system_prompt"`
	Skills       []string `json:"skills"`
	Memory       *string  `json:"memory"`
	// AgentConfig is a free-form object in the spec; bench's keys are listed
	// in Build's documentation.
	AgentConfig       map[string]any  `json:"agent_config"`
	Learning          *string         `json:"learning"`
	TerminationReason string          `json:"termination_reason"`
	Steps             []Step          `json:"steps"`
	FinalOutput       *string         `json:"final_output"`
	StaticOutput      *StaticOutput   `json:"static_output"`
	Summary           Summary         `json:"summary"`
	DatasetSummary    *DatasetSummary `json:"dataset_summary"`
}

// Step is one node of the workflow graph. It has the spec's 28 fields, all
// always present; pointer and slice fields are null where the spec allows.
type Step struct {
	Step                   int          `json:"step"`
	Turn                   int          `json:"turn"`
	Actor                  string       `json:"actor"`
	Action                 string       `json:"action"`
	Operation              *string      `json:"operation"`
	Tool                   *string      `json:"tool"`
	ExecutionMode          *string      `json:"execution_mode"`
	ParallelGroup          *string      `json:"parallel_group"`
	Observation            *string      `json:"observation"`
	Input                  *string      `json:"input"`
	InputSource            *InputSource `json:"input_source"`
	Output                 *string      `json:"output"`
	StateChange            *string      `json:"state_change"`
	Reasoning              *string      `json:"reasoning"`
	CausedBy               []int        `json:"caused_by"`
	CausalType             *string      `json:"causal_type"`
	CausalNote             *string      `json:"causal_note"`
	AlternativesConsidered *string      `json:"alternatives_considered"`
	Success                *bool        `json:"success"`
	Eval                   int          `json:"eval"`
	EvalReason             *string      `json:"eval_reason"`
	Directive              *string      `json:"directive"`
	MessageRole            *string      `json:"message_role"`
	FeedbackType           *string      `json:"feedback_type"`
	FeedbackContent        *string      `json:"feedback_content"`
	StartedAt              *string      `json:"started_at"`
	EndedAt                *string      `json:"ended_at"`
	RetryOf                *int         `json:"retry_of"`
}

// stepFields lists the 28 step fields in the spec's order with the JSON kinds
// each may hold; ValidateJSON checks every step object against it.
var stepFields = []struct {
	name  string
	kinds []string // "int", "string", "object", "bool", "ints", "null"
}{
	{"step", []string{"int"}},
	{"turn", []string{"int"}},
	{"actor", []string{"string"}},
	{"action", []string{"string"}},
	{"operation", []string{"string", "null"}},
	{"tool", []string{"string", "null"}},
	{"execution_mode", []string{"string", "null"}},
	{"parallel_group", []string{"string", "null"}},
	{"observation", []string{"string", "null"}},
	{"input", []string{"string", "null"}},
	{"input_source", []string{"object", "null"}},
	{"output", []string{"string", "null"}},
	{"state_change", []string{"string", "null"}},
	{"reasoning", []string{"string", "null"}},
	{"caused_by", []string{"ints", "null"}},
	{"causal_type", []string{"string", "null"}},
	{"causal_note", []string{"string", "null"}},
	{"alternatives_considered", []string{"string", "null"}},
	{"success", []string{"bool", "null"}},
	{"eval", []string{"int"}},
	{"eval_reason", []string{"string", "null"}},
	{"directive", []string{"string", "null"}},
	{"message_role", []string{"string", "null"}},
	{"feedback_type", []string{"string", "null"}},
	{"feedback_content", []string{"string", "null"}},
	{"started_at", []string{"string", "null"}},
	{"ended_at", []string{"string", "null"}},
	{"retry_of", []string{"int", "null"}},
}

// InputSource says where a step's input came from (the spec's preferred
// structure).
type InputSource struct {
	Actor       string `json:"actor"`
	SourceStep  *int   `json:"source_step"`
	SourceField string `json:"source_field"`
	Note        string `json:"note"`
}

// StaticOutput holds the artifacts of the work.
type StaticOutput struct {
	Artifacts []Artifact `json:"artifacts"`
}

// Artifact is one piece of evidence or deliverable, with the spec's fields.
type Artifact struct {
	Path string `json:"path"`
	// Type is created, modified, deleted, observed or generated.
	Type         string `json:"type"`
	Role         string `json:"role"`
	RelatedSteps []int  `json:"related_steps"`
	Description  string `json:"description"`
	State        string `json:"state"`
	// Hash is "sha256:" and 64 lowercase hex digits of Content's UTF-8 bytes.
	Hash               *string `json:"hash"`
	Content            *string `json:"content"`
	Diff               *string `json:"diff"`
	ReleaseSensitivity string  `json:"release_sensitivity"`
}

// Summary carries the counts that must equal what the steps say, and the
// outcome.
type Summary struct {
	TotalSteps       int           `json:"total_steps"`
	TotalTurns       int           `json:"total_turns"`
	PositiveSteps    int           `json:"positive_steps"`
	NegativeSteps    int           `json:"negative_steps"`
	NeutralSteps     int           `json:"neutral_steps"`
	DirectiveSignals int           `json:"directive_signals"`
	HumanFeedback    HumanFeedback `json:"human_feedback"`
	// AgentConfidence (0-100) rates the trace's accuracy, not the work's.
	AgentConfidence int     `json:"agent_confidence"`
	GoalAchieved    bool    `json:"goal_achieved"`
	GoalNotes       *string `json:"goal_notes"`
}

// HumanFeedback counts user_message steps by feedback_type.
type HumanFeedback struct {
	Corrections     int `json:"corrections"`
	Approvals       int `json:"approvals"`
	Clarifications  int `json:"clarifications"`
	NewInstructions int `json:"new_instructions"`
}

// DatasetSummary is the spec's dataset card.
type DatasetSummary struct {
	Title           string   `json:"title"`
	Description     string   `json:"description"`
	Tags            []string `json:"tags"`
	ReleaseTier     string   `json:"release_tier"`
	ValidationLevel string   `json:"validation_level"`
}
