package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creack/pty"

	"bench/config"
	"bench/plan"
	"bench/prompts"
	"bench/results"
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

// withClock makes newProgress use a fake clock for the test.
func withClock(t *testing.T) *fakeClock {
	c := &fakeClock{}
	old := progressClock
	progressClock = c.now
	t.Cleanup(func() { progressClock = old })
	return c
}

// Not a terminal: one line per finished suite with its counts and its
// time, nothing per cell.
func TestProgressLines(t *testing.T) {
	t.Setenv("CI", "")
	clk := withClock(t)
	var buf bytes.Buffer
	p := newProgress(&buf, false)
	if p.mode != modeLines {
		t.Fatalf("mode %v, want lines on a buffer", p.mode)
	}
	pl := testPlan()
	p.begin(pl)
	p.SuiteStart(pl.Suites[0])
	recs := cellRecords()
	for i, r := range recs[:3] {
		clk.advance(2 * time.Second)
		p.record(r, i+1, 6)
		if i < 2 && buf.Len() > 0 {
			t.Fatalf("a line before the suite ended: %q", buf.String())
		}
	}
	p.SuiteEnd(pl.Suites[0])
	p.SuiteStart(pl.Suites[1])
	for i, r := range recs[3:] {
		p.record(r, i+4, 6)
	}
	p.SuiteEnd(pl.Suites[1])
	p.finish()
	want := "  [1/2] p/a: 3 cells in 6s: 1 passed · 1 failed check · 1 error · 0 not run (timeout)\n" +
		"  [2/2] p/b (high): 3 cells in 0s: 0 passed · 0 failed checks · 0 errors · 3 not run (model_not_found ×3)\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	if p.recorded != 6 || p.byStatus["skipped_unavailable"] != 3 || strings.Join(p.skipped["p"]["model_not_found"], ",") != "b" {
		t.Errorf("tallies for the hints: %d %v %v", p.recorded, p.byStatus, p.skipped)
	}
}

func TestProgressQuiet(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, true)
	pl := testPlan()
	p.begin(pl)
	for i, r := range cellRecords() {
		p.record(r, i+1, 6)
	}
	p.finish()
	if buf.Len() != 0 || p.recorded != 6 {
		t.Errorf("--quiet printed %q", buf.String())
	}
}

// terminal is a pseudo-terminal whose output is collected as it comes.
type terminal struct {
	tty *os.File
	mu  sync.Mutex
	out bytes.Buffer
}

func newTerminal(t *testing.T) *terminal {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	if err := pty.Setsize(master, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	term := &terminal{tty: tty}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { tty.Close(); master.Close(); <-done })
	return term
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// waitFor waits until the terminal has shown want (escape codes removed),
// failing after a generous limit that only a hung display reaches.
func (term *terminal) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(term.text(), want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the terminal never showed %q; it shows:\n%s", want, term.text())
}

func (term *terminal) text() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return strings.ReplaceAll(ansi.ReplaceAllString(term.out.String(), ""), "\r", "")
}

// A terminal gets the live bar at once, before any cell has ended, then
// the counts kept apart, the rate, the elapsed time, the ETA and the
// suites in flight, all on the fake clock; finished suites print above it.
func TestProgressBarOnTerminal(t *testing.T) {
	t.Setenv("CI", "")
	clk := withClock(t)
	term := newTerminal(t)
	p := newProgress(term.tty, false)
	if p.mode != modeBar {
		t.Fatalf("mode %v on a terminal, want the bar", p.mode)
	}
	pl := testPlan()
	p.begin(pl)
	p.SuiteStart(pl.Suites[0])
	// The first frame: nothing has ended yet.
	term.waitFor(t, "0/6 cells · 0s elapsed · ETA –")
	term.waitFor(t, "running: p/a 0/3")

	recs := cellRecords()
	clk.advance(4 * time.Second)
	p.record(recs[0], 1, 6)
	p.record(recs[1], 2, 6)
	term.waitFor(t, "2/6 cells · 4s elapsed · ETA 8s")
	term.waitFor(t, "1 passed · 1 failed check · 0 errors · 0 not run · 0.5 cells/s")
	term.waitFor(t, "running: p/a 2/3")

	clk.advance(2 * time.Second)
	p.record(recs[2], 3, 6)
	p.SuiteEnd(pl.Suites[0])
	p.SuiteStart(pl.Suites[1])
	// The suite's line goes above the bar; the bar moves on.
	term.waitFor(t, "[1/2] p/a: 3 cells in 6s: 1 passed · 1 failed check · 1 error · 0 not run (timeout)")
	term.waitFor(t, "3/6 cells · 6s elapsed · ETA 6s")
	term.waitFor(t, "running: p/b (high) 0/3")

	// Ctrl-C: the run stops at 3 of 6; the last frame stays, without an ETA.
	clk.advance(time.Minute + 36*time.Second)
	p.finish()
	term.waitFor(t, "3/6 cells · 1m42s elapsed\n      1 passed · 1 failed check · 1 error · 0 not run · 1.8 cells/min\n")
	if last := term.text()[strings.LastIndex(term.text(), "bench ["):]; strings.Contains(last, "ETA") || strings.Contains(last, "running:") {
		t.Errorf("the last frame still shows an ETA or suites in flight:\n%s", last)
	}
	// Lines printed while the bar runs (warnings, Ctrl-C notes) go above it.
	if _, err := io.WriteString(p.log(), "after the bar\n"); err != nil {
		t.Fatal(err)
	}
	term.waitFor(t, "after the bar")
}

// CI set: even on a terminal, lines and no bar (a CI log keeps every
// frame a bar draws).
func TestProgressCIOnTerminal(t *testing.T) {
	t.Setenv("CI", "true")
	term := newTerminal(t)
	if p := newProgress(term.tty, false); p.mode != modeLines {
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

func TestResumeCommand(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "bench run --run-id 20260214_100000 --resume"},
		{[]string{"--config", "my bench.yaml", "--run-id", "old", "--models", "a,b"},
			"bench run --config 'my bench.yaml' --models a,b --run-id 20260214_100000 --resume"},
		{[]string{"-run-id=old", "--resume", "--quiet"}, "bench run --quiet --run-id 20260214_100000 --resume"},
		{[]string{"--prompts", "it's"}, `bench run --prompts 'it'\''s' --run-id 20260214_100000 --resume`},
	}
	for _, c := range cases {
		if got := resumeCommand(c.args, "20260214_100000"); got != c.want {
			t.Errorf("%q: %s, want %s", c.args, got, c.want)
		}
	}
}

// The real binary on a terminal: the bar is up while the first cells are
// still in flight (the server holds them), and ends with the run.
func TestLiveBarFromTheStart(t *testing.T) {
	h := newHoldServer(t, 0)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "prompts.yaml"), []byte(promptFile), 0o644)
	cfg := filepath.Join(dir, "bench.yaml")
	os.WriteFile(cfg, []byte("run:\n  concurrency: 2\n  timeout: 60s\n  warmup: false\nproviders:\n  - type: ollama_openai\n    base_url: "+h.URL+"/v1\n    models: [m]\nprompts:\n  files: [prompts.yaml]\n"), 0o644)
	term := newTerminal(t)
	cmd := exec.Command(benchBin, "run", "--config", cfg, "--run-id", "tty")
	cmd.Stderr, cmd.Stdout = term.tty, io.Discard
	cmd.Env = append(os.Environ(), "CI=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	h.waitStarted(t, 2)
	term.waitFor(t, "0/5 cells · ")
	term.waitFor(t, "running: ollama_openai/m 0/5")
	h.release()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("bench run: %v\n%s", err, term.text())
	}
	term.waitFor(t, "[1/1] ollama_openai/m: 5 cells in ")
	term.waitFor(t, "5/5 cells · ")
}
