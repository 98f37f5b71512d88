// Package providers holds the Provider interface and one implementation per
// wire protocol. A provider knows its protocol and nothing else: it streams a
// request, reports deltas through a callback, and returns what happened,
// classified. It never validates, scores or writes files.
package providers

import (
	"context"
	"fmt"

	"bench/prompts"
	"bench/results"
)

// Request is one cell's call: a model, a prompt and the knobs the runner sets.
type Request struct {
	Model string
	// ThinkingLevel is "" for none (null in results), else low|medium|high|xhigh.
	ThinkingLevel string
	System        string
	Prompt        string
	// Tools are the native tools offered; empty means none.
	Tools []prompts.Tool
}

// EventKind says what a streamed event carries. The runner stamps the time of
// each event with a monotonic clock, so every provider is timed the same way.
type EventKind int

const (
	// EventRequestStart is emitted just before each attempt's request is sent
	// (or the subprocess is spawned). Retries emit it again; the runner times
	// ttft and e2e from the last one, so back-off waits stay out of e2e_ms.
	EventRequestStart EventKind = iota
	// EventText carries a non-empty piece of the answer's text.
	EventText
	// EventToolCall marks a delta that carries (part of) a native tool call.
	EventToolCall
	// EventReasoning carries reasoning/thinking text, timed apart from the answer.
	EventReasoning
)

// Event is one streamed delta. Role-only or empty chunks are not events.
type Event struct {
	Kind EventKind
	Text string
}

// EmitFunc receives events in stream order. It must be cheap; it is called on
// the provider's goroutine.
type EmitFunc func(Event)

// Usage is token accounting as the provider reported it; nil means unknown.
type Usage struct {
	InputTokens     *int
	OutputTokens    *int
	ReasoningTokens *int
}

// Response is what a stream produced. It is returned even when the call failed
// part-way, so partial output is recorded.
type Response struct {
	Text      string
	Reasoning string
	ToolCalls []results.ToolCall
	Usage     Usage
	// FinishReason is the protocol's own stop reason, if any.
	FinishReason string
	// Retries is how many attempts were retried; RetryWaitMS the time spent
	// waiting between them.
	Retries     int
	RetryWaitMS int64
	// Metrics are provider-specific figures (server-side timings, cost, CLI
	// version...), recorded as provider_metrics.
	Metrics map[string]any
}

// Provider streams one request. It returns a *Failure (or an error wrapping
// one) when the call did not succeed; any other error is recorded as
// error/exception. Cancelling ctx must end the call promptly.
type Provider interface {
	Stream(ctx context.Context, req Request, emit EmitFunc) (*Response, error)
}

// Failure is a classified failure. Callers branch on it with errors.As.
type Failure struct {
	// Status is one of the Status constants.
	Status string
	// Type is the failure_type code, e.g. http_429, timeout, model_not_found.
	Type string
	// HTTPStatus is the status code when the failure came from HTTP, else 0.
	HTTPStatus int
	// Message is a human-readable reason. It must never contain secrets.
	Message string
	Err     error
}

func (f *Failure) Error() string {
	if f.Message != "" {
		return fmt.Sprintf("%s (%s): %s", f.Status, f.Type, f.Message)
	}
	return fmt.Sprintf("%s (%s)", f.Status, f.Type)
}

func (f *Failure) Unwrap() error { return f.Err }
