package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/report"
	"bench/report/stats"
)

// testTab interns the strings of every in-memory test run, so that any two
// of them can be judged against each other.
var testTab = newTable()

// memRun is a run read through the same first pass as a run directory,
// from records held in memory (the Monte Carlo tests make thousands).
func memRun(t testing.TB, id string, recs []*results.Record) *runData {
	t.Helper()
	var buf bytes.Buffer
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	r := &runData{dir: id, id: id, index: map[cellKey]int32{}, tab: testTab, prompts: map[string]*promptDef{}}
	for _, p := range defaultPrompts() {
		b, _ := json.Marshal(p)
		var pd promptDef
		json.Unmarshal(b, &pd)
		r.prompts[p.ID] = &pd
	}
	if err := results.NewReader(&buf).Scan(scanOptions, r.add); err != nil {
		t.Fatal(err)
	}
	return r
}

// A group's pass rate and tool-use rate drop is tested with the exact
// McNemar test on the matched cells, and its tier leaves Tier 1: both
// are quality regressions.
func TestGroupRatesAndTier(t *testing.T) {
	memCall := call("get_memory_usage", `{"unit":"MB"}`)
	var base, cur []*results.Record
	for rep := range 12 {
		base = append(base, rec("P1", rep, withCalls([]string{"get_memory_usage"}, memCall)))
		if rep < 3 {
			cur = append(cur, rec("P1", rep, withCalls([]string{"get_memory_usage"}, memCall)))
		} else {
			cur = append(cur, rec("P1", rep, withCalls([]string{"get_memory_usage"}), withOutput("2 GB free")))
		}
	}
	dir := t.TempDir()
	res, err := Compare(writeRun(t, dir, runSpec{id: "base", recs: base}), writeRun(t, dir, runSpec{id: "new", recs: cur}), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Groups) != 1 {
		t.Fatalf("%d groups", len(res.Groups))
	}
	g := res.Groups[0]
	// 9 cells pass -> fail, none fail -> pass: R's binom.test(0, 9)$p.value
	// = 2/512 = 0.00390625; Holm over the 2 quality tests doubles it,
	// below the quality share of alpha (0.025).
	if math.Abs(g.PValue-0.00390625) > 1e-12 || g.PassRate.BaseOnly != 9 || g.PassRate.NewOnly != 0 || g.PassRate.Test != TestMcNemar ||
		math.Abs(g.PassRate.AdjustedP-2*0.00390625) > 1e-12 || *g.BasePassRate != 1 || *g.NewPassRate != 0.25 || !g.PassRate.Significant || g.PassRate.Change != "regression" {
		t.Errorf("pass rate %+v", g.PassRate)
	}
	if g.ToolUse.BaseCount != 12 || g.ToolUse.NewCount != 3 || !g.ToolUse.Significant {
		t.Errorf("tool use %+v", g.ToolUse)
	}
	if g.Tier.Base == nil || *g.Tier.Base != report.Tier1 || *g.Tier.New != report.Tier3 || !g.Tier.LeavesTier1 {
		t.Errorf("tier %+v", g.Tier)
	}
	want := map[string]bool{"pass_rate": true, "tool_use_success": true, "tier": true}
	for _, f := range res.Findings {
		if f.Scope == "group" {
			if !want[f.Metric] || f.Category != Quality || !f.FailsGate {
				t.Errorf("unexpected finding %+v", f)
			}
			delete(want, f.Metric)
		}
	}
	if len(want) > 0 || res.Counts[Regression] != 9 || res.Counts[Match] != 3 {
		t.Errorf("missing group findings %v; counts %v", want, res.Counts)
	}
	if !strings.Contains(mustJSON(res.Findings), "leaves Tier 1, routing must change") {
		t.Errorf("tier finding: %s", mustJSON(res.Findings))
	}
}

// Cells that never reached the model are counted apart per group and are
// not in the pass rate; a tier lost because no tool cell reached the
// model is an availability finding.
func TestInfrastructureApart(t *testing.T) {
	memCall := call("get_memory_usage", `{}`)
	var base, cur []*results.Record
	for rep := range 4 {
		base = append(base, rec("P1", rep, withCalls([]string{"get_memory_usage"}, memCall)))
		cur = append(cur, rec("P1", rep, withCalls([]string{"get_memory_usage"}, memCall),
			status(results.StatusSkippedUnavailable, results.FailConnectionRefused, "refused")))
	}
	res, err := judge(memRun(t, "base", base), memRun(t, "new", cur), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	g := res.Groups[0]
	if g.Infrastructure.New[results.StatusSkippedUnavailable] != 4 || len(g.Infrastructure.Base) != 0 || g.PassRate.BaseN != 0 {
		t.Errorf("infrastructure %+v, pass-rate n %d", g.Infrastructure, g.PassRate.BaseN)
	}
	if *g.Tier.New != report.Unclassified || res.Failing[Availability] != 5 || res.Failing[Quality] != 0 {
		t.Errorf("tier %v, failing %v: %s", *g.Tier.New, res.Failing, mustJSON(res.Findings))
	}
	opt := DefaultOptions()
	opt.FailOn = []string{Quality, Latency}
	if res, _ := judge(memRun(t, "base", base), memRun(t, "new", cur), opt); res.Regressed() {
		t.Errorf("--allow-unavailable: still a regression: %s", mustJSON(res.Findings))
	}
}

// latencyRun is one run of a fixed behaviour with random latencies: each
// cell's TTFT is ttft ms times a jitter factor in [1-jitter, 1+jitter],
// then 20 tokens at perToken ms each, jittered the same way. load adds a
// model load to the run's first cell, not flagged cold_start.
func latencyRun(t testing.TB, rng *rand.Rand, id string, prompts, reps int, ttft, perToken, jitter, load float64) *runData {
	var recs []*results.Record
	for rep := range reps {
		for p := range prompts {
			j := func() float64 { return 1 + jitter*(2*rng.Float64()-1) }
			tt, gen := ttft*j(), 20*perToken*j()
			if len(recs) == 0 {
				tt += load
			}
			r := rec(fmt.Sprintf("Q%d", p), rep)
			ttftMS := int64(math.Round(tt))
			r.TTFTMS, r.E2EMS, r.TokensPerS = &ttftMS, int64(math.Round(tt+gen)), ptr(math.Round(19/(gen/1000)*100)/100)
			recs = append(recs, r)
		}
	}
	return memRun(t, id, recs)
}

func latencyFindings(res *Result) []Finding {
	var out []Finding
	for _, f := range res.Findings {
		if f.Category == Latency {
			out = append(out, f)
		}
	}
	return out
}

// A shift of every latency is found (group and prompt level); the same
// behaviour with jitter is not; a first cell with a model load in one run
// does not make an identical rerun a regression.
func TestLatencyShiftDetected(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := latencyRun(t, rng, "base", 5, 8, 100, 10, 0.3, 0)
	slow := latencyRun(t, rng, "new", 5, 8, 160, 16, 0.3, 0)
	res, err := judge(base, slow, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	g := res.Groups[0]
	for _, m := range []string{MetricTTFT, MetricE2E, MetricTPS} {
		if v := g.Latency[m]; v.Change != stats.Regression || !v.Significant {
			t.Errorf("%s: %s %s", m, v.Change, v.Reason)
		}
	}
	if !res.Regressed() || res.Failing[Latency] < 3 {
		t.Errorf("failing %v", res.Failing)
	}
	if len(g.Prompts) != 5 || g.Prompts[0].Latency[MetricTTFT].NBase != 8 {
		t.Fatalf("per-prompt comparisons: %d", len(g.Prompts))
	}

	same := latencyRun(t, rng, "new", 5, 8, 100, 10, 0.3, 0)
	res, err = judge(base, same, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if f := latencyFindings(res); len(f) > 0 || res.Regressed() {
		t.Errorf("same behaviour flagged: %s", mustJSON(f))
	}

	cold := latencyRun(t, rng, "new", 5, 8, 100, 10, 0.3, 400)
	res, err = judge(base, cold, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if f := latencyFindings(res); len(f) > 0 {
		t.Errorf("a model load in the new run's first cell flagged: %s", mustJSON(f))
	}
	if v := res.Groups[0].Latency[MetricTTFT]; v.Change == stats.Regression {
		t.Errorf("ttft %s", v.Reason)
	}
}

// A cell flagged cold_start: true is left out of the latency samples, and
// still judged for quality.
func TestColdStartExcluded(t *testing.T) {
	var base, cur []*results.Record
	for rep := range 6 {
		base = append(base, rec("P0", rep))
		r := rec("P0", rep)
		cur = append(cur, r)
	}
	cur[0] = rec("P0", 0, latency(900, 1500, 5))
	withCold := memRunRaw(t, "new", cur, 0)
	res, err := judge(memRun(t, "base", base), withCold, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	v := res.Groups[0].Latency[MetricTTFT]
	if v.NCur != 5 || v.NBase != 6 || v.MedianCur != 20 {
		t.Errorf("ttft n %d/%d median %v: the cold cell was counted", v.NBase, v.NCur, v.MedianCur)
	}
	if c := cellOf(t, res, "P0", 0); c.Verdict != Match {
		t.Errorf("cold cell verdict %s", c.Verdict)
	}
}

// memRunRaw is memRun with "cold_start": true added to the given record.
func memRunRaw(t testing.TB, id string, recs []*results.Record, cold int) *runData {
	t.Helper()
	var buf bytes.Buffer
	for i, r := range recs {
		b, _ := json.Marshal(r)
		if i == cold {
			b = append(b[:len(b)-1], []byte(`,"cold_start":true,"load_ms":870}`)...)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	rd := &runData{dir: id, id: id, index: map[cellKey]int32{}, tab: testTab}
	if err := results.NewReader(&buf).Scan(scanOptions, rd.add); err != nil {
		t.Fatal(err)
	}
	return rd
}

// The false-alarm rate of the latency gate, measured: many comparisons of
// two runs of the same behaviour with latencies jittered by ±40 % (the
// first cell of the base run, or of the new run, carrying an unflagged
// 300 ms model load in two trials of three), 5 prompts × 6 repetitions a
// side. The rate of compares raising any latency regression must stay at
// or below alpha, with the defaults and with the threshold and floor off
// (the statistics alone); a 30 % slower server at the same sizes must be
// found. The rates are logged (go test -v -run FalseAlarm).
func TestLatencyFalseAlarmRate(t *testing.T) {
	trials := 600
	if testing.Short() {
		trials = 150
	}
	rng := rand.New(rand.NewPCG(7, 11))
	bare := DefaultOptions()
	bare.LatencyThreshold, bare.LatencyFloorMS, bare.TokensPerSFloor = 0, 0, 0
	var alarms, bareAlarms, shiftFound int
	for i := range trials {
		baseLoad, newLoad := 0.0, 0.0
		switch i % 3 {
		case 0:
			baseLoad = 300
		case 1:
			newLoad = 300
		}
		base := latencyRun(t, rng, "base", 5, 6, 100, 10, 0.4, baseLoad)
		cur := latencyRun(t, rng, "new", 5, 6, 100, 10, 0.4, newLoad)
		for _, c := range []struct {
			opt Options
			n   *int
		}{{DefaultOptions(), &alarms}, {bare, &bareAlarms}} {
			res, err := judge(base, cur, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(latencyFindings(res)) > 0 {
				*c.n++
			}
		}
		if i%10 == 0 { // power at the same sizes: a 30 % slower server
			slow := latencyRun(t, rng, "new", 5, 6, 130, 13, 0.4, 0)
			res, _ := judge(base, slow, DefaultOptions())
			if res.Failing[Latency] > 0 {
				shiftFound++
			}
		}
	}
	rate, bareRate := float64(alarms)/float64(trials), float64(bareAlarms)/float64(trials)
	t.Logf("false-alarm rate over %d same-behaviour comparisons: %.4f with the defaults, %.4f with threshold and floor off (alpha 0.05); a 30%% shift found in %d of %d",
		trials, rate, bareRate, shiftFound, (trials+9)/10)
	if rate > 0.05 {
		t.Errorf("defaults: false-alarm rate %.4f > alpha 0.05", rate)
	}
	if bareRate > 0.05 {
		t.Errorf("statistics alone: false-alarm rate %.4f > alpha 0.05", bareRate)
	}
	if shiftFound < (trials+9)/10*9/10 {
		t.Errorf("a 30%% shift found in only %d of %d comparisons", shiftFound, (trials+9)/10)
	}
}

// Each prompt category of a group is judged like the group: its pass rate
// base against new with a Fisher test, Holm-adjusted over all categories,
// a significant drop a quality finding at category scope; a category that
// held is unflagged.
func TestCategoryRates(t *testing.T) {
	cat := func(c string) func(*results.Record) { return func(r *results.Record) { r.Category = c } }
	var base, cur []*results.Record
	for rep := range 12 {
		base = append(base, rec("P0", rep, cat("simple")), rec("P1", rep, cat("irrelevance")))
		if rep < 2 {
			cur = append(cur, rec("P0", rep, cat("simple")))
		} else {
			cur = append(cur, rec("P0", rep, cat("simple"), failing("BFCL value_error:others")))
		}
		cur = append(cur, rec("P1", rep, cat("irrelevance")))
	}
	dir := t.TempDir()
	res, err := Compare(writeRun(t, dir, runSpec{id: "base", recs: base}), writeRun(t, dir, runSpec{id: "new", recs: cur}), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	g := res.Groups[0]
	if len(g.Categories) != 2 || g.Categories[0].Category != "irrelevance" || g.Categories[1].Category != "simple" {
		t.Fatalf("categories %s", mustJSON(g.Categories))
	}
	irr, simple := g.Categories[0], g.Categories[1]
	// 10 matched cells pass -> fail and none the other way: the exact
	// McNemar p is 2/2^10 = 0.001953125; Holm over the compare's 3 quality
	// tests (the group's pass rate and the 2 categories') triples it.
	if simple.BaseCount != 12 || simple.NewCount != 2 || simple.Change != "regression" || !simple.Significant || math.Abs(simple.AdjustedP-3*simple.PValue) > 1e-12 {
		t.Errorf("simple %+v", simple.RateTest)
	}
	if math.Abs(simple.PValue-0.001953125) > 1e-12 {
		t.Errorf("simple p %.7g", simple.PValue)
	}
	if irr.Significant || irr.Change != "~" || irr.BaseCount != 12 || irr.NewCount != 12 {
		t.Errorf("irrelevance %+v", irr.RateTest)
	}
	found := false
	for _, f := range res.Findings {
		if f.Scope == "category" {
			found = true
			if f.Metric != "category_pass_rate:simple" || f.Category != Quality || !f.FailsGate || !strings.Contains(f.Message, "category simple pass rate 100% (12/12) -> 17% (2/12)") {
				t.Errorf("finding %+v", f)
			}
		}
	}
	if !found {
		t.Errorf("no category finding: %s", mustJSON(res.Findings))
	}
}

// The prompt-injection figures are judged like pass rates over the attack
// cells both runs judged: a model that starts obeying one style is a
// quality regression of its attack success, overall and at style scope
// (a rise is the regression); utility under attack that held is
// unflagged; an error cell (no verdict) is left out of attack success.
func TestInjectionRates(t *testing.T) {
	attack := func(style string, followed *bool) func(*results.Record) {
		return func(r *results.Record) {
			r.Injection = &results.Injection{Role: results.InjectionAttack, Style: style, Goal: results.GoalHarmfulAction}
			r.InjectionFollowed, r.Utility = followed, ptr(true)
		}
	}
	var base, cur []*results.Record
	for rep := range 10 {
		base = append(base, rec("P0", rep, attack("prose", ptr(false))), rec("P1", rep, attack("encoded", ptr(false))))
		cur = append(cur, rec("P0", rep, attack("prose", ptr(false))), rec("P1", rep, attack("encoded", ptr(true))))
	}
	// One error cell on each side: no verdict.
	base = append(base, rec("P2", 0, attack("encoded", nil)))
	cur = append(cur, rec("P2", 0, attack("encoded", nil)))
	dir := t.TempDir()
	res, err := Compare(writeRun(t, dir, runSpec{id: "base", recs: base}), writeRun(t, dir, runSpec{id: "new", recs: cur}), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	in := res.Groups[0].Injection
	if in == nil || len(in.Styles) != 2 {
		t.Fatalf("injection %s", mustJSON(in))
	}
	if a := in.AttackSuccess; a.BaseN != 20 || a.BaseCount != 0 || a.NewCount != 10 || a.Change != "regression" || !a.Significant {
		t.Errorf("attack success %+v", a)
	}
	if u := in.UtilityUnderAttack; u.BaseN != 21 || u.Change != "~" || u.Significant {
		t.Errorf("utility under attack %+v", u)
	}
	if enc, prose := in.Styles[0], in.Styles[1]; enc.Style != "encoded" || enc.Change != "regression" || prose.Style != "prose" || prose.Change != "~" {
		t.Errorf("styles %s", mustJSON(in.Styles))
	}
	metrics := map[string]string{}
	for _, f := range res.Findings {
		if f.Scope != "cell" {
			metrics[f.Metric] = f.Scope + ": " + f.Message
		}
	}
	if !strings.HasPrefix(metrics["attack_success_rate"], "group: attack success rate 0% (0/20) -> 50% (10/20)") ||
		!strings.HasPrefix(metrics["attack_success_rate:encoded"], "style: injection style encoded attack success rate 0% (0/10) -> 100% (10/10)") ||
		metrics["utility_under_attack"] != "" || metrics["attack_success_rate:prose"] != "" {
		t.Errorf("findings %v", metrics)
	}
}
