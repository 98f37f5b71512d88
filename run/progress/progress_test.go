package progress

import (
	"bytes"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"bench/config"
	"bench/internal/record/results"
	"bench/internal/testpeer/ptytest"
	"bench/prompts"
	"bench/report"
	"bench/run/plan"
)

// fakeClock is the progress display's clock in tests: it moves only when
// told.
type fakeClock struct{ ns atomic.Int64 }

var t0 = time.Date(2026, 2, 14, 10, 0, 0, 0, time.UTC)

func (c *fakeClock) now() time.Time          { return t0.Add(time.Duration(c.ns.Load())) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// testPlan is two suites of three cells: p/a and p/b (high).
func testPlan() *plan.Plan {
	prov := &config.Provider{Name: "p", Type: "ollama_openai", Concurrency: 1}
	high := "high"
	pl := &plan.Plan{Suites: []plan.Suite{
		{Provider: "p", ProviderType: "ollama_openai", Model: "a", Cells: 3},
		{Provider: "p", ProviderType: "ollama_openai", Model: "b", ThinkingLevel: &high, Cells: 3},
	}}
	for si, s := range pl.Suites {
		for i := range 3 {
			pl.Cells = append(pl.Cells, plan.Cell{Provider: prov, Model: s.Model, ThinkingLevel: s.ThinkingLevel,
				Prompt: &prompts.Prompt{ID: "P" + string(rune('0'+i))}, Suite: si})
		}
	}
	return pl
}

// cellRecords are the six cells' records: suite a passes, fails a check
// and times out; suite b is not there at all.
func cellRecords() []*results.Record {
	yes, no := true, false
	timeout, missing := "timeout", "model_not_found"
	high := "high"
	return []*results.Record{
		{Provider: "p", Model: "a", PromptID: "P0", AvailabilityStatus: "ok", Success: true, ObjectivePass: &yes},
		{Provider: "p", Model: "a", PromptID: "P1", AvailabilityStatus: "ok", Success: true, ObjectivePass: &no},
		{Provider: "p", Model: "a", PromptID: "P2", AvailabilityStatus: "error", FailureType: &timeout},
		{Provider: "p", Model: "b", ThinkingLevel: &high, PromptID: "P0", AvailabilityStatus: "skipped_unavailable", FailureType: &missing},
		{Provider: "p", Model: "b", ThinkingLevel: &high, PromptID: "P1", AvailabilityStatus: "skipped_unavailable", FailureType: &missing},
		{Provider: "p", Model: "b", ThinkingLevel: &high, PromptID: "P2", AvailabilityStatus: "skipped_unavailable", FailureType: &missing},
	}
}

// Not a terminal: one line per finished suite with its counts and its
// time, nothing per cell.
func TestProgressLines(t *testing.T) {
	t.Setenv("CI", "")
	clk := &fakeClock{}
	var buf bytes.Buffer
	pl := testPlan()
	p := New(NewLog(&buf), pl, Options{Now: clk.now})
	if p.mode != modeLines {
		t.Fatalf("mode %v, want lines on a buffer", p.mode)
	}
	p.Start()
	p.SuiteStart(pl.Suites[0])
	recs := cellRecords()
	for i, r := range recs[:3] {
		clk.advance(2 * time.Second)
		p.AddRecord(r)
		if i < 2 && buf.Len() > 0 {
			t.Fatalf("a line before the suite ended: %q", buf.String())
		}
	}
	p.SuiteEnd(pl.Suites[0])
	p.SuiteStart(pl.Suites[1])
	for _, r := range recs[3:] {
		p.AddRecord(r)
	}
	p.SuiteEnd(pl.Suites[1])
	p.Stop()
	want := "  [1/2] p/a: 3 cells in 6s: 1 passed · 1 failed check · 1 error · 0 not run (timeout)\n" +
		"  [2/2] p/b (high): 3 cells in 0s: 0 passed · 0 failed checks · 0 errors · 3 not run (model_not_found ×3)\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestProgressQuiet(t *testing.T) {
	var buf bytes.Buffer
	p := New(NewLog(&buf), testPlan(), Options{Quiet: true})
	p.Start()
	for _, r := range cellRecords() {
		p.AddRecord(r)
	}
	p.Stop()
	if buf.Len() != 0 || p.tally.done() != 6 {
		t.Errorf("--quiet printed %q", buf.String())
	}
}

// A terminal gets the live bar at once, before any cell has ended, then
// the counts kept apart, the rate, the elapsed time, the ETA and the
// suites in flight, all on the fake clock; finished suites print above it.
func TestProgressBarOnTerminal(t *testing.T) {
	t.Setenv("CI", "")
	clk := &fakeClock{}
	term := ptytest.Open(t)
	log := NewLog(term.TTY)
	pl := testPlan()
	p := New(log, pl, Options{Now: clk.now})
	if p.mode != modeBar {
		t.Fatalf("mode %v on a terminal, want the bar", p.mode)
	}
	p.Start()
	p.SuiteStart(pl.Suites[0])
	// The first frame: nothing has ended yet.
	term.WaitFor(t, "0/6 cells · 0s elapsed · ETA –")
	term.WaitFor(t, "running: p/a 0/3")

	recs := cellRecords()
	clk.advance(4 * time.Second)
	p.AddRecord(recs[0])
	p.AddRecord(recs[1])
	term.WaitFor(t, "2/6 cells · 4s elapsed · ETA 8s")
	term.WaitFor(t, "1 passed · 1 failed check · 0 errors · 0 not run · 0.5 cells/s")
	term.WaitFor(t, "running: p/a 2/3")

	clk.advance(2 * time.Second)
	p.AddRecord(recs[2])
	p.SuiteEnd(pl.Suites[0])
	p.SuiteStart(pl.Suites[1])
	// The suite's line goes above the bar; the bar moves on.
	term.WaitFor(t, "[1/2] p/a: 3 cells in 6s: 1 passed · 1 failed check · 1 error · 0 not run (timeout)")
	term.WaitFor(t, "3/6 cells · 6s elapsed · ETA 6s")
	term.WaitFor(t, "running: p/b (high) 0/3")

	// Ctrl-C: the run stops at 3 of 6; the last frame stays, without an ETA.
	clk.advance(time.Minute + 36*time.Second)
	p.Stop()
	term.WaitFor(t, "3/6 cells · 1m42s elapsed\n      1 passed · 1 failed check · 1 error · 0 not run · 1.8 cells/min\n")
	// One reading of the terminal: it is a screen, so two readings while
	// the bar redraws need not have the same length.
	txt := term.Text()
	i := strings.LastIndex(txt, "bench [")
	if i < 0 {
		t.Fatalf("no frame of the bar on the terminal:\n%s", txt)
	}
	if last := txt[i:]; strings.Contains(last, "ETA") || strings.Contains(last, "running:") {
		t.Errorf("the last frame still shows an ETA or suites in flight:\n%s", last)
	}
	// Lines printed while the bar runs (warnings, Ctrl-C notes) go above it.
	if _, err := io.WriteString(log, "after the bar\n"); err != nil {
		t.Fatal(err)
	}
	term.WaitFor(t, "after the bar")
}

// CI set: even on a terminal, lines and no bar (a CI log keeps every
// frame a bar draws).
func TestProgressCIOnTerminal(t *testing.T) {
	t.Setenv("CI", "true")
	term := ptytest.Open(t)
	if p := New(NewLog(term.TTY), testPlan(), Options{}); p.mode != modeLines {
		t.Errorf("mode %v with CI set, want lines", p.mode)
	}
}

func TestClock(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 1499 * time.Millisecond: "1s", 59 * time.Second: "59s", 102 * time.Second: "1m42s",
		3*time.Hour + 5*time.Minute + 40*time.Second: "3h05m",
	} {
		if got := clock(d); got != want {
			t.Errorf("clock(%v) = %q, want %q", d, got, want)
		}
	}
}

// The progress line and the end-of-run table count every cell the same
// way: for each group, the table's passed, failed checks, errors and not
// run are the progress tally's, and every kind of record lands in one.
func TestProgressAndTableCountAlike(t *testing.T) {
	yes, no := true, false
	ft := func(s string) *string { return &s }
	var recs []results.Record
	add := func(model string, n int, r results.Record) {
		for i := range n {
			r.Provider, r.ProviderType, r.Model, r.PromptID, r.Repetition, r.RecordType = "p", "ollama", model, "P0", len(recs)+i, results.RecordType
			recs = append(recs, r)
		}
	}
	add("a", 4, results.Record{AvailabilityStatus: "ok", Success: true, ObjectivePass: &yes})
	add("a", 2, results.Record{AvailabilityStatus: "ok", Success: true}) // no check
	add("a", 3, results.Record{AvailabilityStatus: "ok", Success: true, ObjectivePass: &no})
	add("a", 1, results.Record{AvailabilityStatus: "ok", Success: false, FailureType: ft("empty_output")})
	// Answered, and the judge or the command gave no verdict: an error in
	// both, never a pass; with another check failed, a failed check.
	add("c", 3, results.Record{AvailabilityStatus: "ok", Success: true, CheckErrors: []results.CheckError{{Type: results.JudgeError, Check: "llm_judge"}}})
	add("c", 1, results.Record{AvailabilityStatus: "ok", Success: true, ObjectivePass: &no, CheckErrors: []results.CheckError{{Type: results.ValidatorError, Check: "command"}}})
	add("c", 1, results.Record{AvailabilityStatus: "ok", Success: true, ObjectivePass: &yes})
	add("b", 2, results.Record{AvailabilityStatus: "error", FailureType: ft("timeout")})
	add("b", 1, results.Record{AvailabilityStatus: "skipped_unavailable", FailureType: ft("connection_refused")})
	add("b", 1, results.Record{AvailabilityStatus: "rate_limited", FailureType: ft("http_429")})
	add("b", 1, results.Record{AvailabilityStatus: "auth_error", FailureType: ft("http_401")})
	add("b", 1, results.Record{AvailabilityStatus: "error", Success: true, FailureType: ft("cancelled")})
	s := report.Summarize(recs)
	for _, g := range s.Groups {
		var want tally
		for i := range recs {
			if recs[i].Model == g.Model {
				want.add(&recs[i])
			}
		}
		got := g.Tally()
		if got.Passed != want.passed || got.FailedChecks != want.failedChecks || got.Errors != want.errors || got.NotRun != want.notRun {
			t.Errorf("%s: table %+v, progress %s", g.Model, got, want.String())
		}
	}
	var table bytes.Buffer
	report.WriteTable(&table, s)
	for _, want := range []string{"PASSED  PASS RATE (PASSED/JUDGED, 95% CI)   FAILED CHECKS  ERRORS  NOT RUN", "6/10    57.1% (4/7, 95% CI [25.0%, 84.2%])  3              1       0", "0/6     –                                   0              3       3", "1/5     50.0% (1/2, 95% CI [9.4%, 90.6%])   1              3       0"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
}

// The limit a rate-limited entry runs under: the suites in flight show it
// as its records say, and a finished suite's line says how low it went.
func TestProgressShowsTheAdaptedLimit(t *testing.T) {
	t.Setenv("CI", "")
	clk := &fakeClock{}
	var buf bytes.Buffer
	pl := testPlan()
	for i := range pl.Cells {
		pl.Cells[i].Provider = &config.Provider{Name: "p", Type: "ollama_openai", Concurrency: 8}
	}
	p := New(NewLog(&buf), pl, Options{Now: clk.now})
	p.Start()
	p.SuiteStart(pl.Suites[0])
	five, three := 5, 3
	recs := cellRecords()[:3]
	recs[0].ConcurrencyLimit = &five
	p.AddRecord(recs[0])
	if d := p.detail(); !strings.Contains(d[1], "p/a 1/3 (rate-limited: 5 of 8 at once)") {
		t.Errorf("running line %q", d[1])
	}
	recs[1].ConcurrencyLimit = &three
	p.AddRecord(recs[1])
	p.AddRecord(recs[2])
	p.Stop()
	if !strings.HasSuffix(buf.String(), "(timeout); rate-limited: down to 3 of 8 at once\n") {
		t.Errorf("suite line %q", buf.String())
	}
}
