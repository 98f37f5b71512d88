package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/internal/testpeer/anthropictest"
	"bench/internal/testpeer/faultserver"
	"bench/internal/testpeer/otelcoltest"
)

// The secret matrix: a key planted in every place a server or a CLI can
// echo it — an error body, a mid-stream error event, an answer's text, a
// key split across deltas, a stop reason, tool-call arguments that hide it
// behind \u escapes, at every offset where bench cuts a message, an
// answer, a log line, a stderr tail or a long line — for every provider,
// through the real bench binary; keys the CLI only inherits from bench's
// environment (an exported ANTHROPIC_API_KEY) are echoed too. Then every
// file of the run directories (agentic snapshots and work traces, the
// compare outputs), the OTLP export a real collector received, stdout and
// stderr are searched for any 8-byte piece of any key, as written and
// with their JSON escapes read (as any JSON parser reads them).

// newKey is a key no output can hold by chance: 48 random letters and
// digits (an 8-byte piece of it is 1 in 2e14 of any 8 bytes).
func newKey() string {
	const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := []byte("sk-")
	for range 45 {
		b = append(b, abc[rand.IntN(len(abc))])
	}
	return string(b)
}

// echoOffsets are where the key starts in a long echoed message or answer:
// around every cut bench makes (a message at 300 bytes, error_message at
// 2 KiB, a log line at 1 KiB, raw_output at max_output_bytes (1000 here),
// the stream's slack past it (+4096), the 64 KiB error body) and a line
// past 1 MiB, whose strings are cut while it is read.
var echoOffsets = []int{0, 1, 7, 250, 260, 270, 280, 290, 295, 299, 300, 301, 960, 980, 990, 995, 999, 1000, 1001,
	1020, 2000, 2020, 2040, 2047, 2048, 5050, 5060, 5070, 5080, 5090, 5095, 5096, 5100, 65490, 65500, 65530, 65535, 1100000}

// fakeCLI is a stand-in for the Claude Code CLI that echoes its token
// ($FAKE_TOKEN, set from ${BENCH_SECRET_KEY}) wherever a CLI can: stdout
// noise, stream lines, the result, stderr (whose tail bench keeps), at the
// offset the model's name gives.
const fakeCLI = `#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = "--model" ] && model=$2; shift; done
cat >/dev/null
K="$FAKE_TOKEN"
n=${model#*:}
fill() { head -c "$1" /dev/zero | tr '\0' x; }
init='{"type":"system","subtype":"init","session_id":"s","claude_code_version":"0"}'
delta() { printf '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"%s"}},"parent_tool_use_id":null}\n' "$1"; }
result='{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s"}'
case "$model" in
noise)
  echo "$init"; echo "noise before the key $K and after"
  echo "{\"type\":\"mystery\",\"token\":\"$K\"}"
  delta "hello $K there"
  echo "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"done $K\",\"session_id\":\"s-$K\"}" ;;
text:*)
  echo "$init"; delta "$(fill $n)$K$(fill 1024)"; echo "$result" ;;
longline:*)
  echo "$init"; printf '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"'
  fill $n; printf '%s' "$K"; fill 1200000; printf '"}},"parent_tool_use_id":null}\n'; echo "$result" ;;
malformed:*)
  echo "$init"; echo "$(fill $n)$K$(fill 100)"; delta "ok"; echo "$result" ;;
stderr:*)
  echo "$init"; printf 'fatal: %s%s%s' "$(fill 100)" "$K" "$(fill $n)" >&2; exit 3 ;;
error:*)
  echo "$init"; echo "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"api_error_status\":401,\"result\":\"API Error: 401 $(fill $n)$K\",\"session_id\":\"s\"}" ;;
esac
`

// agenticPrompt is a task whose tool is the one the fault server calls
// (get_memory), so echo_key_args puts its arguments into turn_details, the
// snapshots and the work traces.
const agenticPrompt = `prompts:
  - id: AG
    name: agentic_echo
    prompt: "Check the memory, then answer."
    max_turns: 2
    tools:
      - name: get_memory
        description: "Memory usage."
        parameters: {type: object, properties: {data: {type: string}}}
        on_unmatched: "no data"
    validator: {type: noop}
`

// secretRun runs bench in a new directory with the prompt file and the
// prompts given, then bench compare of the run against itself (its
// outputs land in the run directory), and returns what was printed, the
// records and the run directory.
func secretRun(t *testing.T, runBlock, provs, promptYAML, only string) (stdout, stderr string, recs []results.Record, runDir string) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(promptYAML), 0o644)
	cfg := runBlock + provs + "prompts:\n  files: [prompts.yaml]\n  only: [" + only + "]\n"
	os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(cfg), 0o644)
	// Not --quiet: every skipped or failed cell's message is printed too.
	_, stdout, stderr = runIn(t, dir, "run", "--config", "bench.yaml", "--run-id", "secrets")
	runDir = filepath.Join(dir, "runs", "secrets")
	_, cout, cerr := runIn(t, dir, "compare", runDir, runDir)
	return stdout + cout, stderr + cerr, readRecords(t, filepath.Join(runDir, "results.jsonl")), runDir
}

var unicodeEscape = regexp.MustCompile(`\\u[0-9a-fA-F]{4}`)

// unescape reads a text's JSON escapes: \uXXXX as its character (an
// escaped key becomes the key), \/ as /, \\ as \.
func unescape(s string) string {
	s = unicodeEscape.ReplaceAllStringFunc(s, func(m string) string {
		n, _ := strconv.ParseUint(m[2:], 16, 16)
		return string(rune(n))
	})
	return strings.NewReplacer(`\/`, "/", `\\`, `\`).Replace(s)
}

// leaks reports every 8-byte piece of a key in texts, as written, with its
// JSON escapes read once, and twice (a JSON string holding JSON).
func leaks(t *testing.T, where map[string]string, keys ...string) {
	t.Helper()
	for name, text := range where {
		views := []string{text, unescape(text), unescape(unescape(text))}
	next:
		for _, key := range keys {
			for v, view := range views {
				for i := 0; i+8 <= len(key); i++ {
					if j := strings.Index(view, key[i:i+8]); j >= 0 {
						t.Errorf("%s holds %q, a piece of a key (view %d), in: %q", name, key[i:i+8], v, view[max(0, j-120):min(len(view), j+60)])
						break next
					}
				}
			}
		}
	}
}

// readTree reads every file under dir into where, by path under dir
// prefixed with label.
func readTree(t *testing.T, where map[string]string, label, dir string) {
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, path)
		where[label+rel] = string(b)
		return nil
	})
}

func TestSecretMatrix(t *testing.T) {
	s := faultserver.Start(t)
	cli := anthropictest.ClaudeBin(t)
	col := otelcoltest.Start(t)
	key := newKey()
	// inherited is exported as ANTHROPIC_API_KEY, as users do: the CLI
	// entries that set no key inherit it and send it; fakeInherited is
	// exported as FAKE_TOKEN, which the fake CLI echoes when its entry
	// does not set one. Neither is named anywhere in the config.
	inherited, fakeInherited := newKey(), newKey()
	t.Setenv("BENCH_SECRET_KEY", key)
	t.Setenv("ANTHROPIC_API_KEY", inherited)
	t.Setenv("FAKE_TOKEN", fakeInherited)
	// The spans go to a real collector as OTLP/JSON, besides traces/.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.HTTPEndpoint())
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")

	newPositions := []string{faultserver.EchoKeyFinish, faultserver.EchoKeyArgs}
	httpModels := []string{"echo_key", "echo_key_event", "echo_key_frame", "echo_key_split"}
	httpModels = append(httpModels, newPositions...)
	for _, n := range echoOffsets {
		for _, b := range []string{"echo_key_long", "echo_key_long_event", "echo_key_long_frame"} {
			httpModels = append(httpModels, fmt.Sprintf("%s:%d", b, n))
		}
	}
	s.AddModels(httpModels...)
	// The inventory's version probe gets the key back as the version.
	s.Override("/api/version", faultserver.EchoKeyFrame)

	dir := t.TempDir()
	fake := filepath.Join(dir, "fake-claude")
	if err := os.WriteFile(fake, []byte(fakeCLI), 0o755); err != nil {
		t.Fatal(err)
	}
	fakeModels := []string{"noise"}
	for _, n := range []int{0, 900, 990, 1000, 1010, 4050, 5070, 5090, 5100} {
		fakeModels = append(fakeModels, fmt.Sprintf("text:%d", n))
	}
	for _, n := range []int{5060, 5080, 5090, 5096} {
		fakeModels = append(fakeModels, fmt.Sprintf("longline:%d", n))
	}
	for _, n := range []int{0, 980, 1000, 1020, 4000, 4090, 4100} {
		fakeModels = append(fakeModels, fmt.Sprintf("malformed:%d", n))
	}
	for _, n := range []int{0, 10, 4000, 4050, 4060, 4070, 4080, 4090, 4095, 4096} {
		fakeModels = append(fakeModels, fmt.Sprintf("stderr:%d", n))
	}
	for _, n := range []int{0, 250, 290, 2000, 2040, 5000} {
		fakeModels = append(fakeModels, fmt.Sprintf("error:%d", n))
	}
	fakeInheritModels := []string{"noise", "text:1000", "malformed:0", "stderr:4000", "error:290"}
	realModels := append([]string{"echo_key", "echo_key_event", "echo_key_frame", "echo_key_long:1000"}, newPositions...)
	inheritModels := append([]string{"echo_key", "echo_key_event", "echo_key_frame"}, newPositions...)

	run := "run:\n  timeout: 60s\n  warmup: false\n  interleave: true\n  concurrency: 8\n  max_output_bytes: 1000\n"
	provs := func(http, real, inherit, fakes, fakeInherit []string) string {
		b := fmt.Sprintf(`providers:
  - type: ollama_openai
    base_url: %[1]s/v1
    api_key_env: BENCH_SECRET_KEY
    max_retries: 0
    models: [%[2]s]
  - type: ollama
    base_url: %[1]s
    api_key_env: BENCH_SECRET_KEY
    max_retries: 0
    models: [%[2]s]
  - type: openai_responses
    base_url: %[1]s/v1
    api_key_env: BENCH_SECRET_KEY
    max_retries: 0
    models: [%[2]s]
  - type: anthropic
    base_url: %[1]s/v1
    api_key_env: BENCH_SECRET_KEY
    max_retries: 0
    models: [%[2]s]
  - type: openai_chat
    base_url: %[1]s/v1
    api_key_env: BENCH_SECRET_KEY
    max_retries: 0
    models: [%[2]s]
  - type: gemini
    base_url: %[1]s/v1beta
    api_key_env: BENCH_SECRET_KEY
    max_retries: 0
    models: [%[2]s]
  - name: claude
    type: claude_code_cli
    command: %[3]s
    concurrency: 2
    env:
      ANTHROPIC_BASE_URL: %[1]s
      ANTHROPIC_AUTH_TOKEN: "${BENCH_SECRET_KEY}"
      ANTHROPIC_API_KEY: ""
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
      CLAUDE_CODE_MAX_RETRIES: "0"
      HOME: %[4]s
    models: [%[5]s]
  - name: claude_inherits
    type: claude_code_cli
    command: %[3]s
    concurrency: 2
    env:
      ANTHROPIC_BASE_URL: %[1]s
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
      CLAUDE_CODE_MAX_RETRIES: "0"
      HOME: %[4]s
    models: [%[6]s]
`, s.URL(), strings.Join(http, ", "), cli, t.TempDir(), strings.Join(real, ", "), strings.Join(inherit, ", "))
		if len(fakes) > 0 {
			b += fmt.Sprintf(`  - name: fake_cli
    type: claude_code_cli
    command: %[1]s
    env: {FAKE_TOKEN: "${BENCH_SECRET_KEY}"}
    models: ["%[2]s"]
  - name: fake_inherits
    type: claude_code_cli
    command: %[1]s
    models: ["%[3]s"]
`, fake, strings.Join(fakes, `", "`), strings.Join(fakeInherit, `", "`))
		}
		return b
	}

	stdout, stderr, recs, runDir := secretRun(t, run, provs(httpModels, realModels, inheritModels, fakeModels, fakeInheritModels), promptFile, "T0")
	if want := httpKinds*len(httpModels) + len(realModels) + len(inheritModels) + len(fakeModels) + len(fakeInheritModels); len(recs) != want {
		t.Fatalf("%d records, want %d\n%s%s", len(recs), want, stdout, stderr)
	}
	// The agentic task: the escaped arguments in turn_details, the
	// snapshots and the work traces, on every protocol.
	agentModels := []string{faultserver.EchoKeyArgs, faultserver.EchoKeyFinish, faultserver.EchoKeyFrame}
	astdout, astderr, arecs, agentDir := secretRun(t, run, provs(agentModels, agentModels, agentModels, nil, nil), agenticPrompt, "AG")
	if want := (httpKinds + 2) * len(agentModels); len(arecs) != want {
		t.Fatalf("%d agentic records, want %d\n%s%s", len(arecs), want, astdout, astderr)
	}

	// The keys were sent: the matrix means something only if they came back.
	echoed, inheritedSent := 0, 0
	for _, r := range s.Requests() {
		if r.SentCredential(key) && strings.HasPrefix(r.Behaviour, "echo_key") {
			echoed++
		}
		if r.SentCredential(inherited) {
			inheritedSent++
		}
	}
	if echoed < httpKinds*len(httpModels) {
		t.Errorf("only %d requests carried the key to an echo behaviour", echoed)
	}
	if inheritedSent < len(inheritModels) {
		t.Errorf("only %d requests carried the inherited ANTHROPIC_API_KEY: the CLI did not inherit it", inheritedSent)
	}
	// Where the new positions were, [redacted] is now: a finish reason, the
	// arguments (still JSON), a turn's call.
	for _, r := range append(recs, arecs...) {
		if r.ProviderType == "claude_code_cli" {
			continue // what the CLI makes of a stop reason or a call is its own
		}
		switch r.Model {
		case faultserver.EchoKeyFinish:
			if r.FinishReason != providersRedacted {
				t.Errorf("%s %s: finish_reason %q, want %q", r.Provider, r.Model, r.FinishReason, providersRedacted)
			}
		case faultserver.EchoKeyArgs:
			found := false
			for _, c := range r.ToolCallDetails {
				found = found || strings.Contains(string(c.Arguments), providersRedacted)
			}
			for _, turn := range r.TurnDetails {
				for _, c := range turn.Calls {
					found = found || strings.Contains(string(c.Arguments), providersRedacted)
				}
			}
			if !found {
				t.Errorf("%s %s %s: no call's arguments hold %s: %+v %+v", r.Provider, r.Model, r.PromptID, providersRedacted, r.ToolCallDetails, r.TurnDetails)
			}
		}
	}

	col.Stop()
	where := map[string]string{"stdout": stdout + astdout, "stderr": stderr + astderr}
	readTree(t, where, "run/", runDir)
	readTree(t, where, "agentic/", agentDir)
	otlp, err := os.ReadFile(col.OutputPath())
	if err != nil || len(otlp) == 0 {
		t.Fatalf("the collector received no spans (%v)", err)
	}
	where["otlp export"] = string(otlp)
	for _, f := range []string{"run/results.jsonl", "run/summary.json", "run/summary.md", "run/inventory.json", "run/config.json", "run/run.json",
		"run/compare/compare.json", "agentic/results.jsonl"} {
		if _, ok := where[f]; !ok {
			t.Errorf("the run directory lacks %s", f)
		}
	}
	var snapshots, workTraces int
	for name := range where {
		snapshots += b2i(strings.HasPrefix(name, "agentic/snapshots/"))
		workTraces += b2i(strings.HasPrefix(name, "agentic/forsy/"))
	}
	if snapshots == 0 || workTraces == 0 {
		t.Errorf("the agentic run wrote %d snapshots and %d work traces", snapshots, workTraces)
	}
	leaks(t, where, key, inherited, fakeInherited)
	// Scrubbing is not erasing: the places the key was are marked.
	if !strings.Contains(where["run/results.jsonl"], "[redacted]") {
		t.Error("no [redacted] marker in results.jsonl")
	}
}

const providersRedacted = "[redacted]"

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
