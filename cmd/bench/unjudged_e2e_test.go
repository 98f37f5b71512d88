package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/rundir"
)

// A night whose judge is down all night (issue 31, item 1): every cell
// reaches its model, the command validator answers, the judge never does.
// bench run exits 5 (no verdict from the group's llm_judge), not 0, so
// the README's loop does not make it the baseline; bench rescore with the
// judge still down exits 5 too; bench compare against such a baseline
// says it is none for quality. A judge model its server lacks is a config
// error found before the sweep: nothing is sent, no run directory is left.
func TestJudgeDownAllNight(t *testing.T) {
	s := judgeModel(t)
	dir := writeJudgeDir(t, judgeConfig(s.URL(), "http://127.0.0.1:1", ""))
	code, stdout, stderr := benchIn(t, dir, nil, "run", "--config", "bench.yaml", "--run-id", "down", "--quiet")
	if code != 5 {
		t.Fatalf("judge down: exit %d, want 5\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"warning: judge entry grader did not answer its probe",
		"no verdict from the external checks of ollama_openai/scripted (its llm_judge on 3 cells: judge_error: ",
		"the night cannot be a baseline",
		"(exit 5)",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	recs := byPrompt(readRecords(t, filepath.Join(dir, "runs", "down", rundir.ResultsFile)))
	if len(recs) != 4 || recs["J1"].ExternalChecks != 1 || recs["J2"].ExternalChecks != 1 || recs["C1"].ExternalChecks != 1 || recs["C1"].ObjectivePass == nil {
		t.Errorf("records: %+v", recs)
	}

	// Rescored with the judge still down: the copy is no baseline either.
	code, stdout, stderr = benchIn(t, dir, nil, "rescore", "runs/down", "--out", "runs/down_again")
	if code != 5 || !strings.Contains(stderr, "bench rescore: no verdict from the external checks of ollama_openai/scripted") {
		t.Errorf("rescore with the judge down: exit %d, want 5\n%s\n%s", code, stdout, stderr)
	}

	// Sharded, each shard decides over its cells and bench merge again
	// over the merged run.
	var shards []string
	for i := 1; i <= 2; i++ {
		out := fmt.Sprintf("shard%d", i)
		code, stdout, stderr := benchIn(t, dir, nil, "run", "--config", "bench.yaml", "--shard", fmt.Sprintf("%d/2", i), "--run-id", "n", "--out", out, "--quiet")
		if code != 0 && code != 5 {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, code, stdout, stderr)
		}
		shards = append(shards, filepath.Join(out, "n"))
	}
	code, stdout, stderr = benchIn(t, dir, nil, append([]string{"merge", "merged"}, shards...)...)
	if code != 5 || !strings.Contains(stderr, "bench merge: no verdict from the external checks of ollama_openai/scripted (its llm_judge on 3 cells") {
		t.Errorf("merge of the judge-down shards: exit %d, want 5\n%s\n%s", code, stdout, stderr)
	}

	// The judge up: the night is green, and compare against the night the
	// judge was down says that one is no baseline.
	if err := os.WriteFile(filepath.Join(dir, "up.yaml"), []byte(judgeConfig(s.URL(), s.URL(), "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := benchIn(t, dir, nil, "run", "--config", "up.yaml", "--run-id", "up", "--quiet"); code != 0 {
		t.Fatalf("judge up: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = benchIn(t, dir, nil, "compare", "runs/down", "runs/up", "--out", "cmp")
	if !strings.Contains(stdout, "warning: the base run down is no baseline for quality: no verdict from the external checks of ollama_openai/scripted") {
		t.Errorf("compare against the unjudged night: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cmp", "compare.json")); err != nil || !strings.Contains(string(b), "is no baseline for quality") {
		t.Errorf("compare.json lacks the warning (%v)", err)
	}
	if code, stdout, stderr := benchIn(t, dir, nil, "compare", "runs/up", "runs/up", "--out", "cmp2"); code != 0 || strings.Contains(stdout, "no baseline") {
		t.Errorf("a judged baseline: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// Gated against the judged night, the judge down again: the gate's
	// comparison is printed (the unjudged cells are availability
	// regressions), and the exit is 5, which outranks its 3.
	code, stdout, stderr = benchIn(t, dir, nil, "run", "--config", "bench.yaml", "--run-id", "down2", "--baseline", "runs/up", "--quiet")
	if code != 5 || !strings.Contains(stdout, "verdict: ") || !strings.Contains(stderr, "(exit 5)") {
		t.Errorf("judge down against a baseline: exit %d, want 5\n%s\n%s", code, stdout, stderr)
	}

	// A judge model the judge's server does not have: found at the probe,
	// at the check's line, before any cell is sent.
	p, err := os.ReadFile(filepath.Join(dir, "prompts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(strings.Replace(string(p), "model: judge, rubric: \"Is the reply polite?", "model: judgee, rubric: \"Is the reply polite?", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = benchIn(t, dir, nil, "run", "--config", "up.yaml", "--run-id", "missing", "--quiet")
	if code != 2 || !strings.Contains(stderr, "prompts.yaml:15: validator.model: \"judgee\" is not on judge entry grader's server") || !strings.Contains(stderr, "nothing was sent") {
		t.Errorf("missing judge model: exit %d, want 2\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs", "missing")); !os.IsNotExist(err) {
		t.Errorf("the refused run left its directory (%v)", err)
	}
	// A directory of that name that held something before keeps it.
	kept := filepath.Join(dir, "runs", "kept")
	if err := os.MkdirAll(kept, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kept, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := benchIn(t, dir, nil, "run", "--config", "up.yaml", "--run-id", "kept", "--quiet"); code != 2 {
		t.Errorf("missing judge model into an existing directory: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if entries, err := os.ReadDir(kept); err != nil || len(entries) != 1 || entries[0].Name() != "notes.txt" {
		t.Errorf("the existing directory holds %v (%v), want its notes.txt alone", entries, err)
	}
}
