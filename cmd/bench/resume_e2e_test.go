package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/cmd/fakellm/loadserver"
	"bench/internal/exitcode"
	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/internal/testpeer/faultserver"
)

// benchDir is a directory with prompts.yaml and a bench.yaml built from
// a providers block, where bench runs are started.
func benchDir(t testing.TB, runBlock, provs, only string) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(promptFile), 0o644)
	cfg := runBlock + provs + "prompts:\n  files: [prompts.yaml]\n"
	if only != "" {
		cfg += "  only: [" + only + "]\n"
	}
	os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(cfg), 0o644)
	return dir
}

// startIn starts bench in dir and returns it with its output buffers.
func startIn(t testing.TB, dir string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(benchBin, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, &out, &errb
}

// waitFor polls cond for up to a minute (a bound for a stuck test, not a
// timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func runInfo(t *testing.T, runDir string) rundir.RunInfo {
	t.Helper()
	var info rundir.RunInfo
	b, err := os.ReadFile(filepath.Join(runDir, "run.json"))
	if err != nil || json.Unmarshal(b, &info) != nil {
		t.Fatalf("run.json: %v %s", err, b)
	}
	return info
}

// onceEach fails on a cell recorded twice or missing; it returns the
// records by cell.
func onceEach(t *testing.T, recs []results.Record, want int) map[results.Key]results.Record {
	t.Helper()
	by := map[results.Key]results.Record{}
	for _, r := range recs {
		if _, dup := by[r.Key()]; dup {
			t.Errorf("cell %+v recorded twice", r.Key())
		}
		by[r.Key()] = r
	}
	if len(by) != want {
		t.Errorf("%d cells recorded, want %d", len(by), want)
	}
	return by
}

const holdProvider = "providers:\n  - type: ollama_openai\n    base_url: %s/v1\n    models: [m]\n"

// A run started with --repetitions 3 and killed is resumed without the
// flag: the plan is the run's own (15 cells), not today's (5); a flag that
// would change it is refused; a dry run says what a resume would run.
func TestResumeKeepsThePlan(t *testing.T) {
	h := newHoldServer(t, 4)
	dir := benchDir(t, "run:\n  concurrency: 2\n  timeout: 60s\n  warmup: false\n", fmt.Sprintf(holdProvider, h.URL), "")
	args := []string{"run", "--config", "bench.yaml", "--run-id", "r"}
	runDir := filepath.Join(dir, "runs", "r")
	cmd, _, _ := startIn(t, dir, append(args, "--repetitions", "3")...)
	h.waitStarted(t, 6)
	waitFor(t, "4 records", func() bool { return len(readRecords(t, filepath.Join(runDir, "results.jsonl"))) == 4 })
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	code, _, stderr := runIn(t, dir, append(args, "--resume", "--repetitions", "2", "--prompts", "T0", "--suite", "bfcl")...)
	if code != exitcode.Usage || !strings.Contains(stderr, "--repetitions 2: the run was started with 3") || !strings.Contains(stderr, "--prompts T0: the run was started with T0,T1,T2,T3,T4") ||
		!strings.Contains(stderr, "--suite bfcl: the run was started with none") {
		t.Errorf("a flag changing the plan: exit %d\n%s", code, stderr)
	}
	code, stdout, _ := runIn(t, dir, append(args, "--resume", "--dry-run")...)
	if code != exitcode.OK || !strings.Contains(stdout, "resuming r would run 11 of its 15 cells") {
		t.Errorf("dry run: exit %d\n%s", code, stdout)
	}

	h.release()
	// The same command line again (--repetitions 3) is no change.
	code, stdout, stderr = runIn(t, dir, append(args, "--resume")...)
	if code != exitcode.OK || !strings.Contains(stdout, "resuming r: 4 of 15 cells already recorded") || !strings.Contains(stdout, "finished: 11/11") {
		t.Fatalf("resume: exit %d\n%s%s", code, stdout, stderr)
	}
	onceEach(t, readRecords(t, filepath.Join(runDir, "results.jsonl")), 15)
	// run.json counts the whole run; the cells of the first run apart.
	if info := runInfo(t, runDir); info.EndReason != "finished" || info.CellsPlanned != 15 || info.Resumed != 4 || info.CellsRecorded != 15 || info.ByStatus["ok"] != 15 {
		t.Errorf("run.json %+v", info)
	}
}

// Cells cancelled by a second Ctrl-C, and cells whose provider turned
// them away (a 429), run again on resume; the new record wins, and the
// reports count each cell once and say so.
func TestResumeRunsCancelledAndUnavailableAgain(t *testing.T) {
	h := newHoldServer(t, 0)
	s := faultserver.Start(t)
	provs := fmt.Sprintf(holdProvider, h.URL) + fmt.Sprintf("  - name: limited\n    type: ollama_openai\n    base_url: %s/v1\n    max_retries: 0\n    models: [\"http429:1\"]\n", s.URL())
	dir := benchDir(t, "run:\n  concurrency: 3\n  timeout: 60s\n  warmup: false\n", provs, "T0, T1")
	args := []string{"run", "--config", "bench.yaml", "--run-id", "r"}
	runDir := filepath.Join(dir, "runs", "r")
	cmd, stdout, _ := startIn(t, dir, args...)
	h.waitStarted(t, 2)
	waitFor(t, "the 429s", func() bool { return len(readRecords(t, filepath.Join(runDir, "results.jsonl"))) >= 2 })
	cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(100 * time.Millisecond) // the two signals are two Ctrl-Cs, not one
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitCode(cmd.Wait()); code != exitcode.Interrupted {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	first := readRecords(t, filepath.Join(runDir, "results.jsonl"))
	classes := map[string]int{}
	for _, r := range first {
		classes[class(r)]++
	}
	// The second cell of limited waited for a slot; it may not have started.
	if classes["error/cancelled"] != 2 || classes["rate_limited/http_429"] < 1 {
		t.Fatalf("first run: %v", classes)
	}

	h.release()
	code, out, stderr := runIn(t, dir, append(args, "--resume")...)
	if code != exitcode.OK || !strings.Contains(stderr, "recorded cells run again") || !strings.Contains(stderr, "recorded more than once") {
		t.Fatalf("resume: exit %d\n%s%s", code, out, stderr)
	}
	all := readRecords(t, filepath.Join(runDir, "results.jsonl"))
	last := map[results.Key]results.Record{}
	for _, r := range all {
		last[r.Key()] = r
	}
	if len(last) != 4 {
		t.Errorf("%d cells, want 4", len(last))
	}
	for k, r := range last {
		if class(r) != "ok/-" {
			t.Errorf("%+v: last record %s", k, class(r))
		}
	}
	var sum struct {
		NDuplicateLines int `json:"n_duplicate_lines"`
		Groups          []struct {
			NTotal   int `json:"n_total"`
			NSuccess int `json:"n_success"`
		} `json:"groups"`
	}
	b, _ := os.ReadFile(filepath.Join(runDir, "summary.json"))
	json.Unmarshal(b, &sum)
	total := 0
	for _, g := range sum.Groups {
		total += g.NTotal
		if g.NSuccess != g.NTotal {
			t.Errorf("group %+v: an old record counted", g)
		}
	}
	if total != 4 || sum.NDuplicateLines != len(all)-4 {
		t.Errorf("summary counts %d cells, %d duplicate lines (%d lines)", total, sum.NDuplicateLines, len(all))
	}
	if info := runInfo(t, runDir); info.EndReason != "finished" || info.CellsPlanned != 4 {
		t.Errorf("run.json %+v", info)
	}
}

// Two bench processes on one run directory: the second is refused with the
// first one's pid, whether it resumes or starts; two started together on
// a new id, one runs and one is refused; no cell is recorded twice.
func TestTwoProcessesRace(t *testing.T) {
	h := newHoldServer(t, 0)
	dir := benchDir(t, "run:\n  concurrency: 2\n  timeout: 60s\n  warmup: false\n", fmt.Sprintf(holdProvider, h.URL), "T0, T1")
	a, _, _ := startIn(t, dir, "run", "--config", "bench.yaml", "--run-id", "r")
	h.waitStarted(t, 2)
	for _, extra := range [][]string{{"--resume"}, nil} {
		code, _, stderr := runIn(t, dir, append([]string{"run", "--config", "bench.yaml", "--run-id", "r"}, extra...)...)
		if code != exitcode.Usage || !strings.Contains(stderr, fmt.Sprintf("in use by another bench process (pid %d)", a.Process.Pid)) {
			t.Errorf("second process %v: exit %d\n%s", extra, code, stderr)
		}
	}
	// Two at once on a new id.
	var cmds []*exec.Cmd
	var errs []*bytes.Buffer
	for range 2 {
		c, _, e := startIn(t, dir, "run", "--config", "bench.yaml", "--run-id", "r2")
		cmds, errs = append(cmds, c), append(errs, e)
	}
	h.release()
	codes := []int{exitCode(cmds[0].Wait()), exitCode(cmds[1].Wait())}
	if exitCode(a.Wait()) != exitcode.OK {
		t.Errorf("first process did not finish cleanly")
	}
	refused := 0
	for i, c := range codes {
		if c == exitcode.Usage && strings.Contains(errs[i].String(), "another bench process") || strings.Contains(errs[i].String(), "already holds a run") {
			refused++
		} else if c != exitcode.OK {
			t.Errorf("process %d: exit %d\n%s", i, c, errs[i])
		}
	}
	if refused != 1 {
		t.Errorf("%d of the two racing processes refused, want 1 (exits %v)", refused, codes)
	}
	onceEach(t, readRecords(t, filepath.Join(dir, "runs", "r", "results.jsonl")), 2)
	onceEach(t, readRecords(t, filepath.Join(dir, "runs", "r2", "results.jsonl")), 2)
}

// slowServer answers every chat request after a random few milliseconds,
// so a sweep takes long enough to be killed in the middle.
func slowServer(t *testing.T) *httptest.Server {
	raw, err := os.ReadFile("testdata/v1_chat_stream_text_usage.http")
	if err != nil {
		t.Fatal(err)
	}
	var body strings.Builder
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(l, "data: ") {
			body.WriteString(l + "\n\n")
		}
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		time.Sleep(time.Duration(10+rand.IntN(50)) * time.Millisecond)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body.String())
	}))
	t.Cleanup(s.Close)
	return s
}

// Killed with SIGKILL at random points, five times, then resumed to the
// end: every cell recorded exactly once, none missing, every line whole.
func TestKillResumeLoop(t *testing.T) {
	s := slowServer(t)
	dir := benchDir(t, "run:\n  concurrency: 4\n  repetitions: 40\n  timeout: 60s\n  warmup: false\n", fmt.Sprintf(holdProvider, s.URL), "")
	runDir := filepath.Join(dir, "runs", "k")
	args := []string{"run", "--config", "bench.yaml", "--run-id", "k", "--quiet"}
	for i := range 5 {
		a := args
		if _, err := os.Stat(filepath.Join(runDir, "config.json")); err == nil {
			a = append(a, "--resume")
		}
		cmd, _, _ := startIn(t, dir, a...)
		// Kill once a random number more cells are recorded, a few
		// milliseconds later: inside a cell, or a write.
		lines := func() int {
			b, _ := os.ReadFile(filepath.Join(runDir, "results.jsonl"))
			return bytes.Count(b, []byte("\n"))
		}
		target := min(lines()+1+rand.IntN(35), 190)
		waitFor(t, "more records", func() bool { return lines() >= target })
		time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		t.Logf("kill %d: %d lines", i+1, len(strings.Split(string(must(os.ReadFile(filepath.Join(runDir, "results.jsonl")))), "\n"))-1)
	}
	code, stdout, stderr := runIn(t, dir, append(args, "--resume")...)
	if code != exitcode.OK {
		t.Fatalf("final resume: exit %d\n%s%s", code, stdout, stderr)
	}
	by := onceEach(t, readRecords(t, filepath.Join(runDir, "results.jsonl")), 200)
	for k, r := range by {
		if class(r) != "ok/-" {
			t.Errorf("%+v: %s", k, class(r))
		}
	}
	if info := runInfo(t, runDir); info.EndReason != "finished" || info.CellsPlanned != 200 || info.CellsRecorded != 200 || info.Resumed == 0 || info.ByStatus["ok"] != 200 {
		t.Errorf("run.json %+v", info)
	}
}

func must(b []byte, _ error) []byte { return b }

// A run of an auto sweep cut off after its sync and throughput stages
// (results.jsonl holds those alone, as after a kill -9 between stages) is
// resumed: the rate stages run, at the levels the measured rates give
// (the ones the whole run had), and nothing is sent twice.
func TestResumeAutoSweepKeepsItsRates(t *testing.T) {
	srv := loadserver.New(loadserver.Service{TTFT: 5 * time.Millisecond, Gap: time.Millisecond, Tokens: 4, Slots: 2}, nil)
	url := serveLoopback(t, srv)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(fmt.Sprintf(`run: {warmup: false, timeout: 30s}
load: {sweep: auto, concurrency: 4, requests: 8, auto_rates: 2, arrival: constant}
prompts:
  synthetic: {input_tokens: [8], output_tokens: 4}
providers:
  - type: ollama_openai
    base_url: %s/v1
    models: [m]
`, url)), 0o644)
	args := []string{"run", "--config", "bench.yaml", "--run-id", "auto", "--quiet"}
	if code, out, errOut := runIn(t, dir, args...); code != exitcode.OK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	path := filepath.Join(dir, "runs", "auto", "results.jsonl")
	whole := readRecords(t, path)
	levels := map[string]float64{}
	for _, r := range whole {
		levels[r.Stage] = *r.StageLevel
	}
	data, _ := os.ReadFile(path)
	var kept []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if strings.Contains(l, `"stage":"sync"`) || strings.Contains(l, `"stage":"throughput"`) {
			kept = append(kept, l)
		}
	}
	if len(kept) != 16 || len(whole) != 32 {
		t.Fatalf("%d records, %d of sync and throughput", len(whole), len(kept))
	}
	os.WriteFile(path, []byte(strings.Join(kept, "")), 0o644)
	if code, out, errOut := runIn(t, dir, append(args, "--resume")...); code != exitcode.OK {
		t.Fatalf("resume: exit %d\n%s%s", code, out, errOut)
	}
	after := readRecords(t, path)
	onceEach(t, after, 32)
	for _, r := range after[16:] {
		if !results.Sent(&r) || r.StageLevel == nil || math.Abs(*r.StageLevel-levels[r.Stage]) > 1e-6*levels[r.Stage] {
			t.Errorf("resumed %s: sent %v at %v, the whole run's %g (%v)", r.Stage, results.Sent(&r), show(r.StageLevel), levels[r.Stage], r.ErrorMessage)
		}
	}
}
