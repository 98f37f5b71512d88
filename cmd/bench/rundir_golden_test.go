package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"bench/internal/exitcode"
	"bench/internal/record/rundir"
	"bench/internal/testpeer/testmodel"
)

// The golden run directory: a real bench run, in-process, against the test
// Ollama serving the demo's scripted model, written down as the list of its
// files and the key fields of each kind (times, ids and machine figures
// masked) and compared with testdata/golden/rundir.json (-update rewrites
// it). A file that goes missing, a field that moves, a warm-up load time
// that no longer reaches resources_*.json: each changes this view.
//
// The same run in four shards, merged with bench merge, must give the same
// view apart from what says it was merged, with no warning.

// goldenConfig sweeps two models on both Ollama APIs (four suites, one for
// each shard) over a text prompt, a native tool prompt and an agentic task.
func goldenConfig(url string) string {
	return fmt.Sprintf(`run:
  concurrency: 2
  timeout: 60s
providers:
  - type: ollama_openai
    base_url: %s/v1
    models: [demo, demo2]
  - type: ollama
    base_url: %s
    models: [demo, demo2]
prompts:
  only: [P0, P9, A1]
`, url, url)
}

func TestGoldenRunDirectory(t *testing.T) {
	s := needServer(t)
	raw, err := os.ReadFile("../../scripts/demo/script.json")
	if err != nil {
		t.Fatal(err)
	}
	var script testmodel.Script
	if err := json.Unmarshal(raw, &script); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"demo", "demo2"} {
		s.CreateModel(t, m, script)
	}
	work := t.TempDir()
	cfg := filepath.Join(work, "bench.yaml")
	os.WriteFile(cfg, []byte(goldenConfig(s.URL())), 0o644)

	one := filepath.Join(work, "one")
	if code, stdout, stderr := runCLI("run", "--config", cfg, "--out", one, "--run-id", "golden", "--quiet"); code != exitcode.OK || stdout != "" || notBusy(stderr) != "" {
		t.Fatalf("bench run: exit %d\n%s%s", code, stdout, stderr)
	}
	whole := viewRunDir(t, filepath.Join(one, "golden"))
	got := marshalView(whole)
	golden(t, "rundir.json", got)

	// Four shards, one after another, each into a directory of its own.
	var shards []string
	for i := 1; i <= 4; i++ {
		out := filepath.Join(work, fmt.Sprintf("shard%d", i))
		code, stdout, stderr := runCLI("run", "--config", cfg, "--out", out, "--run-id", "golden", "--quiet", "--shard", fmt.Sprintf("%d/4", i))
		if code != exitcode.OK || notBusy(stderr) != "" {
			t.Fatalf("shard %d/4: exit %d\n%s%s", i, code, stdout, stderr)
		}
		shards = append(shards, filepath.Join(out, "golden"))
	}
	merged := filepath.Join(work, "merged", "golden")
	code, stdout, stderr := runCLI(append([]string{"merge", merged}, shards...)...)
	if code != exitcode.OK || notBusy(stderr) != "" || !strings.Contains(stdout, "merged 4 of 4 shards, 12 records") {
		t.Fatalf("bench merge: exit %d (a normal merge warns of nothing)\n%s%s", code, stdout, stderr)
	}
	view := viewRunDir(t, merged)
	// What says the run was merged: run.json's merge and no shard of its
	// own, each shard's own files under shards/, one trace file a shard.
	ri := readRunInfo(t, merged)
	if ri.Merge == nil || ri.Merge.Count != 4 || len(ri.Merge.Shards) != 4 || ri.Shard != nil {
		t.Errorf("merged run.json: merge %+v, shard %+v", ri.Merge, ri.Shard)
	}
	files := view["files"].([]string)
	var kept []string
	traces := 0
	files = slices.DeleteFunc(files, func(f string) bool {
		if strings.HasPrefix(f, rundir.TracesDir+"/") {
			traces++
		}
		if strings.HasPrefix(f, rundir.ShardsDir+"/") {
			kept = append(kept, f)
			return true
		}
		return false
	})
	if len(kept) != 12 || traces != 4 {
		t.Errorf("merged: %d files under shards/ (want run.json, config.json, inventory.json of each), %d trace files (want one a shard):\n%s",
			len(kept), traces, strings.Join(kept, "\n"))
	}
	// The four trace files have one masked name.
	view["files"] = slices.Compact(files)
	if mergedJSON := marshalView(view); mergedJSON != got {
		t.Errorf("the merged run's directory differs from the unsharded run's:\n%s", lineDiff(got, mergedJSON))
	}
}

// marshalView is the view as the golden file has it: indented JSON, <, >
// and & as they are.
func marshalView(v map[string]any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(v)
	return b.String()
}

func readRunInfo(t *testing.T, dir string) *rundir.RunInfo {
	t.Helper()
	ri, err := rundir.ReadRunInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ri
}

// viewRunDir is the golden view of a run directory.
func viewRunDir(t *testing.T, dir string) map[string]any {
	t.Helper()
	v := map[string]any{"files": runDirFiles(t, dir)}
	run := readJSONMap(t, rundir.Path(dir, rundir.RunFile))
	v[rundir.RunFile] = pick(run, "run_id", "end_reason", "cells_planned", "cells_recorded", "resumed_cells", "by_status")

	sum := readJSONMap(t, rundir.Path(dir, rundir.SummaryJSON))
	var groups []any
	for _, g := range sum["groups"].([]any) {
		gm := g.(map[string]any)
		view := pick(gm, "provider", "provider_type", "model", "thinking_level", "n_total", "n_ok",
			"n_success", "n_error", "n_skipped_unavailable", "success_rate_ok", "objective_pass_rate", "tool_use_success_rate")
		for _, k := range []string{"resources_before", "resources_after", "resources_peak"} {
			view[k] = present(gm[k])
		}
		groups = append(groups, view)
	}
	v[rundir.SummaryJSON] = map[string]any{"run_id": mask("run_id", sum["run_id"]), "n_records": sum["n_records"], "groups": groups}

	tiers := readJSONMap(t, rundir.Path(dir, rundir.TiersFile))
	var ranking []any
	for _, e := range tiers["ranking"].([]any) {
		ranking = append(ranking, pick(e.(map[string]any), "provider", "model", "tier", "n_counted", "n_succeeded", "routing_ready",
			"n_agentic", "n_agentic_completed"))
	}
	sortBy(ranking, "provider", "model")
	v[rundir.TiersFile] = ranking

	resources, _ := rundir.ResourceRecords(dir)
	rs := map[string]any{}
	for _, p := range resources {
		r := readJSONMap(t, p)
		view := pick(r, "provider", "provider_type", "model", "thinking_level")
		view["before"], view["after"] = present(r["before"]), present(r["after"])
		if peak, ok := r["peak"].(map[string]any); ok {
			n, _ := peak["samples"].(float64)
			view["peak"] = map[string]any{"samples > 0": n > 0}
		}
		// The warm-up: its load time, and whether the server said its own.
		if w, ok := r["warmup"].(map[string]any); ok {
			load, _ := w["load_ms"].(float64)
			view["warmup"] = map[string]any{"load_ms > 0": load > 0, "server_load_ms": present(w["server_load_ms"]), "error": w["error"]}
		}
		rs[filepath.Base(p)] = view
	}
	v["resources_*.json"] = rs

	rec := findLine(t, rundir.Path(dir, rundir.ResultsFile), func(m map[string]any) bool {
		return m["provider"] == "ollama" && m["model"] == "demo" && m["prompt_id"] == "P9"
	})
	v["results.jsonl (ollama/demo/P9)"] = pick(rec, "record_type", "run_id", "provider", "provider_type", "model", "thinking_level",
		"prompt_id", "prompt_name", "repetition", "availability_status", "success", "failure_type", "objective_pass", "violation",
		"raw_output", "tool_calls", "tool_use_success", "expected_tools", "cold_start", "started_at_ms", "ttft_ms", "e2e_ms")

	snaps, _ := filepath.Glob(filepath.Join(dir, rundir.SnapshotsDir, "ollama__demo__none__p9__*.json"))
	if len(snaps) != 1 {
		t.Fatalf("snapshots of ollama/demo/P9: %v", snaps)
	}
	v["snapshots/ (ollama/demo/P9)"] = pick(readJSONMap(t, snaps[0]), "version", "model", "input", "output", "tools", "error", "fingerprint")

	span := findSpan(t, dir, "P9", "ollama", "demo")
	v["traces/ (the cell span of ollama/demo/P9)"] = pick(span, "trace_id", "span_id", "parent_span_id", "kind", "name", "status", "attributes")

	forsyFiles, _ := filepath.Glob(filepath.Join(dir, rundir.ForsyDir, "bench_*_ollama_demo_A1_r0_*.json"))
	if len(forsyFiles) != 1 {
		t.Fatalf("work traces of ollama/demo/A1: %v", forsyFiles)
	}
	tr := readJSONMap(t, forsyFiles[0])
	view := pick(tr, "schema_version", "trace_id", "task", "agent_tools", "termination_reason", "final_output", "summary")
	var steps []string
	for _, st := range tr["steps"].([]any) {
		m := st.(map[string]any)
		steps = append(steps, fmt.Sprintf("%v. turn %v %v %v %v tool=%v success=%v eval=%v", m["step"], m["turn"], m["actor"], m["action"],
			m["operation"], m["tool"], m["success"], m["eval"]))
	}
	view["steps"] = steps
	v["forsy/ (ollama/demo/A1)"] = view

	v[rundir.JUnitFile] = viewJUnit(t, rundir.Path(dir, rundir.JUnitFile))
	return v
}

// runDirFiles lists every file of dir, relative, with what differs from run
// to run masked in the names: a trace file's time and trace id, a
// snapshot's or work trace's hash.
func runDirFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		// A suite's server readings exist when the server answered a
		// reading inside the suite's window, which against the shared
		// test Ollama is not the same from run to run (the native
		// Ollama suites' files come and go); their layout entry is
		// checked here, their content by the watcher's and the metrics'
		// own tests.
		if strings.HasSuffix(rel, rundir.ServerSuffix) {
			if _, ok := rundir.Lookup(rel); !ok {
				t.Errorf("%s: not in rundir.Layout", rel)
			}
			return nil
		}
		files = append(files, maskName(filepath.ToSlash(rel)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	// Every top-level name is one the layout declares, and every file of
	// a folder matches the folder's pattern.
	for _, f := range files {
		top, rest, _ := strings.Cut(f, "/")
		e, ok := rundir.Lookup(top)
		if !ok {
			t.Errorf("%s: not in rundir.Layout", f)
			continue
		}
		if m, _ := path.Match(e.Files, rest); rest != "" && e.Files != "" && !m {
			t.Errorf("%s: not %s/%s, as rundir.Layout says", f, top, e.Files)
		}
	}
	return files
}

var (
	traceName = regexp.MustCompile(`^(traces/)\d{4}-\d\d-\d\dT\d{6}Z_(.+)_[0-9a-f]{32}\.jsonl$`)
	hashName  = regexp.MustCompile(`_[0-9a-f]{8,16}\.json$`)
	shardName = regexp.MustCompile(`^(shards/shard-\d-of-\d/)`)
)

func maskName(rel string) string {
	rel = traceName.ReplaceAllString(rel, "${1}TIME_${2}_TRACEID.jsonl")
	if !shardName.MatchString(rel) {
		rel = hashName.ReplaceAllString(rel, "_HASH.json")
	}
	return rel
}

func readJSONMap(t *testing.T, path string) map[string]any {
	t.Helper()
	var m map[string]any
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// findLine is the first JSON line of an NDJSON file that ok accepts.
func findLine(t *testing.T, path string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && ok(m) {
			return m
		}
	}
	t.Fatalf("%s: no such line", path)
	return nil
}

// findSpan is the cell span of a prompt in the run's trace files.
func findSpan(t *testing.T, dir, prompt, provider, model string) map[string]any {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, rundir.TracesDir, "*.jsonl"))
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) != nil {
				continue
			}
			a, _ := m["attributes"].(map[string]any)
			if m["name"] == "cell "+prompt+" #0" && a["bench.provider"] == provider && a["gen_ai.request.model"] == model {
				return m
			}
		}
	}
	t.Fatalf("no span of cell %s %s/%s in %v", prompt, provider, model, paths)
	return nil
}

// viewJUnit is junit.xml's suites and cases, without times.
func viewJUnit(t *testing.T, path string) any {
	t.Helper()
	var doc struct {
		Tests    string `xml:"tests,attr"`
		Failures string `xml:"failures,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    string `xml:"tests,attr"`
			Failures string `xml:"failures,attr"`
			Cases    []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
				Error   *struct{} `xml:"error"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	b, err := os.ReadFile(path)
	if err == nil {
		err = xml.Unmarshal(b, &doc)
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var suites []any
	for _, s := range doc.Suites {
		var cases []string
		for _, c := range s.Cases {
			state := "passed"
			switch {
			case c.Failure != nil:
				state = "failure"
			case c.Error != nil:
				state = "error"
			case c.Skipped != nil:
				state = "skipped"
			}
			cases = append(cases, c.Name+": "+state)
		}
		sort.Strings(cases)
		suites = append(suites, map[string]any{"name": s.Name, "tests": s.Tests, "failures": s.Failures, "cases": cases})
	}
	sort.Slice(suites, func(i, j int) bool {
		return suites[i].(map[string]any)["name"].(string) < suites[j].(map[string]any)["name"].(string)
	})
	return map[string]any{"tests": doc.Tests, "failures": doc.Failures, "suites": suites}
}

// present is what the view keeps of a member whose content differs from
// run to run: whether it is there.
func present(v any) string {
	if v == nil {
		return "absent"
	}
	return "present"
}

// pick keeps the named members of m, each masked.
func pick(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = mask(k, v)
		}
	}
	return out
}

// volatile are the members that differ between two runs of the same
// plan (times, ids, figures of the machine): their values are masked,
// leaving whether they are there, and null or not.
var volatile = regexp.MustCompile(`(^|_)(at|ms|time|timestamp|duration|id|digest|pid|percent|bytes|load1|load5|load15|samples|processes|mean|hash|version)$|_ms_|^(taken_at|run_id|trace_id|span_id|parent_span_id|disk_path|found_by|name_path|started_at|ended_at|bench)$|tokens_per_s|_per_s$`)

// stable are members matched by volatile that hold no run-to-run value.
var stable = map[string]bool{"prompt_id": true, "version": true, "schema_version": true, "cpu_count": true, "unavailable": true}

func mask(key string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = mask(k, e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mask(key, e)
		}
		return out
	case nil:
		return nil
	}
	if volatile.MatchString(key) && !stable[key] {
		return "<" + key + ">"
	}
	return v
}

func sortBy(list []any, keys ...string) {
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i].(map[string]any), list[j].(map[string]any)
		for _, k := range keys {
			if x, y := fmt.Sprint(a[k]), fmt.Sprint(b[k]); x != y {
				return x < y
			}
		}
		return false
	})
}

// lineDiff shows the lines of b that are not in a, and of a not in b.
func lineDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for _, l := range lb {
		if !slices.Contains(la, l) {
			out = append(out, "+ "+l)
		}
	}
	for _, l := range la {
		if !slices.Contains(lb, l) {
			out = append(out, "- "+l)
		}
	}
	return strings.Join(out, "\n")
}
