package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/exitcode"
	"bench/internal/record/results"
	"bench/internal/testpeer/anthropictest"
	"bench/internal/testpeer/faultserver"
)

// The fault matrix: the real bench binary against the fault server, every
// provider kind × every behaviour, each cell recorded with the failure
// class the README gives it. The CLI is the real Claude Code CLI talking
// to the fault server's Messages endpoint.

// faultProviders is the providers block for every kind against s, each
// with the models given and the key (if any) in BENCH_FAULT_KEY. The CLI
// is left out when cli is "".
func faultProviders(s *faultserver.Server, cli, home string, models, cliModels []string) string {
	list := "[" + strings.Join(models, ", ") + "]"
	b := fmt.Sprintf(`providers:
  - type: ollama_openai
    base_url: %[1]s/v1
    api_key_env: BENCH_FAULT_KEY
    max_retries: 0
    models: %[2]s
  - type: ollama
    base_url: %[1]s
    api_key_env: BENCH_FAULT_KEY
    max_retries: 0
    models: %[2]s
  - type: openai_responses
    base_url: %[1]s/v1
    api_key_env: BENCH_FAULT_KEY
    max_retries: 0
    models: %[2]s
  - type: anthropic
    base_url: %[1]s/v1
    api_key_env: BENCH_FAULT_KEY
    max_retries: 0
    models: %[2]s
  - type: openai_chat
    base_url: %[1]s/v1
    api_key_env: BENCH_FAULT_KEY
    max_retries: 0
    models: %[2]s
  - type: gemini
    base_url: %[1]s/v1beta
    api_key_env: BENCH_FAULT_KEY
    max_retries: 0
    models: %[2]s
`, s.URL(), list)
	if cli != "" {
		b += fmt.Sprintf(`  - type: claude_code_cli
    command: %s
    env:
      ANTHROPIC_BASE_URL: %s
      ANTHROPIC_AUTH_TOKEN: "${BENCH_FAULT_KEY}"
      ANTHROPIC_API_KEY: ""
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
      CLAUDE_CODE_MAX_RETRIES: "0"
      HOME: %s
    models: [%s]
`, cli, s.URL(), home, strings.Join(cliModels, ", "))
	}
	return b
}

// runIn runs the bench binary in dir with args and returns its exit code
// and output.
func runIn(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(benchBin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := exitCode(err)
	if code < 0 {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// faultRun writes the config (a run block, the providers, one prompt) into
// a temp dir, runs bench there and returns the records and the run dir.
func faultRun(t *testing.T, runBlock, provs string, args ...string) (code int, stdout, stderr string, recs []results.Record, runDir string) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(promptFile), 0o644)
	cfg := runBlock + provs + "prompts:\n  files: [prompts.yaml]\n  only: [T0]\n"
	os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(cfg), 0o644)
	code, stdout, stderr = runIn(t, dir, append([]string{"run", "--config", "bench.yaml", "--run-id", "fault", "--quiet"}, args...)...)
	runDir = filepath.Join(dir, "runs", "fault")
	return code, stdout, stderr, readRecords(t, filepath.Join(runDir, "results.jsonl")), runDir
}

// class is a record's availability status and failure type.
func class(r results.Record) string {
	ft := "-"
	if r.FailureType != nil {
		ft = *r.FailureType
	}
	return r.AvailabilityStatus + "/" + ft
}

// httpKinds is how many HTTP provider kinds faultProviders lists.
const httpKinds = 6

// httpClasses is what every HTTP provider records for each behaviour.
var httpClasses = map[string]string{
	"ok": "ok/-", "http401": "auth_error/http_401", "http403": "auth_error/http_403",
	"http404": "skipped_unavailable/model_not_found", "http429": "rate_limited/http_429",
	"http500": "error/http_5xx", "http503": "error/http_5xx",
	"cut": "error/stream_truncated", "cut_frame": "error/stream_truncated",
	"die": "error/connection_reset", "die_headers": "error/connection_reset",
	"stall_headers": "error/timeout", "stall_body": "error/timeout",
	"flood": "error/timeout", "flood:2000": "ok/-", "flood_reasoning:2000": "ok/empty_response", "flood_tool:50": "ok/-",
	"endless_line": "error/timeout", "long_line:3000000": "ok/-",
	"comment_flood": "error/timeout", "comment_flood:400": "ok/-",
	"malformed": "error/invalid_stream", "stream_error": "error/stream_error",
}

// cliClasses is what the Claude Code CLI provider records: the CLI retries
// a broken stream without streaming, so a cut or malformed one ends as an
// answer it cannot parse.
var cliClasses = map[string]string{
	"ok": "ok/-", "http401": "auth_error/http_401", "http429": "rate_limited/http_429", "http500": "error/http_5xx",
	"stall_body": "error/timeout", "flood": "error/timeout", "flood:2000": "ok/-",
	"cut": "error/invalid_stream", "malformed": "error/invalid_stream", "die": "error/connection_reset",
	"stream_error": "error/http_5xx", "comment_flood:400": "ok/-", "long_line:3000000": "ok/-",
}

// checkClasses compares each record's class with want and checks the
// output kept is bounded: raw_output at most max_output_bytes, marked cut
// when the answer was longer.
func checkClasses(t *testing.T, recs []results.Record, want map[string]string, maxOut int) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.Model] = true
		if os.Getenv("BENCH_FAULT_PRINT") != "" {
			fmt.Printf("%-16s %-22s %-40s raw=%d/%d trunc=%v e2e=%d %.120v\n", r.Provider, r.Model, class(r), len(r.RawOutput), r.RawOutputBytes, r.RawOutputTruncated, r.E2EMS, str(r.ErrorMessage))
		}
		w, ok := want[r.Model]
		if !ok {
			continue
		}
		if got := class(r); got != w {
			t.Errorf("%s %s: %s, want %s (%s)", r.Provider, r.Model, got, w, str(r.ErrorMessage))
		}
		if len(r.RawOutput) > maxOut || len(r.Reasoning) > maxOut || (r.RawOutputBytes > maxOut) != r.RawOutputTruncated {
			t.Errorf("%s %s: kept %d bytes of %d (cut %v), reasoning %d; cap %d", r.Provider, r.Model, len(r.RawOutput), r.RawOutputBytes, r.RawOutputTruncated, len(r.Reasoning), maxOut)
		}
		if strings.HasPrefix(r.Model, "flood_tool") && r.Success && len(r.ToolCallDetails) == 0 {
			t.Errorf("%s %s: no tool call kept", r.Provider, r.Model)
		}
	}
	for m := range want {
		if !seen[m] {
			t.Errorf("no record for %s", m)
		}
	}
}

// The CLI half of the matrix: the real Claude Code CLI against the fault
// server's Messages endpoint. Fewer cells at a time: each is a Node
// process, and the machine may be small.
func TestFaultMatrixCLI(t *testing.T) {
	s := faultserver.Start(t)
	cli := anthropictest.ClaudeBin(t)
	t.Setenv("BENCH_FAULT_KEY", "sk-fault-matrix-0123456789abcdef")
	var models []string
	for m := range cliClasses {
		models = append(models, m)
	}
	run := "run:\n  timeout: 30s\n  warmup: false\n  interleave: true\n  concurrency: 2\n  max_output_bytes: 4096\n"
	all := faultProviders(s, cli, t.TempDir(), nil, models)
	provs := "providers:\n" + all[strings.Index(all, "  - type: claude_code_cli"):] +
		fmt.Sprintf("  - name: cli_refused\n    type: claude_code_cli\n    command: %s\n    env: {ANTHROPIC_BASE_URL: %s, ANTHROPIC_AUTH_TOKEN: x, HOME: %s, CLAUDE_CODE_MAX_RETRIES: \"0\"}\n    models: [nothing-listens]\n", cli, s.ClosedURL(), t.TempDir()) +
		"  - name: cli_missing\n    type: claude_code_cli\n    command: bench-no-such-cli\n    models: [no-cli]\n"
	code, stdout, stderr, recs, _ := faultRun(t, run, provs, "--allow-unavailable")
	if code != exitcode.OK || len(recs) != len(cliClasses)+2 {
		t.Errorf("exit %d, %d records\n%s%s", code, len(recs), stdout, stderr)
	}
	checkClasses(t, recs, cliClasses, 4096)
	for _, r := range recs {
		switch {
		case r.Provider == "cli_refused" && class(r) != "skipped_unavailable/connection_refused",
			r.Provider == "cli_missing" && class(r) != "skipped_unavailable/cli_not_found":
			t.Errorf("%s: %s (%s)", r.Provider, class(r), str(r.ErrorMessage))
		}
	}
}

// TestFaultMatrix runs every behaviour through every provider and checks
// each record's class. The expected classes are the README's: what is not
// there is skipped_unavailable, a refused key auth_error, a 429
// rate_limited, a 5xx error/http_5xx, a stream cut cleanly
// error/stream_truncated, a server that dies error/connection_reset, a
// mid-stream error event error/stream_error, what runs past run.timeout
// error/timeout, and floods, long lines and keep-alive floods are answers.
func TestFaultMatrix(t *testing.T) {
	s := faultserver.Start(t)
	t.Setenv("BENCH_FAULT_KEY", "sk-fault-matrix-0123456789abcdef")
	s.AddModels("flood:2000", "flood_reasoning:2000", "flood_tool:50", "long_line:3000000", "comment_flood:400")
	var behaviours []string
	for b := range httpClasses {
		behaviours = append(behaviours, b)
	}
	run := "run:\n  timeout: 3s\n  warmup: false\n  interleave: true\n  concurrency: 12\n  max_output_bytes: 4096\n"
	provs := faultProviders(s, "", "", behaviours, nil) +
		fmt.Sprintf("  - name: refused\n    type: ollama_openai\n    base_url: %s/v1\n    models: [nothing-listens]\n", s.ClosedURL())
	code, stdout, stderr, recs, _ := faultRun(t, run, provs)
	// Every cell of one provider was unavailable: exit 4 names it.
	if code != exitcode.Unreached || !strings.Contains(stderr, "no cell of refused reached a model") || len(recs) != httpKinds*len(httpClasses)+1 {
		t.Errorf("exit %d, %d records\n%s%s", code, len(recs), stdout, stderr)
	}
	checkClasses(t, recs, httpClasses, 4096)
	for _, r := range recs {
		if r.Provider == "refused" && class(r) != "skipped_unavailable/connection_refused" {
			t.Errorf("refused: %s", class(r))
		}
	}
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
