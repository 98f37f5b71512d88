package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"bench/internal/exitcode"
	"bench/internal/record/agentsnap"
	"bench/internal/record/rundir"
	"bench/internal/testpeer/junitschema"
	"bench/internal/testpeer/ollamatest"
	"bench/internal/testpeer/testmodel"
	"bench/report/compare"

	mstats "github.com/aclements/go-moremath/stats"
)

// The compare end-to-end tests run the real bench binary twice and compare
// the runs: against a real Ollama serving scripted models (quality), and
// against a streaming server with controlled delays (latency).

// gateScript answers the gate prompts (the prompt's last word picks the
// reply); brokenScript is the same model name re-created so that three
// prompts break (alpha, delta, epsilon), the tool call of beta is dropped,
// zeta says the same thing differently and gamma is unchanged.
var (
	gateScript = testmodel.Script{
		"alpha":   {"The ", "answer ", "is ", "42."},
		"beta":    {`<tool_call>{"name": "get_memory_usage", "arguments": {"unit": "MB"}}</tool_call>`},
		"gamma":   {"Run ", "`df -h`"},
		"delta":   {"```json\n", `{"count": 3}`, "\n```"},
		"epsilon": {"Paris ", "remains ", "capital."},
		"zeta":    {"Hello ", "there."},
	}
	brokenScript = testmodel.Script{
		"alpha":   {"The ", "answer ", "is ", "41."},
		"beta":    {"You ", "have ", "2 ", "GB ", "free."},
		"gamma":   {"Run ", "`df -h`"},
		"delta":   {"count: ", "three"},
		"epsilon": {"Lyon ", "seems ", "nice."},
		"zeta":    {"Hi ", "there."},
	}
)

const gatePrompts = `prompts:
  - id: G0
    name: exact_answer
    prompt: "What is the answer? alpha"
    validator: {type: exact, value: "The answer is 42."}
  - id: G1
    name: native_tool
    system: "Use the tool."
    prompt: "How much memory is free? beta"
    tools:
      - name: get_memory_usage
        description: "Report memory usage."
        parameters: {type: object, properties: {unit: {type: string, enum: [MB, GB]}}, required: [unit]}
    validator: {type: tool_invocation, expected_tools: [get_memory_usage]}
  - id: G2
    name: text_tool
    prompt: "Which command shows disk space? gamma"
    validator: {type: tool_invocation, expected_tools: [df]}
  - id: G3
    name: json_answer
    prompt: "Count them as JSON: delta"
    validator: {type: json_keys, required_keys: [count], key_rules: {count: integer}}
  - id: G4
    name: capital
    prompt: "Which city is the capital of France? epsilon"
    validator: {type: regex_fullmatch, pattern: "Paris.*"}
  - id: G5
    name: greeting
    prompt: "Greet me: zeta"
    validator: {type: noop}
`

func gateConfig(url string, reps int) string {
	return fmt.Sprintf(`run:
  concurrency: 4
  repetitions: %d
  timeout: 60s
providers:
  - type: ollama_openai
    base_url: %s/v1
    models: [gate]
  - type: ollama
    base_url: %s
    models: [gate]
prompts:
  files: [prompts.yaml]
`, reps, url, url)
}

// validJUnit checks a junit.xml against the Jenkins xUnit JUnit schema
// (internal/testpeer/junitschema; without xmllint the check is skipped, or fails
// when BENCH_REQUIRE_SERVERS=1).
func validJUnit(t *testing.T, path string) {
	t.Helper()
	if err := junitschema.Check(t, path); err != nil {
		t.Error(err)
	}
}

// benchRun runs `bench run` in dir (bench.yaml and prompts.yaml there) with
// the run id given, and returns its exit code and output.
func benchRun(t *testing.T, dir, config, prompts, id string, args ...string) (int, string, string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(prompts), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return benchExec(t, append([]string{"run", "--config", filepath.Join(dir, "bench.yaml"), "--run-id", id, "--quiet"}, args...)...)
}

func benchExec(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(benchBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errb.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// compareJSON reads dir/compare.json.
type compareJSON struct {
	Verdict string `json:"verdict"`
	Cells   []struct {
		Provider string `json:"provider"`
		PromptID string `json:"prompt_id"`
		Verdict  string `json:"verdict"`
		Category string `json:"category"`
	} `json:"cells"`
	Findings []struct {
		Category  string `json:"category"`
		Scope     string `json:"scope"`
		Metric    string `json:"metric"`
		PromptID  string `json:"prompt_id"`
		FailsGate bool   `json:"fails_gate"`
		Suspect   string `json:"suspect"`
		Message   string `json:"message"`
	} `json:"findings"`
	Setup []compare.SetupItem `json:"setup"`
}

func readCompare(t *testing.T, dir string) *compareJSON {
	t.Helper()
	var c compareJSON
	b, err := os.ReadFile(filepath.Join(dir, compare.JSONFile))
	if err != nil || json.Unmarshal(b, &c) != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	validJUnit(t, filepath.Join(dir, compare.JUnitFile))
	return &c
}

// The same model run twice, the second time with --baseline: exit 0,
// every cell a match, a snapshot per cell that says which cell and setup
// it is. The gate here is on quality, availability and drift (identical
// answers): the real Ollama's latency on a machine shared with other jobs
// is not the same from one run to the next (measured here: median TTFT
// 25.5 ms in one run, 152 ms in the next), which the gate rightly reports
// as a latency regression; latency is tested on the controlled server
// below.
func TestCompareRealOllamaIdentical(t *testing.T) {
	srv := ollamatest.Start(t)
	srv.CreateModel(t, "gate", gateScript)
	dir := t.TempDir()
	cfg := gateConfig(srv.URL(), 2)
	if code, out, errs := benchRun(t, dir, cfg, gatePrompts, "base"); code != 0 {
		t.Fatalf("base run: exit %d\n%s%s", code, out, errs)
	}
	base := filepath.Join(dir, "runs", "base")
	code, out, errs := benchRun(t, dir, cfg, gatePrompts, "same", "--baseline", base, "--fail-on", "quality,availability,drift")
	if code != exitcode.OK {
		t.Fatalf("identical rerun with --baseline: exit %d\n%s%s", code, out, errs)
	}
	// The comparison follows the run at once: no hint to run one.
	if !strings.Contains(out, "verdict: ok") || !strings.Contains(out, "CELLS: 24 match") || strings.Contains(out, "FAIL ") || strings.Contains(out, "BASELINE_RUN") {
		t.Errorf("stdout:\n%s", out)
	}
	c := readCompare(t, filepath.Join(dir, "runs", "same", rundir.CompareDir))
	if c.Verdict != "ok" || len(c.Cells) != 24 {
		t.Errorf("verdict %s, %d cells", c.Verdict, len(c.Cells))
	}
	for _, cell := range c.Cells {
		if cell.Verdict != compare.Match {
			t.Errorf("%s %s: %s", cell.Provider, cell.PromptID, cell.Verdict)
		}
	}
	// The night's report links its gate result, which is there; the base
	// run, not gated, links none.
	page, err := os.ReadFile(filepath.Join(dir, "runs", "same", rundir.ReportHTML))
	if err != nil {
		t.Fatal(err)
	}
	link := `<a href="compare/compare.html" id="gate-link">`
	if !strings.Contains(string(page), link) || !strings.Contains(string(page), "Gated against the baseline run "+base) {
		t.Errorf("the gated run's report.html does not link its gate result")
	}
	if _, err := os.Stat(filepath.Join(dir, "runs", "same", rundir.CompareDir, rundir.CompareHTML)); err != nil {
		t.Errorf("the link's target: %v", err)
	}
	if page, err := os.ReadFile(filepath.Join(base, rundir.ReportHTML)); err != nil || strings.Contains(string(page), `id="gate-link"`) {
		t.Errorf("the base run's report.html links a gate result (%v)", err)
	}

	snaps, err := os.ReadDir(filepath.Join(base, rundir.SnapshotsDir))
	if err != nil || len(snaps) != 24 {
		t.Fatalf("snapshots: %d files, %v", len(snaps), err)
	}
	s, err := agentsnap.Read(filepath.Join(base, rundir.SnapshotsDir, agentsnap.FileName(agentsnap.Key{
		Provider: "ollama_openai", ProviderType: "ollama_openai", Model: "gate", PromptID: "G1", Repetition: 1})))
	if err != nil {
		t.Fatal(err)
	}
	fp := s.Fingerprint
	if s.Input != "[system]\nUse the tool.\n[user]\nHow much memory is free? beta" || len(s.Tools) != 1 || s.Tools[0].Name != "get_memory_usage" ||
		string(s.Tools[0].Args) != `{"unit":"MB"}` || s.Error != nil || fp.ServerVersion == "" || len(fp.ModelDigest) < 64 || fp.Bench == "" {
		t.Errorf("snapshot %+v", s)
	}
}

// The same model name re-created so that its answers break three prompts
// and drop a tool call: exactly those cells are regressions (in both
// providers' groups), the greeting that changed its words is drift, the
// tier drop and the new model digest are reported, and the exit code is
// the regression code.
func TestCompareRealOllamaRegression(t *testing.T) {
	srv := ollamatest.Start(t)
	srv.CreateModel(t, "gate", gateScript)
	dir := t.TempDir()
	cfg := gateConfig(srv.URL(), 1)
	if code, out, errs := benchRun(t, dir, cfg, gatePrompts, "base"); code != 0 {
		t.Fatalf("base run: exit %d\n%s%s", code, out, errs)
	}
	srv.CreateModel(t, "gate", brokenScript)
	if code, out, errs := benchRun(t, dir, cfg, gatePrompts, "new"); code != 0 {
		t.Fatalf("new run: exit %d\n%s%s", code, out, errs)
	}
	base, cur := filepath.Join(dir, "runs", "base"), filepath.Join(dir, "runs", "new")
	code, out, errs := benchExec(t, "compare", base, cur)
	if code != exitcode.Regression {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitcode.Regression, out, errs)
	}
	c := readCompare(t, filepath.Join(cur, rundir.CompareDir))
	var regressions []string
	for _, cell := range c.Cells {
		want := map[string]string{"G0": compare.Regression, "G1": compare.Regression, "G2": compare.Match,
			"G3": compare.Regression, "G4": compare.Regression, "G5": compare.Drift}[cell.PromptID]
		if cell.Verdict != want {
			t.Errorf("%s %s: %s, want %s", cell.Provider, cell.PromptID, cell.Verdict, want)
		}
		if cell.Verdict == compare.Regression {
			regressions = append(regressions, cell.Provider+" "+cell.PromptID)
		}
	}
	sort.Strings(regressions)
	if len(regressions) != 8 {
		t.Errorf("regressions %v, want G0, G1, G3, G4 of both providers", regressions)
	}
	tierDrops := 0
	for _, f := range c.Findings {
		if f.Metric == "tier" && f.FailsGate && strings.Contains(f.Message, "tier_1 -> tier_2") {
			tierDrops++
		}
		// The real Ollama's latency moves with whatever else the machine
		// runs (CI measured a median TTFT of 29.5 ms in one run and 181 ms
		// in the next, with the other test packages running beside it);
		// the gate is right to report that, and this test is about the
		// quality verdicts, so a latency finding is logged, not failed.
		if f.Category == compare.Latency {
			t.Logf("latency finding (machine load, not the model): %s", f.Message)
		}
	}
	if tierDrops != 2 || !strings.Contains(out, "leaves Tier 1") {
		t.Errorf("tier drops %d; stdout:\n%s", tierDrops, out)
	}
	// One finding per broken prompt, each covering its cells in both
	// providers' groups; the dropped tool call is named.
	var causes []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 3 && f[0] == "FAIL" && f[2] == "cells" {
			causes = append(causes, f[3])
			if !strings.Contains(l, "in 2/2 cells: both providers") {
				t.Errorf("root cause line does not cover both providers' cells: %s", l)
			}
		}
	}
	if strings.Join(causes, ",") != "G0,G1,G3,G4" {
		t.Errorf("root causes %v, want one for each of G0, G1, G3, G4:\n%s", causes, out)
	}
	if !strings.Contains(out, "G1: tool calls get_memory_usage → none") {
		t.Errorf("the dropped tool call is not named:\n%s", out)
	}
	digest := false
	for _, s := range c.Setup {
		digest = digest || (strings.HasSuffix(s.Name, "/gate model digest") && !s.Same)
	}
	if !digest || !strings.Contains(out, "setup differences:") {
		t.Errorf("the model digest change is not in the header:\n%s", out)
	}
	// Regressions come first in the table.
	if i, j := strings.Index(out, "FAIL  quality"), strings.Index(out, "GROUPS"); i < 0 || j < i {
		t.Errorf("regressions are not listed first:\n%s", out)
	}
}

// delayServer speaks the OpenAI chat-completions stream (and Ollama's probe
// endpoints) with a controlled time to first token and time per token,
// each jittered uniformly by ±jitter.
type delayServer struct {
	*httptest.Server
	mu             sync.Mutex
	ttft, perToken time.Duration
	jitter         float64
	rng            *rand.Rand
	tokens         int
}

func newDelayServer(t *testing.T) *delayServer {
	d := &delayServer{tokens: 10, rng: rand.New(rand.NewPCG(3, 5))}
	d.Server = httptest.NewServer(http.HandlerFunc(d.serve))
	t.Cleanup(d.Close)
	return d
}

func (d *delayServer) set(ttft, perToken time.Duration, jitter float64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ttft, d.perToken, d.jitter = ttft, perToken, jitter
}

func (d *delayServer) delay(base time.Duration) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return time.Duration(float64(base) * (1 + d.jitter*(2*d.rng.Float64()-1)))
}

func (d *delayServer) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api/version":
		fmt.Fprint(w, `{"version":"0.0.0-delay"}`)
		return
	case "/api/tags":
		fmt.Fprint(w, `{"models":[{"name":"delay:latest","digest":"sha256:`+strings.Repeat("d", 64)+`"}]}`)
		return
	case "/v1/chat/completions":
	default:
		http.NotFound(w, r)
		return
	}
	d.mu.Lock()
	ttft, perToken, n := d.ttft, d.perToken, d.tokens
	d.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	chunk := func(body string) {
		fmt.Fprintf(w, "data: %s\n\n", body)
		fl.Flush()
	}
	time.Sleep(d.delay(ttft))
	for i := range n {
		if i > 0 {
			time.Sleep(d.delay(perToken))
		}
		chunk(fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","model":"delay","choices":[{"index":0,"delta":{"role":"assistant","content":"tok%d "},"finish_reason":null}]}`, i))
	}
	chunk(`{"id":"c","object":"chat.completion.chunk","model":"delay","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	chunk(fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","model":"delay","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":%d,"total_tokens":%d}}`, n, n+5))
	fmt.Fprint(w, "data: [DONE]\n\n")
	fl.Flush()
}

const delayPrompts = `prompts:
  - {id: L0, name: l0, prompt: "first", validator: {type: regex_fullmatch, pattern: ".*tok9.*"}}
  - {id: L1, name: l1, prompt: "second", validator: {type: regex_fullmatch, pattern: ".*tok9.*"}}
  - {id: L2, name: l2, prompt: "third", validator: {type: regex_fullmatch, pattern: ".*tok9.*"}}
  - {id: L3, name: l3, prompt: "fourth", validator: {type: regex_fullmatch, pattern: ".*tok9.*"}}
  - {id: L4, name: l4, prompt: "fifth", validator: {type: regex_fullmatch, pattern: ".*tok9.*"}}
`

func delayConfig(url string) string {
	return fmt.Sprintf(`run:
  concurrency: 6
  repetitions: 6
  timeout: 30s
providers:
  - type: ollama_openai
    base_url: %s/v1
    concurrency: 6
    models: [delay]
prompts:
  files: [prompts.yaml]
`, url)
}

// A server that got slower is a latency regression (TTFT, e2e and
// tokens/s, per group and per prompt), and a slower server changes no
// answer.
func TestCompareLatencyDelayServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bench twice against a delaying server")
	}
	serialTest(t)
	d := newDelayServer(t)
	dir := t.TempDir()
	cfg := delayConfig(d.URL)
	run := func(id string, ttft, perToken time.Duration, jitter float64) string {
		d.set(ttft, perToken, jitter)
		if code, out, errs := benchRun(t, dir, cfg, delayPrompts, id); code != 0 {
			t.Fatalf("run %s: exit %d\n%s%s", id, code, out, errs)
		}
		return filepath.Join(dir, "runs", id)
	}
	base := run("base", 100*time.Millisecond, 25*time.Millisecond, 0.25)
	slow := run("slow", 200*time.Millisecond, 50*time.Millisecond, 0.25)
	code, out, errs := benchExec(t, "compare", base, slow)
	if full := readCompareFull(t, filepath.Join(slow, rundir.CompareDir)); full.busy(0) {
		// On a machine the sampler finds busy the documented outcome:
		// the latency is not judged, listed; --fail-on-suspect gates on it.
		full.busyOutcome(t, 0)
		if code != exitcode.OK {
			t.Errorf("busy machine: exit %d\n%s%s", code, out, errs)
		}
		if code, out, _ := benchExec(t, "compare", "--fail-on-suspect", "--out", filepath.Join(dir, "suspect"), base, slow); code != exitcode.Regression {
			t.Errorf("busy machine, --fail-on-suspect: exit %d\n%s", code, out)
		}
		return
	}
	if code != exitcode.Regression {
		t.Fatalf("slower server: exit %d\n%s%s", code, out, errs)
	}
	c := readCompare(t, filepath.Join(slow, rundir.CompareDir))
	metrics := map[string]bool{}
	prompts := map[string]bool{}
	for _, f := range c.Findings {
		if f.Category == compare.Latency && f.FailsGate {
			if f.Scope == "group" {
				metrics[f.Metric] = true
			} else {
				prompts[f.PromptID] = true
			}
		}
	}
	if !metrics[compare.MetricTTFT] || !metrics[compare.MetricE2E] || !metrics[compare.MetricTPS] || len(prompts) == 0 {
		t.Errorf("group metrics flagged %v, prompts %v; stdout:\n%s", metrics, prompts, out)
	}
	for _, cell := range c.Cells {
		if cell.Verdict != compare.Match {
			t.Errorf("%s: %s (a slower server changes no answer)", cell.PromptID, cell.Verdict)
		}
	}
}

var sameDelayRuns = flag.Int("same-delay-runs", 10, "runs TestCompareSameDelays compares pairwise (10: 45 comparisons, enough to assert the false-alarm rate)")

// Runs of the same delays with ±25 % jitter, started together, compared
// pairwise: every cell matches, nothing but latency is ever reported, and
// an exit of 3 (regression) always has its finding. The share of comparisons that
// report latency is the gate's false-alarm rate on real runs; it is
// logged, and asserted to be at most alpha when there are enough
// comparisons that one alarm does not decide it (45 by default; the
// rate of a longer trial is logged with -v):
//
//	go test ./cmd/bench -run TestCompareSameDelays -v -args -same-delay-runs=20
//
// The runs go together so that what they measure shares this machine's
// load: bench measures the machine too, and in CI, with other packages'
// tests beside it on 2 cores, one run made alone measured a median TTFT of
// 90 ms and the next 108 ms, a real shift that the gate rightly reported.
// On drawn samples the rate is asserted in every test run:
// TestLatencyFalseAlarmRate (compare) and TestFalseAlarmRate (stats).
func TestCompareSameDelays(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bench against a delaying server")
	}
	serialTest(t)
	if *sameDelayRuns < 2 {
		t.Fatalf("-same-delay-runs %d: need two runs to compare", *sameDelayRuns)
	}
	d := newDelayServer(t)
	d.set(100*time.Millisecond, 25*time.Millisecond, 0.25)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "bench.yaml")
	if err := os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(delayPrompts), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, []byte(delayConfig(d.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := make([]string, *sameDelayRuns)
	failed := make([]string, len(runs))
	var wg sync.WaitGroup
	for i := range runs {
		id := fmt.Sprintf("same%d", i)
		runs[i] = filepath.Join(dir, "runs", id)
		wg.Go(func() {
			cmd := exec.Command(benchBin, "run", "--config", cfgPath, "--run-id", id, "--quiet")
			if out, err := cmd.CombinedOutput(); err != nil {
				failed[i] = fmt.Sprintf("run %s: %v\n%s", id, err, out)
			}
		})
	}
	wg.Wait()
	for _, f := range failed {
		if f != "" {
			t.Fatal(f)
		}
	}
	alarms, comparisons, busy := 0, 0, 0
	for i := range runs {
		for j := i + 1; j < len(runs); j++ {
			comparisons++
			pair := filepath.Base(runs[i]) + " vs " + filepath.Base(runs[j])
			out := filepath.Join(dir, fmt.Sprintf("cmp%d-%d", i, j))
			code, stdout, errs := benchExec(t, "compare", "--out", out, runs[i], runs[j])
			if code != exitcode.OK && code != exitcode.Regression {
				t.Fatalf("compare: exit %d\n%s", code, errs)
			}
			c := readCompare(t, out)
			if full := readCompareFull(t, out); full.busy(0) {
				// Ten runs together on a small machine are each other's
				// other work: a busy pair is not judged, and must say so.
				busy++
				full.busyOutcome(t, 0)
				if code != exitcode.OK {
					t.Errorf("%s: exit %d on a busy machine\n%s", pair, code, stdout)
				}
			}
			latency := false
			for _, f := range c.Findings {
				if f.Category != compare.Latency {
					t.Errorf("%s: %s finding on the same behaviour: %s", pair, f.Category, f.Message)
					continue
				}
				if f.Suspect != "" {
					continue // not judged: the machine was busy
				}
				if !latency {
					t.Logf("latency finding %s: %s", pair, f.Message)
				}
				latency = true
			}
			if latency {
				alarms++
			}
			if code == exitcode.Regression && !latency {
				t.Errorf("%s: exit %d with no finding\n%s", pair, code, stdout)
			}
			for _, cell := range c.Cells {
				if cell.Verdict != compare.Match {
					t.Errorf("%s: %s %s: %s", pair, cell.Provider, cell.PromptID, cell.Verdict)
				}
			}
		}
	}
	rate := float64(alarms) / float64(comparisons)
	t.Logf("same delays with ±25%% jitter, %d runs together: %d of %d comparisons reported latency (rate %.3f, alpha 0.05); %d on a busy machine, not judged",
		len(runs), alarms, comparisons, rate, busy)
	// A gate whose false-alarm rate is alpha reports 3 or 4 of 45 by
	// chance often, and the pairs share
	// runs, so one run measured on a busier moment alarms against several
	// others. The assertion is therefore the binomial tail: fail when a
	// true rate of alpha would report this many alarms less than once in
	// a thousand trials.
	if tail := 1 - (mstats.BinomialDist{N: comparisons, P: 0.05}).CDF(float64(alarms-1)); comparisons >= 40 && tail < 0.001 {
		t.Errorf("false-alarm rate %.3f over %d comparisons of same-behaviour runs: a rate of alpha 0.05 gives this many with probability %.2g", rate, comparisons, tail)
	}
}
