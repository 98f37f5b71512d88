package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/exitcode"
	"bench/internal/testpeer/faultserver"
	"bench/report/compare"
)

// rateLimitedOnce is a provider whose model turns the first two requests
// away with a 429 (max_retries 0: each is a rate_limited cell), then
// answers: the run leaves two cells to resume, and the resume re-runs them.
const rateLimitedOnce = "providers:\n  - type: ollama_openai\n    base_url: %s/v1\n    max_retries: 0\n    models: [\"http429:2\"]\n"

const resumeGateRun = "run:\n  concurrency: 1\n  timeout: 60s\n  warmup: false\n"

// rateLimitedRun runs two cells that are rate-limited, then resumes the
// run, which runs both again and appends their new records. args are added
// to the resume (--baseline). It returns the resume's outcome.
func rateLimitedRun(t *testing.T, id string, args ...string) (runDir string, code int, stdout, stderr string) {
	t.Helper()
	s := faultserver.Start(t)
	dir := benchDir(t, resumeGateRun, fmt.Sprintf(rateLimitedOnce, s.URL()), "T0, T4")
	run := []string{"run", "--config", "bench.yaml", "--run-id", id}
	if code, out, errs := runIn(t, dir, run...); code != exitcode.Unreached {
		t.Fatalf("first run: exit %d\n%s%s", code, out, errs)
	}
	runDir = filepath.Join(dir, "runs", id)
	for _, r := range readRecords(t, filepath.Join(runDir, "results.jsonl")) {
		if class(r) != "rate_limited/http_429" {
			t.Fatalf("first run recorded %s, want rate_limited", class(r))
		}
	}
	code, stdout, stderr = runIn(t, dir, append(append(run, "--resume"), args...)...)
	if n := len(readRecords(t, filepath.Join(runDir, "results.jsonl"))); n != 4 {
		t.Fatalf("the resumed run has %d lines, want 4 (two cells twice)\n%s%s", n, stdout, stderr)
	}
	return runDir, code, stdout, stderr
}

// A resumed run that ran cells again is gated as bench report reads it:
// each cell by its last record, the re-run cells counted in a warning,
// whether it is the new run, the base, or the run that --resume --baseline
// compares at its end (issue 21, item 4).
func TestResumedRunIsGated(t *testing.T) {
	resumed, code, out, errs := rateLimitedRun(t, "r")
	if code != exitcode.OK {
		t.Fatalf("resume: exit %d\n%s%s", code, out, errs)
	}
	// The base: the same two cells, answered the first time.
	s := faultserver.Start(t)
	baseDir := benchDir(t, resumeGateRun, fmt.Sprintf(rateLimitedOnce, s.URL()), "T0, T4")
	if code, out, errs := runIn(t, baseDir, "run", "--config", "bench.yaml", "--run-id", "warm"); code != exitcode.Unreached { // spends the two 429s
		t.Fatalf("warm-up run: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runIn(t, baseDir, "run", "--config", "bench.yaml", "--run-id", "base"); code != exitcode.OK {
		t.Fatalf("base run: exit %d\n%s%s", code, out, errs)
	}
	base := filepath.Join(baseDir, "runs", "base")

	const warning = "2 cells are recorded more than once (2 extra lines, e.g. cells a resumed run ran again); each is compared by its last record"
	for _, pair := range [][2]string{{base, resumed}, {resumed, base}} {
		outDir := filepath.Join(t.TempDir(), "cmp")
		code, stdout, stderr := runIn(t, baseDir, "compare", "--out", outDir, pair[0], pair[1])
		if code != exitcode.OK || !strings.Contains(stdout, warning) || !strings.Contains(stdout, "verdict: ok") {
			t.Errorf("compare %s %s: exit %d\n%s%s", pair[0], pair[1], code, stdout, stderr)
		}
		var res compare.Result
		b, err := os.ReadFile(filepath.Join(outDir, compare.JSONFile))
		if err != nil || json.Unmarshal(b, &res) != nil {
			t.Fatalf("compare.json: %v", err)
		}
		if res.Counts[compare.Match] != 2 || len(res.Cells) != 2 || !strings.Contains(strings.Join(res.Warnings, "\n"), warning) {
			t.Errorf("compare.json: counts %v, %d cells, warnings %q", res.Counts, len(res.Cells), res.Warnings)
		}
	}

	// bench run --resume --baseline: the comparison at the end reads the
	// run it has just resumed.
	_, code, out, errs = rateLimitedRun(t, "r2", "--baseline", base)
	if code != exitcode.OK || !strings.Contains(out+errs, warning) || !strings.Contains(out, "verdict: ok") {
		t.Errorf("--resume --baseline: exit %d\n%s%s", code, out, errs)
	}
}
