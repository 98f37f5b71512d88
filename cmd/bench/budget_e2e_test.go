package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"bench/cmd/fakellm/loadserver"
	"bench/internal/exitcode"
	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

// The Done-when for the budget, with the real binary against the
// fake model server (which reports its usage: the prompt's words in, the
// max_tokens asked for out): 40 cells at $1/M input and $10/M output
// tokens, each costing 176 µ$ (16 in, 16 out), under a budget of 20.5
// cells. The run is projected past its budget, so it does not start (exit
// 2, nothing written), and --dry-run says what it would cost and why;
// with --allow-over-budget it starts, stops within one cell's cost under
// the budget (never past it), records the cells it did not start as
// skipped_unavailable/budget_exhausted, ends budget_exhausted (exit 6) and
// says the command that finishes it; --resume without a larger budget is
// refused, and with the --max-cost it named, it finishes every cell.
func TestBudgetRun(t *testing.T) {
	fake := loadserver.New(loadserver.Service{TTFT: time.Millisecond, Gap: time.Millisecond, Tokens: 16}, nil)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	const cell = (16*1 + 16*10) / 1e6
	budget := 20.5 * cell
	cfg := fmt.Sprintf(`run: {warmup: false, concurrency: 4, repetitions: 40, max_cost_usd: %v}
prompts:
  synthetic: {input_tokens: [16], output_tokens: 16}
providers:
  - name: api
    type: ollama_openai
    base_url: %s/v1
    models: [fake]
pricing:
  - {model: fake, input: 1, output: 10}
`, budget, srv.URL)
	code, stdout, stderr, _, dir := runBench(t, cfg)
	if code != exitcode.Usage || !strings.Contains(stderr, "more than run.max_cost_usd") || len(fake.Log()) != 0 {
		t.Fatalf("over its projected budget: exit %d, %d requests\n%s\n%s", code, len(fake.Log()), stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs", "e2e")); err == nil {
		t.Error("a refused run left a run directory")
	}
	conf := filepath.Join(dir, "bench.yaml")
	code, stdout, stderr = benchExec(t, "run", "--config", conf, "--run-id", "e2e", "--dry-run")
	if code != exitcode.Usage || !regexp.MustCompile(`projected cost: api \$0\.00\d+; in all \$0\.00\d+ \(budget \$0\.003608\)`).MatchString(stdout) ||
		!strings.Contains(stdout, "assumed: input = the prompt's bytes / 4") {
		t.Errorf("--dry-run: exit %d\n%s\n%s", code, stdout, stderr)
	}

	code, stdout, stderr = benchExec(t, "run", "--config", conf, "--run-id", "e2e", "--allow-over-budget")
	run := filepath.Join(dir, "runs", "e2e")
	recs := readRecords(t, filepath.Join(run, rundir.ResultsFile))
	if code != exitcode.Budget {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitcode.Budget, stdout, stderr)
	}
	spent, ran, notRun := 0.0, 0, 0
	for _, r := range recs {
		switch {
		case r.AvailabilityStatus == results.StatusOK && r.CostUSD != nil:
			ran++
			spent += *r.CostUSD
		case r.AvailabilityStatus == results.StatusSkippedUnavailable && r.FailureType != nil && *r.FailureType == "budget_exhausted":
			notRun++
		default:
			t.Errorf("record %s %v cost %v", r.AvailabilityStatus, r.FailureType, r.CostUSD)
		}
	}
	t.Logf("%d cells ran for $%.6f of $%.6f, %d not run", ran, spent, budget, notRun)
	if ran+notRun != 40 || notRun == 0 || len(fake.Log()) != ran {
		t.Errorf("%d ran, %d not run, %d requests", ran, notRun, len(fake.Log()))
	}
	if spent > budget+1e-12 || budget-spent >= cell {
		t.Errorf("spent $%.6f of $%.6f: want within one cell's cost ($%.6f) under it", spent, budget, cell)
	}
	info, err := rundir.ReadRunInfo(run)
	if err != nil || info.EndReason != "budget_exhausted" {
		t.Errorf("run.json %+v %v", info, err)
	}
	m := regexp.MustCompile(`to run them: \S+ run .*--resume --max-cost ([0-9.]+)`).FindStringSubmatch(stderr)
	if m == nil || !strings.Contains(stderr, fmt.Sprintf("%d not run (skipped_unavailable/budget_exhausted)", notRun)) {
		t.Fatalf("no resume hint:\n%s", stderr)
	}
	md, _ := os.ReadFile(filepath.Join(run, "summary.md"))
	if !strings.Contains(string(md), fmt.Sprintf("| api/fake | %d cells | – | skipped_unavailable | budget_exhausted | not run: run.max_cost_usd is $0.003608", notRun)) {
		t.Errorf("summary.md does not say why cells did not run:\n%s", md)
	}

	code, _, stderr = benchExec(t, "run", "--config", conf, "--run-id", "e2e", "--resume")
	if code != exitcode.Usage || !strings.Contains(stderr, "--resume: the run is projected to cost") {
		t.Errorf("--resume under the spent budget: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr = benchExec(t, "run", "--config", conf, "--run-id", "e2e", "--resume", "--max-cost", m[1])
	if code != exitcode.OK {
		t.Fatalf("--resume --max-cost %s: exit %d\n%s\n%s", m[1], code, stdout, stderr)
	}
	last := map[results.Key]results.Record{}
	for _, r := range readRecords(t, filepath.Join(run, rundir.ResultsFile)) {
		last[r.Key()] = r
	}
	total := 0.0
	for _, r := range last {
		if r.AvailabilityStatus != results.StatusOK || r.CostUSD == nil {
			t.Errorf("after --resume: %s %v", r.AvailabilityStatus, r.FailureType)
			continue
		}
		total += *r.CostUSD
	}
	if len(last) != 40 || len(fake.Log()) != 40 {
		t.Errorf("%d cells, %d requests after --resume: want 40 and 40", len(last), len(fake.Log()))
	}
	if !strings.Contains(stdout, "resuming e2e: "+fmt.Sprint(ran)+" of 40 cells already recorded") {
		t.Errorf("stdout:\n%s", stdout)
	}
	t.Logf("finished for $%.6f", total)
}

// The budget's bad input through the binary: a budget of 0 or less, in
// bench.yaml or by --max-cost, and a model without a price under a
// budget are config errors naming the file, line and key (or the flag),
// exit 2, nothing sent and no run directory.
func TestBudgetBadInput(t *testing.T) {
	fake := loadserver.New(loadserver.Service{TTFT: time.Millisecond, Gap: time.Millisecond, Tokens: 4}, nil)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	cfg := func(run, pricing string) string {
		return fmt.Sprintf(`run: {warmup: false%s}
prompts:
  synthetic: {input_tokens: [16], output_tokens: 4}
providers:
  - name: api
    type: ollama_openai
    base_url: %s/v1
    models: [priced, unpriced]
%s`, run, srv.URL, pricing)
	}
	both := "pricing:\n  - {model: priced, input: 1, output: 10}\n  - {model: unpriced, input: 1, output: 10}\n"
	for _, c := range []struct {
		name, config string
		args         []string
		want         string
	}{
		{"zero", cfg(", max_cost_usd: 0", both), nil, "bench.yaml:1: run.max_cost_usd: 0: must be more than 0 USD"},
		{"negative", cfg(", max_cost_usd: -2", both), nil, "bench.yaml:1: run.max_cost_usd: -2: must be more than 0 USD"},
		{"flag zero", cfg("", both), []string{"--max-cost", "0"}, "--max-cost 0: run.max_cost_usd: 0: must be more than 0 USD"},
		{"flag negative", cfg("", both), []string{"--max-cost=-1"}, "--max-cost -1: run.max_cost_usd: -1: must be more than 0 USD"},
		{"a model without a price", cfg(", max_cost_usd: 1", "pricing:\n  - {model: priced, input: 1, output: 10}\n"), nil,
			`bench.yaml:8: providers[0].models[1]: "unpriced" of "api" has no price in the pricing block, and run.max_cost_usd cannot count it`},
		{"a model without a price, by the flag", cfg("", "pricing:\n  - {model: priced, input: 1, output: 10}\n"), []string{"--max-cost", "1"},
			`bench.yaml:8: providers[0].models[1]: "unpriced" of "api" has no price`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr, recs, dir := runBench(t, c.config, c.args...)
			if code != exitcode.Usage || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, want %d and %q\n%s\n%s", code, exitcode.Usage, c.want, stdout, stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "runs", "e2e")); err == nil || len(recs) != 0 {
				t.Error("a refused run left a run directory")
			}
		})
	}
	if n := len(fake.Log()); n != 0 {
		t.Errorf("%d requests sent by refused runs", n)
	}
}
