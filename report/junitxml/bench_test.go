package junitxml

import (
	"fmt"
	"io"
	"testing"

	"bench/internal/record/results"
)

// BenchmarkJUnit100k builds and writes junit.xml for 100,000 cells over 12
// suites, a fifth of them failed checks and some errors: the cost a large
// run's report adds.
func BenchmarkJUnit100k(b *testing.B) {
	recs := make([]results.Record, 100_000)
	for i := range recs {
		r := &recs[i]
		r.RunID, r.Provider, r.Model = "bench", fmt.Sprintf("prov%d", i%3), fmt.Sprintf("model-%d:7b", i%12/3)
		r.PromptID, r.PromptName, r.Repetition = fmt.Sprintf("P%d", i%100), "prompt", i/1200
		r.AvailabilityStatus, r.Success, r.E2EMS = "ok", true, int64(500+i%2000)
		r.StartedAtMS, r.EndedAtMS = 1771000000000+int64(i)*10, 1771000000000+int64(i)*10+900
		switch {
		case i%5 == 0:
			r.ObjectivePass, r.Violation = no(), str("expected exactly 4 bullets, got 3")
		case i%50 == 7:
			r.AvailabilityStatus, r.Success, r.FailureType, r.ErrorMessage = "error", false, str("timeout"), str("no complete answer within run.timeout")
		default:
			r.ObjectivePass = yes()
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		bld := New()
		for i := range recs {
			bld.Add(&recs[i])
		}
		if err := bld.Write(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
