package report

import (
	"fmt"
	"strings"
	"testing"

	"bench/internal/record/results"
)

// groupRecs is n cells of one group: pass of them passing their check,
// e2e latencies from lat (cycled).
func groupRecs(provider string, n, pass int, lat []int64) []results.Record {
	var recs []results.Record
	for i := range n {
		ok := i < pass
		recs = append(recs, results.Record{RecordType: "result", RunID: "r", Provider: provider, Model: "m", PromptID: fmt.Sprintf("P%d", i%8), Repetition: i / 8,
			AvailabilityStatus: "ok", Success: true, ObjectivePass: &ok, E2EMS: lat[i%len(lat)]})
	}
	return recs
}

// The ranking shows its evidence: one model through two APIs, both
// passing every check, e2e medians 1558 and 1639 ms from jittered
// samples whose intervals overlap, is tied (=1), as is a pass rate of
// 90 % against 80 % on 20 cells; a model passing 100 % of 64 against one
// passing 20 % is ranked apart. Ranks never fall down the list, and a
// group with nothing judged ranks below those with figures.
func TestPlacesTies(t *testing.T) {
	jitter := func(mid int64) []int64 {
		var out []int64
		for _, d := range []int64{-300, -120, -40, 0, 35, 90, 210, 400} {
			out = append(out, mid+d)
		}
		return out
	}
	var recs []results.Record
	recs = append(recs, groupRecs("chat", 16, 16, jitter(1558))...)
	recs = append(recs, groupRecs("openai", 16, 16, jitter(1639))...)
	s := Summarize(recs)
	places := Places(Ranked(s))
	if len(places) != 2 || places[0].Label() != "=1" || places[1].Label() != "=1" || places[1].By != "e2e p50" {
		t.Errorf("one model through two APIs: %+v", places)
	}
	var md strings.Builder
	if err := WriteMarkdown(&md, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| =1 | chat |") || !strings.Contains(md.String(), "| =1 | openai |") || !strings.Contains(md.String(), "=N: tied.") ||
		!strings.Contains(md.String(), "100.0% (16/16, 95% CI [") {
		t.Errorf("summary.md:\n%s", md.String())
	}

	recs = nil
	recs = append(recs, groupRecs("a", 64, 64, []int64{100})...)
	recs = append(recs, groupRecs("b", 20, 18, []int64{100})...)
	recs = append(recs, groupRecs("c", 20, 16, []int64{100})...)
	recs = append(recs, groupRecs("d", 64, 13, []int64{100})...)
	recs = append(recs, results.Record{RecordType: "result", RunID: "r", Provider: "e", Model: "m", PromptID: "P0", AvailabilityStatus: "skipped_unavailable"})
	s = Summarize(recs)
	var got []string
	for _, p := range Places(Ranked(s)) {
		got = append(got, p.Group.Provider+" "+p.Label())
	}
	// a (64/64, [94.3 %, 100 %]) and b (18/20, [69.9 %, 97.2 %]) overlap:
	// tied. c (16/20, [58.4 %, 91.9 %]) overlaps b but not a: one group is
	// better beyond doubt, rank 2. d (13/64) is below all three; e, with
	// nothing answered, below every group with a figure.
	if want := "a =1, b =1, c 2, d 4, e 5"; strings.Join(got, ", ") != want {
		t.Errorf("ranks %q, want %q", strings.Join(got, ", "), want)
	}
}
