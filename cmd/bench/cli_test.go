package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/exitcode"
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
	// No usable line, and no line at all: bench report has nothing to
	// report and says so, exit 1, the reports left alone (issue 31, item
	// 20).
	garbled, empty := filepath.Join(t.TempDir(), "garbled"), filepath.Join(t.TempDir(), "empty")
	for dir, body := range map[string]string{garbled: "{\"record_type\": \"result\", \"model\": 7}\nnot json\n", empty: ""} {
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte(body), 0o644)
	}

	cases := []struct {
		name string
		args []string
		code int
	}{
		{"help", []string{"help"}, exitcode.OK},
		{"no-args", nil, exitcode.Usage},
		{"unknown-command", []string{"raport"}, exitcode.Usage},
		{"run-help", []string{"run", "-h"}, exitcode.OK},
		{"dry-run", []string{"run", "--config", "testdata/cli/bench.yaml", "--dry-run"}, exitcode.OK},
		{"dry-run-flags", []string{"run", "--config", "testdata/cli/bench.yaml", "--dry-run", "--models", "qwen3:4b", "--prompts", "P0", "--repetitions", "1"}, exitcode.OK},
		{"bad-config", []string{"run", "--config", "testdata/cli/bad.yaml"}, exitcode.Usage},
		{"bad-flags", []string{"run", "--config", "testdata/cli/bench.yaml", "--concurrency", "0", "--timeout", "-1s", "--dry-run"}, exitcode.Usage},
		{"plan-too-big", []string{"run", "--config", "testdata/cli/bench.yaml", "--dry-run", "--repetitions", "1000000000"}, exitcode.Usage},
		{"report", []string{"report", runDir}, exitcode.OK},
		{"report-not-a-run", []string{"report", "testdata"}, exitcode.Usage},
		{"report-no-usable-line", []string{"report", garbled}, exitcode.IO},
		{"report-no-line", []string{"report", empty}, exitcode.IO},
		{"report-help", []string{"report", "--help"}, exitcode.OK},
		{"report-no-dir", []string{"report"}, exitcode.Usage},
		{"zero-limits", []string{"run", "--config", "testdata/cli/zero.yaml", "--dry-run"}, exitcode.Usage},
		{"flag-typo", []string{"run", "--concurency", "3"}, exitcode.Usage},
		{"flag-bad-value", []string{"run", "--concurrency", "many"}, exitcode.Usage},
		{"flag-no-value", []string{"run", "--config"}, exitcode.Usage},
		{"flag-extra-arg", []string{"run", "bench.yaml"}, exitcode.Usage},
		{"report-flag-typo", []string{"report", "--junt", "x.xml", "RUN"}, exitcode.Usage},
		{"init-help", []string{"init", "-h"}, exitcode.OK},
		{"no-config-flag", []string{"run", "--config", "testdata/cli/missing.yaml"}, exitcode.Usage},
		{"command-typo", []string{"reprot"}, exitcode.Usage},
		{"command-swap", []string{"rnu"}, exitcode.Usage},
		{"version-help", []string{"version", "--help"}, exitcode.OK},
		{"version-extra", []string{"version", "--json"}, exitcode.Usage},
		{"run-id-newline", []string{"run", "--config", "testdata/cli/bench.yaml", "--run-id", "nightly\nbench: finished: 0/0 cells"}, exitcode.Usage},
		{"run-id-too-long", []string{"run", "--config", "testdata/cli/bench.yaml", "--run-id", strings.Repeat("r", 300)}, exitcode.Usage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstderr: %s", code, c.code, stderr)
			}
			out := "$ bench " + strings.Join(c.args, " ") + "\n--- stdout\n" + stdout + "--- stderr\n" + stderr
			out = strings.NewReplacer(runDir, "RUN_DIR", garbled, "GARBLED_DIR", empty, "EMPTY_DIR").Replace(out)
			golden(t, c.name+".txt", out)
		})
	}
}
