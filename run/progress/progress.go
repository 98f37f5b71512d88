// Package progress is the run's progress display, one of its outputs
// (package output): a live bar on a terminal, one line per finished suite
// otherwise (a CI log stays readable), nothing with --quiet. It counts the
// records it is handed; the bar is drawn by mpb (cursor handling, terminal
// width, lines printed above a live bar), and what it says is computed
// here, on the display's clock, so it is testable to the second.
//
// Layer: the run (an output: fed by the runner through package output).
package progress

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/cwriter"
	"github.com/vbauerster/mpb/v8/decor"

	"bench/internal/format"
	"bench/internal/printable"
	"bench/internal/record/results"
	"bench/run/plan"
)

// How the progress is shown.
type mode int

const (
	// modeQuiet (--quiet): nothing but errors.
	modeQuiet mode = iota
	// modeLines (not a terminal, or CI set): one line per finished suite,
	// nothing per cell, so a CI log stays readable.
	modeLines
	// modeBar (a terminal): a live bar, redrawn in place, from the start.
	modeBar
)

// Display shows how a sweep is going (output.Output, WithStart,
// WithSuites, WithStop): Start draws the bar, each record moves it, and a
// suite's last record prints the suite's line.
type Display struct {
	mu   sync.Mutex
	w    io.Writer
	mode mode
	now  func() time.Time
	pl   *plan.Plan

	start   time.Time
	total   int // cells this invocation runs (a resume's remaining ones)
	tally   tally
	suites  []*suiteProgress
	index   map[suiteID]int
	running []int // suites started and not yet done, in start order
	nDone   int   // suites done
	ended   bool

	pb  *mpb.Progress
	bar *mpb.Bar
	out *Log
	// limits are each entry's adapted concurrency limit, as its last
	// record said (absent: the configured one).
	limits map[string]int
}

// tally counts cells by what became of them. Every finished cell is in
// exactly one count.
type tally struct {
	passed       int // answered; passed its check or had none
	failedChecks int // answered, and failed its check
	errors       int // errors, timeouts, empty answers, cancellations
	notRun       int // skipped as unavailable, rate-limited, refused for auth
	// why counts the failure types of errors and not-run cells.
	why map[string]int
}

func (t *tally) add(r *results.Record) {
	switch {
	case r.AvailabilityStatus == results.StatusSkippedUnavailable ||
		r.AvailabilityStatus == results.StatusRateLimited || r.AvailabilityStatus == results.StatusAuthError:
		t.notRun++
	case r.AvailabilityStatus != results.StatusOK || !r.Success:
		t.errors++
	case r.ObjectivePass != nil && !*r.ObjectivePass:
		t.failedChecks++
		return
	case r.ObjectivePass == nil && len(r.CheckErrors) > 0:
		// A judge or command validator that gave no verdict: an error,
		// never a pass.
		t.errors++
	default:
		t.passed++
		return
	}
	if t.why == nil {
		t.why = map[string]int{}
	}
	why := r.AvailabilityStatus
	switch {
	case r.FailureType != nil:
		why = *r.FailureType
	case len(r.CheckErrors) > 0:
		why = r.CheckErrors[0].Type
	}
	t.why[why]++
}

func (t *tally) done() int { return t.passed + t.failedChecks + t.errors + t.notRun }

// String is "12 passed · 3 failed checks · 1 error · 0 not run".
func (t *tally) String() string {
	return fmt.Sprintf("%d passed · %s · %s · %d not run", t.passed,
		format.Plural(t.failedChecks, "failed check"), format.Plural(t.errors, "error"), t.notRun)
}

// causes lists the failure types of errors and not-run cells, most frequent
// first: "model_not_found ×16, timeout".
func (t *tally) causes() string {
	type kv struct {
		k string
		n int
	}
	var list []kv
	for k, n := range t.why {
		list = append(list, kv{k, n})
	}
	slices.SortFunc(list, func(a, b kv) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(a.k, b.k)
	})
	var parts []string
	for _, e := range list {
		if e.n > 1 {
			parts = append(parts, fmt.Sprintf("%s ×%d", e.k, e.n))
		} else {
			parts = append(parts, e.k)
		}
	}
	return strings.Join(parts, ", ")
}

// suiteID names a suite as a record does.
type suiteID struct {
	provider, model, level string
	hasLevel               bool
}

func idOf(provider, model string, level *string) suiteID {
	id := suiteID{provider: provider, model: model}
	if level != nil {
		id.level, id.hasLevel = *level, true
	}
	return id
}

type suiteProgress struct {
	label    string
	provider string
	cells    int
	tally    tally
	started  time.Time
	done     bool
	// configured is its entry's concurrency; lowest the lowest limit its
	// cells started under as the run adapted it to the server's rate
	// limits (0: never below the configured one).
	configured, lowest int
}

// Options are how a Display shows the progress.
type Options struct {
	// Quiet (--quiet) shows nothing.
	Quiet bool
	// Now is the display's clock, nil for time.Now; tests replace it so
	// the rates, elapsed times and ETAs they check are exact.
	Now func() time.Time
}

// New returns the display of the plan's cells on log's writer: nothing
// when quiet, lines when it is not a terminal or the CI variable is set,
// else a live bar, under which log's lines are printed.
func New(log *Log, pl *plan.Plan, o Options) *Display {
	m := modeLines
	switch {
	case o.Quiet:
		m = modeQuiet
	case isTerminal(log.w) && os.Getenv("CI") == "":
		m = modeBar
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Display{w: log.w, mode: m, now: o.Now, out: log, pl: pl}
}

func isTerminal(w io.Writer) bool {
	f, ok := raw(w).(*os.File)
	return ok && cwriter.IsTerminal(int(f.Fd()))
}

// raw is the writer under bench's printable writer (see cmd/bench's run),
// for the terminal check and for the bar's own cursor control; what the bar
// shows is made printable before it is drawn.
func raw(w io.Writer) io.Writer {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		return u.Unwrap()
	}
	return w
}

// Start starts showing the progress of the plan's cells (output.WithStart):
// the bar's first frame, 0 of N cells, is drawn at once.
func (p *Display) Start() error {
	pl := p.pl
	p.mu.Lock()
	p.start = p.now()
	p.total = len(pl.Cells)
	p.index = map[suiteID]int{}
	p.limits = map[string]int{}
	configured := map[string]int{}
	for _, c := range pl.Cells {
		configured[c.Provider.Name] = c.Provider.Concurrency
	}
	for i, s := range pl.Suites {
		label := s.Provider + "/" + s.Model
		if s.ThinkingLevel != nil {
			label += " (" + *s.ThinkingLevel + ")"
		}
		p.suites = append(p.suites, &suiteProgress{label: label, provider: s.Provider, cells: s.Cells, done: s.Cells == 0})
		p.index[idOf(s.Provider, s.Model, s.ThinkingLevel)] = i
		p.suites[i].configured = configured[s.Provider]
	}
	p.mu.Unlock()
	if p.mode == modeBar && p.total > 0 {
		p.startBar()
	}
	return nil
}

// startBar draws the bar at once: the first frame shows 0 of N cells and
// the suites starting, before any cell has ended.
func (p *Display) startBar() {
	p.pb = mpb.New(mpb.WithOutput(raw(p.w)), mpb.WithRefreshRate(200*time.Millisecond))
	p.bar = p.pb.New(int64(p.total),
		mpb.BarStyle().Lbound("[").Filler("=").Tip(">").Padding("-").Rbound("]"),
		mpb.BarWidth(40), // narrower on a narrow terminal; the counts come first
		mpb.PrependDecorators(decor.Name("bench")),
		mpb.AppendDecorators(decor.Any(func(decor.Statistics) string { return p.headline() })),
		mpb.BarExtender(mpb.BarFillerFunc(func(w io.Writer, st decor.Statistics) error {
			for _, line := range p.detail() {
				fmt.Fprintln(w, fit(printable.String(line), st.AvailableWidth))
			}
			return nil
		}), false),
	)
	p.out.setBar(p.pb)
}

// fit cuts a line to the terminal's width, so a long suite name never wraps
// (a wrapped line would break the redraw).
func fit(s string, width int) string {
	if width <= 1 {
		return s
	}
	return runewidth.Truncate(s, width-1, "…")
}

// headline follows the bar: "316/960 cells · 1m42s elapsed · ETA 3m27s".
func (p *Display) headline() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	done := p.tally.done()
	elapsed := p.now().Sub(p.start)
	s := fmt.Sprintf("%d/%d cells · %s elapsed", done, p.total, clock(elapsed))
	switch {
	case p.ended:
		return s
	case done == 0 || elapsed <= 0:
		return s + " · ETA –"
	}
	eta := time.Duration(float64(p.total-done) / p.perSec(done, elapsed) * float64(time.Second))
	return s + " · ETA " + clock(eta)
}

// perSec is the rate so far: cells ended per second since the start.
func (p *Display) perSec(done int, elapsed time.Duration) float64 {
	return float64(done) / elapsed.Seconds()
}

// detail is the lines under the bar: the counts and the rate, then the
// suites in flight.
func (p *Display) detail() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	counts := "      " + p.tally.String()
	if done, elapsed := p.tally.done(), p.now().Sub(p.start); done > 0 && elapsed > 0 {
		counts += " · " + rate(p.perSec(done, elapsed))
	}
	lines := []string{counts}
	if p.ended {
		return lines
	}
	var run []string
	for _, i := range p.running {
		s := p.suites[i]
		line := fmt.Sprintf("%s %d/%d", s.label, s.tally.done(), s.cells)
		if l, ok := p.limits[s.provider]; ok && l < s.configured {
			line += fmt.Sprintf(" (rate-limited: %d of %d at once)", l, s.configured)
		}
		run = append(run, line)
	}
	switch {
	case len(run) > 3:
		run = append(run[:3], fmt.Sprintf("+%d more", len(run)-3))
	case len(run) == 0 && p.tally.done() < p.total:
		run = []string{"starting"}
	case len(run) == 0:
		run = []string{"writing the reports"}
	}
	return append(lines, "      running: "+strings.Join(run, ", "))
}

// rate is cells per second, or per minute when slower than one every ten
// seconds.
func rate(perSec float64) string {
	if perSec < 0.1 {
		return fmt.Sprintf("%.1f cells/min", perSec*60)
	}
	return fmt.Sprintf("%.1f cells/s", perSec)
}

// clock is a duration at a glance: 9s, 1m42s, 2h05m.
func clock(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// SuiteStart marks the suite as in flight (output.WithSuites).
func (p *Display) SuiteStart(s plan.Suite) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, ok := p.index[idOf(s.Provider, s.Model, s.ThinkingLevel)]
	if !ok || p.suites[i].done || slices.Contains(p.running, i) {
		return
	}
	p.suites[i].started = p.now()
	p.running = append(p.running, i)
}

// SuiteEnd drops the suite from those in flight (a drained suite ends
// without all its cells).
func (p *Display) SuiteEnd(s plan.Suite) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i, ok := p.index[idOf(s.Provider, s.Model, s.ThinkingLevel)]; ok {
		p.running = slices.DeleteFunc(p.running, func(j int) bool { return j == i })
	}
}

// AddRecord counts a finished cell and, when it was its suite's last, says
// so in one line.
func (p *Display) AddRecord(r *results.Record) error {
	p.mu.Lock()
	p.tally.add(r)
	done := p.tally.done()
	line := ""
	if r.ConcurrencyLimit != nil && p.limits != nil {
		p.limits[r.Provider] = *r.ConcurrencyLimit
	}
	if i, ok := p.index[idOf(r.Provider, r.Model, r.ThinkingLevel)]; ok {
		s := p.suites[i]
		s.tally.add(r)
		if l := r.ConcurrencyLimit; l != nil && *l < s.configured && (s.lowest == 0 || *l < s.lowest) {
			s.lowest = *l
		}
		if s.started.IsZero() {
			s.started = p.now()
		}
		if !s.done && s.tally.done() >= s.cells {
			s.done = true
			p.nDone++
			p.running = slices.DeleteFunc(p.running, func(j int) bool { return j == i })
			line = p.suiteLine(s)
		}
	}
	bar := p.bar
	p.mu.Unlock()
	// mpb is called without p.mu: its render goroutine takes p.mu in the
	// decorators.
	if bar != nil {
		bar.SetCurrent(int64(done))
	}
	if line != "" && p.mode != modeQuiet {
		fmt.Fprintln(p.out, line)
	}
	return nil
}

// suiteLine is a finished suite's line: "[2/4] ollama/qwen3:4b: 16 cells in
// 42s: 12 passed · 3 failed checks · 1 error · 0 not run (timeout)".
func (p *Display) suiteLine(s *suiteProgress) string {
	n := 0
	for _, x := range p.suites {
		if x.cells > 0 {
			n++
		}
	}
	line := fmt.Sprintf("  [%d/%d] %s: %s in %s: %s", p.nDone, n, s.label, format.Plural(s.cells, "cell"),
		clock(p.now().Sub(s.started)), s.tally.String())
	if c := s.tally.causes(); c != "" {
		line += " (" + c + ")"
	}
	if s.lowest > 0 {
		line += fmt.Sprintf("; rate-limited: down to %d of %d at once", s.lowest, s.configured)
	}
	return line
}

// Stop stops the bar, leaving its last frame on screen (output.WithStop).
func (p *Display) Stop() error {
	p.mu.Lock()
	p.ended = true
	p.mu.Unlock()
	if p.pb == nil {
		return nil
	}
	p.bar.Abort(false)
	p.pb.Wait()
	p.out.setBar(nil)
	return nil
}

// Log is where one-line notes go while a sweep runs (the runner's log,
// warnings, Ctrl-C messages): above the bar while there is one, so the bar
// is never torn, straight to the writer otherwise.
type Log struct {
	mu  sync.Mutex
	w   io.Writer
	bar *mpb.Progress
}

// NewLog writes to w, the display's writer (stderr).
func NewLog(w io.Writer) *Log { return &Log{w: w} }

func (l *Log) setBar(pb *mpb.Progress) {
	l.mu.Lock()
	l.bar = pb
	l.mu.Unlock()
}

// Write prints b above the bar, or to the writer when there is none.
func (l *Log) Write(b []byte) (int, error) {
	l.mu.Lock()
	pb := l.bar
	l.mu.Unlock()
	if pb != nil {
		// Above the bar, mpb writes to the terminal itself.
		if _, err := pb.Write(printable.Bytes(b)); err == nil {
			return len(b), nil
		}
	}
	return l.w.Write(b)
}
