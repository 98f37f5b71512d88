package report

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"bench/internal/record/results"
)

// After DropGroups the terminal table and the cold-start warnings say
// what they said of the whole summary (the groups past the table's rows
// counted, their warnings kept, the cost column there for a cost only a
// dropped group had), while Groups keeps only the table's groups.
func TestDropGroupsKeepsTheTable(t *testing.T) {
	n := MaxTableRows + 100
	var recs []results.Record
	for i := range n {
		ok := i%7 != 0 // the failing groups rank last
		pass := i%2 == 0
		r := results.Record{RecordType: results.RecordType, RunID: "r", Provider: "p", Model: fmt.Sprintf("m%04d", i), PromptID: "P1",
			AvailabilityStatus: "ok", Success: ok, ObjectivePass: &pass, E2EMS: int64(100 + i), ColdStart: i%5 == 0}
		if i == n-1 {
			usd := 0.25
			r.CostUSD = &usd
		}
		recs = append(recs, r)
	}
	s := Summarize(recs)
	table := func() string {
		var b strings.Builder
		if err := WriteTable(&b, s); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	wantTable, wantCold := table(), ColdWarnings(s)
	if !strings.Contains(wantTable, "… and 100 more groups") || !strings.Contains(wantTable, "COST") || len(wantCold) != n/5 {
		t.Fatalf("the whole summary's table or warnings are not the case tested (%d warnings):\n%s", len(wantCold), wantTable[:200])
	}
	lastRanked := Ranked(s)[n-1]
	s.DropGroups()
	if len(s.Groups) != MaxTableRows || slices.Contains(s.Groups, lastRanked) {
		t.Errorf("%d groups kept, want the first %d in ranking order", len(s.Groups), MaxTableRows)
	}
	if got := table(); got != wantTable {
		t.Errorf("table after DropGroups:\n%s\nwant\n%s", got, wantTable)
	}
	if got := ColdWarnings(s); !slices.Equal(got, wantCold) {
		t.Errorf("cold warnings after DropGroups: %d, want %d", len(got), len(wantCold))
	}
}
