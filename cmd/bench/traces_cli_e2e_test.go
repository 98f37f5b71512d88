package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/testpeer/anthropictest"
	"bench/run/traces"
	"bench/run/traces/tracetest"
)

// cellParents maps each cell span of a trace to the traceparent naming it.
func cellParents(spans []tracetest.Span) map[string]bool {
	out := map[string]bool{}
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "cell ") {
			out["00-"+s.TraceID+"-"+s.SpanID+"-01"] = true
		}
	}
	return out
}

// The CLI subprocess gets its cell span's traceparent in TRACEPARENT: a
// stand-in claude writes what it got to a file.
func TestTraceparentReachesTheCLI(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "traceparents")
	script := filepath.Join(dir, "claude")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s\\n' \"$TRACEPARENT\" >> "+got+"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("providers:\n  - type: claude_code_cli\n    command: %s\n    models: [sonnet]\nprompts:\n  files: [prompts.yaml]\n  only: [T0, T1]\n", script)
	code, stdout, stderr, recs, runDir := runBenchEnv(t, nil, cfg)
	if code != 0 || len(recs) != 2 {
		t.Fatalf("exit %d, %d records\n%s%s", code, len(recs), stdout, stderr)
	}
	_, spans := traceFile(t, runDir)
	want := cellParents(spans)
	b, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	// First the suite's warm-up, naming the suite's span; then each cell's.
	suite := ""
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "suite ") {
			suite = "00-" + s.TraceID + "-" + s.SpanID + "-01"
		}
	}
	lines := strings.Fields(string(b))
	if len(lines) != 3 || lines[0] != suite || len(want) != 2 || !want[lines[1]] || !want[lines[2]] || lines[1] == lines[2] {
		t.Errorf("the CLI got TRACEPARENT %q, want the suite's %s (its warm-up), then one of each cell's %v", lines, suite, want)
	}
	for _, s := range spans {
		if s.Kind == traces.KindToolCall && s.Name == "exec claude" && s.Status != traces.StatusError {
			t.Errorf("a CLI that exits 3 without a result: %+v", s)
		}
	}
}

// The real Claude Code CLI passes TRACEPARENT on to what it runs: its own
// Bash tool prints the variable, and the tool result the CLI sends back to
// the (scripted) model holds the cell span's traceparent.
func TestTraceparentReachesTheRealCLI(t *testing.T) {
	cli := anthropictest.ClaudeBin(t)
	anth := anthropictest.Start(t)
	const model = "trace-env"
	anth.Conversation(model,
		anthropictest.Reply{Text: []string{"Checking."}, ToolName: "Bash",
			ToolInput: []string{`{"command": "printenv TRACEPARENT", `, `"description": "Show the trace context"}`}, InputTokens: 20, OutputTokens: 9},
		anthropictest.Reply{Text: []string{"Done."}, InputTokens: 30, OutputTokens: 2},
	)
	cfg := fmt.Sprintf(`run:
  timeout: 120s
  warmup: false
providers:
  - type: claude_code_cli
    command: %s
    max_turns: 2
    allowed_tools: [Bash]
    env:
      ANTHROPIC_BASE_URL: %s
      ANTHROPIC_AUTH_TOKEN: test-token
      ANTHROPIC_API_KEY: ""
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
      CLAUDE_CODE_MAX_RETRIES: "0"
      HOME: %s
    models: [%s]
prompts:
  files: [prompts.yaml]
  only: [T0]
`, cli, anth.URL, t.TempDir(), model)
	code, stdout, stderr, recs, runDir := runBenchEnv(t, nil, cfg)
	if code != 0 || len(recs) != 1 {
		t.Fatalf("exit %d, %d records\n%s%s", code, len(recs), stdout, stderr)
	}
	_, spans := traceFile(t, runDir)
	want := cellParents(spans)
	var results []string
	for _, r := range anth.Requests() {
		if r.Model == model && r.Turn() == 1 {
			for _, tr := range r.ToolResults() {
				results = append(results, strings.TrimSpace(tr.Content))
			}
		}
	}
	if len(results) == 0 || !want[results[0]] {
		t.Errorf("the CLI's Bash tool printed %q, want the cell's traceparent %v (record: %s %v)", results, want, recs[0].AvailabilityStatus, recs[0].ErrorMessage)
	}
}
