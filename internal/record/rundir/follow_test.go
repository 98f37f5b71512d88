package rundir_test

import (
	"os"
	"path/filepath"
	"testing"

	"bench/internal/record/results"
	"bench/internal/record/rundir"
)

// results.jsonl is appended to and, on resume, cut back to its last whole
// line: neither is done through a symlink planted in its place.
func TestResultsNotFollowed(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "run")
	os.Mkdir(dir, 0o755)
	target := filepath.Join(parent, "precious")
	os.WriteFile(target, []byte("whole line\nhalf a line"), 0o644)
	os.Symlink(target, rundir.Path(dir, rundir.ResultsFile))
	if d, _, err := rundir.Resume(dir); err == nil {
		d.Close()
		t.Error("resume followed a results.jsonl symlink")
	}
	if w, err := results.Create(rundir.Path(dir, rundir.ResultsFile)); err == nil {
		w.Close()
		t.Error("the writer opened a results.jsonl symlink")
	}
	if b, _ := os.ReadFile(target); string(b) != "whole line\nhalf a line" {
		t.Errorf("the target became %q", b)
	}
}
