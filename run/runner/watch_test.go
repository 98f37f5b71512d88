package runner

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bench/config"
	"bench/internal/record/rundir"
	"bench/providers"
	"bench/run/output"
	"bench/run/plan"
)

// serverSink keeps the server readings each suite was handed, with the
// suite's window as the runner's hooks drew it.
type serverSink struct {
	memSink
	mu      sync.Mutex
	reads   map[string][]rundir.ServerSample
	windows map[string][2]time.Time
}

func (s *serverSink) SuiteStart(su plan.Suite) {
	s.mu.Lock()
	w := s.windows[su.Model]
	w[0] = time.Now()
	s.windows[su.Model] = w
	s.mu.Unlock()
}

func (s *serverSink) SuiteEnd(su plan.Suite) {
	s.mu.Lock()
	w := s.windows[su.Model]
	w[1] = time.Now()
	s.windows[su.Model] = w
	s.mu.Unlock()
}

func (s *serverSink) ServerReading(su plan.Suite, r rundir.ServerSample) {
	s.mu.Lock()
	s.reads[su.Model] = append(s.reads[su.Model], r)
	s.mu.Unlock()
}

// residentSleeper is a Resident provider whose cells take a while, so a
// suite spans several readings; it holds m1 only.
type residentSleeper struct {
	scripted
}

func (*residentSleeper) LoadedModels(context.Context) ([]string, error) {
	return []string{"m1:latest"}, nil
}
func (*residentSleeper) SameModel(loaded, model string) bool {
	return strings.TrimSuffix(loaded, ":latest") == model
}

// The lane's watcher scrapes the entry's metrics_url and reads /api/ps on
// one clock, and hands each reading to the suite running then: readings
// fall inside their suite's window, carry the mapped series and whether
// the suite's model was held; a server that answers no Prometheus text is
// said once and not asked again.
func TestServerWatch(t *testing.T) {
	var scrapes atomic.Int64
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scrapes.Add(1)
		fmt.Fprintf(w, "vllm:num_requests_running{engine=\"0\"} 1\nvllm:kv_cache_usage_perc{engine=\"0\"} 0.5\nvllm:generation_tokens_total %d\n", scrapes.Load())
	}))
	defer metrics.Close()
	p := &residentSleeper{}
	p.stream = func(ctx context.Context, req providers.Request, emit providers.EmitFunc) (*providers.Response, error) {
		emit(providers.Event{Kind: providers.EventRequestStart})
		time.Sleep(60 * time.Millisecond)
		emit(providers.Event{Kind: providers.EventText, Text: "OK"})
		return &providers.Response{Text: "OK"}, nil
	}
	prov := config.Provider{Name: "a", Type: "ollama", Concurrency: 1, Models: []string{"m1", "m2"}, ThinkingLevels: []*string{nil},
		MetricsURL: metrics.URL + "/metrics", Server: config.Server{Endpoint: "http://127.0.0.1:9", Metrics: metrics.URL + "/metrics", MetricsInterval: 20 * time.Millisecond}}
	cfg := testConfig([]config.Provider{prov}, 4, 1, 1)
	sink := &serverSink{reads: map[string][]rundir.ServerSample{}, windows: map[string][2]time.Time{}}
	var log strings.Builder
	if _, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Providers: map[string]providers.Provider{"a": p},
		Outputs: []output.Output{sink}, Log: &log}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"m1", "m2"} {
		reads, win := sink.reads[m], sink.windows[m]
		if len(reads) < 5 {
			t.Fatalf("%s: %d readings over a suite of 240 ms at 20 ms", m, len(reads))
		}
		for _, r := range reads {
			at := time.UnixMicro(r.TimeUS)
			if at.Before(win[0].Truncate(time.Microsecond)) || at.After(win[1]) || r.Server != "vllm" || r.Running == nil || *r.Running != 1 || r.KVCacheUsage == nil || r.GeneratedTokens == nil {
				t.Fatalf("%s: reading %+v outside its window %v or without its series", m, r, win)
			}
			if r.ModelHeld == nil || *r.ModelHeld != (m == "m1") || len(r.Models) != 1 {
				t.Fatalf("%s: residency %v %v", m, r.ModelHeld, r.Models)
			}
		}
	}
	if log.Len() > 0 {
		t.Errorf("log: %s", log.String())
	}

	// A suite shorter than the interval still has a reading at each end
	// of its window (its counters' first and last values).
	slow := cfg.Providers[0]
	slow.Server.MetricsInterval = 10 * time.Second
	scfg := testConfig([]config.Provider{slow}, 4, 1, 1)
	sink = &serverSink{reads: map[string][]rundir.ServerSample{}, windows: map[string][2]time.Time{}}
	if _, err := Run(context.Background(), Options{Config: scfg, Plan: plan.New(scfg), Providers: map[string]providers.Provider{"a": p},
		Outputs: []output.Output{sink}, Log: &log}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"m1", "m2"} {
		reads, win := sink.reads[m], sink.windows[m]
		if len(reads) < 2 {
			t.Fatalf("%s: %d readings in a suite shorter than the interval, want one at each end", m, len(reads))
		}
		first, last := time.UnixMicro(reads[0].TimeUS), time.UnixMicro(reads[len(reads)-1].TimeUS)
		if first.Before(win[0].Truncate(time.Microsecond)) || last.After(win[1]) || *reads[len(reads)-1].GeneratedTokens <= *reads[0].GeneratedTokens {
			t.Errorf("%s: readings at %v and %v in the window %v (counters %v, %v)", m, first, last, win, *reads[0].GeneratedTokens, *reads[len(reads)-1].GeneratedTokens)
		}
	}

	// HTML instead of metrics: one warning, one scrape, residency goes on.
	var htmlHits atomic.Int64
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		htmlHits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html>login</html>")
	}))
	defer page.Close()
	cfg.Providers[0].Server.Metrics = page.URL + "/metrics"
	sink = &serverSink{reads: map[string][]rundir.ServerSample{}, windows: map[string][2]time.Time{}}
	log.Reset()
	if _, err := Run(context.Background(), Options{Config: cfg, Plan: plan.New(cfg), Providers: map[string]providers.Provider{"a": p},
		Outputs: []output.Output{sink}, Log: &log}); err != nil {
		t.Fatal(err)
	}
	if htmlHits.Load() != 1 || strings.Count(log.String(), "warning") != 1 || !strings.Contains(log.String(), "answered text/html") {
		t.Errorf("%d scrapes of an HTML page, log %q", htmlHits.Load(), log.String())
	}
	if r := sink.reads["m1"]; len(r) == 0 || r[0].Running != nil || r[0].ModelHeld == nil {
		t.Errorf("residency readings after the page: %+v", r)
	}
}
