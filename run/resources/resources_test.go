package resources

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"bench/config"
	"bench/internal/record/rundir"
	"bench/report/htmlreport"
	"bench/run/output"
	"bench/run/plan"

	"github.com/shirou/gopsutil/v3/cpu"
)

func sp(s string) *string { return &s }

func TestLoopbackPort(t *testing.T) {
	tests := []struct {
		url  string
		port uint32
		ok   bool
	}{
		{"http://localhost:11434/v1", 11434, true},
		{"http://127.0.0.1:8080", 8080, true},
		{"http://[::1]:9000/", 9000, true},
		{"http://0.0.0.0:11434", 11434, true},
		{"http://localhost/v1", 80, true},
		{"https://api.openai.com/v1", 0, false},
		{"http://192.168.1.20:11434", 0, false},
		{"not a url", 0, false},
	}
	for _, tt := range tests {
		_, port, ok := loopbackPort(tt.url)
		if port != tt.port || ok != tt.ok {
			t.Errorf("loopbackPort(%q) = %d, %v; want %d, %v", tt.url, port, ok, tt.port, tt.ok)
		}
	}
}

func TestBusyPercent(t *testing.T) {
	t0 := []cpu.TimesStat{{User: 10, System: 5, Idle: 85}}
	t1 := []cpu.TimesStat{{User: 40, System: 5, Idle: 155}} // +30 busy, +70 idle
	got, err := busyPercent(t0, nil, t1, nil)
	if err != nil || got != 30 {
		t.Fatalf("busyPercent = %v, %v; want 30", got, err)
	}
	if _, err := busyPercent(t0, nil, t0, nil); err == nil {
		t.Error("no advance: want an error, not a fake 0")
	}
	if _, err := busyPercent(nil, nil, t1, nil); err == nil {
		t.Error("missing totals: want an error")
	}
}

func TestTreeCPU(t *testing.T) {
	// pid 1 used 0.5 s, pid 2 is new (ignored), pid 3 went away, over 1 s.
	got, ok := treeCPU(treeTimes{1: 2, 3: 9}, treeTimes{1: 2.5, 2: 7}, time.Second)
	if !ok || got != 50 {
		t.Fatalf("treeCPU = %v, %v; want 50", got, ok)
	}
	if _, ok := treeCPU(treeTimes{1: 1}, treeTimes{2: 1}, time.Second); ok {
		t.Error("no common process: want not ok")
	}
}

// localServer is a loopback listener in this process: the "model server"
// the recorder must find by its port.
func localServer(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func TestTakeMeasuresTheMachine(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "results.jsonl"), make([]byte, 1234), 0o644); err != nil {
		t.Fatal(err)
	}
	s := takeServer(context.Background(), dir, config.Server{Endpoint: localServer(t), ProcessNames: []string{"ollama"}})
	if s.CPUCount == nil || *s.CPUCount < 1 {
		t.Errorf("cpu_count = %v (%s)", s.CPUCount, s.Unavailable["cpu_count"])
	}
	if s.CPUPercent == nil || *s.CPUPercent < 0 || *s.CPUPercent > 100 {
		t.Errorf("cpu_percent = %v (%s)", s.CPUPercent, s.Unavailable["cpu_percent"])
	}
	if s.MemTotal == nil || *s.MemTotal == 0 || s.MemAvailable == nil || *s.MemAvailable > *s.MemTotal {
		t.Errorf("memory = %v / %v", s.MemTotal, s.MemAvailable)
	}
	if s.OutDirBytes == nil || *s.OutDirBytes != 1234 {
		t.Errorf("out_dir_bytes = %v, want 1234", s.OutDirBytes)
	}
	if s.DiskTotal == nil || *s.DiskTotal == 0 {
		t.Errorf("disk_total = %v (%s)", s.DiskTotal, s.Unavailable["disk_total_bytes"])
	}
	if s.ProcessCount == nil || *s.ProcessCount < 1 {
		t.Errorf("process_count = %v", s.ProcessCount)
	}
	// Every null field has its reason.
	data, _ := json.Marshal(s)
	var m map[string]any
	json.Unmarshal(data, &m)
	for k, v := range m {
		if v == nil {
			if _, ok := s.Unavailable[k]; !ok {
				t.Errorf("%s is null without a reason", k)
			}
		}
	}
	if s.Server == nil {
		t.Fatalf("the loopback listener of this test was not found: %s", s.Unavailable["server"])
	}
	if s.Server.PID != int32(os.Getpid()) || !strings.Contains(s.Server.FoundBy, "port") {
		t.Errorf("server = %+v, want this process (pid %d) by port", s.Server, os.Getpid())
	}
	if s.Server.RSSBytes == nil || *s.Server.RSSBytes == 0 || s.Server.Processes < 1 {
		t.Errorf("server rss = %v, processes %d", s.Server.RSSBytes, s.Server.Processes)
	}
}

func TestTakeWithoutLocalServer(t *testing.T) {
	tests := []struct {
		target config.Server
		reason string
	}{
		{config.Server{}, "runs no local model server"},
		{config.Server{Endpoint: "https://api.openai.com/v1"}, "is not this machine"},
		// Port 1 on loopback: nothing listens there in a test sandbox.
		{config.Server{Endpoint: "http://127.0.0.1:1"}, "no process listening on port 1"},
	}
	for _, tt := range tests {
		srv, reason := findServer(context.Background(), tt.target)
		if srv != nil || !strings.Contains(reason, tt.reason) {
			t.Errorf("%+v: server %+v, reason %q; want none, %q", tt.target, srv, reason, tt.reason)
		}
	}
	s := take(context.Background(), t.TempDir(), nil, "provider type \"claude_code_cli\" runs no local model server")
	if s.Server != nil || s.Unavailable["server"] == "" {
		t.Errorf("server = %+v, reason %q", s.Server, s.Unavailable["server"])
	}
}

func TestRecorderWritesFilesPerSuite(t *testing.T) {
	dir := t.TempDir()
	url := localServer(t)
	r := NewRecorder(dir)
	r.Interval = 10 * time.Millisecond
	suites := []plan.Suite{
		{Provider: "ollama_openai", ProviderType: "ollama_openai", Server: config.Server{Endpoint: url}, Model: "llama3.2:3b", Cells: 3},
		{Provider: "ollama_openai", ProviderType: "ollama_openai", Server: config.Server{Endpoint: url}, Model: "qwen3:4b", ThinkingLevel: sp("low"), Cells: 3},
		{Provider: "claude", ProviderType: "claude_code_cli", Model: "sonnet", Cells: 3},
	}
	// Suites overlap, as they do under concurrency.
	var wg sync.WaitGroup
	for _, s := range suites {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.SuiteStart(s)
			r.SuiteWarmup(s, output.Warmup{Load: 1234567 * time.Microsecond})
			time.Sleep(50 * time.Millisecond)
			r.SuiteEnd(s)
		}()
	}
	wg.Wait()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	for _, s := range suites {
		base := rundir.FileBase(s.Provider, s.Model, s.ThinkingLevel)
		before, err := os.ReadFile(filepath.Join(dir, base+"_before.txt"))
		if err != nil {
			t.Fatal(err)
		}
		after, err := os.ReadFile(filepath.Join(dir, base+"_after.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(before), "before the suite of "+s.Provider+" / "+s.Model) || !strings.Contains(string(before), "memory:") {
			t.Errorf("%s before:\n%s", base, before)
		}
		if !strings.Contains(string(after), "during suite:") {
			t.Errorf("%s after has no sampler line:\n%s", base, after)
		}
		rec, err := rundir.ReadSuite(dir, s.Provider, s.Model, s.ThinkingLevel)
		if err != nil || rec == nil {
			t.Fatalf("ReadSuite %s: %v, %v", base, rec, err)
		}
		if rec.Before == nil || rec.After == nil || rec.Peak == nil {
			t.Fatalf("%s: incomplete record %+v", base, rec)
		}
		if rec.Warmup == nil || rec.Warmup.LoadMS != 1234.567 || rec.Warmup.Error != "" {
			t.Errorf("%s: warm-up %+v, want a load of 1234.567 ms", base, rec.Warmup)
		}
		// A peak never sits below the snapshots that bracket its window.
		for _, snap := range []*rundir.Snapshot{rec.Before, rec.After} {
			if *rec.Peak.MemUsed < *snap.MemUsed || (snap.CPUPercent != nil && *rec.Peak.CPUPercent < *snap.CPUPercent) {
				t.Errorf("%s: peak %+v below a snapshot %+v", base, rec.Peak, snap)
			}
			if snap.Server != nil && snap.Server.RSSBytes != nil && *rec.Peak.ServerRSS < *snap.Server.RSSBytes {
				t.Errorf("%s: peak server rss %d below a snapshot's %d", base, *rec.Peak.ServerRSS, *snap.Server.RSSBytes)
			}
		}
		// The sampler reads once at start and once at stop, whatever the timing.
		if rec.Peak.Samples < 2 || rec.Peak.MemUsed == nil {
			t.Errorf("%s: peak %+v", base, rec.Peak)
		}
		// Every reading is a line of the series, in time order, with the
		// machine's memory; the first (the CPU baseline) without CPU, later
		// ones with it unless no clock tick passed between two readings.
		series, err := os.ReadFile(filepath.Join(dir, base+rundir.SamplesSuffix))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(series), "\n"), "\n")
		if len(lines) != rec.Peak.Samples {
			t.Errorf("%s: %d series lines, %d samples", base, len(lines), rec.Peak.Samples)
		}
		var prev int64
		for i, l := range lines {
			var smp rundir.Sample
			if err := json.Unmarshal([]byte(l), &smp); err != nil || smp.TimeMS < prev || smp.MemUsed == nil || (i == 0 && smp.CPUPercent != nil) {
				t.Errorf("%s: series line %d %q (%v)", base, i+1, l, err)
			}
			prev = smp.TimeMS
		}
		if !rec.After.TakenAt.After(rec.Before.TakenAt) {
			t.Errorf("%s: after %v not after before %v", base, rec.After.TakenAt, rec.Before.TakenAt)
		}
		local := s.ProviderType != "claude_code_cli"
		if local != (rec.After.Server != nil) || local != (rec.Peak.ServerRSS != nil) {
			t.Errorf("%s: server %+v, peak rss %v", base, rec.After.Server, rec.Peak.ServerRSS)
		}
		if !local && (rec.Peak.Unavailable["server_rss_bytes"] == "" || !strings.Contains(string(after), "model server:  n/a")) {
			t.Errorf("%s: missing reason for no server: %+v", base, rec.Peak.Unavailable)
		}
	}
	// report.html reads the series as they are written.
	tl, warn, err := htmlreport.ReadTimelines(dir)
	if err != nil || len(warn) > 0 || len(tl) != len(suites) {
		t.Errorf("report.html's reader: %d timelines of %d suites, warnings %v, %v", len(tl), len(suites), warn, err)
	}
	if _, err := rundir.ReadSuite(dir, "nobody", "nothing", nil); err != nil {
		t.Errorf("missing suite: %v, want nil error", err)
	}
	// A file that belongs to another suite is refused.
	src := filepath.Join(dir, rundir.FileBase("claude", "sonnet", nil)+".json")
	data, _ := os.ReadFile(src)
	os.WriteFile(filepath.Join(dir, rundir.FileBase("claude", "sonnet:x", nil)+".json"), data, 0o644)
	if _, err := rundir.ReadSuite(dir, "claude", "sonnet:x", nil); err == nil {
		t.Error("ReadSuite accepted another suite's file")
	}
}

func TestRecorderCloseFinishesOpenSuites(t *testing.T) {
	dir := t.TempDir()
	r := NewRecorder(dir)
	s := plan.Suite{Provider: "claude", ProviderType: "claude_code_cli", Model: "sonnet"}
	r.SuiteStart(s)
	r.SuiteStart(s) // started twice: one bracket, ended by the last SuiteEnd
	r.SuiteEnd(s)
	if _, err := os.Stat(filepath.Join(dir, rundir.FileBase("claude", "sonnet", nil)+"_after.txt")); err == nil {
		t.Fatal("after file written while the suite is still open")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.FileBase("claude", "sonnet", nil)+"_after.txt")); err != nil {
		t.Fatalf("Close did not finish the open suite: %v", err)
	}
	r.SuiteEnd(s)
	if r.Err() == nil {
		t.Error("SuiteEnd of a closed suite: no error recorded")
	}
}
