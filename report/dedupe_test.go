package report

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"bench/internal/record/results"
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
	s, err := LoadEach(dir, nil)
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
	if s, _ := LoadEach(one, nil); s.NDuplicateLines != 0 || len(s.Warnings) != 0 || s.Groups[0].NTotal != 2 {
		t.Errorf("no duplicates: %+v", s)
	}
}

// A load stage's cell recorded twice is counted once too (the key the
// second read kept had lost its stage, so no record of a stage ever
// matched it: every duplicate of a load run was counted); the same prompt
// and repetition in two stages are two cells.
func TestDuplicateStageCellsCountedOnce(t *testing.T) {
	dir := t.TempDir()
	w, err := results.Create(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i, stage := range []string{"c=1", "c=4", "c=1", "c=4", "c=4"} {
		r := &results.Record{RecordType: results.RecordType, RunID: "r", Provider: "p", ProviderType: "ollama", Model: "m",
			PromptID: "P0", AvailabilityStatus: "ok", Success: true, E2EMS: int64(10 * (i + 1)), Stage: stage}
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	s, err := LoadEach(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The last of each stage: e2e 30 (c=1) and 50 (c=4).
	if g := s.Groups[0]; g.NTotal != 2 || s.NDuplicateLines != 3 || *g.LatencyMS.Mean != 40 {
		t.Errorf("%d cells, %d duplicate lines, mean e2e %v; want 2, 3, 40", g.NTotal, s.NDuplicateLines, *g.LatencyMS.Mean)
	}
}

// Hashes held in several chunks, with cells recorded up to four times in
// any order: the summary counts exactly each cell's last record, as a map
// of every key finds them, and so it does when every hash collides (each
// line a candidate, told apart by its key) and when hashes collide but no
// cell is recorded twice.
func TestDedupeAcrossChunksAndCollisions(t *testing.T) {
	defer func(n int, h func(*results.Record) uint64) { chunkLen, hashOf = n, h }(chunkLen, hashOf)
	chunkLen = 4
	write := func(n int, prompt func(i int) string) (string, map[results.Key]int) {
		dir := t.TempDir()
		w, err := results.Create(filepath.Join(dir, "results.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		lastOf := map[results.Key]int{}
		for i := range n {
			r := &results.Record{RecordType: results.RecordType, RunID: "r", Provider: "p", ProviderType: "ollama", Model: "m",
				PromptID: prompt(i), Repetition: i % 2, AvailabilityStatus: "ok", Success: true, E2EMS: int64(i)}
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
			lastOf[r.Key()] = i
		}
		w.Close()
		return dir, lastOf
	}
	check := func(name, dir string, lastOf map[results.Key]int, lines int) {
		t.Helper()
		s, err := LoadEach(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		// E2E is the line's index: the kept records' sum tells which.
		want := 0.0
		for _, i := range lastOf {
			want += float64(i)
		}
		g := s.Groups[0]
		if g.NTotal != len(lastOf) || s.NDuplicateLines != lines-len(lastOf) || *g.LatencyMS.Mean != *round(want / float64(len(lastOf))) {
			t.Errorf("%s: %d cells, %d duplicate lines, mean e2e %v; want %d, %d, %v", name, g.NTotal, s.NDuplicateLines,
				*g.LatencyMS.Mean, len(lastOf), lines-len(lastOf), want/float64(len(lastOf)))
		}
	}
	dups, lastDups := write(60, func(i int) string { return fmt.Sprintf("P%d", i*7%13) })
	unique, lastUnique := write(30, func(i int) string { return fmt.Sprintf("P%d", i) })
	check("duplicates", dups, lastDups, 60)
	check("unique", unique, lastUnique, 30)
	hashOf = func(*results.Record) uint64 { return 42 }
	check("duplicates, every hash colliding", dups, lastDups, 60)
	check("unique, every hash colliding", unique, lastUnique, 30)
}
