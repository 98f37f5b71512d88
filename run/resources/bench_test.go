package resources

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"bench/config"
	"bench/run/plan"
)

// cpuTimes is this process's user and system CPU so far.
func cpuTimes() (user, sys time.Duration) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// BenchmarkOverlappingSuites runs 100 suites of one server side by side,
// as run.interleave does (starts 16 at a time, each suite in flight for
// 3 s at the default interval, all ending together), and reports the
// process's CPU per op in each phase: starting (before snapshots, finding
// the server), holding (the sampling alone) and ending (after snapshots),
// and the system CPU of the whole op. The in-process HTTP server is the
// "model server", so each reading walks this machine's process table as a
// real one would. It uses only the Recorder's exported API, so the same
// file measures an older Recorder.
func BenchmarkOverlappingSuites(b *testing.B) {
	const suites, hold = 100, 3 * time.Second
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	all := make([]plan.Suite, suites)
	for i := range all {
		all[i] = plan.Suite{Provider: "ollama_openai", ProviderType: "ollama_openai",
			Server: config.Server{Endpoint: srv.URL + "/v1"}, Model: fmt.Sprintf("m%03d", i)}
	}
	var start, held, end, sys time.Duration
	for i := 0; i < b.N; i++ {
		r := NewRecorder(b.TempDir())
		u0, s0 := cpuTimes()
		var g errgroup.Group
		g.SetLimit(16)
		for _, s := range all {
			g.Go(func() error { r.SuiteStart(s); return nil })
		}
		g.Wait()
		u1, s1 := cpuTimes()
		time.Sleep(hold)
		u2, s2 := cpuTimes()
		var wg sync.WaitGroup
		for _, s := range all {
			wg.Add(1)
			go func() { defer wg.Done(); r.SuiteEnd(s) }()
		}
		wg.Wait()
		if err := r.Close(); err != nil {
			b.Fatal(err)
		}
		u3, s3 := cpuTimes()
		start += u1 - u0 + s1 - s0
		held += u2 - u1 + s2 - s1
		end += u3 - u2 + s3 - s2
		sys += s3 - s0
	}
	n := float64(b.N)
	b.ReportMetric(float64(start.Milliseconds())/n, "cpu-ms-start/op")
	b.ReportMetric(float64(held.Milliseconds())/n, "cpu-ms-hold/op")
	b.ReportMetric(float64(end.Milliseconds())/n, "cpu-ms-end/op")
	b.ReportMetric(float64(sys.Milliseconds())/n, "sys-ms/op")
}
