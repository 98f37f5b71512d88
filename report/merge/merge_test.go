package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/report"
	"bench/report/rebuild"
)

// A fake sharded run: suites are models m0..m(suites-1) of provider p, each
// with prompts P0..P2; suite k belongs to shard k%n+1 as plan.Shard deals.
// Entry judge has no models (it only judges): no suite, no cell.

const testConfig = `{
  "run": {
    "id": %q,
    "out_dir": %q,
    "concurrency": 2,
    "repetitions": 1,
    "timeout": "1m0s",
    "max_output_bytes": 65536
  },
  "providers": [
    {
      "name": "p",
      "type": "ollama",
      "concurrency": 2,
      "models": ["m0", "m1", "m2", "m3", "m4"],
      "thinking_levels": [null],
      "base_url": "http://127.0.0.1:11434"
    },
    {
      "name": "judge",
      "type": "ollama",
      "concurrency": 1,
      "models": [],
      "thinking_levels": [null],
      "base_url": "http://127.0.0.1:11435"
    }
  ],
  "prompts": {"files": ["prompts.yaml"], "only": null},
  "config_path": %q,
  "prompt_set": [{"id": "P0"}, {"id": "P1"}, {"id": "P2"}]
}
`

type fakeShard struct {
	i, n, suites int
	runID        string
	// edit, when set, changes the shard's files after they are written.
	edit func(dir string)
}

func ptr[T any](v T) *T { return &v }

// record is cell (model, prompt) of the fake run; a few fail, a few are
// judged wrong, so the quality figures have something to add up.
func record(runID string, model, prompt int) *results.Record {
	pass := (model+prompt)%3 != 0
	ok := (model*3+prompt)%7 != 5
	r := &results.Record{RecordType: results.RecordType, RunID: runID, Provider: "p", ProviderType: "ollama",
		Model: fmt.Sprintf("m%d", model), PromptID: fmt.Sprintf("P%d", prompt), PromptName: "prompt", AvailabilityStatus: "ok",
		StartedAtMS: 1_800_000_000_000 + int64(model*100+prompt*10), EndedAtMS: 1_800_000_000_000 + int64(model*100+prompt*10+50),
		E2EMS: int64(40 + model + prompt), TTFTMS: ptr(int64(10 + prompt)), Success: ok, ObjectivePass: ptr(pass),
		ToolCalls: []string{}, ToolCallDetails: []results.ToolCall{}, RawOutput: "OK <b>&</b>"}
	if prompt == 2 {
		r.ExpectedTools, r.ToolUseSuccess = []string{"free"}, ptr(pass && ok)
	}
	if !ok {
		r.AvailabilityStatus, r.Success, r.FailureType, r.ErrorMessage = "error", false, ptr("timeout"), ptr("no answer in time")
		r.ObjectivePass = nil
	}
	return r
}

// write makes the shard's run directory under parent and returns it.
func (f fakeShard) write(t *testing.T, parent string) string {
	t.Helper()
	if f.runID == "" {
		f.runID = fmt.Sprintf("run_shard%dof%d", f.i, f.n)
	}
	dir := filepath.Join(parent, f.runID)
	os.MkdirAll(dir, 0o755)
	w, err := results.Create(rundir.Path(dir, rundir.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	info := &rundir.RunInfo{RunID: f.runID, BenchVersion: "test", EndReason: "finished", ByStatus: map[string]int{},
		StartedAt: time.Date(2027, 1, 1, 0, f.i, 0, 0, time.UTC), EndedAt: time.Date(2027, 1, 1, 1, f.i, 0, 0, time.UTC),
		Shard: &rundir.Shard{Index: f.i, Count: f.n, Suites: []string{}}}
	for k := 0; k < f.suites; k++ {
		if k%f.n != f.i-1 {
			continue
		}
		info.Shard.Suites = append(info.Shard.Suites, fmt.Sprintf("p/m%d", k))
		for q := range 3 {
			r := record(f.runID, k, q)
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
			info.CellsPlanned++
			info.CellsRecorded++
			info.ByStatus[r.AvailabilityStatus]++
			// A per-cell output, as snapshots/ and traces/ hold.
			writeFile(t, filepath.Join(dir, "snapshots", fmt.Sprintf("m%d_P%d.json", k, q)), fmt.Sprintf(`{"cell":"m%d/P%d"}`, k, q))
		}
		rundir.WriteJSON(rundir.Path(dir, rundir.FileBase("p", fmt.Sprintf("m%d", k), nil)+".json"),
			&rundir.SuiteRecord{Provider: "p", ProviderType: "ollama", Model: fmt.Sprintf("m%d", k)})
		writeFile(t, rundir.Path(dir, rundir.FileBase("p", fmt.Sprintf("m%d", k), nil)+"_before.txt"), "before\n")
	}
	w.Close()
	if err := rundir.WriteJSON(rundir.Path(dir, rundir.ConfigFile), json.RawMessage(fmt.Sprintf(testConfig, f.runID, parent, "/machine"+fmt.Sprint(f.i)+"/bench.yaml"))); err != nil {
		t.Fatal(err)
	}
	writeFile(t, rundir.Path(dir, rundir.InventoryFile), fmt.Sprintf(`{"host": "machine%d"}`+"\n", f.i))
	if err := rundir.WriteJSON(rundir.Path(dir, rundir.RunFile), info); err != nil {
		t.Fatal(err)
	}
	// The shard's reports, as its run wrote them (they differ from shard
	// to shard, and are rebuilt by the merge).
	if _, err := rebuild.All(dir, rebuild.Options{}); err != nil {
		t.Fatal(err)
	}
	// Files every shard writes: one the same everywhere, a per-run log, a
	// comparison of the shard with a baseline, and one the layout does not
	// know that differs.
	writeFile(t, filepath.Join(dir, "traces", "schema.txt"), "v1\n")
	writeFile(t, filepath.Join(dir, "traces", "spans.jsonl"), fmt.Sprintf(`{"shard":%d}`, f.i))
	writeFile(t, filepath.Join(dir, rundir.CompareDir, "compare.json"), fmt.Sprintf(`{"shard":%d}`, f.i))
	writeFile(t, filepath.Join(dir, "notes.txt"), fmt.Sprintf("shard %d\n", f.i))
	if f.edit != nil {
		f.edit(dir)
	}
	return dir
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// shards writes all n shards of a run with the given suites.
func shards(t *testing.T, parent string, n, suites int) []string {
	var dirs []string
	for i := 1; i <= n; i++ {
		dirs = append(dirs, fakeShard{i: i, n: n, suites: suites}.write(t, parent))
	}
	return dirs
}

// quality is what must not change between a sharded and an unsharded run:
// per group the counts, rates and tier.
func quality(s *report.Summary) []string {
	var out []string
	for _, g := range s.Groups {
		out = append(out, fmt.Sprintf("%s total=%d ok=%d success=%d error=%d rate=%v pass=%v tier=%s %d/%d",
			g.Label(), g.NTotal, g.NOK, g.NSuccess, g.NError, deref(g.SuccessRateOK), deref(g.ObjectivePassRate),
			g.Tier.Tier, g.Tier.NSucceeded, g.Tier.NCounted))
	}
	return out
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestMerge(t *testing.T) {
	parent := t.TempDir()
	dirs := shards(t, parent, 3, 5)
	var warn bytes.Buffer
	out := filepath.Join(parent, "merges", "merged")
	// Given in any order.
	res, err := Merge(out, []string{dirs[2], dirs[0], dirs[1]}, Options{BenchVersion: "v9", Warn: &warn})
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 15 || res.RunID != "merged" {
		t.Errorf("records %d, run id %q", res.Records, res.RunID)
	}

	// results.jsonl: the shards' lines in shard order, run_id the merge's,
	// all else byte for byte.
	var want strings.Builder
	for _, d := range dirs {
		from := filepath.Base(d)
		want.WriteString(strings.ReplaceAll(readFile(t, rundir.Path(d, rundir.ResultsFile)), `"run_id":"`+from+`"`, `"run_id":"merged"`))
	}
	if got := readFile(t, rundir.Path(out, rundir.ResultsFile)); got != want.String() {
		t.Errorf("results.jsonl:\n%s\nwant\n%s", got, want.String())
	}

	// The reports are rebuilt and match one unsharded run's quality figures.
	var all []results.Record
	for k := range 5 {
		for q := range 3 {
			all = append(all, *record("merged", k, q))
		}
	}
	if got, want := quality(res.Summary), quality(report.Summarize(all)); !slices.Equal(got, want) {
		t.Errorf("quality:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var sum report.Summary
	if err := rundir.ReadJSON(rundir.Path(out, rundir.SummaryJSON), &sum); err != nil || sum.RunID != "merged" || len(sum.Groups) != 5 {
		t.Errorf("summary.json: run %q, %d groups, %v", sum.RunID, len(sum.Groups), err)
	}
	for _, f := range []string{rundir.SummaryMD, rundir.TiersFile} {
		if _, err := os.Stat(rundir.Path(out, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	if sum.Groups[0].ResourcesBefore != nil || sum.Groups[0].ResourcesPeak != nil {
		t.Errorf("resources read from the merged files: %+v", sum.Groups[0])
	}

	// run.json describes the merge.
	ri, err := rundir.ReadRunInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	if ri.RunID != "merged" || ri.BenchVersion != "v9" || ri.EndReason != "finished" || ri.CellsPlanned != 15 || ri.CellsRecorded != 15 ||
		ri.ByStatus["ok"]+ri.ByStatus["error"] != 15 || ri.Shard != nil || ri.Merge == nil || ri.Merge.Count != 3 || len(ri.Merge.Shards) != 3 ||
		!ri.StartedAt.Equal(time.Date(2027, 1, 1, 0, 1, 0, 0, time.UTC)) || !ri.EndedAt.Equal(time.Date(2027, 1, 1, 1, 3, 0, 0, time.UTC)) {
		t.Errorf("run.json: %+v, merge %+v", ri, ri.Merge)
	}
	for i, s := range ri.Merge.Shards {
		if s.Index != i+1 || s.Dir != dirs[i] || s.Records != 6-3*(i/2) || s.Kept != filepath.Join("shards", fmt.Sprintf("shard-%d-of-3", i+1)) {
			t.Errorf("shard %d: %+v", i+1, s)
		}
	}

	// Per-cell and per-suite files are all there; a file every shard has
	// alike is copied once; a JSONL log is concatenated; one that differs
	// is kept per shard with a warning.
	for k := range 5 {
		base := rundir.FileBase("p", fmt.Sprintf("m%d", k), nil)
		for _, f := range []string{base + ".json", base + "_before.txt", fmt.Sprintf("snapshots/m%d_P1.json", k)} {
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Errorf("not merged: %s", f)
			}
		}
	}
	if got := readFile(t, filepath.Join(out, "traces", "schema.txt")); got != "v1\n" {
		t.Errorf("traces/schema.txt = %q", got)
	}
	if got := readFile(t, filepath.Join(out, "traces", "spans.jsonl")); got != "{\"shard\":1}\n{\"shard\":2}\n{\"shard\":3}\n" {
		t.Errorf("traces/spans.jsonl = %q", got)
	}
	if _, err := os.Stat(filepath.Join(out, "notes.txt")); err == nil {
		t.Error("a file that differs between shards was merged as one shard's")
	}
	if got := readFile(t, filepath.Join(out, "shards", "shard-2-of-3", "notes.txt")); got != "shard 2\n" {
		t.Errorf("kept notes.txt of shard 2 = %q", got)
	}
	// Every report the layout marks is rebuilt over the merged results:
	// none is a shard's, none is kept per shard, none warned about.
	for _, name := range rebuiltNames() {
		if _, err := os.Stat(filepath.Join(out, "shards", "shard-1-of-3", name)); err == nil {
			t.Errorf("%s kept per shard", name)
		}
		if got := readFile(t, rundir.Path(out, name)); got == readFile(t, rundir.Path(dirs[0], name)) {
			t.Errorf("%s is shard 1's", name)
		}
	}
	if got := readFile(t, rundir.Path(out, rundir.JUnitFile)); strings.Count(got, "<testcase ") != 15 {
		t.Errorf("junit.xml has %d testcases, want the 15 merged cells", strings.Count(got, "<testcase "))
	}
	// A shard's comparison judged the shard, not the merged run.
	if _, err := os.Stat(filepath.Join(out, rundir.CompareDir)); err == nil {
		t.Error("a shard's compare/ was carried over")
	}
	if warn.String() != "warning: notes.txt differs between shards; kept each shard's copy: shards/shard-1-of-3/notes.txt, shards/shard-2-of-3/notes.txt, shards/shard-3-of-3/notes.txt\n" {
		t.Errorf("warnings:\n%s", warn.String())
	}

	// config.json is the shards' config as the merged run's (order kept);
	// inventory.json the first shard's; each shard's own are kept.
	cfg := readFile(t, rundir.Path(out, rundir.ConfigFile))
	wantCfg := strings.Replace(readFile(t, rundir.Path(dirs[0], rundir.ConfigFile)), `"id": "run_shard1of3"`, `"id": "merged"`, 1)
	wantCfg = strings.Replace(wantCfg, `"out_dir": "`+parent+`"`, `"out_dir": "`+filepath.Join(parent, "merges")+`"`, 1)
	if cfg != wantCfg {
		t.Errorf("config.json:\n%s\nwant\n%s", cfg, wantCfg)
	}
	if got := readFile(t, rundir.Path(out, rundir.InventoryFile)); got != "{\"host\": \"machine1\"}\n" {
		t.Errorf("inventory.json = %q", got)
	}
	for i, d := range dirs {
		kept := filepath.Join(out, "shards", fmt.Sprintf("shard-%d-of-3", i+1))
		for _, f := range []string{rundir.RunFile, rundir.ConfigFile, rundir.InventoryFile} {
			if got, want := readFile(t, filepath.Join(kept, f)), readFile(t, rundir.Path(d, f)); got != want {
				t.Errorf("kept %s of shard %d differs", f, i+1)
			}
		}
	}
	// The shards' own reports and locks are not copied over the merge's.
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if isTemp(e.Name()) {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// A run that was not sharded is shard 1/1: merging it alone copies it.
func TestMergeUnshardedRun(t *testing.T) {
	parent := t.TempDir()
	dir := fakeShard{i: 1, n: 1, suites: 5, edit: func(dir string) {
		ri, _ := rundir.ReadRunInfo(dir)
		ri.Shard = nil
		rundir.WriteJSON(rundir.Path(dir, rundir.RunFile), ri)
	}}.write(t, parent)
	res, err := Merge(filepath.Join(parent, "copy"), []string{dir}, Options{})
	if err != nil || res.Records != 15 || res.Info.Merge.Count != 1 {
		t.Fatalf("%+v, %v", res, err)
	}
}

func TestMergeAllowPartial(t *testing.T) {
	parent := t.TempDir()
	dirs := shards(t, parent, 4, 6)
	res, err := Merge(filepath.Join(parent, "partial"), []string{dirs[0], dirs[2]}, Options{AllowPartial: true})
	if err != nil {
		t.Fatal(err)
	}
	ri := res.Info
	if !slices.Equal(ri.Merge.Missing, []int{2, 4}) || ri.EndReason != "interrupted" || res.Records != 9 || len(ri.Merge.Shards) != 2 {
		t.Errorf("partial merge: missing %v, end %s, %d records", ri.Merge.Missing, ri.EndReason, res.Records)
	}
}

// A shard its budget stopped (run.json budget_exhausted, its unstarted
// cells recorded) makes the merged run end budget_exhausted, not an I/O
// error; an interrupted shard beside it outranks it.
func TestMergeBudgetStoppedShard(t *testing.T) {
	end := func(reason string) func(string) {
		return func(dir string) {
			ri, _ := rundir.ReadRunInfo(dir)
			ri.EndReason = reason
			rundir.WriteJSON(rundir.Path(dir, rundir.RunFile), ri)
		}
	}
	for _, c := range []struct {
		ends []string
		want string
	}{
		{[]string{"finished", "budget_exhausted"}, "budget_exhausted"},
		{[]string{"interrupted", "budget_exhausted"}, "interrupted"},
	} {
		parent := t.TempDir()
		var dirs []string
		for i, e := range c.ends {
			dirs = append(dirs, fakeShard{i: i + 1, n: 2, suites: 4, edit: end(e)}.write(t, parent))
		}
		res, err := Merge(filepath.Join(parent, "merged"), dirs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Info.EndReason != c.want {
			t.Errorf("shards ending %v: merged end %s, want %s", c.ends, res.Info.EndReason, c.want)
		}
	}
}

// Every refusal: a clear error naming the directories, the kind the CLI
// maps to exit 2, and no merged directory left behind.
func TestMergeRefusals(t *testing.T) {
	editConfig := func(old, new string) func(string) {
		return func(dir string) {
			p := rundir.Path(dir, rundir.ConfigFile)
			os.WriteFile(p, []byte(strings.Replace(readFile(t, p), old, new, 1)), 0o644)
		}
	}
	tests := []struct {
		name string
		// make writes the inputs into parent and returns the shard dirs.
		make    func(t *testing.T, parent string) []string
		out     string // default "merged"
		kind    Kind
		wantMsg []string // substrings; SHARDn stands for the nth dir
	}{
		{"different configs", func(t *testing.T, p string) []string {
			return []string{fakeShard{i: 1, n: 2, suites: 4}.write(t, p),
				fakeShard{i: 2, n: 2, suites: 4, edit: editConfig(`"concurrency": 2,`+"\n    \"repetitions\"", `"concurrency": 8,`+"\n    \"repetitions\"")}.write(t, p)}
		}, "", ConfigMismatch, []string{"SHARD1 (shard 1/2) and SHARD2 (shard 2/2) ran different configs", "run.concurrency: 2 in the first, 8 in the second"}},
		{"a different prompt set", func(t *testing.T, p string) []string {
			return []string{fakeShard{i: 1, n: 2, suites: 4}.write(t, p),
				fakeShard{i: 2, n: 2, suites: 4, edit: editConfig(`"id": "P2"`, `"id": "P3"`)}.write(t, p)}
		}, "", ConfigMismatch, []string{"prompt_set[2].id"}},
		{"overlapping cells", func(t *testing.T, p string) []string {
			return []string{fakeShard{i: 1, n: 2, suites: 4}.write(t, p),
				fakeShard{i: 2, n: 2, suites: 4, edit: func(dir string) {
					w, _ := results.Create(rundir.Path(dir, rundir.ResultsFile))
					w.Write(record("x", 0, 1)) // suite m0 is shard 1's
					w.Close()
				}}.write(t, p)}
		}, "", Overlap, []string{"1 cells are recorded by more than one shard", "p/m0 P1 repetition 0 in SHARD1 and SHARD2"}},
		{"a missing shard", func(t *testing.T, p string) []string {
			d := shards(t, p, 4, 4)
			return []string{d[0], d[1], d[3]}
		}, "", Missing, []string{"shard 3/4 missing", "2/4 SHARD2", "--allow-partial"}},
		{"different splits", func(t *testing.T, p string) []string {
			return []string{fakeShard{i: 1, n: 2, suites: 4}.write(t, p), fakeShard{i: 2, n: 3, suites: 4}.write(t, p)}
		}, "", Split, []string{"SHARD1 (shard 1/2) and SHARD2 (shard 2/3) come from different splits"}},
		{"one shard twice", func(t *testing.T, p string) []string {
			return []string{fakeShard{i: 1, n: 2, suites: 4}.write(t, p), fakeShard{i: 1, n: 2, suites: 4, runID: "again"}.write(t, p)}
		}, "", Split, []string{"SHARD1 and SHARD2 are both shard 1/2"}},
		{"one directory twice", func(t *testing.T, p string) []string {
			d := fakeShard{i: 1, n: 2, suites: 4}.write(t, p)
			return []string{d, d + "/."}
		}, "", Split, []string{"is given twice"}},
		{"a run that has not ended", func(t *testing.T, p string) []string {
			return []string{fakeShard{i: 1, n: 1, suites: 2, edit: func(dir string) { os.Remove(rundir.Path(dir, rundir.RunFile)) }}.write(t, p)}
		}, "", Unusable, []string{"SHARD1 has no run.json", "--resume"}},
		{"not a run directory", func(t *testing.T, p string) []string {
			return []string{fakeShard{i: 1, n: 1, suites: 2, edit: func(dir string) { os.Remove(rundir.Path(dir, rundir.ResultsFile)) }}.write(t, p)}
		}, "", Unusable, []string{"SHARD1: not a run directory: no results.jsonl"}},
		{"no config.json", func(t *testing.T, p string) []string {
			return []string{fakeShard{i: 1, n: 1, suites: 2, edit: func(dir string) { os.Remove(rundir.Path(dir, rundir.ConfigFile)) }}.write(t, p)}
		}, "", Unusable, []string{"SHARD1 has no config.json"}},
		{"a merged run", func(t *testing.T, p string) []string {
			return []string{fakeShard{i: 1, n: 1, suites: 2, edit: func(dir string) {
				ri, _ := rundir.ReadRunInfo(dir)
				ri.Merge = &rundir.Merge{Count: 1}
				rundir.WriteJSON(rundir.Path(dir, rundir.RunFile), ri)
			}}.write(t, p)}
		}, "", Unusable, []string{"SHARD1 is a merged run, not a shard"}},
		{"into a shard", func(t *testing.T, p string) []string { return shards(t, p, 1, 2) },
			"run_shard1of1", OutExists, []string{"is shard 1/1: merge into a new directory"}},
		{"into a shard's subdirectory", func(t *testing.T, p string) []string { return shards(t, p, 1, 2) },
			"run_shard1of1/merged", OutExists, []string{"is inside shard SHARD1"}},
		{"into a run", func(t *testing.T, p string) []string {
			fakeShard{i: 1, n: 1, suites: 2, runID: "other"}.write(t, p)
			return shards(t, p, 1, 2)
		}, "other", OutExists, []string{"other already holds a run"}},
		{"nothing to merge", func(t *testing.T, p string) []string { return nil }, "", Unusable, []string{"no shard directories given"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dirs := tt.make(t, parent)
			out := filepath.Join(parent, "merged")
			if tt.out != "" {
				out = filepath.Join(parent, tt.out)
			}
			_, err := Merge(out, dirs, Options{})
			var me *Error
			if !errors.As(err, &me) || me.Kind != tt.kind || !IsRefusal(err) {
				t.Fatalf("err %v, want a refusal of kind %d", err, tt.kind)
			}
			msg := err.Error()
			for i, d := range dirs {
				msg = strings.ReplaceAll(msg, d, fmt.Sprintf("SHARD%d", i+1))
			}
			for _, w := range tt.wantMsg {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if tt.out == "" {
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("a refused merge left %s behind", out)
				}
			}
		})
	}
}

// Only run.id, run.out_dir and the config's path may differ between shards.
func TestMergeIdentityMayDiffer(t *testing.T) {
	parent := t.TempDir()
	a := fakeShard{i: 1, n: 2, suites: 2, runID: "20270101_000000_shard1of2"}.write(t, filepath.Join(parent, "ci-1"))
	b := fakeShard{i: 2, n: 2, suites: 2, runID: "20270101_000007_shard2of2"}.write(t, filepath.Join(parent, "ci-2"))
	if _, err := Merge(filepath.Join(parent, "merged"), []string{a, b}, Options{}); err != nil {
		t.Fatal(err)
	}
}

// Unusable lines of a shard are left out with a warning naming the file.
func TestMergeSkipsUnusableLines(t *testing.T) {
	parent := t.TempDir()
	d := fakeShard{i: 1, n: 1, suites: 1, edit: func(dir string) {
		f, _ := os.OpenFile(rundir.Path(dir, rundir.ResultsFile), os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString(`{"record_type":"result","run_id":"x","provi`)
		f.Close()
	}}.write(t, parent)
	var warn bytes.Buffer
	res, err := Merge(filepath.Join(parent, "merged"), []string{d}, Options{Warn: &warn})
	if err != nil || res.Records != 3 {
		t.Fatalf("%v, %+v", err, res)
	}
	if !strings.Contains(warn.String(), rundir.Path(d, rundir.ResultsFile)+" line 4: truncated last line skipped") {
		t.Errorf("warnings:\n%s", warn.String())
	}
}

// A hash seen in two shards whose keys differ (a collision) is no overlap.
func TestOverlapsToleratesCollisions(t *testing.T) {
	parent := t.TempDir()
	dirs := shards(t, parent, 2, 2)
	m := &merger{shards: []*shard{{dir: dirs[0]}, {dir: dirs[1]}}}
	seed := maphash.MakeSeed()
	suspect := map[uint64]bool{maphash.Comparable(seed, record("", 0, 0).Key()): true, maphash.Comparable(seed, record("", 1, 0).Key()): true}
	if err := m.overlaps(seed, suspect); err != nil {
		t.Errorf("distinct keys refused: %v", err)
	}
}

func TestRunIDRewrite(t *testing.T) {
	w := &runIDRewriter{to: "new"}
	canonical := `{"record_type":"result","run_id":"old","provider":"p"}`
	if got := string(w.rewrite([]byte(canonical), "old")); got != `{"record_type":"result","run_id":"new","provider":"p"}` {
		t.Errorf("canonical line: %s", got)
	}
	if got := string(w.rewrite([]byte(canonical), "new")); got != canonical {
		t.Errorf("same id changed the line: %s", got)
	}
	// Another member order, spaces, a run_id inside a nested value, <&>.
	other := `{ "provider": "p", "run_id" : "old", "x": {"run_id": "keep"}, "record_type": "result" }`
	w = &runIDRewriter{to: "a<&>b"}
	got := w.rewrite([]byte(other), "old")
	want := `{ "provider": "p", "run_id" : "a<&>b", "x": {"run_id": "keep"}, "record_type": "result" }`
	if string(got) != want {
		t.Errorf("other line:\n%s\nwant\n%s", got, want)
	}
	var v map[string]any
	if err := json.Unmarshal(got, &v); err != nil || !reflect.DeepEqual(v["x"], map[string]any{"run_id": "keep"}) {
		t.Errorf("rewritten line does not parse: %v", err)
	}
}

// rebuiltNames are the files rundir.Layout marks as reports, rebuilt from
// results.jsonl.
func rebuiltNames() []string {
	var names []string
	for _, e := range rundir.Layout {
		if e.Report {
			names = append(names, e.Name)
		}
	}
	return names
}
