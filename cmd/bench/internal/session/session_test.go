package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"bench/config"
	"bench/internal/exitcode"
	"bench/internal/record/rundir"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// golden compares got with testdata/golden/name; -update rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/bench/internal/session -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (rerun with -update if intended)\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// replay is an OpenAI-compatible server that answers every chat request
// with the recorded Ollama stream in testdata (the answer "I will run
// `free -h` to check memory."); everything else (the inventory's probes,
// the warm-up's native load) is a 404. down makes every request fail, as a
// server that is gone.
type replay struct {
	*httptest.Server
	chats atomic.Int64
}

func newReplay(t *testing.T) *replay {
	t.Helper()
	raw, err := os.ReadFile("testdata/v1_chat_stream_text_usage.http")
	if err != nil {
		t.Fatal(err)
	}
	var body strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			body.WriteString(sc.Text() + "\n\n")
		}
	}
	r := &replay{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, req)
			return
		}
		r.chats.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, body.String())
	}))
	t.Cleanup(r.Close)
	return r
}

// promptFile is five prompts; the replayed answer passes two checks.
const promptFile = `prompts:
  - id: T0
    name: text_answer
    prompt: "Say the phrase: alpha"
    validator: {type: exact, value: "I will run ` + "`free -h`" + ` to check memory."}
  - id: T1
    name: native_tool
    system: "Use the tool."
    prompt: "How much memory is free? beta"
    tools:
      - name: get_memory_usage
        description: "Report memory usage."
        parameters: {type: object, properties: {unit: {type: string, enum: [MB, GB]}}, required: [unit]}
    validator: {type: tool_invocation, expected_tools: [get_memory_usage]}
  - id: T2
    name: text_tool
    prompt: "Which command shows disk space? gamma"
    validator: {type: tool_invocation, expected_tools: [df]}
  - id: T3
    name: json_answer
    prompt: "Count them as JSON: delta"
    validator: {type: json_keys, required_keys: [count], key_rules: {count: integer}}
  - id: T4
    name: no_reply
    prompt: "Nothing is scripted for this: unscripted"
    validator: {type: noop}
`

// writeConfig writes bench.yaml (with providers, the text under
// providers:) and the prompts into a temp dir and returns its path.
func writeConfig(t *testing.T, run, providers string) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(promptFile), 0o644)
	cfg := filepath.Join(dir, "bench.yaml")
	os.WriteFile(cfg, []byte("run:\n"+run+"providers:\n"+providers+"prompts:\n  files: [prompts.yaml]\n"), 0o644)
	return cfg
}

// runSession runs Run in-process and returns its code and output.
func runSession(o Options) (int, string, string) {
	var out, errb bytes.Buffer
	code := Run(o, &out, &errb)
	return code, out.String(), errb.String()
}

func readRunInfo(t *testing.T, dir string) *rundir.RunInfo {
	t.Helper()
	ri, err := rundir.ReadRunInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ri
}

// A whole run in-process, not on a terminal: stderr is one line per suite
// (on the fake clock), stdout the plan line, the table, where the reports
// are and what comes next; with Quiet both are empty. JUnit copies
// junit.xml.
// hostPort masks a test server's address in golden output.
var hostPort = regexp.MustCompile(`(localhost|127\.0\.0\.1):[0-9]+`)

// tableRow is a row of the ranking table (its rank, =1 when tied, then the
// provider), whose timings vary from run to run.
var tableRow = regexp.MustCompile(`^=?[0-9]+ +ollama_openai `)

func TestRunOutputNotATerminal(t *testing.T) {
	t.Setenv("CI", "")
	progressNow = func() time.Time { return time.Date(2026, 2, 14, 10, 0, 0, 0, time.UTC) }
	t.Cleanup(func() { progressNow = nil })
	srv := newReplay(t)
	cfg := writeConfig(t, "  concurrency: 1\n  timeout: 60s\n", "  - type: ollama_openai\n    base_url: "+srv.URL+"/v1\n    models: [m]\n")
	out := filepath.Join(t.TempDir(), "runs")
	ci := filepath.Join(t.TempDir(), "ci-junit.xml")

	code, stdout, stderr := runSession(Options{Config: cfg, ConfigSet: true, Overrides: config.Overrides{OutDir: out, RunID: "inproc"}, JUnit: ci})
	if code != exitcode.OK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	var masked []string
	for _, l := range strings.SplitAfter(stdout, "\n") {
		if strings.HasPrefix(l, "#  PROVIDER") || tableRow.MatchString(l) {
			l = "(table line)\n"
		}
		masked = append(masked, l)
	}
	got := "$ bench run --config bench.yaml --out RUNS --run-id inproc --junit CI_JUNIT\n--- stdout\n" + strings.Join(masked, "") + "--- stderr\n" + stderr
	got = strings.NewReplacer(out, "RUNS", ci, "CI_JUNIT").Replace(got)
	got = hostPort.ReplaceAllString(got, "HOST:PORT")
	golden(t, "run-lines.txt", got)

	runDir := filepath.Join(out, "inproc")
	inDir, err1 := os.ReadFile(rundir.Path(runDir, rundir.JUnitFile))
	copied, err2 := os.ReadFile(ci)
	if err1 != nil || err2 != nil || string(inDir) != string(copied) || !strings.Contains(string(copied), `tests="5" failures="3"`) {
		t.Errorf("--junit: %v %v\n%s", err1, err2, copied)
	}
	for _, f := range []string{rundir.ReportHTML, rundir.SummaryMD} {
		if _, err := os.Stat(rundir.Path(runDir, f)); err != nil {
			t.Errorf("run directory lacks %s", f)
		}
	}

	// Quiet prints only what needs acting on: here, at most that the server
	// is not an Ollama, so no cell can be flagged cold from /api/ps.
	code, stdout, stderr = runSession(Options{Config: cfg, ConfigSet: true, Overrides: config.Overrides{OutDir: out, RunID: "quiet"}, Quiet: true})
	rest := strings.TrimSpace(stderr)
	if strings.Contains(rest, "which models the server holds is not asked any more") && !strings.Contains(rest, "\n") {
		rest = ""
	}
	if code != exitcode.OK || stdout != "" || rest != "" {
		t.Errorf("--quiet: exit %d, printed:\n%s%s", code, stdout, stderr)
	}
}

// The suite's warm-up load time reaches its resource file in a real run:
// the output that records it is asked for it itself, whatever else brackets
// the suite (the progress display did, through a wrapper that hid it).
func TestWarmupInResources(t *testing.T) {
	srv := newReplay(t)
	cfg := writeConfig(t, "  concurrency: 1\n", "  - type: ollama_openai\n    base_url: "+srv.URL+"/v1\n    models: [m]\n")
	out := t.TempDir()
	if code, stdout, stderr := runSession(Options{Config: cfg, Overrides: config.Overrides{OutDir: out, RunID: "w"}, Quiet: true}); code != exitcode.OK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	var rec rundir.SuiteRecord
	if err := rundir.ReadJSON(filepath.Join(out, "w", rundir.FileBase("ollama_openai", "m", nil)+".json"), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Warmup == nil || rec.Warmup.LoadMS <= 0 || rec.Warmup.Error != "" {
		t.Errorf("warm-up %+v, want its load time", rec.Warmup)
	}
	if n := srv.chats.Load(); n != 6 {
		t.Errorf("%d chat requests, want 5 cells and 1 warm-up", n)
	}
}

// A shard holding no cell of a provider does not call that provider
// unreachable: exit 4 is decided over the shard's own cells. A shard whose
// own provider is down still exits 4.
func TestShardExitOverItsOwnCells(t *testing.T) {
	srv := newReplay(t)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	cfg := writeConfig(t, "  concurrency: 2\n  warmup: false\n",
		"  - name: a\n    type: ollama_openai\n    base_url: "+srv.URL+"/v1\n    models: [m]\n"+
			"  - name: b\n    type: ollama_openai\n    base_url: "+srv.URL+"/v1\n    models: [m]\n"+
			"  - name: c\n    type: ollama_openai\n    base_url: "+down.URL+"/v1\n    models: [m]\n")
	out := t.TempDir()
	for i, want := range []int{exitcode.OK, exitcode.OK, exitcode.Unreached} {
		code, stdout, stderr := runSession(Options{Config: cfg, Overrides: config.Overrides{OutDir: out}, Quiet: true, ShardIndex: i + 1, ShardCount: 3})
		if code != want {
			t.Errorf("shard %d/3: exit %d, want %d\n%s%s", i+1, code, want, stdout, stderr)
		}
		if want == exitcode.Unreached && !strings.Contains(stderr, "no cell reached a model") {
			t.Errorf("shard %d/3: %s", i+1, stderr)
		}
	}
	// Unsharded, the dead provider makes the run exit 4, naming it.
	code, _, stderr := runSession(Options{Config: cfg, Overrides: config.Overrides{OutDir: out}, Quiet: true})
	if code != exitcode.Unreached || !strings.Contains(stderr, "no cell of c reached a model") {
		t.Errorf("unsharded: exit %d\n%s", code, stderr)
	}
	// A shard past the suites has nothing to reach.
	code, stdout, stderr := runSession(Options{Config: cfg, Overrides: config.Overrides{OutDir: out}, Quiet: true, ShardIndex: 4, ShardCount: 4})
	if code != exitcode.OK {
		t.Errorf("empty shard: exit %d\n%s%s", code, stdout, stderr)
	}
}

// run.json of a resumed run counts the whole run: every planned cell with
// a record (those of the earlier run too), the earlier ones apart in
// resumed_cells, and by_status over each cell's last record.
func TestResumedRunInfoCountsTheWholeRun(t *testing.T) {
	srv := newReplay(t)
	cfg := writeConfig(t, "  concurrency: 1\n  warmup: false\n", "  - type: ollama_openai\n    base_url: "+srv.URL+"/v1\n    models: [m]\n")
	out := t.TempDir()
	if code, stdout, stderr := runSession(Options{Config: cfg, Overrides: config.Overrides{OutDir: out, RunID: "r"}, Quiet: true}); code != exitcode.OK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	dir := filepath.Join(out, "r")
	// As if the run had been killed after two cells, the second of which
	// found its provider unavailable (so the resume runs it again).
	lines := strings.SplitAfter(readFile(t, rundir.Path(dir, rundir.ResultsFile)), "\n")
	var second map[string]any
	json.Unmarshal([]byte(lines[1]), &second)
	second["availability_status"], second["success"], second["failure_type"] = "skipped_unavailable", false, "connection_refused"
	b, _ := json.Marshal(second)
	os.WriteFile(rundir.Path(dir, rundir.ResultsFile), []byte(lines[0]+string(b)+"\n"), 0o644)
	os.Remove(rundir.Path(dir, rundir.RunFile))

	code, stdout, stderr := runSession(Options{Config: cfg, Overrides: config.Overrides{OutDir: out, RunID: "r"}, Resume: true, Quiet: true})
	if code != exitcode.OK {
		t.Fatalf("resume: exit %d\n%s%s", code, stdout, stderr)
	}
	ri := readRunInfo(t, dir)
	if ri.CellsPlanned != 5 || ri.CellsRecorded != 5 || ri.Resumed != 1 || ri.ByStatus["ok"] != 5 || len(ri.ByStatus) != 1 || ri.EndReason != "finished" {
		t.Errorf("run.json after the resume: planned %d, recorded %d, resumed %d, by status %v, %s",
			ri.CellsPlanned, ri.CellsRecorded, ri.Resumed, ri.ByStatus, ri.EndReason)
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

func TestResumeCommand(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "bench run --run-id 20260214_100000 --resume"},
		{[]string{"--config", "my bench.yaml", "--run-id", "old", "--models", "a,b"},
			"bench run --config 'my bench.yaml' --models a,b --run-id 20260214_100000 --resume"},
		{[]string{"-run-id=old", "--resume", "--quiet"}, "bench run --quiet --run-id 20260214_100000 --resume"},
		{[]string{"--prompts", "it's"}, `bench run --prompts 'it'\''s' --run-id 20260214_100000 --resume`},
	}
	for _, c := range cases {
		if got := resumeCommand("bench", c.args, "20260214_100000", ""); got != c.want {
			t.Errorf("%q: %s, want %s", c.args, got, c.want)
		}
	}
	// A run the budget stopped resumes with a new --max-cost in place of
	// the old one.
	for _, args := range [][]string{{"--max-cost", "0.5", "--quiet"}, {"--max-cost=0.5", "--quiet"}} {
		if got, want := resumeCommand("bench", args, "r", "1.25"), "bench run --quiet --run-id r --resume --max-cost 1.25"; got != want {
			t.Errorf("%q: %s, want %s", args, got, want)
		}
	}
}

// A shard's directory resumes only as the same shard.
func TestCheckResumeShard(t *testing.T) {
	dir := t.TempDir()
	rundir.WriteJSON(rundir.Path(dir, rundir.RunFile), &rundir.RunInfo{RunID: "nightly", EndReason: "interrupted", Shard: &rundir.Shard{Index: 1, Count: 2}})
	if err := checkResumeShard(dir, &rundir.Shard{Index: 1, Count: 2}); err != nil {
		t.Errorf("the same shard: %v", err)
	}
	for _, sh := range []*rundir.Shard{{Index: 2, Count: 2}, {Index: 1, Count: 3}, nil} {
		if err := checkResumeShard(dir, sh); err == nil || !strings.Contains(err.Error(), "holds a run that was shard 1/2; it cannot be resumed") {
			t.Errorf("as %+v: %v", sh, err)
		}
	}
	if err := checkResumeShard(t.TempDir(), &rundir.Shard{Index: 1, Count: 2}); err != nil {
		t.Errorf("no run.json: %v", err)
	}
	rundir.WriteJSON(rundir.Path(dir, rundir.RunFile), &rundir.RunInfo{RunID: "nightly"})
	if err := checkResumeShard(dir, &rundir.Shard{Index: 1, Count: 2}); err == nil || !strings.Contains(err.Error(), "was not sharded; it cannot be resumed as shard 1/2") {
		t.Errorf("unsharded run resumed as a shard: %v", err)
	}
}
