package config_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"bench/config"
	"bench/prompts"
	"bench/providers"
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
	c, err := config.Load(path, providers.Kinds)
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
	c, err := config.Parse("bench.yaml", []byte("providers:\n  - type: ollama\n    models: [m]\n  - type: openai_responses\n    models: [gpt-5]\n  - type: claude_code_cli\n    models: [sonnet]\n"), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	if c.Run.Concurrency != 4 || c.Run.Repetitions != 1 || c.Run.OutDir != "runs" || time.Duration(c.Run.Timeout) != 120*time.Second {
		t.Errorf("run defaults = %+v", c.Run)
	}
	// Each kind fills its own defaults; config.json shows them flat.
	want := []string{
		`{"name":"ollama","type":"ollama","concurrency":4,"models":["m"],"thinking_levels":[null],"warmup":true,"base_url":"http://127.0.0.1:11434","max_retries":2}`,
		`{"name":"openai_responses","type":"openai_responses","concurrency":4,"models":["gpt-5"],"thinking_levels":[null],"warmup":true,"base_url":"https://api.openai.com/v1","api_key_env":"OPENAI_API_KEY","max_retries":2}`,
		`{"name":"claude_code_cli","type":"claude_code_cli","concurrency":4,"models":["sonnet"],"thinking_levels":[null],"warmup":true,"command":"claude","max_turns":1}`,
	}
	for i, w := range want {
		got, err := json.Marshal(c.Providers[i])
		if err != nil || string(got) != w {
			t.Errorf("providers[%d] = %s (%v)\nwant %s", i, got, err, w)
		}
	}
	if c.Providers[1].Server.Endpoint != "https://api.openai.com/v1" || c.Providers[0].Server.ProcessNames[0] != "ollama" {
		t.Errorf("servers: %+v, %+v", c.Providers[0].Server, c.Providers[1].Server)
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
		{"unknown suite", "providers:\n  - type: ollama\n    models: [a]\nprompts:\n  suites:\n    - bfcl\n    - bfclv3\n",
			[]string{"bench.yaml:7: prompts.suites[1]: unknown suite \"bfclv3\"; one of default, bfcl"}},
		{"suite twice", "providers:\n  - type: ollama\n    models: [a]\nprompts:\n  suites: [bfcl, bfcl]\n",
			[]string{"bench.yaml:5: prompts.suites[1]: bfcl is listed twice"}},
		{"bad run id", "run:\n  id: ../escape\nproviders:\n  - type: ollama\n    models: [a]\n",
			[]string{"bench.yaml:2: run.id: must be letters"}},
		{"run id with a newline", "run:\n  id: \"a\\nb\"\nproviders:\n  - type: ollama\n    models: [a]\n",
			[]string{"bench.yaml:2: run.id: must be letters"}},
		{"long run id", "run:\n  id: " + strings.Repeat("r", 300) + "\nproviders:\n  - type: ollama\n    models: [a]\n",
			[]string{"bench.yaml:2: run.id: is 300 characters; at most 200"}},
		{"not yaml", "providers: [\n", []string{"bench.yaml"}},
		{"string for a list", "providers:\n  - type: ollama\n    models: llama3\n",
			[]string{"bench.yaml:3: providers[0].models: wrong type: got string llama3, want a list"}},
		{"list for a string", "providers:\n  - type: [ollama]\n    models: [m]\n",
			[]string{"bench.yaml:2: providers[0].type: wrong type: got a list, want a string"}},
		// One round, whatever the first error: a misspelled type hides
		// neither the entry's other keys nor its values, and an unknown
		// prompts.only id comes with the rest.
		{"one round after a misspelled type", "run:\n  concurency: 4\nproviders:\n  - type: olama_openai\n    modles: [x]\n    base_url: [x]\n    concurrency: 0\n    thinking_levels: [extreme]\nprompts:\n  only: [P0, P404]\n",
			[]string{"bench.yaml:2: run.concurency: unknown field", "bench.yaml:4: providers[0].type: unknown provider type \"olama_openai\" (did you mean \"ollama_openai\"?)",
				"bench.yaml:5: providers[0].modles: unknown field \"modles\" (did you mean \"models\"?)", "bench.yaml:6: providers[0].base_url: wrong type",
				"bench.yaml:7: providers[0].concurrency: must be at least 1", "bench.yaml:8: providers[0].thinking_levels[0]: \"extreme\" is not a thinking level",
				"bench.yaml:10: prompts.only: unknown prompt id P404"}},
		{"one round after a type like none", "providers:\n  - type: zzz\n    models: [a]\n    bogus: 1\n    command: claude\n",
			[]string{"bench.yaml:2: providers[0].type: unknown provider type \"zzz\"", "bench.yaml:4: providers[0].bogus: unknown field \"bogus\""}},
		{"metrics_url not a URL", "providers:\n  - type: openai_chat\n    models: [a]\n    metrics_url: localhost:8000/metrics\n",
			[]string{"bench.yaml:4: providers[0].metrics_url: must be an http:// or https:// URL (the server's /metrics), or off"}},
		{"metrics_url with a password", "providers:\n  - type: openai_chat\n    models: [a]\n    metrics_url: http://u:pw@127.0.0.1:8000/metrics\n",
			[]string{"bench.yaml:4: providers[0].metrics_url: must not hold credentials"}},
		{"metrics_interval too short", "providers:\n  - type: openai_chat\n    models: [a]\n    metrics_interval: 1ms\n",
			[]string{"bench.yaml:4: providers[0].metrics_interval: must be from 10ms to 10s"}},
		{"one round without a type", "providers:\n  - models: [a]\n    modles: [b]\n",
			[]string{"bench.yaml:2: providers[0].type: missing", "bench.yaml:3: providers[0].modles: unknown field \"modles\""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := config.Parse("bench.yaml", []byte(tc.yaml), providers.Kinds)
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

// The metrics endpoint: an openai_chat server on this machine has one
// beside /v1 by default, a hosted API and Ollama none, metrics_url wins
// and off turns the default off.
func TestMetricsURL(t *testing.T) {
	c, err := config.Parse("bench.yaml", []byte(`providers:
  - {name: local, type: openai_chat, base_url: "http://127.0.0.1:8000/v1", models: [m]}
  - {name: hosted, type: openai_chat, api_key_env: K, models: [m]}
  - {name: ollama, type: ollama_openai, models: [m]}
  - {name: set, type: ollama_openai, models: [m], metrics_url: "http://127.0.0.1:9/metrics", metrics_interval: 250ms}
  - {name: off, type: openai_chat, base_url: "http://localhost:8000/v1", models: [m], metrics_url: "off"}
`), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"http://127.0.0.1:8000/metrics", "", "", "http://127.0.0.1:9/metrics", ""}
	for i, p := range c.Providers {
		if p.Server.Metrics != want[i] {
			t.Errorf("%s: metrics %q, want %q", p.Name, p.Server.Metrics, want[i])
		}
	}
	if c.Providers[0].Server.MetricsInterval != config.DefaultMetricsInterval || c.Providers[3].Server.MetricsInterval != 250*time.Millisecond {
		t.Errorf("intervals %v %v", c.Providers[0].Server.MetricsInterval, c.Providers[3].Server.MetricsInterval)
	}
}

// A key pasted into api_key_env must not be echoed back in the error.
func TestLiteralKeyNotEchoed(t *testing.T) {
	key := "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
	_, err := config.Parse("bench.yaml", []byte("providers:\n  - type: openai_responses\n    api_key_env: "+key+"\n    models: [m]\n"), providers.Kinds)
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
	_, err := config.Load(cfg("a.yaml, b.yaml"), providers.Kinds)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "b.yaml")+":5: id: duplicate prompt id \"P0\"") {
		t.Errorf("duplicate across files: %v", err)
	}
	_, err = config.Load(cfg("c.yaml"), providers.Kinds)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "c.yaml")+":5: prompts[0].colour: unknown field") {
		t.Errorf("unknown prompt key: %v", err)
	}
	_, err = config.Load(cfg("missing.yaml"), providers.Kinds)
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

// Every problem of a file is reported at once, each at its own line: bad
// values in run, and several bad options of several provider kinds.
func TestAllProblemsAtOnce(t *testing.T) {
	yaml := `run:
  concurrency: 2.9
  repetitions: 1.5
  timeout: soon
  max_output_bytes: lots
providers:
  - type: ollama
    models: [m]
    base_url: ftp://x
    keep_alive: forever
    max_retries: -1
    seed: 1.5
  - type: claude_code_cli
    models: [sonnet]
    max_turns: 0
    temperature: 0.2
    comand: claude
`
	_, err := config.Parse("bench.yaml", []byte(yaml), providers.Kinds)
	if err == nil {
		t.Fatal("accepted")
	}
	want := []string{
		"bench.yaml:2: run.concurrency: must be a whole number, not 2.9",
		"bench.yaml:3: run.repetitions: must be a whole number, not 1.5",
		"bench.yaml:4: run.timeout: \"soon\" is not a duration",
		"bench.yaml:5: run.max_output_bytes: wrong type: got string lots, want a number",
		"bench.yaml:12: providers[0].seed: must be a whole number, not 1.5",
		"bench.yaml:16: providers[1].temperature: does not apply to type claude_code_cli (it is a key of ollama_openai)",
		"bench.yaml:17: providers[1].comand: unknown field \"comand\" (did you mean \"command\"?)",
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in\n%v", w, err)
		}
	}
	// Decoding problems come first; once the types are right, the checks of
	// each kind's options report all of theirs, each at its own line.
	_, err = config.Parse("bench.yaml", []byte(`providers:
  - type: ollama
    models: [m]
    base_url: ftp://x
    keep_alive: forever
    max_retries: -1
  - type: claude_code_cli
    models: [sonnet]
    max_turns: 0
`), providers.Kinds)
	for _, w := range []string{
		"bench.yaml:4: providers[0].base_url: must start with http:// or https://",
		"bench.yaml:5: providers[0].keep_alive: \"forever\" is not a duration",
		"bench.yaml:6: providers[0].max_retries: must be from 0 to 10",
		"bench.yaml:9: providers[1].max_turns: must be at least 1",
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in\n%v", w, err)
		}
	}
}

// Zero is not "use the default": an explicit 0 is an error.
func TestZerosRejected(t *testing.T) {
	_, err := config.Parse("bench.yaml", []byte("run:\n  concurrency: 0\n  timeout: 0\nproviders:\n  - type: ollama\n    models: [m]\n    concurrency: 0\n"), providers.Kinds)
	for _, w := range []string{
		"bench.yaml:2: run.concurrency: must be at least 1",
		"bench.yaml:3: run.timeout: must be more than 0",
		"bench.yaml:7: providers[0].concurrency: must be at least 1",
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in\n%v", w, err)
		}
	}
}

func TestNotUTF8HasALine(t *testing.T) {
	_, err := config.Parse("bench.yaml", []byte("run:\n  id: ok\n  out_dir: caf\xe9\n"), providers.Kinds)
	if err == nil || !strings.Contains(err.Error(), "bench.yaml:3: not UTF-8") {
		t.Errorf("got %v", err)
	}
}

func TestPlanSizeLimit(t *testing.T) {
	_, err := config.Parse("bench.yaml", []byte("run:\n  repetitions: 1000000000\nproviders:\n  - type: ollama\n    models: [m]\n"), providers.Kinds)
	builtin, _ := prompts.Builtin()
	want := fmt.Sprintf("bench.yaml:2: run.repetitions: the plan would have %d cells", 1_000_000_000*len(builtin))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v", err)
	}
}

func TestUnknownTypeSuggests(t *testing.T) {
	_, err := config.Parse("bench.yaml", []byte("providers:\n  - type: olama\n    models: [m]\n"), providers.Kinds)
	if err == nil || !strings.Contains(err.Error(), `bench.yaml:2: providers[0].type: unknown provider type "olama" (did you mean "ollama"?)`) {
		t.Errorf("got %v", err)
	}
}

// Warm-up is on by default for every kind, run.warmup sets the default of
// the entries that do not say, and an entry's own key wins.
func TestWarmupAndInterleave(t *testing.T) {
	c, err := config.Parse("bench.yaml", []byte("run:\n  warmup: false\n  interleave: true\nproviders:\n  - type: ollama\n    models: [m]\n  - type: claude_code_cli\n    warmup: true\n    models: [sonnet]\n"), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	if c.Run.Warmup || !c.Run.Interleave || c.Providers[0].Warmup || !c.Providers[1].Warmup {
		t.Errorf("run %+v, warmup %v %v", c.Run, c.Providers[0].Warmup, c.Providers[1].Warmup)
	}
	c, err = config.Parse("bench.yaml", []byte("providers:\n  - type: ollama_openai\n    models: [m]\n  - type: openai_responses\n    warmup: false\n    models: [gpt-5]\n"), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Run.Warmup || c.Run.Interleave || !c.Providers[0].Warmup || c.Providers[1].Warmup {
		t.Errorf("defaults: run %+v, warmup %v %v", c.Run, c.Providers[0].Warmup, c.Providers[1].Warmup)
	}
	if _, err := config.Parse("bench.yaml", []byte("providers:\n  - type: ollama\n    warmup: yes please\n    models: [m]\n"), providers.Kinds); err == nil || !strings.Contains(err.Error(), "bench.yaml:3: providers[0].warmup") {
		t.Errorf("bad warmup: %v", err)
	}
}

// prompts.suites picks built-in suites: bfcl alone, or with the default
// one; a prompt id only keeps some of them.
func TestSuites(t *testing.T) {
	for _, c := range []struct {
		yaml string
		n    int
		has  []string
	}{
		{"prompts:\n  suites: [bfcl]\n", 200, []string{"simple_python_10", "irrelevance_9"}},
		{"prompts:\n  suites: [default, bfcl]\n", 225, []string{"P0", "A9", "parallel_1"}},
		{"prompts:\n  suites: [bfcl]\n  only: [multiple_1, parallel_1]\n", 2, []string{"multiple_1"}},
		{"", 25, []string{"P0"}},
	} {
		src := "providers:\n  - type: ollama\n    models: [a]\n" + c.yaml
		cfg, err := config.Parse("bench.yaml", []byte(src), providers.Kinds)
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		if len(cfg.PromptSet) != c.n {
			t.Errorf("%q: %d prompts, want %d", c.yaml, len(cfg.PromptSet), c.n)
		}
		for _, id := range c.has {
			found := false
			for _, p := range cfg.PromptSet {
				found = found || p.ID == id
			}
			if !found {
				t.Errorf("%q: no prompt %s", c.yaml, id)
			}
		}
	}
}

// A judge is one of the config's provider entries: an llm_judge naming no
// entry is an error at the prompt's line, and an entry without models is
// allowed only as a judge.
func TestJudges(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "p.yaml", "prompts:\n  - id: J1\n    prompt: hi\n    validator: {type: llm_judge, rubric: Polite., judge: grader, model: judge-model}\n")
	writeFile(t, dir, "q.yaml", "prompts:\n  - id: J1\n    prompt: hi\n    validator: {type: llm_judge, rubric: Polite., judge: grade, model: m}\n")
	cfg := func(providers, file string) string {
		return writeFile(t, dir, "bench.yaml", "providers:\n"+providers+"prompts:\n  files: ["+file+"]\n")
	}
	c, err := config.Load(cfg("  - type: ollama\n    models: [m]\n  - name: grader\n    type: ollama\n", "p.yaml"), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	if c.Cells() != 1 || len(c.Providers) != 2 || strings.Join(c.JudgeNames(), ",") != "grader" {
		t.Errorf("cells %d, providers %d, judges %v", c.Cells(), len(c.Providers), c.JudgeNames())
	}
	_, err = config.Load(cfg("  - type: ollama\n    models: [m]\n  - name: grader\n    type: ollama\n", "q.yaml"), providers.Kinds)
	if want := filepath.Join(dir, "q.yaml") + `:4: validator.judge: "grade" names no provider entry (did you mean "grader"?) (entries: ollama, grader)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("unknown judge: %v\nwant %s", err, want)
	}
	if err == nil || !strings.Contains(err.Error(), "bench.yaml:4: providers[1].models: at least one model is required (an entry without models serves only as a judge, and no llm_judge names it)") {
		t.Errorf("an entry without models that judges nothing: %v", err)
	}
}

func TestDataPromptFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "data/cases.csv", "id,word\n1,alpha\n2,beta\n")
	writeFile(t, dir, "data/t.yaml", "template:\n  id: \"case-{{id}}\"\n  prompt: \"Say {{word}}\"\n  validator: {type: exact, value: \"{{word}}\"}\n")
	writeFile(t, dir, "p.yaml", "prompts:\n  - id: P0\n    prompt: hi\n    validator: {type: noop}\n")
	cfg := func(files string) string {
		return writeFile(t, dir, "bench.yaml", "providers:\n  - type: ollama\n    models: [m]\nprompts:\n  files:\n"+files)
	}
	c, err := config.Load(cfg("    - p.yaml\n    - {path: data/cases.csv, template: data/t.yaml}\n"), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range c.PromptSet {
		ids = append(ids, p.ID)
	}
	if strings.Join(ids, ",") != "P0,case-1,case-2" {
		t.Errorf("ids = %v", ids)
	}
	// config.json records the entries as written.
	b, err := json.Marshal(c.Prompts)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"files":["p.yaml",{"path":"data/cases.csv","template":"data/t.yaml"}],"only":null}`; string(b) != want {
		t.Errorf("prompts json = %s", b)
	}
	for _, tc := range []struct{ files, want string }{
		{"    - data/cases.csv\n", "bench.yaml:6: prompts.files[0]: data/cases.csv is a data file: give it a template"},
		{"    - {path: p.yaml, template: data/t.yaml}\n", "bench.yaml:6: prompts.files[0]: a template fills the rows of a data file (.csv, .jsonl, .ndjson), and p.yaml is a prompt file"},
		{"    - {path: data/cases.csv, tempalte: data/t.yaml}\n", `bench.yaml:6: prompts.files[0]: unknown field "tempalte" (did you mean "template"?)`},
		{"    - {template: data/t.yaml}\n", "bench.yaml:6: prompts.files[0]: path: missing"},
		{"    - {path: data/cases.csv, template: [t.yaml]}\n", "bench.yaml:6: prompts.files[0]: template: want a path, got a list"},
		{"    - {path: data/cases.csv, template: data/nope.yaml}\n", "nope.yaml"},
	} {
		_, err := config.Load(cfg(tc.files), providers.Kinds)
		if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), dir+"/", ""), tc.want) {
			t.Errorf("%q: error %v\nwant %s", tc.files, err, tc.want)
		}
	}
}

// A duration is Go's form or a bare number of seconds, as docs/config.md
// says: timeout: 120 is two minutes, 1.5 is 1.5 s.
func TestDurationBareNumberIsSeconds(t *testing.T) {
	for in, want := range map[string]time.Duration{"120": 2 * time.Minute, "1.5": 1500 * time.Millisecond, "2m": 2 * time.Minute, "1m30s": 90 * time.Second} {
		var d config.Duration
		if err := yaml.Unmarshal([]byte(in), &d); err != nil || time.Duration(d) != want {
			t.Errorf("%s: %v (%v), want %v", in, time.Duration(d), err, want)
		}
	}
}
