package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bench/config"
	"bench/providers"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bench.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The overrides stand over the file's values, are checked with them, and
// narrow the entries and models after the prompt set is loaded.
func TestLoadWithOverrides(t *testing.T) {
	path := writeConfig(t, `run: {concurrency: 3, out_dir: out}
providers:
  - {name: a, type: ollama_openai, models: [m1, m2]}
  - {name: b, type: ollama, models: [m3]}
prompts: {only: [P0]}
`)
	two, rep, to := 2, 5, 90*time.Second
	c, err := config.LoadWith(path, providers.Kinds, &config.Overrides{Concurrency: &two, Repetitions: &rep, Timeout: &to, RunID: "r1",
		Prompts: []string{"P0", "P3"}, Providers: []string{"a"}, Models: []string{"m2"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Run.Concurrency != 2 || c.Run.Repetitions != 5 || time.Duration(c.Run.Timeout) != to || c.Run.ID != "r1" || !c.Run.IDChosen {
		t.Errorf("run = %+v", c.Run)
	}
	if want := filepath.Join(filepath.Dir(path), "out"); c.Run.OutDir != want {
		t.Errorf("out_dir = %q, want %q (resolved against the file's directory)", c.Run.OutDir, want)
	}
	if len(c.PromptSet) != 2 || c.PromptSet[1].ID != "P3" {
		t.Errorf("--prompts did not widen prompts.only: %d prompts", len(c.PromptSet))
	}
	if len(c.Providers) != 1 || c.Providers[0].Name != "a" || strings.Join(c.Providers[0].Models, ",") != "m2" {
		t.Errorf("providers = %+v", c.Providers)
	}
	all, err := config.LoadWith(path, providers.Kinds, &config.Overrides{AllPrompts: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.PromptSet) <= 2 {
		t.Errorf("AllPrompts kept %d prompts; prompts.only should not apply", len(all.PromptSet))
	}
	_, err = config.LoadWith(path, providers.Kinds, &config.Overrides{Providers: []string{"zz"}, Models: []string{"m9"}, Prompts: []string{"nope"}})
	for _, want := range []string{`--prompts nope: prompts.only: unknown prompt id nope`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	_, err = config.LoadWith(path, providers.Kinds, &config.Overrides{Providers: []string{"zz"}, Models: []string{"m9"}})
	for _, want := range []string{`--providers zz: providers: no entry named "zz"`, `--models m9: providers[].models: "m9" is not in any provider's models`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}
