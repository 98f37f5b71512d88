package history

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// nightRun is one synthetic nightly run directory's figures.
type nightRun struct {
	id       string
	started  time.Time
	ttft     float64 // the group's median TTFT
	pass     float64
	digest   string
	bench    string
	prompts  []string
	extra    bool // a second group, in some runs only
	noSum    bool // no summary.json
	badSum   bool // summary.json that does not parse
	schema   int  // run.json schema_version (0: none)
	noTiers  bool
	noInvent bool
	// concurrency, when set, writes config.json with run.concurrency and
	// P0's exact check of checks.
	concurrency int
	checks      string
	// rescoredFrom makes the run a bench rescore copy of that run, judged
	// again at rescoredAt.
	rescoredFrom string
	rescoredAt   time.Time
}

// writeNight writes a run directory of the four files history reads
// (and an empty results.jsonl, as a real run has).
func writeNight(t testing.TB, root string, n nightRun) string {
	t.Helper()
	dir := filepath.Join(root, n.id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, v any) {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := map[string]any{"run_id": n.id, "bench_version": n.bench, "started_at": n.started, "ended_at": n.started.Add(time.Hour),
		"end_reason": "finished", "cells_planned": 10, "cells_recorded": 10, "by_status": map[string]int{"ok": 10}}
	if n.schema > 0 {
		run["schema_version"] = n.schema
		run["something_new"] = map[string]any{"a": 1}
	}
	if n.rescoredFrom != "" {
		run["rescored_from"] = map[string]any{"run_id": n.rescoredFrom, "origin_run_id": n.rescoredFrom, "at": n.rescoredAt}
	}
	write("run.json", run)
	if n.concurrency > 0 {
		write("config.json", map[string]any{"run": map[string]any{"id": n.id, "concurrency": n.concurrency, "repetitions": 1, "timeout": "2m0s", "max_output_bytes": 65536},
			"providers": []any{map[string]any{"name": "ollama", "type": "ollama", "concurrency": 2, "models": []string{"m"}}},
			"prompt_set": []any{map[string]any{"id": "P0", "validator": map[string]any{"type": "exact", "value": n.checks}},
				map[string]any{"id": "P1", "validator": map[string]any{"type": "noop"}}}})
	}
	os.WriteFile(filepath.Join(dir, "results.jsonl"), nil, 0o644)
	group := func(model string, ttft float64) map[string]any {
		return map[string]any{"provider": "ollama", "model": model, "thinking_level": nil, "objective_pass_rate": n.pass,
			"latency_ms": map[string]any{"p50": ttft * 3, "p95": ttft * 4}, "ttft_ms": map[string]any{"p50": ttft, "p95": ttft * 1.3},
			"tokens_per_s": map[string]any{"p50": 50, "p95": 60}}
	}
	groups := []any{group("m", n.ttft)}
	if n.extra {
		groups = append(groups, group("other", 900))
	}
	switch {
	case n.badSum:
		os.WriteFile(filepath.Join(dir, "summary.json"), []byte("{\n  \"groups\": [\n    {,\n"), 0o644)
	case !n.noSum:
		write("summary.json", map[string]any{"run_id": n.id, "prompt_ids": n.prompts, "groups": groups})
	}
	if !n.noTiers {
		write("tiers.json", map[string]any{"ranking": []any{map[string]any{"provider": "ollama", "model": "m", "thinking_level": nil,
			"tier": "tier_1", "tool_use_success_rate": 0.9}}})
	}
	if !n.noInvent {
		write("inventory.json", map[string]any{"providers": []any{map[string]any{"name": "ollama", "type": "ollama",
			"server_version": "0.9.6", "server_models": []any{map[string]any{"name": "m:latest", "digest": n.digest}}}}})
	}
	return dir
}

// nights writes n nightly runs: median TTFT 100 ms with relative noise,
// times 1+step from run at on, where the model's digest changes too.
func nights(t testing.TB, root string, seed uint64, n, at int, step, noise float64) {
	r := rand.New(rand.NewPCG(seed, 1))
	t0 := time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)
	for i := range n {
		level, digest := 100.0, "sha256:aaaa"
		if at >= 0 && i >= at {
			level, digest = 100*(1+step), "sha256:bbbb"
		}
		// Directory names that do not sort by date: order comes from run.json.
		writeNight(t, root, nightRun{id: fmt.Sprintf("run-%03d", (i*37)%n), started: t0.Add(time.Duration(i) * 24 * time.Hour),
			ttft: level * (1 + noise*r.NormFloat64()), pass: 0.9, digest: digest, bench: "v1.0.0", prompts: []string{"P0", "P1"}})
	}
}

// The case: 60 nightly runs, a 5 % TTFT step at run 40 (the
// model's digest changed there) and 3 % noise. The change point is found
// within ±2 runs, tied to the run where it starts and to the digest
// change; --fail-on-change latency fails when it is within --since runs
// of the latest, and not otherwise.
func TestHistoryNightlyStep(t *testing.T) {
	root := t.TempDir()
	nights(t, root, 7, 60, 40, 0.05, 0.03)
	dirs, warns, err := FindRuns([]string{root})
	if err != nil || len(dirs) != 60 || len(warns) != 0 {
		t.Fatalf("%d runs, warnings %v, %v", len(dirs), warns, err)
	}
	opt := DefaultOptions()
	opt.FailOnChange, opt.Since = []string{"latency"}, 25
	h, err := Build(dirs, opt, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var cp *ChangePoint
	for _, c := range h.ChangePoints {
		if c.Metric == TTFTP50 {
			cp = c
		}
	}
	if cp == nil {
		t.Fatalf("no TTFT change point; all: %s", mustJSON(h.ChangePoints))
	}
	if math.Abs(float64(cp.Run-40)) > 2 || cp.Direction != Regression || cp.RunsAgo != 59-cp.Run || h.Runs[cp.Run].ID != cp.RunID {
		t.Errorf("change point %+v", cp)
	}
	if cp.Run == 40 && !slices.ContainsFunc(cp.Setup, func(s SetupChange) bool {
		return s.What == "model digest" && s.From == "sha256:aaaa" && s.To == "sha256:bbbb"
	}) {
		t.Errorf("setup %+v: the digest change is not tied to it", cp.Setup)
	}
	if h.Verdict != VerdictChange || !cp.FailsGate {
		t.Errorf("--since 25: verdict %s", h.Verdict)
	}
	for i := 1; i < len(h.Runs); i++ {
		if !h.Runs[i-1].StartedAt.Before(h.Runs[i].StartedAt) {
			t.Fatalf("runs out of order at %d", i)
		}
	}
	opt.Since = 5
	if h, _ := Build(dirs, opt, time.Now()); h.Verdict != VerdictOK {
		t.Errorf("--since 5: verdict %s, failing %s", h.Verdict, mustJSON(h.Failing))
	}
	var text bytes.Buffer
	WriteText(&text, h)
	if !strings.Contains(text.String(), "ollama/m ttft_ms_p50: regression from run") || !strings.Contains(text.String(), "setup: model digest sha256:aaaa → sha256:bbbb") {
		t.Errorf("terminal:\n%s", text.String())
	}
	out := filepath.Join(root, DirName)
	if err := WriteFiles(out, h); err != nil {
		t.Fatal(err)
	}
	var back History
	b, _ := os.ReadFile(filepath.Join(out, JSONFile))
	if err := json.Unmarshal(b, &back); err != nil || len(back.Series) != len(h.Series) || len(back.ChangePoints) != len(h.ChangePoints) {
		t.Errorf("history.json: %v", err)
	}
	// Scanning the directory again skips the history output.
	if dirs2, warns2, _ := FindRuns([]string{root}); len(dirs2) != 60 || len(warns2) != 0 {
		t.Errorf("rescan: %d runs, %v", len(dirs2), warns2)
	}
}

// 60 runs without a step: no change point in any series.
func TestHistoryNoStep(t *testing.T) {
	root := t.TempDir()
	nights(t, root, 7, 60, -1, 0, 0.03)
	dirs, _, _ := FindRuns([]string{root})
	opt := DefaultOptions()
	opt.FailOnChange, opt.Since = []string{"latency", "quality"}, 60
	h, err := Build(dirs, opt, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.ChangePoints) != 0 || h.Verdict != VerdictOK {
		t.Errorf("change points on a flat history: %s", mustJSON(h.ChangePoints))
	}
}

// Bad input: a run without summary.json, one whose summary.json does not
// parse, one without run.json, a run.json of a later schema, a directory
// that is not a run, a run with another group, another prompt suite, no
// tiers or inventory: each is named in a warning, and the others are
// read.
func TestHistoryBadInput(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	base := nightRun{ttft: 100, pass: 1, digest: "sha256:a", bench: "v1.0.0", prompts: []string{"P0", "P1"}}
	day := func(i int) time.Time { return t0.Add(time.Duration(i) * 24 * time.Hour) }
	mk := func(i int, mod func(*nightRun)) {
		n := base
		n.id, n.started = fmt.Sprintf("r%02d", i), day(i)
		if mod != nil {
			mod(&n)
		}
		writeNight(t, root, n)
	}
	for i := range 8 {
		mk(i, nil)
	}
	mk(8, func(n *nightRun) { n.noSum = true })
	mk(9, func(n *nightRun) { n.badSum = true })
	mk(10, func(n *nightRun) { n.schema = 9; n.bench = "v9.0.0" })
	mk(11, func(n *nightRun) { n.extra = true })
	mk(12, func(n *nightRun) { n.prompts = []string{"P0", "P2"} })
	mk(13, func(n *nightRun) { n.noTiers, n.noInvent = true, true })
	os.MkdirAll(filepath.Join(root, "notes"), 0o755)
	killed := filepath.Join(root, "killed")
	os.MkdirAll(killed, 0o755)
	os.WriteFile(filepath.Join(killed, "results.jsonl"), nil, 0o644)

	dirs, warns, err := FindRuns([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	h, err := Build(dirs, DefaultOptions(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(append(warns, h.Warnings...), "\n")
	for _, want := range []string{
		filepath.Join(root, "notes") + ": not a run directory",
		filepath.Join(root, "killed") + ": no run.json (the run was killed, or is still running): skipped",
		filepath.Join(root, "r08") + ": no summary.json (bench report " + filepath.Join(root, "r08") + " writes it): skipped",
		filepath.Join(root, "r09") + ": summary.json line 3: invalid character ',' looking for beginning of object key string: skipped",
		filepath.Join(root, "r10") + ": run.json has schema_version 9, from a later bench than this one (which reads 1): read as far as understood",
		filepath.Join(root, "r12") + ": another prompt suite than r11's (added P2; removed P1)",
		filepath.Join(root, "r13") + ": no tiers.json: its tool-use figures are left out",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in:\n%s", want, all)
		}
	}
	if len(h.Runs) != 12 { // 14 written, r08 and r09 skipped; killed and notes are not runs
		t.Errorf("%d runs read", len(h.Runs))
	}
	other := 0
	for _, s := range h.Series {
		if s.Model == "other" {
			other++
			if len(s.Points) != 1 || s.Points[0].Run != 9 {
				t.Errorf("the group of one run: %+v", s.Points)
			}
		}
	}
	if other == 0 {
		t.Error("the group seen in one run has no series")
	}
	if _, _, err := FindRuns([]string{filepath.Join(root, "absent")}); err == nil {
		t.Error("a missing argument is no error")
	}
	opt := DefaultOptions()
	opt.FailOnChange = []string{"latncy"}
	if _, err := Build(dirs, opt, time.Now()); err == nil || !strings.Contains(err.Error(), `"latncy"`) {
		t.Errorf("bad metric: %v", err)
	}
}

// A change point where bench measured otherwise is the setup's, not a
// regression (issue 31, item 9): a concurrency change under a latency
// step and a change of checks under a pass-rate drop are read from
// config.json, named in the setup, and fail no gate; a rescored copy of
// the last night is that night, once, by its newest judging.
func TestHistorySetupChangesAndRescoredCopies(t *testing.T) {
	root := t.TempDir()
	r := rand.New(rand.NewPCG(3, 1))
	t0 := time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)
	for i := range 60 {
		n := nightRun{id: fmt.Sprintf("run-%03d", i), started: t0.Add(time.Duration(i) * 24 * time.Hour), ttft: 100 * (1 + 0.03*r.NormFloat64()),
			pass: 0.9 + 0.01*r.NormFloat64(), digest: "sha256:aaaa", bench: "v1.0.0", prompts: []string{"P0", "P1"}, concurrency: 4, checks: "OK"}
		if i >= 40 {
			n.concurrency, n.ttft = 8, n.ttft*1.3 // eight streams at once: each slower
		}
		if i >= 45 {
			n.checks, n.pass = "OK.", n.pass-0.4 // a stricter check
		}
		writeNight(t, root, n)
	}
	last := filepath.Join(root, "run-059")
	writeNight(t, root, nightRun{id: "run-059-rejudged", started: t0.Add(59 * 24 * time.Hour), ttft: 130, pass: 0.5, digest: "sha256:aaaa", bench: "v1.0.0",
		prompts: []string{"P0", "P1"}, concurrency: 8, checks: "OK.", rescoredFrom: "run-059", rescoredAt: t0.Add(60 * 24 * time.Hour)})
	dirs, _, err := FindRuns([]string{root})
	if err != nil || len(dirs) != 61 {
		t.Fatalf("%d runs, %v", len(dirs), err)
	}
	opt := DefaultOptions()
	opt.FailOnChange, opt.Since = []string{"latency", "quality"}, 25
	h, err := Build(dirs, opt, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Runs) != 60 || h.Runs[59].Dir != filepath.Join(root, "run-059-rejudged") || h.Runs[59].RescoredFrom != "run-059" {
		t.Errorf("%d runs, the last %+v: want 60, the rescored copy in the night's place", len(h.Runs), h.Runs[len(h.Runs)-1])
	}
	if !slices.ContainsFunc(h.Warnings, func(w string) bool {
		return strings.HasPrefix(w, last+": the same night's cells as "+filepath.Join(root, "run-059-rejudged"))
	}) {
		t.Errorf("no warning of the copy left out: %q", h.Warnings)
	}
	found := map[string]*ChangePoint{}
	for _, c := range h.ChangePoints {
		if c.Metric == TTFTP50 || c.Metric == PassRate {
			found[c.Metric] = c
		}
	}
	ttft, pass := found[TTFTP50], found[PassRate]
	if ttft == nil || pass == nil {
		t.Fatalf("change points: %s", mustJSON(h.ChangePoints))
	}
	if ttft.Run != 40 || ttft.Cause != CauseSetup || ttft.FailsGate || !slices.ContainsFunc(ttft.Setup, func(s SetupChange) bool {
		return s.What == SetupConcurrency && s.From == "run 4, entry 2" && s.To == "run 8, entry 2"
	}) {
		t.Errorf("TTFT change point %s", mustJSON(ttft))
	}
	if pass.Run != 45 || pass.Cause != CauseSetup || pass.FailsGate || !slices.ContainsFunc(pass.Setup, func(s SetupChange) bool {
		return s.What == SetupChecks && strings.HasSuffix(s.To, "(changed: P0)") && s.From != s.To
	}) {
		t.Errorf("pass-rate change point %s", mustJSON(pass))
	}
	if h.Verdict != VerdictOK || len(h.Failing) != 0 {
		t.Errorf("verdict %s, failing %s", h.Verdict, mustJSON(h.Failing))
	}
	var text bytes.Buffer
	WriteText(&text, h)
	if !strings.Contains(text.String(), "setup: concurrency run 4, entry 2 → run 8, entry 2") || !strings.Contains(text.String(), "the setup's: bench measured otherwise from this run") {
		t.Errorf("terminal:\n%s", text.String())
	}
}

// A history of no readable run is an error, not a pass (issue 31, item
// 20): a gate over nothing vouches for nothing.
func TestHistoryOfNothingFails(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"killed", "half"} {
		os.MkdirAll(filepath.Join(root, name), 0o755)
		os.WriteFile(filepath.Join(root, name, "results.jsonl"), nil, 0o644)
	}
	opt := DefaultOptions()
	opt.FailOnChange = []string{"latency"}
	var out bytes.Buffer
	verdict, err := Judge([]string{root}, filepath.Join(t.TempDir(), "h"), opt, &out)
	if err == nil || !strings.Contains(err.Error(), "no run could be read in "+root+": nothing to judge") || verdict != "" {
		t.Errorf("verdict %q, err %v\n%s", verdict, err, out.String())
	}
}

func mustJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// BenchmarkHistory1000 reads 1,000 nightly runs (two groups each) and
// finds their change points: the target is under 20 s on 2
// cores. go test ./report/history -run '^$' -bench History1000 -benchtime 3x
func BenchmarkHistory1000(b *testing.B) {
	root := b.TempDir()
	r := rand.New(rand.NewPCG(1, 1))
	t0 := time.Date(2024, 1, 1, 2, 0, 0, 0, time.UTC)
	for i := range 1000 {
		level := 100.0
		if i >= 700 {
			level = 105
		}
		writeNight(b, root, nightRun{id: fmt.Sprintf("run-%04d", i), started: t0.Add(time.Duration(i) * 24 * time.Hour),
			ttft: level * (1 + 0.03*r.NormFloat64()), pass: 0.9, digest: "sha256:a", bench: "v1", prompts: []string{"P0"}, extra: true})
	}
	b.ResetTimer()
	for range b.N {
		dirs, _, err := FindRuns([]string{root})
		if err != nil {
			b.Fatal(err)
		}
		h, err := Build(dirs, DefaultOptions(), time.Now())
		if err != nil || len(h.Runs) != 1000 {
			b.Fatal(err)
		}
		if err := WriteFiles(filepath.Join(b.TempDir(), "out"), h); err != nil {
			b.Fatal(err)
		}
	}
}

// Three nights, the pass rate falling 100 % -> 72 %: no change point can
// be found in so few runs, and the history says so instead of a green
// "0 change points": its gate is NOT JUDGED (exit 7 in bench history),
// with the runs it has and the runs it needs; six nights are judged.
func TestHistoryTooFewRuns(t *testing.T) {
	root := t.TempDir()
	start := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	for i, pass := range []float64{1, 0.86, 0.72} {
		writeNight(t, root, nightRun{id: fmt.Sprintf("n%d", i), started: start.Add(time.Duration(i) * 24 * time.Hour), ttft: 100, pass: pass,
			digest: "d1", bench: "v1", prompts: []string{"P0"}})
	}
	dirs, _, err := FindRuns([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultOptions()
	opt.FailOnChange = []string{"latency", "quality"}
	h, err := Build(dirs, opt, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if h.Verdict != VerdictNotJudged || h.MinRuns != 6 || h.Longest != 3 {
		t.Errorf("verdict %s, min runs %d, longest %d", h.Verdict, h.MinRuns, h.Longest)
	}
	var out bytes.Buffer
	verdict, err := Judge([]string{root}, filepath.Join(t.TempDir(), "h"), opt, &out)
	if err != nil || verdict != VerdictNotJudged {
		t.Errorf("the gate on 3 runs: %q %v", verdict, err)
	}
	for _, want := range []string{"verdict: NOT JUDGED: too few runs for --fail-on-change latency,quality: a change point needs 6 runs (--min-runs 3 on each side), the longest series has 3",
		"no change point can be found yet: 3 runs, a change point needs 6"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "verdict: ok") {
		t.Errorf("a green ok over 3 runs:\n%s", out.String())
	}
	// Without a gate: no verdict to fail, and the same line.
	out.Reset()
	if verdict, _ := Judge([]string{root}, filepath.Join(t.TempDir(), "h2"), DefaultOptions(), &out); verdict != VerdictOK || !strings.Contains(out.String(), "no change point can be found yet") {
		t.Errorf("no gate: verdict %q\n%s", verdict, out.String())
	}
	// Six nights: judged, ok.
	for i := 3; i < 6; i++ {
		writeNight(t, root, nightRun{id: fmt.Sprintf("n%d", i), started: start.Add(time.Duration(i) * 24 * time.Hour), ttft: 100, pass: 0.72,
			digest: "d1", bench: "v1", prompts: []string{"P0"}})
	}
	dirs, _, _ = FindRuns([]string{root})
	if h, _ := Build(dirs, opt, time.Now()); h.Verdict == VerdictNotJudged || h.Longest != 6 {
		t.Errorf("six runs: verdict %s, longest %d", h.Verdict, h.Longest)
	}
}
