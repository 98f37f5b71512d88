package runner

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"bench/cmd/fakellm/loadserver"
	"bench/config"
	"bench/internal/record/results"
	"bench/report"
	"bench/run/output"
	"bench/run/plan"
)

// loadRun runs cfg (one ollama_openai entry at url) and returns its
// records in the order they were written.
func loadRun(t *testing.T, yaml string) []*results.Record {
	t.Helper()
	cfg, provs := parsedRun(t, yaml)
	sink := &memSink{}
	_, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Outputs: []output.Output{sink}, Providers: provs})
	if err != nil {
		t.Fatal(err)
	}
	return sink.recs
}

func byStage(recs []*results.Record) map[string][]*results.Record {
	m := map[string][]*results.Record{}
	for _, r := range recs {
		m[r.Stage] = append(m[r.Stage], r)
	}
	return m
}

// A concurrency sweep runs its stages in order, each at its level: a
// server that serves 2 requests at once answers 1, 2, 2, 2 requests per
// service time at 1, 2, 4 and 8 streams, and bench's stage throughput says
// so; each cell has its stage, schedule and serving metrics.
func TestConcurrencySweep(t *testing.T) {
	srv := loadserver.New(loadserver.Service{TTFT: 10 * time.Millisecond, Gap: 2 * time.Millisecond, Tokens: 16, Slots: 2}, nil)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	recs := loadRun(t, fmt.Sprintf(`run: {warmup: false, timeout: 30s}
load:
  sweep: {concurrency: [1, 2, 4, 8]}
  requests: 16
  warmup: 2
prompts:
  synthetic: {input_tokens: [8], output_tokens: 16}
providers:
  - type: ollama_openai
    base_url: %s/v1
    models: [m]
`, hs.URL))
	if len(recs) != 2+4*16 {
		t.Fatalf("%d records", len(recs))
	}
	// Stages run one after another: no cell of a stage starts before the
	// last of the stage before has ended.
	order := []string{"warmup", "c=1", "c=2", "c=4", "c=8"}
	st := byStage(recs)
	var prevEnd int64
	for _, name := range order {
		cells := st[name]
		var first, last int64 = math.MaxInt64, 0
		serving := 0
		for _, r := range cells {
			if !r.Success || r.ScheduleSlipMS == nil || r.StageLevel == nil || r.ScheduledAtMS == nil || r.SentAtMS == nil {
				t.Fatalf("%s: cell %+v lacks its stage figures", name, r)
			}
			// A server descheduled on a loaded machine may write every
			// token at once: that cell's ITL and TPOT are then null, by
			// the decode rates' rule.
			if r.ITLMS != nil && r.TPOTMS != nil {
				serving++
			}
			first, last = min(first, r.StartedAtUS), max(last, r.EndedAtUS)
		}
		if serving < len(cells)/2 {
			t.Errorf("%s: %d of %d cells have ITL and TPOT", name, serving, len(cells))
		}
		if first < prevEnd {
			t.Errorf("stage %s started %d µs before the last stage ended", name, prevEnd-first)
		}
		prevEnd = last
	}
	// Each stage's throughput is the server's own over the same
	// requests (its log: first arrival to last end), within 10 %: bench's
	// window also holds the first request's way in and the last answer's
	// way out. In flight never passes the level.
	log := serverLog(srv, len(recs))
	for i, name := range order[1:] {
		cells := st[name]
		var from, to int64 = cells[0].StageStartUS * 1000, math.MaxInt64
		if i+2 < len(order) {
			to = st[order[i+2]][0].StageStartUS * 1000
		}
		var first, last int64 = math.MaxInt64, 0
		n := 0
		for _, e := range log {
			if e.ArrivalNS >= from && e.ArrivalNS < to {
				first, last, n = min(first, e.ArrivalNS), max(last, e.EndNS), n+1
			}
		}
		var end int64
		for _, r := range cells {
			end = max(end, r.EndedAtUS)
		}
		got := float64(len(cells)) / (float64(end-cells[0].StageStartUS) / 1e6)
		want := float64(n) / (float64(last-first) / 1e9)
		if n != len(cells) || math.Abs(got-want) > 0.1*want {
			t.Errorf("%s: bench %.1f requests/s over %d cells, the server %.1f over %d", name, got, len(cells), want, n)
		}
		if peak := inFlight(cells); peak > int(*cells[0].StageLevel) {
			t.Errorf("%s: %d cells in flight", name, peak)
		}
	}
}

// serverLog is the server's log once it holds n entries: a handler logs
// its request after the client may have read the answer's end.
func serverLog(srv *loadserver.Server, n int) []loadserver.Entry {
	for range 200 {
		if l := srv.Log(); len(l) >= n {
			return l
		}
		time.Sleep(5 * time.Millisecond)
	}
	return srv.Log()
}

// inFlight is the most cells of a stage that overlapped.
func inFlight(cells []*results.Record) int {
	type ev struct {
		at int64
		d  int
	}
	var evs []ev
	for _, r := range cells {
		evs = append(evs, ev{r.StartedAtUS, 1}, ev{r.EndedAtUS, -1})
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].at < evs[j].at || evs[i].at == evs[j].at && evs[i].d < evs[j].d })
	n, peak := 0, 0
	for _, e := range evs {
		n += e.d
		peak = max(peak, n)
	}
	return peak
}

// An open loop sends on its schedule: each cell's sent time is its due
// time plus a small slip, whatever the server does, and a cap makes late
// cells wait for a slot, recorded as slot wait rather than slip.
func TestOpenLoopSchedule(t *testing.T) {
	srv := loadserver.New(loadserver.Service{TTFT: 20 * time.Millisecond, Gap: time.Millisecond, Tokens: 4}, nil)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	recs := loadRun(t, fmt.Sprintf(`run: {warmup: false}
load:
  sweep: {rate: [50, 200]}
  arrival: poisson
  max_concurrency: 3
  requests: 40
prompts:
  synthetic: {input_tokens: [8], output_tokens: 4}
providers:
  - type: ollama_openai
    base_url: %s/v1
    models: [m]
`, hs.URL))
	st := byStage(recs)
	l := &config.LoadProfile{Arrival: "poisson", Seed: 1}
	for i, name := range []string{"rate=50", "rate=200"} {
		due := plan.Arrivals(l, []float64{50, 200}[i], i, 40, 0)
		waited := 0
		for _, r := range st[name] {
			if !r.Success {
				t.Fatalf("%s: %v", name, r.ErrorMessage)
			}
			want := float64(due[r.Repetition].Microseconds()) / 1000
			if math.Abs(*r.ScheduledAtMS-want) > 0.002 {
				t.Errorf("%s #%d: scheduled at %.3f ms, the schedule says %.3f", name, r.Repetition, *r.ScheduledAtMS, want)
			}
			if got := *r.SentAtMS - *r.ScheduledAtMS - *r.SlotWaitMS; math.Abs(got-*r.ScheduleSlipMS) > 0.004 {
				t.Errorf("slip %.3f is not sent − scheduled − slot wait (%.3f)", *r.ScheduleSlipMS, got)
			}
			if *r.SlotWaitMS > 0.5 {
				waited++
			}
		}
		if name == "rate=200" && waited == 0 {
			t.Error("at 200/s with 3 slots and 25 ms requests no cell waited for a slot")
		}
		if peak := inFlight(st[name]); peak > 3 {
			t.Errorf("%s: %d in flight under max_concurrency 3", name, peak)
		}
	}
}

// A server that falls over mid-sweep: the stage's cells are errors, and
// the stages after it are recorded as not run, naming the stage.
func TestSweepStopsWhenServerFalls(t *testing.T) {
	srv := loadserver.New(loadserver.Service{Tokens: 4}, nil)
	var n atomic.Int64 // requests come concurrently at c=2
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > 6 {
			// The server is gone: connections are cut.
			hj, _ := w.(http.Hijacker)
			c, _, _ := hj.Hijack()
			c.Close()
			return
		}
		srv.ServeHTTP(w, r)
	}))
	defer hs.Close()
	recs := loadRun(t, fmt.Sprintf(`run: {warmup: false, timeout: 5s}
load:
  sweep: {concurrency: [1, 2, 4]}
  requests: 4
prompts:
  synthetic: {input_tokens: [8], output_tokens: 4}
providers:
  - type: ollama_openai
    base_url: %s/v1
    models: [m]
    max_retries: 0
`, hs.URL))
	st := byStage(recs)
	if len(recs) != 12 {
		t.Fatalf("%d records, want every cell recorded", len(recs))
	}
	for _, r := range st["c=1"] {
		if !r.Success {
			t.Errorf("c=1: %v", *r.ErrorMessage)
		}
	}
	bad := 0
	for _, r := range st["c=2"] {
		if r.AvailabilityStatus != results.StatusOK {
			bad++
		}
	}
	if bad < 2 {
		t.Fatalf("c=2: %d cells failed", bad)
	}
	for _, r := range st["c=4"] {
		if r.FailureType == nil || *r.FailureType != FailSweepStopped || r.ErrorMessage == nil {
			t.Fatalf("c=4 cell: %+v", r)
		}
		if want := "the sweep stopped after stage c=2"; !contains(*r.ErrorMessage, want) {
			t.Errorf("message %q does not say %q", *r.ErrorMessage, want)
		}
	}
}

func contains(s, sub string) bool {
	return len(s) >= len(sub) && (s == sub || len(sub) == 0 || indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// A load stage raises the collector's target; with stages of two lanes
// overlapping, it is put back when the last one ends, to what it was.
func TestCollectLess(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set: collectLess leaves it as it is")
	}
	gc := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	before := gc()
	endA := collectLess()
	endB := collectLess()
	if gc() != stageGCPercent {
		t.Fatalf("GC percent %d during two stages", gc())
	}
	endA()
	if gc() != stageGCPercent {
		t.Errorf("GC percent %d with one stage still running", gc())
	}
	endB()
	if gc() != before {
		t.Errorf("GC percent %d after the stages, want %d", gc(), before)
	}
}

// Cells a stage timeout left unsent are not run everywhere (issue 31,
// item 19): skipped_unavailable with failure_type stage_timeout, so the
// progress line, the table and summary.json's stage count them alike,
// and no model was reached by them. A server slower than the stage's
// bound makes every cell after the first due past it, however busy the
// machine.
func TestStageTimeoutCellsAreNotRun(t *testing.T) {
	srv := loadserver.New(loadserver.Service{TTFT: 300 * time.Millisecond, Tokens: 2, Slots: 1}, nil)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	recs := loadRun(t, fmt.Sprintf(`run: {warmup: false, timeout: 30s}
load:
  sweep: {concurrency: [1]}
  requests: 5
  stage_timeout: 100ms
prompts:
  synthetic: {input_tokens: [8], output_tokens: 2}
providers:
  - type: ollama_openai
    base_url: %s/v1
    models: [m]
`, hs.URL))
	if len(recs) != 5 {
		t.Fatalf("%d records", len(recs))
	}
	notRun := 0
	for _, r := range recs {
		if r.FailureType != nil && *r.FailureType == FailStageTimeout {
			notRun++
			if r.AvailabilityStatus != results.StatusSkippedUnavailable || results.Reached(r) {
				t.Errorf("a stage-timeout cell: status %s, reached %v", r.AvailabilityStatus, results.Reached(r))
			}
		}
	}
	if notRun != 4 {
		t.Fatalf("%d stage-timeout cells, want 4", notRun)
	}
	flat := make([]results.Record, len(recs))
	for i, r := range recs {
		flat[i] = *r
	}
	s := report.Summarize(flat)
	g := s.Groups[0]
	if tl := g.Tally(); tl.NotRun != 4 || tl.Errors != 0 || tl.Passed != 1 {
		t.Errorf("table: %+v, want 1 passed and 4 not run", tl)
	}
	if st := g.Stages[0]; st.NNotRun != 4 || st.NError != 0 {
		t.Errorf("summary.json stage: %d not run, %d errors", st.NNotRun, st.NError)
	}
}
