package output

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/run/plan"
)

// journal is what every test output writes to, in the order it happened.
type journal struct {
	mu     sync.Mutex
	events []string
}

func (j *journal) add(e string) { j.mu.Lock(); j.events = append(j.events, e); j.mu.Unlock() }
func (j *journal) list() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.events)
}

// plain has nothing but AddRecord.
type plain struct {
	name string
	j    *journal
	fail error
	hold chan struct{} // when set, AddRecord waits on it
}

func (p *plain) AddRecord(r *results.Record) error {
	if p.hold != nil {
		<-p.hold
	}
	p.j.add(p.name + " record " + r.PromptID)
	return p.fail
}

// critical is a results.jsonl stand-in.
type critical struct {
	plain
	stopErr error
}

func (c *critical) Critical() {}
func (c *critical) Stop() error {
	c.j.add(c.name + " stop")
	return c.stopErr
}

// full has every optional capability.
type full struct {
	plain
	startErr error
	stopErr  error
}

func (f *full) Start() error            { f.j.add(f.name + " start"); return f.startErr }
func (f *full) SuiteStart(s plan.Suite) { f.j.add(f.name + " suite start " + s.Model) }
func (f *full) SuiteEnd(s plan.Suite)   { f.j.add(f.name + " suite end " + s.Model) }
func (f *full) SuiteWarmup(s plan.Suite, w Warmup) {
	f.j.add(f.name + " warmup " + s.Model + " " + w.Load.String())
}
func (f *full) TraceParent(c plan.Cell) string       { return f.name + "/" + c.Model }
func (f *full) SuiteTraceParent(s plan.Suite) string { return f.name + "/suite/" + s.Model }
func (f *full) JudgeTraceParent(c plan.Cell) string  { return f.name + "/judge/" + c.Model }
func (f *full) RunEnd(e End)                         { f.j.add(f.name + " end " + e.Reason) }
func (f *full) Stop() error                          { f.j.add(f.name + " stop"); return f.stopErr }

// suitesOnly brackets suites and takes no warm-up: beside an output that
// does, it must not hide the warm-up from it (the bug a wrapper made).
type suitesOnly struct{ plain }

func (s *suitesOnly) SuiteStart(plan.Suite) { s.j.add(s.name + " suite start") }
func (s *suitesOnly) SuiteEnd(plan.Suite)   { s.j.add(s.name + " suite end") }

func rec(id string) *results.Record { return &results.Record{PromptID: id} }

// Each output is asked for each capability itself: the warm-up reaches the
// output that takes it whatever sits beside it in the list, and only the
// outputs that bracket suites are told of them.
func TestManagerAsksEachOutput(t *testing.T) {
	j := &journal{}
	res := &critical{plain: plain{name: "results", j: j}}
	sweep := &suitesOnly{plain{name: "progress", j: j}}
	rsrc := &full{plain: plain{name: "resources", j: j}}
	m := NewManager([]Output{sweep, rsrc, res}, nil)
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	s := plan.Suite{Model: "m"}
	m.SuiteStart(s)
	m.SuiteWarmup(s, Warmup{Load: 1500 * time.Millisecond})
	if err := m.AddRecord(rec("P0")); err != nil {
		t.Fatal(err)
	}
	m.SuiteEnd(s)
	if got := m.TraceParent(plan.Cell{Model: "m"}); got != "resources/m" {
		t.Errorf("trace parent %q", got)
	}
	if got := m.JudgeTraceParent(plan.Cell{Model: "m"}); got != "resources/judge/m" {
		t.Errorf("judge trace parent %q", got)
	}
	if got := m.SuiteTraceParent(s); got != "resources/suite/m" {
		t.Errorf("suite trace parent %q", got)
	}
	if err := m.Stop(End{Reason: "finished", Planned: 1, Recorded: 1}); err != nil {
		t.Fatal(err)
	}
	got := j.list()
	for _, want := range []string{"resources start", "progress suite start", "resources suite start m", "resources warmup m 1.5s",
		"results record P0", "progress record P0", "resources record P0", "progress suite end", "resources suite end m",
		"resources end finished", "results stop", "resources stop"} {
		if !slices.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, strings.Join(got, "\n"))
		}
	}
	if n := strings.Count(strings.Join(got, "\n"), "warmup"); n != 1 {
		t.Errorf("%d warm-ups told, want 1:\n%s", n, strings.Join(got, "\n"))
	}
	// The Critical output is stopped first, whatever its place in the list;
	// RunEnd comes before any Stop.
	if i, k, e := slices.Index(got, "results stop"), slices.Index(got, "resources stop"), slices.Index(got, "resources end finished"); !(e < i && i < k) {
		t.Errorf("end at %d, results stop at %d, resources stop at %d:\n%s", e, i, k, strings.Join(got, "\n"))
	}
}

// results.jsonl has a record before any other output sees it, and a slow
// output holds neither the run nor results.jsonl: its records wait in its
// queue.
func TestManagerCriticalFirstOthersQueued(t *testing.T) {
	j := &journal{}
	res := &critical{plain: plain{name: "results", j: j}}
	slow := &plain{name: "slow", j: j, hold: make(chan struct{})}
	m := NewManager([]Output{slow, res}, nil)
	m.Start()
	for _, id := range []string{"P0", "P1", "P2"} {
		if err := m.AddRecord(rec(id)); err != nil {
			t.Fatal(err)
		}
	}
	// Every AddRecord returned while the slow output has handled none.
	if got := j.list(); !slices.Equal(got, []string{"results record P0", "results record P1", "results record P2"}) {
		t.Errorf("before the slow output moved: %v", got)
	}
	close(slow.hold)
	m.Stop(End{})
	got := j.list()
	if !slices.Equal(got[3:], []string{"slow record P0", "slow record P1", "slow record P2", "results stop"}) {
		t.Errorf("after Stop: %v", got)
	}
}

// A Critical output's failure is the run's: the record is not passed on.
// Another output's failure is one warning however often it fails, and its
// Stop's failure another; neither is returned.
func TestManagerFailures(t *testing.T) {
	j := &journal{}
	var log strings.Builder
	res := &critical{plain: plain{name: "results", j: j}}
	bad := &full{plain: plain{name: "snapshots", j: j, fail: errors.New("snapshots: disk full")}, stopErr: errors.New("snapshots: 3 not written")}
	m := NewManager([]Output{res, bad}, &log)
	m.Start()
	for _, id := range []string{"P0", "P1", "P2"} {
		m.AddRecord(rec(id))
	}
	res.fail = errors.New("write results.jsonl: no space left on device")
	if err := m.AddRecord(rec("P3")); err == nil || !strings.Contains(err.Error(), "no space") {
		t.Errorf("results.jsonl's failure: %v", err)
	}
	res.stopErr = errors.New("sync results.jsonl: I/O error")
	if err := m.Stop(End{Reason: "io_error"}); err == nil || !strings.Contains(err.Error(), "sync results.jsonl") {
		t.Errorf("results.jsonl's Stop: %v", err)
	}
	if got := j.list(); slices.Contains(got, "snapshots record P3") {
		t.Errorf("a record results.jsonl did not take went on: %v", got)
	}
	want := "bench: warning: snapshots: disk full (the run goes on; results.jsonl is unaffected)\n" +
		"bench: warning: snapshots: 3 not written (results.jsonl is unaffected)\n"
	if log.String() != want {
		t.Errorf("warnings:\n%s\nwant\n%s", log.String(), want)
	}
}

// A Critical output that cannot start stops the run before it starts;
// another is a warning.
func TestManagerStart(t *testing.T) {
	j := &journal{}
	var log strings.Builder
	soft := &full{plain: plain{name: "traces", j: j}, startErr: errors.New("traces: no directory")}
	m := NewManager([]Output{soft}, &log)
	if err := m.Start(); err != nil || !strings.Contains(log.String(), "traces: no directory") {
		t.Errorf("start: %v, log %q", err, log.String())
	}
	m.Stop(End{})
	hardOut := &criticalStarter{full: full{plain: plain{name: "results", j: j}, startErr: errors.New("open results.jsonl: read-only")}}
	m = NewManager([]Output{hardOut}, &log)
	if err := m.Start(); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a Critical output that cannot start: %v", err)
	}
}

type criticalStarter struct{ full }

func (c *criticalStarter) Critical() {}

// No trace parent without an output that gives one.
func TestManagerNoTraceParent(t *testing.T) {
	m := NewManager([]Output{&plain{name: "p", j: &journal{}}}, nil)
	if m.TraceParent(plan.Cell{}) != "" || m.SuiteTraceParent(plan.Suite{}) != "" || m.JudgeTraceParent(plan.Cell{}) != "" {
		t.Error("a trace parent from nowhere")
	}
}
