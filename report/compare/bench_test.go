package compare

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

// writeLargeRun writes a run directory of n realistic results lines (about
// 2 KB each: an answer of ~900 bytes, a timeline of 8 stamps, provider
// metrics, tool details on tool prompts) over 12 groups and 20 prompts.
// A cell whose index is a multiple of drift (when drift > 0) answers
// differently, and one whose index is a multiple of fail fails its
// validator; slower multiplies the latencies.
func writeLargeRun(tb testing.TB, dir, id string, n, drift, fail int, slower float64) string {
	tb.Helper()
	run := filepath.Join(dir, id)
	os.MkdirAll(run, 0o755)
	w, err := results.Create(filepath.Join(run, rundir.ResultsFile))
	if err != nil {
		tb.Fatal(err)
	}
	answer := strings.Repeat("The free command shows memory; run `free -h` to see it. ", 16)
	levels := []*string{nil, ptr("low"), ptr("high")}
	var timeline []results.TimelineEvent
	for _, e := range []string{"request_start", "connected", "request_written", "first_byte", "first_text", "tool_call", "end"} {
		timeline = append(timeline, results.TimelineEvent{Event: e, AtMS: 12.345})
	}
	for i := range n {
		g, p := i%12, (i/12)%20
		rep := i / 240
		r := &results.Record{RecordType: results.RecordType, RunID: id, Provider: fmt.Sprintf("prov%d", g%3), ProviderType: "ollama_openai",
			Model: fmt.Sprintf("model-%d:7b", g/3), ThinkingLevel: levels[g%3], PromptID: fmt.Sprintf("P%d", p), PromptName: "prompt",
			Repetition: rep, AvailabilityStatus: results.StatusOK, StartedAtMS: 1771000000000 + int64(i), EndedAtMS: 1771000000900 + int64(i),
			Success: true, ObjectivePass: ptr(true), InputTokens: ptr(40), OutputTokens: ptr(220), RawOutput: answer, RawOutputBytes: len(answer),
			ToolCalls: []string{"free"}, ToolCallCount: 1, Chunks: 220, Timeline: timeline,
			ToolCallDetails: []results.ToolCall{{Name: "free", Arguments: json.RawMessage(`{"command":"free -h"}`), Source: results.SourceText, Match: "`free -h`"}},
			ProviderMetrics: map[string]any{"eval_count": 220, "eval_duration_ns": 123456789, "load_duration_ns": 1234567}}
		ttft := int64(float64(100+(i*7919)%300) * slower)
		r.TTFTMS, r.E2EMS, r.TokensPerS = &ttft, int64(float64(900+(i*104729)%600)*slower), ptr(float64(40+(i*31)%20)/slower)
		if p%4 == 3 {
			r.ExpectedTools, r.ToolUseSuccess = []string{"free"}, ptr(true)
		}
		if drift > 0 && i%drift == 0 {
			r.RawOutput = "Use `free -h`: " + answer[:400]
		}
		if fail > 0 && i%fail == 0 {
			r.ObjectivePass, r.Violation = ptr(false), ptr("expected 4 bullets, got 3")
		}
		if err := w.Write(r); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	mustWriteJSON(tb, filepath.Join(run, rundir.RunFile), rundir.RunInfo{RunID: id, BenchVersion: "v1", EndReason: "finished", CellsPlanned: n, CellsRecorded: n})
	return run
}

// benchmarkCompare compares two 100,000-line runs and writes the three
// outputs, as bench compare does. Besides ns/op it reports cpu-s/op (user
// and system CPU seconds per compare) and peak-RSS-MiB:
// the process's resident high-water mark during the compares (the mark is
// reset after the runs are written, /proc/self/clear_refs), and file-MiB,
// the size of one results.jsonl. bench compare holds its heap to a soft
// limit (compareMemoryLimit in cmd/bench); to measure what it does, set
// the same:
//
//	GOMEMLIMIT=180MiB go test ./report/compare -run '^$' -bench Compare100k -benchtime 3x
func benchmarkCompare(b *testing.B, drift, fail int) {
	dir := b.TempDir()
	base := writeLargeRun(b, dir, "base", 100_000, 0, 0, 1)
	cur := writeLargeRun(b, dir, "new", 100_000, drift, fail, 1.02)
	st, _ := os.Stat(filepath.Join(base, rundir.ResultsFile))
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS()
	cpu0 := cpuSeconds()
	var res *Result
	for b.Loop() {
		var err error
		res, err = Compare(base, cur, DefaultOptions())
		if err != nil {
			b.Fatal(err)
		}
		if err := WriteFiles(filepath.Join(dir, "out"), res); err != nil {
			b.Fatal(err)
		}
		res.Close()
	}
	b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
	b.ReportMetric(peakRSSMiB(), "peak-RSS-MiB")
	b.ReportMetric(float64(st.Size())/(1<<20), "file-MiB")
	b.ReportMetric(float64(res.Counts[Drift]+res.Counts[Regression]), "cells-diffed")
}

// Same behaviour apart from 1 % of answers reworded and 0.5 % failing.
func BenchmarkCompare100k(b *testing.B) { benchmarkCompare(b, 100, 200) }

// The worst case: every answer changed, so every cell takes the second
// pass (snapshots built and diffed from both files).
func BenchmarkCompare100kAllChanged(b *testing.B) { benchmarkCompare(b, 1, 0) }

// cpuSeconds is the process's user and system CPU time so far: on a
// shared machine, what a compare costs is clearer than its wall time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// resetPeakRSS resets the kernel's resident high-water mark (VmHWM).
func resetPeakRSS() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSSMiB reads VmHWM from /proc/self/status (0 where there is none).
func peakRSSMiB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// The large runs add up and compare as built: the drifted and failing
// cells found, and nothing else (a smaller size, so the plain test run
// stays fast).
func TestLargeRunsCompare(t *testing.T) {
	dir := t.TempDir()
	base := writeLargeRun(t, dir, "base", 4800, 0, 0, 1)
	cur := writeLargeRun(t, dir, "new", 4800, 100, 200, 1.02)
	res, err := Compare(base, cur, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	// Cells 0, 100, 200, ...: the multiples of 200 fail (regressions),
	// the others drift.
	if res.Counts[Regression] != 24 || res.Counts[Drift] != 24 || res.Counts[Match] != 4800-48 || len(res.Groups) != 12 {
		t.Errorf("counts %v, %d groups", res.Counts, len(res.Groups))
	}
	if res.Failing[Latency] != 0 {
		t.Errorf("a 2 %% slowdown flagged: %v", res.Failing)
	}
}
