package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bench/config"
	"bench/internal/record/results"
	"bench/internal/record/secrets"
	"bench/providers"
	"bench/run/output"
	"bench/run/plan"
)

// trace logs, in order, what the runner did: suites started and ended,
// warm-ups, cells started (stream) and recorded.
type trace struct {
	mu     sync.Mutex
	events []string
}

func (tr *trace) add(e string) { tr.mu.Lock(); tr.events = append(tr.events, e); tr.mu.Unlock() }
func (tr *trace) list() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.events...)
}

func suiteID(provider, model string) string { return provider + "/" + model }

type traceHooks struct {
	tr      *trace
	warmups map[string]output.Warmup
	mu      sync.Mutex
}

func (h *traceHooks) SuiteStart(s plan.Suite)         { h.tr.add("start " + suiteID(s.Provider, s.Model)) }
func (h *traceHooks) SuiteEnd(s plan.Suite)           { h.tr.add("end " + suiteID(s.Provider, s.Model)) }
func (h *traceHooks) AddRecord(*results.Record) error { return nil }
func (h *traceHooks) SuiteWarmup(s plan.Suite, w output.Warmup) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.warmups == nil {
		h.warmups = map[string]output.Warmup{}
	}
	h.warmups[suiteID(s.Provider, s.Model)] = w
	h.tr.add("warmed " + suiteID(s.Provider, s.Model))
}

// suiteCount brackets suites and takes no warm-up, as the progress display.
type suiteCount struct{ starts, ends atomic.Int32 }

func (c *suiteCount) SuiteStart(plan.Suite)           { c.starts.Add(1) }
func (c *suiteCount) SuiteEnd(plan.Suite)             { c.ends.Add(1) }
func (c *suiteCount) AddRecord(*results.Record) error { return nil }

type traceSink struct{ tr *trace }

func (s traceSink) Critical() {}

func (s traceSink) AddRecord(r *results.Record) error {
	s.tr.add("record " + suiteID(r.Provider, r.Model))
	return nil
}

// tracedProvider logs each cell's start and lets others overlap it.
func tracedProvider(tr *trace, name string) *scripted {
	return &scripted{stream: func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
		if req.Prompt == providers.WarmupPrompt {
			tr.add("warm-up stream " + suiteID(name, req.Model))
		} else {
			tr.add("stream " + suiteID(name, req.Model))
		}
		emit(providers.Event{Kind: providers.EventRequestStart})
		time.Sleep(200 * time.Microsecond) // let other cells overlap this one
		emit(providers.Event{Kind: providers.EventText, Text: "OK"})
		return &providers.Response{Text: "OK"}, nil
	}}
}

// Two providers reaching one server (its /v1 and its native root) run one
// suite at a time, grouped by model, so the server never holds two models
// at once; each suite's window (start to end) holds its cells and no other
// suite's; a provider on another server runs beside them.
func TestOneSuiteAtATimePerServer(t *testing.T) {
	tr := &trace{}
	provs := []config.Provider{
		{Name: "native", Type: "ollama", Concurrency: 3, Models: []string{"m1", "m2"}, ThinkingLevels: []*string{nil},
			Server: config.Server{Endpoint: "http://127.0.0.1:11434"}},
		{Name: "v1", Type: "ollama_openai", Concurrency: 3, Models: []string{"m2", "m1"}, ThinkingLevels: []*string{nil},
			Server: config.Server{Endpoint: "http://localhost:11434/v1"}},
		{Name: "far", Type: "ollama", Concurrency: 2, Models: []string{"m1"}, ThinkingLevels: []*string{nil},
			Server: config.Server{Endpoint: "http://10.0.0.9:11434"}},
	}
	cfg := testConfig(provs, 6, 2, 8)
	pm := map[string]providers.Provider{}
	for _, p := range provs {
		pm[p.Name] = tracedProvider(tr, p.Name)
	}
	out, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Providers: pm, Outputs: []output.Output{traceSink{tr}, &traceHooks{tr: tr}}})
	if err != nil || out.EndReason != EndFinished || out.Recorded != 5*12 {
		t.Fatalf("run: %v %+v", err, out)
	}
	events := tr.list()
	// The shared server's suites, in the order they ran.
	var order []string
	open := map[string]bool{}
	for i, e := range events {
		verb, id, _ := strings.Cut(e, " ")
		if strings.HasPrefix(id, "far/") {
			continue
		}
		switch verb {
		case "start":
			if len(open) > 0 {
				t.Fatalf("event %d: %s starts while %v is open on the same server:\n%s", i, id, open, strings.Join(events, "\n"))
			}
			open[id] = true
			order = append(order, id)
		case "end":
			delete(open, id)
		case "stream", "record":
			if !open[id] {
				t.Fatalf("event %d: %s outside its suite's window (open: %v):\n%s", i, e, open, strings.Join(events, "\n"))
			}
		}
	}
	if want := "native/m1 v1/m1 native/m2 v1/m2"; strings.Join(order, " ") != want {
		t.Errorf("suites of the shared server ran %v, want %s (one model, then the other)", order, want)
	}
}

// A suite's hooks (resource snapshots take a quarter second) hold up only
// the suites of their own server: another server's cells go on meanwhile.
func TestHooksDoNotStallOtherServers(t *testing.T) {
	farDone := make(chan struct{})
	var once sync.Once
	far := &scripted{stream: func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
		emit(providers.Event{Kind: providers.EventRequestStart})
		emit(providers.Event{Kind: providers.EventText, Text: "OK"})
		once.Do(func() { close(farDone) })
		return &providers.Response{Text: "OK"}, nil
	}}
	near := &scripted{}
	provs := []config.Provider{
		{Name: "near", Type: "ollama", Concurrency: 1, Models: []string{"m"}, ThinkingLevels: []*string{nil},
			Server: config.Server{Endpoint: "http://127.0.0.1:1"}},
		{Name: "far", Type: "ollama", Concurrency: 1, Models: []string{"m"}, ThinkingLevels: []*string{nil},
			Server: config.Server{Endpoint: "http://127.0.0.1:2"}},
	}
	cfg := testConfig(provs, 2, 1, 2)
	hooks := &blockingHooks{provider: "near", release: farDone}
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Providers: map[string]providers.Provider{"near": near, "far": far},
			Outputs: []output.Output{&memSink{}, hooks}})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the near server's start hook, waiting for a far cell, stalled the far server")
	}
}

type blockingHooks struct {
	provider string
	release  <-chan struct{}
}

func (h *blockingHooks) SuiteStart(s plan.Suite) {
	if s.Provider == h.provider {
		<-h.release
	}
}
func (h *blockingHooks) SuiteEnd(plan.Suite)             {}
func (h *blockingHooks) AddRecord(*results.Record) error { return nil }

// warmingProvider loads a model in 250 ms of the fake clock.
type warmingProvider struct {
	scripted
	clk    *fakeClock
	tr     *trace
	name   string
	fail   error
	warmed []string
}

func (w *warmingProvider) Preconnect(ctx context.Context, n int) error {
	w.tr.add(fmt.Sprintf("preconnect %s %d", w.name, n))
	return nil
}

func (w *warmingProvider) Warmup(ctx context.Context, req providers.Request) error {
	w.tr.add("warm-up " + suiteID(w.name, req.Model))
	w.clk.Advance(250 * time.Millisecond)
	return w.fail
}

// Each suite starts with one unrecorded warm-up, after its start hook and
// before its cells; its duration on the run's clock is the suite's load
// time. A provider that cannot load without generating is warmed with a
// short request; warmup: false sends none; a failed warm-up is one line and
// the suite runs anyway. The warm-up reaches the output that takes it
// although another output that brackets suites (as the progress display
// does) comes before it in the list.
func TestWarmup(t *testing.T) {
	clk := newFakeClock()
	tr := &trace{}
	loader := &warmingProvider{clk: clk, tr: tr, name: "loader"}
	broken := &warmingProvider{clk: clk, tr: tr, name: "broken", fail: fmt.Errorf("model gone sk-test-0123456789abcdef")}
	broken.secrets = secrets.New("sk-test-0123456789abcdef")
	plain := tracedProvider(tr, "plain")
	cold := tracedProvider(tr, "cold")
	provs := []config.Provider{
		// loader and broken share a server, so their suites take turns and
		// no warm-up's clock advance lands inside another's measurement.
		{Name: "loader", Type: "ollama", Server: config.Server{Endpoint: "http://127.0.0.1:11434"}, Concurrency: 2, Models: []string{"m1", "m2"}, ThinkingLevels: []*string{nil}, Warmup: true},
		{Name: "broken", Type: "ollama", Server: config.Server{Endpoint: "http://127.0.0.1:11434"}, Concurrency: 2, Models: []string{"m"}, ThinkingLevels: []*string{nil}, Warmup: true},
		{Name: "plain", Type: "openai_responses", Concurrency: 2, Models: []string{"m"}, ThinkingLevels: []*string{nil}, Warmup: true},
		{Name: "cold", Type: "openai_responses", Concurrency: 2, Models: []string{"m"}, ThinkingLevels: []*string{nil}},
	}
	cfg := testConfig(provs, 2, 1, 4)
	hooks := &traceHooks{tr: tr}
	bracket := &suiteCount{}
	var log strings.Builder
	sink := &memSink{}
	out, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Clock: clk, Log: &log, Outputs: []output.Output{sink, bracket, hooks},
		Providers: map[string]providers.Provider{"loader": loader, "broken": broken, "plain": plain, "cold": cold}})
	if err != nil || out.Recorded != 5*2 || len(sink.recs) != 10 {
		t.Fatalf("run: %v %+v", err, out)
	}
	for _, r := range sink.recs {
		if r.PromptID == "" || !r.Success {
			t.Errorf("a warm-up was recorded, or a cell failed: %+v", r)
		}
	}
	for _, id := range []string{"loader/m1", "loader/m2", "broken/m"} {
		w, ok := hooks.warmups[id]
		if !ok || w.Load != 250*time.Millisecond {
			t.Errorf("%s: warm-up %+v, want a load of exactly 250ms", id, w)
		}
	}
	if w := hooks.warmups["broken/m"]; w.Err == nil || strings.Contains(w.Err.Error(), "0123456789") || !strings.Contains(log.String(), "warm-up of broken/m failed") {
		t.Errorf("failed warm-up: %v; log %q", w.Err, log.String())
	}
	if _, ok := hooks.warmups["plain/m"]; !ok {
		t.Errorf("no warm-up for the provider without a Warmer")
	}
	if _, ok := hooks.warmups["cold/m"]; ok {
		t.Errorf("warm-up sent with warmup: false")
	}
	if bracket.starts.Load() != 5 || bracket.ends.Load() != 5 {
		t.Errorf("the other output saw %d suite starts and %d ends, want 5", bracket.starts.Load(), bracket.ends.Load())
	}
	// After a load, as many connections as the suite runs at once (the
	// provider's 2, under the run's 4); none after a failed one.
	pre := map[string]int{}
	for _, e := range tr.list() {
		if strings.HasPrefix(e, "preconnect ") {
			pre[e]++
		}
	}
	if pre["preconnect loader 2"] != 2 || len(pre) != 1 {
		t.Errorf("preconnects %v, want loader's two suites with 2 each", pre)
	}
	// Order within each suite: start, warm-up, then cells.
	events := tr.list()
	for _, id := range []string{"loader/m1", "loader/m2", "broken/m", "plain/m"} {
		iStart, iWarm, iWarmed, iCell := -1, -1, -1, -1
		for i, e := range events {
			switch {
			case e == "start "+id && iStart < 0:
				iStart = i
			case (e == "warm-up "+id || e == "warm-up stream "+id) && iWarm < 0:
				iWarm = i
			case e == "warmed "+id && iWarmed < 0:
				iWarmed = i
			case e == "stream "+id && iCell < 0:
				iCell = i
			}
		}
		if !(iStart >= 0 && iStart < iWarm && iWarm < iWarmed && (iCell < 0 || iWarmed < iCell)) {
			t.Errorf("%s: start %d, warm-up %d, warmed %d, first cell %d:\n%s", id, iStart, iWarm, iWarmed, iCell, strings.Join(events, "\n"))
		}
	}
}

// With run.interleave the cells of a server's suites are mixed (the load
// test that swaps models), and every suite still opens and closes.
func TestInterleave(t *testing.T) {
	tr := &trace{}
	provs := []config.Provider{
		{Name: "a", Type: "ollama", Concurrency: 1, Models: []string{"m1", "m2"}, ThinkingLevels: []*string{nil},
			Server: config.Server{Endpoint: "http://127.0.0.1:11434"}},
	}
	cfg := testConfig(provs, 3, 1, 1)
	cfg.Run.Interleave = true
	out, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Providers: map[string]providers.Provider{"a": tracedProvider(tr, "a")},
		Outputs: []output.Output{traceSink{tr}, &traceHooks{tr: tr}}})
	if err != nil || out.Recorded != 6 {
		t.Fatalf("run: %v %+v", err, out)
	}
	var streams []string
	ends := 0
	for _, e := range tr.list() {
		if strings.HasPrefix(e, "stream ") {
			streams = append(streams, strings.TrimPrefix(e, "stream a/"))
		}
		if strings.HasPrefix(e, "end ") {
			ends++
		}
	}
	if got := strings.Join(streams, " "); got != "m1 m2 m1 m2 m1 m2" || ends != 2 {
		t.Errorf("cells ran %q with %d ends, want m1 and m2 in turn and both suites ended", got, ends)
	}
}

// residentProvider answers LoadedModels from a script.
type residentProvider struct{}

func (residentProvider) LoadedModels(context.Context) ([]string, error) { return nil, nil }
func (residentProvider) SameModel(loaded, model string) bool {
	return strings.TrimSuffix(loaded, ":latest") == model
}

// A cell is cold when its model was missing at the last reading before its
// request or at any reading until its first output; readings after it, or
// before the last one that preceded it, do not count.
func TestResidencyCold(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	w := &residency{prov: residentProvider{}, keep: time.Minute}
	for _, rd := range []reading{
		{at(0), []string{"m2:latest"}},    // m1 absent: long before
		{at(100), []string{"m1:latest"}},  // m1 held
		{at(300), []string{"m1", "m2"}},   // (added out of order)
		{at(200), []string{"m1:latest"}},  // m1 held
		{at(400), []string{"m2:latest"}},  // m1 swapped out
		{at(500), []string{"m1:latest"}},  // m1 back
		{at(900), []string{}},             // nothing held
		{at(1000), []string{"m1:latest"}}, // back again
	} {
		w.add(rd)
	}
	cases := []struct {
		from, to int
		want     bool
	}{
		{150, 250, false}, // readings at 100 and 200 hold m1
		{310, 350, false}, // last reading before (300) holds it, none during
		{350, 450, true},  // the swap at 400 falls inside
		{410, 480, true},  // the reading before the request (400) lacks it
		{510, 890, false}, // held at 500, nothing read until 900
		{950, 960, true},  // missing at 900, the last reading before
		{1010, 1100, false},
		{-50, 50, true}, // before any reading: the first (m2 only) counts
	}
	for _, c := range cases {
		if got := w.cold("m1", at(c.from), at(c.to)); got != c.want {
			t.Errorf("cold(m1, %d ms, %d ms) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
	// Readings older than keep are forgotten.
	w.keep = 500 * time.Millisecond
	w.add(reading{at(1100), []string{"m1"}})
	if len(w.reads) != 3 || !w.reads[0].at.Equal(at(900)) {
		t.Errorf("kept %d readings from %v", len(w.reads), w.reads[0].at)
	}
}

// hangingWarmer never finishes loading unless its context ends.
type hangingWarmer struct {
	scripted
	warming chan struct{}
}

func (h *hangingWarmer) Warmup(ctx context.Context, req providers.Request) error {
	close(h.warming)
	<-ctx.Done()
	return ctx.Err()
}

// Ctrl-C during a warm-up ends it: no cell of the suite would run anyway.
func TestDrainEndsWarmup(t *testing.T) {
	p := &hangingWarmer{warming: make(chan struct{})}
	cfg := testConfig([]config.Provider{{Name: "a", Type: "ollama", Concurrency: 1, Models: []string{"m"}, ThinkingLevels: []*string{nil}, Warmup: true}}, 2, 1, 1)
	drain := make(chan struct{})
	done := make(chan *Outcome)
	go func() {
		out, _ := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Providers: map[string]providers.Provider{"a": p}, Outputs: []output.Output{&memSink{}}, Drain: drain})
		done <- out
	}()
	<-p.warming
	close(drain)
	select {
	case out := <-done:
		if out.EndReason != EndInterrupted || out.Recorded != 0 || p.started.Load() != 0 {
			t.Errorf("end %s, %d recorded, %d cells started; want interrupted with none", out.EndReason, out.Recorded, p.started.Load())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the warm-up held the run after Ctrl-C")
	}
}

// answeringResident answers LoadedModels with a fixed error, counting calls.
type answeringResident struct {
	residentProvider
	err   error
	calls int
}

func (a *answeringResident) LoadedModels(context.Context) ([]string, error) {
	a.calls++
	return nil, a.err
}

// A server whose answer is not Ollama's shape is asked once: polling stops
// with one warning naming the server, and no reading says "nothing held"
// (every cell would be cold). A server that fails to answer is asked
// maxResidencyFails times, then stops alike; one that is down stops
// without a warning of its own (the run's end says what to start).
func TestResidencyNotOllama(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	_, refused := net.Dial("tcp", ln.Addr().String())
	for _, tc := range []struct {
		err       error
		wantCalls int
		wantWhy   string // "" for no warning
	}{
		{fmt.Errorf("%w: GET http://x/api/ps: no \"models\" in the answer", providers.ErrNotResident), 1, `no "models" in the answer`},
		{errors.New("GET http://x/api/ps: HTTP 500"), maxResidencyFails, "5 answers in a row failed"},
		// A server that is down stops the polling without a warning of
		// its own: the run's end says what to start.
		{fmt.Errorf("GET http://x/api/ps: %w", refused), maxResidencyFails, ""},
	} {
		var log strings.Builder
		a := &answeringResident{err: tc.err}
		w := &residency{prov: a, clock: newFakeClock(), keep: time.Minute, server: "127.0.0.1:9", log: &log}
		for range 20 {
			w.poll()
		}
		warned := strings.Count(log.String(), "warning") == 1 && strings.Contains(log.String(), tc.wantWhy) && strings.Contains(log.String(), "127.0.0.1:9")
		if a.calls != tc.wantCalls || (tc.wantWhy != "") != warned || tc.wantWhy == "" && log.Len() > 0 {
			t.Errorf("%v: %d calls, log %q", tc.err, a.calls, log.String())
		}
		if w.cold("m1", w.clock.Now(), w.clock.Now()) {
			t.Errorf("%v: a cell is cold with no reading", tc.err)
		}
	}
}
