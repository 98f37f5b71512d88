package faultserver

import (
	"strconv"
	"strings"
)

// document is what every endpoint can answer in one JSON body: a normal
// answer, and an error in its protocol's shape.
type document interface {
	// jsonType is the Content-Type of a JSON body.
	jsonType() string
	// whole appends the complete non-streamed answer, with t as its text.
	whole(f *frames, t text)
	// okText is the text of a normal non-streamed answer.
	okText() string
	// errorBody appends an error reply's body.
	errorBody(f *frames, e apiError)
}

// dialect is a streaming protocol: how each part of an answer is framed.
// A dialect value lives for one request and keeps that stream's counters.
type dialect interface {
	document
	// streamType is the Content-Type of a stream.
	streamType() string
	// head appends what precedes the first content block.
	head(f *frames)
	// begin, delta and end frame one content block.
	begin(f *frames, b *block)
	delta(f *frames, b *block, s string)
	end(f *frames, b *block)
	// finish appends the terminator, with usage, for the blocks sent.
	finish(f *frames, blocks []*block)
	// streamError appends a mid-stream error event.
	streamError(f *frames, e apiError)
	// keepAlive is one keep-alive line: an SSE comment or a blank NDJSON line.
	keepAlive() string
	// malformed appends a frame whose JSON is cut short.
	malformed(f *frames)
	// pieceArgs says whether tool-call arguments stream in pieces (one
	// JSON text across deltas) rather than whole per delta.
	pieceArgs() bool
	// answer is the deltas of a normal answer.
	answer() []string
	// setFinish makes the stream's stop reason reason (echo_key_finish).
	setFinish(reason string)
}

// Fixed values the frames carry, from the recorded real streams.
const (
	created   = 1795320725
	createdAt = "2026-11-22T04:12:05.036922255Z"
	digest    = "a96e824df3c38b1dea4d9b3b09b17f3a6650713c3b19f0f8bae0d7c041113133"
)

// usage counts an answer's tokens: one per delta plus the end token, as the
// recorded streams do.
func usage(blocks []*block) (out, reasoning int) {
	for _, b := range blocks {
		out += b.deltas
		if b.kind == kindReasoning {
			reasoning += b.deltas
		}
	}
	return out + 1, reasoning
}

func hasTool(blocks []*block) bool {
	for _, b := range blocks {
		if b.kind == kindTool {
			return true
		}
	}
	return false
}

func itoa(n int) string { return strconv.Itoa(n) }

// ---- OpenAI chat completions (POST /v1/chat/completions) ----

// chat frames chat.completion.chunk events as OpenAI and Ollama's /v1 send
// them: data-only SSE, a role chunk first, a finish chunk, a usage chunk
// when stream_options.include_usage asks for it, and data: [DONE].
type chat struct {
	model        string
	includeUsage bool
	reason       string
}

func (c *chat) setFinish(r string) { c.reason = r }

func (c *chat) jsonType() string   { return "application/json" }
func (c *chat) streamType() string { return "text/event-stream" }
func (c *chat) okText() string     { return answerText }
func (c *chat) answer() []string   { return answer }
func (c *chat) pieceArgs() bool    { return true }
func (c *chat) keepAlive() string  { return ": keep-alive\n" }

func (c *chat) chunk(f *frames) {
	f.str(`data: {"id":"chatcmpl-fault","object":"chat.completion.chunk","created":` + itoa(created) + `,"model":`)
	f.quote(c.model)
	f.str(`,"system_fingerprint":"fp_fault","choices":[{"index":0,"delta":`)
}

func (c *chat) endChunk(f *frames, finish string) {
	f.str(`,"finish_reason":` + finish + "}]}\n\n")
}

func (c *chat) head(f *frames) {
	c.chunk(f)
	f.str(`{"role":"assistant","content":""}`)
	c.endChunk(f, "null")
}

func (c *chat) begin(f *frames, b *block) {
	if b.kind != kindTool {
		return
	}
	c.chunk(f)
	f.str(`{"tool_calls":[{"id":"call_fault_` + itoa(b.index) + `","index":` + itoa(b.index) + `,"type":"function","function":{"name":"` + toolName + `","arguments":""}}]}`)
	c.endChunk(f, "null")
}

func (c *chat) delta(f *frames, b *block, s string) {
	c.chunk(f)
	switch b.kind {
	case kindText:
		f.str(`{"content":`)
		f.quote(s)
		f.str("}")
	case kindReasoning:
		f.str(`{"reasoning_content":`)
		f.quote(s)
		f.str("}")
	case kindTool:
		f.str(`{"tool_calls":[{"index":` + itoa(b.index) + `,"function":{"arguments":`)
		f.quote(s)
		f.str("}}]}")
	}
	c.endChunk(f, "null")
}

func (c *chat) end(*frames, *block) {}

func (c *chat) finish(f *frames, blocks []*block) {
	reason := `"stop"`
	if hasTool(blocks) {
		reason = `"tool_calls"`
	}
	if c.reason != "" {
		reason = string(appendQuoted(nil, c.reason))
	}
	c.chunk(f)
	f.str("{}")
	c.endChunk(f, reason)
	if c.includeUsage {
		out, reasoning := usage(blocks)
		f.str(`data: {"id":"chatcmpl-fault","object":"chat.completion.chunk","created":` + itoa(created) + `,"model":`)
		f.quote(c.model)
		f.str(`,"system_fingerprint":"fp_fault","choices":[],"usage":{"prompt_tokens":` + itoa(inputTokens) +
			`,"completion_tokens":` + itoa(out) + `,"total_tokens":` + itoa(inputTokens+out))
		if reasoning > 0 {
			f.str(`,"completion_tokens_details":{"reasoning_tokens":` + itoa(reasoning) + "}")
		}
		f.str("}}\n\n")
	}
	f.str("data: [DONE]\n\n")
}

func (c *chat) streamError(f *frames, e apiError) {
	f.str("data: ")
	openAIErrorBody(f, e)
	f.str("\n\n")
}

func (c *chat) malformed(f *frames) {
	f.str(`data: {"id":"chatcmpl-fault","object":"chat.completion.chunk","created":` + itoa(created) + `,"choices":[{"index":0,"delta":{"content":"bro` + "\n\n")
}

func (c *chat) errorBody(f *frames, e apiError) { openAIErrorBody(f, e) }

func (c *chat) whole(f *frames, t text) {
	f.str(`{"id":"chatcmpl-fault","object":"chat.completion","created":` + itoa(created) + `,"model":`)
	f.quote(c.model)
	f.str(`,"system_fingerprint":"fp_fault","choices":[{"index":0,"message":{"role":"assistant","content":`)
	f.quoteText(t)
	f.str(`},"finish_reason":"stop"}],"usage":{"prompt_tokens":` + itoa(inputTokens) + `,"completion_tokens":4,"total_tokens":` + itoa(inputTokens+4) + "}}\n")
}

// ---- OpenAI Responses (POST /v1/responses) ----

// responses frames Responses API events (event: + data: SSE, each with a
// sequence_number) in the order OpenAI and Ollama send them.
type responses struct {
	model  string
	seq    int
	reason string
}

func (r *responses) setFinish(reason string) { r.reason = reason }

func (r *responses) jsonType() string   { return "application/json" }
func (r *responses) streamType() string { return "text/event-stream" }
func (r *responses) okText() string     { return answerText }
func (r *responses) answer() []string   { return answer }
func (r *responses) pieceArgs() bool    { return true }
func (r *responses) keepAlive() string  { return ": keep-alive\n" }

// event opens an event: line and its data object; close ends it with the
// type and sequence number.
func (r *responses) event(f *frames, typ string) {
	f.str("event: ")
	f.str(typ)
	f.str("\ndata: {")
}

func (r *responses) close(f *frames, typ string) {
	f.str(`"type":"`)
	f.str(typ)
	f.str(`","sequence_number":`)
	f.buf = strconv.AppendInt(f.buf, int64(r.seq), 10)
	f.str("}\n\n")
	r.seq++
}

// response appends the response object in a given status.
func (r *responses) response(f *frames, status string, blocks []*block, done bool) {
	f.str(`{"id":"resp_fault","object":"response","created_at":` + itoa(created) + `,"model":`)
	f.quote(r.model)
	f.str(`,"status":"` + status + `","store":false,"output":[`)
	for i, b := range blocks {
		if i > 0 {
			f.str(",")
		}
		r.item(f, b, true)
	}
	f.str(`],"error":null,"incomplete_details":`)
	if status == "incomplete" {
		f.str(`{"reason":`)
		f.quote(r.reason)
		f.str("}")
	} else {
		f.str("null")
	}
	f.str(`,"usage":`)
	if !done {
		f.str("null}")
		return
	}
	out, reasoning := usage(blocks)
	f.str(`{"input_tokens":` + itoa(inputTokens) + `,"input_tokens_details":{"cached_tokens":0},"output_tokens":` + itoa(out) +
		`,"output_tokens_details":{"reasoning_tokens":` + itoa(reasoning) + `},"total_tokens":` + itoa(inputTokens+out) + "}}")
}

// item appends an output item, with its full text once done.
func (r *responses) item(f *frames, b *block, done bool) {
	id := itoa(b.index)
	status := `"in_progress"`
	if done {
		status = `"completed"`
	}
	switch b.kind {
	case kindText:
		f.str(`{"id":"msg_fault_` + id + `","type":"message","role":"assistant","status":` + status + `,"content":[`)
		if done {
			f.str(`{"type":"output_text","annotations":[],"logprobs":[],"text":`)
			f.quoteText(b.text)
			f.str("}")
		}
		f.str("]}")
	case kindReasoning:
		f.str(`{"id":"rs_fault_` + id + `","type":"reasoning","summary":[`)
		if done {
			f.str(`{"type":"summary_text","text":`)
			f.quoteText(b.text)
			f.str("}")
		}
		f.str("]}")
	case kindTool:
		f.str(`{"id":"fc_fault_` + id + `","type":"function_call","status":` + status + `,"call_id":"call_fault_` + id + `","name":"` + toolName + `","arguments":`)
		if done {
			f.quoteText(b.text)
		} else {
			f.str(`""`)
		}
		f.str("}")
	}
}

func (r *responses) head(f *frames) {
	for _, typ := range []string{"response.created", "response.in_progress"} {
		r.event(f, typ)
		f.str(`"response":`)
		r.response(f, "in_progress", nil, false)
		f.str(",")
		r.close(f, typ)
	}
}

func (r *responses) begin(f *frames, b *block) {
	r.event(f, "response.output_item.added")
	f.str(`"output_index":` + itoa(b.index) + `,"item":`)
	r.item(f, b, false)
	f.str(",")
	r.close(f, "response.output_item.added")
	if b.kind == kindText {
		r.event(f, "response.content_part.added")
		f.str(`"item_id":"msg_fault_` + itoa(b.index) + `","output_index":` + itoa(b.index) +
			`,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""},`)
		r.close(f, "response.content_part.added")
	}
}

// ids appends the item id and index fields of a block's events.
func (r *responses) ids(f *frames, b *block) {
	id := itoa(b.index)
	switch b.kind {
	case kindReasoning:
		f.str(`"item_id":"rs_fault_`)
		f.str(id)
		f.str(`","output_index":`)
		f.str(id)
		f.str(`,"summary_index":0,`)
	case kindTool:
		f.str(`"item_id":"fc_fault_`)
		f.str(id)
		f.str(`","output_index":`)
		f.str(id)
		f.str(`,`)
	default:
		f.str(`"item_id":"msg_fault_`)
		f.str(id)
		f.str(`","output_index":`)
		f.str(id)
		f.str(`,"content_index":0,`)
	}
}

func (r *responses) delta(f *frames, b *block, s string) {
	typ := "response.output_text.delta"
	switch b.kind {
	case kindReasoning:
		typ = "response.reasoning_summary_text.delta"
	case kindTool:
		typ = "response.function_call_arguments.delta"
	}
	r.event(f, typ)
	r.ids(f, b)
	f.str(`"delta":`)
	f.quote(s)
	if b.kind == kindText {
		f.str(`,"logprobs":[]`)
	}
	f.str(",")
	r.close(f, typ)
}

func (r *responses) end(f *frames, b *block) {
	switch b.kind {
	case kindText:
		r.event(f, "response.output_text.done")
		r.ids(f, b)
		f.str(`"logprobs":[],"text":`)
		f.quoteText(b.text)
		f.str(",")
		r.close(f, "response.output_text.done")
		r.event(f, "response.content_part.done")
		r.ids(f, b)
		f.str(`"part":{"type":"output_text","annotations":[],"logprobs":[],"text":`)
		f.quoteText(b.text)
		f.str("},")
		r.close(f, "response.content_part.done")
	case kindReasoning:
		r.event(f, "response.reasoning_summary_text.done")
		r.ids(f, b)
		f.str(`"text":`)
		f.quoteText(b.text)
		f.str(",")
		r.close(f, "response.reasoning_summary_text.done")
	case kindTool:
		r.event(f, "response.function_call_arguments.done")
		r.ids(f, b)
		f.str(`"arguments":`)
		f.quoteText(b.text)
		f.str(",")
		r.close(f, "response.function_call_arguments.done")
	}
	r.event(f, "response.output_item.done")
	f.str(`"output_index":` + itoa(b.index) + `,"item":`)
	r.item(f, b, true)
	f.str(",")
	r.close(f, "response.output_item.done")
}

func (r *responses) finish(f *frames, blocks []*block) {
	typ, status := "response.completed", "completed"
	if r.reason != "" {
		typ, status = "response.incomplete", "incomplete"
	}
	r.event(f, typ)
	f.str(`"response":`)
	r.response(f, status, blocks, true)
	f.str(",")
	r.close(f, typ)
}

func (r *responses) streamError(f *frames, e apiError) {
	r.event(f, "error")
	f.str(`"code":`)
	f.quote(e.oaCode)
	f.str(`,"message":`)
	f.quote(e.msg)
	f.str(`,"param":null,`)
	r.close(f, "error")
}

func (r *responses) malformed(f *frames) {
	f.str(`event: response.output_text.delta` + "\n" + `data: {"item_id":"msg_fault_0","output_index":0,"content_index":0,"delta":"bro` + "\n\n")
	r.seq++
}

func (r *responses) errorBody(f *frames, e apiError) { openAIErrorBody(f, e) }

func (r *responses) whole(f *frames, t text) {
	b := &block{kind: kindText, text: t, deltas: 3}
	r.response(f, "completed", []*block{b}, true)
	f.str("\n")
}

// ---- Anthropic Messages (POST /v1/messages) ----

// anthropic frames Messages API events as the real API (and
// internal/testpeer/anthropictest) send them: message_start, a ping, content blocks,
// message_delta with the stop reason and usage, message_stop.
type anthropic struct {
	model  string
	reason string
}

func (a *anthropic) setFinish(r string) { a.reason = r }

func (a *anthropic) jsonType() string   { return "application/json" }
func (a *anthropic) streamType() string { return "text/event-stream" }
func (a *anthropic) okText() string     { return answerText }
func (a *anthropic) answer() []string   { return answer }
func (a *anthropic) pieceArgs() bool    { return true }
func (a *anthropic) keepAlive() string  { return ": keep-alive\n" }

func (a *anthropic) event(f *frames, typ string) {
	f.str("event: " + typ + "\ndata: {\"type\":\"" + typ + "\"")
}

func (a *anthropic) head(f *frames) {
	a.event(f, "message_start")
	f.str(`,"message":{"id":"msg_fault","type":"message","role":"assistant","model":`)
	f.quote(a.model)
	f.str(`,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":` + itoa(inputTokens) + `,"output_tokens":1}}}` + "\n\n")
	a.event(f, "ping")
	f.str("}\n\n")
}

func (a *anthropic) begin(f *frames, b *block) {
	a.event(f, "content_block_start")
	f.str(`,"index":` + itoa(b.index) + `,"content_block":`)
	switch b.kind {
	case kindText:
		f.str(`{"type":"text","text":""}`)
	case kindReasoning:
		f.str(`{"type":"thinking","thinking":"","signature":""}`)
	case kindTool:
		f.str(`{"type":"tool_use","id":"toolu_fault_` + itoa(b.index) + `","name":"` + toolName + `","input":{}}`)
	}
	f.str("}\n\n")
}

func (a *anthropic) delta(f *frames, b *block, s string) {
	a.event(f, "content_block_delta")
	f.str(`,"index":` + itoa(b.index) + `,"delta":`)
	switch b.kind {
	case kindText:
		f.str(`{"type":"text_delta","text":`)
	case kindReasoning:
		f.str(`{"type":"thinking_delta","thinking":`)
	case kindTool:
		f.str(`{"type":"input_json_delta","partial_json":`)
	}
	f.quote(s)
	f.str("}}\n\n")
}

func (a *anthropic) end(f *frames, b *block) {
	if b.kind == kindReasoning {
		a.event(f, "content_block_delta")
		f.str(`,"index":` + itoa(b.index) + `,"delta":{"type":"signature_delta","signature":"c2lnbmF0dXJl"}}` + "\n\n")
	}
	a.event(f, "content_block_stop")
	f.str(`,"index":` + itoa(b.index) + "}\n\n")
}

func (a *anthropic) finish(f *frames, blocks []*block) {
	stop := "end_turn"
	if hasTool(blocks) {
		stop = "tool_use"
	}
	if a.reason != "" {
		stop = a.reason
	}
	out, _ := usage(blocks)
	a.event(f, "message_delta")
	f.str(`,"delta":{"stop_reason":`)
	f.quote(stop)
	f.str(`,"stop_sequence":null},"usage":{"output_tokens":` + itoa(out) + "}}\n\n")
	a.event(f, "message_stop")
	f.str("}\n\n")
}

func (a *anthropic) streamError(f *frames, e apiError) {
	f.str("event: error\ndata: ")
	anthropicErrorBody(f, e)
	f.str("\n\n")
}

func (a *anthropic) malformed(f *frames) {
	f.str(`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"bro` + "\n\n")
}

func (a *anthropic) errorBody(f *frames, e apiError) { anthropicErrorBody(f, e) }

func (a *anthropic) whole(f *frames, t text) {
	f.str(`{"id":"msg_fault","type":"message","role":"assistant","model":`)
	f.quote(a.model)
	f.str(`,"content":[{"type":"text","text":`)
	f.quoteText(t)
	f.str(`}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":` + itoa(inputTokens) + `,"output_tokens":4}}` + "\n")
}

// ---- Ollama native chat (POST /api/chat) ----

// ollama frames /api/chat NDJSON lines as Ollama 0.9.6 sends them: one line
// per delta, then a done line with the server's timings. Tool calls arrive
// whole, one line each.
type ollama struct {
	model  string
	reason string
}

func (o *ollama) setFinish(r string) { o.reason = r }

func (o *ollama) jsonType() string   { return "application/json; charset=utf-8" }
func (o *ollama) streamType() string { return "application/x-ndjson" }
func (o *ollama) okText() string     { return answerText }
func (o *ollama) answer() []string   { return answer }
func (o *ollama) pieceArgs() bool    { return false }
func (o *ollama) keepAlive() string  { return "\n" }

func (o *ollama) line(f *frames) {
	f.str(`{"model":`)
	f.quote(o.model)
	f.str(`,"created_at":"` + createdAt + `","message":{"role":"assistant","content":`)
}

func (o *ollama) head(*frames)          {}
func (o *ollama) begin(*frames, *block) {}
func (o *ollama) end(*frames, *block)   {}

func (o *ollama) delta(f *frames, b *block, s string) {
	o.line(f)
	switch b.kind {
	case kindText:
		f.quote(s)
	case kindReasoning:
		f.str(`"","thinking":`)
		f.quote(s)
	case kindTool:
		f.str(`"","tool_calls":[{"function":{"name":"` + toolName + `","arguments":`)
		if b.raw {
			f.str(s)
		} else {
			f.str(`{"data":`)
			f.quote(s)
			f.str("}")
		}
		f.str("}}]")
	}
	f.str("},\"done\":false}\n")
}

func (o *ollama) finish(f *frames, blocks []*block) {
	out, _ := usage(blocks)
	reason := "stop"
	if o.reason != "" {
		reason = o.reason
	}
	o.line(f)
	f.str(`""},"done_reason":`)
	f.quote(reason)
	f.str(`,"done":true,"total_duration":5594922,"load_duration":3234647,"prompt_eval_count":` + itoa(inputTokens) +
		`,"prompt_eval_duration":811739,"eval_count":` + itoa(out) + `,"eval_duration":1011286}` + "\n")
}

func (o *ollama) streamError(f *frames, e apiError) {
	ollamaErrorBody(f, e)
	f.str("\n")
}

func (o *ollama) malformed(f *frames) {
	o.line(f)
	f.str(`"bro` + "\n")
}

func (o *ollama) errorBody(f *frames, e apiError) { ollamaErrorBody(f, e) }

func (o *ollama) whole(f *frames, t text) {
	o.line(f)
	f.quoteText(t)
	f.str(`},"done_reason":"stop","done":true,"total_duration":5594922,"load_duration":3234647,"prompt_eval_count":` + itoa(inputTokens) +
		`,"prompt_eval_duration":811739,"eval_count":4,"eval_duration":1011286}` + "\n")
}

// ---- Ollama pull (POST /api/pull) ----

// pull frames /api/pull progress lines; a delta is one status line.
type pull struct{}

func (p *pull) jsonType() string      { return "application/json; charset=utf-8" }
func (p *pull) streamType() string    { return "application/x-ndjson" }
func (p *pull) okText() string        { return "" }
func (p *pull) pieceArgs() bool       { return false }
func (p *pull) keepAlive() string     { return "\n" }
func (p *pull) head(f *frames)        { f.str(`{"status":"pulling manifest"}` + "\n") }
func (p *pull) begin(*frames, *block) {}
func (p *pull) end(*frames, *block)   {}
func (p *pull) finish(f *frames, _ []*block) {
	f.str(`{"status":"success"}` + "\n")
}

// pullAnswer is a pull's progress after the manifest.
var pullAnswer = []string{"pulling " + digest[:12], "verifying sha256 digest", "writing manifest"}

func (p *pull) answer() []string { return pullAnswer }

func (p *pull) delta(f *frames, _ *block, s string) {
	f.str(`{"status":`)
	f.quote(s)
	if s == pullAnswer[0] {
		f.str(`,"digest":"sha256:` + digest + `","total":276610,"completed":276610`)
	}
	f.str("}\n")
}

func (p *pull) streamError(f *frames, e apiError) {
	ollamaErrorBody(f, e)
	f.str("\n")
}

func (p *pull) setFinish(string) {}

func (p *pull) malformed(f *frames)             { f.str(`{"status":"pulling ` + digest[:6] + "\n") }
func (p *pull) errorBody(f *frames, e apiError) { ollamaErrorBody(f, e) }
func (p *pull) whole(f *frames, t text) {
	f.str(`{"status":`)
	if len(t) == 0 {
		f.str(`"success"`)
	} else {
		f.quoteText(t)
	}
	f.str("}\n")
}

// ---- Ollama's JSON endpoints (/api/tags, /api/version, /api/ps, /api/show) ----

// static is a fixed JSON document with one string slot, where a flood or
// an echoed key goes (a normal answer leaves it empty).
type static struct {
	before, after string
}

func (s *static) jsonType() string                { return "application/json; charset=utf-8" }
func (s *static) okText() string                  { return "" }
func (s *static) errorBody(f *frames, e apiError) { ollamaErrorBody(f, e) }
func (s *static) whole(f *frames, t text) {
	f.str(s.before)
	f.rawText(t) // the slot sits inside an existing string
	f.str(s.after)
}

// Ollama 0.9.6's answers, from providers/testdata/ollama.
func versionDoc() *static { return &static{`{"version":"0.9.6`, `"}` + "\n"} }

func modelEntry(name string, running bool) string {
	q := string(appendQuoted(nil, name))
	e := `{"name":` + q + `,"model":` + q
	if !running {
		e += `,"modified_at":"2026-11-22T04:08:42.717551912Z"`
	}
	e += `,"size":276610,"digest":"` + digest + `","details":{"parent_model":"","format":"gguf","family":"llama","families":["llama"],"parameter_size":"67K","quantization_level":"unknown"}`
	if running {
		e += `,"expires_at":"2026-11-22T04:17:05.147511592Z","size_vram":0`
	}
	return e + "}"
}

// listDoc lists models; the slot is in the first model's family name.
func listDoc(names []string, running bool) *static {
	var entries string
	for i, n := range names {
		if i > 0 {
			entries += ","
		}
		entries += modelEntry(n, running)
	}
	before, after := `{"models":[`, "]}\n"
	if entries == "" {
		return &static{before + `{"name":"`, `"}` + after}
	}
	// Put the slot at the end of the first entry's family ("llama...").
	const fam = `"family":"llama`
	i := strings.Index(entries, fam) + len(fam)
	return &static{before + entries[:i], entries[i:] + after}
}

func showDoc(model string) *static {
	return &static{
		`{"modelfile":"# Modelfile generated by \"ollama show\"\nFROM /home/user/.ollama/models/blobs/sha256-` + digest + `\nPARAMETER num_ctx 512\nPARAMETER temperature 0\n`,
		`","parameters":"num_ctx                        512\ntemperature                    0","template":"{{ .Prompt }}","details":{"parent_model":"","format":"gguf","family":"llama","families":["llama"],"parameter_size":"67K","quantization_level":"unknown"},"model_info":{"general.architecture":"llama","general.parameter_count":66880,"llama.context_length":2048},"capabilities":["completion","tools"],"modified_at":"2026-11-22T04:08:42.717551912Z","model":` +
			string(appendQuoted(nil, model)) + "}\n",
	}
}

var answerText = answer[0] + answer[1] + answer[2]

// ---- Gemini (POST /v1beta/models/{model}:streamGenerateContent?alt=sse) ----

// gemini frames GenerateContentResponse events as the Gemini API sends
// them (see internal/testpeer/recorded): data-only SSE ending in CRLF
// CRLF, every event a whole response with the usage so far, whole
// function calls as parts, thoughts as parts marked thought, and no
// terminator but the finishReason of the last event.
type gemini struct {
	model  string
	reason string
}

func (g *gemini) setFinish(r string) { g.reason = r }

func (g *gemini) jsonType() string   { return "application/json; charset=UTF-8" }
func (g *gemini) streamType() string { return "text/event-stream" }
func (g *gemini) okText() string     { return answerText }
func (g *gemini) answer() []string   { return answer }
func (g *gemini) pieceArgs() bool    { return false }
func (g *gemini) keepAlive() string  { return ": keep-alive\n" }

func (g *gemini) head(*frames)          {}
func (g *gemini) begin(*frames, *block) {}
func (g *gemini) end(*frames, *block)   {}

func (g *gemini) event(f *frames) {
	f.str(`data: {"candidates": [{"content": {"parts": [`)
}

func (g *gemini) endEvent(f *frames, finish string, usage string) {
	f.str(`],"role": "model"}`)
	if finish != "" {
		f.str(`,"finishReason": `)
		f.quote(finish)
	}
	f.str(`,"index": 0}],"usageMetadata": {"promptTokenCount": ` + itoa(inputTokens) + usage + `},"modelVersion": `)
	f.quote(g.model)
	f.str(`,"responseId": "fault"}` + "\r\n\r\n")
}

func (g *gemini) delta(f *frames, b *block, s string) {
	g.event(f)
	switch b.kind {
	case kindText:
		f.str(`{"text": `)
		f.quote(s)
		f.str("}")
	case kindReasoning:
		f.str(`{"text": `)
		f.quote(s)
		f.str(`,"thought": true}`)
	case kindTool:
		f.str(`{"functionCall": {"name": "` + toolName + `","args": `)
		if b.raw {
			f.str(s)
		} else {
			f.str(`{"data": `)
			f.quote(s)
			f.str("}")
		}
		f.str("}}")
	}
	g.endEvent(f, "", "")
}

func (g *gemini) finish(f *frames, blocks []*block) {
	reason := "STOP"
	if g.reason != "" {
		reason = g.reason
	}
	out, reasoning := usage(blocks)
	u := `,"candidatesTokenCount": ` + itoa(out-reasoning) + `,"totalTokenCount": ` + itoa(inputTokens+out)
	if reasoning > 0 {
		u += `,"thoughtsTokenCount": ` + itoa(reasoning)
	}
	g.event(f)
	f.str(`{"text": ""}`)
	g.endEvent(f, reason, u)
}

func (g *gemini) streamError(f *frames, e apiError) {
	f.str("data: ")
	geminiErrorBody(f, e)
	f.str("\r\n\r\n")
}

func (g *gemini) malformed(f *frames) {
	f.str(`data: {"candidates": [{"content": {"parts": [{"text": "bro` + "\r\n\r\n")
}

func (g *gemini) errorBody(f *frames, e apiError) { geminiErrorBody(f, e) }

func (g *gemini) whole(f *frames, t text) {
	f.str(`{"candidates": [{"content": {"parts": [{"text": `)
	f.quoteText(t)
	f.str(`}],"role": "model"},"finishReason": "STOP","index": 0}],"usageMetadata": {"promptTokenCount": ` + itoa(inputTokens) +
		`,"candidatesTokenCount": 4,"totalTokenCount": ` + itoa(inputTokens+4) + `},"modelVersion": `)
	f.quote(g.model)
	f.str("}\n")
}
