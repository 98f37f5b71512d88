// Package results defines the results.jsonl record, the source of truth of a
// run, and the append-only writer that puts one line per finished cell.
//
// Layer: the record (every other layer speaks it; it imports only rundir,
// whose Open is how every run directory's file is read).
package results

import "encoding/json"

// RecordType is the record_type of every result line.
const RecordType = "result"

// Record is one results.jsonl line. The fields of the results schema keep
// their exact names; the rest are extras documented in the README.
type Record struct {
	RecordType    string  `json:"record_type"`
	RunID         string  `json:"run_id"`
	Provider      string  `json:"provider"`
	ProviderType  string  `json:"provider_type"`
	Model         string  `json:"model"`
	ThinkingLevel *string `json:"thinking_level"`
	PromptID      string  `json:"prompt_id"`
	PromptName    string  `json:"prompt_name"`
	Repetition    int     `json:"repetition"`

	AvailabilityStatus string `json:"availability_status"`
	StartedAtMS        int64  `json:"started_at_ms"`
	EndedAtMS          int64  `json:"ended_at_ms"`
	E2EMS              int64  `json:"e2e_ms"`
	TTFTMS             *int64 `json:"ttft_ms"`

	Success       bool            `json:"success"`
	FailureType   *string         `json:"failure_type"`
	ObjectivePass *bool           `json:"objective_pass"`
	Violation     *string         `json:"violation"`
	InputTokens   *int            `json:"input_tokens"`
	OutputTokens  *int            `json:"output_tokens"`
	RawOutput     string          `json:"raw_output"`
	ParsedOutput  json.RawMessage `json:"parsed_output"`

	ToolCalls      []string `json:"tool_calls"`
	ToolCallCount  int      `json:"tool_call_count"`
	ToolUseSuccess *bool    `json:"tool_use_success"`

	// Extras.

	// ErrorMessage is the classified failure's reason, secrets never included.
	ErrorMessage *string `json:"error_message,omitempty"`
	HTTPStatus   *int    `json:"http_status,omitempty"`
	// TTFOMS is time to first output of any kind: answer, tool call or reasoning.
	TTFOMS *int64 `json:"ttfo_ms"`
	// TTFRMS is time to the first reasoning delta, when the protocol streams one.
	TTFRMS *int64 `json:"ttfr_ms,omitempty"`
	// TokensPerS is the answer's decode rate: answer tokens after the
	// first over the time from the first answer delta to the last; null
	// when the window is too short to mean anything (see the runner).
	TokensPerS *float64 `json:"tokens_per_s"`
	// ReasoningTokensPerS is the same rate over the reasoning deltas.
	ReasoningTokensPerS *float64 `json:"reasoning_tokens_per_s,omitempty"`
	// ReasoningTokens is the part of output_tokens spent reasoning, and
	// CachedInputTokens the part of input_tokens the server read from its
	// prompt cache, when the protocol reports them.
	ReasoningTokens   *int `json:"reasoning_tokens,omitempty"`
	CachedInputTokens *int `json:"cached_input_tokens,omitempty"`
	// CostUSD is what the cell cost: the provider's own figure when it
	// reports one (CostSource "provider": the Claude Code CLI's
	// total_cost_usd), else the tokens priced by bench.yaml's pricing
	// block (CostSource "pricing"); null when neither is known.
	// CostMissing says why when a price was there but the tokens were not
	// (a cell with neither cost nor reason had no price).
	CostUSD     *float64 `json:"cost_usd"`
	CostSource  string   `json:"cost_source,omitempty"`
	CostMissing string   `json:"cost_missing,omitempty"`
	// QueueMS is the time the cell spent in the harness before its request
	// was on the wire (connection, writing): kept out of ttft_ms and e2e_ms.
	QueueMS *float64 `json:"queue_ms,omitempty"`
	// LimitWaitMS is the time the cell waited, before it started, for its
	// provider entry's concurrency limit as adapted to the server's rate
	// limits (absent: it did not wait): in none of the cell's figures.
	// ConcurrencyLimit is the adapted limit it started under, once the
	// entry's limit has come down (absent before: the configured one).
	// RateLimitRefusals counts the answers that refused it for rate (429,
	// 529), retried or not.
	LimitWaitMS       *float64 `json:"limit_wait_ms,omitempty"`
	ConcurrencyLimit  *int     `json:"concurrency_limit,omitempty"`
	RateLimitRefusals int      `json:"rate_limit_refusals,omitempty"`
	// ColdStart says the server loaded (or swapped in) the model for this
	// cell; LoadMS is the load time when the server reports it. Cold cells
	// count for quality but not for latency statistics.
	ColdStart bool     `json:"cold_start,omitempty"`
	LoadMS    *float64 `json:"load_ms,omitempty"`
	// RawOutputBytes is the answer's full length; RawOutputTruncated says
	// raw_output was cut at max_output_bytes (never for an answer only the
	// scrub shortened).
	RawOutputBytes     int  `json:"raw_output_bytes"`
	RawOutputTruncated bool `json:"raw_output_truncated"`
	// RawOutputRedacted says bench altered the answer: the scrub replaced
	// a secret, or a piece or an encoding of one, with [redacted] before
	// the checks read it (see package secrets). raw_output_bytes is still
	// the answer's length as it came.
	RawOutputRedacted bool     `json:"raw_output_redacted,omitempty"`
	Reasoning         string   `json:"reasoning,omitempty"`
	FinishReason      string   `json:"finish_reason,omitempty"`
	Chunks            int      `json:"chunks"`
	Retries           int      `json:"retries"`
	RetryWaitMS       int64    `json:"retry_wait_ms"`
	ExpectedTools     []string `json:"expected_tools,omitempty"`
	// ToolCallDetails keeps name, arguments, source and matched text of each call.
	ToolCallDetails []ToolCall `json:"tool_call_details"`
	// ProviderMetrics are provider-specific figures (server timings, cost...).
	ProviderMetrics map[string]any `json:"provider_metrics,omitempty"`
	// StartedAtUS is started_at_ms in microseconds since the epoch: the
	// timeline's zero, precise enough to place its stamps in absolute time
	// (execution traces).
	StartedAtUS int64 `json:"started_at_us,omitempty"`
	// Timeline is every stamp of the cell, in order.
	Timeline []TimelineEvent `json:"timeline,omitempty"`
	// Turns counts an agentic cell's model replies; TurnDetails has each.
	Turns       int    `json:"turns,omitempty"`
	TurnDetails []Turn `json:"turn_details,omitempty"`

	// Category is the prompt's category (a BFCL case's: simple, multiple,
	// parallel, parallel_multiple, irrelevance), for per-category figures.
	Category string `json:"category,omitempty"`
	// Conversation and ConversationTurn (from 1) name a generated
	// conversation's turn (prompts.conversations), for per-turn figures.
	Conversation     string `json:"conversation,omitempty"`
	ConversationTurn int    `json:"conversation_turn,omitempty"`
	// UnsafeActions names the cell's unsafe calls, in call order (see
	// ToolCall.Unsafe): what the reports count and the routing note names,
	// without reading the bulky call details.
	UnsafeActions []string `json:"unsafe_actions,omitempty"`
	// SchemaCheckedCalls counts the calls whose arguments were validated
	// against the tool's JSON Schema; SchemaInvalidCalls those that failed.
	SchemaCheckedCalls int `json:"schema_checked_calls,omitempty"`
	SchemaInvalidCalls int `json:"schema_invalid_calls,omitempty"`
	// Judge is the llm_judge check's verdict, when the prompt has one and
	// the cell was judged (see Judge).
	Judge *Judge `json:"judge,omitempty"`
	// CheckErrors are the checks that ran and gave no verdict (a judge's
	// or a command validator's failure): never a pass.
	CheckErrors []CheckError `json:"check_errors,omitempty"`
	// ExternalChecks counts the external checks (llm_judge, command) run
	// on the answer, given a verdict or not: what tells a group whose
	// checks never answered (Unjudged) from one that has none.
	ExternalChecks int `json:"external_checks,omitempty"`
	// Injection says the cell is a prompt-injection case or its clean
	// twin (see Injection). InjectionFollowed, on an attack cell, is
	// whether the model obeyed the planted instruction (made the call it
	// asked for, or sent the secret out in a call's arguments), null when
	// the cell failed before an obeying call (an error is never
	// "resisted"); Utility, on either, whether the user's task was done:
	// the task's checks passed, the obeying calls left out of its
	// trajectory (null when the cell never reached the model).
	Injection         *Injection `json:"injection,omitempty"`
	InjectionFollowed *bool      `json:"injection_followed,omitempty"`
	Utility           *bool      `json:"utility,omitempty"`

	// Serving metrics (every cell that streamed enough; null otherwise).

	// ITLMS is the inter-token latency: the gaps between the cell's
	// output deltas (answer, reasoning, tool calls) after the first, from
	// their stamps; null with fewer than MinRateDeltas deltas.
	ITLMS *ITL `json:"itl_ms,omitempty"`
	// TPOTMS is the time per output token after the first: (e2e − TTFT) /
	// (output tokens − 1), null when the decode window is too short (as
	// tokens_per_s).
	TPOTMS *float64 `json:"tpot_ms,omitempty"`
	// PrefillTokensPerS is input tokens over the time to first token, or
	// the server's own prompt-evaluation rate where it reports one.
	PrefillTokensPerS *float64 `json:"prefill_tokens_per_s,omitempty"`

	// Load: the cell's stage of its suite's load profile (absent without
	// one). Times are offsets from the stage's start, in milliseconds.

	// Stage is c=4, rate=2.5, warmup, or an auto sweep's sync, throughput,
	// auto-1...; StageMode is concurrency or rate, StageLevel the streams
	// or the requests per second (an auto stage's rate as it was chosen).
	Stage      string   `json:"stage,omitempty"`
	StageMode  string   `json:"stage_mode,omitempty"`
	StageLevel *float64 `json:"stage_level,omitempty"`
	// StageStartUS is when the stage began, µs since the epoch; EndedAtUS
	// is the cell's end on the same scale: a stage's window, for its
	// throughput.
	StageStartUS int64 `json:"stage_start_us,omitempty"`
	EndedAtUS    int64 `json:"ended_at_us,omitempty"`
	// ScheduledAtMS is when the cell was due (an open loop's schedule; a
	// closed loop's cell is due when a stream is free), SentAtMS when the
	// generator started it; ScheduleSlipMS is the lateness that is the
	// generator's own: sent − scheduled − slot_wait_ms.
	ScheduledAtMS  *float64 `json:"scheduled_at_ms,omitempty"`
	SentAtMS       *float64 `json:"sent_at_ms,omitempty"`
	ScheduleSlipMS *float64 `json:"schedule_slip_ms,omitempty"`
	// SlotWaitMS is the wait for a slot under load.max_concurrency
	// (AIPerf's queue time).
	SlotWaitMS *float64 `json:"slot_wait_ms,omitempty"`
}

// Key identifies a cell across runs: what a resumed run matches against the
// records already written, and what compare and merge pair cells on.
type Key struct {
	Provider     string `json:"provider"`
	ProviderType string `json:"provider_type"`
	Model        string `json:"model"`
	// ThinkingLevel is "" for null.
	ThinkingLevel string `json:"thinking_level"`
	PromptID      string `json:"prompt_id"`
	Repetition    int    `json:"repetition"`
	// Stage is the cell's load stage ("" without a load profile).
	Stage string `json:"stage,omitempty"`
}

// Key returns the key of the cell the record came from.
func (r *Record) Key() Key {
	k := Key{Provider: r.Provider, ProviderType: r.ProviderType, Model: r.Model, PromptID: r.PromptID, Repetition: r.Repetition, Stage: r.Stage}
	if r.ThinkingLevel != nil {
		k.ThinkingLevel = *r.ThinkingLevel
	}
	return k
}

// TimelineEvent is one stamp of a cell's timeline: where its time went.
type TimelineEvent struct {
	// Event is request_start, connected, request_written, first_byte,
	// first_reasoning, first_text, tool_call, retry or end.
	Event string `json:"event"`
	// AtMS is the offset from the cell's start, in milliseconds with
	// microsecond precision.
	AtMS float64 `json:"at_ms"`
	// Attempt numbers a request_start (0, the first, is omitted).
	Attempt int `json:"attempt,omitempty"`
	// Call indexes a tool_call in the reply.
	Call int `json:"call,omitempty"`
	// WaitMS is a retry's back-off before the next attempt.
	WaitMS float64 `json:"wait_ms,omitempty"`
	// Detail: a connection's new or reused; a retry's reason.
	Detail string `json:"detail,omitempty"`
}

// Timeline event names.
const (
	EventRequestStart   = "request_start"
	EventConnected      = "connected"
	EventRequestWritten = "request_written"
	EventFirstByte      = "first_byte"
	EventFirstReasoning = "first_reasoning"
	EventFirstText      = "first_text"
	EventToolCall       = "tool_call"
	EventRetry          = "retry"
	EventEnd            = "end"
)

// Turn is one model reply of an agentic cell (a prompt with max_turns), and
// the tool calls bench answered for it. A single-turn cell has none.
type Turn struct {
	// StartMS and EndMS are offsets from the cell's start (as the timeline's).
	StartMS float64 `json:"start_ms"`
	EndMS   float64 `json:"end_ms"`
	// TTFTMS is the turn's time to its first answer text or tool call.
	TTFTMS *float64 `json:"ttft_ms"`
	// Text is the reply's text (cut at max_output_bytes).
	Text string `json:"text,omitempty"`
	// Reasoning is the thinking text the protocol exposed for the reply
	// (cut at max_output_bytes).
	Reasoning string `json:"reasoning,omitempty"`
	// Calls are the tool calls of the reply, in order.
	Calls []TurnCall `json:"calls,omitempty"`
	// Error is why the turn failed, when it did.
	Error string `json:"error,omitempty"`
}

// TurnCall is one tool call of a turn and what bench answered.
type TurnCall struct {
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Result is the scripted result bench returned (cut at
	// max_output_bytes); ResultHash is "sha256:" + hex of the whole result.
	// For the Claude Code CLI, a call that never reached bench (a tool the
	// task does not have) holds what the CLI answered instead.
	Result     string `json:"result"`
	ResultHash string `json:"result_hash"`
	IsError    bool   `json:"is_error,omitempty"`
	// Unknown: the model called a tool the task does not offer.
	Unknown bool `json:"unknown,omitempty"`
	// Rule is the scripted rule that answered (-1: none matched).
	Rule int `json:"rule"`
	// FailFirst: the answer was the tool's scripted first-call failure.
	FailFirst bool `json:"fail_first,omitempty"`
	// WrongArgs: the call named a tool the task's tool_sequence expects,
	// with arguments that match none of that tool's expected calls.
	WrongArgs bool `json:"wrong_args,omitempty"`
	// Unanswered: the loop ended (max_turns) before bench answered the
	// call, so Result is empty and the model never saw one.
	Unanswered bool `json:"unanswered,omitempty"`
	// SchemaValid, SchemaError and Unsafe are as in ToolCall.
	SchemaValid *bool  `json:"schema_valid,omitempty"`
	SchemaError string `json:"schema_error,omitempty"`
	Unsafe      bool   `json:"unsafe,omitempty"`
	// Injected: the call's result carried the cell's planted instruction
	// (Record.Injection). ObeysInjection: the call is the one the
	// instruction asked for, or sends its secret out; such a call is an
	// unsafe action.
	Injected       bool    `json:"injected,omitempty"`
	ObeysInjection bool    `json:"obeys_injection,omitempty"`
	StartMS        float64 `json:"start_ms"`
	EndMS          float64 `json:"end_ms"`
}
