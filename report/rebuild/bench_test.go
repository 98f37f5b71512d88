package rebuild

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/results"
	"bench/report"
	"bench/report/htmlreport"
	"bench/report/junitxml"
)

// writeRun writes n result lines (with raw output, as a real run has) over
// 12 groups and 100 prompts into dir/results.jsonl.
func writeRun(tb testing.TB, dir string, n int) {
	tb.Helper()
	w, err := results.Create(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	raw := strings.Repeat("The free command shows memory; run `free -h` to see it. ", 16)
	for i := range n {
		ttft, tps := int64(100+i%700), 20+float64(i%90)/3
		pass := i%5 != 0
		r := &results.Record{RecordType: results.RecordType, RunID: "bench", Provider: fmt.Sprintf("prov%d", i%3),
			ProviderType: "ollama_openai", Model: fmt.Sprintf("model-%d:7b", i%12/3), PromptID: fmt.Sprintf("P%d", i%100),
			PromptName: "prompt", Repetition: i / 1200, AvailabilityStatus: "ok", Success: true, ObjectivePass: &pass,
			StartedAtMS: 1771000000000 + int64(i)*10, EndedAtMS: 1771000000000 + int64(i)*10 + 900, E2EMS: int64(500 + i%2000),
			TTFTMS: &ttft, TokensPerS: &tps, RawOutput: raw, RawOutputBytes: len(raw), ToolCalls: []string{}}
		if !pass {
			v := "expected exactly 4 bullets, got 3"
			r.Violation = &v
		}
		if err := w.Write(r); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkBuildReports100k is what `bench run` and `bench report` spend
// on the reports of a 100,000-cell run: summary.json/md, tiers.json,
// report.html and junit.xml in one pass over results.jsonl ("one_pass"),
// against reading the file once for the summary (which report.html is
// drawn from) and once more for junit.xml ("two_passes").
func BenchmarkBuildReports100k(b *testing.B) {
	dir := b.TempDir()
	writeRun(b, dir, 100_000)
	b.Run("one_pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := All(dir, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("two_passes", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s, err := report.LoadEach(dir, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := report.Write(dir, s, nil); err != nil {
				b.Fatal(err)
			}
			if err := htmlreport.WriteFile(dir, htmlreport.NewData(s, nil, dir)); err != nil {
				b.Fatal(err)
			}
			ju := junitxml.New()
			if _, _, err := results.ReadFile(filepath.Join(dir, "results.jsonl"), true, func(_ int, r *results.Record) error {
				ju.Add(r)
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			if err := ju.WriteFile(filepath.Join(dir, "junit.xml")); err != nil {
				b.Fatal(err)
			}
			ju.Close()
		}
	})
}
