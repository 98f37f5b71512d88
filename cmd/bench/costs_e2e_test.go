package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/pricing"
	"bench/internal/record/rundir"
)

// costCLI is a stand-in for the Claude Code CLI whose figures are what its
// model's name says: cost:X reports total_cost_usd X, tokens:N reports N
// input and output tokens and no cost (so the pricing block prices it),
// judge:X answers as a judge (a passing verdict) at cost X. The real CLI
// computes its cost from its own price table and cannot be made to say
// 1e308; the stream-json it prints is the recorded one's shape.
const costCLI = `#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = "--model" ] && model=$2; shift; done
cat >/dev/null
kind=${model%%:*}; v=${model#*:}
text='OK'; cost=',"total_cost_usd":0.001'; tokens=10
case "$kind" in
cost) cost=",\"total_cost_usd\":$v" ;;
tokens) cost=''; tokens=$v ;;
judge) cost=",\"total_cost_usd\":$v"; text='{\"verdict\": \"pass\", \"reason\": \"fine\"}' ;;
esac
echo '{"type":"system","subtype":"init","session_id":"s","claude_code_version":"0"}'
printf '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"%s"}},"parent_tool_use_id":null}\n' "$text"
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"s"%s,"usage":{"input_tokens":%s,"output_tokens":%s}}\n' "$text" "$cost" "$tokens" "$tokens"
`

// Costs and token counts no sum can hold are recorded problems, never a
// NaN or an infinity (issue 31, items 3, 11 and 16), through the real
// binary: a judge that reports 1e308 over 3 samples leaves the judge's
// cost null with why, where the record could not be encoded and the run
// ended io_error; two cells of 1e308 leave the group's total null with
// why, where summary.json and every page were not written; a negative
// cost is no cost; a negative token count is not priced at $0; two
// int64-max counts do not wrap the group's total. Every page is written,
// bench report rebuilds them the same way, and the run exits 0.
func TestCostsNoSumCanHold(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("fake_claude.sh", costCLI, 0o755)
	write("p.yaml", `prompts:
  - id: P1
    prompt: "Say OK"
    validator: {type: exact, value: "OK"}
  - id: J1
    prompt: "Say OK again"
    validator: {type: llm_judge, judge: judge, model: "judge:1e308", rubric: "Says OK?", judge_samples: 3}
`, 0o644)
	write("bench.yaml", `run: {concurrency: 2, timeout: 30s, warmup: false}
pricing:
  - {provider: priced, input: 2, output: 8}
providers:
  - name: cli
    type: claude_code_cli
    command: ./fake_claude.sh
    models: ["cost:1e308", "cost:-5"]
  - name: priced
    type: claude_code_cli
    command: ./fake_claude.sh
    models: ["tokens:9223372036854775807", "tokens:-100"]
  - name: judge
    type: claude_code_cli
    command: ./fake_claude.sh
prompts:
  files: [p.yaml]
`, 0o644)
	code, stdout, stderr := benchIn(t, dir, nil, "run", "--config", "bench.yaml", "--run-id", "costs")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	runDir := filepath.Join(dir, "runs", "costs")
	recs := readRecords(t, filepath.Join(runDir, rundir.ResultsFile))
	if len(recs) != 8 {
		t.Fatalf("%d records, want 8\n%s", len(recs), stderr)
	}
	for _, r := range recs {
		where := r.Provider + "/" + r.Model + "/" + r.PromptID
		switch {
		case r.Model == "cost:1e308" && (r.CostUSD == nil || *r.CostUSD != 1e308):
			t.Errorf("%s: cost %v, want 1e308 (a cell's own figure is finite)", where, r.CostUSD)
		case r.Model == "cost:-5" && (r.CostUSD != nil || r.CostMissing != pricing.BadCost):
			t.Errorf("%s: cost %v, missing %q", where, r.CostUSD, r.CostMissing)
		case r.Model == "tokens:-100" && (r.CostUSD != nil || r.CostMissing != pricing.BadTokens):
			t.Errorf("%s: cost %v, missing %q: a negative count priced", where, r.CostUSD, r.CostMissing)
		}
		if r.PromptID == "J1" {
			j := r.Judge
			if j == nil || j.Verdict != "pass" || len(j.Samples) != 3 || j.CostUSD != nil || j.CostMissing != pricing.CostOverflow {
				t.Errorf("%s: judge %+v", where, j)
			}
		}
	}
	var sum struct {
		Groups []struct {
			Provider         string   `json:"provider"`
			Model            string   `json:"model"`
			CostUSDTotal     *float64 `json:"cost_usd_total"`
			InputTokensTotal *int64   `json:"input_tokens_total"`
			CostProblems     []string `json:"cost_problems"`
			CostMissing      map[string]int
		} `json:"groups"`
		Warnings []string `json:"warnings"`
	}
	b, err := os.ReadFile(filepath.Join(runDir, rundir.SummaryJSON))
	if err != nil || json.Unmarshal(b, &sum) != nil {
		t.Fatalf("summary.json: %v\n%s", err, stderr)
	}
	got := map[string]string{}
	for _, g := range sum.Groups {
		got[g.Model] = strings.Join(g.CostProblems, "; ")
		switch g.Model {
		case "cost:1e308":
			if g.CostUSDTotal != nil || got[g.Model] != "cost_usd_total: "+pricing.CostOverflow {
				t.Errorf("%s: total %v, problems %q", g.Model, g.CostUSDTotal, g.CostProblems)
			}
		case "tokens:9223372036854775807":
			if g.InputTokensTotal != nil || !strings.Contains(got[g.Model], "input_tokens_total: "+pricing.TokensOverflow) {
				t.Errorf("%s: input tokens %v, problems %q", g.Model, g.InputTokensTotal, g.CostProblems)
			}
		}
	}
	if !strings.Contains(strings.Join(sum.Warnings, "\n"), "cli/cost:1e308: cost_usd_total: "+pricing.CostOverflow) {
		t.Errorf("summary warnings: %q", sum.Warnings)
	}
	for _, name := range []string{rundir.SummaryMD, rundir.ReportHTML, rundir.AnswersHTML, rundir.JUnitFile, rundir.TiersFile} {
		if st, err := os.Stat(filepath.Join(runDir, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", name, err)
		}
	}
	before, _ := os.ReadFile(filepath.Join(runDir, rundir.SummaryMD))
	if code, stdout, stderr := benchIn(t, dir, nil, "report", runDir); code != 0 {
		t.Errorf("bench report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	after, _ := os.ReadFile(filepath.Join(runDir, rundir.SummaryMD))
	if strings.Contains(string(after), "NaN") || strings.Contains(string(after), "Inf") || len(after) == 0 || len(before) == 0 {
		t.Errorf("summary.md:\n%s", after)
	}
}
