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
	"bench/internal/record/pricing"
	"bench/internal/record/results"
	"bench/prompts"
	"bench/providers"
	"bench/run/plan"
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
	clock Clock
	cell  time.Time // the cell started: the timeline's zero and started_at
	// attempt is when the last attempt began (the cell's start for the
	// first): the harness's own time runs from there to start.
	attempt time.Time
	// start is when the last attempt's request was on the wire (written,
	// for HTTP; spawned, for the CLI): ttft and e2e count from here, and
	// retries restart it.
	start     time.Time
	token     time.Time // first answer text or tool call
	reasoning time.Time // first reasoning delta
	// lastAnswer and lastReasoning are the last delta of each kind;
	// answerN and reasoningN count them: the windows of the decode rates.
	lastAnswer, lastReasoning time.Time
	answerN, reasoningN       int
	chunks                    int
	calls                     []bool // tool-call indexes seen
	timeline                  []results.TimelineEvent
	// lastOut is the last output delta of any kind (answer, tool call,
	// reasoning); gaps are the times between them: the inter-token
	// latencies, from the deltas' own stamps.
	lastOut time.Time
	gaps    []time.Duration
}

// out notes an output delta at now, for the inter-token gaps.
func (k *stamps) out(now time.Time) {
	if !k.lastOut.IsZero() {
		k.gaps = append(k.gaps, max(now.Sub(k.lastOut), 0))
	}
	k.lastOut = now
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
		if e.Attempt > 0 {
			k.attempt = now
		}
		k.start, k.token, k.reasoning = now, time.Time{}, time.Time{}
		k.lastAnswer, k.lastReasoning, k.answerN, k.reasoningN, k.chunks = time.Time{}, time.Time{}, 0, 0, 0
		k.lastOut, k.gaps = time.Time{}, k.gaps[:0]
		k.add(now, results.TimelineEvent{Event: results.EventRequestStart, Attempt: e.Attempt})
	case providers.EventConnected:
		k.add(now, results.TimelineEvent{Event: results.EventConnected, Detail: e.Text})
	case providers.EventRequestWritten:
		// The request is on the wire: the server's time starts here.
		k.start = now
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
		k.lastAnswer = now
		k.answerN++
		k.chunks++
		k.out(now)
	case providers.EventReasoning:
		if e.Text == "" {
			return
		}
		if k.reasoning.IsZero() {
			k.reasoning = now
			k.add(now, results.TimelineEvent{Event: results.EventFirstReasoning})
		}
		k.lastReasoning = now
		k.reasoningN++
		k.chunks++
		k.out(now)
	}
}

// ms rounds a duration to whole milliseconds, the schema's integers:
// truncating would bias every figure down by half a millisecond, which
// matters for a 3 ms local time to first token.
func ms(d time.Duration) int64 { return d.Round(time.Millisecond).Milliseconds() }

// msFine is a duration in milliseconds with microsecond precision.
func msFine(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func ptr[T any](v T) *T { return &v }

// Decode rates are null over windows too short to mean anything: fewer
// than MinRateDeltas deltas of the kind, or a window (first delta to last)
// under MinRateWindow. A millisecond of scheduling jitter then moves a rate
// by at most a tenth, and a reply of a word or two, whose deltas may arrive
// in one read microseconds apart, gives no rate rather than thousands of
// tokens per second.
const (
	MinRateDeltas = 4
	MinRateWindow = 10 * time.Millisecond
)

// rates are the answer's and the reasoning's decode rates. Each kind of
// token is counted over its own window, from its first delta to its last:
//
//	rate = tokens × (deltas − 1) / deltas / (last − first)
//
// that is, the tokens after the first delta (tokens − 1 when each delta
// carries one token, as Ollama streams) over the time after it. The
// reasoning tokens are the server's count when it gives one (the answer's
// are the rest of output_tokens); otherwise output_tokens is split in
// proportion to the deltas of each kind.
func rates(u providers.Usage, k *stamps) (answer, reasoning *float64) {
	a, r := rateWindows(u, k)
	return a.rate(), r.rate()
}

// rateWindow is a decode rate's parts: the tokens after the first delta and
// the time after it; zero when the window is too short to mean anything.
// Parts add up across an agentic cell's turns.
type rateWindow struct {
	tokens, seconds float64
}

func (w rateWindow) rate() *float64 {
	if w.seconds <= 0 {
		return nil
	}
	return ptr(math.Round(w.tokens/w.seconds*100) / 100)
}

func (w rateWindow) add(o rateWindow) rateWindow {
	return rateWindow{w.tokens + o.tokens, w.seconds + o.seconds}
}

// rateWindows splits output_tokens between the answer and the reasoning
// (see rates) and gives each kind's window.
func rateWindows(u providers.Usage, k *stamps) (answer, reasoning rateWindow) {
	if u.OutputTokens == nil {
		return rateWindow{}, rateWindow{}
	}
	out := *u.OutputTokens
	var rt int
	switch {
	case u.ReasoningTokens != nil:
		rt = *u.ReasoningTokens
	case k.reasoningN > 0 && k.answerN > 0:
		rt = int(math.Round(float64(out) * float64(k.reasoningN) / float64(k.reasoningN+k.answerN)))
	case k.reasoningN > 0:
		rt = out
	}
	rt = min(max(rt, 0), out)
	return window(out-rt, k.answerN, k.token, k.lastAnswer), window(rt, k.reasoningN, k.reasoning, k.lastReasoning)
}

func window(tokens, deltas int, first, last time.Time) rateWindow {
	w := last.Sub(first)
	if deltas < MinRateDeltas || w < MinRateWindow || tokens < 1 {
		return rateWindow{}
	}
	return rateWindow{float64(tokens) * float64(deltas-1) / float64(deltas), w.Seconds()}
}

// serving fills the serving metrics of a single-turn cell: itl_ms from
// the gaps between its output deltas, tpot_ms over the time after the
// first output, prefill_tokens_per_s. ITL and TPOT stay null on short
// answers, by the decode rates' rule (fewer than MinRateDeltas deltas, or
// a window under MinRateWindow); first is the first output, or end.
func serving(rec *results.Record, resp *providers.Response, k *stamps, first, end time.Time) {
	deltas := k.answerN + k.reasoningN
	window := end.Sub(first)
	if deltas >= MinRateDeltas && k.lastOut.Sub(first) >= MinRateWindow {
		rec.ITLMS = results.NewITL(k.gaps)
	}
	if out := resp.Usage.OutputTokens; out != nil && *out >= MinRateDeltas && deltas >= MinRateDeltas && window >= MinRateWindow {
		rec.TPOTMS = ptr(math.Round(float64(window.Microseconds())/float64(*out-1)) / 1000)
	}
	rec.PrefillTokensPerS = prefillRate(rec, resp, k, first)
}

// prefillRate is the server's prompt-evaluation rate where it reports one
// (Ollama's prompt_eval_count over prompt_eval_duration), else input
// tokens over the time to first output; null without input tokens or
// under a millisecond (a cached prompt says nothing of prefill then).
func prefillRate(rec *results.Record, resp *providers.Response, k *stamps, first time.Time) *float64 {
	if n, ok := resp.Metrics["prompt_eval_count"].(int); ok && n > 0 {
		if d, ok := resp.Metrics["prompt_eval_ms"].(float64); ok && d >= 1 {
			return ptr(math.Round(float64(n)/d*1000*100) / 100)
		}
	}
	if rec.InputTokens == nil || *rec.InputTokens <= 0 || k.token.IsZero() && k.reasoning.IsZero() {
		return nil
	}
	ttft := first.Sub(k.start)
	if ttft < time.Millisecond {
		return nil
	}
	return ptr(math.Round(float64(*rec.InputTokens)/ttft.Seconds()*100) / 100)
}

// cellTimes are what the runner needs of a cell's run beyond its record.
type cellTimes struct {
	// sent is when the last attempt began; firstOrEnd its first output,
	// or its end when there was none: the span a cold start would sit in.
	sent, firstOrEnd time.Time
	// loadReported says the server reported its load time (cold starts
	// are then judged from it alone).
	loadReported bool
}

// newRecord starts the record of a cell: its coordinates.
func newRecord(cfg *config.Config, c plan.Cell) *results.Record {
	return &results.Record{
		RecordType:       results.RecordType,
		RunID:            cfg.Run.ID,
		Provider:         c.Provider.Name,
		ProviderType:     c.Provider.Type,
		Model:            c.Model,
		ThinkingLevel:    c.ThinkingLevel,
		PromptID:         c.Prompt.ID,
		PromptName:       c.Prompt.Name,
		Repetition:       c.Repetition,
		ToolCalls:        []string{},
		ExpectedTools:    c.Prompt.ExpectedTools(),
		Category:         c.Prompt.Category,
		Conversation:     c.Prompt.Conversation,
		ConversationTurn: c.Prompt.Turn,
	}
}

// history is a conversation turn's earlier messages as the providers send
// them (nil for a single turn).
func history(h []prompts.HistoryMessage) []providers.Message {
	if len(h) == 0 {
		return nil
	}
	out := make([]providers.Message, len(h))
	for i, m := range h {
		role := providers.RoleUser
		switch m.Role {
		case prompts.RoleAssistant:
			role = providers.RoleAssistant
		case prompts.RoleTool:
			role = providers.RoleTool
		}
		out[i] = providers.Message{Role: role, Text: m.Text, ToolCalls: m.ToolCalls, CallID: m.CallID, Name: m.Name, IsError: m.IsError}
	}
	return out
}

// runCellTimed is runCell, also returning when things happened. An agentic
// task (a prompt with max_turns) runs its tool loop (runAgentCell).
func runCellTimed(parent context.Context, cfg *config.Config, clock Clock, prov providers.Provider, c plan.Cell, traceParent string) (*results.Record, cellTimes) {
	if c.Prompt.Agentic() {
		return runAgentCell(parent, cfg, clock, prov, c, traceParent), cellTimes{}
	}
	if servesTools(prov, c.Prompt) {
		return runServedCell(parent, cfg, clock, prov, c, traceParent), cellTimes{}
	}
	rec := newRecord(cfg, c)
	req := providers.Request{Model: c.Model, System: c.Prompt.System, Prompt: c.Prompt.Prompt, Tools: c.Prompt.Tools, Now: clock.Now, TraceParent: traceParent,
		MaxOutputBytes: cfg.Run.MaxOutputBytes, MaxTokens: c.Prompt.MaxTokens, Messages: history(c.Prompt.History)}
	if c.ThinkingLevel != nil {
		req.ThinkingLevel = *c.ThinkingLevel
	}

	ctx, cancel := context.WithTimeout(parent, time.Duration(cfg.Run.Timeout))
	defer cancel()
	k := stamps{clock: clock}
	k.cell = clock.Now()
	k.start, k.attempt = k.cell, k.cell
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
	if q := k.start.Sub(k.attempt); q > 0 {
		rec.QueueMS = ptr(msFine(q))
	}
	if !k.token.IsZero() {
		rec.TTFTMS = ptr(ms(k.token.Sub(k.start)))
	}
	if !k.reasoning.IsZero() {
		rec.TTFRMS = ptr(ms(k.reasoning.Sub(k.start)))
	}
	first := earliest(k.token, k.reasoning)
	if !first.IsZero() {
		rec.TTFOMS = ptr(ms(first.Sub(k.start)))
	} else {
		first = end
	}
	rec.Timeline = k.timeline
	rec.Chunks = k.chunks
	rec.Retries, rec.RetryWaitMS = resp.Retries, resp.RetryWaitMS
	rec.InputTokens, rec.OutputTokens, rec.ReasoningTokens = resp.Usage.InputTokens, resp.Usage.OutputTokens, resp.Usage.ReasoningTokens
	rec.CachedInputTokens, rec.CostUSD = resp.Usage.CachedInputTokens, resp.CostUSD
	rec.FinishReason = resp.FinishReason
	rec.ProviderMetrics = resp.Metrics
	keepOutput(rec, resp, secrets, cfg.Run.MaxOutputBytes)
	rec.TokensPerS, rec.ReasoningTokensPerS = rates(resp.Usage, &k)
	serving(rec, resp, &k, first, end)
	if resp.Load != nil && *resp.Load > ColdLoadThreshold {
		rec.ColdStart, rec.LoadMS = true, ptr(msFine(*resp.Load))
	}

	classify(rec, ctx, parent, err, resp, secrets)
	score(rec, c, resp)
	finish(rec, cfg, secrets)
	return rec, cellTimes{sent: k.attempt, firstOrEnd: first, loadReported: resp.Load != nil}
}

// finish is the last step of every record: its cost, then Bound (the
// one scrub and the bounds).
func finish(rec *results.Record, cfg *config.Config, secrets providers.Secrets) {
	price(rec, cfg.Pricing)
	Bound(rec, cfg, secrets)
}

// price sets the cell's cost: the provider's own figure when it gave one
// (already in cost_usd), else its tokens at the pricing block's price for
// the cell's provider entry and model; with no price the cost stays null
// and no reason is written (cost_missing is for a price without tokens).
func price(rec *results.Record, table pricing.Table) {
	if rec.CostUSD != nil {
		if !pricing.ValidCost(*rec.CostUSD) {
			// A negative or infinite figure is no cost (the figure stays
			// in provider_metrics): never summed into a report.
			rec.CostUSD, rec.CostMissing = nil, pricing.BadCost
			return
		}
		rec.CostSource = CostFromProvider
		return
	}
	if rec.CostMissing != "" {
		return // the provider's figures were unusable (an agentic cell's turns)
	}
	p := table.Lookup(rec.Provider, rec.Model)
	if p == nil {
		return
	}
	usd, ok, missing := p.Cost(pricing.Tokens{Input: rec.InputTokens, CachedInput: rec.CachedInputTokens, Output: rec.OutputTokens, Reasoning: rec.ReasoningTokens})
	if !ok {
		rec.CostMissing = missing
		return
	}
	rec.CostUSD, rec.CostSource = &usd, CostFromPricing
}

// Cost sources (results.Record.CostSource).
const (
	CostFromProvider = "provider"
	CostFromPricing  = "pricing"
)

// clean removes the provider's secrets from what of resp is kept besides
// the answer and the reasoning (keepOutput scrubs those whole, then cuts
// them; an agentic turn, cleanText): the short fields a server controls (a
// tool call's name and id, the finish reason, a metric) are cut here too,
// so none can make a record large; tool-call arguments are decoded,
// scrubbed and re-encoded (providers.Secrets.JSON), so a key written with
// \u escapes is found. Agentic turns are built from resp, so this comes
// first; the record's own scrub (finish) is the last guarantee.
func clean(resp *providers.Response, secrets providers.Secrets) {
	resp.FinishReason = secrets.Clean(resp.FinishReason, maxShortField)
	for i := range resp.ToolCalls {
		tc := &resp.ToolCalls[i]
		tc.Name = secrets.Clean(tc.Name, maxShortField)
		tc.ID = secrets.Clean(tc.ID, maxShortField)
		tc.Arguments = secrets.JSON(tc.Arguments)
	}
	for k, v := range resp.Metrics {
		if s, ok := v.(string); ok {
			resp.Metrics[k] = secrets.Clean(s, maxShortField)
		}
	}
}

// cleanText scrubs the answer and the reasoning whole, before an agentic
// turn cuts them; redacted says the answer changed.
func cleanText(resp *providers.Response, secrets providers.Secrets) (redacted bool) {
	text := secrets.Clean(resp.Text, 0)
	redacted = text != resp.Text
	resp.Text = text
	resp.Reasoning = secrets.Clean(resp.Reasoning, 0)
	return redacted
}

// keepOutput puts the answer and the reasoning into the record: scrubbed
// of the secrets over all the provider kept (the cap plus slack), then cut
// to limit bytes on a rune boundary, and a piece of a secret left at the
// cut removed. raw_output_bytes and whether the stream kept less are set
// before (runCell), as scrubbing changes the length.
func keepOutput(rec *results.Record, resp *providers.Response, secrets providers.Secrets, limit int) {
	var cut, redacted bool
	rec.RawOutput, cut, redacted = secrets.Cut(resp.Text, limit)
	rec.RawOutputTruncated = rec.RawOutputTruncated || cut
	rec.RawOutputRedacted = rec.RawOutputRedacted || redacted
	rec.Reasoning, _, _ = secrets.Cut(resp.Reasoning, limit)
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
	judgeCalls(rec, c.Prompt, calls)
	rec.ToolCallDetails = calls
	rec.ToolCalls = append(rec.ToolCalls, toolparse.Names(calls)...)
	rec.ToolCallCount = len(rec.ToolCalls)
	rec.ToolUseSuccess = toolparse.UseSuccess(calls, expected)
	in := validators.Input{Text: resp.Text, ToolCalls: calls}
	if b := c.Prompt.BFCL(); b != nil && len(expected) > 0 {
		rec.ToolUseSuccess = bfclToolUse(b, in)
	}
	out := validators.CheckAll(c.Prompt.Checks(), in)
	out = failUnsafe(out, c.Prompt, rec.UnsafeActions, nil)
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
