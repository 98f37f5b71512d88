package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"bench/results"
)

// A cell recorded twice (cancelled, then run again by a resume) is counted
// once, by its last record, with a warning; a file without duplicates
// reports none.
func TestDuplicateLinesCountedOnce(t *testing.T) {
	dir := t.TempDir()
	w, err := results.Create(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rec := func(prompt string, rep int, status string, ft *string) *results.Record {
		return &results.Record{RecordType: results.RecordType, RunID: "r", Provider: "p", ProviderType: "ollama", Model: "m",
			PromptID: prompt, Repetition: rep, AvailabilityStatus: status, Success: status == "ok", FailureType: ft, E2EMS: 10}
	}
	for _, r := range []*results.Record{
		rec("P0", 0, "ok", nil),
		rec("P1", 0, "error", ptr("cancelled")),
		rec("P2", 0, "skipped_unavailable", ptr("connection_refused")),
		rec("P1", 0, "ok", nil),
		rec("P2", 0, "error", ptr("cancelled")),
		rec("P2", 0, "ok", nil),
	} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := s.Groups[0]
	if g.NTotal != 3 || g.NSuccess != 3 || g.NError != 0 || g.NSkippedUnavailable != 0 || s.NDuplicateLines != 3 || s.NRecords != 3 {
		t.Errorf("total %d success %d error %d skipped %d dup %d records %d", g.NTotal, g.NSuccess, g.NError, g.NSkippedUnavailable, s.NDuplicateLines, s.NRecords)
	}
	var warn bytes.Buffer
	Warn(&warn, s)
	if !strings.Contains(warn.String(), "2 cells are recorded more than once (3 extra lines") {
		t.Errorf("warning: %q", warn.String())
	}

	one := t.TempDir()
	w, _ = results.Create(filepath.Join(one, "results.jsonl"))
	w.Write(rec("P0", 0, "ok", nil))
	w.Write(rec("P0", 1, "ok", nil))
	w.Close()
	if s, _ := Load(one); s.NDuplicateLines != 0 || len(s.Warnings) != 0 || s.Groups[0].NTotal != 2 {
		t.Errorf("no duplicates: %+v", s)
	}
}
