package traces

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/config"
	"bench/internal/record/results"
	"bench/internal/testpeer/otelcoltest"
	"bench/providers"
	"bench/run/output"
	"bench/run/plan"
	"bench/run/runner"
)

// instantServer replays a recorded Ollama /v1/chat/completions stream
// (testdata, copied from runner's) at once: the cost measured is bench's.
func instantServer(b *testing.B) *httptest.Server {
	raw, err := os.ReadFile("testdata/v1_chat_stream_text_usage.http")
	if err != nil {
		b.Fatal(err)
	}
	_, body, _ := bytes.Cut(raw, []byte("\n\n"))
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(body)
	}))
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type noop struct{}

func (noop) AddRecord(*results.Record) error { return nil }

// discard stands in for results.jsonl: the run's Critical output.
type discard struct{}

func (discard) AddRecord(*results.Record) error { return nil }
func (discard) Critical()                       {}

// BenchmarkTracedRun runs a 10,000-cell sweep (10 models × 10 prompts ×
// 100 repetitions) through the runner against an instant local server:
// untraced, with a do-nothing output (the outputs' queue alone), with the NDJSON, and with the NDJSON and the OTLP export to a
// real collector (another process, so its CPU is not counted). The modes
// take turns within each iteration, so the machine's drift (it is shared)
// falls on all alike. Each reports the process CPU per cell and its cost
// over the untraced run in percent.
func BenchmarkTracedRun(b *testing.B) {
	srv := instantServer(b)
	defer srv.Close()
	var models []string
	for i := 0; i < 10; i++ {
		models = append(models, fmt.Sprintf("m%d", i))
	}
	yaml := fmt.Sprintf("run:\n  concurrency: 8\n  repetitions: 100\nproviders:\n  - type: ollama_openai\n    base_url: %s/v1\n    concurrency: 8\n    models: [%s]\nprompts:\n  only: [%s]\n",
		srv.URL, strings.Join(models, ", "), "P0, P1, P2, P3, P4, P5, P6, P7, P8, P9")
	cfg, err := config.Parse("bench.yaml", []byte(yaml), providers.Kinds)
	if err != nil {
		b.Fatal(err)
	}
	pl := plan.New(cfg)
	if len(pl.Cells) != 10000 {
		b.Fatalf("%d cells", len(pl.Cells))
	}
	p, err := providers.New(&cfg.Providers[0])
	if err != nil {
		b.Fatal(err)
	}
	col, err := otelcoltest.StartCollector()
	otelcoltest.Check(b, err)
	defer col.Close()
	modes := []string{"off", "noop-output", "ndjson", "ndjson+otlp"}
	cpu := map[string]time.Duration{}
	run := func(mode string) {
		c := *cfg
		c.Traces = config.Traces{NDJSON: strings.HasPrefix(mode, "ndjson"), Timeout: config.Duration(30 * time.Second)}
		if mode == "ndjson+otlp" {
			c.Traces.Endpoint = col.HTTPEndpoint()
		}
		o := runner.Options{Config: &c, Plan: pl, Providers: map[string]providers.Provider{"ollama_openai": p}, Outputs: []output.Output{discard{}}}
		dir := b.TempDir()
		cpu0 := cpuTime()
		var tr *Tracer
		switch mode {
		case "noop-output":
			o.Outputs = append(o.Outputs, noop{})
		case "ndjson", "ndjson+otlp":
			tr, err = New(context.Background(), Options{Config: &c, RunDir: dir, Version: "bench", Getenv: func(string) string { return "" }})
			if err != nil {
				b.Fatal(err)
			}
			o.Outputs = append(o.Outputs, tr) // the runner ends and stops it
		}
		out, err := runner.Run(context.Background(), o)
		if err != nil || out.ByStatus["ok"] != len(pl.Cells) {
			b.Fatalf("run: %v %v", err, out.ByStatus)
		}
		cpu[mode] += cpuTime() - cpu0
		os.RemoveAll(dir)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range modes {
			run(modes[(i+j)%len(modes)])
		}
	}
	cells := float64(b.N * len(pl.Cells))
	for _, m := range modes {
		b.ReportMetric(float64(cpu[m].Microseconds())/cells, m+"-cpu-µs/cell")
		if m != "off" {
			b.ReportMetric(100*(float64(cpu[m])/float64(cpu["off"])-1), m+"-%")
		}
	}
}

// BenchmarkAddRecord is tracing alone, per cell: b.N cells (a retried HTTP
// cell with tool calls: six spans) added and the trace stopped, with the
// NDJSON, and with the NDJSON and the OTLP export to a real collector
// (another process), over each protocol. CPU is the process's, the
// export's goroutines and final flush included; otlp-cpu-µs/cell is the
// export's share (its mode's CPU less the NDJSON's, measured in turn).
//
//	go test ./run/traces -run '^$' -bench AddRecord -benchtime 20000x
func BenchmarkAddRecord(b *testing.B) {
	col, err := otelcoltest.StartCollector()
	otelcoltest.Check(b, err)
	defer col.Close()
	for _, protocol := range []string{"http/protobuf", "grpc", "http/json"} {
		b.Run(strings.ReplaceAll(protocol, "/", "_"), func(b *testing.B) {
			modes := []string{"ndjson", "ndjson+otlp"}
			var cpu [2]time.Duration
			// The modes take turns, in rounds of up to 10,000 cells, so the
			// machine's drift weighs on both alike.
			for done := 0; done < b.N; {
				n := min(10000, b.N-done)
				for m := range modes {
					cfg := testConfig(&testing.T{})
					if modes[m] == "ndjson+otlp" {
						cfg.Traces.Protocol = protocol
						cfg.Traces.Endpoint = col.HTTPEndpoint()
						if protocol == "grpc" {
							cfg.Traces.Endpoint = "http://" + col.GRPCEndpoint()
						}
					}
					dir := b.TempDir()
					// The last round's garbage is collected outside the
					// measure, so no mode pays for another's.
					runtime.GC()
					c0 := cpuTime()
					tr, err := New(context.Background(), Options{Config: cfg, RunDir: dir, Getenv: func(string) string { return "" }})
					if err != nil {
						b.Fatal(err)
					}
					r := retried()
					for i := 0; i < n; i++ {
						r.Repetition = done + i
						if err := tr.AddRecord(r); err != nil {
							b.Fatal(err)
						}
					}
					if err := tr.Stop(); err != nil {
						b.Fatal(err)
					}
					cpu[m] += cpuTime() - c0
					os.RemoveAll(dir)
				}
				done += n
			}
			per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 / float64(b.N) }
			b.ReportMetric(per(cpu[0]), "ndjson-cpu-µs/cell")
			b.ReportMetric(per(cpu[1]), "ndjson+otlp-cpu-µs/cell")
			b.ReportMetric(per(cpu[1]-cpu[0]), "otlp-cpu-µs/cell")
		})
	}
}
