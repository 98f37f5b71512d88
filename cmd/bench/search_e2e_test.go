package main

import (
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"bench/cmd/fakellm/loadserver"
	"bench/internal/record/results"
	"bench/internal/record/slo"
)

// searchService is the fake server of the search test: 50 ms to the first
// token, 16 tokens 10 ms apart: each request holds its slot 200 ms.
var searchService = loadserver.Service{TTFT: 50 * time.Millisecond, Gap: 10 * time.Millisecond, Tokens: 16, Exact: true}

// The SLO search's Done-when: against three fake servers of known
// capacity (4, 8 and 16 slots of 200 ms: 20, 40 and 80 requests/s), run
// by the real binary, each search lands within 5 % of the true limit in at
// most 8 stages. The true limit is computed from the server's rule
// (loadserver.Service.Waits on the constant schedule bench sends: a
// request meets the SLO when its wait for a slot plus the 50 ms TTFT is
// within the 150 ms limit) and the search's own verdict (slo.Search.Judge
// at attainment 0.9): the highest rate, in steps of 0.05 %, whose stage
// would pass. The servers queue on their arrival clock (Exact: a late
// wake-up of the busy machine delays a write, never the queue, so their
// capacity is exact), and the SLO's margin is long against the machine's
// stalls (100 ms; a stage may lose 5 of its 120 requests to them and
// still pass), so a busy 2-core machine does not move the verdicts; the
// test asserts counts and brackets, never wall time. summary.json's stages
// are recounted from results.jsonl, summary.md and report.html (in
// Chromium) show the limit, and bench compare of the run against itself
// judges the limit unchanged.
func TestSLOSearchFindsTheLimit(t *testing.T) {
	serialTest(t)
	var urls []string
	for _, slots := range []int{4, 8, 16} {
		svc := searchService
		svc.Slots = slots
		hs := httptest.NewServer(loadserver.New(svc, nil))
		t.Cleanup(hs.Close)
		urls = append(urls, hs.URL)
	}
	cfg := fmt.Sprintf(`run: {warmup: false, timeout: 60s}
slo:
  ttft_ms: 150
load:
  requests: 120
  arrival: constant
  search: {rate: auto, attainment: 0.9, tolerance: 0.03}
prompts:
  synthetic: {input_tokens: [16], output_tokens: 16}
providers:
  - {name: slots4, type: ollama_openai, base_url: "%s/v1", models: [fake]}
  - {name: slots8, type: ollama_openai, base_url: "%s/v1", models: [fake]}
  - {name: slots16, type: ollama_openai, base_url: "%s/v1", models: [fake]}
`, urls[0], urls[1], urls[2])
	code, stdout, stderr, recs, dir := runBench(t, cfg)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	run := filepath.Join(dir, "runs", "e2e")
	sum := readSummary(t, run)
	sr := &slo.Search{Attainment: 0.9, Tolerance: 0.03}
	sr.Defaults()
	limit := &slo.SLO{TTFTMS: &slo.Target{PerRequest: ptrF(150)}}
	for _, slots := range []int{4, 8, 16} {
		name := fmt.Sprintf("slots%d", slots)
		g := groupOf(t, sum, name)
		ss := g.SLOSearch
		if ss == nil {
			t.Fatalf("%s: no slo_search in summary.json", name)
		}
		svc := searchService
		svc.Slots = slots
		want := trueLimit(sr, svc, 120, 150*time.Millisecond)
		if !ss.Found || !ss.Converged || ss.Limit == nil {
			t.Errorf("%s: search %+v", name, ss)
			continue
		}
		errPct := 100 * (*ss.Limit/want - 1)
		t.Logf("%s (capacity %g/s): true limit %.2f/s, found %.2f/s in [%.2f, %.2f] (%+.1f %%), %d stages, first failed %s: %s",
			name, float64(slots)/0.2, want, *ss.Limit, *ss.Bracket[0], *ss.Bracket[1], errPct, ss.StagesUsed, ss.FirstFailed.Stage, strings.Join(ss.FirstFailed.Targets, "; "))
		if math.Abs(errPct) > 5 {
			t.Errorf("%s: limit %.2f, true %.2f: %+.1f %%", name, *ss.Limit, want, errPct)
		}
		if ss.StagesUsed > 8 || len(ss.Stages) != ss.StagesUsed {
			t.Errorf("%s: %d stages used (%d listed)", name, ss.StagesUsed, len(ss.Stages))
		}
		if ss.FirstFailed == nil || !strings.Contains(strings.Join(ss.FirstFailed.Targets, ";"), "ttft_ms ≤ 150") {
			t.Errorf("%s: first failed %+v", name, ss.FirstFailed)
		}
		// Each stage's n and attainment are its cells' in results.jsonl.
		for _, st := range ss.Stages {
			var tl slo.Tally
			for j := range recs {
				if r := &recs[j]; r.Provider == name && r.Stage == st.Stage {
					tl.Add(limit, r)
				}
			}
			pass, _, _ := sr.Judge(tl)
			if st.N != tl.Sent || st.Good != tl.Good || st.N != 120 || (st.Passed != pass && !st.Probe) {
				t.Errorf("%s %s: summary n %d good %d passed %v; results.jsonl %d, %d, %v", name, st.Stage, st.N, st.Good, st.Passed, tl.Sent, tl.Good, pass)
			}
		}
		// The stages the search did not need are recorded, not sent.
		notRun := 0
		for j := range recs {
			if r := &recs[j]; r.Provider == name && r.FailureType != nil && *r.FailureType == results.FailSearchDone {
				notRun++
			}
		}
		if notRun != (ss.MaxStages-ss.StagesUsed)*120 {
			t.Errorf("%s: %d cells search_done, want %d", name, notRun, (ss.MaxStages-ss.StagesUsed)*120)
		}
	}
	md, err := os.ReadFile(filepath.Join(run, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(md), "**SLO search**"); n != 3 || !strings.Contains(string(md), "First failed: ") {
		t.Errorf("summary.md has %d SLO search lines:\n%s", n, md)
	}
	if !strings.Contains(stderr+stdout, "SLO search: ") {
		t.Errorf("the run's log does not say what the searches found:\n%s\n%s", stdout, stderr)
	}
	checkSearchPage(t, run)
	code, out, errs := benchExec(t, "compare", run, run)
	if code != 0 || !strings.Contains(out, "SLO limit") {
		t.Errorf("compare of the run with itself: exit %d\n%s%s", code, out, errs)
	}
	c := readCapacityCompare(t, filepath.Join(run, "compare"))
	if j := c.Judgement["slo_limit"]; j == nil || j.Judged != 3 {
		t.Errorf("slo_limit judgement %+v", j)
	}
}

// trueLimit is the highest rate whose stage of n requests, sent at a
// constant rate to the server, the search's judge would pass, scanned in
// steps of 0.05 % from half the server's capacity to twice it.
func trueLimit(sr *slo.Search, svc loadserver.Service, n int, ttft time.Duration) float64 {
	capacity := float64(svc.Slots) / svc.ServiceTime(16, 16).Seconds()
	best := 0.0
	for r := capacity / 2; r < 2*capacity; r *= 1.0005 {
		at := make([]time.Duration, n)
		for i := range at {
			at[i] = time.Duration(float64(i) / r * float64(time.Second))
		}
		tl := slo.Tally{Sent: n}
		for _, w := range svc.Waits(at, 16, 16) {
			if w+svc.TTFT <= ttft {
				tl.Good++
			}
		}
		if ok, _, _ := sr.Judge(tl); ok {
			best = r
		}
	}
	return best
}

// checkSearchPage opens report.html in Chromium: each search's attainment
// plot is drawn with a point per stage (the probe left out) and its limit
// marked, and its table lists the stages.
func checkSearchPage(t *testing.T, run string) {
	p := openReport(t, run)
	var st struct {
		Drawn  []string          `json:"drawn"`
		Points map[string]string `json:"points"`
		Limit  map[string]string `json:"limit"`
		Rows   int               `json:"rows"`
		Text   string            `json:"text"`
	}
	if err := p.Eval(`(() => {
		const pts = {}, lim = {};
		for (const el of document.querySelectorAll("[data-plot^=capacity-search]")) { pts[el.dataset.plot] = el.dataset.points || ""; lim[el.dataset.plot] = el.dataset.limitPx || ""; }
		return {drawn: window.benchReport.plots, points: pts, limit: lim,
			rows: document.querySelectorAll(".search-table tbody tr").length,
			text: [...document.querySelectorAll(".search-result")].map(e => e.innerText).join("\n")};
	})()`, &st); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for i := range 3 {
		name := fmt.Sprintf("capacity-search-%d", i)
		if !slices.Contains(st.Drawn, name) || st.Points[name] == "" || st.Points[name] == "0" || st.Limit[name] == "" {
			t.Errorf("plot %s: drawn %v, %q points, limit at %q", name, slices.Contains(st.Drawn, name), st.Points[name], st.Limit[name])
		}
		var n int
		fmt.Sscan(st.Points[name], &n)
		rows += n + 1 // and the probe's row
	}
	if st.Rows != rows || strings.Count(st.Text, "Limit ") != 3 {
		t.Errorf("search tables: %d rows, want %d; text:\n%s", st.Rows, rows, st.Text)
	}
}

func ptrF(v float64) *float64 { return &v }
