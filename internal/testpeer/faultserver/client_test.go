package faultserver

// A small client for the tests: plain net/http, an SSE and NDJSON frame
// reader with a line limit, and a decoder per protocol that turns frames
// into what a client would record.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// protocol is one streaming protocol under test.
type protocol struct {
	name     string
	endpoint string
	path     string
	sse      bool
	ctype    string
	// body is the request body for model; stream false asks for one JSON body.
	body func(model string, stream bool) string
	// okText is the text of the ok answer.
	okText string
	// decode adds one frame to a result; an error means the frame is not
	// valid JSON of the protocol.
	decode func(f frame, r *result) error
	// errMessage extracts the message of an HTTP error body.
	errMessage func(b []byte) (string, error)
	// whole extracts the answer text of a non-streamed body.
	whole func(b []byte) (string, error)
}

var protocols = []protocol{
	{
		name: "chat", endpoint: EndpointChat, path: "/v1/chat/completions", sse: true, ctype: "text/event-stream",
		body: func(m string, stream bool) string {
			return fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hi"}],"stream":%v,"stream_options":{"include_usage":true}}`, m, stream)
		},
		okText: answerText, decode: decodeChat, errMessage: openAIMessage,
		whole: func(b []byte) (string, error) {
			var c struct {
				Choices []struct{ Message struct{ Content string } }
			}
			err := strictJSON(b, &c)
			if err == nil && len(c.Choices) != 1 {
				err = fmt.Errorf("%d choices", len(c.Choices))
			}
			if err != nil {
				return "", err
			}
			return c.Choices[0].Message.Content, nil
		},
	},
	{
		name: "responses", endpoint: EndpointResponses, path: "/v1/responses", sse: true, ctype: "text/event-stream",
		body: func(m string, stream bool) string {
			return fmt.Sprintf(`{"model":%q,"input":[{"type":"message","role":"user","content":"hi"}],"stream":%v,"store":false}`, m, stream)
		},
		okText: answerText, decode: decodeResponses, errMessage: openAIMessage,
		whole: func(b []byte) (string, error) {
			var r struct {
				Output []struct{ Content []struct{ Text string } }
			}
			if err := strictJSON(b, &r); err != nil {
				return "", err
			}
			if len(r.Output) != 1 || len(r.Output[0].Content) != 1 {
				return "", fmt.Errorf("output %+v", r.Output)
			}
			return r.Output[0].Content[0].Text, nil
		},
	},
	{
		name: "messages", endpoint: EndpointMessages, path: "/v1/messages", sse: true, ctype: "text/event-stream",
		body: func(m string, stream bool) string {
			return fmt.Sprintf(`{"model":%q,"max_tokens":32000,"messages":[{"role":"user","content":"hi"}],"stream":%v}`, m, stream)
		},
		okText: answerText, decode: decodeMessages, errMessage: anthropicMessage,
		whole: func(b []byte) (string, error) {
			var m struct {
				Type    string
				Content []struct{ Type, Text string }
			}
			if err := strictJSON(b, &m); err != nil {
				return "", err
			}
			if m.Type != "message" || len(m.Content) != 1 {
				return "", fmt.Errorf("message %+v", m)
			}
			return m.Content[0].Text, nil
		},
	},
	{
		name: "ollama", endpoint: EndpointOllamaChat, path: "/api/chat", ctype: "application/x-ndjson",
		body: func(m string, stream bool) string {
			return fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hi"}],"stream":%v}`, m, stream)
		},
		okText: answerText, decode: decodeOllama, errMessage: ollamaMessage,
		whole: func(b []byte) (string, error) {
			var c struct {
				Message struct{ Content string }
				Done    bool
			}
			if err := strictJSON(b, &c); err != nil {
				return "", err
			}
			if !c.Done {
				return "", errors.New("not done")
			}
			return c.Message.Content, nil
		},
	},
	{
		name: "pull", endpoint: EndpointPull, path: "/api/pull", ctype: "application/x-ndjson",
		body: func(m string, stream bool) string {
			return fmt.Sprintf(`{"model":%q,"stream":%v}`, m, stream)
		},
		okText: strings.Join(pullAnswer, ""), decode: decodePull, errMessage: ollamaMessage,
		whole: func(b []byte) (string, error) {
			var p struct{ Status string }
			if err := strictJSON(b, &p); err != nil {
				return "", err
			}
			if p.Status == "success" {
				return "", nil
			}
			return p.Status, nil
		},
	},
}

// strictJSON decodes one JSON value and fails on anything after it.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the JSON value")
	}
	return nil
}

func openAIMessage(b []byte) (string, error) {
	var e struct {
		Error *struct {
			Message string
			Type    string
			Code    *string
		}
	}
	if err := strictJSON(b, &e); err != nil {
		return "", err
	}
	if e.Error == nil || e.Error.Type == "" {
		return "", fmt.Errorf("no error object in %s", b)
	}
	return e.Error.Message, nil
}

func anthropicMessage(b []byte) (string, error) {
	var e struct {
		Type  string
		Error *struct{ Type, Message string }
	}
	if err := strictJSON(b, &e); err != nil {
		return "", err
	}
	if e.Type != "error" || e.Error == nil || e.Error.Type == "" {
		return "", fmt.Errorf("not an Anthropic error: %s", b)
	}
	return e.Error.Message, nil
}

func ollamaMessage(b []byte) (string, error) {
	var e struct{ Error *string }
	if err := strictJSON(b, &e); err != nil {
		return "", err
	}
	if e.Error == nil {
		return "", fmt.Errorf("no error in %s", b)
	}
	return *e.Error, nil
}

// frame is one SSE event or one NDJSON line.
type frame struct {
	event, data string
}

// result is what a client records from a stream.
type result struct {
	text, reasoning, tool string
	// deltas, thoughts and args are the pieces of text, reasoning and tool
	// arguments, in order; join concatenates them into text, reasoning, tool.
	deltas, thoughts, args []string
	done                   bool
	finish                 string
	errMsg                 string
	outTokens              int
	frames                 int
	bad                    int
	keepAlives             int
	// err is the read error that ended the stream (nil: clean EOF).
	err error
}

func decodeChat(f frame, r *result) error {
	if f.data == "[DONE]" {
		r.done = true
		return nil
	}
	var c struct {
		Error *struct {
			Message string
			Type    string
		}
		Choices []struct {
			Delta struct {
				Content          *string
				ReasoningContent string `json:"reasoning_content"`
				ToolCalls        []struct {
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason *string `json:"finish_reason"`
		}
		Usage *struct {
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	if err := json.Unmarshal([]byte(f.data), &c); err != nil {
		return err
	}
	if c.Error != nil {
		r.errMsg = c.Error.Message
		return nil
	}
	for _, ch := range c.Choices {
		if ch.Delta.Content != nil && *ch.Delta.Content != "" {
			r.deltas = append(r.deltas, *ch.Delta.Content)
		}
		r.thoughts = append(r.thoughts, ch.Delta.ReasoningContent)
		for _, tc := range ch.Delta.ToolCalls {
			r.args = append(r.args, tc.Function.Arguments)
		}
		if ch.FinishReason != nil {
			r.finish = *ch.FinishReason
		}
	}
	if c.Usage != nil {
		r.outTokens = c.Usage.CompletionTokens
	}
	return nil
}

func decodeResponses(f frame, r *result) error {
	var e struct {
		Type     string
		Delta    string
		Message  string
		Response *struct {
			Status string
			Usage  *struct {
				OutputTokens int `json:"output_tokens"`
			}
		}
	}
	if err := json.Unmarshal([]byte(f.data), &e); err != nil {
		return err
	}
	if e.Type != f.event {
		return fmt.Errorf("event %q carries type %q", f.event, e.Type)
	}
	switch e.Type {
	case "response.output_text.delta":
		r.deltas = append(r.deltas, e.Delta)
	case "response.reasoning_summary_text.delta":
		r.thoughts = append(r.thoughts, e.Delta)
	case "response.function_call_arguments.delta":
		r.args = append(r.args, e.Delta)
	case "response.completed":
		r.done, r.finish = true, e.Response.Status
		r.outTokens = e.Response.Usage.OutputTokens
	case "error":
		r.errMsg = e.Message
	}
	return nil
}

func decodeMessages(f frame, r *result) error {
	var e struct {
		Type  string
		Delta struct {
			Type, Text, Thinking string
			PartialJSON          string `json:"partial_json"`
			StopReason           string `json:"stop_reason"`
		}
		Usage struct {
			OutputTokens int `json:"output_tokens"`
		}
		Error *struct{ Type, Message string }
	}
	if err := json.Unmarshal([]byte(f.data), &e); err != nil {
		return err
	}
	if e.Type != f.event {
		return fmt.Errorf("event %q carries type %q", f.event, e.Type)
	}
	switch e.Type {
	case "content_block_delta":
		switch e.Delta.Type {
		case "text_delta":
			r.deltas = append(r.deltas, e.Delta.Text)
		case "thinking_delta":
			r.thoughts = append(r.thoughts, e.Delta.Thinking)
		case "input_json_delta":
			r.args = append(r.args, e.Delta.PartialJSON)
		}
	case "message_delta":
		r.finish, r.outTokens = e.Delta.StopReason, e.Usage.OutputTokens
	case "message_stop":
		r.done = true
	case "error":
		r.errMsg = e.Error.Message
	}
	return nil
}

func decodeOllama(f frame, r *result) error {
	var c struct {
		Error   *string
		Message struct {
			Content, Thinking string
			ToolCalls         []struct {
				Function struct {
					Name      string
					Arguments map[string]string
				}
			} `json:"tool_calls"`
		}
		Done       bool
		DoneReason string `json:"done_reason"`
		EvalCount  int    `json:"eval_count"`
	}
	if err := json.Unmarshal([]byte(f.data), &c); err != nil {
		return err
	}
	if c.Error != nil {
		r.errMsg = *c.Error
		return nil
	}
	if c.Message.Content != "" {
		r.deltas = append(r.deltas, c.Message.Content)
	}
	r.thoughts = append(r.thoughts, c.Message.Thinking)
	for _, tc := range c.Message.ToolCalls {
		r.args = append(r.args, tc.Function.Arguments["data"])
	}
	if c.Done {
		r.done, r.finish, r.outTokens = true, c.DoneReason, c.EvalCount
	}
	return nil
}

func decodePull(f frame, r *result) error {
	var p struct {
		Status string
		Error  *string
	}
	if err := json.Unmarshal([]byte(f.data), &p); err != nil {
		return err
	}
	switch {
	case p.Error != nil:
		r.errMsg = *p.Error
	case p.Status == "success":
		r.done = true
	case p.Status == "pulling manifest":
	default:
		r.deltas = append(r.deltas, p.Status)
	}
	return nil
}

// join builds text, reasoning and tool from their pieces.
func (r *result) join() {
	r.text = strings.Join(r.deltas, "")
	r.reasoning = strings.Join(r.thoughts, "")
	r.tool = strings.Join(r.args, "")
}

// errLineTooLong is the reader's answer to a line past its limit.
var errLineTooLong = errors.New("line too long")

// frameReader reads SSE events or NDJSON lines, each line at most max
// bytes, counting keep-alive lines (SSE comments, blank NDJSON lines).
type frameReader struct {
	br         *bufio.Reader
	sse        bool
	max        int
	keepAlives int
	bytes      int64
}

func newFrameReader(r io.Reader, sse bool) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(r, 64<<10), sse: sse, max: 16 << 20}
}

func (fr *frameReader) line() (string, error) {
	var buf []byte
	for {
		chunk, err := fr.br.ReadSlice('\n')
		fr.bytes += int64(len(chunk))
		buf = append(buf, chunk...)
		if len(buf) > fr.max {
			return "", errLineTooLong
		}
		switch {
		case err == nil:
			return strings.TrimSuffix(string(buf), "\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(buf) > 0:
			return string(buf), io.ErrUnexpectedEOF // a last line without its newline
		default:
			return "", err
		}
	}
}

// next returns the next frame.
func (fr *frameReader) next() (frame, error) {
	var f frame
	for {
		l, err := fr.line()
		if err != nil {
			if l != "" {
				// What a cut left of a frame: hand it over so the decoder
				// rejects it.
				f.data += strings.TrimPrefix(l, "data: ")
				return f, err
			}
			return f, err
		}
		if !fr.sse {
			if l == "" {
				fr.keepAlives++
				continue
			}
			return frame{data: l}, nil
		}
		switch {
		case strings.HasPrefix(l, ":"):
			fr.keepAlives++
		case strings.HasPrefix(l, "event: "):
			f.event = strings.TrimPrefix(l, "event: ")
		case strings.HasPrefix(l, "data: "):
			f.data += strings.TrimPrefix(l, "data: ")
		case l == "":
			if f.data != "" {
				return f, nil
			}
			f = frame{}
		default:
			return frame{data: l}, nil
		}
	}
}

// readAll reads a stream to its end into a result.
func (p protocol) readAll(body io.Reader) result {
	fr := newFrameReader(body, p.sse)
	var r result
	for {
		f, err := fr.next()
		if f.data != "" {
			r.frames++
			if p.decode(f, &r) != nil {
				r.bad++
			}
		}
		if err != nil {
			r.join()
			r.keepAlives = fr.keepAlives
			if err != io.EOF {
				r.err = err
			}
			return r
		}
	}
}

// newKey returns a fresh fake API key.
func newKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "sk-fault-" + hex.EncodeToString(b)
}

// do sends a request with a bearer key (if any) and returns the response.
func do(t *testing.T, ctx context.Context, method, url, body string, header http.Header) (*http.Response, error) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err == nil {
		t.Cleanup(func() { resp.Body.Close() })
	}
	return resp, err
}

// client has no timeout of its own: each test bounds its calls with a
// context, as bench does.
var client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// stream posts a request for model and reads the whole answer.
func (p protocol) stream(t *testing.T, s *Server, model string, header http.Header) (*http.Response, result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := do(t, ctx, http.MethodPost, s.URL()+p.path, p.body(model, true), header)
	if err != nil {
		t.Fatalf("%s %s: %v", p.name, model, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: status %d: %s", p.name, model, resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != p.ctype {
		t.Errorf("%s %s: Content-Type %q, want %q", p.name, model, ct, p.ctype)
	}
	return resp, p.readAll(resp.Body)
}

func bearer(key string) http.Header {
	return http.Header{"Authorization": {"Bearer " + key}}
}
