package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/internal/record/results/resultstest"
	"bench/internal/record/rundir"
)

// BenchmarkReportRSS runs the built bench binary's `bench report` on
// generated runs of 100,000 lines and reports the child process's peak
// RSS (getrusage's ru_maxrss, what /usr/bin/time -v calls "Maximum
// resident set size") as peak-RSS-MiB, its CPU time (user and system) as
// cpu-s/op, report.html's size as html-MiB, and results.jsonl's bytes a
// second as MB/s: "distinct" gives every line a model and a prompt of its
// own (100,000 groups and prompts, issue 21 item 7's worst case; the
// target is under 200 MiB of RSS and a report.html under 20 MiB), "groups"
// is the ordinary run, 12 groups and 20 prompts, "rich" lines of every
// field a run writes, about 7 KB each (resultstest.Rich: issue 31's goal
// is 1 GB/s under 100 MB). RSS is not timing: a loaded machine changes it
// little, though a GC starved of CPU lets the heap overshoot more; MB/s is
// the machine's as much as bench's (cpu-s/op says less about the
// neighbours). Run:
//
//	go test ./cmd/bench -run '^$' -bench ReportRSS -benchtime 3x
func BenchmarkReportRSS(b *testing.B) {
	for _, c := range []struct {
		name  string
		write func(tb testing.TB, path string, n int)
	}{
		{"distinct", writeDistinctLines},
		{"groups", writeGroupLines},
		{"rich", func(tb testing.TB, path string, n int) { resultstest.Write(tb, path, n, resultstest.Rich) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			c.write(b, filepath.Join(dir, rundir.ResultsFile), 100_000)
			fi, err := os.Stat(filepath.Join(dir, rundir.ResultsFile))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(fi.Size())
			var peak int64
			var cpu time.Duration
			for b.Loop() {
				cmd := exec.Command(benchBin, "report", dir)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("bench report: %v\n%s", err, out)
				}
				peak = max(peak, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) // KiB on Linux
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			if fi, err = os.Stat(filepath.Join(dir, rundir.ReportHTML)); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
			b.ReportMetric(float64(fi.Size())/(1<<20), "html-MiB")
		})
	}
}

// writeDistinctLines writes n short result lines, each of a model and a
// prompt no other line has (as report's TestLargeRunCounts with
// -large-run-distinct).
func writeDistinctLines(tb testing.TB, path string, n int) {
	tb.Helper()
	writeLines(tb, path, n, func(i int, r *results.Record) {
		r.Model, r.PromptID, r.PromptName = fmt.Sprintf("model-%06d", i), fmt.Sprintf("P%06d", i), fmt.Sprintf("prompt %d", i)
		r.RawOutput = "ok"
	})
}

// writeGroupLines writes n result lines with answers of about 900 bytes
// over 12 groups (4 models x 3 providers) and 20 prompts, repetitions
// making each cell distinct.
func writeGroupLines(tb testing.TB, path string, n int) {
	tb.Helper()
	raw := strings.Repeat("The free command shows memory; run `free -h` to see it. ", 16)
	writeLines(tb, path, n, func(i int, r *results.Record) {
		r.Provider = fmt.Sprintf("prov%d", i%3)
		r.Model, r.PromptID, r.PromptName = fmt.Sprintf("model-%d:7b", i%12/3), fmt.Sprintf("P%d", i%20), fmt.Sprintf("prompt_%d", i%20)
		r.Repetition = i / 240
		r.RawOutput = raw
	})
}

func writeLines(tb testing.TB, path string, n int, vary func(int, *results.Record)) {
	resultstest.Write(tb, path, n, func(i int) *results.Record {
		ttft, out, tps := int64(100+i%700), 50+i%300, 20+float64(i%90)/3
		pass := i%3 != 0
		r := &results.Record{
			RecordType: results.RecordType, RunID: "bench", Provider: "prov", ProviderType: "ollama_openai",
			AvailabilityStatus: "ok", StartedAtMS: 1771000000000 + int64(i)*10, EndedAtMS: 1771000000000 + int64(i)*10 + 900,
			E2EMS: int64(500 + i%2000), TTFTMS: &ttft, Success: true, ObjectivePass: &pass, OutputTokens: &out, TokensPerS: &tps,
		}
		vary(i, r)
		r.RawOutputBytes = len(r.RawOutput)
		if !pass {
			v := "expected exactly 4 bullets, got 3"
			r.Violation = &v
		}
		return r
	})
}
