package plan_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"bench/config"
	"bench/providers"
	"bench/run/plan"
)

func loadConfig(t *testing.T, load string) *config.Config {
	t.Helper()
	c, err := config.Parse("bench.yaml", []byte("load:\n"+load+"prompts:\n  synthetic: {input_tokens: [10, 20, 30], output_tokens: 4}\nproviders:\n  - type: ollama_openai\n    models: [m]\n"), providers.Kinds)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A concurrency sweep is one stage per level, each of requests cells
// taking the prompts in turn, after the warm-up; keys differ by stage.
func TestSweepStages(t *testing.T) {
	pl := plan.New(loadConfig(t, "  sweep: {concurrency: [1, 2, 4, 8]}\n  requests: 5\n  warmup: 2\n"))
	st := pl.Suites[0].Stages
	var names []string
	for _, s := range st {
		names = append(names, s.Name)
	}
	if len(st) != 5 || names[0] != "warmup" || names[4] != "c=8" || st[0].Level != 1 || !st[0].Warmup {
		t.Fatalf("stages %v", names)
	}
	if len(pl.Cells) != 22 {
		t.Fatalf("%d cells, want 2 + 4 × 5", len(pl.Cells))
	}
	c := pl.Cells[2+5+3] // c=2, the fourth cell
	if c.Stage.Name != "c=2" || c.Ordinal != 3 || c.Prompt.ID != "S10x4" || c.Repetition != 1 || c.Key().Stage != "c=2" {
		t.Errorf("cell = %s #%d %s rep %d", c.Stage.Name, c.Ordinal, c.Prompt.ID, c.Repetition)
	}
	seen := map[any]bool{}
	for _, c := range pl.Cells {
		if seen[c.Key()] {
			t.Fatalf("key %v twice", c.Key())
		}
		seen[c.Key()] = true
	}
}

// Schedules are reproducible, keep their rate, and a duration stage
// counts its arrivals.
func TestArrivals(t *testing.T) {
	for _, arrival := range []string{"constant", "poisson", "gamma"} {
		l := &config.LoadProfile{Arrival: arrival, Seed: 7, Burstiness: 0.5}
		a := plan.Arrivals(l, 100, 1, 20000, 0)
		b := plan.Arrivals(l, 100, 1, 20000, 0)
		if len(a) != 20000 || a[0] != 0 || a[19999] != b[19999] {
			t.Fatalf("%s: not reproducible", arrival)
		}
		if other := plan.Arrivals(l, 100, 2, 20000, 0); other[100] == a[100] && arrival != "constant" {
			t.Errorf("%s: two stages got one schedule", arrival)
		}
		rate := float64(len(a)-1) / a[len(a)-1].Seconds()
		if math.Abs(rate-100) > 3 {
			t.Errorf("%s: %.1f requests/s, want 100", arrival, rate)
		}
	}
	l := &config.LoadProfile{Arrival: "constant", Seed: 1, Ramp: config.Duration(2 * time.Second)}
	a := plan.Arrivals(l, 10, 0, 0, 4*time.Second)
	// Ramp: 10 × 2 / 2 = 10 arrivals in the first 2 s, then 20 more.
	if len(a) != 30 {
		t.Errorf("%d arrivals in 4 s with a 2 s ramp to 10/s, want 30", len(a))
	}
	pl := plan.New(loadConfig(t, "  rate: 5\n  duration: 2s\n"))
	if n := len(pl.Cells); n < 4 || n > 20 || n != pl.Suites[0].Stages[0].Cells {
		t.Errorf("a 2 s stage at 5/s has %d cells", n)
	}
}

// An SLO search plans max_stages stages (the probe first for rate: auto,
// at the probe's streams), named probe, search-1, search-2..., whose
// levels the search chooses while it runs; the warm-up is at the first
// stage's level.
func TestSearchStages(t *testing.T) {
	parse := func(load string) *plan.Plan {
		c, err := config.Parse("bench.yaml", []byte("slo: {ttft_ms: 100}\nload:\n"+load+"prompts:\n  synthetic: {input_tokens: [10], output_tokens: 4}\nproviders:\n  - type: ollama_openai\n    models: [m]\n"), providers.Kinds)
		if err != nil {
			t.Fatal(err)
		}
		return plan.New(c)
	}
	pl := parse("  requests: 80\n  warmup: 3\n  search: {rate: auto, max_stages: 4}\n")
	var got []string
	for _, s := range pl.Suites[0].Stages {
		got = append(got, fmt.Sprintf("%s:%s:%g:%s:%d", s.Name, s.Mode, s.Level, s.Search, s.Cells))
	}
	want := "warmup:concurrency:32::3 probe:concurrency:32:probe:80 search-1:rate:0:step:80 search-2:rate:0:step:80 search-3:rate:0:step:80"
	if strings.Join(got, " ") != want {
		t.Errorf("stages\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	if len(pl.Cells) != 3+4*80 {
		t.Errorf("%d cells", len(pl.Cells))
	}
	pl = parse("  requests: 80\n  warmup: 3\n  search: {concurrency: [2, 64], max_stages: 3}\n")
	got = nil
	for _, s := range pl.Suites[0].Stages {
		got = append(got, fmt.Sprintf("%s:%s:%g", s.Name, s.Mode, s.Level))
	}
	if want := "warmup:concurrency:2 search-1:concurrency:2 search-2:concurrency:0 search-3:concurrency:0"; strings.Join(got, " ") != want {
		t.Errorf("stages %s, want %s", strings.Join(got, " "), want)
	}
}

// A rate too small for a schedule (1e-300 requests/s) never wraps into a
// negative time (issue 31, item 19): its arrivals after the first are the
// longest time there is, and a duration holds only the first.
func TestArrivalsPastWhatADurationHolds(t *testing.T) {
	for _, arrival := range []string{config.ArrivalConstant, config.ArrivalPoisson} {
		l := &config.LoadProfile{Arrival: arrival, Seed: 1}
		got := plan.Arrivals(l, 1e-300, 1, 3, 0)
		if len(got) != 3 || got[0] != 0 || got[1] != time.Duration(math.MaxInt64) || got[2] != time.Duration(math.MaxInt64) {
			t.Errorf("%s: %v", arrival, got)
		}
		if got := plan.Arrivals(l, 1e-300, 1, 0, 10*time.Second); len(got) != 1 {
			t.Errorf("%s over 10 s: %d arrivals, want 1", arrival, len(got))
		}
	}
}
