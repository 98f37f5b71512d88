package traces

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"bench/config"
	"bench/internal/record/results"
	"bench/providers"
)

// builder turns records into span trees. It holds what the records do not
// say: where each provider's server is, and the prompts (only their sizes
// and hashes reach a span, never their text).
type builder struct {
	tid       trace.TraceID
	providers map[string]providerInfo
	prompts   map[string]promptInfo
	// slab is where a cell's attribute lists are cut from: allocation
	// (and the collection it brings) was most of tracing's cost. It is
	// reused from the start for each cell (see reset): whatever keeps
	// spans past AddRecord (the OTLP queue) copies their attributes.
	slab []attribute.KeyValue
	// spans, attempts and events are reused the same way.
	spans, attempts []span
	events          []event
}

// reset makes the scratch space free for the next cell.
func (b *builder) reset() {
	b.slab, b.spans, b.attempts, b.events = b.slab[:0], b.spans[:0], b.attempts[:0], b.events[:0]
}

// ev returns an empty event list with room for n.
func (b *builder) ev(n int) []event {
	if len(b.events)+n > cap(b.events) {
		b.events = make([]event, 0, max(256, n))
	}
	l := len(b.events)
	b.events = b.events[:l+n]
	return b.events[l : l : l+n]
}

// kv returns an empty attribute list with room for n.
func (b *builder) kv(n int) []attribute.KeyValue {
	if len(b.slab)+n > cap(b.slab) {
		b.slab = make([]attribute.KeyValue, 0, max(1024, n))
	}
	l := len(b.slab)
	b.slab = b.slab[:l+n]
	return b.slab[l : l : l+n]
}

type providerInfo struct {
	host    string // "" for a local CLI
	port    int
	command string // a CLI's base name
}

type promptInfo struct {
	attrs      []attribute.KeyValue // sizes and hashes
	validators []string
}

func newBuilder(tid trace.TraceID, cfg *config.Config) *builder {
	b := &builder{tid: tid, providers: map[string]providerInfo{}, prompts: map[string]promptInfo{}}
	for _, p := range cfg.Providers {
		var pi providerInfo
		if u, err := url.Parse(p.Server.Endpoint); err == nil && u.Host != "" {
			pi.host = u.Hostname()
			pi.port, _ = strconv.Atoi(u.Port())
			if pi.port == 0 {
				pi.port = map[string]int{"http": 80, "https": 443}[u.Scheme]
			}
		} else if p.Server.Endpoint == "" {
			pi.command = commandName(p)
		}
		b.providers[p.Name] = pi
	}
	for _, p := range cfg.PromptSet {
		pi := promptInfo{attrs: []attribute.KeyValue{keyPromptSize.Int(len(p.Prompt)), keyPromptHash.String(hash(p.Prompt))}}
		if p.System != "" {
			pi.attrs = append(pi.attrs, keySystemSize.Int(len(p.System)), keySystemHash.String(hash(p.System)))
		}
		for _, c := range p.Checks() {
			pi.validators = append(pi.validators, c.Type)
		}
		b.prompts[p.ID] = pi
	}
	return b
}

// commandName is a CLI provider's command, base name only (a path may
// name the user's home): the one its kind resolved, else its type.
func commandName(p config.Provider) string {
	if p.Server.Command != "" {
		return filepath.Base(p.Server.Command)
	}
	return p.Type
}

// hash is the spec's form of a text that must not be written: "sha256:"
// and the hex digest.
func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	var buf strings.Builder
	buf.Grow(7 + 2*len(sum))
	buf.WriteString("sha256:")
	var h [2 * sha256.Size]byte
	hex.Encode(h[:], sum[:])
	buf.Write(h[:])
	return buf.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

// genAIProvider is gen_ai.provider.name for a provider type: its kind's
// (the convention's well-known value where there is one), else the type
// itself (a record of a kind this bench does not know).
func genAIProvider(providerType string) string {
	if k, ok := providers.Lookup(providerType); ok {
		return k.GenAIProvider()
	}
	return providerType
}

// cellStart is the cell's start with microsecond precision.
func cellStart(r *results.Record) time.Time {
	if r.StartedAtUS != 0 {
		return time.UnixMicro(r.StartedAtUS).UTC()
	}
	return time.UnixMilli(r.StartedAtMS).UTC()
}

// offset places a timeline offset (ms, µs precision) in absolute time.
func offset(start time.Time, ms float64) time.Time {
	return start.Add(time.Duration(math.Round(ms*1000)) * time.Microsecond)
}

func suiteOf(r *results.Record) suiteKey {
	k := suiteKey{provider: r.Provider, model: r.Model}
	if r.ThinkingLevel != nil {
		k.thinking = *r.ThinkingLevel
	}
	return k
}

// cellStatus is the spec status of a cell: skipped when the provider or
// model was not there, error when it failed, ok otherwise (a wrong answer
// is an assertion's failure, not the cell's).
func cellStatus(r *results.Record) (status, typ, msg string) {
	switch {
	case r.AvailabilityStatus == results.StatusSkippedUnavailable:
		return StatusSkipped, "", ""
	case r.AvailabilityStatus != results.StatusOK || r.FailureType != nil:
		typ = r.AvailabilityStatus
		if r.FailureType != nil {
			typ = *r.FailureType
		}
		if r.ErrorMessage != nil {
			msg = *r.ErrorMessage
		}
		return StatusError, typ, msg
	}
	return StatusOK, "", ""
}

// cell builds a record's subtree: the cell span, its request attempts (or
// the CLI subprocess) with their events, the tool calls, the turns of an
// agentic cell, and the assertion check. The cell span comes first.
func (b *builder) cell(r *results.Record) []span {
	key := r.Key()
	start := cellStart(r)
	end := start
	if n := len(r.Timeline); n > 0 && r.Timeline[n-1].Event == results.EventEnd {
		end = offset(start, r.Timeline[n-1].AtMS)
	} else if r.EndedAtMS*1000 > r.StartedAtUS {
		end = time.UnixMilli(r.EndedAtMS).UTC()
	}
	c := span{
		id: cellID(b.tid, key), parent: suiteID(b.tid, suiteOf(r)),
		kind: KindCustom, otel: trace.SpanKindInternal,
		name:  "cell " + r.PromptID + " #" + itoa(r.Repetition),
		start: start, end: end,
	}
	c.attrs = b.cellAttrs(r)
	status, typ, msg := cellStatus(r)
	c.status = status
	if status == StatusError {
		c.fail(typ, msg)
	}
	out := append(b.spans[:0], c)
	tw := timeline{b: b, r: r, cell: &out[0]}
	attempts := tw.attempts()
	if len(r.TurnDetails) > 0 {
		out = append(out, b.turns(r, &out[0], attempts)...)
	} else {
		out = append(out, attempts...)
		parent := &out[0]
		if len(attempts) > 0 {
			parent = &out[len(out)-1]
		}
		out = append(out, b.toolCalls(r, parent, tw.calls, tw.firstText)...)
	}
	out = append(out, b.assertion(r, &out[0]))
	b.spans = out
	return out
}

func (b *builder) cellAttrs(r *results.Record) []attribute.KeyValue {
	op := "chat"
	if b.providers[r.Provider].host == "" || len(r.TurnDetails) > 0 {
		op = "invoke_agent"
	}
	gp := genAIProvider(r.ProviderType)
	a := b.kv(48)
	a = append(a,
		keyOperation.String(op), keyProviderName.String(gp), keySystem.String(gp),
		keyRequestModel.String(r.Model), keyPromptName.String(r.PromptName),
		keyProvider.String(r.Provider), keyProviderType.String(r.ProviderType),
		keyPromptID.String(r.PromptID), keyRepetition.Int(r.Repetition),
	)
	if r.ThinkingLevel != nil {
		a = append(a, keyThinking.String(*r.ThinkingLevel))
	}
	a = append(a, b.prompts[r.PromptID].attrs...)
	if r.InputTokens != nil {
		a = append(a, keyInputTokens.Int(*r.InputTokens))
	}
	if r.OutputTokens != nil {
		a = append(a, keyOutputTokens.Int(*r.OutputTokens))
	}
	if r.ReasoningTokens != nil {
		a = append(a, keyReasoningToks.Int(*r.ReasoningTokens))
	}
	if r.FinishReason != "" {
		a = append(a, keyFinishReasons.StringSlice([]string{r.FinishReason}))
	}
	a = append(a, keyAvailability.String(r.AvailabilityStatus), keySuccess.Bool(r.Success))
	if r.FailureType != nil {
		a = append(a, keyFailureType.String(*r.FailureType))
	}
	a = append(a, keyE2E.Int64(r.E2EMS))
	for _, f := range []struct {
		k attribute.Key
		v *int64
	}{{keyTTFT, r.TTFTMS}, {keyTTFO, r.TTFOMS}, {keyTTFR, r.TTFRMS}} {
		if f.v != nil {
			a = append(a, f.k.Int64(*f.v))
		}
	}
	if r.TokensPerS != nil && !math.IsInf(*r.TokensPerS, 0) && !math.IsNaN(*r.TokensPerS) {
		a = append(a, keyTokensPerS.Float64(*r.TokensPerS))
	}
	a = append(a, keyChunks.Int(r.Chunks), keyRetries.Int(r.Retries), keyRetryWait.Int64(r.RetryWaitMS),
		keyOutputSize.Int(r.RawOutputBytes), keyOutputHash.String(hash(r.RawOutput)), keyTruncated.Bool(r.RawOutputTruncated))
	if r.Reasoning != "" {
		a = append(a, keyReasonSize.Int(len(r.Reasoning)))
	}
	a = append(a, keyToolCalls.StringSlice(r.ToolCalls), keyToolCount.Int(r.ToolCallCount))
	if r.Turns > 0 {
		a = append(a, keyTurns.Int(r.Turns))
	}
	return a
}

// timeline walks a cell's stamps into request attempts.
type timeline struct {
	b    *builder
	r    *results.Record
	cell *span
	// calls are the native tool calls' first stamps by call index, and
	// firstText the first answer text's, in the last attempt.
	calls     map[int]time.Time
	firstText time.Time
}

// attempts makes one span per request attempt: http.request for a server,
// tool.call for a CLI subprocess. A retry ends its attempt (the back-off
// is the gap before the next); the last attempt ends with the cell.
func (tw *timeline) attempts() []span {
	r, cell := tw.r, tw.cell
	start := cell.start
	pi := tw.b.providers[r.Provider]
	statuses := retryStatuses(r.ProviderMetrics)
	out := tw.b.attempts[:0]
	defer func() { tw.b.attempts = out[:0] }()
	var cur *span
	var token bool
	closeAt := func(t time.Time) {
		if cur != nil && cur.end.IsZero() {
			cur.end = t
		}
	}
	for _, e := range r.Timeline {
		at := clamp(offset(start, e.AtMS), cell.start, cell.end)
		if e.Event == results.EventRequestStart {
			closeAt(at)
			out = append(out, tw.attempt(pi, e.Attempt, len(out), at))
			cur = &out[len(out)-1]
			token = false
			tw.calls, tw.firstText = map[int]time.Time{}, time.Time{}
			continue
		}
		if cur == nil {
			continue // stamps before any request: none are emitted so
		}
		switch e.Event {
		case results.EventConnected:
			ev := event{name: "connected", at: at}
			if e.Detail != "" {
				ev.attrs = append(tw.b.kv(1), keyConnection.String(e.Detail))
			}
			cur.events = append(cur.events, ev)
		case results.EventRequestWritten:
			cur.events = append(cur.events, event{name: "request_written", at: at})
		case results.EventFirstByte:
			cur.events = append(cur.events, event{name: "first_byte", at: at})
		case results.EventFirstReasoning:
			cur.events = append(cur.events, event{name: "first_reasoning", at: at})
		case results.EventFirstText, results.EventToolCall:
			kind := "text"
			if e.Event == results.EventToolCall {
				kind = "tool_call"
				if _, seen := tw.calls[e.Call]; !seen {
					tw.calls[e.Call] = at
				}
			} else if tw.firstText.IsZero() {
				tw.firstText = at
			}
			if !token {
				token = true
				cur.events = append(cur.events, event{name: "first_token", at: at, attrs: append(tw.b.kv(1), keyTokenKind.String(kind))})
			}
		case results.EventRetry:
			cur.events = append(cur.events, event{name: "retry", at: at, attrs: append(tw.b.kv(2),
				keyRetryReason.String(e.Detail), keyRetryWaitMS.Float64(e.WaitMS))})
			n := len(out) - 1
			if n < len(statuses) {
				cur.attrs = append(cur.attrs, keyHTTPStatus.Int(statuses[n]))
			}
			cur.fail(e.Detail, "attempt failed ("+e.Detail+"); retried after "+strconv.FormatFloat(e.WaitMS, 'f', -1, 64)+" ms")
			closeAt(at)
		}
	}
	closeAt(cell.end)
	if cur != nil && cur.status == "" {
		tw.last(cur, pi)
	}
	for i := range out {
		if out[i].status == "" {
			out[i].status = StatusOK
		}
	}
	return out
}

// attempt starts the i-th request of the cell, attempt n of its turn.
func (tw *timeline) attempt(pi providerInfo, n, i int, at time.Time) span {
	s := span{
		id: child(tw.b.tid, tw.cell.id, "attempt", i), parent: tw.cell.id,
		start: at, attrs: tw.b.kv(10), events: tw.b.ev(6),
	}
	s.attrs = append(s.attrs, keyAttempt.Int(n))
	if pi.host == "" {
		s.kind, s.otel, s.name = KindToolCall, trace.SpanKindInternal, "exec "+pi.command
		s.attrs = append(s.attrs, keyOperation.String("invoke_agent"), keyAgentName.String(pi.command), keyCommand.String(pi.command))
		return s
	}
	s.kind, s.otel, s.name = KindHTTPRequest, trace.SpanKindClient, "POST"
	s.attrs = append(s.attrs, keyHTTPMethod.String("POST"), keyServerAddr.String(pi.host))
	if pi.port != 0 {
		s.attrs = append(s.attrs, keyServerPort.Int(pi.port))
	}
	return s
}

// last finishes the attempt that ended the cell: the cell's failure is
// its failure when the request itself failed (not for an empty answer).
func (tw *timeline) last(s *span, pi providerInfo) {
	r := tw.r
	if r.HTTPStatus != nil {
		s.attrs = append(s.attrs, keyHTTPStatus.Int(*r.HTTPStatus))
	}
	if pi.host == "" {
		for _, m := range []struct {
			k    attribute.Key
			name string
		}{{keyExitCode, "exit_code"}, {keyStartupMS, "startup_ms"}} {
			if v, ok := number(r.ProviderMetrics[m.name]); ok {
				s.attrs = append(s.attrs, m.k.Int64(v))
			}
		}
	}
	if r.AvailabilityStatus != results.StatusOK || (r.FailureType != nil && *r.FailureType != results.FailEmptyResponse) {
		typ, msg := r.AvailabilityStatus, ""
		if r.FailureType != nil {
			typ = *r.FailureType
		}
		if r.ErrorMessage != nil {
			msg = *r.ErrorMessage
		}
		s.fail(typ, msg)
		return
	}
	s.status = StatusOK
}

// number reads a metric that is an integer in memory or a float64 after a
// JSON round trip.
func number(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		return int64(n), true
	}
	return 0, false
}

func retryStatuses(m map[string]any) []int {
	switch v := m["retry_statuses"].(type) {
	case []int:
		return v
	case []any:
		out := make([]int, 0, len(v))
		for _, x := range v {
			n, _ := number(x)
			out = append(out, int(n))
		}
		return out
	}
	return nil
}

// toolCalls makes a tool.call span for each call of a single-turn reply,
// below the attempt that carried it. A native call starts at its first
// stamp, a call found in the text at the first text; each lasts until the
// next call starts or the reply ends.
func (b *builder) toolCalls(r *results.Record, parent *span, calls map[int]time.Time, firstText time.Time) []span {
	if len(r.ToolCallDetails) == 0 {
		return nil
	}
	out := make([]span, 0, len(r.ToolCallDetails))
	native := 0
	for i, tc := range r.ToolCallDetails {
		start := parent.start
		if tc.Source == results.SourceNative {
			if t, ok := calls[native]; ok {
				start = t
			}
			native++
		} else if !firstText.IsZero() {
			start = firstText
		}
		s := span{
			id: child(b.tid, parent.id, "tool", i), parent: parent.id,
			kind: KindToolCall, otel: trace.SpanKindInternal, name: "tool_call " + tc.Name,
			start: clamp(start, parent.start, parent.end), end: parent.end, status: StatusOK,
		}
		s.attrs = append(b.kv(8), keyToolName.String(tc.Name), keyToolType.String("function"),
			keyToolSource.String(tc.Source), keyToolExecuted.Bool(false),
			keyArgsSize.Int(len(tc.Arguments)), keyArgsHash.String(hash(string(tc.Arguments))))
		if tc.ID != "" {
			s.attrs = append(s.attrs, keyToolCallID.String(tc.ID))
		}
		out = append(out, s)
	}
	// A native call's arguments stream until the next call starts.
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if r.ToolCallDetails[j].Source == results.SourceNative && r.ToolCallDetails[i].Source == results.SourceNative {
				if out[j].start.After(out[i].start) {
					out[i].end = out[j].start
				}
				break
			}
		}
	}
	return out
}

// turns makes an agentic cell's turn spans (one per model reply) with the
// request attempts that began within each and the tool calls bench
// answered, each with its result's hash. A turn's window covers its reply
// and the answering of its calls (which follows the reply: the reply's end
// is the event reply_end), so each call lies inside its turn.
func (b *builder) turns(r *results.Record, cell *span, attempts []span) []span {
	out := make([]span, 0, len(r.TurnDetails)+len(attempts))
	var turns []span
	var calls []span
	for i, t := range r.TurnDetails {
		s := span{
			id: child(b.tid, cell.id, "turn", i), parent: cell.id,
			kind: KindLLMReason, otel: trace.SpanKindInternal, name: "turn " + itoa(i+1),
			start: clamp(offset(cell.start, t.StartMS), cell.start, cell.end), status: StatusOK,
		}
		reply := clamp(offset(cell.start, t.EndMS), s.start, cell.end)
		s.end = reply
		for _, c := range t.Calls {
			if e := clamp(offset(cell.start, c.EndMS), s.start, cell.end); e.After(s.end) {
				s.end = e
			}
		}
		s.events = []event{{name: "reply_end", at: reply}}
		s.attrs = []attribute.KeyValue{keyTurnIndex.Int(i + 1), keyTurnTextSize.Int(len(t.Text)), keyTurnTextHash.String(hash(t.Text)),
			keyToolCount.Int(len(t.Calls))}
		if t.TTFTMS != nil {
			s.attrs = append(s.attrs, keyTurnTTFT.Float64(*t.TTFTMS))
		}
		if t.Error != "" {
			s.fail("turn_error", t.Error)
		}
		turns = append(turns, s)
		for j, c := range t.Calls {
			calls = append(calls, b.turnCall(cell, &s, c, j))
		}
	}
	out = append(out, turns...)
	out = append(out, calls...)
	for _, a := range attempts {
		parent := cell
		for i := range turns {
			if t := &turns[i]; !a.start.Before(t.start) && !a.start.After(t.end) {
				parent = t
				break
			}
		}
		a.parent = parent.id
		a.start = clamp(a.start, parent.start, parent.end)
		a.end = clamp(a.end, a.start, parent.end)
		for k := range a.events {
			a.events[k].at = clamp(a.events[k].at, a.start, a.end)
		}
		out = append(out, a)
	}
	return out
}

func (b *builder) turnCall(cell, turn *span, c results.TurnCall, j int) span {
	s := span{
		id: child(b.tid, turn.id, "tool", j), parent: turn.id,
		kind: KindToolCall, otel: trace.SpanKindInternal, name: "execute_tool " + c.Name, status: StatusOK,
	}
	s.start = clamp(offset(cell.start, c.StartMS), turn.start, turn.end)
	s.end = clamp(offset(cell.start, c.EndMS), s.start, turn.end)
	s.attrs = []attribute.KeyValue{keyOperation.String("execute_tool"), keyToolName.String(c.Name), keyToolType.String("function"),
		keyToolExecuted.Bool(true), keyArgsSize.Int(len(c.Arguments)), keyArgsHash.String(hash(string(c.Arguments))),
		keyResultSize.Int(len(c.Result)), keyResultHash.String(c.ResultHash), keyToolRule.Int(c.Rule)}
	if c.ID != "" {
		s.attrs = append(s.attrs, keyToolCallID.String(c.ID))
	}
	if c.Unknown {
		s.attrs = append(s.attrs, keyToolUnknown.Bool(true))
	}
	if c.IsError {
		s.attrs = append(s.attrs, keyToolIsError.Bool(true))
		s.fail("tool_error", "the tool's result is an error")
	}
	return s
}

// judge is the span of a cell's llm_judge, after the cell (its window is
// the judge's started_at_ms and latency_ms), a child of the suite's: the
// traceparent its requests carried names it. An assertion check of one
// assertion, the judge's verdict; an error when it gave none.
func (b *builder) judge(r *results.Record) (span, bool) {
	j := r.Judge
	if j == nil || j.StartedAtMS <= 0 {
		return span{}, false
	}
	start := time.UnixMilli(j.StartedAtMS).UTC()
	s := span{
		id: judgeID(b.tid, r.Key()), parent: suiteID(b.tid, suiteOf(r)),
		kind: KindAssertionCheck, otel: trace.SpanKindInternal,
		name:  "judge " + r.PromptID + " #" + itoa(r.Repetition),
		start: start, end: start.Add(time.Duration(max(j.LatencyMS, 0)) * time.Millisecond),
		attrs: b.kv(10), events: b.ev(1),
	}
	s.attrs = append(s.attrs, keyPromptID.String(r.PromptID), keyRepetition.Int(r.Repetition), keyRequestModel.String(j.Model),
		keyJudge.String(j.Provider), keyJudgeSamples.Int(len(j.Samples)))
	if j.InputTokens != nil {
		s.attrs = append(s.attrs, keyInputTokens.Int(*j.InputTokens))
	}
	if j.OutputTokens != nil {
		s.attrs = append(s.attrs, keyOutputTokens.Int(*j.OutputTokens))
	}
	switch j.Verdict {
	case results.VerdictPass, results.VerdictFail:
		passed, score := 0, 0.0
		if j.Verdict == results.VerdictPass {
			passed, score = 1, 1
		}
		if j.Score != nil {
			score = *j.Score
		}
		s.attrs = append(s.attrs, keyTotal.Int(1), keyPassed.Int(passed), keyFailed.Int(1-passed))
		s.events = append(s.events, event{name: "gen_ai.evaluation.result", at: s.end, attrs: append(b.kv(3),
			keyEvalName.String("llm_judge"), keyEvalLabel.String(j.Verdict), keyEvalValue.Float64(score))})
		s.status = StatusOK
		if passed == 0 {
			s.fail("assertion_failed", "1 of 1 assertions failed: llm_judge")
		}
	default:
		s.attrs = append(s.attrs, keyTotal.Int(0), keyPassed.Int(0), keyFailed.Int(0))
		s.fail(results.JudgeError, "the judge gave no verdict")
	}
	return s, true
}

// assertion is the validators' span. Its assertions are the record's two
// verdicts, each counted when it judged: objective_pass (all the prompt's
// validators) and tool_use_success (the expected tools were called).
// Scoring is not stamped, so the span sits at the cell's end.
func (b *builder) assertion(r *results.Record, cell *span) span {
	s := span{
		id: child(b.tid, cell.id, "assert", 0), parent: cell.id,
		kind: KindAssertionCheck, otel: trace.SpanKindInternal, name: "validate",
		start: cell.end, end: cell.end, attrs: b.kv(8), events: b.ev(2),
	}
	total, passed := 0, 0
	var failed []string
	for _, v := range []struct {
		name string
		pass *bool
		key  attribute.Key
	}{{"objective", r.ObjectivePass, keyObjective}, {"tool_use", r.ToolUseSuccess, keyToolUse}} {
		if v.pass == nil {
			continue
		}
		total++
		label, score := "fail", 0.0
		if *v.pass {
			passed++
			label, score = "pass", 1
		} else {
			failed = append(failed, v.name)
		}
		s.attrs = append(s.attrs, v.key.Bool(*v.pass))
		s.events = append(s.events, event{name: "gen_ai.evaluation.result", at: s.start, attrs: append(b.kv(3),
			keyEvalName.String(v.name), keyEvalLabel.String(label), keyEvalValue.Float64(score))})
	}
	s.attrs = append(s.attrs, keyTotal.Int(total), keyPassed.Int(passed), keyFailed.Int(total-passed))
	if vs := b.prompts[r.PromptID].validators; len(vs) > 0 {
		s.attrs = append(s.attrs, keyValidators.StringSlice(vs))
	}
	switch {
	case total == 0:
		s.status = StatusSkipped
	case len(failed) > 0:
		msg := itoa(len(failed)) + " of " + itoa(total) + " assertions failed: " + failed[0]
		if len(failed) > 1 {
			msg += ", " + failed[1]
		}
		s.fail("assertion_failed", msg)
	default:
		s.status = StatusOK
	}
	return s
}
