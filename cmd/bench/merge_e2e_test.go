package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"bench/internal/exitcode"
	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

func shardConfig(url string) string {
	return fmt.Sprintf(`run:
  concurrency: 4
  repetitions: 2
  timeout: 60s
providers:
  - type: ollama_openai
    base_url: %s/v1
    concurrency: 2
    models: [scripted, scripted2, missing-model]
  - type: ollama
    base_url: %s
    concurrency: 2
    models: [scripted, scripted2, missing-model]
prompts:
  files: [prompts.yaml]
`, url, url)
}

// benchIn runs the bench binary in dir with extra environment variables.
func benchIn(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(benchBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errb.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// onlyRun returns the one run directory under parent.
func onlyRun(t *testing.T, parent string) string {
	t.Helper()
	entries, err := os.ReadDir(parent)
	if err != nil || len(entries) != 1 {
		t.Fatalf("%s: %v, %v", parent, entries, err)
	}
	return filepath.Join(parent, entries[0].Name())
}

// cellView is what a cell's record must say alike in a sharded and an
// unsharded run of a scripted model: everything but timings.
func cellView(r results.Record) string {
	b, _ := json.Marshal([]any{r.AvailabilityStatus, r.Success, r.FailureType, r.ObjectivePass, r.Violation,
		r.RawOutput, r.ToolCalls, r.ToolUseSuccess, r.OutputTokens, r.ParsedOutput})
	return string(b)
}

// quality is summary.json and tiers.json less what timing changes.
type quality struct {
	Groups []struct {
		Provider            string   `json:"provider"`
		Model               string   `json:"model"`
		NTotal              int      `json:"n_total"`
		NOK                 int      `json:"n_ok"`
		NSuccess            int      `json:"n_success"`
		NSkippedUnavailable int      `json:"n_skipped_unavailable"`
		NRateLimited        int      `json:"n_rate_limited"`
		NError              int      `json:"n_error"`
		SuccessRateOK       *float64 `json:"success_rate_ok"`
		ObjectivePassRate   *float64 `json:"objective_pass_rate"`
	} `json:"groups"`
	Ranking     []map[string]any `json:"ranking"`
	Recommended []map[string]any `json:"recommended_for_subagent_routing"`
}

func readQuality(t *testing.T, dir string) quality {
	t.Helper()
	var q quality
	for _, f := range []string{"summary.json", "tiers.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || json.Unmarshal(b, &q) != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	return q
}

// Four shards run in parallel against the real Ollama (three through the
// flag, one through the Indexed Job's environment), merged, give the same
// cells and the same quality figures as one unsharded run.
func TestShardsMergeLikeOneRun(t *testing.T) {
	s := needServer(t)
	if err := s.Create(bgctx(), "scripted2", script); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "prompts.yaml"), []byte(promptFile), 0o644)
	os.WriteFile(filepath.Join(work, "bench.yaml"), []byte(shardConfig(s.URL())), 0o644)

	code, stdout, stderr := benchIn(t, work, nil, "run", "--quiet", "--run-id", "whole", "--out", "single")
	if code != 0 {
		t.Fatalf("unsharded run: exit %d\n%s%s", code, stdout, stderr)
	}
	whole := filepath.Join(work, "single", "whole")

	var wg sync.WaitGroup
	outs := make([]string, 4)
	errs := make([]string, 4)
	for i := 1; i <= 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each shard on its own "machine": its own output directory and
			// a run id from its clock.
			// A shard may hold only a provider's missing model: that
			// provider reaches no model there, which the flag accepts.
			args := []string{"run", "--quiet", "--allow-unavailable", "--out", fmt.Sprintf("machine%d", i)}
			var env []string
			if i == 4 {
				env = []string{"JOB_COMPLETION_INDEX=3", "BENCH_SHARD_COUNT=4"}
			} else {
				args = append(args, "--shard", fmt.Sprintf("%d/4", i))
			}
			code, stdout, stderr := benchIn(t, work, env, args...)
			// A shard dealt only the missing model measured nothing: exit 4.
			if code == exitcode.Unreached && strings.Contains(stderr, "no cell reached a model") {
				code = 0
			}
			if code != 0 {
				errs[i-1] = fmt.Sprintf("shard %d: exit %d\n%s%s", i, code, stdout, stderr)
			}
			outs[i-1] = stdout
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Fatal(e)
		}
	}
	var shardDirs []string
	for i := 1; i <= 4; i++ {
		d := onlyRun(t, filepath.Join(work, fmt.Sprintf("machine%d", i)))
		if !strings.HasSuffix(d, fmt.Sprintf("_shard%dof4", i)) {
			t.Errorf("shard %d's run directory is %s", i, d)
		}
		var ri struct {
			Shard struct {
				Index, Count int
				Suites       []string
			} `json:"shard"`
			CellsPlanned int `json:"cells_planned"`
		}
		b, _ := os.ReadFile(filepath.Join(d, "run.json"))
		json.Unmarshal(b, &ri)
		// 6 suites dealt round-robin over 4 shards: 2, 2, 1, 1.
		wantSuites := []int{2, 2, 1, 1}[i-1]
		if ri.Shard.Index != i || ri.Shard.Count != 4 || len(ri.Shard.Suites) != wantSuites || ri.CellsPlanned != wantSuites*10 {
			t.Errorf("shard %d run.json: %+v planned %d\n%s", i, ri.Shard, ri.CellsPlanned, outs[i-1])
		}
		shardDirs = append(shardDirs, d)
	}

	merged := filepath.Join(work, "merged")
	code, stdout, stderr = benchIn(t, work, nil, append([]string{"merge", merged}, shardDirs...)...)
	if code != 0 || !strings.Contains(stdout, "merged 4 of 4 shards, 60 records") {
		t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
	}

	// The same cells, with the same outcomes.
	one := readRecords(t, filepath.Join(whole, "results.jsonl"))
	four := readRecords(t, filepath.Join(merged, "results.jsonl"))
	view := func(recs []results.Record) []string {
		var out []string
		for _, r := range recs {
			k := r.Key()
			out = append(out, fmt.Sprintf("%s/%s/%s/%d %s", k.Provider, k.Model, k.PromptID, k.Repetition, cellView(r)))
			if r.RunID != filepath.Base(merged) && r.RunID != "whole" {
				t.Errorf("record of run %q in %v", r.RunID, k)
			}
		}
		slices.Sort(out)
		return out
	}
	if a, b := view(one), view(four); len(a) != 60 || !slices.Equal(a, b) {
		t.Errorf("cells differ: unsharded %d, merged %d\n%s\nvs\n%s", len(a), len(b), strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	// The same quality figures: counts, success and pass rates, tiers.
	qa, qb := readQuality(t, whole), readQuality(t, merged)
	ja, _ := json.MarshalIndent(qa, "", " ")
	jb, _ := json.MarshalIndent(qb, "", " ")
	if string(ja) != string(jb) || len(qa.Groups) != 6 || len(qa.Ranking) != 6 {
		t.Errorf("quality differs:\nunsharded %s\nmerged %s", ja, jb)
	}
	// Every suite's resource files came along.
	for _, p := range []string{"ollama_openai", "ollama"} {
		for _, m := range []string{"scripted", "scripted2"} {
			for _, suffix := range []string{".json", "_before.txt", "_after.txt"} {
				if _, err := os.Stat(filepath.Join(merged, rundir.FileBase(p, m, nil)+suffix)); err != nil {
					t.Errorf("merged run lacks %s%s", rundir.FileBase(p, m, nil), suffix)
				}
			}
		}
	}
	// A merge cannot lie (issue 21, item 5): a shard that lost two of its
	// lines is refused with exit 2 naming the shard and the cells, leaving
	// nothing under the output; with --allow-partial it merges as a run that
	// did not finish, and compare with the whole run judges the two cells
	// an availability regression (exit 3) where the full merge passes.
	lost := filepath.Join(work, "lost")
	copyDir(t, shardDirs[0], lost)
	data, _ := os.ReadFile(filepath.Join(lost, "results.jsonl"))
	lines := strings.SplitAfter(string(data), "\n")
	var dropped []results.Record
	for _, l := range lines[:2] {
		var r results.Record
		json.Unmarshal([]byte(l), &r)
		dropped = append(dropped, r)
	}
	os.WriteFile(filepath.Join(lost, "results.jsonl"), []byte(strings.Join(lines[2:], "")), 0o644)
	withLost := append([]string{lost}, shardDirs[1:]...)
	refused := filepath.Join(work, "refused")
	code, stdout, stderr = benchIn(t, work, nil, append([]string{"merge", refused}, withLost...)...)
	if code != exitcode.Usage || !strings.Contains(stderr, lost+" (shard 1/4)") ||
		!strings.Contains(stderr, "2 of its 20 planned cells have no record") ||
		!strings.Contains(stderr, fmt.Sprintf("%s/%s %s repetition %d", dropped[0].Provider, dropped[0].Model, dropped[0].PromptID, dropped[0].Repetition)) {
		t.Errorf("a shard that lost 2 lines: exit %d\n%s%s", code, stdout, stderr)
	}
	if entries, _ := filepath.Glob(filepath.Join(work, "*refused*")); len(entries) > 0 {
		t.Errorf("a refused merge left %v", entries)
	}
	partial := filepath.Join(work, "partial")
	code, stdout, stderr = benchIn(t, work, nil, append([]string{"merge", "--allow-partial", partial}, withLost...)...)
	if code != 0 || !strings.Contains(stdout, "58 records (partial: 1 of 4 shards incomplete)") {
		t.Fatalf("--allow-partial: exit %d\n%s%s", code, stdout, stderr)
	}
	var ri struct {
		EndReason string `json:"end_reason"`
		Merge     struct {
			Problems []string `json:"problems"`
		} `json:"merge"`
	}
	b, _ := os.ReadFile(filepath.Join(partial, "run.json"))
	if json.Unmarshal(b, &ri); ri.EndReason != "interrupted" || len(ri.Merge.Problems) != 1 {
		t.Errorf("partial merge's run.json: %s", b)
	}
	code, stdout, stderr = benchIn(t, work, nil, "compare", "--fail-on", "availability", "--out", filepath.Join(work, "cmp-full"), whole, merged)
	if code != 0 {
		t.Errorf("compare whole with the full merge: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = benchIn(t, work, nil, "compare", "--fail-on", "availability", "--out", filepath.Join(work, "cmp-partial"), whole, partial)
	if code != exitcode.Regression {
		t.Errorf("compare whole with the partial merge: exit %d\n%s%s", code, stdout, stderr)
	}
	regressed := 0
	for _, c := range readCompare(t, filepath.Join(work, "cmp-partial")).Cells {
		if c.Verdict == "regression" && c.Category == "availability" {
			regressed++
		}
		if c.Verdict == "missing" {
			t.Errorf("cell %s %s left missing", c.Provider, c.PromptID)
		}
	}
	if regressed != 2 {
		t.Errorf("compare with the partial merge: %d availability regressions, want the 2 lost cells", regressed)
	}

	// A shard given twice is refused with exit 2.
	code, _, stderr = benchIn(t, work, nil, "merge", filepath.Join(work, "again"), shardDirs[0], shardDirs[1], shardDirs[2], shardDirs[2])
	if code != exitcode.Usage || !strings.Contains(stderr, "given twice") {
		t.Errorf("shard twice: exit %d\n%s", code, stderr)
	}
}

// Exit 4 is decided per shard over its own cells, and again by bench merge
// over the whole run: with one provider's server down, the shard holding
// it exits 4 and the other 0; the merge exits 4 naming that provider
// (--allow-unavailable accepts it), and writes the merged run either way.
// With every server down the merge exits 4 even with the flag.
func TestMergeDecidesUnreachedOverTheRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bench against a delaying server")
	}
	d := newDelayServer(t)
	d.set(time.Millisecond, 0, 0)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(delayPrompts), 0o644)
	config := func(alive, dead string) string {
		return fmt.Sprintf("run:\n  repetitions: 1\n  timeout: 10s\nproviders:\n"+
			"  - {name: alive, type: ollama_openai, base_url: %s/v1, models: [delay], warmup: false}\n"+
			"  - {name: dead, type: ollama_openai, base_url: %s/v1, models: [delay], warmup: false}\n"+
			"prompts:\n  files: [prompts.yaml]\n", alive, dead)
	}
	closed := httptestClosedURL(t)
	night := func(name, cfg string) []string {
		os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(cfg), 0o644)
		var shards []string
		for i, want := range map[string][]int{"half": {0, 4}, "down": {4, 4}}[name] {
			out := fmt.Sprintf("%s-shard%d", name, i+1)
			code, stdout, stderr := benchIn(t, dir, nil, "run", "--config", name+".yaml", "--quiet", "--allow-unavailable",
				"--shard", fmt.Sprintf("%d/2", i+1), "--run-id", "n", "--out", out)
			if code != want {
				t.Fatalf("%s shard %d: exit %d, want %d\n%s%s", name, i+1, code, want, stdout, stderr)
			}
			shards = append(shards, filepath.Join(out, "n"))
		}
		return shards
	}
	half := night("half", config(d.URL, closed))
	code, stdout, stderr := benchIn(t, dir, nil, append([]string{"merge", "half-merged"}, half...)...)
	if code != exitcode.Unreached || !strings.Contains(stderr, "no cell of dead reached a model in any shard") {
		t.Errorf("merge with one provider down: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "half-merged", rundir.SummaryJSON)); err != nil {
		t.Errorf("the merged run was not written: %v", err)
	}
	code, stdout, stderr = benchIn(t, dir, nil, append([]string{"merge", "--allow-unavailable", "half-merged2"}, half...)...)
	if code != exitcode.OK {
		t.Errorf("merge --allow-unavailable with one provider down: exit %d\n%s%s", code, stdout, stderr)
	}
	down := night("down", config(closed, closed))
	code, stdout, stderr = benchIn(t, dir, nil, append([]string{"merge", "--allow-unavailable", "down-merged"}, down...)...)
	if code != exitcode.Unreached || !strings.Contains(stderr, "no cell of the run reached a model") {
		t.Errorf("merge with every server down: exit %d\n%s%s", code, stdout, stderr)
	}
}
