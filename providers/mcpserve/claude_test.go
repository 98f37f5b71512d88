package mcpserve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"bench/internal/testpeer/anthropictest"
	"bench/validators/scripted"
)

// cliRun is one run of the CLI against the test server with bench's MCP
// server, and what came of it.
type cliRun struct {
	result map[string]any // the stream's final "result" event
	init   map[string]any // the stream's "system" init event
	calls  []CallRecord   // the call log, bench's side of the calls
	stderr string
	err    error // the CLI's exit error, if any
}

// runCLI runs `claude -p` the way a claude_code_cli cell runs an agentic
// task: the task's tools served by this test binary as `mcp-serve TASKFILE
// CALLLOG`, named in an inline --mcp-config, only they allowed, no built-in
// tools, tool search off.
func runCLI(t *testing.T, srv *anthropictest.Server, model string, tools []scripted.Tool, allowed ...string) cliRun {
	t.Helper()
	bin := anthropictest.ClaudeBin(t)
	dir := t.TempDir()
	task, err := MarshalTask(tools)
	if err != nil {
		t.Fatal(err)
	}
	taskPath, logPath := filepath.Join(dir, "task.json"), filepath.Join(dir, "calls.jsonl")
	if err := os.WriteFile(taskPath, task, 0o600); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := CLIConfig("bench", exe, "mcp-serve", taskPath, logPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages",
		"--no-session-persistence", "--model", model, "--max-turns", "4",
		"--mcp-config", cfg, "--strict-mcp-config", "--tools", ""}
	if len(allowed) > 0 {
		// Variadic: it takes every argument up to the next flag, so it
		// goes last.
		args = append(append(args, "--allowedTools"), allowed...)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	marker := make([]byte, 8)
	_, _ = rand.Read(marker)
	home := t.TempDir()
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"ANTHROPIC_BASE_URL=" + srv.URL,
		"ANTHROPIC_AUTH_TOKEN=test-token",
		"ANTHROPIC_API_KEY=",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"CLAUDE_CODE_MAX_RETRIES=0",
		"ENABLE_TOOL_SEARCH=false",
		"BENCH_MCP_TEST_MARKER=" + hex.EncodeToString(marker),
	}
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader("What is the weather in Paris?")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A run that ends in an error result (max turns) exits 1 after a
	// complete stream; the result event tells what happened.
	runErr := cmd.Run()
	run := cliRun{stderr: stderr.String(), err: runErr}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev map[string]any
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch {
		case ev["type"] == "result":
			run.result = ev
		case ev["type"] == "system" && ev["subtype"] == "init":
			run.init = ev
		}
	}
	if run.result == nil {
		t.Fatalf("no result event (exit %v); stdout: %s\nstderr: %s", runErr, stdout.String(), stderr.String())
	}
	// The CLI stops the MCP server itself: nothing it started lives on.
	if left := processesWithEnv("BENCH_MCP_TEST_MARKER=" + hex.EncodeToString(marker)); len(left) > 0 {
		t.Errorf("processes still running after the CLI exited: %v", left)
	}
	// The server creates the log when it starts, so a missing log means
	// the CLI never started it.
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatalf("call log: %v (the MCP server never started)", err)
	}
	defer f.Close()
	if run.calls, err = ReadCallLog(f); err != nil {
		t.Fatal(err)
	}
	return run
}

// processesWithEnv lists live processes whose environment holds kv.
func processesWithEnv(kv string) []string {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []string
	want := []byte(kv + "\x00")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		out = append(out, filepath.Base(d)+":"+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}

// requestsAt returns the Messages requests for model at a conversation turn.
func requestsAt(srv *anthropictest.Server, model string, turn int) []anthropictest.Request {
	var out []anthropictest.Request
	for _, r := range srv.Requests() {
		if r.Model == model && r.Path == "/v1/messages" && r.Turn() == turn {
			out = append(out, r)
		}
	}
	return out
}

// The CLI's own agent loop calls bench's scripted tool over MCP: the call
// reaches bench's server with the model's arguments, and the scripted result
// goes back to the model in the next Messages request.
func TestClaudeCodeCallsScriptedTool(t *testing.T) {
	srv := anthropictest.Start(t)
	const model = "mcp-weather"
	srv.Conversation(model,
		anthropictest.Reply{Text: []string{"Let me check."}, ToolName: "mcp__bench__get_weather", ToolInput: []string{`{"city": `, `"Paris"}`}, InputTokens: 50, OutputTokens: 12},
		anthropictest.Reply{Text: []string{"It is 18 C in Paris."}, InputTokens: 80, OutputTokens: 8},
	)
	run := runCLI(t, srv, model, loadTools(t), "mcp__bench__get_weather")
	if run.err != nil {
		t.Errorf("claude exited with %v; stderr: %s", run.err, run.stderr)
	}

	if run.result["subtype"] != "success" || run.result["result"] != "It is 18 C in Paris." || run.result["num_turns"] != float64(2) {
		t.Errorf("result event: subtype %v result %q turns %v", run.result["subtype"], run.result["result"], run.result["num_turns"])
	}
	if d, _ := run.result["permission_denials"].([]any); len(d) != 0 {
		t.Errorf("permission denials: %v", d)
	}
	if servers, _ := run.init["mcp_servers"].([]any); len(servers) != 1 || servers[0].(map[string]any)["status"] != "connected" {
		t.Errorf("init mcp_servers: %v", run.init["mcp_servers"])
	}

	// Bench's side: exactly the call the model made, with its arguments.
	if len(run.calls) != 1 {
		t.Fatalf("call log has %d calls, want 1: %+v", len(run.calls), run.calls)
	}
	c := run.calls[0]
	if c.Tool != "get_weather" || string(c.Arguments) != `{"city":"Paris"}` || c.IsError || c.Rule != 0 || c.Result != `{"city":"Paris","temp_c":18}` {
		t.Errorf("call = %+v", c)
	}
	if c.ToolUseID != "toolu_"+model+"_0" {
		t.Errorf("tool_use_id %q, want the id of the model's tool_use block", c.ToolUseID)
	}

	// The model's side: the task's tools were offered, and nothing else
	// (no built-in tool, no deferred tool search), and the second request
	// carried the scripted result.
	first := requestsAt(srv, model, 0)
	if len(first) == 0 {
		t.Fatal("no first request")
	}
	names := first[0].ToolNames()
	slices.Sort(names)
	if want := []string{"mcp__bench__flaky_lookup", "mcp__bench__get_weather"}; !slices.Equal(names, want) {
		t.Errorf("tools offered to the model: %v, want %v", names, want)
	}
	second := requestsAt(srv, model, 1)
	if len(second) != 1 {
		t.Fatalf("%d requests at turn 1, want 1", len(second))
	}
	trs := second[0].ToolResults()
	if len(trs) != 1 || trs[0].ToolUseID != "toolu_"+model+"_0" || trs[0].Content != `{"city":"Paris","temp_c":18}` || trs[0].IsError {
		t.Errorf("tool results in the second request: %+v", trs)
	}
}

// A tool that fails the first time: the model sees the scripted error,
// retries, and gets the result; bench logs both calls.
func TestClaudeCodeRetriesFailedCall(t *testing.T) {
	srv := anthropictest.Start(t)
	const model = "mcp-flaky"
	srv.Conversation(model,
		anthropictest.Reply{ToolName: "mcp__bench__flaky_lookup", ToolInput: []string{`{"q": "answer"}`}},
		anthropictest.Reply{Text: []string{"It failed; retrying."}, ToolName: "mcp__bench__flaky_lookup", ToolInput: []string{`{"q": "answer"}`}},
		anthropictest.Reply{Text: []string{"The answer is 42."}},
	)
	run := runCLI(t, srv, model, loadTools(t), "mcp__bench")
	if run.err != nil {
		t.Errorf("claude exited with %v; stderr: %s", run.err, run.stderr)
	}

	if run.result["subtype"] != "success" || run.result["result"] != "The answer is 42." || run.result["num_turns"] != float64(3) {
		t.Errorf("result event: subtype %v result %q turns %v", run.result["subtype"], run.result["result"], run.result["num_turns"])
	}
	if len(run.calls) != 2 {
		t.Fatalf("call log has %d calls, want 2: %+v", len(run.calls), run.calls)
	}
	if c := run.calls[0]; c.Tool != "flaky_lookup" || !c.IsError || !c.FailFirst || c.Result != "error: 503 upstream timeout, try again" || string(c.Arguments) != `{"q":"answer"}` {
		t.Errorf("first call = %+v", c)
	}
	if c := run.calls[1]; c.Tool != "flaky_lookup" || c.IsError || c.Result != "found: 42" || c.Seq != 2 || c.ToolUseID != "toolu_"+model+"_1" {
		t.Errorf("retry = %+v", c)
	}
	second := requestsAt(srv, model, 1)
	if len(second) != 1 {
		t.Fatalf("%d requests at turn 1", len(second))
	}
	if trs := second[0].ToolResults(); len(trs) != 1 || !trs[0].IsError || !strings.Contains(trs[0].Content, "503 upstream timeout") {
		t.Errorf("turn 1 tool results: %+v", trs)
	}
	third := requestsAt(srv, model, 2)
	if len(third) != 1 {
		t.Fatalf("%d requests at turn 2", len(third))
	}
	trs := third[0].ToolResults()
	if len(trs) != 2 || trs[1].IsError || trs[1].Content != "found: 42" || trs[1].ToolUseID != "toolu_"+model+"_1" {
		t.Errorf("turn 2 tool results: %+v", trs)
	}
}

// The control: without --allowedTools the CLI denies the call itself, so it
// never reaches bench's server, and the call log says so.
func TestClaudeCodeWithoutAllowedTools(t *testing.T) {
	srv := anthropictest.Start(t)
	const model = "mcp-denied"
	srv.Conversation(model,
		anthropictest.Reply{ToolName: "mcp__bench__get_weather", ToolInput: []string{`{"city": "Paris"}`}},
		anthropictest.Reply{Text: []string{"I could not check."}},
	)
	run := runCLI(t, srv, model, loadTools(t))
	if len(run.calls) != 0 {
		t.Errorf("a denied call reached the server: %+v", run.calls)
	}
	if d, _ := run.result["permission_denials"].([]any); len(d) != 1 {
		t.Errorf("permission denials: %v", run.result["permission_denials"])
	}
	second := requestsAt(srv, model, 1)
	if len(second) != 1 {
		t.Fatalf("%d requests at turn 1", len(second))
	}
	if trs := second[0].ToolResults(); len(trs) != 1 || !trs[0].IsError || strings.Contains(trs[0].Content, "temp_c") {
		t.Errorf("turn 1 tool results: %+v", trs)
	}
}
