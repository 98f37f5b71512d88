package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"bench/internal/exitcode"
	"bench/internal/record/rundir"
	"bench/internal/testpeer/testmodel"
	"bench/report/compare"
)

// demoPricing prices the demo model: USD per million tokens.
const demoPricing = `pricing:
  - model: demo
    input: 0.5
    output: 1.5
`

// worseDemo is the demo's scripted model made worse in two ways: P1
// answers Sydney, and A1 converts 81 degrees instead of 18 (which the
// scripted tool answers with an error).
func worseDemo(t *testing.T, script testmodel.Script) testmodel.Script {
	t.Helper()
	worse := testmodel.Script{}
	for k, v := range script {
		worse[k] = v
	}
	worse["alone."] = []string{"Sydney"}
	worse[`"clear"}[/RESULT]`] = []string{`<tool_call>{"name": "convert_temperature", "arguments": {"value": 81, "from": "C", "to": "F"}}</tool_call>`}
	worse["F)[/RESULT]"] = []string{"I could not convert it."}
	return worse
}

// TestDemoCostAndCompare runs the demo's suite with a pricing block, then
// again on the demo's model made worse (same name), and compares: every
// cell's cost is its tokens × the prices, summary.json sums them, the
// terminal table, summary.md and report.html show cost; the comparison
// prints one finding per root cause (P1's new answer in both providers'
// cells, A1's divergence at turn 2 in both) with the turn named, and
// compare.html shows the answers side by side and the diverged turn.
func TestDemoCostAndCompare(t *testing.T) {
	s := needServer(t)
	raw, err := os.ReadFile("../../scripts/demo/script.json")
	if err != nil {
		t.Fatal(err)
	}
	var script testmodel.Script
	if err := json.Unmarshal(raw, &script); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := strings.Replace(demoConfig(s.URL(), "demo"), "run:\n", "run:\n  out_dir: runs\n", 1) + demoPricing
	if err := os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(id string) (string, string) {
		code, out, errs := benchExec(t, "run", "--config", filepath.Join(dir, "bench.yaml"), "--run-id", id)
		if code != 0 {
			t.Fatalf("run %s: exit %d\n%s%s", id, code, out, errs)
		}
		return filepath.Join(dir, "runs", id), out
	}
	s.CreateModel(t, "demo", script)
	base, out := run("base")
	checkCost(t, base, out)

	s.CreateModel(t, "demo", worseDemo(t, script))
	cur, _ := run("worse")

	code, out, errs := benchExec(t, "compare", base, cur)
	if code != exitcode.Regression {
		t.Fatalf("compare: exit %d, want %d\n%s%s", code, exitcode.Regression, out, errs)
	}
	t.Logf("bench compare:\n%s", out)
	// Every cell of the prompt, on both providers, in every repetition the
	// demo config runs.
	everyCell := regexp.MustCompile(`in (\d+)/(\d+) cells: both providers`)
	allCells := func(l string) bool {
		m := everyCell.FindStringSubmatch(l)
		return m != nil && m[1] == m[2]
	}
	var p1, a1 []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 4 || f[2] != "cells" {
			continue
		}
		switch f[3] {
		case "P1":
			p1 = append(p1, l)
		case "A1":
			a1 = append(a1, l)
		}
	}
	if len(p1) != 1 || !strings.Contains(p1[0], `P1: output "Canberra" → "Sydney"`) || !allCells(p1[0]) {
		t.Errorf("P1's root cause lines %q\n%s", p1, out)
	}
	if len(a1) != 1 || !strings.Contains(a1[0], "A1: turn 2: convert_temperature value 18 → 81; result error") || !allCells(a1[0]) {
		t.Errorf("A1's root cause lines %q\n%s", a1, out)
	}
	if !strings.Contains(out, "-> ") || !strings.Contains(out, "/cell") {
		t.Errorf("no cost per group in the comparison:\n%s", out)
	}

	cmpDir := filepath.Join(cur, rundir.CompareDir)
	var cj struct {
		RootCauses []compare.RootCause `json:"root_causes"`
		Cells      []struct {
			PromptID string              `json:"prompt_id"`
			Verdict  string              `json:"verdict"`
			Diverged *compare.Divergence `json:"diverged"`
		} `json:"cells"`
		Groups []compare.Group `json:"groups"`
	}
	b, err := os.ReadFile(filepath.Join(cmpDir, compare.JSONFile))
	if err != nil || json.Unmarshal(b, &cj) != nil {
		t.Fatalf("compare.json: %v", err)
	}
	regressions := 0
	for _, c := range cj.Cells {
		if c.Verdict == compare.Regression {
			regressions++
		}
		if c.PromptID == "A1" && (c.Diverged == nil || c.Diverged.Turn != 2) {
			t.Errorf("A1 cell diverged %+v, want turn 2", c.Diverged)
		}
	}
	if regressions < 4 || len(cj.RootCauses) != 2 {
		t.Errorf("%d regressed cells in %d root causes, want 4 cells (P1, A1 × 2 providers) in 2", regressions, len(cj.RootCauses))
	}
	for _, g := range cj.Groups {
		if g.Cost == nil || g.Cost.N == 0 {
			t.Errorf("group %s/%s has no cost comparison", g.Provider, g.Model)
		}
	}
	page, err := os.ReadFile(filepath.Join(cmpDir, compare.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<del>Canberra</del>", "<ins>Sydney</ins>", `class="diverged"`, "turn 2: convert_temperature value 18 → 81; result error"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("compare.html lacks %s", want)
		}
	}
}

// checkCost reads a priced run back: each cell's cost is its tokens × the
// prices, each group's total their sum, and every report shows it.
func checkCost(t *testing.T, dir, stdout string) {
	t.Helper()
	recs := readRecords(t, filepath.Join(dir, rundir.ResultsFile))
	sums := map[string]float64{}
	for _, r := range recs {
		if r.InputTokens == nil || r.OutputTokens == nil {
			if r.CostUSD != nil {
				t.Errorf("%s %s: cost %v without tokens", r.Provider, r.PromptID, *r.CostUSD)
			}
			continue
		}
		want := (float64(*r.InputTokens)*0.5 + float64(*r.OutputTokens)*1.5) / 1e6
		if r.CostUSD == nil || math.Abs(*r.CostUSD-want) > 1e-15 || r.CostSource != "pricing" {
			t.Errorf("%s %s rep %d: cost %v (%s), want %d in × $0.5/M + %d out × $1.5/M = %v", r.Provider, r.PromptID, r.Repetition,
				r.CostUSD, r.CostSource, *r.InputTokens, *r.OutputTokens, want)
			continue
		}
		sums[r.Provider] += *r.CostUSD
	}
	var sum struct {
		Groups []struct {
			Provider     string   `json:"provider"`
			CostUSDTotal *float64 `json:"cost_usd_total"`
			NCostKnown   int      `json:"n_cost_known"`
		} `json:"groups"`
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.SummaryJSON))
	if err != nil || json.Unmarshal(b, &sum) != nil {
		t.Fatalf("summary.json: %v", err)
	}
	for _, g := range sum.Groups {
		if g.CostUSDTotal == nil || math.Abs(*g.CostUSDTotal-sums[g.Provider]) > 1e-9 || g.NCostKnown == 0 {
			t.Errorf("%s: cost_usd_total %v, the cells sum to %v", g.Provider, g.CostUSDTotal, sums[g.Provider])
		}
	}
	for file, want := range map[string]string{rundir.SummaryMD: "## Cost", rundir.ReportHTML: `class="n c-cost"`} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q (%v)", file, want, err)
		}
	}
	if !strings.Contains(stdout, "COST") || !strings.Contains(stdout, "PER PASS") {
		t.Errorf("the end-of-run table shows no cost:\n%s", stdout)
	}
}
