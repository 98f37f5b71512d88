package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/exitcode"
	"bench/internal/record/rundir"
	"bench/report/compare"
)

// bench compare in-process on the checked-in runs testdata/compare/base and
// testdata/compare/new (one of every verdict), against golden files.
func TestCompareCLIGolden(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	base, cur := filepath.Join("testdata", "compare", "base"), filepath.Join("testdata", "compare", "new")
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"compare-help", []string{"compare", "-h"}, exitcode.OK},
		{"compare", []string{"compare", "--out", out, base, cur}, exitcode.Regression},
		{"compare-flags-after", []string{"compare", base, cur, "--out", out, "--fail-on", "latency", "--latency-threshold", "20%", "--latency-floor", "20ms", "--alpha", "0.01"}, exitcode.OK},
		{"compare-allow-unavailable", []string{"compare", "--out", out, "--fail-on", "availability,drift", "--allow-unavailable", base, cur}, exitcode.Regression},
		{"compare-same", []string{"compare", "--out", out, base, base}, exitcode.OK},
		{"compare-one-arg", []string{"compare", base}, exitcode.Usage},
		{"compare-bad-flags", []string{"compare", "--fail-on", "speed", "--latency-threshold", "fast", base, cur}, exitcode.Usage},
		{"compare-not-a-run", []string{"compare", "--out", out, "testdata", cur}, exitcode.IO},
		{"compare-out-is-new", []string{"compare", "--out", cur, base, cur}, exitcode.Usage},
		{"compare-out-another-run", []string{"compare", "--out", "testdata/cli", base, cur}, exitcode.Usage},
		{"run-baseline-not-a-run", []string{"run", "--config", "testdata/cli/bench.yaml", "--dry-run", "--baseline", "testdata"}, exitcode.Usage},
		{"run-baseline-bad-fail-on", []string{"run", "--config", "testdata/cli/bench.yaml", "--dry-run", "--baseline", base, "--fail-on", "quality,speed"}, exitcode.Usage},
		{"run-fail-on-without-baseline", []string{"run", "--config", "testdata/cli/bench.yaml", "--dry-run", "--fail-on", "quality"}, exitcode.Usage},
		{"run-baseline-dry-run", []string{"run", "--config", "testdata/cli/bench.yaml", "--dry-run", "--baseline", base, "--fail-on", "quality", "--models", "qwen3:4b"}, exitcode.OK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, stdout, stderr)
			}
			text := "$ bench " + strings.Join(c.args, " ") + "\n--- stdout\n" + stdout + "--- stderr\n" + stderr
			golden(t, c.name+".txt", strings.ReplaceAll(text, out, "OUT"))
		})
	}
	var res struct {
		Verdict   string `json:"verdict"`
		BaseRunID string `json:"base_run_id"`
		NewRunID  string `json:"new_run_id"`
		Cells     []struct {
			PromptID string            `json:"prompt_id"`
			Verdict  string            `json:"verdict"`
			Changes  []json.RawMessage `json:"changes"`
		} `json:"cells"`
		Groups []struct {
			BasePassRate *float64       `json:"base_pass_rate"`
			PValue       *float64       `json:"p_value"`
			Latency      map[string]any `json:"latency"`
			Significant  *bool          `json:"significant"`
		} `json:"groups"`
	}
	b, err := os.ReadFile(filepath.Join(out, compare.JSONFile))
	if err != nil || json.Unmarshal(b, &res) != nil {
		t.Fatalf("compare.json: %v", err)
	}
	if res.Verdict != "ok" || res.BaseRunID != "base" || res.NewRunID != "base" || len(res.Cells) != 10 || len(res.Groups) != 2 ||
		res.Groups[0].BasePassRate == nil || res.Groups[0].PValue == nil || res.Groups[0].Latency["ttft_ms"] == nil || res.Groups[0].Significant == nil {
		t.Errorf("compare.json of the last compare (base against itself): %s", b)
	}
}

// Without --out the outputs go to NEW_RUN_DIR/compare, and nothing else
// in either run directory changes.
func TestCompareDefaultOut(t *testing.T) {
	dir := t.TempDir()
	for _, run := range []string{"base", "new"} {
		copyDir(t, filepath.Join("testdata", "compare", run), filepath.Join(dir, run))
	}
	before := listFiles(t, dir)
	code, stdout, stderr := runCLI("compare", filepath.Join(dir, "base"), filepath.Join(dir, "new"))
	if code != exitcode.Regression {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	after := listFiles(t, dir)
	// What a compare killed (-9) mid-write leaves, the next one removes.
	left := filepath.Join(dir, "new", rundir.CompareDir, ".junit.xml.4242.tmp")
	os.WriteFile(left, []byte("<testsuites"), 0o644)
	if code, stdout, stderr := runCLI("compare", filepath.Join(dir, "base"), filepath.Join(dir, "new")); code != exitcode.Regression {
		t.Fatalf("second compare: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the second compare left %s (%v)", left, err)
	}
	var added []string
	for f := range after {
		if _, ok := before[f]; !ok {
			added = append(added, f)
		} else if before[f] != after[f] {
			t.Errorf("%s changed", f)
		}
	}
	want := []string{"new/compare/.lock", "new/compare/compare.html", "new/compare/compare.json", "new/compare/compare.md", "new/compare/junit.xml"}
	if strings.Join(sorted(added), ",") != strings.Join(want, ",") {
		t.Errorf("files added %v, want %v", added, want)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

func listFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			rel, _ := filepath.Rel(dir, path)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	return out
}

func sorted(ss []string) []string {
	out := append([]string(nil), ss...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
