package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/exitcode"
	"bench/internal/testpeer/testmodel"
)

// Issue 31, item 6: a credential-looking variable of bench's environment
// that no process of the run receives is no secret. With
// POSTGRES_PASSWORD=postgres exported, a real Ollama's scripted model
// answers "postgres": the answer is kept as it came, the exact check
// passes, and the record says nothing was altered; the key the config
// names is still scrubbed where the model says it.
func TestInheritedCredentialIsNoSecretOfAnHTTPRun(t *testing.T) {
	s := needServer(t)
	key := newKey()
	s.CreateModel(t, "dbhelper", testmodel.Script{
		"database?": {"postgres"},
		"key?":      {"Your key is " + key + "."},
	})
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(`prompts:
  - id: DB
    prompt: "Which database?"
    validator: {type: exact, value: "postgres"}
  - id: KEY
    prompt: "What is my key?"
    validator: {type: noop}
`), 0o644)
	os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(fmt.Sprintf(`run:
  warmup: false
providers:
  - type: ollama
    base_url: %s
    api_key_env: BENCH_DB_KEY
    models: [dbhelper]
prompts:
  files: [prompts.yaml]
`, s.URL())), 0o644)
	code, stdout, stderr := benchIn(t, dir, []string{"POSTGRES_PASSWORD=postgres", "DB_ADMIN_TOKEN=postgres-admin", "BENCH_DB_KEY=" + key},
		"run", "--config", "bench.yaml", "--run-id", "db", "--quiet")
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	recs := readRecords(t, filepath.Join(dir, "runs", "db", "results.jsonl"))
	raw, _ := os.ReadFile(filepath.Join(dir, "runs", "db", "results.jsonl"))
	for _, r := range recs {
		switch r.PromptID {
		case "DB":
			if r.RawOutput != "postgres" || r.ObjectivePass == nil || !*r.ObjectivePass {
				t.Errorf("the answer %q (pass %v): an inherited variable nothing of the run receives was scrubbed from it", r.RawOutput, r.ObjectivePass)
			}
		case "KEY":
			if r.RawOutput != "Your key is [redacted]." {
				t.Errorf("the configured key was not scrubbed: %q", r.RawOutput)
			}
		}
	}
	if n := strings.Count(string(raw), `"raw_output_redacted":true`); n != 1 {
		t.Errorf("%d records say bench altered their answer, want 1 (the key's)\n%s", n, raw)
	}
	// run.json names what the run scrubbed with: the config's variable,
	// never a value, and not the inherited one.
	info, _ := os.ReadFile(filepath.Join(dir, "runs", "db", "run.json"))
	if !strings.Contains(string(info), `"secret_env": [`) || !strings.Contains(string(info), "BENCH_DB_KEY") || strings.Contains(string(info), "POSTGRES") || strings.Contains(string(info), key) {
		t.Errorf("run.json:\n%s", info)
	}
	// bench report over the run (with the same environment) keeps the
	// answer too: it scrubs with what run.json names.
	if code, _, stderr := benchIn(t, dir, []string{"POSTGRES_PASSWORD=postgres", "BENCH_DB_KEY=" + key}, "report", "runs/db"); code != exitcode.OK {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "runs", "db", "answers.html"))
	if !strings.Contains(string(page), `"postgres"`) {
		t.Error("answers.html lost the answer \"postgres\"")
	}
}

// Issue 31, item 2: a command validator that prints the key on stderr.
// bench run redacted it; bench rescore wrote it verbatim into
// results.jsonl, summary.md, report.html and junit.xml. Now the rescored
// record passes through the run's one scrub (its checks' output
// included), and every file of the new directory is searched.
func TestRescoreScrubsWhatItsChecksPrint(t *testing.T) {
	s := needServer(t)
	key := newKey()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "leaky.sh"), []byte("#!/bin/sh\ncat >/dev/null\necho \"connecting with $BENCH_LEAK_KEY failed\" >&2\nexit 3\n"), 0o755)
	prompts := func(extra string) string {
		return `prompts:
  - id: P0
    name: checked
    prompt: "Say the phrase: alpha"
    validator: {type: command, argv: [./leaky.sh], env: [BENCH_LEAK_KEY` + extra + `]}
`
	}
	os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(prompts("")), 0o644)
	os.WriteFile(filepath.Join(dir, "today.yaml"), []byte(prompts(", HOME")), 0o644)
	os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(fmt.Sprintf(`run:
  warmup: false
providers:
  - type: ollama
    base_url: %s
    api_key_env: BENCH_LEAK_KEY
    models: [scripted]
prompts:
  files: [prompts.yaml]
`, s.URL())), 0o644)
	env := []string{"BENCH_LEAK_KEY=" + key}
	// The check always errs: the group has no verdict, exit 5 (item 1).
	if code, stdout, stderr := benchIn(t, dir, env, "run", "--config", "bench.yaml", "--run-id", "leak", "--quiet"); code != exitcode.Unjudged {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, args := range [][]string{
		{"rescore", "runs/leak", "--out", "runs/leak_rescored"},
		{"rescore", "runs/leak", "--out", "runs/leak_today", "--prompts", "today.yaml"},
	} {
		code, stdout, stderr := benchIn(t, dir, env, args...)
		if code != exitcode.Unjudged {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		out := filepath.Join(dir, args[3])
		where := map[string]string{"stdout": stdout, "stderr": stderr}
		readTree(t, where, "", out)
		for _, f := range []string{"results.jsonl", "summary.md", "report.html", "junit.xml"} {
			if _, ok := where[f]; !ok {
				t.Errorf("%s has no %s", out, f)
			}
		}
		leaks(t, where, key)
		if !strings.Contains(where["results.jsonl"], "connecting with [redacted] failed") {
			t.Errorf("%s: the check error does not quote the scrubbed stderr:\n%s", out, where["results.jsonl"])
		}
	}
}
