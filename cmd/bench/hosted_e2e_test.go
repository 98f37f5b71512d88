package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/internal/testpeer/recorded"
)

// hostedReplay is a server for one hosted kind that answers each request
// of a run with a recorded real stream chosen by the request's shape: a
// turn that offers tools (and answers none yet) gets the recording of a
// tool call, a later turn or a plain prompt the recording of a text
// answer, a prompt with thinking the recording of a reasoning answer.
func hostedReplay(t *testing.T, text, tools, thinking recorded.Exchange, hasTools, answered, thinks func(recorded.Request) bool) *recorded.Server {
	return recorded.Serve(t, func(r recorded.Request) recorded.Exchange {
		switch {
		case thinks(r):
			return thinking
		case hasTools(r) && !answered(r):
			return tools
		}
		return text
	})
}

func contains(s string) func(recorded.Request) bool {
	return func(r recorded.Request) bool { return bytes.Contains(r.Body, []byte(s)) }
}

// hostedServers are the three hosted kinds' replay servers.
func hostedServers(t *testing.T) (anth, oai, gem *recorded.Server) {
	anth = hostedReplay(t,
		recorded.One(t, "langchaingo/TestClient_CreateMessageStream.httprr", "/v1/messages"),
		recorded.One(t, "langchaingo/TestAnthropic_GenerateContentWithToolAndStreaming.httprr", "/v1/messages"),
		recorded.One(t, "pydantic-ai/test_anthropic_model_thinking_part_stream.yaml", "/v1/messages"),
		contains(`"tools":`), contains(`"tool_result"`), contains(`"thinking":{`))
	oai = hostedReplay(t,
		recorded.One(t, "langchaingo/TestWithStreaming-openai.httprr", "/chat/completions"),
		recorded.One(t, "langchaingo/TestFunctionParallelCall-streaming-openai.httprr", "/chat/completions"),
		recorded.One(t, "langchaingo/TestMultiContentTextWithReasoning-streaming-openrouter-gemini-2.5-flash-preview-thinking-effort.httprr", "/chat/completions"),
		contains(`"tools":`), contains(`"role":"tool"`), contains(`"reasoning_effort":`))
	gem = hostedReplay(t,
		recorded.One(t, "pydantic-ai/test_google_model_stream.yaml", "streamGenerateContent"),
		recorded.Chunks(t, "vercel-ai/google-tool-call.chunks.txt", recorded.Gemini),
		recorded.One(t, "pydantic-ai/test_google_model_thinking_part_iter.yaml", "streamGenerateContent"),
		contains(`"functionDeclarations"`), contains(`"functionResponse"`), contains(`"thinkingConfig"`))
	return anth, oai, gem
}

// The built-in suite through each hosted kind, each against a server
// replaying recorded real streams of its API: a complete run directory
// (results, summary, tiers, reports, junit) that compare and routing treat
// like any other kind's, every cell reached, and the key of each entry
// nowhere in it.
func TestHostedKindsRunTheSuite(t *testing.T) {
	anth, oai, gem := hostedServers(t)
	keys := map[string]string{
		"BENCH_E2E_ANTHROPIC_KEY": "sk-ant-" + "e2e-0123456789abcdefSECRET", // planted; split so the source holds no key
		"BENCH_E2E_OPENAI_KEY":    "sk-oai-e2e-0123456789abcdefSECRET",
		"BENCH_E2E_GEMINI_KEY":    "AIza-e2e-0123456789abcdefSECRET",
	}
	for k, v := range keys {
		t.Setenv(k, v)
	}
	cfg := fmt.Sprintf(`run:
  concurrency: 4
  timeout: 60s
providers:
  - type: anthropic
    base_url: %s/v1
    api_key_env: BENCH_E2E_ANTHROPIC_KEY
    models: [claude-sonnet-4-5]
    thinking_levels: [null, low]
  - type: openai_chat
    base_url: %s/v1
    api_key_env: BENCH_E2E_OPENAI_KEY
    models: [gpt-4.1]
    thinking_levels: [null, low]
  - type: gemini
    base_url: %s/v1beta
    api_key_env: BENCH_E2E_GEMINI_KEY
    models: [gemini-2.5-pro]
    thinking_levels: [null, low]
prompts:
  suites: [default]
`, anth.URL, oai.URL, gem.URL)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runIn(t, dir, "run", "--config", "bench.yaml", "--run-id", "hosted", "--quiet")
	runDir := filepath.Join(dir, "runs", "hosted")
	recs := readRecords(t, filepath.Join(runDir, "results.jsonl"))
	if code != 0 || len(recs) != 3*2*25 {
		t.Fatalf("exit %d, %d records\n%s%s", code, len(recs), stdout, stderr)
	}
	perKind := map[string]int{}
	for _, r := range recs {
		perKind[r.ProviderType]++
		if !r.Success || r.AvailabilityStatus != results.StatusOK || r.TTFTMS == nil || r.InputTokens == nil || r.OutputTokens == nil {
			t.Errorf("%s %s %s: %s/%v ttft %v tokens %v/%v: %s", r.Provider, r.PromptID, str(r.ThinkingLevel), r.AvailabilityStatus, r.FailureType, r.TTFTMS, r.InputTokens, r.OutputTokens, str(r.ErrorMessage))
		}
		if r.ThinkingLevel != nil && r.Reasoning == "" {
			t.Errorf("%s %s at %s: no reasoning recorded", r.Provider, r.PromptID, *r.ThinkingLevel)
		}
	}
	for _, k := range []string{"anthropic", "openai_chat", "gemini"} {
		if perKind[k] != 50 {
			t.Errorf("%s: %d records, want 50 (%v)", k, perKind[k], perKind)
		}
	}
	// The recorded answers, as the recordings have them.
	if r := find(t, recs, "anthropic", "claude-sonnet-4-5", "P0"); r.ThinkingLevel == nil && r.RawOutput != "1\n2\n3\n4\n5" {
		t.Errorf("anthropic P0: %q", r.RawOutput)
	}
	for _, r := range recs {
		if r.ProviderType == "anthropic" && r.PromptID == "P9" && r.ThinkingLevel == nil {
			if len(r.ToolCallDetails) != 2 || r.ToolCallDetails[0].Name != "calculateTip" || !sameJSON(r.ToolCallDetails[0].Arguments, `{"billAmount": 50, "tipPercentage": 15}`) || *r.InputTokens != 679 || *r.OutputTokens != 111 {
				t.Errorf("anthropic P9: calls %+v tokens %d/%d", r.ToolCallDetails, *r.InputTokens, *r.OutputTokens)
			}
		}
		if r.ProviderType == "gemini" && r.ThinkingLevel != nil && r.PromptID == "P0" && (r.ReasoningTokens == nil || *r.ReasoningTokens != 787) {
			t.Errorf("gemini P0 thinking: reasoning tokens %v", r.ReasoningTokens)
		}
	}
	for _, f := range []string{"summary.json", "summary.md", "tiers.json", "report.html", "answers.html", "run.json", "config.json", "inventory.json"} {
		if _, err := os.Stat(filepath.Join(runDir, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	var tiers struct {
		Ranking []struct {
			Provider string `json:"provider"`
			Tier     string `json:"tier"`
		} `json:"ranking"`
	}
	b, err := os.ReadFile(filepath.Join(runDir, "tiers.json"))
	if err != nil || json.Unmarshal(b, &tiers) != nil {
		t.Fatalf("tiers.json: %v %s", err, b)
	}
	groups := map[string]int{}
	for _, g := range tiers.Ranking {
		groups[g.Provider]++
		if g.Tier == "" || g.Tier == "unclassified" {
			t.Errorf("%s: tier %q", g.Provider, g.Tier)
		}
	}
	if len(groups) != 3 || groups["anthropic"] != 2 || groups["gemini"] != 2 || groups["openai_chat"] != 2 {
		t.Errorf("tiers.json groups %v", groups)
	}
	// The execution trace names each kind's GenAI provider.
	traces, _ := filepath.Glob(filepath.Join(runDir, "traces", "*"))
	var tr []byte
	for _, f := range traces {
		b, _ := os.ReadFile(f)
		tr = append(tr, b...)
	}
	for _, name := range []string{`"gen_ai.provider.name":"anthropic"`, `"gen_ai.provider.name":"openai"`, `"gen_ai.provider.name":"gcp.gemini"`} {
		if !bytes.Contains(tr, []byte(name)) {
			t.Errorf("traces/ (%d files) have no %s", len(traces), name)
		}
	}
	// compare reads the run as any other: against itself, nothing changed.
	cmd := exec.Command(benchBin, "compare", runDir, runDir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); exitCode(err) != 0 || !strings.Contains(out.String(), "gemini") {
		t.Errorf("bench compare: %v\n%s%s", err, out.String(), errb.String())
	}
	// The keys were sent (in each protocol's own header) and written nowhere.
	if r := anth.Requests()[0]; r.Header.Get("X-Api-Key") != keys["BENCH_E2E_ANTHROPIC_KEY"] {
		t.Errorf("anthropic headers %v", r.Header)
	}
	if r := gem.Requests()[0]; r.Header.Get("X-Goog-Api-Key") != keys["BENCH_E2E_GEMINI_KEY"] || strings.Contains(r.Query, "AIza") {
		t.Errorf("gemini request %s?%s %v", r.Path, r.Query, r.Header)
	}
	for _, key := range keys {
		if strings.Contains(stdout+stderr+out.String(), key) {
			t.Error("a key reached the terminal")
		}
		filepath.WalkDir(runDir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(key)) {
				t.Errorf("%s holds a key", path)
			}
			return nil
		})
	}
}

// sameJSON says a value is the JSON text want, whatever its spacing.
func sameJSON(got json.RawMessage, want string) bool {
	var a, b any
	return json.Unmarshal(got, &a) == nil && json.Unmarshal([]byte(want), &b) == nil && fmt.Sprint(a) == fmt.Sprint(b)
}

// The hosted kinds' own keys, wrong, are config errors at their lines, all
// at once, before anything is sent.
func TestHostedKindsBadConfig(t *testing.T) {
	cfg := `providers:
  - type: anthropic
    base_url: http://127.0.0.1:1/v1
    models: [m]
    thinking_budgets: {low: 10, huge: 2048}
    anthropic_version: ""
  - type: openai_chat
    base_url: http://127.0.0.1:1/v1
    models: [m]
    max_tokens_field: max_output
    headers: {"bad name": x}
  - type: gemini
    base_url: ftp://example/v1beta
    models: [m]
    max_tokens: -1
`
	code, _, stderr, recs, _ := runBench(t, cfg)
	for _, want := range []string{
		"bench.yaml:5: providers[0].thinking_budgets: \"huge\" is not a thinking level",
		"bench.yaml:5: providers[0].thinking_budgets: low: 10 tokens is below the least the API takes (1024)",
		"bench.yaml:6: providers[0].anthropic_version: must name an API version",
		"bench.yaml:10: providers[1].max_tokens_field: must be max_tokens or max_completion_tokens",
		"bench.yaml:11: providers[1].headers: \"bad name\" is not a valid header name",
		"bench.yaml:13: providers[2].base_url: must start with http:// or https://",
		"bench.yaml:15: providers[2].max_tokens: must be positive",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("no %q in:\n%s", want, stderr)
		}
	}
	if code != 2 || recs != nil {
		t.Errorf("exit %d, %d records", code, len(recs))
	}
}
