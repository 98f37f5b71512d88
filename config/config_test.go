package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The shape from the issue must load, with defaults filled in.
func TestLoadIssueShape(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "prompts/default.yaml", `prompts:
  - id: P0
    name: sanity_heartbeat
    system: "optional system message"
    prompt: "Reply with exactly: OK"
    tools: []
    validator: {type: exact, value: "OK"}
`)
	path := writeFile(t, dir, "bench.yaml", `run:
  id: ""
  out_dir: runs
  concurrency: 4
  repetitions: 1
  timeout: 120s
  max_output_bytes: 65536
providers:
  - name: ollama_openai
    type: ollama_openai
    base_url: http://127.0.0.1:11434/v1
    api_key_env: ""
    concurrency: 2
    models: [llama3.2:3b, qwen3:4b]
    thinking_levels: [null]
prompts:
  files: [prompts/default.yaml]
  only: []
`)
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Run.ID) != len("20060102_150405") {
		t.Errorf("default run id %q, want a UTC timestamp", c.Run.ID)
	}
	if time.Duration(c.Run.Timeout) != 120*time.Second || c.Run.Concurrency != 4 || c.Run.MaxOutputBytes != 65536 {
		t.Errorf("run = %+v", c.Run)
	}
	p := c.Providers[0]
	if p.Concurrency != 2 || len(p.Models) != 2 || len(p.ThinkingLevels) != 1 || p.ThinkingLevels[0] != nil {
		t.Errorf("provider = %+v", p)
	}
	if len(c.PromptSet) != 1 || c.PromptSet[0].ID != "P0" || c.PromptSet[0].System != "optional system message" {
		t.Errorf("prompts = %+v", c.PromptSet)
	}
}

func TestDefaults(t *testing.T) {
	c, err := Parse("bench.yaml", []byte("providers:\n  - type: ollama\n    models: [m]\n  - type: openai_responses\n    models: [gpt-5]\n  - type: claude_code_cli\n    models: [sonnet]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Run.Concurrency != 4 || c.Run.Repetitions != 1 || c.Run.OutDir != "runs" || time.Duration(c.Run.Timeout) != 120*time.Second {
		t.Errorf("run defaults = %+v", c.Run)
	}
	o, r, cc := c.Providers[0], c.Providers[1], c.Providers[2]
	if o.Name != "ollama" || o.BaseURL != "http://127.0.0.1:11434" || o.Concurrency != 4 {
		t.Errorf("ollama defaults = %+v", o)
	}
	if r.APIKeyEnv != "OPENAI_API_KEY" || r.BaseURL != "https://api.openai.com/v1" {
		t.Errorf("openai defaults = %+v", r)
	}
	if cc.Command != "claude" || cc.MaxTurns != 1 {
		t.Errorf("claude defaults = %+v", cc)
	}
	if len(c.PromptSet) < 12 {
		t.Errorf("built-in suite has %d prompts, want >= 12", len(c.PromptSet))
	}
}

// Every kind of bad config is rejected with file:line: field: reason.
func TestBadConfigs(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown key", "run:\n  concurency: 4\nproviders:\n  - type: ollama\n    models: [m]\n",
			[]string{"bench.yaml:2: run.concurency: unknown field \"concurency\""}},
		{"wrong type", "run:\n  concurrency: lots\nproviders:\n  - type: ollama\n    models: [m]\n",
			[]string{"bench.yaml:2: run.concurrency: wrong type: got string lots, want a number"}},
		{"bad duration", "run:\n  timeout: soon\nproviders:\n  - type: ollama\n    models: [m]\n",
			[]string{"bench.yaml:2: run.timeout: \"soon\" is not a duration"}},
		{"unknown provider type", "providers:\n  - type: llamafile\n    models: [m]\n",
			[]string{"bench.yaml:2: providers[0].type: unknown provider type \"llamafile\""}},
		{"missing type", "providers:\n  - models: [m]\n",
			[]string{"bench.yaml:2: providers[0].type: missing"}},
		{"missing models", "providers:\n  - type: ollama\n",
			[]string{"bench.yaml:2: providers[0].models: at least one model is required"}},
		{"no providers", "run:\n  concurrency: 2\n",
			[]string{"bench.yaml:1: providers: at least one provider is required"}},
		{"literal key", "providers:\n  - type: openai_responses\n    api_key_env: sk-proj-abcdefghijklmnopqrstuvwxyz0123456789\n    models: [m]\n",
			[]string{"bench.yaml:3: providers[0].api_key_env: holds what looks like a key itself"}},
		{"bad thinking level", "providers:\n  - type: ollama\n    models: [m]\n    thinking_levels: [null, extreme]\n",
			[]string{"bench.yaml:4: providers[0].thinking_levels[1]: \"extreme\" is not a thinking level"}},
		{"duplicate names", "providers:\n  - type: ollama\n    models: [a]\n  - type: ollama\n    models: [b]\n",
			[]string{"bench.yaml:4: providers[1].name: \"ollama\" is already the name of providers[0]"}},
		{"key for another type", "providers:\n  - type: ollama_openai\n    models: [a]\n    command: claude\n",
			[]string{"bench.yaml:4: providers[0].command: does not apply to type ollama_openai"}},
		{"unknown prompt id", "providers:\n  - type: ollama\n    models: [a]\nprompts:\n  only: [P0, P404]\n",
			[]string{"bench.yaml:5: prompts.only: unknown prompt id P404"}},
		{"bad run id", "run:\n  id: ../escape\nproviders:\n  - type: ollama\n    models: [a]\n",
			[]string{"bench.yaml:2: run.id: must be letters"}},
		{"not yaml", "providers: [\n", []string{"bench.yaml"}},
		{"string for a list", "providers:\n  - type: ollama\n    models: llama3\n",
			[]string{"bench.yaml:3: providers[0].models: wrong type: got string llama3, want a list"}},
		{"list for a string", "providers:\n  - type: [ollama]\n    models: [m]\n",
			[]string{"bench.yaml:2: providers[0].type: wrong type: got a list, want a string"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bench.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatal("accepted a bad config")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\ndoes not contain\n%s", err, w)
				}
			}
		})
	}
}

// A key pasted into api_key_env must not be echoed back in the error.
func TestLiteralKeyNotEchoed(t *testing.T) {
	key := "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
	_, err := Parse("bench.yaml", []byte("providers:\n  - type: openai_responses\n    api_key_env: "+key+"\n    models: [m]\n"))
	if err == nil || strings.Contains(err.Error(), key) {
		t.Fatalf("error %v must exist and not contain the key", err)
	}
}

func TestPromptFileErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.yaml", "prompts:\n  - id: P0\n    prompt: hi\n    validator: {type: noop}\n")
	writeFile(t, dir, "b.yaml", "prompts:\n  - id: X1\n    prompt: hi\n    validator: {type: noop}\n  - id: P0\n    prompt: again\n    validator: {type: noop}\n")
	writeFile(t, dir, "c.yaml", "prompts:\n  - id: C1\n    prompt: hi\n    validator: {type: noop}\n    colour: red\n")
	cfg := func(files string) string {
		return writeFile(t, dir, "bench.yaml", "providers:\n  - type: ollama\n    models: [m]\nprompts:\n  files: ["+files+"]\n")
	}
	_, err := Load(cfg("a.yaml, b.yaml"))
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "b.yaml")+":5: id: duplicate prompt id \"P0\"") {
		t.Errorf("duplicate across files: %v", err)
	}
	_, err = Load(cfg("c.yaml"))
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "c.yaml")+":5: prompts[0].colour: unknown field") {
		t.Errorf("unknown prompt key: %v", err)
	}
	_, err = Load(cfg("missing.yaml"))
	if err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: %v", err)
	}
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
