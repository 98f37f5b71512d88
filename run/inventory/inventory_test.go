package inventory

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/config"
	"bench/providers"
)

func fakeOllama(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/version":
			w.Write([]byte(`{"version":"0.9.6"}`))
		case "/api/tags":
			w.Write([]byte(`{"models":[{"name":"llama3.2:3b","model":"llama3.2:3b","modified_at":"2026-01-02T03:04:05Z","size":2019393189,"digest":"a80c4f17acd5","details":{"family":"llama","parameter_size":"3.2B","quantization_level":"Q4_K_M"}}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestWriteInventory(t *testing.T) {
	ollama := fakeOllama(t)
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()

	bin := t.TempDir()
	script := filepath.Join(bin, "fakeclaude")
	os.WriteFile(script, []byte("#!/bin/sh\necho '2.1.330 (Claude Code)'\n"), 0o755)

	t.Setenv("BENCH_TEST_KEY_SET", "sk-secret-value-123")
	t.Setenv("BENCH_TEST_KEY_UNSET", "")
	yaml := `providers:
  - {name: local, type: ollama_openai, base_url: "` + ollama.URL + `/v1", models: [llama3.2:3b]}
  - {name: gone, type: ollama, base_url: "` + downURL + `", models: [m]}
  - {name: openai, type: openai_responses, api_key_env: BENCH_TEST_KEY_SET, models: [m]}
  - {name: other, type: openai_responses, base_url: "http://x", api_key_env: BENCH_TEST_KEY_UNSET, models: [m]}
  - {name: claude, type: claude_code_cli, command: "` + script + `", models: [m]}
  - {name: noclaude, type: claude_code_cli, command: "` + filepath.Join(bin, "missing") + `", models: [m]}
`
	cfg, err := config.Parse("bench.yaml", []byte(yaml), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	provs := map[string]providers.Provider{}
	for i := range cfg.Providers {
		if provs[cfg.Providers[i].Name], err = providers.New(&cfg.Providers[i]); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if _, err := Write(context.Background(), dir, cfg, provs); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "inventory.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "sk-secret-value-123") {
		t.Fatal("inventory.json contains an API key value")
	}
	var inv Inventory
	if err := json.Unmarshal(data, &inv); err != nil {
		t.Fatal(err)
	}
	if inv.Bench.GoVersion == "" || inv.Host.OS == "" || inv.Host.Kernel == "" {
		t.Errorf("host/build: %+v %+v", inv.Host, inv.Bench)
	}
	if inv.Host.CoresLogical == nil || inv.Host.MemTotal == nil {
		t.Errorf("host cores/mem: %+v", inv.Host)
	}
	p := inv.Providers
	if len(p) != 6 {
		t.Fatalf("%d providers", len(p))
	}
	if p[0].ServerVersion == nil || *p[0].ServerVersion != "0.9.6" || len(p[0].ServerModels) != 1 ||
		p[0].ServerModels[0].QuantizationLevel != "Q4_K_M" || len(p[0].Errors) != 0 {
		t.Errorf("ollama: %+v", p[0])
	}
	if p[1].ServerVersion != nil || len(p[1].Errors) != 2 || !strings.Contains(p[1].Errors[0], "/api/version") {
		t.Errorf("unreachable ollama: %+v", p[1])
	}
	if p[2].APIKeySet == nil || *p[2].APIKeySet != "yes" || p[3].APIKeySet == nil || *p[3].APIKeySet != "no" || p[0].APIKeySet != nil {
		t.Errorf("api keys: %v %v %v", p[2].APIKeySet, p[3].APIKeySet, p[0].APIKeySet)
	}
	if p[4].CLIVersion == nil || *p[4].CLIVersion != "2.1.330 (Claude Code)" {
		t.Errorf("claude: %+v", p[4])
	}
	if p[5].CLIVersion != nil || len(p[5].Errors) != 1 {
		t.Errorf("missing claude: %+v", p[5])
	}
}
