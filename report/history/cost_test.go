package history

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"bench/internal/record/results"
	"bench/report"
)

// The cost series is read from the summary.json bench writes (report.Write
// over priced records), as the mean cost of a priced cell: a run of 4
// cells at $0.002 and one of 6 at $0.003 read 0.002 and 0.003, and a run
// without prices leaves a gap.
func TestHistoryCostFromReport(t *testing.T) {
	root := t.TempDir()
	t0 := time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)
	perCell := []float64{0.002, 0.003, 0}
	cells := []int{4, 6, 5}
	for i := range perCell {
		dir := writeNight(t, root, nightRun{id: fmt.Sprintf("night-%d", i), started: t0.Add(time.Duration(i) * 24 * time.Hour),
			ttft: 100, pass: 1, digest: "sha256:aaaa", bench: "v1.0.0", prompts: []string{"P0"}})
		var recs []results.Record
		for j := range cells[i] {
			r := results.Record{RecordType: "result", RunID: "n", Provider: "ollama", ProviderType: "ollama", Model: "m",
				PromptID: "P0", Repetition: j, AvailabilityStatus: results.StatusOK, Success: true}
			if perCell[i] > 0 {
				r.CostUSD = &perCell[i]
			}
			recs = append(recs, r)
		}
		if err := report.Write(dir, report.Summarize(recs), nil); err != nil {
			t.Fatal(err)
		}
	}
	dirs, _, err := FindRuns([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	h, err := Build(dirs, DefaultOptions(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var cost *Series
	for _, s := range h.Series {
		if s.Metric == CostUSD && s.Model == "m" {
			cost = s
		}
	}
	if cost == nil || len(cost.Points) != 2 {
		t.Fatalf("cost series %+v, want the two priced runs", cost)
	}
	for i, p := range cost.Points {
		if p.Run != i || math.Abs(p.Value-perCell[i]) > 1e-12 {
			t.Errorf("run %d: cost %v, want %v a cell (%s)", p.Run, p.Value, perCell[i], filepath.Base(h.Runs[p.Run].Dir))
		}
	}
}
