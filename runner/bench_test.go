package runner

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/config"
	"bench/plan"
	"bench/providers"
	"bench/results"
)

// sseServer replays the recorded Ollama /v1/chat/completions stream
// (testdata/v1_chat_stream_text_usage.http) with its content chunk repeated
// so each response has `chunks` content deltas.
func sseServer(tb testing.TB, chunks int) *httptest.Server {
	raw, err := os.ReadFile("testdata/v1_chat_stream_text_usage.http")
	if err != nil {
		tb.Fatal(err)
	}
	var data []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "data: ") {
			data = append(data, line)
		}
	}
	// data: content, content, content, finish, usage, [DONE]. The repeated
	// chunk is the plain-text one (" to check memory."), so the figures are
	// the harness's per-chunk cost, not tool detection over 512 commands.
	content, tail := data[2], data[3:]
	var body bytes.Buffer
	body.WriteString(data[0] + "\n\n")
	for i := 1; i < chunks; i++ {
		body.WriteString(content + "\n\n")
	}
	for _, l := range tail {
		body.WriteString(l + "\n\n")
	}
	payload := body.Bytes()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(payload)
	}))
}

type discard struct{}

func (discard) Write(*results.Record) error { return nil }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRunner runs whole sweeps through the runner and the ollama_openai
// provider against an in-process streaming server. Per cell it reports
// process CPU time (harness and the in-process server together) and
// allocations; the per-chunk cost is the slope between the chunk counts.
func BenchmarkRunner(b *testing.B) {
	for _, chunks := range []int{4, 64, 512} {
		b.Run(fmt.Sprintf("chunks=%d", chunks), func(b *testing.B) {
			srv := sseServer(b, chunks)
			defer srv.Close()
			c, err := config.Parse("bench.yaml", []byte("providers:\n  - type: ollama_openai\n    base_url: "+srv.URL+"/v1\n    models: [scripted]\n"), providers.Kinds)
			if err != nil {
				b.Fatal(err)
			}
			cfg := testConfig(c.Providers, 8, 1, 4)
			p, err := providers.New(&cfg.Providers[0])
			if err != nil {
				b.Fatal(err)
			}
			pl := plan.New(cfg)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				out, err := Run(context.Background(), Options{Config: cfg, Plan: pl, Providers: map[string]providers.Provider{"ollama_openai": p}, Sink: discard{}})
				if err != nil || out.ByStatus["ok"] != len(pl.Cells) {
					b.Fatalf("run: %v %v", err, out.ByStatus)
				}
			}
			cells := float64(b.N * len(pl.Cells))
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/cells, "cpu-µs/cell")
			b.ReportMetric(float64(chunks), "chunks/cell")
		})
	}
}
