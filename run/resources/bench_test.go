package resources

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v3/process"
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

// BenchmarkSamplerReading measures one reading of the sampler (the
// machine's CPU and memory, bench's own times, and the server's tree: its
// processes' CPU times and memory) on a machine of at least 500
// processes, as the target states it: the benchmark starts
// sleeping processes up to 500 (and stops them after), and a "server"
// with two children. It reports the CPU a reading costs and what that is
// in percent of one core at the sampler's default interval (500 ms) and
// at 100 ms. The process table is listed every treeRelist/DefaultInterval
// readings, as at the default interval. "walk" is the reading before the
// parents were remembered (the table listed and every process's stat
// file read each time), for the comparison.
func BenchmarkSamplerReading(b *testing.B) {
	pids, err := process.Pids()
	if err != nil {
		b.Fatal(err)
	}
	var procs []*exec.Cmd
	defer func() {
		for _, c := range procs {
			c.Process.Kill()
			c.Wait()
		}
	}()
	for n := len(pids); n < 500; n++ {
		c := exec.Command("sleep", "300")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		procs = append(procs, c)
	}
	srvCmd := exec.Command("sh", "-c", "sleep 300 & sleep 300 & wait")
	if err := srvCmd.Start(); err != nil {
		b.Fatal(err)
	}
	procs = append(procs, srvCmd)
	time.Sleep(100 * time.Millisecond) // its children start
	all, _ := process.Pids()
	for _, mode := range []string{"remembered", "walk"} {
		b.Run(mode, func(b *testing.B) {
			srv := &serverProc{pid: int32(srvCmd.Process.Pid)}
			ctx := context.Background()
			if n := len(srv.tree(ctx)); n != 3 {
				b.Fatalf("server tree of %d processes, want 3", n)
			}
			u0, s0 := cpuTimes()
			for i := 0; i < b.N; i++ {
				switch {
				case mode == "walk":
					srv.parents, srv.members = nil, nil // forget: the table listed and every process's parent read again
				case i%int(treeRelist/DefaultInterval) == 0:
					// The readings come back to back here: the table is
					// listed as often as at the default interval.
					srv.listed = time.Time{}
				}
				readTarget(ctx, srv)
			}
			u1, s1 := cpuTimes()
			per := float64((u1-u0)+(s1-s0)) / float64(b.N) / 1e3 // µs
			b.ReportMetric(per, "cpu-µs/reading")
			b.ReportMetric(100*per/float64(DefaultInterval.Microseconds()), "%core@500ms")
			b.ReportMetric(100*per/100e3, "%core@100ms")
			b.ReportMetric(float64(len(all)), "processes")
		})
	}
}
