package runner

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"bench/config"
	"bench/plan"
	"bench/providers"
	"bench/results"
	"bench/toolparse"
	"bench/validators"
)

// Clock is where the runner reads the time. Tests give it a fake one, so
// timing assertions are exact rather than bounded.
type Clock interface{ Now() time.Time }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// stamps keeps every stamp of one cell. Providers emit on one goroutine, in
// stream order, so it needs no lock.
type stamps struct {
	clock     Clock
	cell      time.Time // the cell started: the timeline's zero and started_at
	start     time.Time // last request start: retries restart the clock
	token     time.Time // first answer text or tool call
	reasoning time.Time // first reasoning delta
	chunks    int
	calls     []bool // tool-call indexes seen
	timeline  []results.TimelineEvent
}

func (k *stamps) add(at time.Time, e results.TimelineEvent) {
	e.AtMS = float64(at.Sub(k.cell).Microseconds()) / 1000
	k.timeline = append(k.timeline, e)
}

func (k *stamps) emit(e providers.Event) {
	now := e.At
	if now.IsZero() {
		now = k.clock.Now()
	}
	switch e.Kind {
	case providers.EventRequestStart:
		k.start, k.token, k.reasoning, k.chunks = now, time.Time{}, time.Time{}, 0
		k.add(now, results.TimelineEvent{Event: results.EventRequestStart, Attempt: e.Attempt})
	case providers.EventConnected:
		k.add(now, results.TimelineEvent{Event: results.EventConnected, Detail: e.Text})
	case providers.EventRequestWritten:
		k.add(now, results.TimelineEvent{Event: results.EventRequestWritten})
	case providers.EventFirstByte:
		k.add(now, results.TimelineEvent{Event: results.EventFirstByte})
	case providers.EventRetry:
		k.add(now, results.TimelineEvent{Event: results.EventRetry, WaitMS: float64(e.Wait.Microseconds()) / 1000, Detail: e.Text})
	case providers.EventText, providers.EventToolCall:
		if e.Kind == providers.EventText && e.Text == "" {
			return
		}
		if k.token.IsZero() {
			k.token = now
			if e.Kind == providers.EventText {
				k.add(now, results.TimelineEvent{Event: results.EventFirstText})
			}
		}
		if e.Kind == providers.EventToolCall && e.Call >= 0 {
			if e.Call >= len(k.calls) {
				k.calls = append(k.calls, make([]bool, e.Call+1-len(k.calls))...)
			}
			if !k.calls[e.Call] {
				k.calls[e.Call] = true
				k.add(now, results.TimelineEvent{Event: results.EventToolCall, Call: e.Call})
			}
		}
		k.chunks++
	case providers.EventReasoning:
		if e.Text == "" {
			return
		}
		if k.reasoning.IsZero() {
			k.reasoning = now
			k.add(now, results.TimelineEvent{Event: results.EventFirstReasoning})
		}
		k.chunks++
	}
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

func ptr[T any](v T) *T { return &v }

// newRecord starts the record of a cell: its coordinates.
func newRecord(cfg *config.Config, c plan.Cell) *results.Record {
	return &results.Record{
		RecordType:    results.RecordType,
		RunID:         cfg.Run.ID,
		Provider:      c.Provider.Name,
		ProviderType:  c.Provider.Type,
		Model:         c.Model,
		ThinkingLevel: c.ThinkingLevel,
		PromptID:      c.Prompt.ID,
		PromptName:    c.Prompt.Name,
		Repetition:    c.Repetition,
		ToolCalls:     []string{},
		ExpectedTools: c.Prompt.ExpectedTools(),
	}
}

// runCell runs one cell to completion and returns its record; it never
// fails. An agentic task (a prompt with max_turns) runs its tool loop
// (runAgentCell).
func runCell(parent context.Context, cfg *config.Config, clock Clock, prov providers.Provider, c plan.Cell, traceParent string) *results.Record {
	if c.Prompt.Agentic() {
		return runAgentCell(parent, cfg, clock, prov, c, traceParent)
	}
	rec := newRecord(cfg, c)
	req := providers.Request{Model: c.Model, System: c.Prompt.System, Prompt: c.Prompt.Prompt, Tools: c.Prompt.Tools, Now: clock.Now, TraceParent: traceParent,
		MaxOutputBytes: cfg.Run.MaxOutputBytes}
	if c.ThinkingLevel != nil {
		req.ThinkingLevel = *c.ThinkingLevel
	}

	ctx, cancel := context.WithTimeout(parent, time.Duration(cfg.Run.Timeout))
	defer cancel()
	k := stamps{clock: clock}
	k.cell = clock.Now()
	k.start = k.cell
	resp, err := prov.Stream(ctx, req, k.emit)
	end := clock.Now()
	k.add(end, results.TimelineEvent{Event: results.EventEnd})
	if resp == nil {
		resp = &providers.Response{}
	}
	secrets := prov.Secrets()
	// The answer's whole length, and whether the stream kept less of it,
	// before scrubbing changes its length.
	rec.RawOutputBytes, rec.RawOutputTruncated = max(resp.TextBytes, len(resp.Text)), resp.TextBytes > len(resp.Text)
	clean(resp, secrets)

	rec.StartedAtMS = k.cell.UnixMilli()
	rec.StartedAtUS = k.cell.UnixMicro()
	rec.EndedAtMS = end.UnixMilli()
	rec.E2EMS = ms(end.Sub(k.start))
	if !k.token.IsZero() {
		rec.TTFTMS = ptr(ms(k.token.Sub(k.start)))
	}
	if !k.reasoning.IsZero() {
		rec.TTFRMS = ptr(ms(k.reasoning.Sub(k.start)))
	}
	if first := earliest(k.token, k.reasoning); !first.IsZero() {
		rec.TTFOMS = ptr(ms(first.Sub(k.start)))
	}
	rec.Timeline = k.timeline
	rec.Chunks = k.chunks
	rec.Retries, rec.RetryWaitMS = resp.Retries, resp.RetryWaitMS
	rec.InputTokens, rec.OutputTokens, rec.ReasoningTokens = resp.Usage.InputTokens, resp.Usage.OutputTokens, resp.Usage.ReasoningTokens
	rec.FinishReason = resp.FinishReason
	rec.ProviderMetrics = resp.Metrics
	keepOutput(rec, resp, secrets, cfg.Run.MaxOutputBytes)
	if rec.OutputTokens != nil && *rec.OutputTokens > 1 && rec.TTFTMS != nil {
		if gen := end.Sub(k.token).Seconds(); gen > 0 {
			// Decode rate: the tokens after the first, over the time after it.
			rec.TokensPerS = ptr(math.Round(float64(*rec.OutputTokens-1)/gen*100) / 100)
		}
	}

	classify(rec, ctx, parent, err, resp, secrets)
	score(rec, c, resp)
	// parsed_output comes from raw_output, so about its size; one that
	// re-encoding grew past max_output_bytes is left out, not cut.
	if len(rec.ParsedOutput) > cfg.Run.MaxOutputBytes {
		rec.ParsedOutput = nil
	}
	fit(rec, MaxRecordBytes)
	return rec
}

// clean removes the provider's secrets from everything of resp that is
// kept: the last guarantee, after the provider's own cleaning of its
// messages, that no key reaches a record, a report or a trace. The answer
// and the reasoning are scrubbed whole (keepOutput cuts them after); the
// short fields a server controls (a tool call's name and id, a metric)
// are cut here too, so none can make a record large.
func clean(resp *providers.Response, secrets providers.Secrets) {
	if len(secrets) > 0 {
		resp.Text = secrets.Clean(resp.Text, 0)
		resp.Reasoning = secrets.Clean(resp.Reasoning, 0)
	}
	for i := range resp.ToolCalls {
		tc := &resp.ToolCalls[i]
		tc.Name = secrets.Clean(tc.Name, maxShortField)
		tc.ID = secrets.Clean(tc.ID, maxShortField)
		if len(secrets) > 0 {
			if a := secrets.Clean(string(tc.Arguments), 0); a != string(tc.Arguments) {
				tc.Arguments = results.Arguments(a)
			}
		}
	}
	for k, v := range resp.Metrics {
		if s, ok := v.(string); ok {
			resp.Metrics[k] = secrets.Clean(s, maxShortField)
		}
	}
}

// keepOutput puts the answer and the reasoning into the record: scrubbed
// of the secrets over all the provider kept (the cap plus slack), then cut
// to limit bytes on a rune boundary, and a piece of a secret left at the
// cut removed. raw_output_bytes and whether the stream kept less are set
// before (runCell), as scrubbing changes the length.
func keepOutput(rec *results.Record, resp *providers.Response, secrets providers.Secrets, limit int) {
	var cut bool
	rec.RawOutput, cut = secrets.Cut(resp.Text, limit)
	rec.RawOutputTruncated = rec.RawOutputTruncated || cut
	rec.Reasoning, _ = secrets.Cut(resp.Reasoning, limit)
	// The checks judge what is recorded.
	resp.Text, resp.Reasoning = rec.RawOutput, rec.Reasoning
}

func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}

// classify sets availability_status, success and failure_type. A deadline on
// the cell's own context is a timeout whatever the provider made of it.
func classify(rec *results.Record, ctx, parent context.Context, err error, resp *providers.Response, secrets providers.Secrets) {
	fail := func(status, typ, msg string) {
		// A provider may take the type from what a server or CLI said.
		rec.AvailabilityStatus, rec.Success, rec.FailureType = status, false, ptr(secrets.Clean(typ, maxFailureType))
		if msg != "" {
			rec.ErrorMessage = ptr(secrets.Clean(msg, maxErrorMessage))
		}
	}
	var f *providers.Failure
	switch {
	case err == nil:
		rec.AvailabilityStatus = results.StatusOK
		if strings.TrimSpace(resp.Text) == "" && len(resp.ToolCalls) == 0 {
			fail(results.StatusOK, results.FailEmptyResponse, "no text and no tool call")
			return
		}
		rec.Success = true
	case parent.Err() != nil:
		fail(results.StatusError, results.FailCancelled, "run aborted before the cell finished")
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		fail(results.StatusError, results.FailTimeout, "no complete answer within run.timeout")
	case errors.As(err, &f):
		fail(f.Status, f.Type, f.Message)
		if f.HTTPStatus != 0 {
			rec.HTTPStatus = ptr(f.HTTPStatus)
		}
	default:
		fail(results.StatusError, results.FailException, err.Error())
	}
}

// score fills the validator and tool fields. Only a successful cell is judged;
// tool_use_success is null when the prompt expects no tool, and for cells
// that never reached the model (skipped, rate-limited, auth), false for
// other failures.
func score(rec *results.Record, c plan.Cell, resp *providers.Response) {
	native := make([]results.ToolCall, len(resp.ToolCalls))
	for i, tc := range resp.ToolCalls {
		tc.Source = results.SourceNative
		native[i] = tc
	}
	expected := rec.ExpectedTools
	if !rec.Success {
		rec.ToolCallDetails = []results.ToolCall{}
		if len(expected) > 0 && (rec.AvailabilityStatus == results.StatusError || rec.AvailabilityStatus == results.StatusOK) {
			rec.ToolUseSuccess = ptr(false)
		}
		return
	}
	// The prompt tells what the reply's commands are for: the answer to
	// "how do I...", or the subject of "what does `x` do?".
	question := c.Prompt.Prompt
	if c.Prompt.System != "" {
		question = c.Prompt.System + "\n\n" + c.Prompt.Prompt
	}
	calls := toolparse.DetectIn(native, resp.Text, question)
	if calls == nil {
		calls = []results.ToolCall{}
	}
	rec.ToolCallDetails = calls
	rec.ToolCalls = append(rec.ToolCalls, toolparse.Names(calls)...)
	rec.ToolCallCount = len(rec.ToolCalls)
	rec.ToolUseSuccess = toolparse.UseSuccess(calls, expected)
	out := validators.CheckAll(c.Prompt.Checks(), validators.Input{Text: resp.Text, ToolCalls: calls})
	rec.ObjectivePass = out.Pass
	if out.Pass != nil && !*out.Pass {
		rec.Violation = ptr(out.Violation)
	}
	if out.Parsed != nil {
		if b, err := json.Marshal(out.Parsed); err == nil {
			rec.ParsedOutput = b
		}
	}
}

// truncate cuts s to at most max bytes without splitting a UTF-8 sequence.
func truncate(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}
