package config_test

import (
	"strings"
	"testing"

	"bench/config"
	"bench/providers"
)

// A key pasted where a duration, a number, a thinking level, a type or a
// key name belongs is pointed at (file, line, field) but never repeated.
func TestErrorsDoNotRepeatKeys(t *testing.T) {
	// A made-up key, put together so that no secret scanner takes the
	// source for a leaked one.
	key := "sk-ant-" + "api03-" + "Zx9Qw8Er7Ty6Ui5Op4As3Df2"
	yml := `run:
  timeout: ` + key + `
  repetitions: ` + key + `
providers:
  - type: ` + key + `
    models: [m]
  - type: ollama
    models: [m]
    thinking_levels: [` + key + `]
    ` + key + `: 1
    max_retries: ` + key + `
`
	_, err := config.Parse("bench.yaml", []byte(yml), providers.Kinds)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if strings.Contains(msg, key[:12]) || strings.Contains(msg, key[12:]) {
		t.Errorf("the key is repeated:\n%s", msg)
	}
	for _, want := range []string{"bench.yaml:2: run.timeout", "bench.yaml:3: run.repetitions", "bench.yaml:5: providers[0].type",
		"bench.yaml:9: providers[1].thinking_levels[0]", "bench.yaml:10: providers[1].", "bench.yaml:11: providers[1].max_retries"} {
		if !strings.Contains(msg, want) {
			t.Errorf("no %q in:\n%s", want, msg)
		}
	}
	// Ordinary mistakes are still quoted.
	_, err = config.Parse("bench.yaml", []byte("run:\n  timeout: soon\nproviders:\n  - type: ollama\n    models: [m]\n"), providers.Kinds)
	if err == nil || !strings.Contains(err.Error(), `"soon" is not a duration`) {
		t.Errorf("%v", err)
	}
}
