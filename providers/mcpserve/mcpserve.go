// Package mcpserve serves an agentic task's scripted tools as an MCP server
// over stdio, so an agent that brings its own tool loop (the Claude Code
// CLI) calls bench's scripted tools, and bench records what really reached
// them.
//
// The server is built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). It lists each native tool of the
// task (name, description, JSON-schema input), answers each tools/call from
// one scripted.Session (so fail_first fails once per server, i.e. once per
// cell), and appends every call it received to a call log, one JSON line
// per call (CallRecord), written before the answer goes back.
//
// A cell runs it as `bench mcp-serve TASKFILE CALLLOG` (Run), named in the
// CLI's --mcp-config (CLIConfig); the CLI starts and stops the process.
//
// Layer: providers (the Claude Code CLI's side of an agentic task's tools).
package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"bench/validators/scripted"
)

// CallRecord is one line of the call log: a tools/call the server received
// and what it answered.
type CallRecord struct {
	// Seq numbers the calls from 1 in the order they were answered.
	Seq  int       `json:"seq"`
	Time time.Time `json:"time"`
	Tool string    `json:"tool"`
	// Arguments are the call's arguments as received (compacted).
	Arguments json.RawMessage `json:"arguments"`
	Result    string          `json:"result"`
	IsError   bool            `json:"is_error"`
	// Rule is the index of the scripted rule that answered, -1 for none.
	Rule      int  `json:"rule"`
	Unknown   bool `json:"unknown,omitempty"`
	FailFirst bool `json:"fail_first,omitempty"`
	Unmatched bool `json:"unmatched,omitempty"`
	// ToolUseID is the client's id for the call when it sends one (Claude
	// Code: _meta "claudecode/toolUseId"), to join the log with its stream.
	ToolUseID string `json:"tool_use_id,omitempty"`
}

// ServerName is the MCP implementation name the server reports.
const ServerName = "bench"

// Serve serves tools over MCP on stdin/stdout until the client closes its
// end (then it returns nil) or ctx ends. Every tools/call, an unknown tool
// included, is answered from one scripted.Session and appended to callLog as
// one JSON line before the answer is sent. A line that is not a JSON-RPC
// message is answered with -32700 or -32600 and the session goes on. Text-mode tools cannot be served:
// an MCP client calls tools natively.
func Serve(ctx context.Context, tools []scripted.Tool, stdin io.Reader, stdout io.Writer, callLog io.Writer) error {
	return serve(ctx, tools, stdin, stdout, callLog, time.Now)
}

func serve(ctx context.Context, tools []scripted.Tool, stdin io.Reader, stdout io.Writer, callLog io.Writer, now func() time.Time) error {
	if err := check(tools); err != nil {
		return err
	}
	srv, err := newServer(tools, callLog, now)
	if err != nil {
		return err
	}
	out := &lockedWriter{w: stdout}
	t := &mcp.IOTransport{Reader: io.NopCloser(newFrames(stdin, out)), Writer: out}
	if err := srv.Run(ctx, t); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("mcp serve: %w", err)
	}
	return nil
}

// check refuses what an MCP server cannot serve: an invalid task, or a
// text-mode tool.
func check(tools []scripted.Tool) error {
	var errs []error
	for _, e := range scripted.CheckTask(tools) {
		errs = append(errs, e)
	}
	for i, t := range tools {
		if t.IsText() {
			errs = append(errs, fmt.Errorf("tools[%d] %s: a text-mode tool cannot be served over MCP", i, t.Name))
		}
	}
	return errors.Join(errs...)
}

// logger appends call records, one Write per line.
type logger struct {
	mu  sync.Mutex
	w   io.Writer
	seq int
	now func() time.Time
}

func (l *logger) record(name string, args json.RawMessage, meta map[string]any, r scripted.Result) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	rec := CallRecord{Seq: l.seq, Time: l.now().UTC(), Tool: name, Arguments: compact(args), Result: r.Text, IsError: r.IsError,
		Rule: r.Rule, Unknown: r.Unknown, FailFirst: r.FailFirst, Unmatched: r.Unmatched}
	if id, ok := meta["claudecode/toolUseId"].(string); ok {
		rec.ToolUseID = id
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return fmt.Errorf("call log: %w", err)
	}
	if _, err := l.w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("call log: %w", err)
	}
	return nil
}

// compact makes arguments one JSON value on one line; missing arguments are
// {} and arguments that are not JSON are kept as a JSON string.
func compact(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return json.RawMessage("{}")
	}
	var b bytes.Buffer
	if json.Compact(&b, t) == nil {
		return b.Bytes()
	}
	s, _ := json.Marshal(string(t))
	return s
}

func newServer(tools []scripted.Tool, callLog io.Writer, now func() time.Time) (*mcp.Server, error) {
	sess := scripted.NewSession(tools)
	log := &logger{w: callLog, now: now}
	srv := mcp.NewServer(&mcp.Implementation{Name: ServerName, Version: "1"}, &mcp.ServerOptions{
		// Tools only: no logging capability, no list-changed notices.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	answer := func(name string, args json.RawMessage, meta map[string]any) (*mcp.CallToolResult, error) {
		r := sess.Answer(name, args)
		if err := log.record(name, args, meta, r); err != nil {
			// Bench cannot record the call, so the cell must not look
			// right: fail the call loudly.
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}, IsError: r.IsError}, nil
	}
	var names []string
	for _, t := range tools {
		schema := any(map[string]any{"type": "object", "properties": map[string]any{}})
		if t.Parameters != nil {
			schema = t.Parameters
		}
		names = append(names, t.Name)
		srv.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: schema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return answer(req.Params.Name, req.Params.Arguments, req.Params.Meta)
			})
	}
	// The SDK answers a call of an unlisted tool with a protocol error
	// before any handler runs; bench answers it like any call (an error
	// result marked unknown) so the model sees a tool error and the log
	// shows the call.
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if ct, ok := req.(*mcp.CallToolRequest); ok && ct.Params != nil && !slices.Contains(names, ct.Params.Name) {
				return answer(ct.Params.Name, ct.Params.Arguments, ct.Params.Meta)
			}
			return next(ctx, method, req)
		}
	})
	return srv, nil
}

// ReadCallLog reads a call log back. A last line cut short (the server was
// killed while writing) is ignored; any other bad line is an error naming
// it.
func ReadCallLog(r io.Reader) ([]CallRecord, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read call log: %w", err)
	}
	var out []CallRecord
	lines := bytes.Split(data, []byte("\n"))
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec CallRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			if i == len(lines)-1 {
				break // an unterminated last line
			}
			return out, fmt.Errorf("call log line %d: %w", i+1, err)
		}
		out = append(out, rec)
	}
	return out, nil
}
