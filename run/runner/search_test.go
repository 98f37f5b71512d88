package runner

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"bench/cmd/fakellm/loadserver"
	"bench/config"
	"bench/internal/record/results"
	"bench/internal/record/slo"
	"bench/providers"
	"bench/run/output"
	"bench/run/plan"
)

// parsedRun parses a config of one entry and builds its provider.
func parsedRun(t *testing.T, yaml string) (*config.Config, map[string]providers.Provider) {
	t.Helper()
	cfg, err := config.Parse("bench.yaml", []byte(yaml), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	p, err := providers.New(&cfg.Providers[0])
	if err != nil {
		t.Fatal(err)
	}
	return cfg, map[string]providers.Provider{cfg.Providers[0].Name: p}
}

// searchOutcomes reads a suite's search stages back from its records, in
// the order they ran, as the reports do.
func searchOutcomes(cfg *config.Config, recs []*results.Record) []slo.Outcome {
	var names []string
	by := map[string]*slo.Outcome{}
	first, last, ok := map[string]int64{}, map[string]int64{}, map[string]int{}
	for _, r := range recs {
		if !slo.IsSearchStage(r.Stage) || !results.Sent(r) {
			continue
		}
		o := by[r.Stage]
		if o == nil {
			o = &slo.Outcome{Stage: r.Stage, Level: *r.StageLevel, Probe: r.Stage == slo.StageProbe}
			by[r.Stage] = o
			names = append(names, r.Stage)
			first[r.Stage] = r.StageStartUS
		}
		o.Tally.Add(cfg.SLO, r)
		last[r.Stage] = max(last[r.Stage], r.EndedAtUS)
		if r.Success {
			ok[r.Stage]++
		}
	}
	var out []slo.Outcome
	for _, n := range names {
		o := *by[n]
		if o.Probe {
			o.Throughput = float64(ok[n]) / (float64(last[n]-first[n]) / 1e6)
		}
		out = append(out, o)
	}
	return out
}

// An SLO search runs its stages at the levels the search picks from the
// stages before (slo.Search.Next over what results.jsonl holds), records
// the stages it did not need as not run (search_done), and a resumed run
// sends only the stages not yet recorded, going on from them: its first
// new stage is at the level Next gives from the recorded ones.
func TestSearchRunsAndResumes(t *testing.T) {
	srv := loadserver.New(loadserver.Service{TTFT: 10 * time.Millisecond, Gap: 2 * time.Millisecond, Tokens: 8, Slots: 2}, nil)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	cfg, provs := parsedRun(t, fmt.Sprintf(`run: {warmup: false, timeout: 30s}
slo: {ttft_ms: 60}
load:
  requests: 80
  arrival: constant
  warmup: 2
  search: {rate: auto, max_stages: 8, attainment: 0.9}
prompts:
  synthetic: {input_tokens: [8], output_tokens: 8}
providers:
  - type: ollama_openai
    base_url: %s/v1
    models: [m]
`, hs.URL))
	full := plan.New(cfg)
	sink := &memSink{}
	if _, err := Run(context.Background(), Options{Config: cfg, Plan: full, Outputs: []output.Output{sink}, Providers: provs}); err != nil {
		t.Fatal(err)
	}
	if len(sink.recs) != len(full.Cells) {
		t.Fatalf("%d records of %d cells", len(sink.recs), len(full.Cells))
	}
	sr := cfg.Load.Search
	got := searchOutcomes(cfg, sink.recs)
	if len(got) < 3 || !got[0].Probe {
		t.Fatalf("stages %+v", got)
	}
	// Each stage's level is the search's pick from the stages before it.
	for i := range got {
		want := sr.Next(got[:i], cfg.Load.Concurrency)
		if want.End != "" || want.Level != got[i].Level {
			t.Errorf("stage %s at %g, the search picks %+v", got[i].Stage, got[i].Level, want)
		}
	}
	l := sr.Evaluate(got, cfg.Load.Concurrency)
	if l.End == slo.EndUnfinished {
		t.Errorf("search unfinished: %+v", l)
	}
	notRun := 0
	for _, r := range sink.recs {
		if r.FailureType != nil && *r.FailureType == results.FailSearchDone {
			notRun++
			if r.ErrorMessage == nil || r.StageLevel != nil {
				t.Errorf("not-run record %+v", r)
			}
		}
	}
	if want := (sr.MaxStages - len(got)) * 80; notRun != want {
		t.Errorf("%d cells recorded search_done, want %d (%d stages ran)", notRun, want, len(got))
	}
	t.Logf("%d stages: %s; capacity 2/%.0f ms", len(got), l.Why, 26.0)

	// Resume after the probe and the first two steps: only the rest runs.
	keep := map[string]bool{"warmup": true, got[0].Stage: true, got[1].Stage: true, got[2].Stage: true}
	done := map[results.Key]bool{}
	var recorded []*results.Record
	for _, r := range sink.recs {
		if keep[r.Stage] {
			done[r.Key()] = true
			if slo.IsSearchStage(r.Stage) {
				recorded = append(recorded, r)
			}
		}
	}
	rest := full.Without(done)
	sink2 := &memSink{}
	if _, err := Run(context.Background(), Options{Config: cfg, Plan: rest, Outputs: []output.Output{sink2}, Providers: provs, Recorded: recorded}); err != nil {
		t.Fatal(err)
	}
	if len(sink2.recs) != len(rest.Cells) {
		t.Fatalf("resumed: %d records of %d cells", len(sink2.recs), len(rest.Cells))
	}
	var stages []string
	for _, r := range sink2.recs {
		if keep[r.Stage] {
			t.Fatalf("stage %s ran again", r.Stage)
		}
		if !slices.Contains(stages, r.Stage) {
			stages = append(stages, r.Stage)
		}
	}
	after := searchOutcomes(cfg, sink2.recs)
	if len(after) == 0 {
		if l3 := sr.Evaluate(got[:3], cfg.Load.Concurrency); l3.End == slo.EndUnfinished {
			t.Fatalf("resumed search ran nothing after an unfinished one")
		}
		return
	}
	if want := sr.Next(got[:3], cfg.Load.Concurrency); after[0].Level != want.Level {
		t.Errorf("resumed search's first stage at %g, want %+v", after[0].Level, want)
	}
}

// A bracket that never fails is one clear warning in the run's log, and
// the stages the search did not need are recorded as not run.
func TestSearchNeverFails(t *testing.T) {
	hs := httptest.NewServer(loadserver.New(loadserver.Service{Tokens: 4}, nil))
	defer hs.Close()
	cfg, provs := parsedRun(t, fmt.Sprintf(`run: {warmup: false, timeout: 30s}
slo: {e2e_ms: 2000}
load:
  requests: 20
  search: {rate: [20, 40], attainment: 0.5}
prompts:
  synthetic: {input_tokens: [8], output_tokens: 4}
providers:
  - type: ollama_openai
    base_url: %s/v1
    models: [m]
`, hs.URL))
	var log strings.Builder
	sink := &memSink{}
	if _, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Outputs: []output.Output{sink}, Providers: provs, Log: &log}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log.String(), "SLO search"); n != 1 || !strings.Contains(log.String(), "the limit is above the bracket") {
		t.Errorf("log:\n%s", log.String())
	}
	levels := map[string]float64{}
	done := 0
	for _, r := range sink.recs {
		if r.StageLevel != nil {
			levels[r.Stage] = *r.StageLevel
		}
		if r.FailureType != nil && *r.FailureType == results.FailSearchDone {
			done++
		}
	}
	if levels["search-1"] != 20 || levels["search-2"] != 40 || len(levels) != 2 || done != 6*20 {
		t.Errorf("levels %v, %d not run", levels, done)
	}
}

// A resumed auto sweep takes its rates from the sync and throughput
// stages it ran before the resume: their cells are not sent again, and
// each rate stage runs at the level the whole run would have given it
// (before, with no measured rate, every rate stage was recorded as not
// sent).
func TestAutoSweepResumesWithItsRates(t *testing.T) {
	srv := loadserver.New(loadserver.Service{TTFT: 5 * time.Millisecond, Gap: time.Millisecond, Tokens: 4, Slots: 2}, nil)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	cfg, provs := parsedRun(t, fmt.Sprintf(`run: {warmup: false, timeout: 30s}
load: {sweep: auto, concurrency: 4, requests: 8, auto_rates: 2, arrival: constant}
prompts:
  synthetic: {input_tokens: [8], output_tokens: 4}
providers:
  - type: ollama_openai
    base_url: %s/v1
    models: [m]
`, hs.URL))
	full := plan.New(cfg)
	sink := &memSink{}
	if _, err := Run(context.Background(), Options{Config: cfg, Plan: full, Outputs: []output.Output{sink}, Providers: provs}); err != nil {
		t.Fatal(err)
	}
	levels := map[string]float64{}
	done := map[results.Key]bool{}
	var recorded []*results.Record
	for _, r := range sink.recs {
		if !results.Sent(r) {
			t.Fatalf("%s not sent: %v", r.Stage, r.ErrorMessage)
		}
		levels[r.Stage] = *r.StageLevel
		if r.Stage == plan.AutoSync || r.Stage == plan.AutoThroughput {
			done[r.Key()] = true
			recorded = append(recorded, r)
		}
	}
	if levels["auto-1"] <= levels[plan.AutoSync] || levels["auto-2"] <= levels["auto-1"] {
		t.Fatalf("levels %v", levels)
	}
	rest := full.Without(done)
	sink2 := &memSink{}
	if _, err := Run(context.Background(), Options{Config: cfg, Plan: rest, Outputs: []output.Output{sink2}, Providers: provs, Recorded: recorded}); err != nil {
		t.Fatal(err)
	}
	if len(sink2.recs) != 16 {
		t.Fatalf("resumed: %d records, want the 2 rate stages' 16", len(sink2.recs))
	}
	for _, r := range sink2.recs {
		if !results.Sent(r) || r.StageLevel == nil || math.Abs(*r.StageLevel-levels[r.Stage]) > 1e-9*levels[r.Stage] {
			t.Errorf("resumed %s: sent %v at %v, the whole run's level %g (%v)", r.Stage, results.Sent(r), r.StageLevel, levels[r.Stage], r.ErrorMessage)
		}
	}
}
