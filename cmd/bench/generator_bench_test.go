package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"bench/cmd/fakellm/loadserver"
	"bench/internal/exitcode"
)

// stamped serves h, noting when the first request of each path arrived.
type stamped struct {
	h     http.Handler
	mu    sync.Mutex
	first map[string]time.Time
	any   time.Time
}

func (s *stamped) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	s.mu.Lock()
	if s.any.IsZero() {
		s.any = now
	}
	if _, ok := s.first[r.URL.Path]; !ok {
		s.first[r.URL.Path] = now
	}
	s.mu.Unlock()
	s.h.ServeHTTP(w, r)
}

// runBinary runs the built bench binary in dir with a config and returns
// when it was started and its resource usage.
func runBinary(b *testing.B, dir, cfg string) (time.Time, *syscall.Rusage) {
	b.Helper()
	if err := os.WriteFile(filepath.Join(dir, "bench.yaml"), []byte(cfg), 0o644); err != nil {
		b.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "runs"))
	cmd, stdout, stderr := startIn(b, dir, "run", "--config", "bench.yaml", "--run-id", "gen", "--quiet")
	start := time.Now() // after fork and exec returned: the figure is if anything short by that
	if err := cmd.Wait(); exitCode(err) != exitcode.OK {
		b.Fatalf("exit %d\n%s%s", exitCode(err), stdout, stderr)
	}
	return start, cmd.ProcessState.SysUsage().(*syscall.Rusage)
}

// BenchmarkStartToFirstRequest measures the real bench binary from its
// start (exec returned) to the first request the fake server had (any:
// bench's probe of the server) and to the first chat completion (the
// first cell's request), over b.N runs, and reports their medians. No
// warm-up, one synthetic prompt, the server on loopback. Run:
//
//	go test ./cmd/bench -run '^$' -bench StartToFirstRequest -benchtime 20x
func BenchmarkStartToFirstRequest(b *testing.B) {
	dir := b.TempDir()
	var anyMS, chatMS []float64
	for range b.N {
		s := &stamped{h: loadserver.New(loadserver.Service{Tokens: 2}, nil), first: map[string]time.Time{}}
		url := serveLoopback(b, s)
		cfg := fmt.Sprintf("run: {warmup: false, timeout: 10s}\nprompts:\n  synthetic: {input_tokens: [16], output_tokens: 2}\nproviders:\n  - type: ollama_openai\n    base_url: %s/v1\n    models: [fake]\n", url)
		start, _ := runBinary(b, dir, cfg)
		chat, ok := s.first["/v1/chat/completions"]
		if !ok {
			b.Fatalf("no chat request reached the server: %v", s.first)
		}
		if os.Getenv("BENCH_START_PATHS") != "" {
			for p, at := range s.first {
				b.Logf("%s: %.1f ms", p, float64(at.Sub(start).Microseconds())/1e3)
			}
		}
		anyMS = append(anyMS, float64(s.any.Sub(start).Microseconds())/1e3)
		chatMS = append(chatMS, float64(chat.Sub(start).Microseconds())/1e3)
	}
	slices.Sort(anyMS)
	slices.Sort(chatMS)
	b.ReportMetric(anyMS[len(anyMS)/2], "ms-to-first-request")
	b.ReportMetric(chatMS[len(chatMS)/2], "ms-to-first-chat")
}

// BenchmarkPeakRSSStreams runs the real bench binary with 1,400 streams
// open at once (a closed loop of 1,400, one request each) against the
// fake server (20 ms to the first token, 100 ms between 30 tokens: each
// stream lasts about 3 s, so all are open together), and reports bench's
// peak RSS (the kernel's maxrss of the process), its CPU, and how many
// streams the server held at once (the arrivals before the first end).
// Run:
//
//	go test ./cmd/bench -run '^$' -bench PeakRSSStreams -benchtime 1x
func BenchmarkPeakRSSStreams(b *testing.B) {
	const streams = 1400
	dir := b.TempDir()
	srv := loadserver.New(loadserver.Service{TTFT: 20 * time.Millisecond, Gap: 100 * time.Millisecond, Tokens: 30}, nil)
	url := serveLoopback(b, srv)
	cfg := fmt.Sprintf(`run: {warmup: false, timeout: 60s}
load: {sweep: {concurrency: [%d]}, requests: %d}
prompts:
  synthetic: {input_tokens: [16], output_tokens: 30}
providers:
  - type: ollama_openai
    base_url: %s/v1
    models: [fake]
    concurrency: %d
`, streams, streams, url, streams)
	peak, cpu := 0.0, 0.0
	for range b.N {
		_, ru := runBinary(b, dir, cfg)
		peak = max(peak, float64(ru.Maxrss)/1024)
		cpu = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	}
	open := 0
	log := srv.Log()
	// How many streams the server held at once: the most arrivals before
	// the first end.
	firstEnd := int64(1<<63 - 1)
	for _, e := range log {
		firstEnd = min(firstEnd, e.EndNS)
	}
	for _, e := range log {
		if e.ArrivalNS < firstEnd {
			open++
		}
	}
	if len(log) != streams {
		b.Fatalf("the server saw %d requests", len(log))
	}
	b.ReportMetric(peak, "peak-rss-MB")
	b.ReportMetric(cpu, "cpu-s")
	b.ReportMetric(float64(open), "streams-open-at-once")
}
