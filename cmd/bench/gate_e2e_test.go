package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"bench/internal/exitcode"
	"bench/internal/record/results"
	"bench/internal/record/rundir"
	"bench/report/compare"
)

// The nightly gate's four situations (issue 23), each with real bench
// processes against a streaming server with controlled delays: a prompt
// mix that changes, a server whose /api/ps is a catch-all, and a machine
// made busy by other work during the new run.

// promptPlay is how gateServer answers one prompt: the time to the first
// chunk, the chunks and the gap between them, and the token count the
// usage reports.
type promptPlay struct {
	ttft   time.Duration
	chunks int
	gap    time.Duration
	tokens int
}

// gateServer speaks the OpenAI chat-completions stream, Ollama's probe
// endpoints, and, when psCatchAll is set, answers every other path
// (/api/ps among them) with a 200 {"status":"ok"}, as a catch-all route
// of an OpenAI-compatible server does.
type gateServer struct {
	*httptest.Server
	mu         sync.Mutex
	plays      map[string]promptPlay // by the prompt's last word
	def        promptPlay
	psCatchAll bool
	// psEmpty answers /api/ps as an Ollama holding no model.
	psEmpty bool
	psCalls int
}

func newGateServer(t *testing.T, def promptPlay) *gateServer {
	g := &gateServer{def: def, plays: map[string]promptPlay{}}
	g.Server = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.Close)
	return g
}

func (g *gateServer) set(def promptPlay, plays map[string]promptPlay) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.def, g.plays = def, plays
}

func (g *gateServer) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api/version":
		fmt.Fprint(w, `{"version":"0.0.0-gate"}`)
		return
	case "/api/tags":
		fmt.Fprint(w, `{"models":[{"name":"gate:latest","digest":"sha256:`+strings.Repeat("e", 64)+`"}]}`)
		return
	case "/v1/chat/completions":
	default:
		g.mu.Lock()
		catchAll, empty := g.psCatchAll, g.psEmpty
		if r.URL.Path == "/api/ps" {
			g.psCalls++
		}
		g.mu.Unlock()
		if empty && r.URL.Path == "/api/ps" {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			fmt.Fprint(w, `{"models":[]}`)
			return
		}
		if catchAll {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"status":"ok"}`)
			return
		}
		http.NotFound(w, r)
		return
	}
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, &req)
	last := ""
	if n := len(req.Messages); n > 0 {
		f := strings.Fields(req.Messages[n-1].Content)
		if len(f) > 0 {
			last = f[len(f)-1]
		}
	}
	g.mu.Lock()
	p, ok := g.plays[last]
	if !ok {
		p = g.def
	}
	g.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	chunk := func(s string) {
		fmt.Fprintf(w, "data: %s\n\n", s)
		fl.Flush()
	}
	time.Sleep(p.ttft)
	for i := range p.chunks {
		if i > 0 {
			time.Sleep(p.gap)
		}
		chunk(fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","model":"gate","choices":[{"index":0,"delta":{"role":"assistant","content":"tok%d "},"finish_reason":null}]}`, i))
	}
	chunk(`{"id":"c","object":"chat.completion.chunk","model":"gate","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	chunk(fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","model":"gate","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":%d,"total_tokens":%d}}`, p.tokens, p.tokens+5))
	fmt.Fprint(w, "data: [DONE]\n\n")
	fl.Flush()
}

// gateE2EConfig is one ollama_openai provider on the server, reps
// repetitions of the prompts.
func gateE2EConfig(url string, reps int) string {
	return fmt.Sprintf(`run:
  concurrency: 4
  repetitions: %d
  timeout: 30s
providers:
  - type: ollama_openai
    base_url: %s/v1
    concurrency: 4
    models: [gate]
prompts:
  files: [prompts.yaml]
`, reps, url)
}

const mixPrompts = `prompts:
  - {id: S0, name: s0, prompt: "say short0", validator: {type: noop}}
  - {id: S1, name: s1, prompt: "say short1", validator: {type: noop}}
  - {id: S2, name: s2, prompt: "say short2", validator: {type: noop}}
  - {id: LONG, name: long, prompt: "write long", validator: {type: noop}}
`

// compareFull reads what the gate tests need of compare.json.
type compareFull struct {
	Verdict  string `json:"verdict"`
	Findings []struct {
		Category  string `json:"category"`
		Metric    string `json:"metric"`
		PromptID  string `json:"prompt_id"`
		FailsGate bool   `json:"fails_gate"`
		Suspect   string `json:"suspect"`
		Message   string `json:"message"`
	} `json:"findings"`
	Groups []struct {
		Latency map[string]struct {
			Change    string `json:"change"`
			NotJudged string `json:"not_judged"`
			Reason    string `json:"reason"`
			Strata    int    `json:"strata"`
		} `json:"latency"`
		Pool map[string]struct {
			Entered []string `json:"entered"`
			Left    []string `json:"left"`
		} `json:"pool_changes"`
		OtherLoad *struct {
			Base     *float64 `json:"base"`
			New      *float64 `json:"new"`
			BusyBase bool     `json:"busy_base"`
			BusyNew  bool     `json:"busy_new"`
			Busy     string   `json:"busy"`
		} `json:"other_cpu_percent_mean"`
	} `json:"groups"`
	Judgement map[string]struct {
		Judged    int            `json:"judged"`
		NotJudged map[string]int `json:"not_judged"`
	} `json:"judgement"`
	Unjudged []string `json:"unjudged"`
}

// busy says the sampler found the machine busy during group i's suite in
// either run (report.MachineBusy): its latency is then not judged
// ("machine busy"), the documented outcome the gate tests assert in
// place of a verdict that would flip with the machine's load.
func (c *compareFull) busy(i int) bool {
	l := c.Groups[i].OtherLoad
	return l != nil && (l.BusyBase || l.BusyNew || (l.Base != nil && l.New != nil && *l.New-*l.Base >= 50))
}

// busyOutcome checks the documented outcome of a busy machine: every
// latency comparison of group i not judged ("machine busy") with the
// figures, its latency findings listed as suspect and failing nothing.
func (c *compareFull) busyOutcome(t *testing.T, i int) {
	t.Helper()
	l := c.Groups[i].OtherLoad
	// Busy in either run: nothing of the group's latency is judged. Busier
	// by half a core, not full: its regressions are not.
	full := l.BusyBase || l.BusyNew
	t.Logf("the sampler found the machine busy (%s; other work from %s to %s %% of a core): latency not judged", l.Busy, orDashF(l.Base), orDashF(l.New))
	for m, v := range c.Groups[i].Latency {
		if (full && v.Change != "not_judged") || v.Change == "regression" || (v.Change == "not_judged" && v.NotJudged == compare.WhyMachineBusy && !strings.Contains(v.Reason, "other work")) {
			t.Errorf("busy machine: %s %s %q: %s", m, v.Change, v.NotJudged, v.Reason)
		}
	}
	for _, f := range c.Findings {
		if f.Category == compare.Latency && (f.Suspect != compare.WhyMachineBusy || f.FailsGate) {
			t.Errorf("busy machine: latency finding %+v", f)
		}
	}
}

func orDashF(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f", *p)
}

func readCompareFull(t *testing.T, dir string) *compareFull {
	t.Helper()
	var c compareFull
	b, err := os.ReadFile(filepath.Join(dir, compare.JSONFile))
	if err != nil || json.Unmarshal(b, &c) != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	validJUnit(t, filepath.Join(dir, compare.JUnitFile))
	return &c
}

// The mix change: the long prompt answered in 3 chunks in the
// base run (too few for a tokens/s figure) and in 12 over the same time
// in the new run, so it gained a tokens/s rate far below the short
// prompts' at an unchanged speed. Pooled, the group's tokens/s fell by
// three quarters; like with like there is no speed finding, the exit is
// 0, and the prompt is said to have entered the pool.
func TestGateMixChange(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bench twice against a delaying server")
	}
	serialTest(t)
	short := promptPlay{ttft: 40 * time.Millisecond, chunks: 10, gap: 5 * time.Millisecond, tokens: 10}
	g := newGateServer(t, short)
	dir := t.TempDir()
	cfg := gateE2EConfig(g.URL, 6)
	g.set(short, map[string]promptPlay{"long": {ttft: 40 * time.Millisecond, chunks: 3, gap: 120 * time.Millisecond, tokens: 12}})
	if code, out, errs := benchRun(t, dir, cfg, mixPrompts, "base"); code != 0 {
		t.Fatalf("base: exit %d\n%s%s", code, out, errs)
	}
	g.set(short, map[string]promptPlay{"long": {ttft: 40 * time.Millisecond, chunks: 12, gap: 240 * time.Millisecond / 11, tokens: 12}})
	if code, out, errs := benchRun(t, dir, cfg, mixPrompts, "new"); code != 0 {
		t.Fatalf("new: exit %d\n%s%s", code, out, errs)
	}
	base, cur := filepath.Join(dir, "runs", "base"), filepath.Join(dir, "runs", "new")
	// The runs are what the case needs: the long prompt has no tokens/s
	// in the base run and a slow one in the new.
	tps := func(run string) map[string]int {
		n := map[string]int{}
		results.ReadFile(filepath.Join(run, "results.jsonl"), true, func(_ int, r *results.Record) error {
			if r.TokensPerS != nil {
				n[r.PromptID]++
			}
			return nil
		})
		return n
	}
	if b, n := tps(base), tps(cur); b["LONG"] != 0 || n["LONG"] != 6 || b["S0"] != 6 {
		t.Fatalf("tokens/s samples: base %v, new %v", b, n)
	}
	code, out, errs := benchExec(t, "compare", base, cur)
	c := readCompareFull(t, filepath.Join(cur, rundir.CompareDir))
	if code != exitcode.OK {
		t.Errorf("exit %d\n%s%s", code, out, errs)
	}
	if c.busy(0) {
		c.busyOutcome(t, 0)
	} else {
		for _, f := range c.Findings {
			if f.Category == compare.Latency {
				t.Errorf("speed finding on a mix change: %s", f.Message)
			}
		}
		if v := c.Groups[0].Latency[compare.MetricTPS]; v.Change == "not_judged" || v.Strata != 3 {
			t.Errorf("tokens/s %+v", v)
		}
	}
	if len(c.Groups[0].Pool[compare.MetricTPS].Entered) != 1 {
		t.Errorf("pool %+v", c.Groups[0].Pool)
	}
	if !strings.Contains(out, "entered the pool (samples in the new run only): LONG") || !strings.Contains(out, "tokens_per_s") {
		t.Errorf("stdout:\n%s", out)
	}
}

// The cold catch-all case: an OpenAI-compatible server whose /api/ps is a
// catch-all 200. bench asks once, stops with one warning, flags no cell
// cold, and a 60 % slower TTFT (100 → 160 ms, 32 cells a side) is judged
// a regression; under --require-judged latency the gate still fails. The
// verdict line never says "no regression" without counting what it did
// not judge.
func TestGateColdCatchAll(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bench twice against a delaying server")
	}
	serialTest(t)
	play := func(ttft time.Duration) promptPlay {
		return promptPlay{ttft: ttft, chunks: 8, gap: 4 * time.Millisecond, tokens: 8}
	}
	g := newGateServer(t, play(100*time.Millisecond))
	g.psCatchAll = true
	dir := t.TempDir()
	cfg := gateE2EConfig(g.URL, 8)
	code, out, errs := benchRun(t, dir, cfg, mixPrompts, "base")
	if code != 0 {
		t.Fatalf("base: exit %d\n%s%s", code, out, errs)
	}
	if strings.Count(errs, "which models the server holds is not asked any more") != 1 || !strings.Contains(errs, `no \"models\" in the answer`) && !strings.Contains(errs, `no "models" in the answer`) {
		t.Errorf("one warning about /api/ps expected; stderr:\n%s", errs)
	}
	g.mu.Lock()
	calls := g.psCalls
	g.mu.Unlock()
	if calls != 1 {
		t.Errorf("/api/ps asked %d times, want once", calls)
	}
	g.set(play(160*time.Millisecond), nil)
	if code, out, errs := benchRun(t, dir, cfg, mixPrompts, "new"); code != 0 {
		t.Fatalf("new: exit %d\n%s%s", code, out, errs)
	}
	base, cur := filepath.Join(dir, "runs", "base"), filepath.Join(dir, "runs", "new")
	cold := 0
	results.ReadFile(filepath.Join(cur, "results.jsonl"), true, func(_ int, r *results.Record) error {
		if r.ColdStart {
			cold++
		}
		return nil
	})
	if cold != 0 {
		t.Errorf("%d cells flagged cold on a server that never said what it holds", cold)
	}
	for _, args := range [][]string{{}, {"--require-judged", "latency"}} {
		outDir := filepath.Join(dir, "cmp"+strings.Join(args, ""))
		code, out, errs := benchExec(t, append(append([]string{"compare", "--out", outDir}, args...), base, cur)...)
		c := readCompareFull(t, outDir)
		if c.busy(0) {
			// The catch-all case is the cold flag's: it holds on a busy
			// machine too; the latency verdict is the machine's.
			c.busyOutcome(t, 0)
			if want := map[bool]int{true: exitcode.Regression, false: exitcode.OK}[len(args) > 0]; code != want {
				t.Errorf("%v on a busy machine: exit %d, want %d\n%s", args, code, want, out)
			}
			continue
		}
		if code != exitcode.Regression || c.Verdict != compare.VerdictRegression {
			t.Errorf("%v: exit %d, verdict %s\n%s%s", args, code, c.Verdict, out, errs)
		}
		if v := c.Groups[0].Latency[compare.MetricTTFT]; v.Change != "regression" || c.Judgement[compare.MetricTTFT].Judged == 0 {
			t.Errorf("%v: ttft %+v", args, v)
		}
		if line := verdictOf(out); strings.Contains(line, "no regression") || !strings.Contains(line, "comparisons") {
			t.Errorf("%v: verdict line %q", args, line)
		}
		if !strings.Contains(out, "ttft_ms 10") || !strings.Contains(out, "95 % CI") {
			t.Errorf("%v: no benchstat-style TTFT figure:\n%s", args, out)
		}
	}
}

// verdictOf is the terminal's verdict line.
func verdictOf(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "verdict: ") {
			return l
		}
	}
	return ""
}

// burn starts n processes spinning on a core each, outside this test
// process's tree: the test's gate server is the run's model server, and
// bench takes the server's process tree off "other work", so a child
// of this process would count as the server. Each spinner is started by a
// shell that exits at once, leaving it to init.
func burn(t *testing.T, n int) (stop func()) {
	var pids []int
	for range n {
		out, err := exec.Command("sh", "-c", "sh -c 'while :; do :; done' >/dev/null 2>&1 & echo $!").Output()
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatalf("burner pid %q: %v", out, err)
		}
		pids = append(pids, pid)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	t.Cleanup(stop)
	return stop
}

// The busy machine (issue 32): the new run's suite ran with three
// processes spinning beside it on the machine's cores and a slower
// server. The sampler finds the machine busy (other work on half the
// cores or more, or risen by half a core) whatever the machine did
// before, so the outcome is the same on a quiet machine and a loaded one:
// the latency regressions are not judged ("machine busy"), listed with
// both runs' figures, and the exit is 0; with --fail-on-suspect they fail
// the gate (exit 3). Quality is judged as ever.
func TestGateMachineLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bench against a delaying server")
	}
	serialTest(t)
	play := func(ttft time.Duration) promptPlay {
		return promptPlay{ttft: ttft, chunks: 8, gap: 5 * time.Millisecond, tokens: 8}
	}
	g := newGateServer(t, play(100*time.Millisecond))
	dir := t.TempDir()
	cfg := gateE2EConfig(g.URL, 8)
	if code, out, errs := benchRun(t, dir, cfg, mixPrompts, "base"); code != 0 {
		t.Fatalf("base: exit %d\n%s%s", code, out, errs)
	}
	g.set(play(200*time.Millisecond), nil)
	stop := burn(t, 3)
	time.Sleep(300 * time.Millisecond)
	code, out, errs := benchRun(t, dir, cfg, mixPrompts, "new")
	stop()
	if code != 0 {
		t.Fatalf("new: exit %d\n%s%s", code, out, errs)
	}
	base, cur := filepath.Join(dir, "runs", "base"), filepath.Join(dir, "runs", "new")
	t.Logf("other work (%% of a core, base -> new): %.0f -> %.0f", otherLoad(t, base), otherLoad(t, cur))
	if md, _ := os.ReadFile(filepath.Join(cur, rundir.SummaryMD)); !strings.Contains(string(md), "ollama_openai/gate: the machine was busy during its suite (") {
		t.Errorf("summary.md does not say the machine was busy:\n%.800s", md)
	}
	code, out, errs = benchExec(t, "compare", "--out", filepath.Join(dir, "cmp"), base, cur)
	c := readCompareFull(t, filepath.Join(dir, "cmp"))
	if code != exitcode.OK || c.Verdict != compare.VerdictOK || !c.busy(0) {
		t.Fatalf("exit %d, verdict %s, busy %v\n%s%s", code, c.Verdict, c.busy(0), out, errs)
	}
	c.busyOutcome(t, 0)
	suspect := 0
	for _, f := range c.Findings {
		if f.Category == compare.Latency && strings.Contains(f.Message, "other work") && strings.Contains(f.Message, "cores new") {
			suspect++
		}
	}
	if suspect == 0 {
		t.Errorf("no latency regression listed with the machine's figures: %+v", c.Findings)
	}
	if !strings.Contains(out, "not judged (machine busy)") || !strings.Contains(verdictOf(out), "machine busy") || !strings.Contains(out, "other work (busiest suite)") {
		t.Errorf("stdout:\n%s", out)
	}
	code, out, _ = benchExec(t, "compare", "--fail-on-suspect", "--out", filepath.Join(dir, "cmp2"), base, cur)
	if c2 := readCompareFull(t, filepath.Join(dir, "cmp2")); code != exitcode.Regression || c2.Verdict != compare.VerdictRegression {
		t.Errorf("--fail-on-suspect: exit %d, verdict %s\n%s", code, c2.Verdict, out)
	}
}

// otherLoad is the CPU other work used during the run's one suite, from
// its resource file, in percent of a core (-1 when not measured).
func otherLoad(t *testing.T, run string) float64 {
	t.Helper()
	rec, err := rundir.ReadSuite(run, "ollama_openai", "gate", nil)
	if err != nil || rec == nil || rec.Peak == nil || rec.Peak.OtherCPUPercentMean == nil {
		t.Fatalf("%s: no other-work figure: %v", run, err)
	}
	return *rec.Peak.OtherCPUPercentMean
}

// bench history over real runs: three runs of bench against the server,
// a directory that is not a run and a run whose summary.json is gone.
// history.json holds the runs in order with their series, the broken run
// is named in a warning and skipped, and the gate is NOT JUDGED (exit 7):
// three runs are too few for any change point, and it says so, with the
// runs it has and the runs it needs. No verdict here rests on the
// latencies measured.
func TestHistoryRealRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bench against a delaying server")
	}
	serialTest(t)
	g := newGateServer(t, promptPlay{ttft: 20 * time.Millisecond, chunks: 6, gap: 2 * time.Millisecond, tokens: 6})
	dir := t.TempDir()
	cfg := gateE2EConfig(g.URL, 2)
	for _, id := range []string{"n1", "n2", "n3", "n4"} {
		if code, out, errs := benchRun(t, dir, cfg, mixPrompts, id); code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", id, code, out, errs)
		}
	}
	runs := filepath.Join(dir, "runs")
	os.Remove(filepath.Join(runs, "n4", rundir.SummaryJSON))
	os.MkdirAll(filepath.Join(runs, "scratch"), 0o755)
	code, out, errs := benchExec(t, "history", "--fail-on-change", "latency", "--since", "3", runs)
	if code != exitcode.HistoryNotJudged {
		t.Fatalf("exit %d, want 5 (not judged)\n%s%s", code, out, errs)
	}
	for _, want := range []string{"bench history: 3 runs, n1", "scratch: not a run directory", "n4: no summary.json",
		"verdict: NOT JUDGED: too few runs for --fail-on-change latency: a change point needs 6 runs (--min-runs 3 on each side), the longest series has 3",
		"no change point can be found yet: 3 runs, a change point needs 6",
		"history.json and history.html in " + filepath.Join(runs, "history")} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	var h struct {
		Runs []struct {
			ID string `json:"run_id"`
		} `json:"runs"`
		Series []struct {
			Metric string `json:"metric"`
			Points []struct {
				Run   int     `json:"run"`
				Value float64 `json:"value"`
			} `json:"points"`
		} `json:"series"`
	}
	b, err := os.ReadFile(filepath.Join(runs, "history", "history.json"))
	if err != nil || json.Unmarshal(b, &h) != nil {
		t.Fatal(err)
	}
	ttft := 0
	for _, s := range h.Series {
		if s.Metric == "ttft_ms_p50" && len(s.Points) == 3 && s.Points[0].Value >= 20 {
			ttft++
		}
	}
	if len(h.Runs) != 3 || h.Runs[0].ID != "n1" || h.Runs[2].ID != "n3" || ttft != 1 {
		t.Errorf("history.json: runs %+v, ttft series %d", h.Runs, ttft)
	}
	if code, _, errs := benchExec(t, "history", "--fail-on-change", "latncy", runs); code != exitcode.Usage || !strings.Contains(errs, `"latncy"`) {
		t.Errorf("bad metric: exit %d %s", code, errs)
	}
}

// A server that answers /api/ps as an Ollama holding no model: proven
// cold, every cell is flagged so. bench run says the group was mostly
// cold, summary.md heads with it, and compare says latency was not judged
// (all cold) and counts it in the verdict line.
func TestGateAllCold(t *testing.T) {
	if testing.Short() {
		t.Skip("runs bench against a delaying server")
	}
	serialTest(t)
	g := newGateServer(t, promptPlay{ttft: 20 * time.Millisecond, chunks: 6, gap: 2 * time.Millisecond, tokens: 6})
	dir := t.TempDir()
	cfg := gateE2EConfig(g.URL, 2)
	if code, out, errs := benchRun(t, dir, cfg, mixPrompts, "base"); code != 0 {
		t.Fatalf("base: exit %d\n%s%s", code, out, errs)
	}
	g.mu.Lock()
	g.psEmpty = true
	g.mu.Unlock()
	code, out, errs := benchExec(t, "run", "--config", filepath.Join(dir, "bench.yaml"), "--run-id", "cold")
	if code != 0 || !strings.Contains(errs, "bench: warning: ollama_openai/gate: 8 of 8 cells that reached the model were cold starts") {
		t.Fatalf("exit %d; stderr:\n%s%s", code, errs, out)
	}
	base, cur := filepath.Join(dir, "runs", "base"), filepath.Join(dir, "runs", "cold")
	sum, _ := os.ReadFile(filepath.Join(cur, rundir.SummaryMD))
	if !strings.Contains(string(sum), "**Warning:** ollama_openai/gate: 8 of 8 cells") {
		t.Errorf("summary.md does not say the group was cold:\n%.600s", sum)
	}
	code, out, _ = benchExec(t, "compare", base, cur)
	c := readCompareFull(t, filepath.Join(cur, rundir.CompareDir))
	if v := c.Groups[0].Latency[compare.MetricTTFT]; code != exitcode.OK || v.NotJudged != compare.WhyAllCold || !strings.Contains(verdictOf(out), "all cold") {
		t.Errorf("exit %d, ttft %+v, verdict %q", code, v, verdictOf(out))
	}
	if code, out, _ = benchExec(t, "compare", "--require-judged", "latency", "--out", filepath.Join(dir, "cmp"), base, cur); code != exitcode.Regression ||
		!strings.HasPrefix(verdictOf(out), "verdict: NOT JUDGED") {
		t.Errorf("--require-judged latency: exit %d, %q", code, verdictOf(out))
	}
}

// serialEnv is how scripts/test.sh tells the tests that measure latency
// end to end where they run: "later" in its parallel pass (they skip,
// saying so), "now" in the serial pass after it, alone on the machine.
// Unset (a plain go test), they run where they are.
const serialEnv = "BENCH_SERIAL_TESTS"

// serialTest marks a test whose verdict rests on latency measured by real
// processes: beside other packages' tests on 2 cores, the machine's load
// moves between two runs by more than the gate's threshold, which is a
// real shift the gate rightly reports.
func serialTest(t *testing.T) {
	t.Helper()
	if os.Getenv(serialEnv) == "later" {
		t.Skip("measures latency end to end: scripts/test.sh runs it in its serial pass, alone on the machine")
	}
}

// Every test that skips in scripts/test.sh's parallel pass (serialTest)
// is one its serial pass selects: none is left out of both.
func TestSerialPassRunsEverySerialTest(t *testing.T) {
	script, err := os.ReadFile("../../scripts/test.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(serialEnv + `=now go test [^\n]*-run '([^']+)'`).FindSubmatch(script)
	if m == nil {
		t.Fatalf("scripts/test.sh has no serial pass (%s=now go test ... -run '...')", serialEnv)
	}
	pass := regexp.MustCompile(string(m[1]))
	files, _ := filepath.Glob("*_test.go")
	found := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, fn := range strings.Split(string(src), "\nfunc ")[1:] {
			body, _, _ := strings.Cut(fn, "\n}\n")
			name, _, _ := strings.Cut(body, "(")
			if !strings.HasPrefix(name, "Test") || !strings.Contains(body, "\tserialTest(t)\n") {
				continue
			}
			found++
			if !pass.MatchString(name) {
				t.Errorf("%s: %s skips in the parallel pass, and the serial pass (-run '%s') does not select it", f, name, m[1])
			}
		}
	}
	if found < 5 {
		t.Errorf("found %d serial tests, want the gate's, the recipe's and the latency ones", found)
	}
}
