package config_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/config"
	"bench/providers"
)

const taskFile = `prompts:
  - id: T1
    name: weather_in_fahrenheit
    system: "Use the tools."
    prompt: "What is the temperature in Paris, in Fahrenheit?"
    max_turns: 4
    tools:
      - name: get_weather
        description: "Current weather of a city, in Celsius."
        parameters: {type: object, properties: {city: {type: string}}, required: [city]}
        fail_first: "error: 503 upstream timeout, try again"
        rules:
          - args_subset: {city: Paris}
            result: {city: Paris, temp_c: 18}
          - args_regex: {city: "(?i)lyon"}
            result: "21 C, sunny"
        on_unmatched: "error: unknown city"
    validators:
      - type: tool_sequence
        calls:
          - {name: get_weather, args_subset: {city: Paris}}
      - {type: max_tool_calls, value: 4}
      - {type: regex_fullmatch, pattern: "64\\.4 ?F"}
  - id: J1
    prompt: "Count them as JSON"
    validator: {type: json_keys, required_keys: [count], key_rules: {count: {type: integer}}}
`

const fullConfig = `run:
  id: r1
  repetitions: 3
  timeout: 90s
  max_output_bytes: 1000
providers:
  - type: ollama
    base_url: http://127.0.0.1:1
    models: [a, b]
    thinking_levels: [null, high]
    options: {num_ctx: 4096, temperature: 0.5}
    keep_alive: 5m
    pull: true
    warmup: true
    seed: 7
  - type: ollama_openai
    base_url: http://127.0.0.1:2/v1
    models: [c]
    max_tokens: 100
    temperature: 0
  - type: openai_responses
    api_key_env: MY_KEY
    max_retries: 1
    models: [gpt]
  - name: cli
    type: claude_code_cli
    command: claude
    env: {ANTHROPIC_AUTH_TOKEN: "${SOME_TOKEN}", HOME: /tmp}
    allowed_tools: [Bash, Read]
    permission_mode: default
    models: [sonnet]
  - type: anthropic
    api_key_env: MY_KEY
    headers: {X-Gateway-Token: "${SOME_TOKEN}", anthropic-beta: tools}
    models: [claude]
prompts:
  files: [tasks.yaml]
`

// savedConfig loads a bench.yaml and writes its config.json as a run does,
// returning both paths' configs.
func savedConfig(t *testing.T, yml string) (*config.Config, string) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "tasks.yaml", taskFile)
	c, err := config.Load(writeFile(t, dir, "bench.yaml", yml), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return c, writeFile(t, dir, "config.json", string(b))
}

// config.json reads back into the config that wrote it: every kind's
// options, the prompt set (agentic tasks included), the run settings;
// the CLI's env values, never saved, come back from the current config.
func TestLoadResolvedRoundTrip(t *testing.T) {
	orig, path := savedConfig(t, fullConfig)
	got, err := config.LoadResolved(path, providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	cli := got.Providers[3]
	if string(cli.Unsaved["env_keys"]) != `["ANTHROPIC_AUTH_TOKEN","HOME"]` {
		t.Fatalf("unsaved %v", cli.Unsaved)
	}
	// The headers' values are never saved either (an inline struct's
	// field: header_names was an unknown field once).
	if h := got.Providers[4].Unsaved; string(h["header_names"]) != `["X-Gateway-Token","anthropic-beta"]` {
		t.Fatalf("unsaved %v", h)
	}
	if err := got.Restore(orig); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(orig)
	b, _ := json.Marshal(got)
	if !bytes.Equal(a, b) {
		t.Errorf("read back differently:\n%s\n%s", a, b)
	}
	if got.Providers[0].Server.Endpoint != "http://127.0.0.1:1" || got.Run.ID != "r1" || !got.Run.IDChosen || got.Cells() != orig.Cells() {
		t.Errorf("resolved parts: %+v %+v", got.Providers[0].Server, got.Run)
	}
	// The prompts work as loaded ones do: a compiled pattern, a scripted tool.
	task := got.PromptSet[0]
	if !task.Agentic() || len(task.Tools[0].Rules) != 2 || task.Checks()[2].Type != "regex_fullmatch" {
		t.Errorf("task %+v", task)
	}
	if s := task.NewSession(); s == nil {
		t.Error("no session")
	}
}

// Values never saved must come from the same, unchanged entry; otherwise
// resuming is refused with the entry named.
func TestRestoreRefuses(t *testing.T) {
	orig, path := savedConfig(t, fullConfig)
	got, err := config.LoadResolved(path, providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	changed := *orig
	changed.Providers = append([]config.Provider(nil), orig.Providers...)
	changed.Providers[3].Models = []string{"opus"}
	if err := got.Restore(&changed); err == nil || !strings.Contains(err.Error(), "cli: the run's entry has values config.json never holds (env_keys), and its entry in") {
		t.Errorf("changed entry: %v", err)
	}
	changed.Providers = orig.Providers[:3]
	if err := got.Restore(&changed); err == nil || !strings.Contains(err.Error(), "it is not in") {
		t.Errorf("missing entry: %v", err)
	}
	if err := got.Restore(nil); err == nil {
		t.Error("no current config")
	}
}

// A damaged config.json is an error naming it and the line.
func TestLoadResolvedErrors(t *testing.T) {
	_, path := savedConfig(t, fullConfig)
	b, _ := os.ReadFile(path)
	bad := strings.Replace(string(b), `"repetitions": 3`, `"repetitions": "many"`, 1)
	os.WriteFile(path, []byte(bad), 0o644)
	_, err := config.LoadResolved(path, providers.Kinds)
	if err == nil || !strings.Contains(err.Error(), filepath.Base(path)+":") || !strings.Contains(err.Error(), "run.repetitions") {
		t.Errorf("bad value: %v", err)
	}
	os.WriteFile(path, []byte(`{"run": {}, "providers": []}`), 0o644)
	if _, err := config.LoadResolved(path, providers.Kinds); err == nil || !strings.Contains(err.Error(), "prompt_set") {
		t.Errorf("no prompt set: %v", err)
	}
	if _, err := config.LoadResolved(filepath.Join(t.TempDir(), "none.json"), providers.Kinds); err == nil {
		t.Error("missing file")
	}
}
