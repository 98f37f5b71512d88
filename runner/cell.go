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
	"bench/providers"
	"bench/results"
	"bench/toolparse"
	"bench/validators"
)

// clock stamps a stream's events. Providers call emit on one goroutine, in
// stream order, so it needs no lock. All times are monotonic.
type clock struct {
	first     time.Time // first request start: the cell's wall-clock start
	start     time.Time // last request start: retries restart the clock
	token     time.Time // first answer text or tool call
	reasoning time.Time // first reasoning delta
	chunks    int
}

func (k *clock) emit(e providers.Event) {
	now := time.Now()
	switch e.Kind {
	case providers.EventRequestStart:
		if k.first.IsZero() {
			k.first = now
		}
		k.start, k.token, k.reasoning, k.chunks = now, time.Time{}, time.Time{}, 0
	case providers.EventText, providers.EventToolCall:
		if e.Kind == providers.EventText && e.Text == "" {
			return
		}
		if k.token.IsZero() {
			k.token = now
		}
		k.chunks++
	case providers.EventReasoning:
		if e.Text == "" {
			return
		}
		if k.reasoning.IsZero() {
			k.reasoning = now
		}
		k.chunks++
	}
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

func ptr[T any](v T) *T { return &v }

// runCell runs one cell to completion and returns its record; it never fails.
func runCell(parent context.Context, cfg *config.Config, prov providers.Provider, c Cell) *results.Record {
	rec := &results.Record{
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
	req := providers.Request{Model: c.Model, System: c.Prompt.System, Prompt: c.Prompt.Prompt, Tools: c.Prompt.Tools}
	if c.ThinkingLevel != nil {
		req.ThinkingLevel = *c.ThinkingLevel
	}

	ctx, cancel := context.WithTimeout(parent, time.Duration(cfg.Run.Timeout))
	defer cancel()
	var k clock
	wallStart := time.Now()
	k.first, k.start = wallStart, wallStart
	resp, err := prov.Stream(ctx, req, k.emit)
	end := time.Now()
	if resp == nil {
		resp = &providers.Response{}
	}

	rec.StartedAtMS = k.first.UnixMilli()
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
	rec.Chunks = k.chunks
	rec.Retries, rec.RetryWaitMS = resp.Retries, resp.RetryWaitMS
	rec.InputTokens, rec.OutputTokens, rec.ReasoningTokens = resp.Usage.InputTokens, resp.Usage.OutputTokens, resp.Usage.ReasoningTokens
	rec.FinishReason = resp.FinishReason
	rec.ProviderMetrics = resp.Metrics
	rec.RawOutputBytes = len(resp.Text)
	rec.RawOutput, rec.RawOutputTruncated = truncate(resp.Text, cfg.Run.MaxOutputBytes)
	rec.Reasoning, _ = truncate(resp.Reasoning, cfg.Run.MaxOutputBytes)
	if rec.OutputTokens != nil && *rec.OutputTokens > 1 && rec.TTFTMS != nil {
		if gen := end.Sub(k.token).Seconds(); gen > 0 {
			// Decode rate: the tokens after the first, over the time after it.
			rec.TokensPerS = ptr(math.Round(float64(*rec.OutputTokens-1)/gen*100) / 100)
		}
	}

	classify(rec, ctx, parent, err, resp)
	score(rec, c, resp)
	return rec
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
func classify(rec *results.Record, ctx, parent context.Context, err error, resp *providers.Response) {
	fail := func(status, typ, msg string) {
		rec.AvailabilityStatus, rec.Success, rec.FailureType = status, false, ptr(typ)
		if msg != "" {
			rec.ErrorMessage = ptr(msg)
		}
	}
	var f *providers.Failure
	switch {
	case err == nil:
		rec.AvailabilityStatus = results.StatusOK
		if strings.TrimSpace(resp.Text) == "" && len(resp.ToolCalls) == 0 {
			fail(results.StatusOK, "empty_response", "no text and no tool call")
			return
		}
		rec.Success = true
	case parent.Err() != nil:
		fail(results.StatusError, "cancelled", "run aborted before the cell finished")
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		fail(results.StatusError, "timeout", "no complete answer within run.timeout")
	case errors.As(err, &f):
		fail(f.Status, f.Type, f.Message)
		if f.HTTPStatus != 0 {
			rec.HTTPStatus = ptr(f.HTTPStatus)
		}
	default:
		fail(results.StatusError, "exception", err.Error())
	}
}

// score fills the validator and tool fields. Only a successful cell is judged;
// tool_use_success is null when the prompt expects no tool, and for cells
// that never reached the model (skipped, rate-limited, auth), false for
// other failures.
func score(rec *results.Record, c Cell, resp *providers.Response) {
	var native []toolparse.Call
	for _, tc := range resp.ToolCalls {
		native = append(native, toolparse.Call{Name: tc.Name, Arguments: tc.Arguments, ID: tc.ID, Source: "native"})
	}
	expected := rec.ExpectedTools
	if !rec.Success {
		rec.ToolCallDetails = []toolparse.Call{}
		if len(expected) > 0 && (rec.AvailabilityStatus == results.StatusError || rec.AvailabilityStatus == results.StatusOK) {
			rec.ToolUseSuccess = ptr(false)
		}
		return
	}
	calls := toolparse.Detect(native, resp.Text)
	if calls == nil {
		calls = []toolparse.Call{}
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
