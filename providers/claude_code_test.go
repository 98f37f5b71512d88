package providers

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/internal/testpeer/anthropictest"
)

var (
	claudeVersionOnce sync.Once
	claudeVersion     string
)

// claudeCLIVersion is what the binary says with --version, e.g. "2.1.330".
func claudeCLIVersion(t *testing.T, bin string) string {
	claudeVersionOnce.Do(func() {
		out, err := exec.Command(bin, "--version").Output()
		if err == nil {
			claudeVersion, _, _ = strings.Cut(strings.TrimSpace(string(out)), " ")
		}
	})
	if claudeVersion == "" {
		t.Fatalf("%s --version gave no version", bin)
	}
	return claudeVersion
}

// claudeTestSecret is the auth token the tests hand the CLI through a ${VAR}
// reference, to check expansion and that it never reaches a message.
const claudeTestSecretVar = "BENCH_CLAUDE_TEST_TOKEN"

var claudeTestSecret = func() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	s := "sk-test-" + hex.EncodeToString(b)
	// Process-wide on purpose: t.Setenv cannot be used with parallel tests,
	// and no other test reads this name.
	os.Setenv(claudeTestSecretVar, s)
	return s
}()

// claudeRun is one Stream call and what it reported.
type claudeRun struct {
	resp   *Response
	err    error
	events []Event
}

// runClaude streams one request through a provider pointed at srv, then
// checks that no process the call started is still alive.
func runClaude(t *testing.T, ctx context.Context, bin, baseURL string, req Request, env map[string]string) claudeRun {
	return runClaudeWatch(t, ctx, bin, baseURL, req, env, nil)
}

// runClaudeWatch is runClaude with a hook that sees each event as it comes.
func runClaudeWatch(t *testing.T, ctx context.Context, bin, baseURL string, req Request, env map[string]string, watch func(Event)) claudeRun {
	t.Helper()
	marker := make([]byte, 8)
	_, _ = rand.Read(marker)
	e := map[string]string{
		"ANTHROPIC_BASE_URL":                       baseURL,
		"ANTHROPIC_AUTH_TOKEN":                     "${" + claudeTestSecretVar + "}",
		"ANTHROPIC_API_KEY":                        "",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"CLAUDE_CODE_MAX_RETRIES":                  "0",
		"HOME":                                     t.TempDir(),
		"BENCH_CLAUDE_TEST_MARKER":                 hex.EncodeToString(marker),
	}
	for k, v := range env {
		e[k] = v
	}
	p, err := newClaude(t, bin, e), error(nil)
	if err != nil {
		t.Fatalf("NewClaudeCode: %v", err)
	}
	var run claudeRun
	run.resp, run.err = p.Stream(ctx, req, func(ev Event) {
		run.events = append(run.events, ev)
		if watch != nil {
			watch(ev)
		}
	})
	if left := processesGone("BENCH_CLAUDE_TEST_MARKER=" + e["BENCH_CLAUDE_TEST_MARKER"]); len(left) > 0 {
		t.Errorf("processes still running 30 s after Stream returned: %v", left)
	}
	if run.resp == nil {
		t.Fatalf("Stream returned a nil response (err %v)", run.err)
	}
	return run
}

// processesGone waits for the live processes whose environment holds kv to
// die and lists those still alive after 30 s. A killed CLI is reaped in the
// background when it takes long to die (Stream returns at the cell's
// deadline, not at the end of a big Node heap's teardown), and on a busy
// machine a process sent SIGKILL can still be listed for a moment; one the
// kill never reached is still alive long after.
func processesGone(kv string) []string {
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := processesWithEnv(kv)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processesWithEnv lists live processes whose environment holds kv. Zombies
// have no readable environment, so only running processes count.
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

func wantFailure(t *testing.T, err error, status, typ string, httpStatus int, msgHas string) {
	t.Helper()
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("err = %v, want a *Failure %s/%s", err, status, typ)
	}
	if f.Status != status || f.Type != typ || f.HTTPStatus != httpStatus {
		t.Errorf("failure = %s/%s/%d, want %s/%s/%d (%s)", f.Status, f.Type, f.HTTPStatus, status, typ, httpStatus, f.Message)
	}
	if !strings.Contains(f.Message, msgHas) {
		t.Errorf("message %q lacks %q", f.Message, msgHas)
	}
	if strings.Contains(f.Error(), claudeTestSecret) {
		t.Errorf("failure leaks the auth token: %s", f.Error())
	}
}

func eventKinds(evs []Event) []EventKind {
	var k []EventKind
	for _, e := range evs {
		if !isPhase(e.Kind) {
			k = append(k, e.Kind)
		}
	}
	return k
}

// requestFor returns the body the server got for a model, decoded.
func requestFor(t *testing.T, srv *anthropictest.Server, model string) (map[string]any, []anthropictest.Request) {
	t.Helper()
	var reqs []anthropictest.Request
	for _, r := range srv.Requests() {
		if r.Model == model {
			reqs = append(reqs, r)
		}
	}
	if len(reqs) == 0 {
		t.Fatalf("server saw no request for model %s", model)
	}
	var body map[string]any
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatalf("request body: %v", err)
	}
	return body, reqs
}

// TestClaudeCodeCLI runs the real Claude Code CLI against a scripted
// Anthropic Messages server.
func TestClaudeCodeCLI(t *testing.T) {
	bin := anthropictest.ClaudeBin(t)
	version := claudeCLIVersion(t, bin)
	srv := anthropictest.Start(t)
	srv.Script("err401-echo", anthropictest.Reply{Status: 401, ErrorType: "authentication_error",
		Message: "invalid token " + claudeTestSecret})
	srv.Script("err429-retry", anthropictest.Reply{Status: 429, ErrorType: "rate_limit_error", Message: "slow down"})
	srv.Script("stall-deadline", anthropictest.Reply{Text: []string{"partial "}, StallAfterText: true})
	bg := context.Background()

	t.Run("text", func(t *testing.T) {
		t.Parallel()
		r := runClaude(t, bg, bin, srv.URL, Request{Model: anthropictest.ModelText, System: "Answer in one line.", Prompt: "-h how much memory is free?"}, nil)
		if r.err != nil {
			t.Fatalf("err = %v", r.err)
		}
		if r.resp.Text != "I will run `free -h` to check memory." {
			t.Errorf("text = %q", r.resp.Text)
		}
		want := []Event{{Kind: EventRequestStart}, {Kind: EventText, Text: "I will run "}, {Kind: EventText, Text: "`free -h`"}, {Kind: EventText, Text: " to check memory."}}
		var got []Event
		for _, e := range r.events {
			if !isPhase(e.Kind) {
				got = append(got, e)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("events = %v, want %v", got, want)
		}
		if derefP(r.resp.Usage.InputTokens) != 737 || derefP(r.resp.Usage.OutputTokens) != 4 {
			t.Errorf("usage = %v/%v, want 737/4", derefP(r.resp.Usage.InputTokens), derefP(r.resp.Usage.OutputTokens))
		}
		if r.resp.FinishReason != "end_turn" || len(r.resp.ToolCalls) != 0 {
			t.Errorf("finish = %q, tool calls = %v", r.resp.FinishReason, r.resp.ToolCalls)
		}
		m := r.resp.Metrics
		if m["cli_version"] != version || m["is_error"] != false || m["num_turns"] != 1 || m["exit_code"] != 0 || m["malformed_lines"] != 0 {
			t.Errorf("metrics = %v", m)
		}
		if sid, _ := m["session_id"].(string); len(sid) < 32 {
			t.Errorf("session_id = %v", m["session_id"])
		}
		for _, k := range []string{"startup_ms", "api_ttft_ms", "duration_ms", "duration_api_ms"} {
			if v, ok := m[k].(int64); !ok || v < 0 {
				t.Errorf("metrics[%s] = %#v, want a duration", k, m[k])
			}
		}
		if c, ok := m["total_cost_usd"].(float64); !ok || c <= 0 || r.resp.CostUSD == nil || *r.resp.CostUSD != c {
			t.Errorf("total_cost_usd = %#v, the response's cost %v: the CLI's own figure is the cell's cost", m["total_cost_usd"], r.resp.CostUSD)
		}
		body, reqs := requestFor(t, srv, anthropictest.ModelText)
		if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+claudeTestSecret {
			t.Errorf("Authorization = %q, want the expanded ${%s}", got, claudeTestSecretVar)
		}
		if sys, _ := json.Marshal(body["system"]); !bytes.Contains(sys, []byte("Answer in one line.")) {
			t.Error("the prompt's system text did not reach the request's system prompt")
		}
		if msgs, _ := json.Marshal(body["messages"]); !bytes.Contains(msgs, []byte("-h how much memory is free?")) {
			t.Error("the prompt did not reach the request's messages")
		}
	})

	t.Run("thinking", func(t *testing.T) {
		t.Parallel()
		r := runClaude(t, bg, bin, srv.URL, Request{Model: anthropictest.ModelThinking, ThinkingLevel: "low", Prompt: "Say hello"}, nil)
		if r.err != nil {
			t.Fatalf("err = %v", r.err)
		}
		if r.resp.Text != "Hello!" || r.resp.Reasoning != "The user wants a greeting." {
			t.Errorf("text = %q, reasoning = %q", r.resp.Text, r.resp.Reasoning)
		}
		want := []EventKind{EventRequestStart, EventReasoning, EventReasoning, EventText, EventText}
		if got := eventKinds(r.events); !reflect.DeepEqual(got, want) {
			t.Errorf("event kinds = %v, want %v", got, want)
		}
		body, _ := requestFor(t, srv, anthropictest.ModelThinking)
		oc, _ := body["output_config"].(map[string]any)
		if oc["effort"] != "low" {
			t.Errorf("output_config = %v, want effort low from thinking_level", body["output_config"])
		}
	})

	t.Run("tool_use", func(t *testing.T) {
		t.Parallel()
		// The CLI's own tools are the native tools. It may run the scripted
		// read-only `free -h` in the cell's temp directory before max_turns
		// stops it; only the call is asserted.
		r := runClaude(t, bg, bin, srv.URL, Request{Model: anthropictest.ModelTool, Prompt: "How much memory is free?"}, nil)
		if r.err != nil {
			t.Fatalf("err = %v (a turn ending on a tool call at max_turns 1 is a success)", r.err)
		}
		if len(r.resp.ToolCalls) != 1 {
			t.Fatalf("tool calls = %s, want one", jsonOf(r.resp.ToolCalls))
		}
		c := r.resp.ToolCalls[0]
		var args map[string]string
		if err := json.Unmarshal(c.Arguments, &args); err != nil {
			t.Fatalf("arguments %s: %v", c.Arguments, err)
		}
		if c.Name != "Bash" || c.ID != "toolu_test_1" || args["command"] != "free -h" || args["description"] != "Show memory" {
			t.Errorf("tool call = %s", jsonOf(c))
		}
		if r.resp.Text != "Checking memory." || r.resp.FinishReason != "tool_use" {
			t.Errorf("text = %q, finish = %q", r.resp.Text, r.resp.FinishReason)
		}
		want := []EventKind{EventRequestStart, EventText, EventToolCall, EventToolCall, EventToolCall, EventToolCall}
		if got := eventKinds(r.events); !reflect.DeepEqual(got, want) {
			t.Errorf("event kinds = %v, want %v", got, want)
		}
		if r.resp.Metrics["result_subtype"] != "error_max_turns" {
			t.Errorf("result_subtype = %v", r.resp.Metrics["result_subtype"])
		}
	})

	errCases := []struct {
		model, status, typ string
		http               int
		msg                string
	}{
		{anthropictest.ModelErr401, results.StatusAuthError, "http_401", 401, "injected 401"},
		{"err401-echo", results.StatusAuthError, "http_401", 401, "[redacted]"},
		{anthropictest.ModelErr429, results.StatusRateLimited, "http_429", 429, "injected 429"},
		{anthropictest.ModelErr500, results.StatusError, "http_5xx", 500, "injected 500"},
		{"no-such-model", results.StatusSkippedUnavailable, "model_not_found", 404, "no-such-model"},
	}
	for _, tc := range errCases {
		t.Run(tc.model, func(t *testing.T) {
			t.Parallel()
			r := runClaude(t, bg, bin, srv.URL, Request{Model: tc.model, Prompt: "hi"}, nil)
			wantFailure(t, r.err, tc.status, tc.typ, tc.http, tc.msg)
			if r.resp.Text != "" || len(r.resp.ToolCalls) != 0 {
				t.Errorf("an error reply produced output %q %v", r.resp.Text, r.resp.ToolCalls)
			}
			if r.resp.Metrics["is_error"] != true {
				t.Errorf("is_error = %v", r.resp.Metrics["is_error"])
			}
		})
	}

	t.Run("retry_429", func(t *testing.T) {
		t.Parallel()
		r := runClaude(t, bg, bin, srv.URL, Request{Model: "err429-retry", Prompt: "hi"}, map[string]string{"CLAUDE_CODE_MAX_RETRIES": "1"})
		wantFailure(t, r.err, results.StatusRateLimited, "http_429", 429, "slow down")
		_, reqs := requestFor(t, srv, "err429-retry")
		if len(reqs) != 2 || r.resp.Retries != 1 {
			t.Errorf("requests = %d, retries = %d; want 2 and 1 with CLAUDE_CODE_MAX_RETRIES=1", len(reqs), r.resp.Retries)
		}
	})

	t.Run("connection_refused", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + l.Addr().String()
		l.Close()
		r := runClaude(t, bg, bin, url, Request{Model: anthropictest.ModelText, Prompt: "hi"}, nil)
		wantFailure(t, r.err, results.StatusSkippedUnavailable, "connection_refused", 0, "ECONNREFUSED")
	})

	t.Run("stall_cancel", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
		defer cancel()
		// Cancel as Ctrl-C would, once the CLI has relayed the text the
		// server sent before stalling: it is surely waiting on the stream.
		r := runClaudeWatch(t, ctx, bin, srv.URL, Request{Model: anthropictest.ModelStall, Prompt: "hi"}, nil, func(e Event) {
			if e.Kind == EventText {
				cancel()
			}
		})
		if !errors.Is(r.err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", r.err)
		}
		var f *Failure
		if errors.As(r.err, &f) {
			t.Errorf("a cancelled call must be left to the runner, got failure %v", f)
		}
		if r.resp.Text != "partial " || r.resp.Metrics["session_id"] == nil {
			t.Errorf("partial response = %q, metrics %v", r.resp.Text, r.resp.Metrics)
		}
	})

	t.Run("stall_deadline", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(bg, 3*time.Second)
		defer cancel()
		r := runClaude(t, ctx, bin, srv.URL, Request{Model: "stall-deadline", Prompt: "hi"}, nil)
		if !errors.Is(r.err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", r.err)
		}
	})
}

// A missing CLI is a skipped cell, not a failed constructor.
func TestClaudeCodeCLINotFound(t *testing.T) {
	for _, cmd := range []string{"bench-no-such-claude-cli", filepath.Join(t.TempDir(), "claude")} {
		p, err := newClaude(t, cmd, nil), error(nil)
		if err != nil {
			t.Fatalf("NewClaudeCode(%s): %v", cmd, err)
		}
		var evs []Event
		resp, err := p.Stream(context.Background(), Request{Model: "m", Prompt: "hi"}, func(e Event) { evs = append(evs, e) })
		wantFailure(t, err, results.StatusSkippedUnavailable, "cli_not_found", 0, cmd)
		if resp == nil || len(evs) != 0 {
			t.Errorf("resp = %v, events = %v; want an empty response and no events", resp, evs)
		}
	}
}

// A CLI that dies without a result line is an error carrying its stderr.
func TestClaudeCodeCLICrash(t *testing.T) {
	script := filepath.Join(t.TempDir(), "claude")
	body := "#!/bin/sh\necho '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\",\"claude_code_version\":\"0\"}'\n" +
		"echo 'not json'\necho 'line one' >&2\necho \"fatal: token $ANTHROPIC_AUTH_TOKEN rejected\" >&2\nexit 3\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := newClaude(t, script, map[string]string{"ANTHROPIC_AUTH_TOKEN": "${" + claudeTestSecretVar + "}"}), error(nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Stream(context.Background(), Request{Model: "m", Prompt: "hi"}, func(Event) {})
	wantFailure(t, err, results.StatusError, "cli_exit", 0, "line one\nfatal: token [redacted] rejected")
	if resp.Metrics["exit_code"] != 3 || resp.Metrics["malformed_lines"] != 1 || resp.Metrics["session_id"] != "s" {
		t.Errorf("metrics = %v", resp.Metrics)
	}
}

// Cancelling kills the CLI's whole process group: a child it started (a tool
// command, a helper) must not outlive the cell, even one holding stdout.
func TestClaudeCodeCLIKillsProcessGroup(t *testing.T) {
	script := filepath.Join(t.TempDir(), "claude")
	body := "#!/bin/sh\n" +
		"echo '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\",\"claude_code_version\":\"0\"}'\n" +
		"sleep 300 &\n" +
		"echo '{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"started\"}},\"parent_tool_use_id\":null}'\n" +
		"sleep 300\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// runClaudeWatch fails the test if a process with its marker is left.
	r := runClaudeWatch(t, ctx, script, "http://127.0.0.1:1", Request{Model: "m", Prompt: "hi"}, nil, func(e Event) {
		if e.Kind == EventText {
			cancel()
		}
	})
	if !errors.Is(r.err, context.Canceled) || r.resp.Text != "started" {
		t.Errorf("err = %v, text = %q; want context.Canceled and the partial text", r.err, r.resp.Text)
	}
}

// BenchmarkClaudeCodeCLI measures one whole cell through the real CLI against
// a local scripted server: process start-up, CLI init, request and stream.
// It reports the CLI's start-up (spawn → init) and init → first token.
func BenchmarkClaudeCodeCLI(b *testing.B) {
	bin := os.Getenv("BENCH_CLAUDE_BIN")
	if bin == "" {
		root, _ := filepath.Abs("..")
		bin = filepath.Join(root, ".tools", "claude-code", "node_modules", ".bin", "claude")
	}
	if _, err := os.Stat(bin); err != nil {
		b.Skip("Claude Code CLI not installed: run scripts/install-claude-cli.sh")
	}
	srv := anthropictest.Start(b)
	p, err := newClaude(b, bin, map[string]string{
		"ANTHROPIC_BASE_URL": srv.URL, "ANTHROPIC_AUTH_TOKEN": "test", "ANTHROPIC_API_KEY": "",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "CLAUDE_CODE_MAX_RETRIES": "0", "HOME": b.TempDir(),
	}), error(nil)
	if err != nil {
		b.Fatal(err)
	}
	var startup, apiTTFT int64
	for b.Loop() {
		resp, err := p.Stream(context.Background(), Request{Model: anthropictest.ModelText, Prompt: "hi"}, func(Event) {})
		if err != nil {
			b.Fatal(err)
		}
		startup += resp.Metrics["startup_ms"].(int64)
		apiTTFT += resp.Metrics["api_ttft_ms"].(int64)
	}
	b.ReportMetric(float64(startup)/float64(b.N), "startup_ms/op")
	b.ReportMetric(float64(apiTTFT)/float64(b.N), "api_ttft_ms/op")
}

// newClaude builds the provider for a command and env.
func newClaude(t testing.TB, command string, env map[string]string) Provider {
	t.Helper()
	return newKind(t, "claude_code_cli", &claudeCodeOptions{Command: command, Env: env, MaxTurns: 1})
}

// The inventory's --version probe runs the real pinned CLI.
func TestRealClaudeCLIVersion(t *testing.T) {
	bin := anthropictest.ClaudeBin(t)
	v, err := cliVersion(context.Background(), bin, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v, "Claude Code") {
		t.Errorf("version %q", v)
	}
}

// A CLI whose child keeps stdout open, or that never answers, cannot hold
// the probe: its whole process group is killed at the deadline.
func TestCLIVersionBounded(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "child.pid")
	held := filepath.Join(dir, "held")
	os.WriteFile(held, []byte("#!/bin/sh\necho '9.9.9 (Fake)'\nsleep 600 &\necho $! > "+marker+"\n"), 0o755)
	v, err := cliVersion(context.Background(), held, os.Environ())
	if err != nil || v != "9.9.9 (Fake)" {
		t.Errorf("held stdout: %q, %v", v, err)
	}
	assertGone(t, marker)

	hung := filepath.Join(dir, "hung")
	os.WriteFile(hung, []byte("#!/bin/sh\nsleep 600 &\necho $! > "+marker+"\nwait\n"), 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := cliVersion(ctx, hung, os.Environ()); err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Errorf("hung CLI: %v", err)
	}
	assertGone(t, marker)
}

// assertGone checks that the pid written in marker no longer runs.
func assertGone(t *testing.T, marker string) {
	t.Helper()
	b, err := os.ReadFile(marker)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for range 100 {
		// Gone, or a zombie waiting for a parent that does not reap.
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(st), ") Z ") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("child %d still runs", pid)
}
