package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

func TestDist(t *testing.T) {
	dist := func(xs ...float64) Dist {
		e := &exact{}
		for _, x := range xs {
			e.Add(x)
		}
		e.Stats()
		return e.Dist()
	}
	d := dist(50, 15, 40, 20, math.NaN(), 35, math.Inf(1))
	// The hand-computed figures below: p95 = 48, p99 = 49.6; NaN and Inf dropped.
	if d.N != 5 || d.Q[0] != 15 || d.Q[50] != 35 || d.Q[95] != 48 || d.Q[99] != 49.6 || d.Q[100] != 50 {
		t.Errorf("dist %+v", d)
	}
	if d := dist(); d.N != 0 || d.Q != nil {
		t.Errorf("empty: %+v", d)
	}
	// Held as float64 after a fraction: the same quantiles.
	if d := dist(50, 15, 40, 20, 35.5); d.Q[50] != 35.5 || d.Q[100] != 50 {
		t.Errorf("float dist %+v", d)
	}
}

func TestPercentileHandComputed(t *testing.T) {
	tests := []struct {
		xs            []float64
		p50, p95, p99 float64
		mean          float64
	}{
		// h = (n-1)p: n=5, p95 -> h=3.8 -> 40 + 0.8*(50-40) = 48; p99 -> h=3.96 -> 49.6.
		{[]float64{50, 15, 40, 20, 35}, 35, 48, 49.6, 32},
		// n=4: p50 -> h=1.5 -> 2.5; p95 -> h=2.85 -> 3.85; p99 -> h=2.97 -> 3.97.
		{[]float64{4, 3, 2, 1}, 2.5, 3.85, 3.97, 2.5},
		// n=1: every percentile is the value.
		{[]float64{7}, 7, 7, 7, 7},
		// n=2: p95 -> h=0.95 -> 100 + 0.95*100 = 195.
		{[]float64{100, 200}, 150, 195, 199, 150},
		// Whole values held as int32 until a fraction: then all as float64.
		{[]float64{3, 1, 2.5, 4}, 2.75, 3.85, 3.97, 2.625},
		// Past int32: held as float64 from the start of it.
		{[]float64{1, 3e9, 2}, 2, 2700000000.2, 2940000000.04, 1e9 + 1},
	}
	for _, tt := range tests {
		e := &exact{}
		for _, x := range tt.xs {
			e.Add(x)
		}
		s := e.Stats()
		for _, c := range []struct {
			name string
			got  *float64
			want float64
		}{{"p50", s.P50, tt.p50}, {"p95", s.P95, tt.p95}, {"p99", s.P99, tt.p99}, {"mean", s.Mean, tt.mean}} {
			if c.got == nil || math.Abs(*c.got-c.want) > 1e-9 {
				t.Errorf("%v %s = %v, want %v", tt.xs, c.name, c.got, c.want)
			}
		}
	}
	if s := (&exact{}).Stats(); s.P50 != nil || s.Mean != nil {
		t.Errorf("no values: %+v, want nulls", s)
	}
	e := &exact{}
	e.Add(math.NaN())
	e.Add(math.Inf(1))
	if s := e.Stats(); s.P50 != nil {
		t.Errorf("NaN/Inf must not count: %+v", s)
	}
}

func TestTierBoundaries(t *testing.T) {
	tests := []struct {
		succeeded, counted int
		want               string
	}{
		{4, 5, Tier1}, {8, 10, Tier1}, {79, 100, Tier2}, {1, 2, Tier2}, {49, 100, Tier3}, {0, 3, Tier3}, {0, 0, Unclassified},
		// 0.7996 rounds to 0.8 but is not Tier 1.
		{1999, 2500, Tier2},
	}
	for _, tt := range tests {
		tr := Tier{NSucceeded: tt.succeeded, NCounted: tt.counted}
		tr.classify()
		if tr.Tier != tt.want {
			t.Errorf("%d/%d: %s, want %s", tt.succeeded, tt.counted, tr.Tier, tt.want)
		}
	}
}

func TestNaturalLess(t *testing.T) {
	ids := []string{"P10", "P2", "P0", "P1b", "P1", "Q", "P02x"}
	want := "P0 P1 P1b P2 P02x P10 Q"
	sortStrings(ids)
	if got := strings.Join(ids, " "); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && naturalLess(s[j], s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func loadFixture(t *testing.T) *Summary {
	t.Helper()
	s, err := LoadEach("testdata/run1", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.GeneratedAt = time.Date(2026, 2, 14, 0, 5, 0, 0, time.UTC)
	return s
}

func group(t *testing.T, s *Summary, model string) *Group {
	t.Helper()
	for _, g := range s.Groups {
		if g.Model == model {
			return g
		}
	}
	t.Fatalf("no group %s", model)
	return nil
}

func TestLoadCountsAndRates(t *testing.T) {
	s := loadFixture(t)
	if s.RunID != "20260213_235930" || s.NRecords != 21 || s.NSkippedLines != 2 {
		t.Fatalf("run %s, %d records, %d skipped", s.RunID, s.NRecords, s.NSkippedLines)
	}
	if p := s.SkippedLines; p[0].Line != 6 || p[0].Truncated || p[1].Line != 23 || !p[1].Truncated {
		t.Errorf("skipped lines %+v", p)
	}

	l := group(t, s, "llama3.2:3b")
	if l.NTotal != 8 || l.NOK != 7 || l.NSuccess != 6 || l.NError != 1 {
		t.Errorf("llama counts %+v", l)
	}
	// 6 successes of 7 ok; 4 passes of 5 judged (P0 has no check).
	if *l.SuccessRateOK != 0.857 || *l.ObjectivePassRate != 0.8 {
		t.Errorf("llama rates %v %v", *l.SuccessRateOK, *l.ObjectivePassRate)
	}
	// Successful e2e: 800 900 1000 1000 1200 1500 (n=6).
	// p50: h=2.5 -> 1000; p95: h=4.75 -> 1200+0.75*300 = 1425; p99: h=4.95 -> 1485; mean 1066.667.
	if *l.LatencyMS.P50 != 1000 || *l.LatencyMS.P95 != 1425 || *l.LatencyMS.P99 != 1485 || *l.LatencyMS.Mean != 1066.667 {
		t.Errorf("llama latency %+v", fmtStats(l.LatencyMS))
	}
	// wall clock: first start T to last end T+36700.
	if *l.WallClockMS != 36700 {
		t.Errorf("wall clock %d", *l.WallClockMS)
	}
	if l.ResourcesBefore == nil || l.ResourcesPeak == nil || *l.ResourcesPeak.ServerRSS != 2751463424 {
		t.Errorf("resources not read: %+v", l.ResourcesPeak)
	}
	if l.Tier.Tier != Tier2 || l.Tier.NCounted != 2 || l.Tier.NErrorCells != 1 {
		t.Errorf("llama tier %+v", l.Tier)
	}

	c := group(t, s, "claude-sonnet")
	if c.Tier.Tier != Tier1 || c.Tier.NExcluded != 1 || c.Tier.Excluded["rate_limited"] != 1 || c.NRateLimited != 1 {
		t.Errorf("claude tier %+v", c.Tier)
	}
	if c.ResourcesBefore != nil {
		t.Errorf("claude has no resource file, got %+v", c.ResourcesBefore)
	}

	q := group(t, s, "qwen3:4b")
	if q.SuccessRateOK != nil || q.ObjectivePassRate != nil || q.LatencyMS.P50 != nil || q.Tier.Tier != Unclassified || q.NSkippedUnavailable != 4 {
		t.Errorf("qwen: rates must be null and tier unclassified: %+v %+v", q, q.Tier)
	}
	o := group(t, s, "gpt-5-mini")
	if o.NAuthError != 2 || o.Tier.Tier != Unclassified || o.Tier.Excluded["auth_error"] != 1 {
		t.Errorf("openai %+v %+v", o, o.Tier)
	}
}

func fmtStats(s Stats) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestSummaryJSONHasTheSpecFields(t *testing.T) {
	s := loadFixture(t)
	data, err := rundir.MarshalJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	var top struct {
		Groups []map[string]json.RawMessage `json:"groups"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	want := []string{"provider", "model", "thinking_level", "n_total", "n_ok", "n_success", "n_skipped_unavailable",
		"n_rate_limited", "n_error", "success_rate_ok", "objective_pass_rate", "wall_clock_ms", "latency_ms",
		"resources_before", "resources_after",
		// additions
		"n_auth_error", "ttft_ms", "tokens_per_s", "resources_peak",
		// agentic tasks (issue 16)
		"n_agentic", "n_agentic_completed", "task_success_rate", "mean_turns", "n_agentic_calls", "n_wrong_argument_calls",
		"n_unknown_tool_calls", "wrong_argument_rate", "unknown_tool_rate", "n_failed_call_cells", "n_recovered", "recovery_rate",
		"reasoning_tokens_per_s", "n_cold_start", "load_ms",
		// routing (issue 22): the tier with its interval and the verdict,
		// the call checks, task intervals (tasks, k, pass^k and categories
		// only when there are some)
		"tier", "tier_confidence", "n_tool_counted", "n_tool_succeeded", "tool_use_success_rate", "tool_use_success_ci",
		"recommended_for_subagent_routing", "routing_ready", "routing_note", "task_success_ci",
		"n_tool_calls", "n_unsafe_actions", "n_unsafe_cells", "unsafe_action_rate", "n_schema_checked_calls", "n_schema_invalid_calls", "schema_error_rate",
		// cost and tokens (issue 24)
		"input_tokens_total", "cached_input_tokens_total", "output_tokens_total", "reasoning_tokens_total",
		"cost_usd_total", "cost_per_passed_cell", "cost_per_completed_task", "n_cost_known", "cost_missing",
		// serving metrics (issue 26; stages, saturation and goodput only
		// with a load profile or an slo block)
		"itl_ms", "tpot_ms", "prefill_tokens_per_s",
		// the progress line's failed checks (issue 21)
		"n_failed_check",
		// the ranking's evidence (issue 32): the pass rate's counts and
		// interval (the e2e median's interval is latency_ms.p50_ci)
		"n_passed", "n_judged", "objective_pass_ci"}
	for _, g := range top.Groups {
		if len(g) != len(want) {
			t.Errorf("group has %d fields, want %d: %v", len(g), len(want), keys(g))
		}
		for _, k := range want {
			if _, ok := g[k]; !ok {
				t.Errorf("group lacks %s", k)
			}
		}
		var lat map[string]any
		json.Unmarshal(g["latency_ms"], &lat)
		if len(lat) < 4 || len(lat) > 5 || !hasKeys(lat, "p50", "p95", "p99", "mean") || (len(lat) == 5 && !hasKeys(lat, "p50_ci")) {
			t.Errorf("latency_ms = %v", lat)
		}
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func hasKeys(m map[string]any, ks ...string) bool {
	for _, k := range ks {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// TestGolden renders the fixture run and compares the three files with
// testdata/golden; go test ./report -run TestGolden -update rewrites them.
func TestGolden(t *testing.T) {
	s := loadFixture(t)
	dir := t.TempDir()
	if err := Write(dir, s, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"summary.json", "summary.md", "tiers.json"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", "golden", name)
		if *update {
			os.MkdirAll(filepath.Dir(golden), 0o755)
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s (rerun with -update if intended):\n%s", name, golden, diff(string(want), string(got)))
		}
	}
}

// diff shows the first differing lines, enough to see what changed.
func diff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(wl), len(gl)) && shown < 10; i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			shown++
			b.WriteString("line " + itoa(i+1) + ":\n  - " + w + "\n  + " + g + "\n")
		}
	}
	return b.String()
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestMarkdownContent(t *testing.T) {
	s := loadFixture(t)
	var b bytes.Buffer
	if err := WriteMarkdown(&b, s); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"## Ranking", "## Pass matrix", "## Tool-use tiers", "### Recommended for subagent routing",
		"- claude/claude-sonnet (high): not judged: tool-use success 2/2", // the only Tier-1 model, on too few cells
		"expected exactly \"4\", got \"four \\| 4\"",                      // violation text, pipe escaped
		"no complete answer within run.timeout",                           // error text of a failed cell
		"| 4 cells |",                                                     // collapsed skipped cells
		"line 23: truncated last line skipped",
		"| P10 word_limit |", // natural prompt order: P10 after P2
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
	if strings.Index(md, "| P2 tool_free |") > strings.Index(md, "| P10 word_limit |") {
		t.Error("P10 listed before P2")
	}
	// Ranking: claude (pass rate 100%) ranks above llama (80%).
	if !strings.Contains(md, "| 1 | claude |") || !strings.Contains(md, "| 2 | ollama_openai | llama3.2:3b |") {
		t.Errorf("ranking order wrong:\n%s", md[:min(len(md), 2000)])
	}
}

func TestBuildWritesReportsAndWarns(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"results.jsonl", "resources_ollama_openai_llama3.2_3b.json"} {
		data, err := os.ReadFile(filepath.Join("testdata/run1", name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	var warn bytes.Buffer
	if err := build(dir, &warn); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(warn.String(), "line 6: malformed line skipped") || !strings.Contains(warn.String(), "line 23: truncated last line skipped") {
		t.Errorf("warnings:\n%s", warn.String())
	}
	for _, name := range []string{"summary.json", "summary.md", "tiers.json"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	var tiers Tiers
	data, _ := os.ReadFile(filepath.Join(dir, "tiers.json"))
	if err := json.Unmarshal(data, &tiers); err != nil {
		t.Fatal(err)
	}
	// The only Tier-1 group rests on 2 cells: borderline, not recommended.
	if len(tiers.Recommended) != 0 || tiers.Ranking[0].Model != "claude-sonnet" || tiers.Ranking[0].Rank != 1 || *tiers.Ranking[0].TierConfidence != Borderline {
		t.Errorf("tiers %+v", tiers)
	}
	if err := build(t.TempDir(), &warn); err == nil {
		t.Error("no results.jsonl: want an error")
	}
	// A resource file of another suite under this suite's name is a warning, not a failure.
	os.WriteFile(filepath.Join(dir, "resources_claude_claude-sonnet_high.json"), []byte(`{"provider":"x","model":"y"}`), 0o644)
	warn.Reset()
	if err := build(dir, &warn); err != nil || !strings.Contains(warn.String(), "belongs to x/y") {
		t.Errorf("err %v, warnings:\n%s", err, warn.String())
	}
}

func TestWriteTable(t *testing.T) {
	s := loadFixture(t)
	var b bytes.Buffer
	if err := WriteTable(&b, s); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	// Four groups, what a tie means, where the tool-use tier is defined,
	// then why the borderline Tier 1 is not recommended.
	if len(lines) != 8 || !strings.HasPrefix(lines[0], "#") || !strings.Contains(lines[0], "PASS RATE (PASSED/JUDGED, 95% CI)") || !strings.Contains(lines[0], "TOOL-USE TIER") ||
		!strings.HasPrefix(lines[5], "=N: tied.") || !strings.HasPrefix(lines[6], "TOOL-USE TIER: ") ||
		!strings.HasPrefix(lines[7], "claude/claude-sonnet (high): not recommended for routing: not judged") {
		t.Fatalf("table:\n%s", b.String())
	}
	// Ranked first (tied), 6 of 7 answered, the pass rate with its
	// counts and interval, no failed check, no error, 1 not run; Tier 1,
	// not judged for routing.
	if f := strings.Fields(lines[1]); f[0] != "=1" || f[1] != "claude" || f[4] != "6/7" || !strings.Contains(lines[1], "100.0% (4/4, 95% CI [51.0%, 100.0%])") || !strings.Contains(lines[1], "2500 ms (2000–4000)") ||
		f[len(f)-3] != "1" || f[len(f)-2] != "not" || f[len(f)-1] != "judged" {
		t.Errorf("first row %q", lines[1])
	}
	if !strings.Contains(lines[2], "llama3.2:3b") || !strings.Contains(lines[2], "Tier 2") {
		t.Errorf("second row %q", lines[2])
	}
}

func TestSummarizeInMemory(t *testing.T) {
	ok, low := true, "low"
	recs := []results.Record{
		{Provider: "p", Model: "m", ThinkingLevel: &low, AvailabilityStatus: "ok", Success: true, E2EMS: 10, ObjectivePass: &ok, ExpectedTools: []string{"ls"}, ToolUseSuccess: &ok},
		{Provider: "p", Model: "m", AvailabilityStatus: "ok", Success: true, E2EMS: 20},
	}
	s := Summarize(recs)
	if len(s.Groups) != 2 || s.Groups[0].ThinkingLevel != nil || *s.Groups[1].ThinkingLevel != "low" {
		t.Fatalf("groups %+v", s.Groups)
	}
	if s.Groups[1].Tier.Tier != Tier1 || s.Groups[0].Tier.Tier != Unclassified {
		t.Errorf("tiers %s %s", s.Groups[1].Tier.Tier, s.Groups[0].Tier.Tier)
	}
	// Records without wall-clock times give a null wall_clock_ms, not 0.
	if s.Groups[0].WallClockMS != nil {
		t.Errorf("wall clock %v", *s.Groups[0].WallClockMS)
	}
}

// Cold starts count for quality and not for speed; the reasoning rate has
// its own statistics; the suite's warm-up is its load time.
func TestColdStartsAndLoad(t *testing.T) {
	rec := func(prompt string, cold bool, ttft int64, tps, rtps *float64, pass bool) results.Record {
		return results.Record{RecordType: results.RecordType, Provider: "p", Model: "m", PromptID: prompt, AvailabilityStatus: "ok",
			Success: true, E2EMS: ttft * 2, TTFTMS: &ttft, TokensPerS: tps, ReasoningTokensPerS: rtps, ColdStart: cold, ObjectivePass: &pass}
	}
	f := func(v float64) *float64 { return &v }
	records := []results.Record{
		rec("P0", true, 600, f(5), f(1), true), // the load: 600 ms, and a pass
		rec("P1", false, 60, f(50), f(40), false),
		rec("P2", false, 62, f(52), nil, true),
		rec("P3", false, 58, nil, f(44), true),
	}
	s := Summarize(records)
	g := s.Groups[0]
	if g.NColdStart != 1 || g.NSuccess != 4 || *g.ObjectivePassRate != 0.75 {
		t.Errorf("cold %d success %d pass %v: the cold cell counts for quality", g.NColdStart, g.NSuccess, *g.ObjectivePassRate)
	}
	if *g.TTFTMS.P50 != 60 || *g.TTFTMS.P99 > 62 || *g.LatencyMS.P50 != 120 {
		t.Errorf("ttft %s latency %s: the cold cell must be left out", fmtStats(g.TTFTMS), fmtStats(g.LatencyMS))
	}
	if *g.TokensPerS.P50 != 51 || *g.ReasoningTokensPerS.P50 != 42 {
		t.Errorf("tokens/s %s reasoning %s", fmtStats(g.TokensPerS), fmtStats(g.ReasoningTokensPerS))
	}

	dir := t.TempDir()
	w, err := results.Create(rundir.Path(dir, rundir.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for i := range records {
		if err := w.Write(&records[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	if err := rundir.WriteJSON(rundir.Path(dir, rundir.FileBase("p", "m", nil)+".json"), &rundir.SuiteRecord{Provider: "p", Model: "m",
		Warmup: &rundir.Warmup{LoadMS: 254.3216}}); err != nil {
		t.Fatal(err)
	}
	s, err = LoadEach(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if g := s.Groups[0]; g.LoadMS == nil || *g.LoadMS != 254.322 || g.NColdStart != 1 {
		t.Errorf("load %v cold %d", g.LoadMS, g.NColdStart)
	}
	var md strings.Builder
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| p | m | – | 254 ms | 1 | 51.0 |") {
		t.Errorf("summary.md lacks the load and cold-start row:\n%s", md.String())
	}
}

// build rebuilds the summary files of dir as bench report does: Load,
// Warn, Write.
func build(dir string, warn io.Writer) error {
	s, err := LoadEach(dir, nil)
	if err != nil {
		return err
	}
	Warn(warn, s)
	return Write(dir, s, nil)
}

// Two records whose tokens_per_s is 1e308 would sum to +Inf, which
// summary.json cannot hold ("json: unsupported value: +Inf", no line
// named): each such line is skipped as malformed, naming its line and
// field, and the rest of the run is reported.
func TestHugeValueNamesItsLine(t *testing.T) {
	dir := t.TempDir()
	line := func(prompt, field string, v string) string {
		return `{"record_type":"result","provider":"p","provider_type":"ollama","model":"m","thinking_level":null,"prompt_id":"` + prompt +
			`","repetition":0,"availability_status":"ok","e2e_ms":40,"ttft_ms":12,"success":true,"` + field + `":` + v + "}\n"
	}
	data := line("P0", "tokens_per_s", "1e308") + line("P1", "tokens_per_s", "1e308") + line("P2", "tokens_per_s", "50") +
		line("P3", "reasoning_tokens_per_s", "-1e308") + line("P4", "load_ms", "1.7e308")
	os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte(data), 0o644)
	var warn bytes.Buffer
	if err := build(dir, &warn); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"line 1: malformed line skipped: tokens_per_s is 1e+308", "line 2: malformed line skipped: tokens_per_s is 1e+308",
		"line 4: malformed line skipped: reasoning_tokens_per_s is -1e+308", "line 5: malformed line skipped: load_ms is 1.7e+308"} {
		if !strings.Contains(warn.String(), want) {
			t.Errorf("warnings lack %q:\n%s", want, warn.String())
		}
	}
	var s Summary
	b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err := json.Unmarshal(b, &s); err != nil || s.NRecords != 1 || s.NSkippedLines != 4 || *s.Groups[0].TokensPerS.P50 != 50 {
		t.Errorf("summary.json (%v): %s", err, b)
	}
}

// summary.json and tiers.json are streamed a group at a time, and read
// byte for byte as encoding them whole does: with groups, with none, and
// with text that JSON escapes.
func TestStreamedJSONMatchesWhole(t *testing.T) {
	dir := t.TempDir()
	writeLargeRun(t, dir, 600)
	s, err := LoadEach(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Groups[0].Model = "<m&\"odel\">\n\u2028"
	s.Warnings = []string{`"groups": null`}
	empty := &Summary{RunID: "e", Groups: []*Group{}, SkippedLines: []results.Problem{}}
	for _, sum := range []*Summary{s, empty} {
		tiers := TierRanking(sum)
		if err := Write(dir, sum, tiers); err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]any{rundir.SummaryJSON: sum, rundir.TiersFile: tiers} {
			want, _ := rundir.MarshalJSON(v)
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s (%d groups) streamed differs from whole:\n%.400s\nwant\n%.400s", name, len(sum.Groups), got, want)
			}
		}
	}
}

// The plotted distributions are kept for exactly the first MaxPlotted
// groups of the ranking (ties broken as Ranked breaks them), and for every
// group of a smaller run.
func TestDistsOfTheFirstRankedGroups(t *testing.T) {
	for _, n := range []int{MaxPlotted - 1, 3*MaxPlotted + 17} {
		dir := t.TempDir()
		writeDistinctRun(t, dir, n)
		s, err := LoadEach(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range Ranked(s) {
			if (g.Dists != nil) != (i < MaxPlotted) {
				t.Fatalf("%d groups: rank %d (%s) has dists %v", n, i+1, g.Label(), g.Dists != nil)
			}
			if g.Dists != nil && (g.Dists.LatencyMS.N != 1 || g.Dists.LatencyMS.Q[50] != *g.LatencyMS.P50) {
				t.Errorf("%s: latency dist %+v, p50 %v", g.Label(), g.Dists.LatencyMS, *g.LatencyMS.P50)
			}
		}
	}
}
