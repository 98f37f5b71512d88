package results

import (
	"encoding/json"
	"strings"
)

// Availability statuses, exactly as results.jsonl spells them.
const (
	StatusOK                 = "ok"
	StatusSkippedUnavailable = "skipped_unavailable"
	StatusAuthError          = "auth_error"
	StatusRateLimited        = "rate_limited"
	StatusError              = "error"
)

// Failure types (failure_type). A provider may record others (an HTTP status
// such as http_401, a server's own error code), but these are the ones the
// harness and the reports branch on.
const (
	// The server or CLI is not there, or lacks the model: not the model's fault.
	FailConnectionRefused = "connection_refused"
	FailHostUnreachable   = "host_unreachable"
	FailModelNotFound     = "model_not_found"
	FailCLINotFound       = "cli_not_found"
	FailMissingAPIKey     = "missing_api_key"

	FailHTTP429 = "http_429"
	// FailHTTP529 is Anthropic's overloaded answer, rate_limited like a 429.
	FailHTTP529 = "http_529"
	FailHTTP4xx = "http_4xx"
	FailHTTP5xx = "http_5xx"
	// FailEndpointNotFound is a 404 for a wrong path, not an unknown model.
	FailEndpointNotFound = "endpoint_not_found"

	FailConnectionReset = "connection_reset"
	FailStreamTruncated = "stream_truncated"
	FailStreamError     = "stream_error"
	FailTimeout         = "timeout"
	FailCancelled       = "cancelled"
	FailException       = "exception"
	FailEmptyResponse   = "empty_response"
)

// Failure types of load-stage cells a load profile did not send: they are
// recorded so a run keeps its full shape, and counted as not run, never as
// errors or goodput's denominators.
const (
	// FailSweepStopped: an earlier stage of the sweep broke (see
	// load.stop_error_rate), so the stage was not run.
	FailSweepStopped = "sweep_stopped"
	// FailStageTimeout: load.stage_timeout passed before the cell was due
	// or had a stream.
	FailStageTimeout = "stage_timeout"
	// FailSearchDone: the SLO search (load.search) had ended (its bracket
	// was narrow enough, or it could go no further) before this stage.
	FailSearchDone = "search_done"
)

// Sent says a load-stage cell was sent: not left out by a stopped sweep, a
// stage timeout or an ended search.
func Sent(r *Record) bool {
	if r.FailureType == nil {
		return true
	}
	switch *r.FailureType {
	case FailSweepStopped, FailStageTimeout, FailSearchDone:
		return false
	}
	return true
}

// ToolCall is one tool invocation: a native call returned by the protocol,
// or a command detected in the answer's text.
type ToolCall struct {
	Name string `json:"name"`
	// Arguments is always a JSON value: the object the model sent ({} for a
	// call without arguments), or a JSON string holding text that did not
	// parse as JSON, so nothing the model sent is lost.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Source is SourceNative or SourceText.
	Source string `json:"source"`
	// Match is the text that was matched (text detections only).
	Match string `json:"match,omitempty"`
	ID    string `json:"id,omitempty"`
	// SchemaValid says whether the arguments validate against the JSON
	// Schema the offered tool declares (its parameters); null when nothing
	// was checked (a text command, an unknown tool, a tool without
	// parameters). SchemaError is the validator's reason when they do not.
	SchemaValid *bool  `json:"schema_valid,omitempty"`
	SchemaError string `json:"schema_error,omitempty"`
	// Unsafe: the call is an unsafe action, a tool the task forbids or a
	// side-effect tool the task does not ask for.
	Unsafe bool `json:"unsafe,omitempty"`
}

// Sources of a ToolCall.
const (
	SourceNative = "native"
	SourceText   = "text"
)

// EmptyArguments is what a call without arguments records.
var EmptyArguments = json.RawMessage(`{}`)

// Arguments normalises a tool call's argument text the one way every
// provider records it: no arguments (empty or null) is {}, valid JSON is
// kept as sent, and anything else is kept as a JSON string.
func Arguments(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if s == "" || s == "null" {
		return EmptyArguments
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}
