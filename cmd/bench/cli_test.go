package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// golden compares got with testdata/golden/name; -update rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/bench -run TestCLI -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (rerun with -update if intended)\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// runCLI calls the program in-process, as main does.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestCLIGolden(t *testing.T) {
	results, err := os.ReadFile("testdata/cli/results.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(t.TempDir(), "golden")
	os.MkdirAll(runDir, 0o755)
	os.WriteFile(filepath.Join(runDir, "results.jsonl"), results, 0o644)

	cases := []struct {
		name string
		args []string
		code int
	}{
		{"help", []string{"help"}, exitOK},
		{"no-args", nil, exitUsage},
		{"unknown-command", []string{"raport"}, exitUsage},
		{"run-help", []string{"run", "-h"}, exitOK},
		{"dry-run", []string{"run", "--config", "testdata/cli/bench.yaml", "--dry-run"}, exitOK},
		{"dry-run-flags", []string{"run", "--config", "testdata/cli/bench.yaml", "--dry-run", "--models", "qwen3:4b", "--prompts", "P0", "--repetitions", "1"}, exitOK},
		{"bad-config", []string{"run", "--config", "testdata/cli/bad.yaml"}, exitUsage},
		{"bad-flags", []string{"run", "--config", "testdata/cli/bench.yaml", "--concurrency", "0", "--timeout", "-1s", "--dry-run"}, exitUsage},
		{"plan-too-big", []string{"run", "--config", "testdata/cli/bench.yaml", "--dry-run", "--repetitions", "1000000000"}, exitUsage},
		{"report", []string{"report", runDir}, exitOK},
		{"report-not-a-run", []string{"report", "testdata"}, exitUsage},
		{"report-help", []string{"report", "--help"}, exitOK},
		{"report-no-dir", []string{"report"}, exitUsage},
		{"zero-limits", []string{"run", "--config", "testdata/cli/zero.yaml", "--dry-run"}, exitUsage},
		{"flag-typo", []string{"run", "--concurency", "3"}, exitUsage},
		{"flag-bad-value", []string{"run", "--concurrency", "many"}, exitUsage},
		{"flag-no-value", []string{"run", "--config"}, exitUsage},
		{"flag-extra-arg", []string{"run", "bench.yaml"}, exitUsage},
		{"report-flag-typo", []string{"report", "--junt", "x.xml", "RUN"}, exitUsage},
		{"init-help", []string{"init", "-h"}, exitOK},
		{"no-config-flag", []string{"run", "--config", "testdata/cli/missing.yaml"}, exitUsage},
		{"command-typo", []string{"reprot"}, exitUsage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, c.code, stderr)
			}
			out := "$ bench " + strings.Join(c.args, " ") + "\n--- stdout\n" + stdout + "--- stderr\n" + stderr
			golden(t, c.name+".txt", strings.ReplaceAll(out, runDir, "RUN_DIR"))
		})
	}
}

// A whole run in-process against an OpenAI-compatible stream, not on a
// terminal: stderr is one line per suite (on the fake clock), stdout the
// plan line, the table, where the reports are and what comes next; with
// --quiet both are empty. --junit copies junit.xml.
func TestRunOutputNotATerminal(t *testing.T) {
	t.Setenv("CI", "")
	withClock(t)
	h := newHoldServer(t, 1<<30)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(promptFile), 0o644)
	cfg := filepath.Join(dir, "bench.yaml")
	os.WriteFile(cfg, []byte("run:\n  concurrency: 1\n  timeout: 60s\nproviders:\n  - type: ollama_openai\n    base_url: "+h.URL+"/v1\n    models: [m]\nprompts:\n  files: [prompts.yaml]\n"), 0o644)
	out := filepath.Join(dir, "runs")
	ci := filepath.Join(dir, "ci-junit.xml")

	code, stdout, stderr := runCLI("run", "--config", cfg, "--out", out, "--run-id", "inproc", "--junit", ci)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	var masked []string
	for _, l := range strings.SplitAfter(stdout, "\n") {
		if strings.HasPrefix(l, "PROVIDER") || strings.HasPrefix(l, "ollama_openai ") {
			l = "(table line)\n"
		}
		masked = append(masked, l)
	}
	got := "$ bench run --config bench.yaml --out RUNS --run-id inproc --junit CI_JUNIT\n--- stdout\n" + strings.Join(masked, "") + "--- stderr\n" + stderr
	got = strings.NewReplacer(out, "RUNS", ci, "CI_JUNIT").Replace(got)
	golden(t, "run-lines.txt", got)

	runDir := filepath.Join(out, "inproc")
	inDir, err1 := os.ReadFile(filepath.Join(runDir, "junit.xml"))
	copied, err2 := os.ReadFile(ci)
	if err1 != nil || err2 != nil || string(inDir) != string(copied) || !strings.Contains(string(copied), `tests="5" failures="3"`) {
		t.Errorf("--junit: %v %v\n%s", err1, err2, copied)
	}
	for _, f := range []string{"report.html", "summary.md"} {
		if _, err := os.Stat(filepath.Join(runDir, f)); err != nil {
			t.Errorf("run directory lacks %s", f)
		}
	}

	code, stdout, stderr = runCLI("run", "--config", cfg, "--out", out, "--run-id", "quiet", "--quiet")
	if code != exitOK || stdout != "" || stderr != "" {
		t.Errorf("--quiet: exit %d, printed:\n%s%s", code, stdout, stderr)
	}
}
