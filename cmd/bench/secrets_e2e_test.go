package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/testpeer/anthropictest"
	"bench/internal/testpeer/faultserver"
)

// The secret matrix: a key planted in every place a server or a CLI can
// echo it — an error body, a mid-stream error event, an answer's text, a
// key split across deltas, at every offset where bench cuts a message, an
// answer, a log line, a stderr tail or a long line — for every provider,
// through the real bench binary; then every file of the run directory,
// stdout and stderr are searched for any 8-byte piece of it.

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

func TestSecretMatrix(t *testing.T) {
	s := faultserver.Start(t)
	cli := anthropictest.ClaudeBin(t)
	key := newKey()
	t.Setenv("BENCH_SECRET_KEY", key)

	var httpModels []string
	for _, b := range []string{"echo_key", "echo_key_event", "echo_key_frame", "echo_key_split"} {
		httpModels = append(httpModels, b)
	}
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
	realModels := []string{"echo_key", "echo_key_event", "echo_key_frame", "echo_key_long:1000"}

	run := "run:\n  timeout: 60s\n  warmup: false\n  interleave: true\n  concurrency: 8\n  max_output_bytes: 1000\n"
	provs := fmt.Sprintf(`providers:
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
  - name: fake_cli
    type: claude_code_cli
    command: %[6]s
    env: {FAKE_TOKEN: "${BENCH_SECRET_KEY}"}
    models: ["%[7]s"]
`, s.URL(), strings.Join(httpModels, ", "), cli, t.TempDir(), strings.Join(realModels, ", "), fake, strings.Join(fakeModels, `", "`))

	// Not --quiet: every skipped or failed cell's message is printed too.
	code, stdout, stderr, recs, runDir := faultRun(t, run, provs[:len(provs)])
	_ = code // every cell fails one way or another; the exit code is not the point
	if want := 3*len(httpModels) + len(realModels) + len(fakeModels); len(recs) != want {
		t.Fatalf("%d records, want %d\n%s%s", len(recs), want, stdout, stderr)
	}
	// The key was sent: the matrix means something only if it came back.
	echoed := 0
	for _, r := range s.Requests() {
		if r.SentCredential(key) && strings.HasPrefix(r.Behaviour, "echo_key") {
			echoed++
		}
	}
	if echoed < 3*len(httpModels) {
		t.Errorf("only %d requests carried the key to an echo behaviour", echoed)
	}

	where := map[string]string{"stdout": stdout, "stderr": stderr}
	filepath.WalkDir(runDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		where[filepath.Base(path)] = string(b)
		return nil
	})
	for _, f := range []string{"results.jsonl", "summary.json", "summary.md", "inventory.json", "config.json", "run.json"} {
		if _, ok := where[f]; !ok {
			t.Errorf("the run directory lacks %s", f)
		}
	}
	for name, text := range where {
		for i := 0; i+8 <= len(key); i++ {
			if j := strings.Index(text, key[i:i+8]); j >= 0 {
				t.Errorf("%s holds %q, a piece of the key, in: %q", name, key[i:i+8], text[max(0, j-120):min(len(text), j+60)])
				break
			}
		}
	}
	// Scrubbing is not erasing: the places the key was are marked.
	if !strings.Contains(where["results.jsonl"], "[redacted]") {
		t.Error("no [redacted] marker in results.jsonl")
	}
}
