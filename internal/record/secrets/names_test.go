package secrets

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Every variable named like a credential in the environment is one for a
// process that receives it; flags and variables that only contain the
// word are not; a URL's password is, whatever the name.
func TestInherited(t *testing.T) {
	env := []string{
		"ANTHROPIC_API_KEY=sk-ant-0123456789",
		"GITHUB_TOKEN=ghp_abcdefghijklmnop",
		"AWS_SECRET_ACCESS_KEY=abc/def+ghi0123",
		"db_password=hunter2hunter2",
		"NPM_AUTH=npmauth-0123",
		"TOKENIZERS_PARALLELISM=false-but-long",
		"SSH_AUTH_SOCK=/tmp/ssh-XXXX/agent.1",
		"HOME=/home/someone",
		"SHORT_TOKEN=1",
		"PEM_PRIVATE_KEY=-----BEGIN KEY-----\nabc\n-----END KEY-----",
		"NOEQUALS",
		"HTTPS_PROXY=http://u:prox-pass-99@proxy:3128",
	}
	got := Inherited(env)
	want := []string{"ANTHROPIC_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "db_password", "NPM_AUTH", "PEM_PRIVATE_KEY", "HTTPS_PROXY"}
	if !slices.Equal(got, want) {
		t.Errorf("Inherited = %q, want %q", got, want)
	}
	vals := map[string]string{}
	for _, kv := range env {
		k, v, _ := cut(kv)
		vals[k] = v
	}
	s := Spec{Env: got}.Compile(func(n string) (string, bool) { v, ok := vals[n]; return v, ok })
	// A spaced value is found whole, never by its ordinary pieces; a
	// proxy's password by itself.
	for in, want := range map[string]string{
		"a -----BEGIN KEY----- header":      "a -----BEGIN KEY----- header",
		"x" + vals["PEM_PRIVATE_KEY"] + "y": "x[redacted]y",
		"auth prox-pass-99 refused":         "auth [redacted] refused",
		"hunter2hunter2!":                   "[redacted]!",
		"false-but-long":                    "false-but-long",
	} {
		if got := s.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func cut(kv string) (string, string, bool) {
	for i := range len(kv) {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

func TestURLSecrets(t *testing.T) {
	sec := URLSecrets("http://bob:s3cr3t-pass@127.0.0.1:11434/v1")
	if !slices.Contains(sec, "s3cr3t-pass") || !slices.Contains(sec, "Ym9iOnMzY3IzdC1wYXNz") {
		t.Errorf("URLSecrets = %q", sec)
	}
	if URLSecrets("http://bob@host/") != nil || URLSecrets("not a url") != nil {
		t.Error("a user without a password is no secret")
	}
}

// A scope scrubs every record with the run's secrets and each entry's
// records with its own too, and no other's.
func TestScope(t *testing.T) {
	env := map[string]string{"RUN_KEY": "run-key-Qw3rTy7Ui", "CLI_TOKEN": "cli-token-Zx9Cv8Bn7"}
	look := func(n string) (string, bool) { v, ok := env[n]; return v, ok }
	sc := RunSpec{All: Spec{Env: []string{"RUN_KEY"}}, Own: map[string]Spec{"cli": {Env: []string{"CLI_TOKEN"}}}}.Compile(look)
	text := "run-key-Qw3rTy7Ui cli-token-Zx9Cv8Bn7"
	if got := sc.For("http").Text(text); got != "[redacted] cli-token-Zx9Cv8Bn7" {
		t.Errorf("http entry: %q", got)
	}
	if got := sc.For("cli").Text(text); got != "[redacted] [redacted]" {
		t.Errorf("cli entry: %q", got)
	}
	if !sc.Any().MayHold("cli-token-Zx9Cv8Bn7") || sc.Empty() {
		t.Error("Any misses an entry's own secret")
	}
}

// OfRun reads the names run.json and config.json give, never a value,
// and takes the values from the environment; broken files name nothing.
func TestOfRun(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"run_id":"r","secret_env":["OFRUN_A"],"provider_secret_env":{"cli":["OFRUN_B"]}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"providers":[{"name":"p","api_key_env":"OFRUN_C"}]}`), 0o644)
	t.Setenv("OFRUN_A", "value-a-Pl4Ok8Ij2")
	t.Setenv("OFRUN_B", "value-b-Mn5Bv1Cx6")
	t.Setenv("OFRUN_C", "value-c-Hg3Fd7Sa9")
	sc := OfRun(dir)
	if got := sc.For("p").Text("value-a-Pl4Ok8Ij2 value-b-Mn5Bv1Cx6 value-c-Hg3Fd7Sa9"); got != "[redacted] value-b-Mn5Bv1Cx6 [redacted]" {
		t.Errorf("p: %q", got)
	}
	if got := sc.For("cli").Text("value-b-Mn5Bv1Cx6"); got != "[redacted]" {
		t.Errorf("cli: %q", got)
	}
	os.Remove(filepath.Join(dir, "run.json"))
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "run.json")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{oops`), 0o644)
	if sc := OfRun(dir); !sc.Empty() {
		t.Error("a run.json symlink or a broken config.json named a secret")
	}
}
