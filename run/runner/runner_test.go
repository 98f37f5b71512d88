package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bench/config"
	"bench/internal/record/results"
	"bench/internal/record/secrets"
	"bench/prompts"
	"bench/providers"
	"bench/run/output"
	"bench/run/plan"
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
	secrets   providers.Secrets
}

func (s *scripted) Probe(context.Context) *providers.Probe { return &providers.Probe{} }
func (s *scripted) Secrets() providers.Secrets             { return s.secrets }

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

func (m *memSink) Critical() {}

func (m *memSink) AddRecord(r *results.Record) error {
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
		runtime.Gosched() // let other cells overlap this one
		emit(providers.Event{Kind: providers.EventText, Text: "OK"})
		return &providers.Response{Text: "OK"}, nil
	}
	a.stream, b.stream = delay, delay
	cfg := testConfig([]config.Provider{
		{Name: "a", Type: "ollama", Concurrency: 2, Models: []string{"m1", "m2"}, ThinkingLevels: []*string{nil}},
		{Name: "b", Type: "ollama", Concurrency: 3, Models: []string{"m1"}, ThinkingLevels: []*string{nil, ptr("high")}},
	}, 5, 2, 4)
	sink := &memSink{}
	out, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg),
		Providers: map[string]providers.Provider{"a": a, "b": b}, Outputs: []output.Output{sink}})
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
	if _, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Providers: map[string]providers.Provider{"a": p}, Outputs: []output.Output{sink, h}}); err != nil {
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

func (h *hookLog) add(e string)                    { h.mu.Lock(); h.events = append(h.events, e); h.mu.Unlock() }
func (h *hookLog) AddRecord(*results.Record) error { return nil }
func (h *hookLog) SuiteStart(s plan.Suite)         { h.add("start " + s.Model) }
func (h *hookLog) SuiteEnd(s plan.Suite)           { h.add("end " + s.Model) }
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

func (s *hookSink) AddRecord(r *results.Record) error { s.log.add("record " + r.Model); return nil }
func (s *hookSink) Critical()                         {}

// Draining (first Ctrl-C) lets the cells in flight finish and record, and
// starts no new ones.
func TestDrainFinishesInFlight(t *testing.T) {
	p := &scripted{hold: make(chan struct{})}
	cfg := testConfig([]config.Provider{{Name: "a", Type: "ollama", Concurrency: 2, Models: []string{"m"}, ThinkingLevels: []*string{nil}}}, 8, 1, 2)
	drain := make(chan struct{})
	sink := &memSink{}
	done := make(chan *Outcome)
	go func() {
		out, _ := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Providers: map[string]providers.Provider{"a": p}, Outputs: []output.Output{sink}, Drain: drain})
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
		out, _ := Run(ctx, Options{Config: cfg, Plan: plan.New(cfg), Providers: map[string]providers.Provider{"a": p}, Outputs: []output.Output{sink}})
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
	out, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Providers: map[string]providers.Provider{"a": p}, Outputs: []output.Output{sink}})
	if err == nil || !strings.Contains(err.Error(), "disk full") || out.EndReason != EndIOError {
		t.Fatalf("err %v, end %s; want the disk error and io_error", err, out.EndReason)
	}
	if p.started.Load() > 2 {
		t.Errorf("%d cells started after the sink failed", p.started.Load())
	}
}

// fakeClock is the runner's clock in tests: time moves only when a test
// says so, so every duration asserted is exact.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_800_000_000, 0)} }

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

type streamFunc func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error)

func TestRecordAssembly(t *testing.T) {
	long := strings.Repeat("é", 40) // 80 bytes
	ms := func(v int64) *int64 { return &v }
	cases := []struct {
		name   string
		stream streamFunc
		check  func(t *testing.T, r *results.Record)
	}{
		{"role-only chunk is not the first token", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			clk.Advance(5 * time.Millisecond)
			emit(providers.Event{Kind: providers.EventText, Text: ""})
			clk.Advance(20 * time.Millisecond)
			emit(providers.Event{Kind: providers.EventText, Text: "OK"})
			clk.Advance(3 * time.Millisecond)
			return &providers.Response{Text: "OK"}, nil
		}, func(t *testing.T, r *results.Record) {
			if !reflect.DeepEqual(r.TTFTMS, ms(25)) || r.E2EMS != 28 || r.Chunks != 1 {
				t.Errorf("ttft %v e2e %d chunks %d: want 25, 28, 1 (the empty delta is not the first token)", deref(r.TTFTMS), r.E2EMS, r.Chunks)
			}
		}},
		{"reasoning timed apart", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			clk.Advance(7 * time.Millisecond)
			emit(providers.Event{Kind: providers.EventReasoning, Text: "hmm"})
			clk.Advance(20 * time.Millisecond)
			emit(providers.Event{Kind: providers.EventText, Text: "OK"})
			return &providers.Response{Text: "OK", Reasoning: "hmm"}, nil
		}, func(t *testing.T, r *results.Record) {
			if !reflect.DeepEqual(r.TTFRMS, ms(7)) || !reflect.DeepEqual(r.TTFTMS, ms(27)) || !reflect.DeepEqual(r.TTFOMS, ms(7)) {
				t.Errorf("ttfr %v ttft %v ttfo %v, want 7, 27, 7", deref(r.TTFRMS), deref(r.TTFTMS), deref(r.TTFOMS))
			}
			if r.Reasoning != "hmm" {
				t.Errorf("reasoning %q", r.Reasoning)
			}
		}},
		{"retries restart the clock", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			clk.Advance(2 * time.Millisecond)
			emit(providers.Event{Kind: providers.EventRequestStart})
			clk.Advance(4 * time.Millisecond)
			emit(providers.Event{Kind: providers.EventRetry, Wait: 50 * time.Millisecond, Text: "http_429"})
			clk.Advance(50 * time.Millisecond)
			emit(providers.Event{Kind: providers.EventRequestStart, Attempt: 1})
			clk.Advance(10 * time.Millisecond)
			emit(providers.Event{Kind: providers.EventText, Text: "OK"})
			clk.Advance(1 * time.Millisecond)
			return &providers.Response{Text: "OK", Retries: 1, RetryWaitMS: 50}, nil
		}, func(t *testing.T, r *results.Record) {
			if r.E2EMS != 11 || !reflect.DeepEqual(r.TTFTMS, ms(10)) || r.Retries != 1 || r.RetryWaitMS != 50 || r.EndedAtMS-r.StartedAtMS != 67 {
				t.Errorf("e2e %d ttft %v retries %d wait %d wall %d: want 11, 10, 1, 50, 67", r.E2EMS, deref(r.TTFTMS), r.Retries, r.RetryWaitMS, r.EndedAtMS-r.StartedAtMS)
			}
			want := []results.TimelineEvent{
				{Event: "request_start", AtMS: 2},
				{Event: "retry", AtMS: 6, WaitMS: 50, Detail: "http_429"},
				{Event: "request_start", AtMS: 56, Attempt: 1},
				{Event: "first_text", AtMS: 66},
				{Event: "end", AtMS: 67},
			}
			if !reflect.DeepEqual(r.Timeline, want) {
				t.Errorf("timeline\n%+v\nwant\n%+v", r.Timeline, want)
			}
		}},
		{"every phase on the timeline", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			t0 := clk.Now()
			emit(providers.Event{Kind: providers.EventRequestStart})
			at := func(us int) time.Time { return t0.Add(time.Duration(us) * time.Microsecond) }
			// Stamped off the provider's goroutine, emitted later with At.
			clk.Advance(9 * time.Millisecond)
			emit(providers.Event{Kind: providers.EventConnected, At: at(1250), Text: "new"})
			emit(providers.Event{Kind: providers.EventRequestWritten, At: at(1500)})
			emit(providers.Event{Kind: providers.EventFirstByte, At: at(8125)})
			emit(providers.Event{Kind: providers.EventToolCall, Text: `{"a"`, Call: 0})
			clk.Advance(1 * time.Millisecond)
			emit(providers.Event{Kind: providers.EventToolCall, Text: `:1}`, Call: 0})
			emit(providers.Event{Kind: providers.EventToolCall, Text: `{}`, Call: 1})
			return &providers.Response{ToolCalls: []results.ToolCall{{Name: "a", Arguments: []byte(`{"a":1}`)}, {Name: "b", Arguments: []byte(`{}`)}}}, nil
		}, func(t *testing.T, r *results.Record) {
			want := []results.TimelineEvent{
				{Event: "request_start", AtMS: 0},
				{Event: "connected", AtMS: 1.25, Detail: "new"},
				{Event: "request_written", AtMS: 1.5},
				{Event: "first_byte", AtMS: 8.125},
				{Event: "tool_call", AtMS: 9},
				{Event: "tool_call", AtMS: 10, Call: 1},
				{Event: "end", AtMS: 10},
			}
			// ttft and e2e count from the request written (1.5 ms), rounded:
			// 7.5 ms is 8, 8.5 ms is 9; the 1.5 ms before is queue_ms.
			if !reflect.DeepEqual(r.Timeline, want) || !reflect.DeepEqual(r.TTFTMS, ms(8)) || r.E2EMS != 9 || r.Chunks != 3 || deref(r.QueueMS) != 1.5 {
				t.Errorf("timeline\n%+v\nwant\n%+v (ttft %v, e2e %d, queue %v, chunks %d)", r.Timeline, want, deref(r.TTFTMS), r.E2EMS, deref(r.QueueMS), r.Chunks)
			}
		}},
		{"rounded, not truncated", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			clk.Advance(2600 * time.Microsecond)
			emit(providers.Event{Kind: providers.EventText, Text: "OK"})
			clk.Advance(2300 * time.Microsecond)
			return &providers.Response{Text: "OK"}, nil
		}, func(t *testing.T, r *results.Record) {
			if !reflect.DeepEqual(r.TTFTMS, ms(3)) || r.E2EMS != 5 || r.QueueMS != nil {
				t.Errorf("ttft %v e2e %d queue %v: want 3 (2.6 rounded), 5 (4.9), none", deref(r.TTFTMS), r.E2EMS, deref(r.QueueMS))
			}
		}},
		{"decode rate over the time after the first token", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			clk.Advance(100 * time.Millisecond)
			for i := 0; i < 21; i++ {
				if i > 0 {
					clk.Advance(20 * time.Millisecond)
				}
				emit(providers.Event{Kind: providers.EventText, Text: "a"})
			}
			clk.Advance(3 * time.Millisecond) // the done chunk: not in the window
			out := 21
			return &providers.Response{Text: "ab", Usage: providers.Usage{OutputTokens: &out}}, nil
		}, func(t *testing.T, r *results.Record) {
			if r.TokensPerS == nil || *r.TokensPerS != 50 || r.ReasoningTokensPerS != nil {
				t.Errorf("tokens/s %v reasoning %v, want (21-1)/0.4s = 50 and none", deref(r.TokensPerS), deref(r.ReasoningTokensPerS))
			}
		}},
		// The reasoning and the answer each over their own window: the
		// answer's tokens are not the output's, and the answer's window does
		// not start at the first reasoning delta.
		{"reasoning and answer rates apart", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			clk.Advance(50 * time.Millisecond)
			for i := 0; i < 41; i++ { // 40 intervals of 20 ms: 50 tokens/s
				if i > 0 {
					clk.Advance(20 * time.Millisecond)
				}
				emit(providers.Event{Kind: providers.EventReasoning, Text: "r"})
			}
			for i := 0; i < 11; i++ { // 10 intervals of 5 ms: 200 tokens/s
				clk.Advance(5 * time.Millisecond)
				emit(providers.Event{Kind: providers.EventText, Text: "a"})
			}
			out := 52
			return &providers.Response{Text: "a", Reasoning: "r", Usage: providers.Usage{OutputTokens: &out}}, nil
		}, func(t *testing.T, r *results.Record) {
			if deref(r.TokensPerS) != 200.0 || deref(r.ReasoningTokensPerS) != 50.0 {
				t.Errorf("tokens/s %v reasoning %v, want 200 and 50", deref(r.TokensPerS), deref(r.ReasoningTokensPerS))
			}
		}},
		{"reasoning count from the server", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			for i := 0; i < 5; i++ { // five summary deltas for 100 reasoning tokens
				clk.Advance(100 * time.Millisecond)
				emit(providers.Event{Kind: providers.EventReasoning, Text: "r"})
			}
			for i := 0; i < 5; i++ {
				clk.Advance(10 * time.Millisecond)
				emit(providers.Event{Kind: providers.EventText, Text: "a"})
			}
			out, reasoning := 105, 100
			return &providers.Response{Text: "a", Usage: providers.Usage{OutputTokens: &out, ReasoningTokens: &reasoning}}, nil
		}, func(t *testing.T, r *results.Record) {
			// 100 × 4/5 over 0.4 s; 5 × 4/5 over 0.04 s.
			if deref(r.ReasoningTokensPerS) != 200.0 || deref(r.TokensPerS) != 100.0 {
				t.Errorf("tokens/s %v reasoning %v, want 100 and 200", deref(r.TokensPerS), deref(r.ReasoningTokensPerS))
			}
		}},
		{"no rate over a short window", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			clk.Advance(30 * time.Millisecond)
			emit(providers.Event{Kind: providers.EventText, Text: "O"}) // two deltas a read apart
			clk.Advance(20 * time.Microsecond)
			emit(providers.Event{Kind: providers.EventText, Text: "K"})
			for i := 0; i < 6; i++ { // six reasoning deltas within 5 ms
				clk.Advance(time.Millisecond)
				emit(providers.Event{Kind: providers.EventReasoning, Text: "r"})
			}
			out := 8
			return &providers.Response{Text: "OK", Usage: providers.Usage{OutputTokens: &out}}, nil
		}, func(t *testing.T, r *results.Record) {
			if r.TokensPerS != nil || r.ReasoningTokensPerS != nil {
				t.Errorf("tokens/s %v reasoning %v, want null for both", deref(r.TokensPerS), deref(r.ReasoningTokensPerS))
			}
		}},
		{"cold start from the server's load time", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			clk.Advance(300 * time.Millisecond)
			emit(providers.Event{Kind: providers.EventText, Text: "OK"})
			load := 256500 * time.Microsecond
			return &providers.Response{Text: "OK", Load: &load}, nil
		}, func(t *testing.T, r *results.Record) {
			if !r.ColdStart || deref(r.LoadMS) != 256.5 || !r.Success {
				t.Errorf("cold %v load %v success %v, want a cold start of 256.5 ms that still succeeded", r.ColdStart, deref(r.LoadMS), r.Success)
			}
		}},
		{"a warm model's load time is not a cold start", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			emit(providers.Event{Kind: providers.EventText, Text: "OK"})
			load := 7 * time.Millisecond
			return &providers.Response{Text: "OK", Load: &load}, nil
		}, func(t *testing.T, r *results.Record) {
			if r.ColdStart || r.LoadMS != nil {
				t.Errorf("cold %v load %v for a 7 ms load", r.ColdStart, deref(r.LoadMS))
			}
		}},
		{"empty reply", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			return &providers.Response{Text: " \n"}, nil
		}, func(t *testing.T, r *results.Record) {
			if r.AvailabilityStatus != "ok" || r.Success || *r.FailureType != "empty_response" || r.ObjectivePass != nil {
				t.Errorf("got %s success=%v %v", r.AvailabilityStatus, r.Success, r.FailureType)
			}
		}},
		{"tool call only is not empty", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			clk.Advance(3 * time.Millisecond)
			emit(providers.Event{Kind: providers.EventToolCall})
			return &providers.Response{ToolCalls: []results.ToolCall{{Name: "get_memory", Arguments: []byte(`{"unit":"MB"}`)}}}, nil
		}, func(t *testing.T, r *results.Record) {
			if !r.Success || !reflect.DeepEqual(r.TTFTMS, ms(3)) || r.ToolCallCount != 1 || r.ToolCalls[0] != "get_memory" || r.ToolCallDetails[0].Source != "native" {
				t.Errorf("got success=%v ttft=%v calls=%v", r.Success, deref(r.TTFTMS), r.ToolCalls)
			}
		}},
		{"truncated on a rune boundary", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			emit(providers.Event{Kind: providers.EventText, Text: long})
			return &providers.Response{Text: long}, nil
		}, func(t *testing.T, r *results.Record) {
			if !r.RawOutputTruncated || r.RawOutputBytes != 80 || len(r.RawOutput) != 32 || !strings.HasPrefix(long, r.RawOutput) {
				t.Errorf("truncated=%v bytes=%d kept=%d", r.RawOutputTruncated, r.RawOutputBytes, len(r.RawOutput))
			}
		}},
		{"timeout", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			emit(providers.Event{Kind: providers.EventText, Text: "partial"})
			<-ctx.Done()
			return &providers.Response{Text: "partial"}, ctx.Err()
		}, func(t *testing.T, r *results.Record) {
			if r.AvailabilityStatus != "error" || *r.FailureType != "timeout" || r.RawOutput != "partial" {
				t.Errorf("got %s/%v %q", r.AvailabilityStatus, r.FailureType, r.RawOutput)
			}
		}},
		{"classified failure", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			return nil, &providers.Failure{Status: "rate_limited", Type: "http_429", HTTPStatus: 429, Message: "slow down"}
		}, func(t *testing.T, r *results.Record) {
			if r.AvailabilityStatus != "rate_limited" || *r.FailureType != "http_429" || *r.HTTPStatus != 429 || *r.ErrorMessage != "slow down" || r.ToolCalls == nil {
				t.Errorf("got %+v", r)
			}
		}},
		{"unclassified error", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			return nil, errors.New("boom")
		}, func(t *testing.T, r *results.Record) {
			if r.AvailabilityStatus != "error" || *r.FailureType != "exception" || *r.ErrorMessage != "boom" {
				t.Errorf("got %+v", r)
			}
		}},
		{"secrets scrubbed from everything kept", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			emit(providers.Event{Kind: providers.EventText, Text: "x"})
			return &providers.Response{Text: "key sk-test-0123456789abcdef here", Reasoning: "sk-test-0123456789abcdef",
					ToolCalls: []results.ToolCall{{Name: "t", Arguments: []byte(`{"k":"sk-test-0123456789abcdef"}`)}},
					Metrics:   map[string]any{"sample": "...0123456789abcdef"}},
				&providers.Failure{Status: "error", Type: "stream_error", Message: "bad key sk-test-0123456789abcdef"}
		}, func(t *testing.T, r *results.Record) {
			b, _ := json.Marshal(r)
			if strings.Contains(string(b), "0123456789ab") || !strings.Contains(r.RawOutput, "[redacted]") {
				t.Errorf("a piece of the key survived: %s", b)
			}
			// Scrubbing shortens the answer; that is not a cut.
			if r.RawOutputTruncated || r.RawOutputBytes != 33 {
				t.Errorf("truncated %v, %d bytes; want false, 33", r.RawOutputTruncated, r.RawOutputBytes)
			}
		}},
		{"the finish reason, escaped arguments and a retry's reason are scrubbed", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			emit(providers.Event{Kind: providers.EventRetry, Text: "429: key sk-test-0123456789abcdef"})
			emit(providers.Event{Kind: providers.EventRequestStart, Attempt: 1})
			emit(providers.Event{Kind: providers.EventToolCall})
			var esc strings.Builder
			for _, c := range "sk-test-0123456789abcdef" {
				fmt.Fprintf(&esc, `\u%04x`, c)
			}
			return &providers.Response{FinishReason: "sk-test-0123456789abcdef",
				ToolCalls: []results.ToolCall{{Name: "t", ID: "c1", Arguments: []byte(`{"k":"` + esc.String() + `","n":2}`)}}}, nil
		}, func(t *testing.T, r *results.Record) {
			b, _ := json.Marshal(r)
			var back any
			json.Unmarshal(b, &back) // as any JSON parser reads results.jsonl
			again, _ := json.Marshal(back)
			if strings.Contains(string(again), "0123456789ab") || r.FinishReason != "[redacted]" {
				t.Errorf("a piece of the key survived: %s", again)
			}
			if len(r.ToolCallDetails) != 1 || string(r.ToolCallDetails[0].Arguments) != `{"k":"[redacted]","n":2}` {
				t.Errorf("arguments %+v", r.ToolCallDetails)
			}
		}},
		{"a key straddling the cut is scrubbed before the cut", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			emit(providers.Event{Kind: providers.EventText, Text: "x"})
			// The provider kept the cap plus slack of a 9000-byte answer.
			return &providers.Response{Text: strings.Repeat("a", 20) + "sk-test-0123456789abcdef tail", TextBytes: 9000}, nil
		}, func(t *testing.T, r *results.Record) {
			if r.RawOutput != strings.Repeat("a", 20)+"[redacted] ta" || !r.RawOutputTruncated || r.RawOutputBytes != 9000 {
				t.Errorf("raw %q truncated %v bytes %d", r.RawOutput, r.RawOutputTruncated, r.RawOutputBytes)
			}
		}},
		{"what a server names is scrubbed and cut", func(ctx context.Context, clk *fakeClock, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			long := strings.Repeat("z", 5000)
			return &providers.Response{ToolCalls: []results.ToolCall{{Name: long, ID: "id-sk-test-0123456789abcdef"}},
					Metrics: map[string]any{"session_id": long}},
				&providers.Failure{Status: "error", Type: "sk-test-0123456789abcdef" + long, Message: long + long}
		}, func(t *testing.T, r *results.Record) {
			b, _ := json.Marshal(r)
			if strings.Contains(string(b), "0123456789ab") || len(*r.FailureType) > maxFailureType+3 || len(*r.ErrorMessage) > maxErrorMessage+3 ||
				len(r.ProviderMetrics["session_id"].(string)) > maxShortField+3 {
				t.Errorf("failure type %d bytes, message %d, metric %d: %.200s", len(*r.FailureType), len(*r.ErrorMessage), len(r.ProviderMetrics["session_id"].(string)), b)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			p := &scripted{secrets: secrets.New("sk-test-0123456789abcdef")}
			p.stream = func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
				return tc.stream(ctx, clk, emit)
			}
			cfg := testConfig([]config.Provider{{Name: "a", Type: "ollama", Concurrency: 1, Models: []string{"m"}, ThinkingLevels: []*string{nil}}}, 1, 1, 1)
			cfg.Run.MaxOutputBytes = 33
			cfg.Run.Timeout = config.Duration(100 * time.Millisecond)
			sink := &memSink{}
			if _, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Clock: clk, Providers: map[string]providers.Provider{"a": p}, Outputs: []output.Output{sink}}); err != nil {
				t.Fatal(err)
			}
			if len(sink.recs) != 1 {
				t.Fatalf("%d records", len(sink.recs))
			}
			tc.check(t, sink.recs[0])
		})
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// observerLog records what an output saw; it can be made to fail.
type observerLog struct {
	mu     sync.Mutex
	seen   []string
	fail   bool
	closed bool
}

func (o *observerLog) AddRecord(r *results.Record) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen = append(o.seen, r.PromptID)
	if o.fail {
		return errors.New("snapshots: disk full")
	}
	return nil
}

func (o *observerLog) Stop() error { o.closed = true; return nil }

// Outputs see every record results.jsonl got, are stopped at the end, and
// a failing one is one warning, not a failed run.
func TestOutputs(t *testing.T) {
	p := &scripted{}
	cfg := testConfig([]config.Provider{{Name: "a", Type: "ollama", Concurrency: 2, Models: []string{"m"}, ThinkingLevels: []*string{nil}}}, 5, 1, 2)
	good, bad := &observerLog{}, &observerLog{fail: true}
	var log strings.Builder
	sink := &memSink{}
	out, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Providers: map[string]providers.Provider{"a": p},
		Outputs: []output.Output{sink, good, bad}, Log: &log})
	if err != nil || out.EndReason != EndFinished || len(sink.recs) != 5 {
		t.Fatalf("run: %v %+v", err, out)
	}
	if len(good.seen) != 5 || len(bad.seen) != 5 || !good.closed || !bad.closed {
		t.Errorf("good %v closed %v, bad %v closed %v", good.seen, good.closed, bad.seen, bad.closed)
	}
	if n := strings.Count(log.String(), "disk full"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, log.String())
	}
}

// A record stays within MaxRecordBytes whatever it holds: the bulkiest
// derived fields go first; an ordinary record is not touched.
func TestRecordFits(t *testing.T) {
	ctl := strings.Repeat("\x01", 1<<20) // six bytes each once encoded
	rec := &results.Record{RecordType: "result", RawOutput: ctl + ctl, Reasoning: ctl,
		ToolCallDetails: []results.ToolCall{{Name: "df", Match: ctl, Source: "text", Arguments: []byte(`{}`)}},
		ParsedOutput:    []byte(`"` + strings.Repeat("a", 1<<20) + `"`)}
	fit(rec, 4<<20)
	b, _ := json.Marshal(rec)
	shed, _ := rec.ProviderMetrics["record_shed"].([]string)
	if len(b) >= 4<<20 || strings.Join(shed, ",") != "tool_call_details.match,parsed_output,reasoning,raw_output" || !rec.RawOutputTruncated {
		t.Errorf("%d bytes, shed %v", len(b), shed)
	}
	small := &results.Record{RecordType: "result", RawOutput: "OK", Reasoning: "hmm"}
	fit(small, 4<<20)
	if small.ProviderMetrics != nil || small.Reasoning != "hmm" {
		t.Errorf("a small record was changed: %+v", small)
	}
	if est, real := estimate(rec), size(rec); est < real {
		t.Errorf("estimate %d below the real size %d", est, real)
	}
}

// Preparing (Ollama's listing, pulls, warm-ups) ends at the first Ctrl-C,
// and no cell starts after it.
func TestPrepareStopsAtDrain(t *testing.T) {
	p := &preparing{scripted: &scripted{}, entered: make(chan struct{})}
	cfg := testConfig([]config.Provider{{Name: "a", Type: "ollama", Concurrency: 1, Models: []string{"m"}, ThinkingLevels: []*string{nil}}}, 3, 1, 1)
	drain := make(chan struct{})
	go func() { <-p.entered; close(drain) }()
	out, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Providers: map[string]providers.Provider{"a": p}, Outputs: []output.Output{&memSink{}}, Drain: drain})
	if err != nil || out.EndReason != EndInterrupted || out.Recorded != 0 || p.started.Load() != 0 {
		t.Fatalf("%v: end %s, %d recorded, %d started", err, out.EndReason, out.Recorded, p.started.Load())
	}
	if !errors.Is(p.err, context.Canceled) {
		t.Errorf("Prepare saw %v, want its context cancelled", p.err)
	}
}

// preparing is a provider whose Prepare waits for its context to end.
type preparing struct {
	*scripted
	entered chan struct{}
	err     error
}

func (p *preparing) Prepare(ctx context.Context, models []string, log io.Writer) error {
	close(p.entered)
	<-ctx.Done()
	p.err = ctx.Err()
	return p.err
}

// parsed_output larger than max_output_bytes (re-encoding grew it: < is
// written \u003c) is
// left out rather than cut.
func TestParsedOutputCapped(t *testing.T) {
	for _, c := range []struct {
		text   string
		parsed bool
	}{{`{"count": 3}`, true}, {`{"count": "` + strings.Repeat("<", 30) + `"}`, false}} {
		p := &scripted{stream: func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
			emit(providers.Event{Kind: providers.EventRequestStart})
			emit(providers.Event{Kind: providers.EventText, Text: c.text})
			return &providers.Response{Text: c.text}, nil
		}}
		cfg := testConfig([]config.Provider{{Name: "a", Type: "ollama", Concurrency: 1, Models: []string{"m"}, ThinkingLevels: []*string{nil}}}, 1, 1, 1)
		cfg.Run.MaxOutputBytes = 50
		cfg.PromptSet[0].Validator = &validators.Spec{Type: "json_keys", RequiredKeys: []string{"count"}}
		sink := &memSink{}
		if _, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Providers: map[string]providers.Provider{"a": p}, Outputs: []output.Output{sink}}); err != nil {
			t.Fatal(err)
		}
		if r := sink.recs[0]; (r.ParsedOutput != nil) != c.parsed || r.ObjectivePass == nil || !*r.ObjectivePass {
			t.Errorf("%q: parsed %s, pass %v", c.text, r.ParsedOutput, r.ObjectivePass)
		}
	}
}
