package providers

import (
	"slices"
	"testing"

	"bench/config"
	"bench/prompts"
)

// The run's secrets are what the config names and what a process of the
// run receives (issue 31, item 6): an HTTP entry scrubs its key and its
// URL's password, never a credential-looking variable of bench's
// environment that nothing of the run sends (POSTGRES_PASSWORD=postgres
// left every correct answer saying "postgres" [redacted]); a CLI entry,
// whose process inherits bench's environment, scrubs that variable from
// its own records only, unless its env sets it; a command validator's
// credentials are the run's.
func TestRunSecretsAreWhatTheRunSends(t *testing.T) {
	t.Setenv("POSTGRES_PASSWORD", "postgres")
	t.Setenv("RS_HTTP_KEY", "sk-http-Qw3rTy7UiOp9")
	t.Setenv("RS_CLI_KEY", "sk-cli-Zx9Cv8Bn7Mq6W")
	t.Setenv("RS_CHECK_TOKEN", "tok-check-Pl4Ok8Ij2Uh")
	t.Setenv("RS_OVERRIDDEN_TOKEN", "tok-overridden-Mn5Bv1")
	set, err := prompts.Parse("p.yaml", []byte(`prompts:
  - id: P
    prompt: "Which database?"
    validator: {type: command, argv: ["true"], env: [RS_CHECK_TOKEN, HOME]}
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{PromptSet: set, Providers: []config.Provider{
		{Name: "http", Type: "ollama_openai", Options: &ollamaOpenAIOptions{httpOptions: httpOptions{BaseURL: "http://bob:url-pass-Hg3Fd7@h/v1", APIKeyEnv: "RS_HTTP_KEY"}}},
		{Name: "cli", Type: "claude_code_cli", Options: &claudeCodeOptions{Command: "claude", MaxTurns: 1,
			Env: map[string]string{"ANTHROPIC_AUTH_TOKEN": "${RS_CLI_KEY}", "RS_OVERRIDDEN_TOKEN": ""}}},
	}}
	spec := RunSecrets(cfg)
	scope := spec.Compile(nil)
	answer := "postgres sk-http-Qw3rTy7UiOp9 url-pass-Hg3Fd7 sk-cli-Zx9Cv8Bn7Mq6W tok-check-Pl4Ok8Ij2Uh tok-overridden-Mn5Bv1"
	if got, want := scope.For("http").Text(answer), "postgres [redacted] [redacted] [redacted] [redacted] tok-overridden-Mn5Bv1"; got != want {
		t.Errorf("an HTTP entry's records:\n got %q\nwant %q", got, want)
	}
	if got, want := scope.For("cli").Text(answer), "[redacted] [redacted] [redacted] [redacted] [redacted] tok-overridden-Mn5Bv1"; got != want {
		t.Errorf("the CLI entry's records:\n got %q\nwant %q", got, want)
	}
	// run.json names the variables, never a value.
	all, own := spec.Names()
	if !slices.Equal(all, []string{"RS_CHECK_TOKEN", "RS_CLI_KEY", "RS_HTTP_KEY"}) {
		t.Errorf("secret_env = %q", all)
	}
	if !slices.Contains(own["cli"], "POSTGRES_PASSWORD") || slices.Contains(own["cli"], "RS_OVERRIDDEN_TOKEN") || slices.Contains(own["cli"], "ANTHROPIC_AUTH_TOKEN") || own["http"] != nil {
		t.Errorf("provider_secret_env = %q", own)
	}
	// Each provider NewAll builds scrubs with its entry's set.
	provs, _, _, err := NewAll(cfg, func(p *config.Provider) string { return p.Name })
	if err != nil {
		t.Fatal(err)
	}
	if got := provs["http"].Secrets().Text("postgres sk-cli-Zx9Cv8Bn7Mq6W"); got != "postgres [redacted]" {
		t.Errorf("the HTTP provider's secrets: %q", got)
	}
	if got := provs["cli"].Secrets().Text("postgres sk-http-Qw3rTy7UiOp9"); got != "[redacted] [redacted]" {
		t.Errorf("the CLI provider's secrets: %q", got)
	}
}
