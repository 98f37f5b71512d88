package report

import (
	"fmt"
	"strings"
	"testing"

	"bench/internal/record/results"
)

// A run's failed cells grouped by cause: P1's wrong answer in every cell
// of both providers is one cause, however many cells; P2's timeouts in one
// group and some repetitions another, named by group and repetitions; a
// cause with several violations says how many others there are; cells
// that never reached the model are one more; the most cells come first
// within failed checks, then errors, then cells that never ran.
func TestFailureCauses(t *testing.T) {
	no, yes := false, true
	var recs []results.Record
	for _, prov := range []string{"ollama", "ollama_openai"} {
		for rep := range 3 {
			base := results.Record{Provider: prov, Model: "demo", Repetition: rep, AvailabilityStatus: results.StatusOK, Success: true, E2EMS: 10, ObjectivePass: &yes}
			p0 := base
			p0.PromptID = "P0"
			p1 := base
			p1.PromptID, p1.ObjectivePass, p1.Violation = "P1", &no, ptrS(`want "Canberra", got "Sydney"`)
			p2 := base
			p2.PromptID = "P2"
			if prov == "ollama" && rep != 1 {
				p2.AvailabilityStatus, p2.Success, p2.ObjectivePass = results.StatusError, false, nil
				p2.FailureType, p2.ErrorMessage = ptrS("timeout"), ptrS(fmt.Sprintf("no token in 60s (try %d)", rep))
			}
			p3 := base
			p3.PromptID = "P3"
			if prov == "ollama_openai" {
				p3.ObjectivePass, p3.Violation = &no, ptrS(fmt.Sprintf("%d words, want at most 10", 11+rep%2))
			}
			recs = append(recs, p0, p1, p2, p3)
		}
	}
	recs = append(recs, results.Record{Provider: "gone", Model: "m", PromptID: "P0", AvailabilityStatus: "skipped_unavailable", FailureType: ptrS("connection_refused")})
	s := Summarize(recs)
	var got []string
	for _, c := range s.Causes {
		got = append(got, c.Kind+" | "+c.Message)
	}
	want := []string{
		`check | P1: fails its check: want "Canberra", got "Sydney" in 6/6 cells: both providers, all repetitions`,
		`check | P3: fails its check: 11 words, want at most 10 (and 1 other failure of this kind) in 3/6 cells: ollama_openai/demo (1 of 2 groups), all repetitions`,
		`error timeout | P2: timeout: no token in 60s (try 0) (and 1 other failure of this kind) in 2/6 cells: ollama/demo (1 of 2 groups), repetitions 0, 2`,
		`availability skipped_unavailable | P0: did not reach the model: skipped_unavailable (connection_refused) in 1/7 cells: gone/m (1 of 3 groups), repetition 0`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("causes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	n := 0
	for _, c := range s.Causes {
		n += c.NCells
	}
	if n != 12 {
		t.Errorf("causes cover %d cells, %d failed", n, s.NFailures)
	}
}
