package report

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/internal/record/results/resultstest"
)

// writeLargeRun writes a results.jsonl of n realistic lines (about 1.5 KB
// each, with raw output, tool details and provider metrics) over 12 groups
// and 20 prompts.
func writeLargeRun(tb testing.TB, dir string, n int) int64 {
	tb.Helper()
	raw := strings.Repeat("The free command shows memory; run `free -h` to see it. ", 16)
	levels := []*string{nil, ptr("low"), ptr("high")}
	return resultstest.Write(tb, filepath.Join(dir, "results.jsonl"), n, func(i int) *results.Record {
		g := i % 12
		pass := i%5 != 0
		ttft := int64(100 + i%700)
		tps := 20 + float64(i%90)/3
		out := 200 + i%300
		status, success := "ok", true
		var ft, msg *string
		switch i % 50 {
		case 7:
			status, success, ft, msg = "error", false, ptr("timeout"), ptr("no complete answer within run.timeout")
		case 13:
			status, success, ft, msg = "rate_limited", false, ptr("http_429"), ptr("HTTP 429: slow down")
		}
		var expected []string
		var tus *bool
		if i%20 == 3 {
			expected, tus = []string{"free"}, ptr(pass && success)
		}
		r := &results.Record{
			RecordType: results.RecordType, RunID: "bench", Provider: fmt.Sprintf("prov%d", g%3), ProviderType: "ollama_openai",
			Model: fmt.Sprintf("model-%d:7b", g/3), ThinkingLevel: levels[g%3], PromptID: fmt.Sprintf("P%d", i%20),
			PromptName: fmt.Sprintf("prompt_%d", i%20), Repetition: i / 60, AvailabilityStatus: status,
			StartedAtMS: 1771000000000 + int64(i)*10, EndedAtMS: 1771000000000 + int64(i)*10 + 900, E2EMS: int64(500 + i%2000),
			TTFTMS: &ttft, Success: success, FailureType: ft, ErrorMessage: msg, ObjectivePass: ptr(pass), InputTokens: ptr(40), OutputTokens: &out,
			RawOutput: raw, RawOutputBytes: len(raw), ToolCalls: []string{"free"}, ToolCallCount: 1, ToolUseSuccess: tus, ExpectedTools: expected,
			TokensPerS: &tps, Chunks: out, ProviderMetrics: map[string]any{"eval_count": out, "eval_duration_ns": 123456789},
		}
		if !pass {
			r.Violation = ptr("expected exactly 4 bullets, got 3")
		}
		return r
	})
}

// writeDistinctRun writes a results.jsonl of n short lines, each of a
// model and a prompt no other line has: n groups, n prompts, n cells of a
// pass matrix whose dense form would have n² (issue 21, item 7).
func writeDistinctRun(tb testing.TB, dir string, n int) {
	tb.Helper()
	resultstest.Write(tb, filepath.Join(dir, "results.jsonl"), n, func(i int) *results.Record {
		ttft, out, tps := int64(100+i%700), 50+i%300, 20+float64(i%90)/3
		pass := i%3 != 0
		r := &results.Record{
			RecordType: results.RecordType, RunID: "bench", Provider: "prov", ProviderType: "ollama_openai",
			Model: fmt.Sprintf("model-%06d", i), PromptID: fmt.Sprintf("P%06d", i), PromptName: fmt.Sprintf("prompt %d", i),
			AvailabilityStatus: "ok", StartedAtMS: 1771000000000 + int64(i)*10, EndedAtMS: 1771000000000 + int64(i)*10 + 900,
			E2EMS: int64(500 + i%2000), TTFTMS: &ttft, Success: true, ObjectivePass: ptr(pass), OutputTokens: &out,
			TokensPerS: &tps, RawOutput: "ok", RawOutputBytes: 2,
		}
		if !pass {
			r.Violation = ptr("expected exactly 4 bullets, got 3")
		}
		return r
	})
}

// BenchmarkBuild100k builds the three reports from a generated results.jsonl
// of 100,000 lines. Besides ns/op and B/op it reports cpu-ms/op (the
// process's user+system CPU time per build: wall time on a shared machine
// says more about the neighbours), peak-heap-MiB (the largest live heap a
// sampler saw during the builds, runtime/metrics) and file-MiB. Run:
//
//	go test ./report -run '^$' -bench Build100k -benchmem -benchtime 3x
func BenchmarkBuild100k(b *testing.B) {
	dir := b.TempDir()
	size := writeLargeRun(b, dir, 100_000)
	runtime.GC()
	stop := heapPeak()
	cpu0 := cpuTime()
	for b.Loop() {
		if err := build(dir, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	b.ReportMetric(stop(), "peak-heap-MiB")
	b.ReportMetric(float64(size)/(1<<20), "file-MiB")
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapPeak samples the live heap every millisecond and returns the largest
// seen, in MiB, when stopped.
func heapPeak() (stop func() float64) {
	done := make(chan struct{})
	res := make(chan uint64)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		var maxB uint64
		for {
			metrics.Read(s)
			maxB = max(maxB, s[0].Value.Uint64())
			select {
			case <-done:
				res <- maxB
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 {
		close(done)
		return float64(<-res) / (1 << 20)
	}
}

var (
	largeRunDir   = flag.String("large-run-dir", "", "TestLargeRunCounts writes its run here (kept) instead of a temporary directory")
	largeRunLines = flag.Int("large-run-lines", 6000, "lines TestLargeRunCounts writes")
	// largeRunDistinct gives every line its own model and prompt: groups
	// and prompts as many as lines, their product the square (issue 21,
	// item 7's worst case for a dense pass matrix).
	largeRunDistinct = flag.Bool("large-run-distinct", false, "TestLargeRunCounts gives every line a model and a prompt of its own")
	// largeRunRich writes lines of every field a real run writes, about
	// 7 KB each (resultstest.Rich: issue 31's 7 GB run at a million).
	largeRunRich = flag.Bool("large-run-rich", false, "TestLargeRunCounts writes lines of every field, about 7 KB each")
)

// TestLargeRunCounts checks the generated run adds up (a small one by
// default, so the plain test run stays fast). With flags it writes a large
// run to keep, for timing `bench report` on it:
//
//	go test ./report -run TestLargeRunCounts -args -large-run-dir=/tmp/big -large-run-lines=1000000
//	/usr/bin/time -v bench report /tmp/big
//
// -large-run-rich makes its lines about 7 KB, of every field (7 GB at a
// million lines).
func TestLargeRunCounts(t *testing.T) {
	dir := *largeRunDir
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	n := *largeRunLines
	os.Remove(filepath.Join(dir, "results.jsonl"))
	groups, prompts := 12, 20
	switch {
	case *largeRunDistinct:
		writeDistinctRun(t, dir, n)
		groups, prompts = n, n
	case *largeRunRich:
		resultstest.Write(t, filepath.Join(dir, "results.jsonl"), n, resultstest.Rich)
		groups, prompts = resultstest.Groups, resultstest.Prompts
	default:
		writeLargeRun(t, dir, n)
	}
	s, err := LoadEach(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, g := range s.Groups {
		total += g.NTotal
	}
	if len(s.Groups) != groups || total != n || s.NRecords != n || len(s.Prompts) != prompts {
		t.Fatalf("groups %d, total %d, records %d, prompts %d", len(s.Groups), total, s.NRecords, len(s.Prompts))
	}
	if s.NFailures <= len(s.Failures) || len(s.Failures) > MaxFailures+len(s.Groups) {
		t.Errorf("failures kept %d of %d", len(s.Failures), s.NFailures)
	}
}

// The reports of a large run read through the reader's fast decoder are
// byte for byte those of the same records decoded by encoding/json, with
// lines the fast path hands back to encoding/json mixed in (another key
// order, escapes, spaces).
func TestLoadMatchesEncodingJSON(t *testing.T) {
	dir := t.TempDir()
	writeLargeRun(t, dir, 3000)
	path := filepath.Join(dir, "results.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for i := 0; i < len(lines); i += 7 {
		lines[i] = strings.Replace(lines[i], `{"record_type":"result",`, `{ "prompt_name" : "prompt_\u00e9", "record_type":"result",`, 1)
		lines[i] = strings.Replace(lines[i], `"prompt_name":"prompt_`, `"x":"prompt_`, 1)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var recs []results.Record
	for i, l := range lines {
		var r results.Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		recs = append(recs, r)
	}
	loaded, err := LoadEach(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Summarize(recs)
	want.GeneratedAt = loaded.GeneratedAt
	for _, f := range []struct {
		name string
		gen  func(*Summary) ([]byte, error)
	}{
		{"summary.json", func(s *Summary) ([]byte, error) { return json.Marshal(s) }},
		{"tiers.json", func(s *Summary) ([]byte, error) { return json.Marshal(TierRanking(s)) }},
		{"summary.md", func(s *Summary) ([]byte, error) {
			var b strings.Builder
			err := WriteMarkdown(&b, s)
			return []byte(b.String()), err
		}},
	} {
		got, err1 := f.gen(loaded)
		exp, err2 := f.gen(want)
		if err1 != nil || err2 != nil || string(got) != string(exp) {
			t.Errorf("%s differs between the reader and encoding/json (%v, %v)", f.name, err1, err2)
		}
	}
}
