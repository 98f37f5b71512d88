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
