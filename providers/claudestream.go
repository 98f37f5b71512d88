package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"bench/internal/record/pricing"
	"bench/internal/record/results"
)

// claudeLine is the part of one Claude Code stream-json line that bench reads.
// The CLI writes one JSON object per line: system/init first, then
// stream_event lines (raw Messages API SSE events, with
// --include-partial-messages), assistant and user messages, and one result
// line at the end.
type claudeLine struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	SessionID       string          `json:"session_id"`
	ParentToolUseID *string         `json:"parent_tool_use_id"`
	Version         string          `json:"claude_code_version"`
	Model           string          `json:"model"`
	Event           *claudeEvent    `json:"event"`
	Message         *claudeMessage  `json:"message"`
	APIMessageID    string          `json:"api_message_id"`
	TTFTMS          *int64          `json:"ttft_ms"`
	Error           string          `json:"error"`
	APIErrorStatus  *int            `json:"api_error_status"`
	APIErrorType    string          `json:"api_error_type"`
	APIError        string          `json:"api_error"`
	Attempt         *int            `json:"attempt"`
	RetryDelayMS    *float64        `json:"retry_delay_ms"`
	IsError         bool            `json:"is_error"`
	Result          string          `json:"result"`
	Errors          []string        `json:"errors"`
	StopReason      string          `json:"stop_reason"`
	TerminalReason  string          `json:"terminal_reason"`
	DurationMS      *int64          `json:"duration_ms"`
	DurationAPIMS   *int64          `json:"duration_api_ms"`
	NumTurns        *int            `json:"num_turns"`
	TotalCostUSD    *float64        `json:"total_cost_usd"`
	Usage           *claudeUsage    `json:"usage"`
	Denials         json.RawMessage `json:"permission_denials"`
}

// claudeEvent is a Messages API streaming event as the CLI relays it.
type claudeEvent struct {
	Type         string         `json:"type"`
	Index        int            `json:"index"`
	Message      *claudeMessage `json:"message"`
	ContentBlock *claudeBlock   `json:"content_block"`
	Delta        *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *claudeUsage `json:"usage"`
}

type claudeMessage struct {
	ID      string        `json:"id"`
	Content []claudeBlock `json:"content"`
	Usage   *claudeUsage  `json:"usage"`
}

type claudeBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking string          `json:"thinking"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
	// A tool_result block of a user line: what the CLI handed back.
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type claudeUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	OutputTokensDetails      *struct {
		ThinkingTokens *int `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
}

// streamUsage is a Messages stream's token counts: input (uncached), the
// cache reads and writes, and output.
type streamUsage struct {
	in, cacheRead, cacheWrite, out *int
}

// revise takes the counts a message_start or message_delta carries: each
// is the message's total so far, so a later one replaces an earlier (a
// message_delta may revise input_tokens after message_start). The output
// count of a message_start is a placeholder (1): only a message_delta's
// (withOutput) is taken.
func (u *streamUsage) revise(c *claudeUsage, withOutput bool) {
	if c == nil {
		return
	}
	for _, f := range []struct{ dst, src **int }{
		{&u.in, &c.InputTokens}, {&u.cacheRead, &c.CacheReadInputTokens},
		{&u.cacheWrite, &c.CacheCreationInputTokens}, {&u.out, &c.OutputTokens},
	} {
		if *f.src != nil && (withOutput || f.dst != &u.out) {
			v := **f.src
			*f.dst = &v
		}
	}
}

// plus adds two messages' counts; unknown plus unknown stays unknown, and
// a sum past what a count holds (or of a negative count) is unknown too.
func (u streamUsage) plus(o streamUsage) streamUsage {
	add := func(a, b *int) *int {
		if a == nil && b == nil {
			return nil
		}
		return sumCounts(a, b)
	}
	return streamUsage{add(u.in, o.in), add(u.cacheRead, o.cacheRead), add(u.cacheWrite, o.cacheWrite), add(u.out, o.out)}
}

// set fills a Usage: input tokens count the whole prompt (cache reads and
// writes included, as the result line's do), cached ones the reads.
func (u streamUsage) set(dst *Usage) {
	if u.in != nil {
		dst.InputTokens = sumCounts(u.in, u.cacheRead, u.cacheWrite)
	}
	dst.OutputTokens = u.out
	dst.CachedInputTokens = u.cacheRead
}

// claudeToolBlock is a tool_use block being streamed: where its call sits in
// the response and the input JSON received so far.
type claudeToolBlock struct {
	call    int
	input   *capped
	initial json.RawMessage
	done    bool
}

// claudeAPIError is what a synthetic assistant error message said: the CLI
// writes one when the API call failed, before the result line.
type claudeAPIError struct {
	code, typ, message string
	status             int
}

// claudeStream folds stream-json lines into a Response, one line at a time.
// It is pure (no clock, no I/O) so it can be fed recorded output and fuzzed;
// the provider stamps times around it.
type claudeStream struct {
	text, reasoning *capped
	tools           *toolBudget
	calls           []results.ToolCall

	// streamed holds the ids of messages whose content arrived as
	// stream_event deltas, so their assistant line is not counted twice.
	streamed map[string]bool
	blocks   map[int]*claudeToolBlock

	sawInit    bool
	version    string
	sessionID  string
	initModel  string
	cliTTFTMS  *int64
	stopReason string
	retries    int
	retryWait  float64

	// done sums the usage of the messages already ended; msg is the
	// current message's, as message_start gave it and each message_delta
	// revised it (its counts are cumulative, input tokens included).
	done, msg streamUsage
	apiErr    *claudeAPIError
	result    *claudeLine

	malformed       int
	malformedSample string

	// at is when the line being fed arrived (the provider sets it; zero
	// when fed without a clock): the turns are stamped with it.
	at time.Time
	// turns are the model's replies in the CLI's own loop, one per
	// message, with the message id each came from.
	turns   []Turn
	turnMsg []string
	// callTurn places each entry of calls in turns: turn index, call index.
	callTurn [][2]int
}

// newClaudeStream folds a stream keeping at most limit bytes of each
// output field (0: the default cap).
func newClaudeStream(limit int) *claudeStream {
	if limit <= 0 {
		limit = DefaultMaxOutputBytes + CapSlack
	}
	return &claudeStream{streamed: map[string]bool{}, blocks: map[int]*claudeToolBlock{},
		text: newCapped(limit), reasoning: newCapped(limit), tools: newToolBudget(limit)}
}

// maxTurnsKept bounds the replies a stream keeps of the CLI's own loop
// (a task's max_turns is at most 100).
const maxTurnsKept = 256

// capAppend appends what fits of add to a turn's text, within the cap of
// each output field.
func (s *claudeStream) capAppend(text, add string) string {
	if room := s.text.limit - len(text); room > 0 {
		return text + claudeTruncate(add, room)
	}
	return text
}

// markStreamed notes a message whose content arrived as deltas; the set
// stays bounded whatever ids the CLI prints.
func (s *claudeStream) markStreamed(id string) {
	if len(s.streamed) < maxTrackedItems {
		s.streamed[id] = true
	}
}

// maxMalformedSample bounds the malformed line kept as an example. The
// runner scrubs it of the secrets, then cuts it to a quarter of this: a
// key that straddles that cut is still found whole.
const maxMalformedSample = 4 << 10

// Feed reads one line and emits the events it carries. It reports whether the
// line was the system/init line, which the provider times as the end of CLI
// start-up. A line that is not a JSON object is counted and skipped.
func (s *claudeStream) Feed(line []byte, emit EmitFunc) (init bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return false
	}
	var l claudeLine
	if line[0] != '{' || json.Unmarshal(line, &l) != nil {
		s.malformed++
		if s.malformedSample == "" {
			s.malformedSample = claudeTruncate(string(line), maxMalformedSample)
		}
		return false
	}
	switch l.Type {
	case "system":
		switch l.Subtype {
		case "init":
			if s.sawInit {
				return false
			}
			s.sawInit = true
			s.version, s.sessionID, s.initModel = l.Version, l.SessionID, l.Model
			return true
		case "api_retry":
			s.retries++
			if l.RetryDelayMS != nil && *l.RetryDelayMS > 0 {
				s.retryWait += *l.RetryDelayMS
			}
		}
	case "stream_event":
		// Subagents' streams are theirs, not the answer.
		if l.ParentToolUseID == nil && l.Event != nil {
			s.event(&l, emit)
		}
	case "assistant":
		if l.Error != "" {
			s.assistantError(&l)
			return false
		}
		if l.ParentToolUseID == nil && l.Message != nil && !s.streamed[l.Message.ID] {
			s.assistantFallback(l.Message, emit)
		}
	case "user":
		if l.ParentToolUseID == nil && l.Message != nil {
			s.toolResults(l.Message)
		}
	case "result":
		if s.result == nil {
			s.result = &l
		}
	}
	return false
}

// turn returns the reply being streamed, starting one when a message with
// another id begins (or when none has yet).
func (s *claudeStream) turn(msgID string, start bool) *Turn {
	n := len(s.turns)
	// Past maxTurnsKept replies, the last one goes on: a CLI printing a
	// new message id per line cannot grow the list without end.
	if n == 0 || (start && n < maxTurnsKept && (msgID == "" || s.turnMsg[n-1] != msgID)) {
		s.turns = append(s.turns, Turn{Start: s.at})
		s.turnMsg = append(s.turnMsg, msgID)
		n++
	}
	t := &s.turns[n-1]
	t.End = s.at
	return t
}

// output marks the first text or tool call of the current reply.
func (t *Turn) output(at time.Time) {
	if t.FirstOutput.IsZero() {
		t.FirstOutput = at
	}
}

// addCall records a new tool call of the current reply.
func (s *claudeStream) addCall(c results.ToolCall, t *Turn) int {
	s.calls = append(s.calls, c)
	s.callTurn = append(s.callTurn, [2]int{len(s.turns) - 1, len(t.Calls)})
	t.Calls = append(t.Calls, AgentCall{Made: s.at})
	t.output(s.at)
	return len(s.calls) - 1
}

// toolResults takes what the CLI handed back to the model for its calls
// (a user line's tool_result blocks), by call id.
func (s *claudeStream) toolResults(m *claudeMessage) {
	for _, b := range m.Content {
		if b.Type != "tool_result" || b.ToolUseID == "" {
			continue
		}
		for i := range s.calls {
			if s.calls[i].ID != b.ToolUseID {
				continue
			}
			at := s.callTurn[i]
			c := &s.turns[at[0]].Calls[at[1]]
			c.Answered, c.Result, c.IsError = s.at, claudeBlockText(b.Content), b.IsError
			break
		}
	}
}

// claudeBlockText is a tool_result's text: a string content as it is, a
// list of blocks as their text parts joined.
func claudeBlockText(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	var parts []claudeBlock
	_ = json.Unmarshal(raw, &parts) // anything else has no text
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func (s *claudeStream) event(l *claudeLine, emit EmitFunc) {
	ev := l.Event
	if l.APIMessageID != "" {
		s.markStreamed(l.APIMessageID)
	}
	if ev.Type == "message_start" {
		id := ""
		if ev.Message != nil {
			id = ev.Message.ID
		}
		s.turn(id, true)
	}
	t := s.turn("", false)
	switch ev.Type {
	case "message_start":
		// Block indexes restart with each message.
		s.closeBlocks()
		s.blocks = map[int]*claudeToolBlock{}
		if ev.Message != nil {
			s.markStreamed(ev.Message.ID)
			s.done = s.done.plus(s.msg)
			s.msg = streamUsage{}
			s.msg.revise(ev.Message.Usage, false)
		}
		if s.cliTTFTMS == nil && l.TTFTMS != nil {
			s.cliTTFTMS = l.TTFTMS
		}
	case "content_block_start":
		b := ev.ContentBlock
		if b == nil || (b.Type != "tool_use" && b.Type != "server_tool_use") {
			return
		}
		if old := s.blocks[ev.Index]; old != nil {
			s.closeBlock(old)
			delete(s.blocks, ev.Index)
		}
		if !s.tools.admit() {
			// Past MaxToolCalls: still output, not kept.
			emit(Event{Kind: EventToolCall, Text: b.Name, Call: -1})
			return
		}
		i := s.addCall(results.ToolCall{ID: b.ID, Name: claudeTruncate(b.Name, maxToolName)}, t)
		s.blocks[ev.Index] = &claudeToolBlock{call: i, initial: b.Input, input: s.tools.args()}
		emit(Event{Kind: EventToolCall, Text: b.Name, Call: i})
	case "content_block_delta":
		d := ev.Delta
		if d == nil {
			return
		}
		switch d.Type {
		case "text_delta":
			if d.Text != "" {
				s.text.WriteString(d.Text)
				t.Text = s.capAppend(t.Text, d.Text)
				t.output(s.at)
				emit(Event{Kind: EventText, Text: d.Text})
			}
		case "thinking_delta":
			if d.Thinking != "" {
				s.reasoning.WriteString(d.Thinking)
				t.Reasoning = s.capAppend(t.Reasoning, d.Thinking)
				emit(Event{Kind: EventReasoning, Text: d.Thinking})
			}
		case "input_json_delta":
			if b := s.blocks[ev.Index]; b != nil && !b.done && d.PartialJSON != "" {
				b.input.WriteString(d.PartialJSON)
				at := s.callTurn[b.call]
				s.turns[at[0]].Calls[at[1]].Made = s.at
				emit(Event{Kind: EventToolCall, Text: d.PartialJSON, Call: b.call})
			}
		}
	case "content_block_stop":
		if b := s.blocks[ev.Index]; b != nil {
			s.closeBlock(b)
		}
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != "" {
			s.stopReason = ev.Delta.StopReason
		}
		s.msg.revise(ev.Usage, true)
	}
}

// closeBlock sets a streamed tool call's arguments from its input JSON.
func (s *claudeStream) closeBlock(b *claudeToolBlock) {
	if b.done {
		return
	}
	b.done = true
	in := b.input.String()
	s.tools.noteCut(b.input)
	if strings.TrimSpace(in) == "" {
		s.calls[b.call].Arguments = results.Arguments(s.tools.keep(string(b.initial)))
		return
	}
	s.calls[b.call].Arguments = results.Arguments(in)
}

func (s *claudeStream) closeBlocks() {
	for _, b := range s.blocks {
		s.closeBlock(b)
	}
}

// assistantFallback takes a whole message's content when it did not stream
// (the CLI run without --include-partial-messages, or a build that drops
// them): the text arrives in one piece, timed at this line.
func (s *claudeStream) assistantFallback(m *claudeMessage, emit EmitFunc) {
	t := s.turn(m.ID, true)
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			if b.Text != "" {
				s.text.WriteString(b.Text)
				t.Text = s.capAppend(t.Text, b.Text)
				t.output(s.at)
				emit(Event{Kind: EventText, Text: b.Text})
			}
		case "thinking":
			if b.Thinking != "" {
				s.reasoning.WriteString(b.Thinking)
				t.Reasoning = s.capAppend(t.Reasoning, b.Thinking)
				emit(Event{Kind: EventReasoning, Text: b.Thinking})
			}
		case "tool_use", "server_tool_use":
			if !s.tools.admit() {
				emit(Event{Kind: EventToolCall, Text: b.Name, Call: -1})
				continue
			}
			i := s.addCall(results.ToolCall{ID: b.ID, Name: claudeTruncate(b.Name, maxToolName), Arguments: results.Arguments(s.tools.keep(string(b.Input)))}, t)
			emit(Event{Kind: EventToolCall, Text: b.Name, Call: i})
		}
	}
}

// assistantError keeps the first synthetic error message. Its text is the
// CLI's explanation, not the model's answer.
func (s *claudeStream) assistantError(l *claudeLine) {
	if s.apiErr != nil {
		return
	}
	e := &claudeAPIError{code: l.Error, typ: l.APIErrorType}
	if l.APIErrorStatus != nil {
		e.status = *l.APIErrorStatus
	}
	if l.Message != nil {
		for _, b := range l.Message.Content {
			if b.Type == "text" && len(e.message) < maxErrorBody {
				e.message += claudeTruncate(b.Text, maxErrorBody)
			}
		}
	}
	s.apiErr = e
}

// Response builds the response from everything fed so far. It may be called
// on a cut stream; partial output is kept.
func (s *claudeStream) Response() *Response {
	r := &Response{
		Retries:     s.retries,
		RetryWaitMS: int64(s.retryWait),
		Metrics:     map[string]any{"malformed_lines": s.malformed},
	}
	s.output(r)
	var turns []Turn
	for _, t := range s.turns {
		t.Calls = append([]AgentCall(nil), t.Calls...)
		turns = append(turns, t)
	}
	for i, at := range s.callTurn {
		turns[at[0]].Calls[at[1]].Call = s.calls[i]
	}
	r.Turns = turns
	m := r.Metrics
	if s.malformedSample != "" {
		m["malformed_sample"] = s.malformedSample
	}
	if s.version != "" {
		m["cli_version"] = s.version
	}
	if s.sessionID != "" {
		m["session_id"] = s.sessionID
	}
	if s.cliTTFTMS != nil {
		// The CLI's own request → first byte figure, for comparison.
		m["cli_reported_ttft_ms"] = *s.cliTTFTMS
	}
	res := s.result
	if res == nil {
		return r
	}
	if res.StopReason != "" {
		r.FinishReason = res.StopReason
	}
	m["is_error"] = res.IsError
	if res.Subtype != "" {
		m["result_subtype"] = res.Subtype
	}
	if res.TerminalReason != "" {
		m["terminal_reason"] = res.TerminalReason
	}
	claudeSetInt64(m, "duration_ms", res.DurationMS)
	claudeSetInt64(m, "duration_api_ms", res.DurationAPIMS)
	if res.NumTurns != nil {
		m["num_turns"] = *res.NumTurns
	}
	if res.TotalCostUSD != nil {
		m["total_cost_usd"] = *res.TotalCostUSD
		c := *res.TotalCostUSD
		r.CostUSD = &c
	}
	var denials []json.RawMessage
	if json.Unmarshal(res.Denials, &denials) == nil && len(denials) > 0 {
		m["permission_denials"] = len(denials)
	}
	if u := res.Usage; u != nil {
		// input_tokens counts the whole prompt: Anthropic reports cached
		// parts apart, and Claude Code's prompt is mostly cached.
		if u.InputTokens != nil {
			r.Usage.InputTokens = sumCounts(u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens)
		}
		if u.OutputTokens != nil {
			r.Usage.OutputTokens = u.OutputTokens
		}
		if d := u.OutputTokensDetails; d != nil && d.ThinkingTokens != nil && *d.ThinkingTokens > 0 {
			r.Usage.ReasoningTokens = d.ThinkingTokens
		}
		if u.CacheReadInputTokens != nil {
			m["cache_read_input_tokens"] = *u.CacheReadInputTokens
			c := *u.CacheReadInputTokens
			r.Usage.CachedInputTokens = &c
		}
		if u.CacheCreationInputTokens != nil {
			m["cache_creation_input_tokens"] = *u.CacheCreationInputTokens
		}
	}
	return r
}

// output fills r with what the Messages events fed so far hold: the
// answer, the reasoning, the tool calls (their blocks closed), the stop
// reason, what the caps dropped and the streamed token counts (which stand
// when no result line says better).
func (s *claudeStream) output(r *Response) {
	s.closeBlocks()
	r.ToolCalls = append([]results.ToolCall(nil), s.calls...)
	r.FinishReason = s.stopReason
	setOutput(r, s.text, s.reasoning)
	s.tools.report(r)
	s.done.plus(s.msg).set(&r.Usage)
}

// Finished reports whether the result line arrived.
func (s *claudeStream) Finished() bool { return s.result != nil }

// Failure classifies a finished stream that ended in error; nil means the
// call succeeded. A turn that ends on a tool call at max-turns 1 ends the run
// with error_max_turns: the model answered, so that is a success.
func (s *claudeStream) Failure() *Failure {
	res := s.result
	if res == nil || !res.IsError || res.Subtype == "error_max_turns" {
		return nil
	}
	status, code, typ := 0, "", res.APIErrorType
	if res.APIErrorStatus != nil {
		status = *res.APIErrorStatus
	}
	msg := res.Result
	if e := s.apiErr; e != nil {
		code = e.code
		if status == 0 {
			status = e.status
		}
		if typ == "" {
			typ = e.typ
		}
		if msg == "" {
			msg = e.message
		}
	}
	if msg == "" {
		msg = strings.Join(res.Errors, "; ")
	}
	if msg == "" {
		msg = "claude reported is_error with subtype " + res.Subtype
	}
	f := &Failure{Status: results.StatusError, HTTPStatus: status, Message: msg}
	switch {
	case status == 401 || status == 403 || code == "authentication_failed" || typ == "authentication_error":
		f.Status, f.Type = results.StatusAuthError, "authentication_failed"
		if status != 0 {
			f.Type = fmt.Sprintf("http_%d", status)
		}
	case status == 429 || code == "rate_limit" || typ == "rate_limit_error":
		f.Status, f.Type = results.StatusRateLimited, "http_429"
	case status == 404 || code == "model_not_found":
		f.Status, f.Type = results.StatusSkippedUnavailable, "model_not_found"
	case status >= 500:
		f.Type = "http_5xx"
	case status != 0:
		f.Type = "http_4xx"
	case strings.Contains(msg, "ECONNREFUSED"):
		// Nothing listening at the base URL: the endpoint is not there,
		// as the HTTP providers classify a refused connection.
		f.Status, f.Type = results.StatusSkippedUnavailable, "connection_refused"
	case strings.Contains(msg, "ENOTFOUND") || strings.Contains(msg, "EHOSTUNREACH") || strings.Contains(msg, "ENETUNREACH"):
		f.Status, f.Type = results.StatusSkippedUnavailable, results.FailHostUnreachable
	case strings.Contains(msg, "ECONNRESET") || strings.Contains(msg, "EPIPE"):
		// The server went away mid-request: named as the HTTP providers
		// name it (the CLI says connection_failed).
		f.Type = results.FailConnectionReset
	case strings.Contains(msg, "JSON Parse error"):
		// A cut or malformed stream: the CLI asks again without streaming
		// and cannot parse that answer either (it says api_error unknown).
		f.Type = "invalid_stream"
	case res.APIError != "":
		f.Type = res.APIError // e.g. connection_failed
	case code != "":
		f.Type = code
	default:
		f.Type = "cli_" + res.Subtype
	}
	return f
}

func claudeSetInt64(m map[string]any, key string, v *int64) {
	if v != nil {
		m[key] = *v
	}
}

// sumCounts adds token counts (nil ones are none) safe from overflow: a
// sum past what a count holds, or of a negative count, is nil, never a
// wrapped figure (pricing.Count). One count alone is kept as reported (a
// negative one is then the pricing's to refuse, and the record shows it).
func sumCounts(ns ...*int) *int {
	var c pricing.Count
	var one *int
	given := 0
	for _, n := range ns {
		if n != nil {
			given++
			one = n
			c.AddPtr(n)
		}
	}
	if given == 1 {
		v := *one
		return &v
	}
	return c.WholeInt()
}

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func claudeTruncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
