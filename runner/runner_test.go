package runner

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bench/config"
	"bench/prompts"
	"bench/providers"
	"bench/results"
	"bench/validators"
)

// scripted is a provider whose behaviour each test sets: it exercises the
// runner's scheduling and record assembly, not a wire protocol (those are
// tested against real servers in the providers package and end to end).
type scripted struct {
	mu        sync.Mutex
	inFlight  int
	maxFlight int
	started   atomic.Int64
	hold      chan struct{} // when non-nil, each call waits for it
	stream    func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error)
	global    *atomic.Int64 // shared across providers: cells in flight overall
	globalMax *atomic.Int64
}

func (s *scripted) Stream(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
	s.started.Add(1)
	s.mu.Lock()
	s.inFlight++
	if s.inFlight > s.maxFlight {
		s.maxFlight = s.inFlight
	}
	s.mu.Unlock()
	if s.global != nil {
		n := s.global.Add(1)
		for {
			m := s.globalMax.Load()
			if n <= m || s.globalMax.CompareAndSwap(m, n) {
				break
			}
		}
		defer s.global.Add(-1)
	}
	defer func() { s.mu.Lock(); s.inFlight--; s.mu.Unlock() }()
	if s.hold != nil {
		select {
		case <-s.hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if s.stream != nil {
		return s.stream(ctx, req, emit)
	}
	emit(providers.Event{Kind: providers.EventRequestStart})
	emit(providers.Event{Kind: providers.EventText, Text: "OK"})
	return &providers.Response{Text: "OK"}, nil
}

type memSink struct {
	mu   sync.Mutex
	recs []*results.Record
	fail error
}

func (m *memSink) Write(r *results.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.recs = append(m.recs, r)
	return nil
}

func testConfig(provs []config.Provider, nPrompts, reps, concurrency int) *config.Config {
	c := &config.Config{Run: config.Run{ID: "t", Concurrency: concurrency, Repetitions: reps,
		Timeout: config.Duration(5 * time.Second), MaxOutputBytes: 1 << 16}}
	c.Providers = provs
	for i := 0; i < nPrompts; i++ {
		c.PromptSet = append(c.PromptSet, prompts.Prompt{ID: "P" + string(rune('0'+i)), Name: "p", Prompt: "say OK",
			Validator: &validators.Spec{Type: "noop"}})
	}
	return c
}

func TestLimitsAreHonoured(t *testing.T) {
	var global, globalMax atomic.Int64
	a := &scripted{global: &global, globalMax: &globalMax}
	b := &scripted{global: &global, globalMax: &globalMax}
	delay := func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
		emit(providers.Event{Kind: providers.EventRequestStart})
		time.Sleep(2 * time.Millisecond)
		emit(providers.Event{Kind: providers.EventText, Text: "OK"})
		return &providers.Response{Text: "OK"}, nil
	}
	a.stream, b.stream = delay, delay
	cfg := testConfig([]config.Provider{
		{Name: "a", Type: "ollama", Concurrency: 2, Models: []string{"m1", "m2"}, ThinkingLevels: []*string{nil}},
		{Name: "b", Type: "ollama", Concurrency: 3, Models: []string{"m1"}, ThinkingLevels: []*string{nil, ptr("high")}},
	}, 5, 2, 4)
	sink := &memSink{}
	out, err := Run(context.Background(), Options{Config: cfg, Plan: NewPlan(cfg),
		Providers: map[string]providers.Provider{"a": a, "b": b}, Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	if want := (2 + 2) * 5 * 2; out.Recorded != want || len(sink.recs) != want || out.EndReason != EndFinished {
		t.Fatalf("recorded %d (%s), want %d finished", out.Recorded, out.EndReason, want)
	}
	if a.maxFlight > 2 || b.maxFlight > 3 || globalMax.Load() > 4 {
		t.Errorf("in flight: a %d (limit 2), b %d (limit 3), all %d (limit 4)", a.maxFlight, b.maxFlight, globalMax.Load())
	}
	reps := map[int]int{}
	for _, r := range sink.recs {
		reps[r.Repetition]++
		if r.AvailabilityStatus != "ok" || !r.Success || r.TTFTMS == nil || *r.TTFTMS > r.E2EMS {
			t.Fatalf("bad record %+v", r)
		}
	}
	if reps[0] != 20 || reps[1] != 20 {
		t.Errorf("repetitions %v, want 20 each", reps)
	}
}

// The suite hooks bracket each suite: its start comes before any of its
// records and its end after all of them.
func TestSuiteHooks(t *testing.T) {
	p := &scripted{}
	cfg := testConfig([]config.Provider{{Name: "a", Type: "ollama", Concurrency: 2, Models: []string{"m1", "m2"}, ThinkingLevels: []*string{nil}}}, 3, 1, 2)
	h := &hookLog{}
	sink := &hookSink{log: h}
	if _, err := Run(context.Background(), Options{Config: cfg, Plan: NewPlan(cfg), Providers: map[string]providers.Provider{"a": p}, Sink: sink, Hooks: h}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"m1", "m2"} {
		start, end := h.index("start "+m), h.index("end "+m)
		if start < 0 || end < 0 {
			t.Fatalf("events %v: missing start or end for %s", h.events, m)
		}
		for i, e := range h.events {
			if e == "record "+m && (i < start || i > end) {
				t.Errorf("events %v: record of %s outside its suite", h.events, m)
			}
		}
	}
}

type hookLog struct {
	mu     sync.Mutex
	events []string
}

func (h *hookLog) add(e string)       { h.mu.Lock(); h.events = append(h.events, e); h.mu.Unlock() }
func (h *hookLog) SuiteStart(s Suite) { h.add("start " + s.Model) }
func (h *hookLog) SuiteEnd(s Suite)   { h.add("end " + s.Model) }
func (h *hookLog) index(e string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, x := range h.events {
		if x == e {
			return i
		}
	}
	return -1
}

type hookSink struct{ log *hookLog }

func (s *hookSink) Write(r *results.Record) error { s.log.add("record " + r.Model); return nil }

// Draining (first Ctrl-C) lets the cells in flight finish and record, and
// starts no new ones.
func TestDrainFinishesInFlight(t *testing.T) {
	p := &scripted{hold: make(chan struct{})}
	cfg := testConfig([]config.Provider{{Name: "a", Type: "ollama", Concurrency: 2, Models: []string{"m"}, ThinkingLevels: []*string{nil}}}, 8, 1, 2)
	drain := make(chan struct{})
	sink := &memSink{}
	done := make(chan *Outcome)
	go func() {
		out, _ := Run(context.Background(), Options{Config: cfg, Plan: NewPlan(cfg), Providers: map[string]providers.Provider{"a": p}, Sink: sink, Drain: drain})
		done <- out
	}()
	for p.started.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	close(drain)
	close(p.hold)
	out := <-done
	if out.Recorded != 2 || len(sink.recs) != 2 || p.started.Load() != 2 {
		t.Fatalf("recorded %d, started %d; want the 2 in flight only", out.Recorded, p.started.Load())
	}
	if out.EndReason != EndInterrupted {
		t.Errorf("end reason %s, want %s", out.EndReason, EndInterrupted)
	}
	for _, r := range sink.recs {
		if !r.Success {
			t.Errorf("in-flight cell not completed: %+v", r)
		}
	}
}

// Aborting (second Ctrl-C) cancels the cells in flight; they are recorded as
// cancelled errors.
func TestAbortCancelsInFlight(t *testing.T) {
	p := &scripted{hold: make(chan struct{})}
	cfg := testConfig([]config.Provider{{Name: "a", Type: "ollama", Concurrency: 1, Models: []string{"m"}, ThinkingLevels: []*string{nil}}}, 3, 1, 1)
	ctx, cancel := context.WithCancel(context.Background())
	sink := &memSink{}
	done := make(chan *Outcome)
	go func() {
		out, _ := Run(ctx, Options{Config: cfg, Plan: NewPlan(cfg), Providers: map[string]providers.Provider{"a": p}, Sink: sink})
		done <- out
	}()
	for p.started.Load() < 1 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	out := <-done
	if out.EndReason != EndAborted || len(sink.recs) != 1 {
		t.Fatalf("end %s with %d records, want aborted with 1", out.EndReason, len(sink.recs))
	}
	if r := sink.recs[0]; r.AvailabilityStatus != "error" || *r.FailureType != "cancelled" {
		t.Errorf("record %s/%v, want error/cancelled", r.AvailabilityStatus, *r.FailureType)
	}
}

// A write failure stops the run with an error: only I/O aborts a run.
func TestSinkFailureStopsRun(t *testing.T) {
	p := &scripted{}
	cfg := testConfig([]config.Provider{{Name: "a", Type: "ollama", Concurrency: 1, Models: []string{"m"}, ThinkingLevels: []*string{nil}}}, 5, 1, 1)
	sink := &memSink{fail: errors.New("disk full")}
	out, err := Run(context.Background(), Options{Config: cfg, Plan: NewPlan(cfg), Providers: map[string]providers.Provider{"a": p}, Sink: sink})
	if err == nil || !strings.Contains(err.Error(), "disk full") || out.EndReason != EndIOError {
		t.Fatalf("err %v, end %s; want the disk error and io_error", err, out.EndReason)
	}
	if p.started.Load() > 2 {
		t.Errorf("%d cells started after the sink failed", p.started.Load())
	}
}

func TestRecordAssembly(t *testing.T) {
	long := strings.Repeat("é", 40) // 80 bytes
	cases := []struct {
		name   string
		stream func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error)
		check  func(t *testing.T, r *results.Record)
	}{
		{"role-only chunk is not the first token", func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			emit(providers.Event{Kind: providers.EventText, Text: ""})
			time.Sleep(20 * time.Millisecond)
			emit(providers.Event{Kind: providers.EventText, Text: "OK"})
			return &providers.Response{Text: "OK"}, nil
		}, func(t *testing.T, r *results.Record) {
			if r.TTFTMS == nil || *r.TTFTMS < 20 || *r.TTFTMS > r.E2EMS {
				t.Errorf("ttft %v e2e %d: an empty delta was taken as the first token", r.TTFTMS, r.E2EMS)
			}
		}},
		{"reasoning timed apart", func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			emit(providers.Event{Kind: providers.EventReasoning, Text: "hmm"})
			time.Sleep(20 * time.Millisecond)
			emit(providers.Event{Kind: providers.EventText, Text: "OK"})
			return &providers.Response{Text: "OK", Reasoning: "hmm"}, nil
		}, func(t *testing.T, r *results.Record) {
			if r.TTFRMS == nil || r.TTFTMS == nil || r.TTFOMS == nil || *r.TTFOMS != *r.TTFRMS || *r.TTFTMS < *r.TTFRMS+20 {
				t.Errorf("ttfr %v ttft %v ttfo %v", r.TTFRMS, r.TTFTMS, r.TTFOMS)
			}
			if r.Reasoning != "hmm" {
				t.Errorf("reasoning %q", r.Reasoning)
			}
		}},
		{"retries restart the clock", func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			time.Sleep(50 * time.Millisecond)
			emit(providers.Event{Kind: providers.EventRequestStart})
			emit(providers.Event{Kind: providers.EventText, Text: "OK"})
			return &providers.Response{Text: "OK", Retries: 1, RetryWaitMS: 50}, nil
		}, func(t *testing.T, r *results.Record) {
			if r.E2EMS >= 50 || r.Retries != 1 || r.RetryWaitMS != 50 || r.EndedAtMS-r.StartedAtMS < 50 {
				t.Errorf("e2e %d retries %d wait %d wall %d: the wait leaked into e2e", r.E2EMS, r.Retries, r.RetryWaitMS, r.EndedAtMS-r.StartedAtMS)
			}
		}},
		{"empty reply", func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			return &providers.Response{Text: " \n"}, nil
		}, func(t *testing.T, r *results.Record) {
			if r.AvailabilityStatus != "ok" || r.Success || *r.FailureType != "empty_response" || r.ObjectivePass != nil {
				t.Errorf("got %s success=%v %v", r.AvailabilityStatus, r.Success, r.FailureType)
			}
		}},
		{"tool call only is not empty", func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			emit(providers.Event{Kind: providers.EventToolCall})
			return &providers.Response{ToolCalls: []results.ToolCall{{Name: "get_memory", Arguments: []byte(`{"unit":"MB"}`)}}}, nil
		}, func(t *testing.T, r *results.Record) {
			if !r.Success || r.TTFTMS == nil || r.ToolCallCount != 1 || r.ToolCalls[0] != "get_memory" || r.ToolCallDetails[0].Source != "native" {
				t.Errorf("got success=%v ttft=%v calls=%v", r.Success, r.TTFTMS, r.ToolCalls)
			}
		}},
		{"truncated on a rune boundary", func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			emit(providers.Event{Kind: providers.EventText, Text: long})
			return &providers.Response{Text: long}, nil
		}, func(t *testing.T, r *results.Record) {
			if !r.RawOutputTruncated || r.RawOutputBytes != 80 || len(r.RawOutput) != 32 || !strings.HasPrefix(long, r.RawOutput) {
				t.Errorf("truncated=%v bytes=%d kept=%d", r.RawOutputTruncated, r.RawOutputBytes, len(r.RawOutput))
			}
		}},
		{"timeout", func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			emit(providers.Event{Kind: providers.EventText, Text: "partial"})
			<-ctx.Done()
			return &providers.Response{Text: "partial"}, ctx.Err()
		}, func(t *testing.T, r *results.Record) {
			if r.AvailabilityStatus != "error" || *r.FailureType != "timeout" || r.RawOutput != "partial" {
				t.Errorf("got %s/%v %q", r.AvailabilityStatus, r.FailureType, r.RawOutput)
			}
		}},
		{"classified failure", func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			return nil, &providers.Failure{Status: "rate_limited", Type: "http_429", HTTPStatus: 429, Message: "slow down"}
		}, func(t *testing.T, r *results.Record) {
			if r.AvailabilityStatus != "rate_limited" || *r.FailureType != "http_429" || *r.HTTPStatus != 429 || *r.ErrorMessage != "slow down" || r.ToolCalls == nil {
				t.Errorf("got %+v", r)
			}
		}},
		{"unclassified error", func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
			return nil, errors.New("boom")
		}, func(t *testing.T, r *results.Record) {
			if r.AvailabilityStatus != "error" || *r.FailureType != "exception" || *r.ErrorMessage != "boom" {
				t.Errorf("got %+v", r)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &scripted{stream: tc.stream}
			cfg := testConfig([]config.Provider{{Name: "a", Type: "ollama", Concurrency: 1, Models: []string{"m"}, ThinkingLevels: []*string{nil}}}, 1, 1, 1)
			cfg.Run.MaxOutputBytes = 33
			cfg.Run.Timeout = config.Duration(100 * time.Millisecond)
			sink := &memSink{}
			if _, err := Run(context.Background(), Options{Config: cfg, Plan: NewPlan(cfg), Providers: map[string]providers.Provider{"a": p}, Sink: sink}); err != nil {
				t.Fatal(err)
			}
			if len(sink.recs) != 1 {
				t.Fatalf("%d records", len(sink.recs))
			}
			tc.check(t, sink.recs[0])
		})
	}
}

func TestPlanWithout(t *testing.T) {
	cfg := testConfig([]config.Provider{{Name: "a", Type: "ollama", Concurrency: 1, Models: []string{"m1", "m2"}, ThinkingLevels: []*string{nil, ptr("low")}}}, 3, 2, 1)
	full := NewPlan(cfg)
	if len(full.Cells) != 2*2*3*2 || len(full.Suites) != 4 {
		t.Fatalf("%d cells, %d suites", len(full.Cells), len(full.Suites))
	}
	done := map[CellKey]bool{}
	for _, c := range full.Cells[:7] { // all of suite 0 (6 cells) and one of suite 1
		r := &results.Record{Provider: c.Provider.Name, Model: c.Model, ThinkingLevel: c.ThinkingLevel, PromptID: c.Prompt.ID, Repetition: c.Repetition}
		done[RecordKey(r)] = true
	}
	rest := full.Without(done)
	if len(rest.Cells) != 24-7 || rest.Suites[0].Cells != 0 || rest.Suites[1].Cells != 5 || rest.Suites[2].Cells != 6 {
		t.Errorf("%d cells left, suites %+v", len(rest.Cells), rest.Suites)
	}
	if rest.Cells[0].Key() != full.Cells[7].Key() {
		t.Errorf("order changed: first left is %+v", rest.Cells[0].Key())
	}
}
