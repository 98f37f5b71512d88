package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"

	"bench/validators/scripted"
)

// TestMain lets the test binary stand in for `bench mcp-serve TASKFILE
// CALLLOG`: a real MCP client (the Claude Code CLI) starts it as a stdio
// server with those arguments.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "mcp-serve" {
		if err := Run(context.Background(), os.Args[2:], os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString("mcp-serve: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const taskYAML = `tools:
  - name: get_weather
    description: Current weather of a city.
    parameters:
      type: object
      properties:
        city: {type: string}
      required: [city]
    rules:
      - args_subset: {city: Paris}
        result: {city: Paris, temp_c: 18}
    on_unmatched: "error: unknown city"
  - name: flaky_lookup
    fail_first: "error: 503 upstream timeout, try again"
    rules:
      - result: "found: 42"
`

func loadTools(t testing.TB) []scripted.Tool {
	t.Helper()
	tools, err := ParseTask("task.yaml", []byte(taskYAML))
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// syncBuffer is a call log the test can read while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fakeClock returns 2025-01-01T00:00:0N for the Nth reading.
func fakeClock() func() time.Time {
	var mu sync.Mutex
	n := 0
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		n++
		return time.Date(2025, 1, 1, 0, 0, n, 0, time.UTC)
	}
}

// connect runs serve on pipes and connects the SDK's own client to it.
func connect(t *testing.T, tools []scripted.Tool, log io.Writer) (*mcp.ClientSession, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	cr, sw := io.Pipe() // server -> client
	sr, cw := io.Pipe() // client -> server
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, tools, sr, sw, log, fakeClock())
		sw.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs, done
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("call %s: %d content blocks", name, len(res.Content))
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

func TestServeWithSDKClient(t *testing.T) {
	log := &syncBuffer{}
	cs, done := connect(t, loadTools(t), log)
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lt.Tools) != 2 || lt.Tools[0].Name != "flaky_lookup" && lt.Tools[1].Name != "flaky_lookup" {
		t.Fatalf("tools %+v", lt.Tools)
	}
	for _, tool := range lt.Tools {
		schema, _ := json.Marshal(tool.InputSchema)
		switch tool.Name {
		case "get_weather":
			if tool.Description != "Current weather of a city." || string(schema) != `{"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}` {
				t.Errorf("get_weather listed as %q %s", tool.Description, schema)
			}
		case "flaky_lookup":
			if string(schema) != `{"properties":{},"type":"object"}` {
				t.Errorf("flaky_lookup schema %s", schema)
			}
		}
	}

	steps := []struct {
		tool    string
		args    any
		text    string
		isError bool
	}{
		{"get_weather", map[string]any{"city": "Paris", "unit": "C"}, `{"city":"Paris","temp_c":18}`, false},
		{"get_weather", map[string]any{"city": "Pariss"}, "error: unknown city", true},
		{"flaky_lookup", map[string]any{"q": "x"}, "error: 503 upstream timeout, try again", true},
		{"flaky_lookup", map[string]any{"q": "x"}, "found: 42", false},
		{"get_time", nil, `error: unknown tool "get_time"; available tools: flaky_lookup, get_weather`, true},
	}
	for _, s := range steps {
		text, isErr := callText(t, cs, s.tool, s.args)
		if text != s.text || isErr != s.isError {
			t.Errorf("%s(%v) = %q error %v, want %q error %v", s.tool, s.args, text, isErr, s.text, s.isError)
		}
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v after the client closed", err)
	}
	recs, err := ReadCallLog(strings.NewReader(log.String()))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"seq":1,"time":"2025-01-01T00:00:01Z","tool":"get_weather","arguments":{"city":"Paris","unit":"C"},"result":"{\"city\":\"Paris\",\"temp_c\":18}","is_error":false,"rule":0}`,
		`{"seq":2,"time":"2025-01-01T00:00:02Z","tool":"get_weather","arguments":{"city":"Pariss"},"result":"error: unknown city","is_error":true,"rule":-1,"unmatched":true}`,
		`{"seq":3,"time":"2025-01-01T00:00:03Z","tool":"flaky_lookup","arguments":{"q":"x"},"result":"error: 503 upstream timeout, try again","is_error":true,"rule":-1,"fail_first":true}`,
		`{"seq":4,"time":"2025-01-01T00:00:04Z","tool":"flaky_lookup","arguments":{"q":"x"},"result":"found: 42","is_error":false,"rule":0}`,
		`{"seq":5,"time":"2025-01-01T00:00:05Z","tool":"get_time","arguments":{},"result":"error: unknown tool \"get_time\"; available tools: flaky_lookup, get_weather","is_error":true,"rule":-1,"unknown":true}`,
	}
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("call log:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if len(recs) != 5 || recs[4].Tool != "get_time" || !recs[4].Unknown || !recs[2].FailFirst {
		t.Errorf("records %+v", recs)
	}
}

func TestServeRefuses(t *testing.T) {
	var ts []scripted.Tool
	if err := yaml.Unmarshal([]byte("- {name: df, mode: text}\n- {name: df}\n"), &ts); err != nil {
		t.Fatal(err)
	}
	err := Serve(context.Background(), ts, strings.NewReader(""), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "cannot be served over MCP") || !strings.Contains(err.Error(), "duplicate tool name") {
		t.Errorf("err = %v", err)
	}
}

// Serve ends with its context even while the client keeps its end open.
func TestServeContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	defer w.Close()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, loadTools(t), r, io.Discard, io.Discard) }()
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Serve returned nil on cancel")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
}

func TestTaskFile(t *testing.T) {
	tools := loadTools(t)
	b, err := MarshalTask(tools)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseTask("task.json", b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	b2, _ := MarshalTask(back)
	if !bytes.Equal(b, b2) {
		t.Errorf("task file does not round-trip:\n%s\n%s", b, b2)
	}
	if empty, err := MarshalTask(nil); err != nil || string(empty) != "{\n  \"tools\": []\n}" {
		t.Errorf("empty task %s %v", empty, err)
	}
	cases := []struct{ src, want string }{
		{"[]", "t.yaml:1: want a mapping"},
		{"{}", "t.yaml:1: tools: missing"},
		{"tools: []\nextra: 1\n", `t.yaml:2: extra: unknown field "extra"`},
		{"tools:\n  - name: a\n    rules: [{args_regex: {q: \"(\"}, result: x}]\n", "t.yaml:3: tools.a.rules[0].args_regex.q: bad regex"},
		{"tools:\n  - name: a\n  - name: a\n", `t.yaml:3: tools[1].name: duplicate tool name "a"`},
		{`{"tools": [{"name": "a", "parameters": {"type": "string"}}]}`, `t.yaml:1: tools[0].parameters.type: want "object"`},
		{"tools: [\n", "t.yaml:1: did not find expected node content"},
	}
	for _, tc := range cases {
		if _, err := ParseTask("t.yaml", []byte(tc.src)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q", tc.src, err, tc.want)
		}
	}
	if ts, err := ParseTask("t.yaml", []byte("tools: []")); err != nil || len(ts) != 0 {
		t.Errorf("empty tools: %v %v", ts, err)
	}
}

func TestReadCallLog(t *testing.T) {
	good := `{"seq":1,"tool":"a","arguments":{},"result":"x","is_error":false,"rule":0}` + "\n"
	recs, err := ReadCallLog(strings.NewReader(good + good + `{"seq":3,"tool":"a","argu`))
	if err != nil || len(recs) != 2 {
		t.Errorf("cut last line: %d records, %v", len(recs), err)
	}
	if _, err := ReadCallLog(strings.NewReader(good + "oops\n" + good)); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad line: %v", err)
	}
}

func TestRunArgs(t *testing.T) {
	if err := Run(context.Background(), []string{"a"}, nil, io.Discard); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("err = %v", err)
	}
	dir := t.TempDir()
	if err := Run(context.Background(), []string{filepath.Join(dir, "none.yaml"), filepath.Join(dir, "log")}, nil, io.Discard); err == nil || !strings.Contains(err.Error(), "read task file") {
		t.Errorf("err = %v", err)
	}
}

func TestCLIConfig(t *testing.T) {
	got, err := CLIConfig("bench", "/usr/bin/bench", "mcp-serve", "/tmp/t.json", "/tmp/calls.jsonl")
	want := `{"mcpServers":{"bench":{"args":["mcp-serve","/tmp/t.json","/tmp/calls.jsonl"],"command":"/usr/bin/bench","type":"stdio"}}}`
	if err != nil || got != want {
		t.Errorf("CLIConfig = %s, %v", got, err)
	}
	if ToolName("bench", "get_weather") != "mcp__bench__get_weather" {
		t.Error(ToolName("bench", "get_weather"))
	}
}

// BenchmarkServeCall measures one tools/call round trip through the SDK
// client and bench's server over pipes, call log included.
func BenchmarkServeCall(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	go func() { _ = Serve(ctx, loadTools(b), sr, sw, io.Discard) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "get_weather", Arguments: map[string]any{"city": "Paris"}}
	for b.Loop() {
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
}
