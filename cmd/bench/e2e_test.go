package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/exitcode"
	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/testpeer/ollamatest"
	"bench/internal/testpeer/testmodel"
)

// The end-to-end tests run the real bench binary against a real Ollama
// serving a scripted model, so every recorded field is known in advance.

var (
	benchBin string
	srv      *ollamatest.Server
	srvErr   error
)

// script: the reply each test prompt gets (its last word is the trigger).
var script = testmodel.Script{
	"alpha": {"I will run ", "`free -h`", " to check memory."},
	"beta":  {`<tool_call>{"name": "get_memory_usage", "arguments": {"unit": "MB"}}</tool_call>`},
	"gamma": {"Run ", "`df -h`"},
	"delta": {"```json\n", `{"count": 3}`, "\n```"},
}

const promptFile = `prompts:
  - id: T0
    name: text_answer
    prompt: "Say the phrase: alpha"
    validator: {type: exact, value: "I will run ` + "`free -h`" + ` to check memory."}
  - id: T1
    name: native_tool
    system: "Use the tool."
    prompt: "How much memory is free? beta"
    tools:
      - name: get_memory_usage
        description: "Report memory usage."
        parameters: {type: object, properties: {unit: {type: string, enum: [MB, GB]}}, required: [unit]}
    validator: {type: tool_invocation, expected_tools: [get_memory_usage]}
  - id: T2
    name: text_tool
    prompt: "Which command shows disk space? gamma"
    validator: {type: tool_invocation, expected_tools: [df]}
  - id: T3
    name: json_answer
    prompt: "Count them as JSON: delta"
    validator: {type: json_keys, required_keys: [count], key_rules: {count: integer}}
  - id: T4
    name: no_reply
    prompt: "Nothing is scripted for this: unscripted"
    validator: {type: noop}
`

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bench-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	benchBin = filepath.Join(dir, "bench")
	if out, err := exec.Command("go", "build", "-o", benchBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build bench: %v\n%s", err, out)
		os.Exit(1)
	}
	srv, srvErr = ollamatest.StartServer()
	if srvErr == nil {
		srvErr = srv.Create(bgctx(), "scripted", script)
	}
	code := m.Run()
	if srv != nil {
		srv.Close()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func needServer(t *testing.T) *ollamatest.Server {
	t.Helper()
	ollamatest.Check(t, srvErr)
	return srv
}

// runBench writes the config and prompt file into a temp dir, runs the bench
// binary there and returns its exit code, output and records.
func runBench(t *testing.T, config string, args ...string) (code int, stdout, stderr string, recs []results.Record, dir string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(promptFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(benchBin, append([]string{"run", "--config", filepath.Join(dir, "bench.yaml"), "--run-id", "e2e"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	recs = readRecords(t, filepath.Join(dir, "runs", "e2e", "results.jsonl"))
	return code, out.String(), errb.String(), recs, dir
}

func readRecords(t testing.TB, path string) []results.Record {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []results.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		var r results.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s:%d: not JSON: %v", path, n, err)
		}
		recs = append(recs, r)
	}
	return recs
}

func find(t *testing.T, recs []results.Record, provider, model, prompt string) results.Record {
	t.Helper()
	for _, r := range recs {
		if r.Provider == provider && r.Model == model && r.PromptID == prompt {
			return r
		}
	}
	t.Fatalf("no record for %s %s %s among %d", provider, model, prompt, len(recs))
	return results.Record{}
}

func sweepConfig(url string) string {
	return fmt.Sprintf(`run:
  concurrency: 4
  timeout: 60s
providers:
  - type: ollama_openai
    base_url: %s/v1
    concurrency: 2
    models: [scripted, missing-model]
  - type: ollama
    base_url: %s
    concurrency: 2
    models: [scripted, missing-model]
prompts:
  files: [prompts.yaml]
`, url, url)
}

func TestSweepAgainstRealOllama(t *testing.T) {
	s := needServer(t)
	code, stdout, stderr, recs, dir := runBench(t, sweepConfig(s.URL()))
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if len(recs) != 20 {
		t.Fatalf("%d records, want 2 providers × 2 models × 5 prompts", len(recs))
	}
	for _, r := range recs {
		if r.RecordType != "result" || r.RunID != "e2e" || r.ToolCalls == nil || r.EndedAtMS < r.StartedAtMS {
			t.Errorf("%s/%s: identifiers or times wrong: %+v", r.Model, r.PromptID, r)
		}
		if r.TTFTMS != nil && *r.TTFTMS > r.E2EMS {
			t.Errorf("%s/%s: ttft %d > e2e %d", r.Model, r.PromptID, *r.TTFTMS, r.E2EMS)
		}
	}

	for _, p := range []string{"ollama_openai", "ollama"} {
		t0 := find(t, recs, p, "scripted", "T0")
		if t0.AvailabilityStatus != "ok" || !t0.Success || t0.RawOutput != "I will run `free -h` to check memory." {
			t.Errorf("%s T0: %s success=%v raw=%q", p, t0.AvailabilityStatus, t0.Success, t0.RawOutput)
		}
		if t0.OutputTokens == nil || *t0.OutputTokens != 4 || t0.InputTokens == nil || *t0.InputTokens <= 0 {
			t.Errorf("T0 tokens: in %v out %v, want out 4 (3 pieces + end)", t0.InputTokens, t0.OutputTokens)
		}
		if t0.TTFTMS == nil || t0.ObjectivePass == nil || !*t0.ObjectivePass || t0.ToolUseSuccess != nil {
			t.Errorf("T0: ttft %v pass %v tool_use_success %v", t0.TTFTMS, t0.ObjectivePass, t0.ToolUseSuccess)
		}
		if strings.Join(t0.ToolCalls, ",") != "free" || t0.ToolCallCount != 1 {
			t.Errorf("T0 tool calls %v, want the text command free", t0.ToolCalls)
		}

		t1 := find(t, recs, p, "scripted", "T1")
		if !t1.Success || t1.RawOutput != "" || t1.TTFTMS == nil {
			t.Errorf("T1: a tool-call-only reply must succeed with a ttft: %+v", t1)
		}
		if strings.Join(t1.ToolCalls, ",") != "get_memory_usage" || t1.ToolUseSuccess == nil || !*t1.ToolUseSuccess {
			t.Errorf("T1 tool calls %v success %v", t1.ToolCalls, t1.ToolUseSuccess)
		}
		if len(t1.ToolCallDetails) != 1 || t1.ToolCallDetails[0].Source != "native" || string(t1.ToolCallDetails[0].Arguments) != `{"unit":"MB"}` {
			t.Errorf("T1 details %+v", t1.ToolCallDetails)
		}

		t2 := find(t, recs, p, "scripted", "T2")
		if t2.RawOutput != "Run `df -h`" || strings.Join(t2.ToolCalls, ",") != "df" || t2.ToolUseSuccess == nil || !*t2.ToolUseSuccess || t2.ToolCallDetails[0].Source != "text" {
			t.Errorf("T2: raw %q calls %v success %v", t2.RawOutput, t2.ToolCalls, t2.ToolUseSuccess)
		}

		t3 := find(t, recs, p, "scripted", "T3")
		if t3.ObjectivePass == nil || !*t3.ObjectivePass || string(t3.ParsedOutput) == "null" {
			t.Errorf("T3 json: pass %v parsed %s violation %v", t3.ObjectivePass, t3.ParsedOutput, t3.Violation)
		}

		t4 := find(t, recs, p, "scripted", "T4")
		if t4.AvailabilityStatus != "ok" || t4.Success || t4.FailureType == nil || *t4.FailureType != "empty_response" {
			t.Errorf("T4: want ok/empty_response, got %s %v", t4.AvailabilityStatus, t4.FailureType)
		}

		for _, id := range []string{"T0", "T1", "T2", "T3", "T4"} {
			m := find(t, recs, p, "missing-model", id)
			if m.AvailabilityStatus != "skipped_unavailable" || m.FailureType == nil || *m.FailureType != "model_not_found" || m.Success {
				t.Errorf("missing model %s: %s %v", id, m.AvailabilityStatus, m.FailureType)
			}
		}
	}

	// config.json is the resolved config.
	var cfg map[string]any
	b, err := os.ReadFile(filepath.Join(dir, "runs", "e2e", "config.json"))
	if err != nil || json.Unmarshal(b, &cfg) != nil {
		t.Fatalf("config.json: %v", err)
	}
	run := cfg["run"].(map[string]any)
	if run["id"] != "e2e" || run["concurrency"].(float64) != 4 || run["repetitions"].(float64) != 1 || run["timeout"] != "1m0s" {
		t.Errorf("config.json run = %v", run)
	}
	runDir := filepath.Join(dir, "runs", "e2e")
	for _, f := range []string{"summary.json", "summary.md", "tiers.json", "run.json", "inventory.json",
		rundir.FileBase("ollama_openai", "scripted", nil) + "_before.txt", rundir.FileBase("ollama_openai", "scripted", nil) + "_after.txt",
		rundir.FileBase("ollama", "scripted", nil) + "_before.txt", rundir.FileBase("ollama", "scripted", nil) + "_after.txt"} {
		if _, err := os.Stat(filepath.Join(runDir, f)); err != nil {
			t.Errorf("run directory lacks %s: %v", f, err)
		}
	}
	if !strings.Contains(stdout, "Tier") || !strings.Contains(stdout, "scripted") {
		t.Errorf("no end-of-run table:\n%s", stdout)
	}
	if !strings.Contains(stdout, runDir) {
		t.Errorf("stdout does not say where the run directory is:\n%s", stdout)
	}
}

// A server that is not running costs no time: every cell is skipped at once
// (connection refused, not a timeout), and the user gets one line saying
// what to start.
func TestStoppedServer(t *testing.T) {
	s := needServer(t)
	dead, err := ollamatest.StartServer()
	if err != nil {
		t.Fatal(err)
	}
	url := dead.URL()
	dead.Stop()
	dead.Close()
	_ = s
	code, stdout, stderr, recs, _ := runBench(t, sweepConfig(url), "--timeout", "30s")
	if code != exitcode.Unreached || len(recs) != 20 || !strings.Contains(stderr, "no cell reached a model") {
		t.Fatalf("exit %d, %d records\n%s%s", code, len(recs), stdout, stderr)
	}
	for _, r := range recs {
		if r.AvailabilityStatus != "skipped_unavailable" || *r.FailureType != "connection_refused" || r.E2EMS >= 1000 {
			t.Errorf("%s/%s: %s %v after %d ms", r.Model, r.PromptID, r.AvailabilityStatus, *r.FailureType, r.E2EMS)
		}
	}
	// One line per provider saying what to start, no table, no raw dial
	// error, and the run's last line says nothing reached a model.
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for _, name := range []string{"ollama_openai", "ollama"} {
		if n := strings.Count(stderr, "bench: "+name+": start Ollama (`ollama serve`) so "); n != 1 {
			t.Errorf("%d lines saying what to start for %s, want 1:\n%s", n, name, stderr)
		}
	}
	if last := lines[len(lines)-1]; last != "bench: no cell reached a model; nothing was measured (exit 4)" ||
		strings.Contains(stderr, "dial tcp") || strings.Contains(stderr, "warm-up") || strings.Contains(stdout, "PASSED") || strings.Contains(stdout, "finished") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
}

func TestBadConfigExits2(t *testing.T) {
	code, _, stderr, recs, dir := runBench(t, "providers:\n  - type: ollama_openai\n    modles: [x]\n")
	if code != 2 || !strings.Contains(stderr, "bench.yaml:3: providers[0].modles: unknown field") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if recs != nil {
		t.Error("a bad config wrote results")
	}
	if _, err := os.Stat(filepath.Join(dir, "runs")); !os.IsNotExist(err) {
		t.Error("a bad config created the run directory")
	}
	code, _, stderr, _, _ = runBench(t, sweepConfig("http://127.0.0.1:1"), "--concurrency", "-3")
	if code != 2 || !strings.Contains(stderr, "--concurrency") {
		t.Errorf("bad flag: exit %d, stderr:\n%s", code, stderr)
	}
}

func bgctx() context.Context { return context.Background() }

// bench report rebuilds the reports from results.jsonl alone, skipping a
// truncated last line (a killed run) with a warning.
func TestReportRebuilds(t *testing.T) {
	s := needServer(t)
	code, stdout, stderr, recs, dir := runBench(t, sweepConfig(s.URL()), "--prompts", "T0,T1")
	if code != 0 || len(recs) != 8 {
		t.Fatalf("exit %d, %d records\n%s%s", code, len(recs), stdout, stderr)
	}
	runDir := filepath.Join(dir, "runs", "e2e")
	for _, f := range []string{"summary.json", "summary.md", "tiers.json"} {
		os.Remove(filepath.Join(runDir, f))
	}
	f, err := os.OpenFile(filepath.Join(runDir, "results.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"record_type":"result","run_id":"e2e","provider":"oll`)
	f.Close()
	cmd := exec.Command(benchBin, "report", runDir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("bench report: %v\n%s%s", err, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "line 9") {
		t.Errorf("no warning naming the truncated line 9:\n%s", errb.String())
	}
	var sum struct {
		Groups []struct {
			Provider string `json:"provider"`
			Model    string `json:"model"`
			NTotal   int    `json:"n_total"`
			NSuccess int    `json:"n_success"`
		} `json:"groups"`
	}
	b, err := os.ReadFile(filepath.Join(runDir, "summary.json"))
	if err != nil || json.Unmarshal(b, &sum) != nil {
		t.Fatalf("summary.json: %v %s", err, b)
	}
	got := map[string][2]int{}
	for _, g := range sum.Groups {
		got[g.Provider+"/"+g.Model] = [2]int{g.NTotal, g.NSuccess}
	}
	want := map[string][2]int{"ollama_openai/scripted": {2, 2}, "ollama/scripted": {2, 2}, "ollama_openai/missing-model": {2, 0}, "ollama/missing-model": {2, 0}}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: n_total/n_success %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	for _, f := range []string{"summary.md", "tiers.json"} {
		if _, err := os.Stat(filepath.Join(runDir, f)); err != nil {
			t.Errorf("bench report did not write %s", f)
		}
	}
}

// Models the server does not have: one line saying what to pull.
func TestNoModelOnServer(t *testing.T) {
	s := needServer(t)
	cfg := strings.ReplaceAll(sweepConfig(s.URL()), "[scripted, missing-model]", "[missing-model, llama3.2:3b]")
	code, stdout, stderr, recs, _ := runBench(t, cfg)
	if code != exitcode.Unreached || len(recs) != 20 {
		t.Fatalf("exit %d, %d records\n%s%s", code, len(recs), stdout, stderr)
	}
	if !strings.Contains(stderr, "no cell reached a model") || strings.Count(stderr, "`ollama pull llama3.2:3b`, `ollama pull missing-model`") != 2 {
		t.Errorf("want one line per provider naming the models to pull:\n%s", stderr)
	}
}

func TestDryRunSendsNothing(t *testing.T) {
	code, stdout, stderr, recs, dir := runBench(t, sweepConfig("http://127.0.0.1:1"), "--dry-run", "--prompts", "T0,T2")
	if code != 0 || recs != nil {
		t.Fatalf("exit %d, %d records\n%s%s", code, len(recs), stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs")); !os.IsNotExist(err) {
		t.Error("a dry run created the run directory")
	}
	if !strings.Contains(stdout, "8 cells") || !strings.Contains(stdout, "prompts: T0,T2") || strings.Count(stdout, "missing-model") != 2 {
		t.Errorf("plan:\n%s", stdout)
	}
}
