package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/testpeer/anthropictest"
)

// One sweep over every provider type, each against a real server or CLI
// (the OpenAI one against a server that answers as OpenAI does to a bad
// key, quoting it), then every file the run wrote is searched for the
// secrets: they must be nowhere.
func TestEveryProviderAndNoSecretOnDisk(t *testing.T) {
	s := needServer(t)
	cli := anthropictest.ClaudeBin(t)
	anth := anthropictest.Start(t)
	openaiKey := "sk-e2e-openai-0123456789abcdefSECRET"
	anthToken := "anth-e2e-token-0123456789SECRET"
	t.Setenv("BENCH_E2E_OPENAI_KEY", openaiKey)
	t.Setenv("BENCH_E2E_ANTHROPIC_TOKEN", anthToken)
	oai := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+key+`","type":"invalid_request_error","code":"invalid_api_key"}}`)
	}))
	defer oai.Close()

	cfg := fmt.Sprintf(`run:
  timeout: 60s
providers:
  - type: ollama_openai
    base_url: %s/v1
    models: [scripted]
  - type: openai_responses
    base_url: %s/v1
    api_key_env: BENCH_E2E_OPENAI_KEY
    models: [gpt-e2e]
  - type: claude_code_cli
    command: %s
    env:
      ANTHROPIC_BASE_URL: %s
      ANTHROPIC_AUTH_TOKEN: "${BENCH_E2E_ANTHROPIC_TOKEN}"
      ANTHROPIC_API_KEY: ""
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
      CLAUDE_CODE_MAX_RETRIES: "0"
      HOME: %s
    models: [%s]
prompts:
  files: [prompts.yaml]
  only: [T0]
`, s.URL(), oai.URL, cli, anth.URL, t.TempDir(), anthropictest.ModelText)
	// The OpenAI server refuses the key by design: that provider reaches
	// no model, which --allow-unavailable accepts.
	code, stdout, stderr, recs, dir := runBench(t, cfg, "--allow-unavailable")
	if code != 0 || len(recs) != 3 {
		t.Fatalf("exit %d, %d records\n%s%s", code, len(recs), stdout, stderr)
	}
	if r := find(t, recs, "ollama_openai", "scripted", "T0"); !r.Success || r.ObjectivePass == nil || !*r.ObjectivePass {
		t.Errorf("ollama_openai: %+v", r)
	}
	if r := find(t, recs, "openai_responses", "gpt-e2e", "T0"); r.AvailabilityStatus != "auth_error" || r.HTTPStatus == nil || *r.HTTPStatus != 401 {
		t.Errorf("openai_responses: %s %v", r.AvailabilityStatus, r.FailureType)
	} else if r.ErrorMessage == nil || !strings.Contains(*r.ErrorMessage, "Incorrect API key provided: [redacted]") {
		t.Errorf("openai_responses: the echoed key was not scrubbed in place: %v", r.ErrorMessage)
	}
	c := find(t, recs, "claude_code_cli", anthropictest.ModelText, "T0")
	if !c.Success || c.RawOutput != "I will run `free -h` to check memory." || c.TTFTMS == nil || *c.TTFTMS > c.E2EMS {
		t.Errorf("claude_code_cli: %s %v %q ttft %v", c.AvailabilityStatus, c.FailureType, c.RawOutput, c.TTFTMS)
	}
	if c.ObjectivePass == nil || !*c.ObjectivePass || c.ProviderMetrics["cli_version"] == nil {
		t.Errorf("claude_code_cli: pass %v metrics %v", c.ObjectivePass, c.ProviderMetrics)
	}

	for _, secret := range []string{openaiKey, anthToken} {
		if strings.Contains(stdout+stderr, secret) {
			t.Errorf("a secret reached the terminal output")
		}
		filepath.WalkDir(filepath.Join(dir, "runs"), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), secret) {
				t.Errorf("%s holds a secret", path)
			}
			return nil
		})
	}
	b, _ := os.ReadFile(filepath.Join(dir, "runs", "e2e", "config.json"))
	if !strings.Contains(string(b), `"ANTHROPIC_AUTH_TOKEN"`) || strings.Contains(string(b), "BENCH_E2E_ANTHROPIC_TOKEN}") {
		t.Errorf("config.json should list the env keys and no values:\n%s", b)
	}
}
