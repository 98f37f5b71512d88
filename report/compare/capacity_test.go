package compare

import (
	"fmt"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/report/stats"
)

// sweepRecs is a closed-loop sweep against a server with `slots` slots
// and a service time of serviceMS per request: at level L, min(L, slots)
// requests end every serviceMS, each with TTFT ttftMS(L). Each stage
// sends n requests and starts 10 s after the one before.
func sweepRecs(levels []int, n, slots int, serviceMS float64, ttftMS func(level int) int64) []*results.Record {
	var out []*results.Record
	for si, l := range levels {
		start := int64(1_700_000_000_000_000) + int64(si)*10_000_000
		m := min(l, slots)
		for i := range n {
			end := start + int64(float64(i/m+1)*serviceMS*1000)
			lv := float64(l)
			ttft := ttftMS(l)
			out = append(out, rec("P0", i, func(r *results.Record) {
				r.Stage, r.StageMode, r.StageLevel = fmt.Sprintf("c=%d", l), "concurrency", &lv
				r.StageStartUS, r.EndedAtUS = start, end
				r.TTFTMS, r.E2EMS = &ttft, int64(serviceMS)
			}))
		}
	}
	return out
}

func stageOf(t *testing.T, g *Group, name string) *StageCapacity {
	t.Helper()
	for _, s := range g.Capacity.Stages {
		if s.Stage == name {
			return s
		}
	}
	t.Fatalf("no stage %s in %+v", name, g.Capacity.Stages)
	return nil
}

// A server that lost a slot: throughput at c=2 and c=4 drops by half
// (a regression of each stage), its goodput at c=4 drops (TTFT past the
// SLO) and its saturation point moves from c=2 to c=1, a regression
// because the stage between them lost throughput significantly; the same
// run against itself is "~" everywhere. Capacity findings fail the gate
// under --fail-on capacity (the default) and not without it.
func TestCapacityJudged(t *testing.T) {
	dir := t.TempDir()
	levels := []int{1, 2, 4}
	slo := map[string]any{"ttft_ms": 50}
	fast := func(int) int64 { return 20 }
	slow := func(l int) int64 {
		if l >= 4 {
			return 80
		}
		return 20
	}
	base := writeRun(t, dir, runSpec{id: "base", slo: slo, recs: sweepRecs(levels, 32, 2, 100, fast)})
	same := writeRun(t, dir, runSpec{id: "same", slo: slo, recs: sweepRecs(levels, 32, 2, 100, fast)})
	worse := writeRun(t, dir, runSpec{id: "worse", slo: slo, recs: sweepRecs(levels, 32, 1, 100, slow)})

	r, err := Compare(base, same, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	g := r.Groups[0]
	if g.Capacity == nil || len(g.Capacity.Stages) != 3 {
		t.Fatalf("capacity %+v", g.Capacity)
	}
	for _, s := range g.Capacity.Stages {
		if s.Throughput.Change != stats.Same || s.Goodput.Change != string(stats.Same) {
			t.Errorf("same run, stage %s: throughput %s (%s), goodput %s", s.Stage, s.Throughput.Change, s.Throughput.Reason, s.Goodput.Change)
		}
	}
	if sat := g.Capacity.Saturation; sat.Change != string(stats.Same) || deref(sat.Base) != "c=2" || deref(sat.New) != "c=2" {
		t.Errorf("same run saturation %+v", sat)
	}
	if r.Regressed() {
		t.Errorf("same run regressed: %+v", r.Findings)
	}
	if j := r.Judgement[MetricThroughput]; j == nil || j.Judged != 3 {
		t.Errorf("throughput judgement %+v", j)
	}

	r, err = Compare(base, worse, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	g = r.Groups[0]
	if s := stageOf(t, g, "c=1"); s.Throughput.Change != stats.Same {
		t.Errorf("c=1 throughput %s: %s", s.Throughput.Change, s.Throughput.Reason)
	}
	for _, name := range []string{"c=2", "c=4"} {
		s := stageOf(t, g, name)
		if s.Throughput.Change != stats.Regression {
			t.Errorf("%s throughput %s: %s", name, s.Throughput.Change, s.Throughput.Reason)
		}
		if *s.BaseThroughput < 1.8**s.NewThroughput {
			t.Errorf("%s throughput %v -> %v, want halved", name, *s.BaseThroughput, *s.NewThroughput)
		}
	}
	if s := stageOf(t, g, "c=4"); s.Goodput.Change != string(stats.Regression) || s.Goodput.NewCount != 0 || s.Goodput.BaseCount != 32 {
		t.Errorf("c=4 goodput %+v", s.Goodput)
	}
	if sat := g.Capacity.Saturation; sat.Change != string(stats.Regression) || deref(sat.New) != "c=1" {
		t.Errorf("saturation %+v", sat)
	}
	var cats []string
	for _, f := range r.Findings {
		if f.Category == CapacityCat {
			cats = append(cats, f.Scope+" "+f.Stage+" "+f.Metric)
		}
	}
	want := []string{"stage c=2 request_throughput", "stage c=4 request_throughput", "stage c=4 goodput", "group  saturation"}
	for _, w := range want {
		if !strings.Contains(strings.Join(cats, "|"), w) {
			t.Errorf("findings %q lack %q", cats, w)
		}
	}
	if !r.Regressed() || r.Failing[CapacityCat] != len(want) {
		t.Errorf("verdict %s, failing %v", r.Verdict, r.Failing)
	}
	// junit.xml: a failing testcase for each capacity finding.
	var junit strings.Builder
	if err := WriteJUnit(&junit, r); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"[stage] c=2 request_throughput", "[stage] c=4 goodput", "[group] saturation"} {
		i := strings.Index(junit.String(), `name="`+name+`"`)
		if i < 0 || !strings.Contains(junit.String()[i:min(len(junit.String()), i+600)], `<failure`) {
			t.Errorf("junit.xml: no failing testcase %q", name)
		}
	}
	// Without --fail-on capacity no capacity finding fails the gate; the
	// TTFT of the c=4 cells, four times its base in every pair, is a
	// latency regression of its own.
	opt := DefaultOptions()
	opt.FailOn = []string{Quality, Latency, Availability}
	if r, err := Compare(base, worse, opt); err != nil || r.Failing[CapacityCat] != 0 || r.Failing[Latency] == 0 {
		t.Errorf("without --fail-on capacity: %v %v", err, r.Findings)
	}
	var text strings.Builder
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	t.Log(text.String())
	for _, w := range []string{"CAPACITY", "stage c=2: request_throughput", "REGRESSION", "saturation c=2 -> c=1: regression"} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("text lacks %q:\n%s", w, text.String())
		}
	}
}

// What cannot be judged is said, as for latency: a stage in one run only,
// a stage of 3 requests (3 windows: too few samples), goodput without an
// slo block or with a changed one, and a saturation point between
// sweeps of other stages.
func TestCapacityNotJudged(t *testing.T) {
	dir := t.TempDir()
	fast := func(int) int64 { return 20 }
	base := writeRun(t, dir, runSpec{id: "base", slo: map[string]any{"ttft_ms": 50}, recs: sweepRecs([]int{1, 2}, 3, 2, 100, fast)})
	other := writeRun(t, dir, runSpec{id: "other", slo: map[string]any{"ttft_ms": 60}, recs: sweepRecs([]int{1, 2, 4}, 3, 2, 100, fast)})
	none := writeRun(t, dir, runSpec{id: "none", recs: sweepRecs([]int{1, 2}, 3, 2, 100, fast)})

	r, err := Compare(base, other, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	g := r.Groups[0]
	if s := stageOf(t, g, "c=4"); s.Throughput.NotJudged != WhyOneRun || s.Goodput.NotJudged != WhyOneRun {
		t.Errorf("c=4: %+v %+v", s.Throughput, s.Goodput)
	}
	if s := stageOf(t, g, "c=1"); s.Throughput.NotJudged != stats.WhyFewSamples || s.Goodput.NotJudged != WhySLOChanged {
		t.Errorf("c=1: %s / %s", s.Throughput.NotJudged, s.Goodput.NotJudged)
	}
	if g.Capacity.Saturation.NotJudged != WhySweepChanged {
		t.Errorf("saturation %+v", g.Capacity.Saturation)
	}
	if j := r.Judgement[MetricThroughput]; j.Judged != 0 || j.NotJudged[WhyOneRun] != 1 || j.NotJudged[stats.WhyFewSamples] != 2 {
		t.Errorf("judgement %+v", j)
	}
	opt := DefaultOptions()
	opt.RequireJudged = []string{CapacityCat}
	if r, err := Compare(base, other, opt); err != nil || !strings.Contains(strings.Join(r.Unjudged, ","), MetricThroughput) {
		t.Errorf("require-judged capacity: %v %v", err, r.Unjudged)
	}
	r, err = Compare(base, none, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if s := stageOf(t, r.Groups[0], "c=2"); s.Goodput.NotJudged != WhySLOChanged {
		t.Errorf("slo in one run: %+v", s.Goodput)
	}
	r, err = Compare(none, none2(t, dir), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if s := stageOf(t, r.Groups[0], "c=2"); s.Goodput.NotJudged != WhyNoSLO {
		t.Errorf("no slo: %+v", s.Goodput)
	}
}

func none2(t *testing.T, dir string) string {
	return writeRun(t, dir, runSpec{id: "none2", recs: sweepRecs([]int{1, 2}, 3, 2, 100, func(int) int64 { return 20 })})
}
